//! The rules-free half of the endgame tables: everything the independent
//! checker needs to read and trust a table, with nothing of `crate::rules`,
//! `crate::search` or `crate::tables` (`tests/check_independence.rs` holds
//! this module to that, as it holds `src/check/`).
//!
//! * [`material`]: material signatures (`KNvB`) and their orientation.
//! * [`index`]: positions to table indices and back (symmetries, identical
//!   men), shared by the generator (`crate::tables`) and the certifier.
//! * [`format`](mod@format): the file format (header, checksum, memory-mapped reading).
//! * [`certify`]: checks every entry of a table against its successors
//!   with shakmaty's move generation, without trusting the generator, and
//!   [`certify::probe_shakmaty`], the checker's probe.
//! * [`record`]: certification records, so that certified table files are
//!   not certified again.
//!
//! The rule set of a table is a [`RuleSet`]: its stalemate rule
//! ([`Rules`]) and whether it was built under the fifty-move rule (both
//! from `crate::vocab`, which holds no rules logic).

pub mod certify;
pub mod format;
pub mod index;
pub mod material;
pub mod record;

pub use format::{Stats, Table};
pub use index::Layout;
pub use material::Material;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// The longest distance to win (plies) a table may hold.
pub const MAX_DTW: u16 = 30_000;

/// The rule set of a table (defined in [`crate::vocab`]).
pub use crate::vocab::{FIFTY_MOVE_PLIES, RuleSet, Rules};

/// Most men a table holds.
pub const MAX_MEN: u32 = index::MAX_MEN as u32;

/// Win, draw or loss, for the side to move.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Wdl {
    /// The side to move wins.
    Win,
    /// Nobody can force a win.
    Draw,
    /// The side to move loses.
    Loss,
}

impl Wdl {
    /// `"win"`, `"draw"` or `"loss"`.
    pub fn name(self) -> &'static str {
        match self {
            Wdl::Win => "win",
            Wdl::Draw => "draw",
            Wdl::Loss => "loss",
        }
    }
}

/// The value of a position for the side to move, with the distance to the
/// end of the game in plies (DTW) for wins and losses.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Value {
    /// Wins in this many plies.
    Win(u16),
    /// Draw.
    Draw,
    /// Loses in this many plies.
    Loss(u16),
}

impl Value {
    /// The value code: 0 draw, `1 + 2n` win in n, `2 + 2n` loss in n.
    pub fn code(self) -> u32 {
        match self {
            Value::Draw => 0,
            Value::Win(n) => 1 + 2 * n as u32,
            Value::Loss(n) => 2 + 2 * n as u32,
        }
    }

    /// The value of a code.
    #[inline(always)]
    pub fn from_code(c: u32) -> Value {
        if c == 0 {
            Value::Draw
        } else if c & 1 == 1 {
            Value::Win(((c - 1) / 2) as u16)
        } else {
            Value::Loss(((c - 2) / 2) as u16)
        }
    }

    /// The entry byte: the code if below 255 (distances up to 126 plies);
    /// `None` beyond (such entries hold [`format::ESCAPE`] and their code
    /// in the table's overflow list).
    pub fn to_byte(self) -> Option<u8> {
        let c = self.code();
        if c < format::ESCAPE as u32 {
            Some(c as u8)
        } else {
            None
        }
    }

    /// The value of an entry byte below [`format::ESCAPE`].
    #[inline(always)]
    pub fn from_byte(b: u8) -> Value {
        Value::from_code(b as u32)
    }

    /// Win, draw or loss.
    pub fn wdl(self) -> Wdl {
        match self {
            Value::Win(_) => Wdl::Win,
            Value::Draw => Wdl::Draw,
            Value::Loss(_) => Wdl::Loss,
        }
    }

    /// The distance in plies, for wins and losses.
    pub fn dtw(self) -> Option<u16> {
        match self {
            Value::Win(n) | Value::Loss(n) => Some(n),
            Value::Draw => None,
        }
    }

    /// The value of a move for the side that makes it, given the value of
    /// the position after it (for the other side): a loss there in `n` is a
    /// win in `n + 1` here, and so on.
    pub fn after_move(self) -> Value {
        match self {
            Value::Win(n) => Value::Loss(n + 1),
            Value::Draw => Value::Draw,
            Value::Loss(n) => Value::Win(n + 1),
        }
    }

    /// The value of a move under the fifty-move rule, for the side that
    /// makes it, given the fifty-move value of the position after it (for
    /// the other side, at a half-move clock of 0; see `docs/tables.md`). A
    /// `zeroing` move (a capture or a pawn move) resets the clock: a loss
    /// there is a win in 1 here, a win there a loss in 1. Any other move
    /// adds a ply: a loss there in `n` is a win here in `n + 1`, as long as
    /// `n + 1 <= 100` ([`FIFTY_MOVE_PLIES`]), else a draw; likewise wins.
    pub fn after_move_fifty(self, zeroing: bool) -> Value {
        let limit = FIFTY_MOVE_PLIES as u16;
        match (self, zeroing) {
            (Value::Draw, _) => Value::Draw,
            (Value::Loss(_), true) => Value::Win(1),
            (Value::Win(_), true) => Value::Loss(1),
            (Value::Loss(n), false) if n < limit => Value::Win(n + 1),
            (Value::Win(n), false) if n < limit => Value::Loss(n + 1),
            (_, false) => Value::Draw,
        }
    }

    /// Whether a fifty-move value (see [`Value::after_move_fifty`]) is
    /// decisive at half-move clock `clock`: a win or loss in `n` with
    /// `clock + n <= 100`. Game ends (`n = 0`) are decisive at any clock
    /// up to 100.
    pub fn decisive_at(self, clock: u32) -> bool {
        match self {
            Value::Win(n) | Value::Loss(n) => clock + n as u32 <= FIFTY_MOVE_PLIES,
            Value::Draw => false,
        }
    }

    /// An order on values for the side to move: quicker wins first, then
    /// draws, then slower losses.
    pub fn score(self) -> i32 {
        match self {
            Value::Win(n) => 100_000 - n as i32,
            Value::Draw => 0,
            Value::Loss(n) => -100_000 + n as i32,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Win(n) => write!(f, "win in {n}"),
            Value::Draw => f.write_str("draw"),
            Value::Loss(n) => write!(f, "loss in {n}"),
        }
    }
}

/// Errors of the tables.
#[derive(Debug)]
pub enum TableError {
    /// Reading or writing a file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file is not a valid table.
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A position has more men than tables cover.
    TooManyMen {
        /// The position.
        fen: String,
        /// Its men.
        men: u32,
    },
    /// A needed table is not built (and building was not asked for).
    Missing {
        /// Canonical material.
        material: String,
        /// Rule set.
        rules: RuleSet,
        /// Where it was looked for.
        path: PathBuf,
    },
    /// A distance does not fit the one-byte entry.
    DtwOverflow {
        /// The material being built.
        material: String,
    },
    /// A table stored for another rule set.
    WrongRules {
        /// The file.
        path: PathBuf,
        /// Its rule set.
        found: RuleSet,
    },
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            TableError::BadFile { path, reason } => {
                write!(f, "{}: not a valid table: {reason}", path.display())
            }
            TableError::TooManyMen { fen, men } => write!(
                f,
                "position {fen} has {men} men; the tables cover at most {MAX_MEN}"
            ),
            TableError::Missing {
                material,
                rules,
                path,
            } => write!(
                f,
                "table {material} ({rules}) is not built (looked for {})",
                path.display()
            ),
            TableError::DtwOverflow { material } => {
                write!(f, "table {material}: a distance exceeds {} plies", MAX_DTW)
            }
            TableError::WrongRules { path, found } => {
                write!(f, "{}: table is for {found} rules", path.display())
            }
        }
    }
}

// No `source()`: the I/O cause is already in the message (a chain would
// print it twice).
impl std::error::Error for TableError {}

/// Something that hands out tables by canonical material.
pub trait TableSource {
    /// Runs `f` on the table of `material` (canonical).
    fn with_table<R>(
        &self,
        material: &Material,
        f: impl FnOnce(&Table) -> R,
    ) -> Result<R, TableError>;
}

/// A fixed set of loaded tables (the dependencies of a generation; a
/// short list, searched linearly).
pub struct TableSet(pub Vec<(Material, Arc<Table>)>);

impl TableSource for TableSet {
    fn with_table<R>(
        &self,
        material: &Material,
        f: impl FnOnce(&Table) -> R,
    ) -> Result<R, TableError> {
        match self.0.iter().find(|(m, _)| m == material) {
            Some((_, t)) => Ok(f(t)),
            None => Err(TableError::Missing {
                material: material.to_string(),
                rules: RuleSet::default(),
                path: PathBuf::new(),
            }),
        }
    }
}
