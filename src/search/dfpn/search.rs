//! The state of a df-pn search, and the nodes the search threads of a
//! run are in.

use super::Kid;
use super::budget::Budget;
use super::path::Path;
use crate::search::config::Limits;
use crate::search::tt::Tt;

/// The state of the df-pn search: the tt, the current path, the children
/// being searched, and the counters and limits.
pub(in crate::search) struct Search<'s> {
    /// The transposition table.
    pub(in crate::search) tt: Tt,
    /// The positions of the current path.
    pub(in crate::search) path: Path,
    /// The children of every node of the path, one stack.
    pub(super) kids: Vec<Kid>,
    /// Nodes expanded.
    pub(in crate::search) nodes: u64,
    /// Child positions generated.
    pub(in crate::search) generated: u64,
    /// A limit stopped the search (or the store failed).
    pub(in crate::search) stopped: bool,
    /// The root's current proof and disproof numbers.
    pub(in crate::search) root_pn: u32,
    /// See `root_pn`.
    pub(in crate::search) root_dn: u32,
    /// A proof is being extracted: `mid` is re-proving a child, not
    /// searching from the root.
    pub(in crate::search) extracting: bool,
    /// Proven nodes whose proof-size estimate reaches this are written to
    /// the store during the search.
    pub(in crate::search) checkpoint_size: u32,
    /// [`crate::search::Config::checkpoint_plies`].
    pub(in crate::search) checkpoint_plies: u32,
    /// [`crate::search::Config::flush_nodes`].
    pub(in crate::search) flush_nodes: u64,
    /// Limits and progress reports.
    pub(in crate::search) budget: Budget<'s>,
    /// Positions on the path at the root: 1, or more where the root was
    /// reached through a history ([`Prover::prove_after`](crate::search::Prover::prove_after)).
    pub(in crate::search) root_len: usize,
    /// The nodes every search thread of this run is in, when several
    /// share the tt ([`Busy`]).
    pub(in crate::search) busy: Option<std::sync::Arc<Busy>>,
    /// [`crate::search::Config::seed`].
    pub(in crate::search) seed: u64,
    /// [`crate::search::Config::clock_init`].
    pub(in crate::search) clock_init: u32,
}

/// The nodes the search threads of one run are in: a count for each of
/// 2^16 slots of node keys (keys that share a slot look busy together:
/// a hint, never part of a value). At an AND node (the opponent to
/// move: every child must be proven), a thread steers away from a child
/// another thread is searching (its disproof number counts
/// [`BUSY_WEIGHT`] times more for each thread in it), so threads that
/// meet on one path spread over the replies that all need a proof,
/// instead of repeating each other's work (after the "virtual proof
/// numbers" of Kaneko's parallel df-pn). At OR nodes they do not: there
/// the second-best move is speculation, and steering there too took
/// 12-20 s on rung 10 with two threads against 9-11 s.
pub(in crate::search) struct Busy(Box<[std::sync::atomic::AtomicU32]>);

/// How much more a child's proof or disproof number counts, when
/// choosing among siblings, for each other thread searching it.
pub(in crate::search) const BUSY_WEIGHT: u32 = 1;

const BUSY_SLOTS: usize = 1 << 16;

impl Busy {
    /// No thread anywhere.
    pub(in crate::search) fn new() -> Busy {
        Busy(
            (0..BUSY_SLOTS)
                .map(|_| std::sync::atomic::AtomicU32::new(0))
                .collect(),
        )
    }

    #[inline(always)]
    pub(super) fn slot(&self, key: u64) -> &std::sync::atomic::AtomicU32 {
        &self.0[(key >> 48) as usize % BUSY_SLOTS]
    }

    /// A thread enters the node of `key`.
    #[inline(always)]
    pub(super) fn enter(&self, key: u64) {
        self.slot(key)
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// A thread leaves the node of `key`.
    #[inline(always)]
    pub(super) fn leave(&self, key: u64) {
        self.slot(key)
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Threads in the node of `key` (or in another of its slot).
    #[inline(always)]
    pub(super) fn count(&self, key: u64) -> u32 {
        self.slot(key).load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl<'s> Search<'s> {
    /// A search with a tt of `tt_bytes`.
    pub(in crate::search) fn new(
        tt_bytes: usize,
        limits: Limits,
        checkpoint_size: u32,
    ) -> Search<'s> {
        Search {
            tt: Tt::with_bytes(tt_bytes),
            path: Path(Vec::with_capacity(1024)),
            kids: Vec::with_capacity(1 << 14),
            nodes: 0,
            generated: 0,
            stopped: false,
            root_pn: 1,
            root_dn: 1,
            root_len: 1,
            busy: None,
            seed: 0,
            clock_init: 0,
            extracting: false,
            checkpoint_size: checkpoint_size.max(2),
            checkpoint_plies: 0,
            flush_nodes: 0,
            budget: Budget::new(limits),
        }
    }
}
