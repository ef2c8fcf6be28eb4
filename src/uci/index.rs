//! Where a position stands in win-tree files: the node a line reaches in a
//! file, the node holding a position however it was reached (a FEN, or a
//! move order the file does not follow), and how long the proof's longest
//! line below a node is.
//!
//! Built on [`crate::wintree::WinTree`] (nodes, children, transpositions);
//! what a node *means* (its moves, sizes, winner) is asked of the web's
//! [`crate::web::source::ProofSource`] with the line to the node, so
//! `uci`, `browse` and `serve` answer alike.

use crate::rules::{Move, Position, move_of_code};
use crate::wintree::{MoveCode, WinTree, WinTreeError};
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::Mutex;

/// Node slots the position index takes at most, over all files (about 20
/// bytes a slot): past that, positions are found by their line only.
pub const INDEX_LIMIT: u64 = 1 << 24;

/// A win-tree file with what the engine looks up in it.
pub struct TreeFile {
    name: String,
    tree: WinTree<'static>,
    prolog: Vec<MoveCode>,
    /// The prolog as moves from the start position; `None` when it is not
    /// legal (the file is then never found).
    prolog_moves: Option<Vec<Move>>,
    /// Longest line below each node, in plies, computed on demand.
    heights: Mutex<HashMap<u32, u32>>,
}

impl TreeFile {
    /// Opens a win-tree file as `serve` does: read into memory up to
    /// [`crate::web::source::READ_LIMIT`] bytes (a file truncated in place
    /// under a mapping would kill a long-running engine with SIGBUS),
    /// mapped beyond; a compressed file is decompressed to an unlinked
    /// temporary file.
    pub fn open(path: &Path) -> Result<TreeFile, WinTreeError> {
        let tree = WinTree::open_reading_up_to(path, crate::web::source::READ_LIMIT)?;
        Ok(TreeFile::new(path.display().to_string(), tree))
    }

    /// A file already in memory.
    pub fn new(name: String, tree: WinTree<'static>) -> TreeFile {
        let prolog = tree.prolog();
        let mut pos = Position::startpos();
        let mut moves = Vec::with_capacity(prolog.len());
        for &c in &prolog {
            match move_of_code(&pos, c) {
                Some(m) => {
                    pos.play_unchecked(m);
                    moves.push(m);
                }
                None => break,
            }
        }
        let prolog_moves = (moves.len() == prolog.len()).then_some(moves);
        TreeFile {
            name,
            tree,
            prolog,
            prolog_moves,
            heights: Mutex::new(HashMap::new()),
        }
    }

    /// The file's name (its path).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The node that `line` (legal moves from the start position) reaches:
    /// it must go through the prolog, then follow the file's moves;
    /// `None` otherwise, and at an unsolved node.
    pub fn node_at(&self, line: &[Move]) -> Result<Option<u32>, WinTreeError> {
        if line.len() < self.prolog.len()
            || !line
                .iter()
                .zip(&self.prolog)
                .all(|(m, c)| m.watkins_code().same_move(*c))
        {
            return Ok(None);
        }
        let mut node = 0;
        for m in &line[self.prolog.len()..] {
            match self.tree.child_by_move(node, m.watkins_code())? {
                Some(c) => node = c,
                None => return Ok(None),
            }
        }
        Ok((!self.tree.node(node)?.is_unsolved()).then_some(node))
    }

    /// The child of `node` reached by `mv`, if the file has it.
    pub fn child(&self, node: u32, mv: Move) -> Result<Option<u32>, WinTreeError> {
        self.tree.child_by_move(node, mv.watkins_code())
    }

    /// The longest line of the proof below `node`, in plies (0 at a leaf;
    /// unsolved children are not counted). `None` when the subtree loops
    /// (a malformed file) or more than [`HEIGHT_LIMIT`] of its nodes are
    /// not measured yet.
    pub fn height(&self, node: u32) -> Result<Option<u32>, WinTreeError> {
        let node = self.tree.resolve(node)?;
        let mut memo = self.heights.lock().expect("height cache");
        let mut open = Vec::new();
        let h = self.measure(node, &mut memo, &mut open);
        if !matches!(h, Ok(Some(_))) {
            // Nothing half-measured stays behind.
            for n in open {
                if memo.get(&n) == Some(&OPEN) {
                    memo.remove(&n);
                }
            }
        }
        h
    }

    /// [`TreeFile::height`]'s walk: post-order by an explicit stack of
    /// `(node, children pushed yet)`; `open` collects the nodes marked.
    fn measure(
        &self,
        node: u32,
        memo: &mut HashMap<u32, u32>,
        open: &mut Vec<u32>,
    ) -> Result<Option<u32>, WinTreeError> {
        let mut stack = vec![(node, false)];
        while let Some((n, expanded)) = stack.pop() {
            if !expanded {
                match memo.get(&n) {
                    Some(&OPEN) => return Ok(None), // a cycle
                    Some(_) => continue,
                    None => {}
                }
                if open.len() as u64 >= HEIGHT_LIMIT {
                    return Ok(None);
                }
                memo.insert(n, OPEN);
                open.push(n);
                stack.push((n, true));
                for c in self.solved_children(n)? {
                    match memo.get(&c) {
                        Some(&OPEN) => return Ok(None),
                        Some(_) => {}
                        None => stack.push((c, false)),
                    }
                }
            } else {
                let mut h = 0;
                for c in self.solved_children(n)? {
                    match memo.get(&c) {
                        Some(&OPEN) | None => return Ok(None),
                        Some(&ch) => h = h.max(ch + 1),
                    }
                }
                memo.insert(n, h);
            }
        }
        Ok(memo.get(&node).copied().filter(|&h| h != OPEN))
    }

    /// A node's children that are not unsolved, transpositions resolved.
    fn solved_children(&self, n: u32) -> Result<Vec<u32>, WinTreeError> {
        let mut out = Vec::new();
        for c in self.tree.children(n)? {
            let c = c?;
            if !c.is_unsolved() {
                out.push(self.tree.resolve(c.index)?);
            }
        }
        Ok(out)
    }
}

/// Marks a node being measured by [`TreeFile::height`].
const OPEN: u32 = u32::MAX;

/// Nodes one [`TreeFile::height`] call measures at most.
pub const HEIGHT_LIMIT: u64 = 1 << 22;

/// The position index could not be built.
#[derive(Debug)]
pub enum IndexError {
    /// The files hold more node slots than [`INDEX_LIMIT`].
    TooLarge {
        /// Slots in all.
        slots: u64,
        /// The most taken ([`INDEX_LIMIT`]).
        limit: u64,
    },
    /// A file could not be read.
    WinTree {
        /// The file.
        name: String,
        /// The error.
        source: WinTreeError,
    },
}

impl fmt::Display for IndexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexError::TooLarge { slots, limit } => write!(
                f,
                "the files hold {slots} nodes, more than the {limit} the position index takes: positions are found by their line from the start position only"
            ),
            IndexError::WinTree { name, source } => write!(f, "{name}: {source}"),
        }
    }
}

impl std::error::Error for IndexError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            IndexError::WinTree { source, .. } => Some(source),
            IndexError::TooLarge { .. } => None,
        }
    }
}

/// Every position of a set of win-tree files, by Zobrist hash: a
/// candidate is confirmed by playing the line to its node and comparing
/// the full position ([`Position::pack`]), never by the hash alone.
pub struct PositionIndex {
    /// `(hash, file, node)`, sorted.
    entries: Vec<(u64, u32, u32)>,
    /// For each file, each node's parent (`u32::MAX`: the root, or a slot
    /// that holds no position of its own: a transposition or unsolved).
    parents: Vec<Vec<u32>>,
}

const NO_PARENT: u32 = u32::MAX;

impl PositionIndex {
    /// Walks every file from its root (files with an illegal prolog are
    /// left out).
    pub fn build(files: &[TreeFile]) -> Result<PositionIndex, IndexError> {
        PositionIndex::build_within(files, INDEX_LIMIT)
    }

    /// As [`PositionIndex::build`], with at most `limit` node slots.
    fn build_within(files: &[TreeFile], limit: u64) -> Result<PositionIndex, IndexError> {
        let slots: u64 = files.iter().map(|f| u64::from(f.tree.len())).sum();
        if slots > limit {
            return Err(IndexError::TooLarge { slots, limit });
        }
        let mut entries = Vec::new();
        let mut parents = Vec::with_capacity(files.len());
        for (i, f) in files.iter().enumerate() {
            let err = |source| IndexError::WinTree {
                name: f.name.clone(),
                source,
            };
            let mut parent = vec![NO_PARENT; f.tree.len() as usize];
            if let Some(moves) = &f.prolog_moves {
                let mut root = Position::startpos();
                for &m in moves {
                    root.play_unchecked(m);
                }
                if !f.tree.node(0).map_err(err)?.is_unsolved() {
                    entries.push((root.zobrist(), i as u32, 0));
                }
                let mut stack = vec![(0u32, root)];
                while let Some((n, pos)) = stack.pop() {
                    for c in f.tree.children(n).map_err(err)? {
                        let c = c.map_err(err)?;
                        // A transposition's position is its target's,
                        // found through the target's own parent.
                        if c.is_unsolved() || c.transposition_target().is_some() {
                            continue;
                        }
                        // Each slot is taken once (a malformed file could
                        // list one under two parents).
                        if parent[c.index as usize] != NO_PARENT {
                            continue;
                        }
                        let Some(m) = c.mv.and_then(|code| move_of_code(&pos, code)) else {
                            continue;
                        };
                        parent[c.index as usize] = n;
                        let child = pos.play(m);
                        entries.push((child.zobrist(), i as u32, c.index));
                        stack.push((c.index, child));
                    }
                }
            }
            parents.push(parent);
        }
        entries.sort_unstable();
        Ok(PositionIndex { entries, parents })
    }

    /// Positions indexed (a position in two files counts twice).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A file and node holding `pos` and the line from the start position
    /// to it (the file's prolog and moves), or `None`.
    pub fn find(
        &self,
        files: &[TreeFile],
        pos: &Position,
    ) -> Result<Option<(usize, u32, Vec<Move>)>, WinTreeError> {
        let key = pos.zobrist();
        let from = self.entries.partition_point(|e| e.0 < key);
        let want = pos.pack();
        for &(_, file, node) in self.entries[from..].iter().take_while(|e| e.0 == key) {
            let file = file as usize;
            let Some(line) = self.line_to(&files[file], &self.parents[file], node)? else {
                continue;
            };
            let mut p = Position::startpos();
            for &m in &line {
                p.play_unchecked(m);
            }
            if p.pack() == want {
                return Ok(Some((file, node, line)));
            }
        }
        Ok(None)
    }

    /// The moves from the start position to `node` of `file`.
    fn line_to(
        &self,
        file: &TreeFile,
        parent: &[u32],
        node: u32,
    ) -> Result<Option<Vec<Move>>, WinTreeError> {
        let Some(prolog) = &file.prolog_moves else {
            return Ok(None);
        };
        // The codes from the root down, collected bottom-up.
        let mut codes = Vec::new();
        let mut n = node;
        while n != 0 {
            let p = parent[n as usize];
            if p == NO_PARENT {
                return Ok(None);
            }
            let slot = file
                .tree
                .children(p)?
                .find(|c| c.as_ref().is_ok_and(|c| c.index == n))
                .transpose()?;
            match slot.and_then(|c| c.mv) {
                Some(code) => codes.push(code),
                None => return Ok(None),
            }
            n = p;
        }
        let mut line = prolog.clone();
        let mut pos = Position::startpos();
        for &m in &line {
            pos.play_unchecked(m);
        }
        for &code in codes.iter().rev() {
            let Some(m) = move_of_code(&pos, code) else {
                return Ok(None);
            };
            pos.play_unchecked(m);
            line.push(m);
        }
        Ok(Some(line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `proofs/e3-g6.tree`: 4,422 distinct positions, longest line 36
    /// plies (its sidecar, from `antiproof verify`).
    fn e3_g6() -> TreeFile {
        let bytes = include_bytes!("../../proofs/e3-g6.tree").to_vec();
        TreeFile::new("e3-g6".into(), WinTree::from_vec(bytes).unwrap())
    }

    #[test]
    fn every_position_is_found_with_a_line_that_reaches_it() {
        let files = [e3_g6()];
        let index = PositionIndex::build(&files).unwrap();
        assert_eq!(index.len(), 4422);
        let root = Position::startpos().play_line(&["e3 g6"]).unwrap();
        let (file, node, line) = index.find(&files, &root.0).unwrap().unwrap();
        assert_eq!((file, node), (0, 0));
        assert_eq!(line, root.1);
        assert_eq!(files[0].node_at(&line).unwrap(), Some(0));
        // Every indexed node comes back with a line the file follows to it.
        for &(_, _, n) in index.entries.iter().step_by(97) {
            let line = index
                .line_to(&files[0], &index.parents[0], n)
                .unwrap()
                .unwrap();
            assert_eq!(files[0].node_at(&line).unwrap(), Some(n));
        }
        // Off the tree: none.
        let off = Position::startpos().play_line(&["e3 b6"]).unwrap().0;
        assert!(index.find(&files, &off).unwrap().is_none());
        assert!(
            files[0].node_at(&[]).unwrap().is_none(),
            "before the prolog"
        );
    }

    #[test]
    fn heights_are_the_longest_lines() {
        let f = e3_g6();
        assert_eq!(f.height(0).unwrap(), Some(36));
        let line = Position::startpos().play_line(&["e3 g6 Qh5"]).unwrap().1;
        let n = f.node_at(&line).unwrap().unwrap();
        assert_eq!(f.height(n).unwrap(), Some(35));
        // Asked again, from the cache.
        assert_eq!(f.height(0).unwrap(), Some(36));
    }

    #[test]
    fn too_many_nodes_are_not_indexed() {
        let files = [e3_g6(), e3_g6()];
        let one = u64::from(files[0].tree.len());
        assert!(PositionIndex::build_within(&files, 2 * one).is_ok());
        match PositionIndex::build_within(&files, 2 * one - 1) {
            Err(e @ IndexError::TooLarge { .. }) => {
                assert!(e.to_string().contains("by their line"), "{e}")
            }
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("indexed past the limit"),
        }
    }
}
