//! Watkins win-tree files: a bounds-checked reader and a writer.
//!
//! The format (see `shared/watkins-format.md` and `docs/verify.md`) is the
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
//! independent checker in `crate::check`): moves are [`MoveCode`]s, the raw
//! 16-bit codes of the format.

mod reader;
mod writer;

pub use reader::{Children, MoveEntry, Node, NodeKind, WinTree};
pub use writer::{DagNode, ProofDag, WriteError, WriteOptions, WrittenTree, write_tree};

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

/// A raw 16-bit move code of the format.
///
/// Bits 0-5: destination square (a1 = 0 .. h8 = 63); 6-11: origin square;
/// 12-14: promotion (0 none, 2 knight, 3 bishop, 4 rook, 5 queen, 6 king);
/// bit 15: set on an en-passant capture. `0xfedc` and `0x0edc` are null
/// moves; in partial proofs an unsolved move is XOR-ed with `0xf000`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct MoveCode(pub u16);

/// Bit 15 of a move code: en passant.
pub const EP_BIT: u16 = 0x8000;

impl MoveCode {
    /// The null move as usually written.
    pub const NULL: MoveCode = MoveCode(0xfedc);
    /// The other spelling of the null move.
    pub const NULL_ALT: MoveCode = MoveCode(0x0edc);

    /// Builds a code from squares (0..64) and a promotion role code
    /// (0 none, 2..=6 knight..king).
    pub fn new(from: u8, to: u8, promotion: u8, en_passant: bool) -> MoveCode {
        let mut c = (to as u16 & 63) | ((from as u16 & 63) << 6) | ((promotion as u16 & 7) << 12);
        if en_passant {
            c |= EP_BIT;
        }
        MoveCode(c)
    }

    /// Whether this is a null move (`0xfedc` or `0x0edc`).
    pub fn is_null(self) -> bool {
        self == Self::NULL || self == Self::NULL_ALT
    }

    /// Whether this is an unsolved marker of a partial proof (top nibble 7 or
    /// above 8, and not a null move).
    pub fn is_unsolved(self) -> bool {
        let top = self.0 >> 12;
        !self.is_null() && (top == 7 || top > 8)
    }

    /// Whether this is a plain move code: not null, not unsolved, top nibble
    /// 0, 2..=6 (promotions) or 8 (en passant), origin and destination
    /// different. (Whether it is legal is for the rules to say.)
    pub fn is_move(self) -> bool {
        let top = self.0 >> 12;
        !self.is_null() && matches!(top, 0 | 2..=6 | 8) && self.from() != self.to()
    }

    /// The move an unsolved marker stands for (the code XOR `0xf000`).
    pub fn unsolved_move(self) -> MoveCode {
        MoveCode(self.0 ^ 0xf000)
    }

    /// Destination square, a1 = 0 .. h8 = 63.
    pub fn to(self) -> u8 {
        (self.0 & 63) as u8
    }

    /// Origin square, a1 = 0 .. h8 = 63.
    pub fn from(self) -> u8 {
        ((self.0 >> 6) & 63) as u8
    }

    /// Promotion role code: 0 none, 2 knight, 3 bishop, 4 rook, 5 queen,
    /// 6 king (1 and 7 are invalid).
    pub fn promotion(self) -> u8 {
        ((self.0 >> 12) & 7) as u8
    }

    /// Whether the en-passant bit is set.
    pub fn is_en_passant(self) -> bool {
        self.0 & EP_BIT != 0
    }

    /// The code with bit 15 cleared: the form moves are compared in.
    pub fn cleared(self) -> MoveCode {
        MoveCode(self.0 & !EP_BIT)
    }

    /// Whether two codes name the same move (bit 15 ignored).
    pub fn same_move(self, other: MoveCode) -> bool {
        self.cleared() == other.cleared()
    }

    /// Parses a UCI move (`e2e3`, `e7e8k`; promotion letters n b r q k).
    pub fn from_uci(s: &str) -> Option<MoveCode> {
        let b = s.as_bytes();
        if b.len() != 4 && b.len() != 5 {
            return None;
        }
        let sq = |f: u8, r: u8| -> Option<u8> {
            if (b'a'..=b'h').contains(&f) && (b'1'..=b'8').contains(&r) {
                Some((r - b'1') * 8 + (f - b'a'))
            } else {
                None
            }
        };
        let from = sq(b[0], b[1])?;
        let to = sq(b[2], b[3])?;
        let promo = match b.get(4).map(|c| c.to_ascii_lowercase()) {
            None => 0,
            Some(b'n') => 2,
            Some(b'b') => 3,
            Some(b'r') => 4,
            Some(b'q') => 5,
            Some(b'k') => 6,
            Some(_) => return None,
        };
        Some(MoveCode::new(from, to, promo, false))
    }

    /// The move in UCI notation (`e2e3`, `e7e8k`); `0000` for a null move.
    /// An unsolved marker prints as the move it stands for.
    pub fn uci(self) -> String {
        if self.is_null() {
            return "0000".to_string();
        }
        let m = if self.is_unsolved() {
            self.unsolved_move()
        } else {
            self
        };
        let name = |s: u8| [(b'a' + s % 8) as char, (b'1' + s / 8) as char];
        let mut out = String::with_capacity(5);
        out.extend(name(m.from()));
        out.extend(name(m.to()));
        match m.promotion() {
            2 => out.push('n'),
            3 => out.push('b'),
            4 => out.push('r'),
            5 => out.push('q'),
            6 => out.push('k'),
            _ => {}
        }
        out
    }
}

impl fmt::Display for MoveCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_unsolved() {
            write!(f, "{} (unsolved)", self.uci())
        } else {
            f.write_str(&self.uci())
        }
    }
}

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

impl std::error::Error for WinTreeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WinTreeError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
