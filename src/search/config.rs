//! The settings of a proving run.

use crate::vocab::RuleSet;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// [`Config::checkpoint_plies`] of a plain search: the root's moves and the
/// answers to them.
pub const CHECKPOINT_PLIES: u32 = 2;

/// [`Config::flush_nodes`] of a plain search: a second's search or a few,
/// after a stop.
pub const FLUSH_NODES: u64 = 4_000_000;

/// When to stop a search early.
#[derive(Clone, Default)]
pub struct Limits {
    /// Stop after this many expanded nodes.
    pub nodes: Option<u64>,
    /// Stop at this instant.
    pub deadline: Option<Instant>,
    /// Stop when this flag is set (Ctrl-C; see [`super::run::stop_flag`]).
    pub stop: Option<Arc<AtomicBool>>,
}

impl Limits {
    /// Moves the deadline, if any, `by` later: time the run spent before
    /// its search (loading a saved table) is not the search's.
    pub fn defer_deadline(&mut self, by: std::time::Duration) {
        if let Some(d) = self.deadline.as_mut() {
            *d += by;
        }
    }
}

/// The most search threads one run or job takes (`--jobs`, a job file's
/// `threads`).
pub const MAX_THREADS: usize = 1024;

/// Settings of a proving run.
pub struct Config {
    /// The rule set: the stalemate rule, and whether the fifty-move rule
    /// ([`crate::vocab::FIFTY_MOVE_PLIES`]) holds: a position that is not
    /// a finished game at a half-move clock of 100 or more is then a draw.
    /// The root's clock is its [`crate::rules::Position::halfmoves`].
    pub rule_set: RuleSet,
    /// Bytes for the transposition table.
    pub tt_bytes: usize,
    /// Limits.
    pub limits: Limits,
    /// A proven node whose proof-size estimate reaches this is extracted
    /// and written to the store during the search.
    pub checkpoint_size: u32,
    /// A proven node this many plies below the root or fewer is
    /// extracted and written to the store as soon as it is proven,
    /// whatever its size: the root's moves and the answers to them, so
    /// what a stopped or killed run had closed there is stored (0: none;
    /// a job's search, whose unresolved result keeps no records, and a
    /// run's helper threads, which write nothing).
    pub checkpoint_plies: u32,
    /// Nodes a stopped run may search again, in all, to write the proofs
    /// of the proven nodes its table holds whose entries below were lost
    /// (0: none, those proofs are skipped; a job's search, whose
    /// unresolved result keeps no records).
    pub flush_nodes: u64,
    /// Search threads sharing the transposition table (1: one search).
    pub threads: usize,
    /// After a proof, prove the winner's other moves where they could
    /// make the stored proof smaller ([`super::alternatives`]).
    pub shrink_alternatives: bool,
    /// Breaks ties between equally promising children by a hash of each
    /// child's key salted with this; 0 (the default) keeps the first in
    /// move order (at OR nodes, the larger disproof number first). Another
    /// seed is another search order: another proof, often of another size
    /// (`prove --seed`, "Smaller proofs" in docs/prove.md).
    pub seed: u64,
    /// With `threads` above 1: the threads take turns, a slice of the
    /// search each in a fixed round, so that the run is a function of its
    /// settings (the simulated cluster's jobs of several threads; see
    /// `dfpn::Lockstep`). Off: they run at once, as fast as they can.
    pub lockstep: bool,
    /// Raises each new position's proof number by its half-move clock
    /// divided by this (0, the default: off): in a quiet stretch of
    /// shuffling moves, where every order of the same moves is a new node,
    /// the search then prefers lines that capture or move a pawn. A
    /// heuristic with an erratic effect (`prove --clock-init`,
    /// docs/prove.md); sound whatever its value, since only the order of
    /// the search changes.
    pub clock_init: u32,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            rule_set: RuleSet::default(),
            tt_bytes: 64 << 20,
            limits: Limits::default(),
            checkpoint_size: 20_000,
            checkpoint_plies: CHECKPOINT_PLIES,
            flush_nodes: FLUSH_NODES,
            threads: 1,
            shrink_alternatives: false,
            seed: 0,
            lockstep: false,
            clock_init: 0,
        }
    }
}
