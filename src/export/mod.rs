//! Export: a stored proof as Watkins win-tree files.
//!
//! Walks the store from the line's position with the project's own rules
//! (this is not the trusted part: `antiproof verify --tree` checks the
//! result independently): the stored move at the winner's positions, every
//! legal move at the loser's, leaves at finished games and at positions of
//! 4 men or fewer without a record (endgame tables). Transpositions are
//! merged: each distinct position is written once.
//!
//! With [`Source::expand`] such leaves are replaced by full subtrees from
//! the tables (the winner's move with the shortest distance to win, every
//! reply of the loser), so the file needs no tables to be certified. With
//! [`Source::merge`] a win-tree file's proof is written with each of its
//! open leaves replaced by its proof from the store.
//!
//! Under the fifty-move rule every written position gets its headroom need
//! (the most plies to the first capture, pawn move or game end along any
//! line below it in the written DAG): a position reached at clock `c`
//! needing `n` with `c + n > 100` (a transposition merged from a line with
//! more headroom) is refused, naming the line, so no position that is not
//! a finished game is reached at clock 100 or more along any path of the
//! file.
//!
//! Used by `antiproof export`, by `verify --db` under the fifty-move rule
//! ([`tree_bytes`]) and by a job (`antiproof job run`) for its certificate.

mod layout;
mod walk;

pub use layout::{Layout, Part};

use crate::rules::{Color, Move, Position};
use crate::store::{StoreError, StoreReader};
use crate::tables::Tables;
use crate::vocab::RuleSet;
use crate::wintree::{MoveCode, ProofDag, WinTree, WinTreeError, WriteError, WriteOptions};
use std::fmt;

/// What to export: the proof of `winner` at the end of `line` from
/// `start`, under `rule_set`.
pub struct Source<'a> {
    /// The rule set whose records are followed.
    pub rule_set: RuleSet,
    /// The side whose proof it is.
    pub winner: Color,
    /// Where the line starts (the standard start position, or a FEN).
    pub start: Position,
    /// The moves from `start` to the proof's root: the file's prolog.
    pub line: Vec<Move>,
    /// A win-tree file rooted at the line's end whose proof is written,
    /// its open leaves replaced by stored proofs.
    pub merge: Option<&'a WinTree<'a>>,
    /// Endgame tables to expand table leaves with.
    pub expand: Option<&'a Tables>,
}

impl Source<'_> {
    /// The proof's root: the end of the line.
    pub fn root(&self) -> Position {
        self.line.iter().fold(self.start, |p, &m| p.play(m))
    }
}

/// A walked proof: the DAG to write, and what the walk met.
pub struct Walked {
    /// The proof's positions, each once.
    pub dag: ProofDag,
    /// The root's node.
    pub root: usize,
    /// The root's position.
    pub root_pos: Position,
    /// The line to the root, as the file's prolog.
    pub prolog: Vec<MoveCode>,
    /// The side whose proof it is.
    pub winner: Color,
    /// Leaves left resting on endgame tables.
    pub table_leaves: u64,
    /// Winner positions written from the endgame tables.
    pub expanded: u64,
    /// Open leaves of a merged file replaced by stored proofs.
    pub grafted: u64,
}

/// Why a proof could not be exported. Its message names the cause.
#[derive(Debug)]
pub enum ExportError {
    /// The stored proof (or, merging, the file's with the store's) breaks
    /// at `line`, for the reason `why`.
    Broken {
        /// The line from the start to where it breaks, numbered SAN.
        line: String,
        /// What is wrong there.
        why: String,
        /// Whether a win-tree file was being merged.
        merging: bool,
    },
    /// The store could not be read.
    Store(StoreError),
    /// The win-tree file being merged could not be read.
    Tree(WinTreeError),
    /// The DAG could not be laid out as a win-tree file.
    Write(WriteError),
    /// A file to write is refused (an input, or a file of another kind).
    Output(crate::fsutil::OutputRefused),
    /// A file could not be written or compressed.
    Io {
        /// What was being done, naming the file.
        what: String,
        /// The cause.
        source: std::io::Error,
    },
    /// `--split-above` would need more than `max` files.
    TooManyParts {
        /// The split size asked for, bytes.
        split_above: u64,
        /// The most files one export writes.
        max: usize,
    },
    /// The split stopped partway: the files it had written are removed.
    SplitFailed {
        /// How many files were written and removed.
        removed: usize,
        /// Why it stopped.
        source: Box<ExportError>,
    },
    /// A move of the written DAG is not legal at its position (a bug).
    Internal(String),
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::Broken { line, why, merging } => {
                let what = if *merging {
                    "cannot merge the file's proof with the store's"
                } else {
                    "the stored proof is broken"
                };
                write!(f, "{what} at {line}: {why}")
            }
            ExportError::Store(e) => write!(f, "{e}"),
            ExportError::Tree(e) => write!(f, "{e}"),
            ExportError::Write(e) => write!(f, "{e}"),
            ExportError::Output(e) => write!(f, "{e}"),
            ExportError::Io { what, source } => write!(f, "{what}: {source}"),
            ExportError::TooManyParts { split_above, max } => write!(
                f,
                "--split-above {split_above}: the proof would need more than {max} files; give a larger size"
            ),
            ExportError::SplitFailed { removed, source } => {
                write!(
                    f,
                    "no file written (the {removed} written so far removed): {source}"
                )
            }
            ExportError::Internal(e) => write!(f, "internal error: {e}"),
        }
    }
}

// Display names each cause itself, as the crate's other errors do (and
// `RunJobError`, which prints it with `{e}`), so no `source()`: a chain
// printed with `{:#}` would say each cause twice.
impl std::error::Error for ExportError {}

impl From<StoreError> for ExportError {
    fn from(e: StoreError) -> ExportError {
        ExportError::Store(e)
    }
}

impl From<WinTreeError> for ExportError {
    fn from(e: WinTreeError) -> ExportError {
        ExportError::Tree(e)
    }
}

impl From<WriteError> for ExportError {
    fn from(e: WriteError) -> ExportError {
        ExportError::Write(e)
    }
}

impl From<crate::fsutil::OutputRefused> for ExportError {
    fn from(e: crate::fsutil::OutputRefused) -> ExportError {
        ExportError::Output(e)
    }
}

/// The side with a proof at `root` in the store under `rule_set` (the
/// winner of a finished game, or of the position's record), if any.
pub fn stored_winner(
    reader: &StoreReader,
    rule_set: RuleSet,
    root: &Position,
) -> Result<Option<Color>, StoreError> {
    crate::stored::StoredProof::new(reader, rule_set).winner_at(root)
}

/// Walks the stored proof `source` names into the DAG to write.
pub fn walk(reader: &StoreReader, source: &Source<'_>) -> Result<Walked, ExportError> {
    walk::walk(reader, source)
}

/// The stored proof `source` names as the bytes of one win-tree file (the
/// line as prolog, no size table), as `verify --db` checks it under the
/// fifty-move rule: the checker follows the clock along every path of a
/// win-tree file, so the store's proof is checked as the file `export`
/// would write.
pub fn tree_bytes(reader: &StoreReader, source: &Source<'_>) -> Result<Vec<u8>, ExportError> {
    let w = walk(reader, source)?;
    let opts = WriteOptions {
        size_table: false,
        size_depth: None,
    };
    Ok(crate::wintree::write_tree(&w.dag, w.root, &w.prolog, &opts)?.bytes)
}

/// Writes a walked proof as `layout` says: one file, or one a reply where
/// a file would be over the split size. A split that cannot finish
/// leaves none of its files.
pub fn write(walked: &Walked, layout: &Layout<'_>) -> Result<Vec<Part>, ExportError> {
    let mut prolog = walked.prolog.clone();
    let mut parts = Vec::new();
    let laid = layout.parts(
        &walked.dag,
        walked.root,
        &walked.root_pos,
        walked.winner,
        &mut prolog,
        &mut Vec::new(),
        &mut parts,
    );
    match laid {
        Ok(()) => Ok(parts),
        Err(e) if is_split(&parts) => {
            for p in &parts {
                let _ = std::fs::remove_file(&p.path);
            }
            Err(ExportError::SplitFailed {
                removed: parts.len(),
                source: Box::new(e),
            })
        }
        Err(e) => Err(e),
    }
}

/// Whether the files written are a split (several, or one below the root).
pub fn is_split(parts: &[Part]) -> bool {
    parts.len() > 1 || parts.first().is_some_and(|p| !p.suffix.is_empty())
}

/// The file a proof is written to: `output`, zstd-compressed
/// where its name ends in `.zst` (at the default level), with the size table, never over one of
/// `inputs`.
pub fn one_file<'a>(output: &'a std::path::Path, inputs: &'a [&'a std::path::Path]) -> Layout<'a> {
    Layout {
        opts: WriteOptions {
            size_table: true,
            size_depth: None,
        },
        zstd: crate::wintree::compressed::is_zstd_name(output)
            .then_some(crate::wintree::compressed::ZSTD_LEVEL),
        split_above: None,
        output,
        inputs,
    }
}
