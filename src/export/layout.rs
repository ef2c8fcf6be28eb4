//! How an export lays out the written DAG as files: one win-tree file, or
//! (a split size) one a reply of the loser wherever a file would be
//! larger; zstd-compressed for a `.zst` name.

use super::ExportError;
use crate::rules::{Color, Move, Position};
use crate::wintree::{MoveCode, ProofDag, WriteOptions, compressed, write_tree};
use std::io::Write;
use std::path::PathBuf;

/// How the written DAG becomes files: the format options, compression
/// and the split size.
pub struct Layout<'a> {
    /// The win-tree format's options.
    pub opts: WriteOptions,
    /// zstd level, for a `.zst` output.
    pub zstd: Option<i32>,
    /// The split size (`--split-above`), bytes.
    pub split_above: Option<u64>,
    /// The file to write (the whole proof's; a split's parts are named
    /// after it).
    pub output: &'a std::path::Path,
    /// The export's inputs, which no part may overwrite.
    pub inputs: &'a [&'a std::path::Path],
}

/// One file written.
pub struct Part {
    /// The file.
    pub path: PathBuf,
    /// The DAG node at its root.
    pub node: usize,
    /// SAN moves from the export's root to the part's root (empty: the
    /// whole proof).
    pub suffix: Vec<String>,
    /// Node slots written.
    pub slots: u32,
    /// Of which transposition pointers.
    pub transpositions: u32,
    /// Entries of the size table.
    pub size_entries: usize,
    /// Bytes before compression.
    pub raw_len: usize,
    /// Bytes of the file.
    pub len: usize,
    /// Over `--split-above`, but with no reply to split at.
    pub too_large: bool,
}

/// The most files one export writes.
const MAX_PARTS: usize = 100_000;

/// A file this much larger than the split size is split without being
/// compressed first (the certificates here compress 4-5 times).
const SURELY_TOO_LARGE: u64 = 16;

impl Layout<'_> {
    /// The file name of the part at `suffix` below the export's root:
    /// the output's for the whole proof, else its first word with the
    /// moves added (`h4.tree.zst` -> `h4-b5-a3.tree.zst`).
    fn path_of(&self, suffix: &[String]) -> PathBuf {
        if suffix.is_empty() {
            return self.output.to_path_buf();
        }
        let name = self
            .output
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (zst, rest) = match name.strip_suffix(".zst") {
            Some(r) => (".zst", r),
            None => ("", name.as_str()),
        };
        let (tree, stem) = match rest.strip_suffix(".tree") {
            Some(r) => (".tree", r),
            None => ("", rest),
        };
        // The moves go after the first word: `h4.joint.tree` ->
        // `h4-b5-a3.joint.tree`, the name of the part's line.
        let (base, rest) = stem.split_at(stem.find('.').unwrap_or(stem.len()));
        self.output
            .with_file_name(format!("{base}-{}{rest}{tree}{zst}", suffix.join("-")))
    }

    /// Lays out the proof below `node` (position `pos`, reached by
    /// `prolog` from the start and `suffix` from the export's root) as one
    /// file, or, where that is over the split size, as one a reply.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn parts(
        &self,
        dag: &ProofDag,
        node: usize,
        pos: &Position,
        winner: Color,
        prolog: &mut Vec<MoveCode>,
        suffix: &mut Vec<String>,
        out: &mut Vec<Part>,
    ) -> Result<(), ExportError> {
        if out.len() == MAX_PARTS {
            return Err(ExportError::TooManyParts {
                split_above: self.split_above.unwrap_or(0),
                max: MAX_PARTS,
            });
        }
        let written = write_tree(dag, node, prolog, &self.opts)?;
        let fits = |len: u64| self.split_above.is_none_or(|l| len <= l);
        // Where the loser moves: here, or after the winner's one move.
        let (first, at, at_pos) = if pos.turn() == winner {
            match dag.nodes[node].children.first() {
                Some(&(code, child)) => {
                    let m = move_of(pos, code)?;
                    (Some((code, pos.san(m))), child, pos.play(m))
                }
                None => (None, node, *pos),
            }
        } else {
            (None, node, *pos)
        };
        let can_split = at_pos.turn() != winner && !dag.nodes[at].children.is_empty();
        let raw = written.bytes.len() as u64;
        let surely_too_large = self.split_above.is_some_and(|l| raw / SURELY_TOO_LARGE > l);
        if !(can_split && surely_too_large) {
            let bytes = match self.zstd {
                Some(level) => {
                    compressed::zstd_bytes(&written.bytes, level).map_err(|e| ExportError::Io {
                        what: "cannot compress the win-tree file".into(),
                        source: e,
                    })?
                }
                None => written.bytes.clone(),
            };
            if !can_split || fits(bytes.len() as u64) {
                let path = self.path_of(suffix);
                if !suffix.is_empty() {
                    crate::fsutil::check_output(
                        &path,
                        crate::fsutil::OutputKind::WinTree,
                        self.inputs,
                    )?;
                }
                // Atomically: a reader (`serve` with the old file mapped)
                // keeps the old file until it lets go; a failed write
                // leaves it as is.
                crate::fsutil::write_atomic(&path, |f| f.write_all(&bytes)).map_err(|e| {
                    ExportError::Io {
                        what: format!("cannot write {}", path.display()),
                        source: e,
                    }
                })?;
                out.push(Part {
                    path,
                    node,
                    suffix: suffix.clone(),
                    slots: written.slots,
                    transpositions: written.transpositions,
                    size_entries: written.sizes.len(),
                    raw_len: written.bytes.len(),
                    len: bytes.len(),
                    too_large: !fits(bytes.len() as u64),
                });
                return Ok(());
            }
        }
        drop(written);
        if let Some((code, san)) = &first {
            prolog.push(*code);
            suffix.push(san.clone());
        }
        for &(code, child) in &dag.nodes[at].children {
            let m = move_of(&at_pos, code)?;
            prolog.push(code);
            suffix.push(at_pos.san(m));
            self.parts(dag, child, &at_pos.play(m), winner, prolog, suffix, out)?;
            prolog.pop();
            suffix.pop();
        }
        if first.is_some() {
            prolog.pop();
            suffix.pop();
        }
        Ok(())
    }
}

/// The legal move a code of the written DAG names.
fn move_of(pos: &Position, code: MoveCode) -> Result<Move, ExportError> {
    crate::rules::move_of_code(pos, code).ok_or_else(|| {
        ExportError::Internal(format!(
            "the proof's move {} is not legal at {}",
            code.uci(),
            pos.to_fen()
        ))
    })
}
