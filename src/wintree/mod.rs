//! Watkins win-tree files: a bounds-checked reader and a writer.
//!
//! The format (see `docs/watkins-format.md` and `docs/verify.md`) is the
//! one Mark Watkins published his antichess proofs in: a 6-byte root record
//! (`u32 data0, u16 prolog_len`), a prolog of `prolog_len` move codes from
//! the start position to the tree's root, `N - 1` node slots of 6 bytes
//! (`u32 data, u16 move`, little-endian, unaligned) in depth-first
//! pre-order, and an optional table of `(u32 node_index, i32 size)` pairs to
//! the end of the file.
//!
//! * [`WinTree`] reads a file from any byte slice: a memory map
//!   ([`WinTree::open`]), an owned buffer ([`WinTree::from_vec`]) or borrowed
//!   bytes ([`WinTree::from_bytes`]). Opening reads only the header and
//!   checks the lengths; nodes are decoded on demand, so a 4.5 GB file needs
//!   little RAM. Every index is bounds-checked: malformed input gives a
//!   [`WinTreeError`] naming the node index or byte offset, never a panic.
//! * [`write_tree`] builds a file from a proof DAG ([`ProofDag`]):
//!   depth-first pre-order, a transposition slot for every position already
//!   written, the prolog and the subtree-size table.
//!
//! This module knows nothing about chess rules (it is used by the
//! independent checker in `crate::check`): moves are [`MoveCode`]s, the
//! 16-bit codes of the format (`crate::vocab`).

pub mod compressed;
mod reader;
pub mod scratch;
mod writer;

pub use reader::{Children, MoveEntry, Node, NodeKind, WinTree};
pub use writer::{
    DagNode, ProofDag, SIZE_TABLE_WALKS, WriteError, WriteOptions, WrittenTree, write_tree,
};

/// The 16-bit move code of the format (defined in [`crate::vocab`]).
pub use crate::vocab::MoveCode;

use std::fmt;

/// Bytes in the root record.
pub const ROOT_LEN: usize = 6;
/// Bytes in one node slot.
pub const SLOT_LEN: usize = 6;
/// Bytes in one subtree-size table entry.
pub const SIZE_ENTRY_LEN: usize = 8;
/// The largest node count a file can hold (30-bit indices).
pub const MAX_NODES: u32 = 0x3fff_ffff;
/// Low 30 bits of a node's data that mark an unsolved node.
pub const UNSOLVED_INDEX: u32 = 0x3fff_ffff;
/// Data flag: has children (leaf/inner) or "next sibling follows" (transposition).
pub const FLAG_CHILD: u32 = 1 << 30;
/// Data flag: the node is a transposition.
pub const FLAG_TRANSPOSITION: u32 = 1 << 31;
/// Mask of the index bits of a node's data.
pub const INDEX_MASK: u32 = 0x3fff_ffff;

/// Malformed or unreadable win-tree input.
#[derive(Debug)]
pub enum WinTreeError {
    /// The file could not be opened or mapped.
    Io {
        /// The path.
        path: std::path::PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Shorter than the 6-byte root record.
    TooShort {
        /// The length.
        len: u64,
    },
    /// The root record claims zero nodes.
    NoNodes,
    /// The file ends inside the prolog or the node slots.
    Truncated {
        /// Bytes the header requires.
        expected: u64,
        /// Bytes present.
        actual: u64,
    },
    /// The bytes after the nodes are not a whole number of 8-byte entries.
    SizeTableLength {
        /// Byte offset of the table.
        offset: u64,
        /// Its length.
        len: u64,
    },
    /// A size table entry names a node index out of range.
    SizeTableIndex {
        /// Byte offset of the entry.
        offset: u64,
        /// The index.
        index: u32,
    },
    /// A node index out of range was asked for or found.
    IndexOutOfRange {
        /// The node holding the index (or `None` when asked for by a caller).
        node: Option<u32>,
        /// The index.
        index: u32,
        /// The node count.
        len: u32,
    },
    /// A flag combination or index that is not valid at this node.
    BadNode {
        /// The node.
        node: u32,
        /// Byte offset of its slot.
        offset: u64,
        /// Its data field.
        data: u32,
        /// What is wrong.
        what: &'static str,
    },
    /// A chain of transpositions loops.
    TranspositionCycle {
        /// Where the chain started.
        node: u32,
    },
}

impl fmt::Display for WinTreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WinTreeError::Io { path, source } => {
                write!(f, "cannot read win-tree file {}: {source}", path.display())
            }
            WinTreeError::TooShort { len } => {
                write!(
                    f,
                    "win-tree file has {len} bytes, less than the 6-byte root record"
                )
            }
            WinTreeError::NoNodes => f.write_str("win-tree root record claims 0 nodes"),
            WinTreeError::Truncated { expected, actual } => write!(
                f,
                "win-tree file truncated: its header needs {expected} bytes of prolog and nodes, the file has {actual}"
            ),
            WinTreeError::SizeTableLength { offset, len } => write!(
                f,
                "win-tree size table at byte offset {offset} has {len} bytes, not a multiple of 8 (truncated?)"
            ),
            WinTreeError::SizeTableIndex { offset, index } => write!(
                f,
                "win-tree size table entry at byte offset {offset} names node {index}, out of range"
            ),
            WinTreeError::IndexOutOfRange { node, index, len } => match node {
                Some(n) => write!(
                    f,
                    "node {n} refers to node index {index}, out of range (the file has {len} nodes)"
                ),
                None => write!(
                    f,
                    "node index {index} out of range (the file has {len} nodes)"
                ),
            },
            WinTreeError::BadNode {
                node,
                offset,
                data,
                what,
            } => write!(
                f,
                "node {node} (byte offset {offset}, data {data:#010x}): {what}"
            ),
            WinTreeError::TranspositionCycle { node } => {
                write!(f, "the transposition chain from node {node} loops")
            }
        }
    }
}

// No `source()`: the I/O cause is already in the message (a chain would
// print it twice: "...: No such file or directory: No such file or
// directory").
impl std::error::Error for WinTreeError {}

#[cfg(test)]
mod tests;
