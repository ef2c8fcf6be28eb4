//! The project's own antichess rules: bitboards, legal move generation,
//! FEN/EPD, UCI/SAN, game ends, the packed encoding and Zobrist hashing.
//!
//! Fast and allocation-free in move generation; used by the prover and the
//! endgame tables. It is differential-tested against shakmaty (the checker's
//! rules library) in `tests/rules_vs_shakmaty.rs`. It knows nothing of
//! proofs.

pub mod attacks;
pub mod bitboard;
mod fen;
mod movegen;
mod moves;
mod notation;
mod outcome;
mod packed;
pub mod perft;
mod position;
mod types;
mod zobrist;

pub use crate::vocab::Rules;
pub use bitboard::Bitboard;
pub use fen::{FenError, FenField};
pub use moves::{MAX_MOVES, Move, MoveList, UciMove};
pub use notation::{LineError, MoveError, line_san, numbered_san};
pub use outcome::Outcome;
pub use packed::{PACKED_LEN, PackedError, PackedPosition};
pub use position::{Position, move_of_code};
pub use types::{Color, Piece, Role, Square};
