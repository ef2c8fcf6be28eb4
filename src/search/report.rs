//! What a proving run reports: progress during the search, the final
//! report, the summary of one extracted proof, and its errors.

use crate::rules::{Move, Outcome};
use crate::store::StoreError;
use crate::vocab::MoveCode;
use std::fmt;
use std::time::Duration;

/// A callback for progress reports.
pub type ProgressFn<'s> = Box<dyn FnMut(&Progress) + Send + 's>;

/// A progress report, about once a second.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Nodes expanded so far.
    pub nodes: u64,
    /// Time since the start.
    pub elapsed: Duration,
    /// The root's proof number.
    pub root_pn: u32,
    /// The root's disproof number.
    pub root_dn: u32,
    /// Transposition-table entries in use.
    pub tt_used: u64,
    /// Transposition-table capacity in entries.
    pub tt_capacity: u64,
    /// Bytes of the transposition table in use (it grows up to the budget).
    pub tt_bytes: u64,
}

/// How a run ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ProveResult {
    /// The prover wins.
    Proven,
    /// The prover cannot win.
    Disproven,
    /// A limit stopped the search.
    Stopped,
}

/// The result of a run.
#[derive(Clone, Debug)]
pub struct ProveReport {
    /// How it ended.
    pub result: ProveResult,
    /// The winning move at the root when the prover is to move there.
    pub best_move: Option<Move>,
    /// Nodes expanded.
    pub nodes: u64,
    /// Of `nodes`, those of the search threads other than the first
    /// ([`super::Config::threads`]).
    pub other_threads_nodes: u64,
    /// Of `nodes`, those the run's busiest thread expanded, phase by
    /// phase: its length in one thread's time, as if each thread had a
    /// core of its own (`nodes` with one thread; with threads in lockstep,
    /// [`super::Config::lockstep`], a function of the settings).
    pub span_nodes: u64,
    /// Child positions generated.
    pub generated: u64,
    /// Distinct positions in the proof, game ends included (exact, from a
    /// walk of the stored proof, up to [`super::WALK_LIMIT`] positions;
    /// beyond it an upper bound from the records' sizes).
    pub proof_positions: u64,
    /// Whether `proof_positions` is exact (the stored proof was walked to
    /// its end); false: an upper bound, or no proof.
    pub proof_positions_exact: bool,
    /// Longest line of the proof in plies (exact when the proof was walked;
    /// else not counting below positions stored by earlier runs).
    pub proof_depth: u32,
    /// Records written to the store in this run.
    pub records_written: u64,
    /// The root's final proof and disproof numbers.
    pub root_pn: u32,
    /// See `root_pn`.
    pub root_dn: u32,
    /// Bytes of the transposition table.
    pub tt_bytes: u64,
    /// Bytes of the in-memory filter of stored positions at the end of
    /// the run (0 without a store).
    pub filter_bytes: u64,
    /// Under the fifty-move rule, of a proof in the store: its headroom
    /// need, the most plies from the root to the first capture, pawn move
    /// or game end along any line of the stored proof (it holds from a
    /// root clock of `100 - need` or less).
    pub proof_need: Option<u32>,
    /// What the pass over the stored proof that takes smaller proofs did
    /// ([`super::shrink_stored_proof`]), when it ran.
    pub shrink: Option<super::ShrinkFigures>,
    /// What the passes that prove alternatives did
    /// ([`super::alternatives`]), when they ran.
    pub alternatives: Option<super::AlternativeFigures>,
    /// Time that pass took (part of `elapsed`).
    pub shrink_time: Duration,
    /// Time the final extraction of the root's proof took, with its store
    /// writes (part of `elapsed`; checkpoints during the search are not
    /// counted here).
    pub extract_time: Duration,
    /// Time taken.
    pub elapsed: Duration,
}

/// Summary of an extracted proof.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProofSummary {
    /// Distinct positions.
    pub positions: u64,
    /// Longest line in plies.
    pub depth: u32,
    /// Records written.
    pub written: u64,
    /// The root's winning move code, if the prover is to move there.
    pub root_move: Option<MoveCode>,
}

/// What can go wrong in a proving run.
#[derive(Debug)]
pub enum SearchError {
    /// The store failed.
    Store(StoreError),
    /// The root is a finished game.
    GameOver(Outcome),
    /// A proof could not be rebuilt from the transposition table (should
    /// not happen).
    Extraction(String),
}

impl fmt::Display for SearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SearchError::Store(e) => write!(f, "{e}"),
            SearchError::GameOver(o) => write!(f, "the game is already over ({o})"),
            SearchError::Extraction(m) => write!(f, "proof extraction failed: {m}"),
        }
    }
}

impl std::error::Error for SearchError {}

impl From<StoreError> for SearchError {
    fn from(e: StoreError) -> SearchError {
        SearchError::Store(e)
    }
}
