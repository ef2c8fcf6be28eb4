//! Search threads taking turns: a deterministic run of a threaded search.
//!
//! The threads of one search ([`crate::search::Config::threads`]) race on
//! their shared table, so two runs of one command search different nodes.
//! The simulated cluster ([`crate::jobs::sim`]) must be a function of its
//! command, and it models a job of T threads (a Slurm job with
//! `--cpus-per-task=T`) by running those T threads **in lockstep**: one
//! at a time, each for one slice of the search (from one limit check to
//! the next, about 2,048 nodes), in a fixed round. Every table read and
//! write then happens in the same order in every run, so the threads
//! search the same nodes; each thread's count is what it would search on
//! a core of its own, and the longest of them is the job's length in one
//! thread's time (its span, [`crate::search::Report::span_nodes`]).
//!
//! What it leaves out: real threads interleave node by node, not slice by
//! slice, and slow each other on memory; so a lockstep search stands for
//! a real one of as many threads, not for its exact nodes.

use std::sync::Mutex;
use std::thread::Thread;

/// The turn of the threads of one search (see the module doc).
pub struct Lockstep {
    inner: Mutex<Turns>,
}

struct Turns {
    /// The thread whose turn it is (`None` once all have left).
    turn: Option<usize>,
    /// Each thread: still searching, and its handle once it waited.
    alive: Vec<bool>,
    handles: Vec<Option<Thread>>,
}

impl Lockstep {
    /// Turns for `threads` threads, numbered from 0; thread 0 goes first.
    pub fn new(threads: usize) -> Lockstep {
        let threads = threads.max(1);
        Lockstep {
            inner: Mutex::new(Turns {
                turn: Some(0),
                alive: vec![true; threads],
                handles: vec![None; threads],
            }),
        }
    }

    fn turns(&self) -> std::sync::MutexGuard<'_, Turns> {
        // A thread that panicked while holding the lock left the turns
        // as they were: each step below leaves them whole.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Blocks until it is thread `me`'s turn.
    pub fn wait(&self, me: usize) {
        {
            let mut t = self.turns();
            if me < t.handles.len() {
                t.handles[me] = Some(std::thread::current());
            }
        }
        loop {
            if self.turns().turn.is_none_or(|k| k == me) {
                return;
            }
            std::thread::park();
        }
    }

    /// Thread `me` ends its slice: the next thread still searching, in the
    /// round after `me`, gets the turn (`me` again when it is the only
    /// one).
    fn hand_on(t: &mut Turns, me: usize) {
        let n = t.alive.len();
        let next = (1..=n).map(|d| (me + d) % n).find(|&k| t.alive[k]);
        t.turn = next;
        if let Some(k) = next
            && k != me
            && let Some(h) = &t.handles[k]
        {
            h.unpark();
        }
    }

    /// Thread `me` ends its slice and waits for its next turn.
    pub fn pass(&self, me: usize) {
        {
            let mut t = self.turns();
            if t.turn != Some(me) {
                return;
            }
            Self::hand_on(&mut t, me);
        }
        self.wait(me);
    }

    /// Thread `me` stops searching: it leaves the round (handing on the
    /// turn if it held it) and is never waited for again.
    pub fn leave(&self, me: usize) {
        let mut t = self.turns();
        if me >= t.alive.len() || !t.alive[me] {
            return;
        }
        t.alive[me] = false;
        if t.turn == Some(me) {
            Self::hand_on(&mut t, me);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Lockstep;
    use std::sync::{Arc, Mutex};

    #[test]
    fn threads_take_turns_in_a_fixed_round_and_leave_it() {
        // Three threads each log three slices; thread 1 leaves after two.
        // The log is the same round every time, whatever the scheduler.
        for _ in 0..20 {
            let step = Arc::new(Lockstep::new(3));
            let log = Arc::new(Mutex::new(Vec::new()));
            std::thread::scope(|s| {
                for me in 0..3 {
                    let (step, log) = (step.clone(), log.clone());
                    s.spawn(move || {
                        step.wait(me);
                        let slices = if me == 1 { 2 } else { 3 };
                        for i in 0..slices {
                            log.lock().unwrap().push((me, i));
                            if i + 1 < slices {
                                step.pass(me);
                            }
                        }
                        step.leave(me);
                    });
                }
            });
            let log = log.lock().unwrap().clone();
            assert_eq!(
                log,
                vec![
                    (0, 0),
                    (1, 0),
                    (2, 0),
                    (0, 1),
                    (1, 1),
                    (2, 1),
                    (0, 2),
                    (2, 2)
                ]
            );
        }
    }

    #[test]
    fn a_lone_thread_never_waits() {
        let step = Lockstep::new(1);
        step.wait(0);
        step.pass(0);
        step.pass(0);
        step.leave(0);
        step.pass(0);
    }
}
