//! Plain vocabulary shared by the prover, the store, the file formats and
//! the checker: names and codes only, no rules logic, so the independent
//! checker (`crate::check`) may import it without trusting the prover.
//!
//! * [`Rules`]: the stalemate rule, with its name (`"international"`,
//!   `"fics"`, `"joint"`) and its one-byte code in stored formats;
//!   [`RuleSet`]: it with the fifty-move rule on or off
//!   ([`FIFTY_MOVE_PLIES`]).
//! * [`line`]: move lines as people write them (move numbers, results,
//!   annotations dropped; null moves refused): one tokenizer for every
//!   command, the checker's included.
//! * [`MoveCode`]: the 16-bit Watkins move code (win-tree files, store
//!   records), with named accessors; its bit layout is written out here
//!   and nowhere else.
//!
//! This module imports nothing from the rest of the crate, nor shakmaty
//! (`tests/check_independence.rs` holds it to that).

pub mod line;
mod move_code;
mod rule_set;

pub use move_code::MoveCode;
pub use rule_set::{FIFTY_MOVE_PLIES, RuleSet, Rules};
