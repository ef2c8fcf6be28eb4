//! The win-tree reader.

use super::{
    FLAG_CHILD, FLAG_TRANSPOSITION, INDEX_MASK, MoveCode, ROOT_LEN, SIZE_ENTRY_LEN, SLOT_LEN,
    UNSOLVED_INDEX, WinTreeError,
};
use std::path::Path;

/// The bytes behind a [`WinTree`].
enum Bytes<'a> {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
    Borrowed(&'a [u8]),
}

impl Bytes<'_> {
    #[inline]
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
            Bytes::Borrowed(b) => b,
        }
    }
}

/// A win-tree file opened for reading.
///
/// Opening checks the header and the lengths (prolog, `N - 1` node slots,
/// a whole number of size-table entries) and nothing else; each node is
/// decoded and checked when asked for. All methods taking a node index
/// return [`WinTreeError::IndexOutOfRange`] for an index `>= len()`.
///
/// Navigation, as the format defines it:
/// * [`WinTree::children`] walks a node's child list (first child at
///   `index + 1`, then the next-sibling chain);
/// * [`WinTree::resolve`] follows transposition pointers to the node that
///   holds the subtree (with a cycle guard);
/// * [`WinTree::follow_uci`] follows a UCI line from the root;
/// * [`WinTree::moves`] lists a node's moves with their subtree sizes.
///
/// ```
/// use antiproof::wintree::{ProofDag, WinTree, MoveCode, write_tree, WriteOptions};
/// // Root with one move e2e3 to a leaf.
/// let mut dag = ProofDag::new();
/// let root = dag.add_node();
/// let leaf = dag.add_node();
/// dag.add_edge(root, MoveCode::from_uci("e2e3").unwrap(), leaf);
/// let bytes = write_tree(&dag, root, &[], &WriteOptions::default()).unwrap().bytes;
/// let tree = WinTree::from_vec(bytes).unwrap();
/// let n = tree.follow_uci(["e2e3"]).unwrap().unwrap();
/// assert!(tree.node(n).unwrap().is_leaf());
/// ```
pub struct WinTree<'a> {
    bytes: Bytes<'a>,
    len: u32,
    prolog_len: u16,
    nodes_off: u64,
    table_off: u64,
    table_entries: u64,
    /// Whether the table's indices are strictly increasing (binary search).
    table_sorted: bool,
    /// The table sorted by index when the file's is not.
    table_copy: Option<Vec<(u32, i32)>>,
}

/// What a node slot is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum NodeKind {
    /// No children, not a transposition.
    Leaf,
    /// Has children; the first child is the next slot.
    Inner,
    /// Stands for the position whose subtree is at `target`.
    Transposition {
        /// Index of the node holding the subtree.
        target: u32,
    },
    /// An unsolved node of a partial proof (index bits `0x3fffffff`).
    Unsolved,
}

/// One decoded node slot.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Node {
    /// Its index (0 = root).
    pub index: u32,
    /// The raw data field.
    pub data: u32,
    /// The move leading here from the parent; `None` at the root.
    pub mv: Option<MoveCode>,
    /// What it is.
    pub kind: NodeKind,
    /// Index of the next sibling, if any.
    pub next_sibling: Option<u32>,
}

impl Node {
    /// Whether the node has no children and is not a transposition or
    /// unsolved. (Whether the game is over there is for the rules to say.)
    pub fn is_leaf(&self) -> bool {
        self.kind == NodeKind::Leaf
    }

    /// Whether the node has children.
    pub fn has_children(&self) -> bool {
        self.kind == NodeKind::Inner
    }

    /// The transposition target, if this is a transposition.
    pub fn transposition_target(&self) -> Option<u32> {
        match self.kind {
            NodeKind::Transposition { target } => Some(target),
            _ => None,
        }
    }

    /// Whether this node is an unsolved marker: unsolved index bits or an
    /// unsolved move code.
    pub fn is_unsolved(&self) -> bool {
        self.kind == NodeKind::Unsolved || self.mv.is_some_and(|m| m.is_unsolved())
    }

    /// Whether the move leading here is a null move.
    pub fn is_null_move(&self) -> bool {
        self.mv.is_some_and(|m| m.is_null())
    }
}

/// One move of a node, as [`WinTree::moves`] lists them.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MoveEntry {
    /// The move code (may be null or unsolved: check before playing it).
    pub mv: MoveCode,
    /// The child slot.
    pub slot: u32,
    /// The node holding the child's subtree (the slot, or its resolved
    /// transposition target).
    pub node: u32,
    /// Subtree size from the size table (negative: holds unsolved nodes),
    /// or 1 for a leaf; `None` when the table has no entry.
    pub size: Option<i64>,
    /// Whether the resolved node is a leaf.
    pub leaf: bool,
}

impl<'a> WinTree<'a> {
    /// Opens a win-tree file and parses its header: a plain file of up to
    /// [`WinTree::READ_LIMIT`] bytes is read into memory, a larger one is
    /// copied into a private temporary file that is memory-mapped, and a
    /// compressed one is decompressed into such a file (see
    /// [`WinTree::open_reading_up_to`]).
    pub fn open(path: &Path) -> Result<WinTree<'static>, WinTreeError> {
        WinTree::open_reading_up_to(path, WinTree::READ_LIMIT)
    }

    /// The size up to which [`WinTree::open`] reads a plain file into
    /// memory rather than copying it to a temporary file.
    pub const READ_LIMIT: u64 = 64 << 20;

    /// As [`WinTree::open`], but a plain file is read into memory up to
    /// `max_read` bytes.
    ///
    /// A file as it stands is never mapped: another process could change
    /// or truncate it in place while it is read, and a mapped file
    /// truncated under its reader raises SIGBUS there (a worker handing the
    /// job master a certificate and cutting it short killed the master).
    /// So what is read is a private snapshot no other process can reach:
    /// the file's bytes in memory, or, above `max_read` (keeping the memory
    /// advantage of a map for large files), an unlinked temporary file
    /// they are copied into ([`super::scratch::snapshot`], in the kernel;
    /// a reflink where the file system shares extents). A compressed file
    /// is decompressed into such a file. A file changing while it is copied
    /// or read gives a snapshot of some of its states, checked as it is, or
    /// an error naming it; never a crash.
    pub fn open_reading_up_to(
        path: &Path,
        max_read: u64,
    ) -> Result<WinTree<'static>, WinTreeError> {
        let io = |source| WinTreeError::Io {
            path: path.to_path_buf(),
            source,
        };
        // A FIFO, a device or a directory is refused before it is opened.
        let mut file = crate::fsutil::open_regular(path).map_err(io)?;
        if let Some(kind) = super::compressed::sniff_file(&file).map_err(io)? {
            // Decompressed once to an unlinked temporary file, only ours.
            file = super::compressed::decompress(file, path, kind).map_err(io)?;
        } else {
            let len = file.metadata().map_err(io)?.len();
            if len == 0 {
                return Err(WinTreeError::TooShort { len: 0 });
            }
            if len <= max_read {
                use std::io::Read;
                let mut bytes = Vec::with_capacity(len as usize);
                file.read_to_end(&mut bytes).map_err(io)?;
                return WinTree::parse(Bytes::Owned(bytes));
            }
            file = super::scratch::snapshot(&file, path).map_err(io)?;
        }
        if file.metadata().map_err(io)?.len() == 0 {
            return Err(WinTreeError::TooShort { len: 0 });
        }
        // SAFETY: the file is an unlinked temporary file this process made
        // and alone holds (no other process can open it by a name; only a
        // process of this user that reaches in through /proc/PID/fd
        // could), written in full before it is mapped and never written
        // again: its bytes do not change or shrink under the read-only map.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io)?;
        WinTree::parse(Bytes::Mapped(map))
    }

    /// Parses a file held in memory.
    pub fn from_vec(bytes: Vec<u8>) -> Result<WinTree<'static>, WinTreeError> {
        WinTree::parse(Bytes::Owned(bytes))
    }

    /// Parses borrowed bytes.
    pub fn from_bytes(bytes: &'a [u8]) -> Result<WinTree<'a>, WinTreeError> {
        WinTree::parse(Bytes::Borrowed(bytes))
    }

    fn parse(bytes: Bytes<'a>) -> Result<WinTree<'a>, WinTreeError> {
        let b = bytes.as_slice();
        let total = b.len() as u64;
        if b.len() < ROOT_LEN {
            return Err(WinTreeError::TooShort { len: total });
        }
        let data0 = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let prolog_len = u16::from_le_bytes([b[4], b[5]]);
        let len = data0 & INDEX_MASK;
        if len == 0 {
            return Err(WinTreeError::NoNodes);
        }
        let nodes_off = ROOT_LEN as u64 + 2 * prolog_len as u64;
        let table_off = nodes_off + SLOT_LEN as u64 * (len as u64 - 1);
        if total < table_off {
            return Err(WinTreeError::Truncated {
                expected: table_off,
                actual: total,
            });
        }
        let bad_root = |what| WinTreeError::BadNode {
            node: 0,
            offset: 0,
            data: data0,
            what,
        };
        if data0 & FLAG_TRANSPOSITION != 0 {
            return Err(bad_root("the root cannot be a transposition"));
        }
        if data0 & FLAG_CHILD != 0 && len < 2 {
            return Err(bad_root(
                "the root claims a child but the file has no other node",
            ));
        }
        if data0 & FLAG_CHILD == 0 && len > 1 {
            return Err(bad_root(
                "the root claims no child but the file has more nodes",
            ));
        }
        let rest = total - table_off;
        if !rest.is_multiple_of(SIZE_ENTRY_LEN as u64) {
            return Err(WinTreeError::SizeTableLength {
                offset: table_off,
                len: rest,
            });
        }
        let mut tree = WinTree {
            bytes,
            len,
            prolog_len,
            nodes_off,
            table_off,
            table_entries: rest / SIZE_ENTRY_LEN as u64,
            table_sorted: true,
            table_copy: None,
        };
        tree.check_table()?;
        Ok(tree)
    }

    /// Checks the size table's indices and whether it is sorted; copies and
    /// sorts it when it is not.
    fn check_table(&mut self) -> Result<(), WinTreeError> {
        let mut prev: Option<u32> = None;
        let mut sorted = true;
        for i in 0..self.table_entries {
            let (index, _) = self.table_entry(i);
            if index >= self.len {
                return Err(WinTreeError::SizeTableIndex {
                    offset: self.table_off + i * SIZE_ENTRY_LEN as u64,
                    index,
                });
            }
            if prev.is_some_and(|p| p >= index) {
                sorted = false;
            }
            prev = Some(index);
        }
        if !sorted {
            let mut v: Vec<(u32, i32)> = (0..self.table_entries)
                .map(|i| self.table_entry(i))
                .collect();
            v.sort_by_key(|e| e.0);
            self.table_copy = Some(v);
        }
        self.table_sorted = sorted;
        Ok(())
    }

    #[inline]
    fn table_entry(&self, i: u64) -> (u32, i32) {
        let off = (self.table_off + i * SIZE_ENTRY_LEN as u64) as usize;
        let b = &self.bytes()[off..off + 8];
        (
            u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            i32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        )
    }

    /// The raw bytes.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }

    /// Number of node slots, the root included.
    #[inline]
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Always false: a parsed file has at least the root.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Number of entries in the subtree-size table.
    pub fn size_table_len(&self) -> u64 {
        self.table_entries
    }

    /// The prolog: move codes from the start position to the tree's root.
    pub fn prolog(&self) -> Vec<MoveCode> {
        let b = self.bytes();
        (0..self.prolog_len as usize)
            .map(|i| MoveCode::from_raw(u16::from_le_bytes([b[6 + 2 * i], b[7 + 2 * i]])))
            .collect()
    }

    /// Byte offset of a node's slot (0 for the root record).
    pub fn offset_of(&self, index: u32) -> u64 {
        if index == 0 {
            0
        } else {
            self.nodes_off + SLOT_LEN as u64 * (index as u64 - 1)
        }
    }

    /// The raw `(data, move)` of a node; the root's move is 0.
    #[inline]
    pub fn raw(&self, index: u32) -> Result<(u32, u16), WinTreeError> {
        if index >= self.len {
            return Err(WinTreeError::IndexOutOfRange {
                node: None,
                index,
                len: self.len,
            });
        }
        let b = self.bytes();
        if index == 0 {
            return Ok((u32::from_le_bytes([b[0], b[1], b[2], b[3]]), 0));
        }
        let off = self.offset_of(index) as usize;
        let s = &b[off..off + SLOT_LEN];
        Ok((
            u32::from_le_bytes([s[0], s[1], s[2], s[3]]),
            u16::from_le_bytes([s[4], s[5]]),
        ))
    }

    /// The root node.
    pub fn root(&self) -> Node {
        self.node(0).expect("the root was checked on opening")
    }

    /// Decodes a node and checks its indices (next sibling after it and in
    /// range, transposition target in range and not itself, first child in
    /// range).
    pub fn node(&self, index: u32) -> Result<Node, WinTreeError> {
        let (data, mv) = self.raw(index)?;
        let bad = |what| WinTreeError::BadNode {
            node: index,
            offset: self.offset_of(index),
            data,
            what,
        };
        if index == 0 {
            let kind = if data & FLAG_CHILD != 0 {
                NodeKind::Inner
            } else {
                NodeKind::Leaf
            };
            return Ok(Node {
                index,
                data,
                mv: None,
                kind,
                next_sibling: None,
            });
        }
        let low = data & INDEX_MASK;
        let follows = data & FLAG_CHILD != 0;
        let next_in_range = |i: u32| -> Result<u32, WinTreeError> {
            if i >= self.len {
                Err(WinTreeError::IndexOutOfRange {
                    node: Some(index),
                    index: i,
                    len: self.len,
                })
            } else {
                Ok(i)
            }
        };
        let (kind, next_sibling) = if low == UNSOLVED_INDEX {
            let next = if follows {
                Some(next_in_range(index + 1)?)
            } else {
                None
            };
            (NodeKind::Unsolved, next)
        } else if data & FLAG_TRANSPOSITION != 0 {
            let target = next_in_range(low)?;
            if target == index {
                return Err(bad("a transposition pointing at itself"));
            }
            if target == 0 {
                return Err(bad("a transposition pointing at the root"));
            }
            let next = if follows {
                Some(next_in_range(index + 1)?)
            } else {
                None
            };
            (NodeKind::Transposition { target }, next)
        } else {
            let next = if low == 0 {
                None
            } else {
                let n = next_in_range(low)?;
                if n <= index {
                    return Err(bad("next sibling index not after the node"));
                }
                Some(n)
            };
            if follows {
                next_in_range(index + 1)?;
                if next == Some(index + 1) {
                    return Err(bad("next sibling where the first child must be"));
                }
                (NodeKind::Inner, next)
            } else {
                (NodeKind::Leaf, next)
            }
        };
        Ok(Node {
            index,
            data,
            mv: Some(MoveCode::from_raw(mv)),
            kind,
            next_sibling,
        })
    }

    /// The children of a node, in file order (empty for a leaf,
    /// transposition or unsolved node). Each item is checked as by
    /// [`WinTree::node`]; the iterator stops after the first error.
    pub fn children(&self, index: u32) -> Result<Children<'_, 'a>, WinTreeError> {
        let n = self.node(index)?;
        Ok(Children {
            tree: self,
            next: if n.has_children() {
                Some(index + 1)
            } else {
                None
            },
        })
    }

    /// Follows transposition pointers from `index` to the node holding the
    /// subtree (`index` itself when it is not a transposition). Loops are
    /// detected (tortoise and hare) and reported as
    /// [`WinTreeError::TranspositionCycle`].
    pub fn resolve(&self, index: u32) -> Result<u32, WinTreeError> {
        let step = |i: u32| -> Result<Option<u32>, WinTreeError> {
            Ok(self.node(i)?.transposition_target())
        };
        let mut slow = index;
        let mut fast = index;
        loop {
            // Fast moves two steps, slow one.
            let Some(f1) = step(fast)? else {
                return Ok(fast);
            };
            let Some(f2) = step(f1)? else {
                return Ok(f1);
            };
            fast = f2;
            slow = step(slow)?.expect("slow trails fast along the same chain");
            if slow == fast {
                return Err(WinTreeError::TranspositionCycle { node: index });
            }
        }
    }

    /// The subtree size of a node from the size table (after resolving a
    /// transposition); 1 for a leaf absent from the table; `None` when
    /// unknown. Negative sizes mark subtrees holding unsolved nodes.
    pub fn size(&self, index: u32) -> Result<Option<i64>, WinTreeError> {
        let index = self.resolve(index)?;
        if let Some(s) = self.table_lookup(index) {
            return Ok(Some(s as i64));
        }
        Ok(if self.node(index)?.is_leaf() {
            Some(1)
        } else {
            None
        })
    }

    /// The size table's entries `(node index, size)` in file order.
    pub fn size_entries(&self) -> impl Iterator<Item = (u32, i32)> + '_ {
        (0..self.table_entries).map(|i| self.table_entry(i))
    }

    /// The raw size-table entry of a node, if any.
    pub fn table_lookup(&self, index: u32) -> Option<i32> {
        if let Some(v) = &self.table_copy {
            return v.binary_search_by_key(&index, |e| e.0).ok().map(|i| v[i].1);
        }
        if !self.table_sorted {
            return None;
        }
        let (mut lo, mut hi) = (0u64, self.table_entries);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (i, s) = self.table_entry(mid);
            match i.cmp(&index) {
                std::cmp::Ordering::Equal => return Some(s),
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
            }
        }
        None
    }

    /// The child of node `index` reached by `mv` (compared with bit 15
    /// cleared), resolved through transpositions; `None` when the node has
    /// no such move.
    pub fn child_by_move(&self, index: u32, mv: MoveCode) -> Result<Option<u32>, WinTreeError> {
        for c in self.children(index)? {
            let c = c?;
            if c.mv.is_some_and(|m| m.same_move(mv)) {
                return self.resolve(c.index).map(Some);
            }
        }
        Ok(None)
    }

    /// Follows a line of UCI moves from the root (moves after the prolog).
    /// `Ok(None)` when the line leaves the tree or a move is not UCI.
    pub fn follow_uci<S: AsRef<str>>(
        &self,
        line: impl IntoIterator<Item = S>,
    ) -> Result<Option<u32>, WinTreeError> {
        let mut n = 0;
        for m in line {
            let Some(code) = MoveCode::from_uci(m.as_ref()) else {
                return Ok(None);
            };
            match self.child_by_move(n, code)? {
                Some(c) => n = c,
                None => return Ok(None),
            }
        }
        Ok(Some(n))
    }

    /// Follows a line of UCI moves given from the standard start position:
    /// it must begin with the prolog (compared with bit 15 ignored); the
    /// rest is followed from the root as by [`WinTree::follow_uci`].
    /// `Ok(None)` when the line stops inside the prolog, leaves it, leaves
    /// the tree, or holds a move that is not UCI.
    pub fn follow_uci_from_start<S: AsRef<str>>(
        &self,
        line: impl IntoIterator<Item = S>,
    ) -> Result<Option<u32>, WinTreeError> {
        let line: Vec<S> = line.into_iter().collect();
        let prolog = self.prolog();
        if line.len() < prolog.len() {
            return Ok(None);
        }
        for (m, p) in line.iter().zip(&prolog) {
            match MoveCode::from_uci(m.as_ref()) {
                Some(c) if c.same_move(*p) => {}
                _ => return Ok(None),
            }
        }
        self.follow_uci(line[prolog.len()..].iter().map(|s| s.as_ref()))
    }

    /// A node's moves with their subtree sizes, in file order.
    pub fn moves(&self, index: u32) -> Result<Vec<MoveEntry>, WinTreeError> {
        let index = self.resolve(index)?;
        let mut out = Vec::new();
        for c in self.children(index)? {
            let c = c?;
            let node = self.resolve(c.index)?;
            out.push(MoveEntry {
                mv: c.mv.expect("children have moves"),
                slot: c.index,
                node,
                size: self.size(node)?,
                leaf: self.node(node)?.is_leaf(),
            });
        }
        Ok(out)
    }
}

/// Iterator over a node's children (see [`WinTree::children`]).
pub struct Children<'t, 'a> {
    tree: &'t WinTree<'a>,
    next: Option<u32>,
}

impl Iterator for Children<'_, '_> {
    type Item = Result<Node, WinTreeError>;

    fn next(&mut self) -> Option<Self::Item> {
        let i = self.next.take()?;
        match self.tree.node(i) {
            Ok(n) => {
                // Siblings have strictly increasing indices (checked in
                // `node`), so the walk ends.
                self.next = n.next_sibling;
                Some(Ok(n))
            }
            Err(e) => Some(Err(e)),
        }
    }
}
