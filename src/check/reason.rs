//! What is wrong with a proof: [`Reason`] (with its details),
//! [`ReasonKind`] (the kind alone, for tests and scripts) and
//! [`Rejection`] (a reason at a line and position).

use crate::vocab::MoveCode;
use crate::wintree::WinTreeError;
use std::fmt;

/// What is wrong with a proof, by kind (for tests and scripts).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ReasonKind {
    /// The file is malformed (truncated, index out of range, bad flags,
    /// slots that do not tile the file).
    Malformed,
    /// A prolog move (or a line move) is not legal.
    BadLine,
    /// A null move where a move must be.
    NullMove,
    /// An unsolved node or move (partial proof).
    Unsolved,
    /// A move code that names no move (bad promotion bits, from = to).
    BadMoveCode,
    /// A child's move is not legal in the position.
    IllegalMove,
    /// A move appears twice among a loser node's children.
    DuplicateMove,
    /// A winner node without exactly one child.
    WinnerChildren,
    /// A loser node misses a legal move.
    MissingDefence,
    /// A node with children in a finished game.
    GameOver,
    /// A leaf that is not a finished game (and has more than 4 men).
    NonTerminalLeaf,
    /// A leaf that is a finished game not won by the winner.
    LeafNotWon,
    /// A transposition whose target holds another position.
    TranspositionMismatch,
    /// The proof loops.
    Cycle,
    /// The store has no record where one is needed.
    MissingRecord,
    /// A store record that says something else than a win for the winner
    /// with a legal move.
    BadRecord,
    /// The winner cannot be found (or the given one has no proof here).
    NoProof,
    /// A line longer than [`MAX_PLIES`]: not checked (the checker's stack
    /// is bounded), so not certified.
    TooDeep,
    /// An endgame-table leaf that the tables score as something else than
    /// a win for the winner.
    TableLeafNotWon,
    /// An endgame table used by the proof cannot be read or fails
    /// certification.
    TableNotCertified,
    /// A win-tree file's size table lists a size that is not the node's
    /// true subtree size (or lists a negative size, which marks unsolved
    /// nodes, in a finished proof).
    WrongSize,
    /// Under the fifty-move rule: a position that is not a finished game
    /// is reached 100 plies or more after the last capture or pawn move
    /// (by the worst path into it): the game is drawn there.
    FiftyMoveRule,
}

/// The longest line the checker follows, in plies from the root checked.
/// Published proofs have lines of about a hundred plies.
pub const MAX_PLIES: u32 = 10_000;

/// What is wrong with a proof, with its details.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// See [`ReasonKind::Malformed`].
    Malformed(String),
    /// See [`ReasonKind::BadLine`].
    BadLine(String),
    /// See [`ReasonKind::NullMove`].
    NullMove,
    /// See [`ReasonKind::Unsolved`].
    Unsolved,
    /// See [`ReasonKind::BadMoveCode`].
    BadMoveCode(MoveCode),
    /// See [`ReasonKind::IllegalMove`] (the move in UCI).
    IllegalMove(String),
    /// See [`ReasonKind::DuplicateMove`] (SAN).
    DuplicateMove(String),
    /// See [`ReasonKind::WinnerChildren`] (the count).
    WinnerChildren(usize),
    /// See [`ReasonKind::MissingDefence`]: the missing moves in SAN.
    MissingDefence(Vec<String>),
    /// See [`ReasonKind::GameOver`].
    GameOver(String),
    /// See [`ReasonKind::NonTerminalLeaf`] (men on the board).
    NonTerminalLeaf(u32),
    /// See [`ReasonKind::LeafNotWon`] (the outcome in words).
    LeafNotWon(String),
    /// See [`ReasonKind::TranspositionMismatch`]: target node and its FEN.
    TranspositionMismatch {
        /// The target node index.
        target: u32,
        /// The position there.
        target_fen: String,
    },
    /// See [`ReasonKind::Cycle`].
    Cycle(String),
    /// See [`ReasonKind::MissingRecord`].
    MissingRecord,
    /// See [`ReasonKind::BadRecord`].
    BadRecord(String),
    /// See [`ReasonKind::NoProof`].
    NoProof(String),
    /// See [`ReasonKind::TooDeep`].
    TooDeep,
    /// See [`ReasonKind::TableLeafNotWon`] (the table's value in words).
    TableLeafNotWon(String),
    /// See [`ReasonKind::TableNotCertified`] (the table and the failure).
    TableNotCertified(String),
    /// See [`ReasonKind::WrongSize`].
    WrongSize {
        /// The node (slot index) the entry names.
        slot: u32,
        /// The size the table lists.
        listed: i64,
        /// The true size: distinct non-transposition nodes reachable from
        /// the node following transposition links, itself included.
        actual: u64,
    },
    /// See [`ReasonKind::FiftyMoveRule`].
    FiftyMoveRule {
        /// The half-move clock there: plies since the last capture or
        /// pawn move on the worst line into the position.
        plies: u32,
    },
}

impl Reason {
    /// The kind.
    pub fn kind(&self) -> ReasonKind {
        match self {
            Reason::Malformed(_) => ReasonKind::Malformed,
            Reason::BadLine(_) => ReasonKind::BadLine,
            Reason::NullMove => ReasonKind::NullMove,
            Reason::Unsolved => ReasonKind::Unsolved,
            Reason::BadMoveCode(_) => ReasonKind::BadMoveCode,
            Reason::IllegalMove(_) => ReasonKind::IllegalMove,
            Reason::DuplicateMove(_) => ReasonKind::DuplicateMove,
            Reason::WinnerChildren(_) => ReasonKind::WinnerChildren,
            Reason::MissingDefence(_) => ReasonKind::MissingDefence,
            Reason::GameOver(_) => ReasonKind::GameOver,
            Reason::NonTerminalLeaf(_) => ReasonKind::NonTerminalLeaf,
            Reason::LeafNotWon(_) => ReasonKind::LeafNotWon,
            Reason::TranspositionMismatch { .. } => ReasonKind::TranspositionMismatch,
            Reason::Cycle(_) => ReasonKind::Cycle,
            Reason::MissingRecord => ReasonKind::MissingRecord,
            Reason::BadRecord(_) => ReasonKind::BadRecord,
            Reason::NoProof(_) => ReasonKind::NoProof,
            Reason::TooDeep => ReasonKind::TooDeep,
            Reason::TableLeafNotWon(_) => ReasonKind::TableLeafNotWon,
            Reason::TableNotCertified(_) => ReasonKind::TableNotCertified,
            Reason::WrongSize { .. } => ReasonKind::WrongSize,
            Reason::FiftyMoveRule { .. } => ReasonKind::FiftyMoveRule,
        }
    }
}

impl From<WinTreeError> for Reason {
    fn from(e: WinTreeError) -> Reason {
        Reason::Malformed(e.to_string())
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Malformed(s) => write!(f, "malformed file: {s}"),
            Reason::BadLine(s) => write!(f, "bad line: {s}"),
            Reason::NullMove => f.write_str("a null move where a move must be"),
            Reason::Unsolved => f.write_str("an unsolved node (partial proof)"),
            Reason::BadMoveCode(c) => write!(f, "move code {c:#06x} names no move"),
            Reason::IllegalMove(m) => write!(f, "move {m} is not legal here"),
            Reason::DuplicateMove(m) => write!(f, "move {m} appears twice"),
            Reason::WinnerChildren(n) => write!(
                f,
                "the winner is to move and the proof gives {n} moves, not exactly one"
            ),
            Reason::MissingDefence(v) => {
                write!(f, "the defence(s) {} are missing", v.join(", "))
            }
            Reason::GameOver(s) => write!(f, "the game is over here ({s}) but the proof goes on"),
            Reason::NonTerminalLeaf(men) => write!(
                f,
                "a leaf that is not a finished game ({men} men: too many for endgame tables)"
            ),
            Reason::LeafNotWon(s) => write!(f, "a finished game not won by the winner: {s}"),
            Reason::TranspositionMismatch { target, target_fen } => write!(
                f,
                "transposition to node {target}, which holds another position ({target_fen})"
            ),
            Reason::Cycle(s) => write!(f, "the proof has a cycle: {s}"),
            Reason::MissingRecord => f.write_str("the store has no win record for this position"),
            Reason::BadRecord(s) => write!(f, "bad store record: {s}"),
            Reason::NoProof(s) => write!(f, "no proof: {s}"),
            Reason::TooDeep => write!(
                f,
                "the line is longer than {MAX_PLIES} plies, more than the checker follows"
            ),
            Reason::TableLeafNotWon(s) => write!(f, "an endgame-table leaf not won: {s}"),
            Reason::TableNotCertified(s) => f.write_str(s),
            Reason::WrongSize {
                slot,
                listed,
                actual,
            } => write!(
                f,
                "the size table lists size {listed} for node {slot}, whose subtree has {actual} distinct nodes"
            ),
            Reason::FiftyMoveRule { plies } => write!(
                f,
                "drawn by the fifty-move rule: {plies} plies without a capture or pawn move \
                 and the game is not over"
            ),
        }
    }
}

/// A rejected proof: where and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The line from the root in SAN (empty at the root).
    pub line: String,
    /// The position there.
    pub fen: String,
    /// The node index in the file, for win-tree checks.
    pub node: Option<u32>,
    /// What is wrong.
    pub reason: Reason,
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let line = if self.line.is_empty() {
            "(the root)"
        } else {
            &self.line
        };
        write!(f, "at {line}")?;
        if let Some(n) = self.node {
            write!(f, " (node {n})")?;
        }
        write!(f, ", position {}: {}", self.fen, self.reason)
    }
}
