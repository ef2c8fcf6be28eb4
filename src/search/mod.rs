//! Proof-number search with bounded memory, and proof extraction into the
//! proof store.
//!
//! One job a module:
//!
//! * `dfpn`: the df-pn search (1+epsilon, mobility initialisation,
//!   path-keyed transposition table), and why its tt keys are sound with
//!   transpositions and repetitions;
//! * [`tt`]: the transposition table (tt);
//! * `extract`: rebuilding a proven node's proof as a DAG of real
//!   positions;
//! * `write`: writing an extracted proof to the store, and the filter
//!   of stored positions;
//! * `checkpoint`: proofs written during and after a stopped search,
//!   and saving and loading the tt for resuming;
//! * `shrink`: smaller proofs, a pass over the stored proof after
//!   extraction that takes moves into positions the proof holds anyway;
//! * `walk`: walking a stored proof for exact figures;
//! * `report`: progress reports, the final report, errors;
//! * [`state`]: a plain search's run state, a small file that outlives
//!   its machine;
//! * [`run`]: the search policy of the command line (the search thread,
//!   the stop flag on signals, the saved-tt files).
//!
//! [`Prover`] (`prover`) orchestrates one run.
//!
//! Proven wins are path-independent (an acyclic tree whose leaves are won
//! game ends wins whatever the history), and the extraction rebuilds every
//! proof explicitly from real positions down to game ends or stored
//! records, so a hash collision in the tt can cost time, never soundness.

mod alternatives;
mod checkpoint;
mod config;
mod dfpn;
mod extract;
mod frontier;
pub mod guide;
mod prover;
mod report;
pub mod run;
mod shrink;
pub mod state;
pub mod tt;
mod walk;
mod write;

pub use alternatives::AlternativeFigures;
pub use config::{CHECKPOINT_PLIES, Config, FLUSH_NODES, Limits, MAX_THREADS};
pub use dfpn::{tt_key_fingerprint, tt_key_of_line};
pub use frontier::{ChildNumbers, MoveStanding, Standing};
pub use prover::{Prover, StandingFn};
pub use report::{Progress, ProgressFn, ProofSummary, ProveReport, ProveResult, SearchError};
pub use shrink::{ShrinkFigures, shrink_stored_proof};
pub use walk::{WALK_LIMIT, Walked, walk_proof, walk_proof_with, walk_proof_within};
