//! The limits of a run, its progress reports, and the node counts of its
//! search threads.

use crate::search::config::Limits;
use crate::search::report::{Progress, ProgressFn};
use crate::search::tt::Tt;
use std::time::{Duration, Instant};

/// The limits of a run and its progress reports.
pub(in crate::search) struct Budget<'s> {
    limits: Limits,
    pub(super) next_check: u64,
    /// When the run started.
    pub(in crate::search) start: Instant,
    last_progress: Instant,
    /// Called about once a second.
    pub(in crate::search) progress: Option<ProgressFn<'s>>,
    /// Stop when this is set: another search thread of the run solved
    /// the root, or the run ended.
    pub(in crate::search) halt: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// The counts of every search thread of the run, when several: the
    /// node limit and the progress reports count all their nodes.
    pool: Option<std::sync::Arc<Pool>>,
    /// This thread's nodes already added to `pool`.
    pooled: u64,
    /// Stop when this thread has expanded this many nodes (a bounded
    /// search inside the run: [`Budget::cap`]).
    cap: u64,
    /// The turns of the run's threads and this thread's number, when they
    /// search in lockstep ([`super::Lockstep`]): each limit check ends
    /// this thread's slice.
    pub(in crate::search) lockstep: Option<(std::sync::Arc<super::Lockstep>, usize)>,
    /// Called with the table every so often (a plain search saving its
    /// run state, [`crate::search::state`]).
    pub(in crate::search) saver: Option<Saver<'s>>,
}

/// A timer of something done at most once every `every` during a
/// search: a state save ([`Saver`]), a standing line
/// ([`crate::search::Prover::on_standing`]).
pub(in crate::search) struct Every {
    every: Duration,
    next: Instant,
}

impl Every {
    /// Due `every` from now.
    pub(in crate::search) fn new(every: Duration) -> Every {
        Every {
            every,
            next: Instant::now() + every,
        }
    }

    /// Whether it is due at `now`.
    pub(in crate::search) fn due(&self, now: Instant) -> bool {
        now >= self.next
    }

    /// Due `every` from now again (after the thing was done, or when a
    /// search starts).
    pub(in crate::search) fn restart(&mut self) {
        self.next = Instant::now() + self.every;
    }
}

/// A call made with the table at most once every so often.
pub(in crate::search) struct Saver<'s> {
    /// When.
    pub(in crate::search) when: Every,
    /// The call.
    pub(in crate::search) save: Box<dyn FnMut(&Tt) + Send + 's>,
}

/// The limits [`Budget::suspend`] lifted.
pub(in crate::search) struct Suspended {
    limits: Limits,
    halt: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    cap: u64,
}

/// The nodes of the search threads of one run.
#[derive(Default)]
pub(in crate::search) struct Pool {
    /// Nodes expanded.
    pub(in crate::search) nodes: std::sync::atomic::AtomicU64,
}

impl Budget<'_> {
    pub(super) fn new(limits: Limits) -> Self {
        let now = Instant::now();
        Budget {
            limits,
            next_check: 0,
            start: now,
            last_progress: now,
            progress: None,
            halt: None,
            pool: None,
            pooled: 0,
            cap: u64::MAX,
            lockstep: None,
            saver: None,
        }
    }

    /// Moves the run's deadline, if it has one, `by` later.
    pub(in crate::search) fn defer_deadline(&mut self, by: std::time::Duration) {
        self.limits.defer_deadline(by);
    }

    /// Stops the search once this thread's count reaches `cap` (`None`:
    /// no such bound), within the run's own limits. `next_check` is
    /// brought forward to it when sooner.
    pub(in crate::search) fn cap(&mut self, cap: Option<u64>) {
        self.cap = cap.unwrap_or(u64::MAX);
        self.next_check = self.next_check.min(self.cap);
    }

    /// Lifts the run's limits, stop flag and halt for a bounded piece of
    /// work after the run stopped ([`crate::search::Prover`]'s flush of
    /// proven nodes): the search then stops only when this thread has
    /// expanded `more` nodes more than `nodes`. [`Budget::resume`] puts
    /// them back.
    pub(in crate::search) fn suspend(&mut self, nodes: u64, more: u64) -> Suspended {
        let s = Suspended {
            limits: std::mem::take(&mut self.limits),
            halt: self.halt.take(),
            cap: self.cap,
        };
        self.cap = nodes.saturating_add(more);
        self.next_check = nodes.min(self.cap);
        s
    }

    /// Puts back what [`Budget::suspend`] lifted.
    pub(in crate::search) fn resume(&mut self, s: Suspended) {
        self.limits = s.limits;
        self.halt = s.halt;
        self.cap = s.cap;
    }

    /// Starts the clock.
    pub(in crate::search) fn restart(&mut self) {
        self.start = Instant::now();
        self.last_progress = self.start;
    }

    /// Counts this thread's nodes, from `nodes` on, in `pool` with those
    /// of the run's other search threads (`None`: this thread alone).
    pub(in crate::search) fn pool(&mut self, pool: Option<std::sync::Arc<Pool>>, nodes: u64) {
        self.pool = pool;
        self.pooled = nodes;
    }

    /// Whether the run's own limits are reached at `now` after `nodes`
    /// expansions: its node limit, its deadline, or its stop flag (not
    /// another thread's halt).
    pub(in crate::search) fn over_limits(&self, nodes: u64, now: Instant) -> bool {
        let l = &self.limits;
        l.nodes.is_some_and(|n| nodes >= n)
            || l.deadline.is_some_and(|d| now >= d)
            || l.stop
                .as_ref()
                .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Whether a limit is reached after `nodes` expansions (with the
    /// other threads' nodes, when pooled); reports progress when a second
    /// has passed since the last report.
    pub(super) fn check(&mut self, nodes: u64, root_pn: u32, root_dn: u32, tt: &Tt) -> bool {
        if let Some((turns, me)) = &self.lockstep {
            // The other threads' slices come between this one and the
            // next, so the pool and the halt flag read below are the same
            // in every run.
            turns.pass(*me);
        }
        let mut stop = nodes >= self.cap;
        self.next_check = (nodes + 2048).min(self.cap.max(nodes + 1));
        let nodes = match &self.pool {
            Some(p) => {
                let d = nodes - self.pooled;
                self.pooled = nodes;
                p.nodes.fetch_add(d, std::sync::atomic::Ordering::Relaxed) + d
            }
            None => nodes,
        };
        let now = Instant::now();
        if self.over_limits(nodes, now) {
            stop = true;
        }
        if let Some(s) = &self.halt
            && s.load(std::sync::atomic::Ordering::Relaxed)
        {
            stop = true;
        }
        if let Some(s) = self.saver.as_mut()
            && s.when.due(now)
        {
            (s.save)(tt);
            s.when.restart();
        }
        if now.duration_since(self.last_progress) >= Duration::from_secs(1) {
            self.last_progress = now;
            let p = self.progress_at(nodes, now, root_pn, root_dn, tt);
            if let Some(f) = self.progress.as_mut() {
                f(&p);
            }
        }
        stop
    }

    /// The progress now, this thread having expanded `nodes` (with the
    /// other threads' nodes as of their last checks, when pooled).
    pub(in crate::search) fn progress_of(
        &self,
        nodes: u64,
        root_pn: u32,
        root_dn: u32,
        tt: &Tt,
    ) -> Progress {
        let nodes = match &self.pool {
            Some(p) => p.nodes.load(std::sync::atomic::Ordering::Relaxed) + nodes - self.pooled,
            None => nodes,
        };
        self.progress_at(nodes, Instant::now(), root_pn, root_dn, tt)
    }

    fn progress_at(
        &self,
        nodes: u64,
        now: Instant,
        root_pn: u32,
        root_dn: u32,
        tt: &Tt,
    ) -> Progress {
        Progress {
            nodes,
            elapsed: now.duration_since(self.start),
            root_pn,
            root_dn,
            tt_used: tt.used(),
            tt_capacity: tt.capacity(),
            tt_bytes: tt.bytes_in_use(),
        }
    }
}
