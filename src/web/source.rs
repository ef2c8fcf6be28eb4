//! Proof sources: what `browse` and `serve` read a proof from.
//!
//! A [`ProofSource`] answers one question: given a line of legal moves from
//! the standard start position, what does the proof hold there? Three kinds
//! exist:
//!
//! * [`TreeSource`]: a Watkins win-tree file (memory-mapped through
//!   [`crate::wintree::WinTree`]); sizes come from its size table, or are
//!   computed by walking the subtree (and cached) when it has none;
//! * [`RecordSource`]: proven positions with records as the proof store
//!   keeps them (a [`crate::store::Store`] file, or a map in memory), read
//!   through [`crate::stored::StoredProof`]: at a `Win` record the one
//!   stored move, at a `Loss` record every legal move whose child has a
//!   record or is game over (or, under a record flagged as resting on
//!   endgame tables, has at most 4 men: a table leaf); sizes from
//!   `Record::size` (1 for a leaf);
//! * [`Forest`]: several sources answered together (for example every file
//!   in `proofs/`).
//!
//! Sources are presentation: they trust the proof. Certifying it is the
//! checker's job (`antiproof verify`).

use crate::rules::{Color, Move, Position, Rules, move_of_code};
use crate::store::{Record, Store, StoreError, WinLoss};
use crate::stored::{Broken, RecordLookup, StoredNode, StoredProof};
use crate::vocab::RuleSet;
use crate::wintree::{MoveCode, WinTree, WinTreeError};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::Path;
use std::sync::Mutex;

/// One move of a proof node.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Child {
    /// The move (legal in the node's position).
    pub mv: Move,
    /// Size of the subtree below the move: distinct positions (the format's
    /// distinct non-transposition nodes), the child itself included.
    pub nodes: u64,
}

/// What a proof holds at a position.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Lookup {
    /// The line has left the proof (or never meets it).
    Off,
    /// The line has not reached the proof yet: it is a prefix of the line
    /// to the proof's root (a win-tree prolog, or a store position that has
    /// proven children). `entries` are the moves that lead into a proof.
    Before {
        /// Moves toward a proof, with the size of the proof behind each.
        entries: Vec<Child>,
    },
    /// A node of the proof.
    In {
        /// The side the proof shows winning (None if unknown).
        winner: Option<Color>,
        /// The node's moves in the proof: one at a winner node, every legal
        /// move at a loser node, none at a leaf.
        children: Vec<Child>,
        /// Whether the node is a leaf that is not game over and rests on
        /// an endgame table (at most [`crate::tablefile::MAX_MEN`] men).
        /// A leaf that is neither is open: the proof stops short there.
        table_leaf: bool,
    },
}

/// A proof that could not be read.
#[derive(Debug)]
pub enum SourceError {
    /// The win-tree file is malformed or unreadable.
    WinTree(WinTreeError),
    /// The store could not be read.
    Store(StoreError),
    /// The proof holds a move that is not legal where it stands.
    IllegalMove {
        /// Which proof.
        source: String,
        /// The move as stored.
        mv: String,
        /// The position (FEN).
        fen: String,
    },
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // These name the file and the cause already.
            SourceError::WinTree(e @ WinTreeError::Io { .. }) => write!(f, "{e}"),
            SourceError::Store(e) => write!(f, "{e}"),
            SourceError::WinTree(e) => write!(f, "win-tree file: {e}"),
            SourceError::IllegalMove { source, mv, fen } => {
                write!(f, "{source}: stored move {mv} is not legal in {fen}")
            }
        }
    }
}

impl std::error::Error for SourceError {}

impl From<WinTreeError> for SourceError {
    fn from(e: WinTreeError) -> SourceError {
        SourceError::WinTree(e)
    }
}

impl From<StoreError> for SourceError {
    fn from(e: StoreError) -> SourceError {
        SourceError::Store(e)
    }
}

/// A proof that can be looked up by line.
pub trait ProofSource: Send + Sync {
    /// A short name for messages (the file path).
    fn name(&self) -> String;

    /// What the proof holds at `pos`, reached from the standard start
    /// position by `line` (legal moves).
    fn lookup(&self, line: &[Move], pos: &Position) -> Result<Lookup, SourceError>;

    /// The moves from the start position to the proof's one root, for a
    /// proof that has one (a win-tree file's prolog); `None` for a store.
    /// [`Forest`] adds up the sizes of proofs rooted at different
    /// positions below a move (the files of a split proof) and keeps the
    /// larger of two rooted at the same one.
    fn root_line(&self) -> Option<&[MoveCode]> {
        None
    }
}

// ---------------------------------------------------------------------------
// Win-tree files

/// Win-tree files up to this size are read into memory by `serve` and
/// `browse` rather than copied to a temporary file and mapped
/// ([`TreeSource::open`]).
pub const READ_LIMIT: u64 = 1 << 30;

/// A Watkins win-tree file as a proof source.
pub struct TreeSource {
    name: String,
    tree: WinTree<'static>,
    prolog: Vec<MoveCode>,
    winner: Option<Color>,
    rules: Rules,
    /// Sizes computed by walking (nodes without a size-table entry).
    walked: Mutex<HashMap<u32, u64>>,
}

impl TreeSource {
    /// Opens a win-tree file: read into memory up to [`READ_LIMIT`] bytes,
    /// copied into a private temporary file and mapped beyond (never
    /// mapped as it stands: a file truncated in place under a mapping
    /// would kill the server with SIGBUS; see [`WinTree::open`]). The winner is
    /// `winner` if given, else read from the tree's shape (see
    /// [`TreeSource::winner`]).
    pub fn open(
        path: &Path,
        rules: Rules,
        winner: Option<Color>,
    ) -> Result<TreeSource, SourceError> {
        let tree = WinTree::open_reading_up_to(path, READ_LIMIT)?;
        TreeSource::new(path.display().to_string(), tree, rules, winner)
    }

    /// A source over a tree already in memory.
    pub fn new(
        name: String,
        tree: WinTree<'static>,
        rules: Rules,
        winner: Option<Color>,
    ) -> Result<TreeSource, SourceError> {
        let prolog = tree.prolog();
        let mut src = TreeSource {
            name,
            tree,
            prolog,
            winner,
            rules,
            walked: Mutex::new(HashMap::new()),
        };
        if src.winner.is_none() {
            src.winner = src.detect_winner()?;
        }
        Ok(src)
    }

    /// The side the proof shows winning.
    pub fn winner(&self) -> Option<Color> {
        self.winner
    }

    /// The position at the tree's root (after the prolog), if the prolog
    /// is legal.
    pub fn root_position(&self) -> Option<Position> {
        let mut pos = Position::startpos();
        for c in &self.prolog {
            let m = move_of_code(&pos, *c)?;
            pos.play_unchecked(m);
        }
        Some(pos)
    }

    /// Reads the winner from the tree's shape: going down the first child
    /// from the root, the first node whose side to move has two or more
    /// legal moves tells: a single child there is the winner's move; all
    /// legal moves there are the loser's.
    fn detect_winner(&self) -> Result<Option<Color>, SourceError> {
        let Some(mut pos) = self.root_position() else {
            return Ok(None);
        };
        let mut node = 0u32;
        for _ in 0..64 {
            let legal = pos.legal_moves();
            let kids = self.tree.moves(node)?;
            if kids.is_empty() {
                // A leaf: the side to move has won (no legal move) under
                // international rules.
                return Ok(pos.outcome(self.rules).and_then(|o| o.winner()));
            }
            if legal.len() >= 2 {
                return Ok(Some(if kids.len() == 1 {
                    pos.turn()
                } else {
                    !pos.turn()
                }));
            }
            let Some(m) = move_of_code(&pos, kids[0].mv) else {
                return Ok(None);
            };
            pos.play_unchecked(m);
            node = kids[0].node;
        }
        Ok(None)
    }

    fn size_of(&self, node: u32, listed: Option<i64>) -> Result<u64, SourceError> {
        if let Some(s) = listed {
            return Ok(s.unsigned_abs());
        }
        if let Some(&s) = self.walked.lock().expect("size cache").get(&node) {
            return Ok(s);
        }
        // Distinct non-transposition nodes reachable, following links.
        let mut seen = HashSet::new();
        let mut stack = vec![node];
        seen.insert(node);
        while let Some(n) = stack.pop() {
            for c in self.tree.children(n)? {
                let c = self.tree.resolve(c?.index)?;
                if seen.insert(c) {
                    stack.push(c);
                }
            }
        }
        let s = seen.len() as u64;
        self.walked.lock().expect("size cache").insert(node, s);
        Ok(s)
    }

    fn children(&self, node: u32, pos: &Position) -> Result<Vec<Child>, SourceError> {
        let mut out = Vec::new();
        for e in self.tree.moves(node)? {
            if !e.mv.is_move() {
                continue; // null or unsolved moves are not shown
            }
            let mv = move_of_code(pos, e.mv).ok_or_else(|| SourceError::IllegalMove {
                source: self.name.clone(),
                mv: e.mv.uci(),
                fen: pos.to_fen(),
            })?;
            out.push(Child {
                mv,
                nodes: self.size_of(e.node, e.size)?,
            });
        }
        Ok(out)
    }
}

impl ProofSource for TreeSource {
    fn root_line(&self) -> Option<&[MoveCode]> {
        Some(&self.prolog)
    }

    fn name(&self) -> String {
        self.name.clone()
    }

    fn lookup(&self, line: &[Move], pos: &Position) -> Result<Lookup, SourceError> {
        let same = |m: &Move, c: &MoveCode| m.watkins_code().same_move(*c);
        let n = line.len().min(self.prolog.len());
        if !line
            .iter()
            .zip(&self.prolog)
            .take(n)
            .all(|(m, c)| same(m, c))
        {
            return Ok(Lookup::Off);
        }
        if line.len() < self.prolog.len() {
            let Some(mv) = move_of_code(pos, self.prolog[line.len()]) else {
                return Ok(Lookup::Off);
            };
            let nodes = self.size_of(0, self.tree.size(0)?)?;
            return Ok(Lookup::Before {
                entries: vec![Child { mv, nodes }],
            });
        }
        let mut node = 0u32;
        for m in &line[self.prolog.len()..] {
            match self.tree.child_by_move(node, m.watkins_code())? {
                Some(c) => node = c,
                None => return Ok(Lookup::Off),
            }
        }
        let n = self.tree.node(node)?;
        if n.is_unsolved() {
            return Ok(Lookup::Off);
        }
        let children = self.children(node, pos)?;
        // A leaf the endgame tables cannot score is open (the file does
        // not say which a leaf is; see shared/watkins-format.md).
        let table_leaf = children.is_empty()
            && !pos.is_game_over(self.rules)
            && pos.men() <= crate::tablefile::MAX_MEN;
        Ok(Lookup::In {
            winner: self.winner,
            table_leaf,
            children,
        })
    }
}

// ---------------------------------------------------------------------------
// Store records

/// Proven positions with store records, as a proof source: a proof
/// store file (each lookup reads the store's last commit) or a map in
/// memory. What a record means is [`StoredProof`]'s to say.
pub struct RecordSource<R> {
    name: String,
    proof: StoredProof<R>,
}

impl RecordSource<Store> {
    /// Opens a proof store file, reading the records of `rules` (a
    /// stalemate rule, or a whole rule set: with the fifty-move rule, its
    /// own records).
    pub fn open_store(path: &Path, rules: impl Into<RuleSet>) -> Result<Self, SourceError> {
        Ok(RecordSource {
            name: path.display().to_string(),
            proof: StoredProof::new(Store::open_read_only(path)?, rules),
        })
    }
}

impl<R: RecordLookup> RecordSource<R> {
    /// A source over any record lookup.
    pub fn new(name: String, records: R, rules: impl Into<RuleSet>) -> Self {
        RecordSource {
            name,
            proof: StoredProof::new(records, rules),
        }
    }

    fn rules(&self) -> Rules {
        self.proof.rules()
    }

    /// Whether `mv` is a move of the proof at a position with record `rec`.
    fn in_proof(rec: &Record, mv: &Move) -> bool {
        match rec.verdict {
            WinLoss::Win => mv.watkins_code().same_move(rec.mv),
            WinLoss::Loss => true,
        }
    }

    /// The answer where the line has no record: a leaf of a proof whose
    /// last move came from a recorded position, before any proof (the
    /// moves that lead into one), or off every proof.
    fn lookup_unrecorded(&self, line: &[Move], pos: &Position) -> Result<Lookup, SourceError> {
        let mut p = Position::startpos();
        let mut entered = false;
        let mut parent: Option<(Record, Position)> = None;
        for m in line {
            let r = self.proof.record(&p)?;
            entered |= r.is_some();
            parent = r.filter(|r| Self::in_proof(r, m)).map(|r| (r, p));
            p.play_unchecked(*m);
        }
        if let Some((prec, ppos)) = parent {
            let winner = match prec.verdict {
                WinLoss::Win => ppos.turn(),
                WinLoss::Loss => !ppos.turn(),
            };
            if let Some(o) = pos.outcome(self.rules()) {
                return Ok(Lookup::In {
                    winner: o.winner().or(Some(winner)),
                    children: Vec::new(),
                    table_leaf: false,
                });
            }
            if self.proof.child_size(&prec, pos)?.is_some() {
                return Ok(Lookup::In {
                    winner: Some(winner),
                    children: Vec::new(),
                    table_leaf: true,
                });
            }
            return Ok(Lookup::Off);
        }
        if entered || pos.is_game_over(self.rules()) {
            return Ok(Lookup::Off);
        }
        let mut entries = Vec::new();
        for &m in pos.legal_moves().iter() {
            if let Some(r) = self.proof.record(&pos.play(m))? {
                entries.push(Child {
                    mv: m,
                    nodes: r.size,
                });
            }
        }
        Ok(if entries.is_empty() {
            Lookup::Off
        } else {
            Lookup::Before { entries }
        })
    }
}

impl<R: RecordLookup> ProofSource for RecordSource<R> {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn lookup(&self, line: &[Move], pos: &Position) -> Result<Lookup, SourceError> {
        let node = match self.proof.node(pos)? {
            Ok(n) => n,
            Err(Broken::IllegalMove(code)) => {
                return Err(SourceError::IllegalMove {
                    source: self.name.clone(),
                    mv: format!("{code:#06x}"),
                    fen: pos.to_fen(),
                });
            }
            Err(b) => unreachable!("node() only breaks on illegal moves: {b}"),
        };
        let Some(rec) = node.record().copied() else {
            return self.lookup_unrecorded(line, pos);
        };
        let mut children = Vec::new();
        for mv in node.moves(pos) {
            let size = self.proof.child_size(&rec, &pos.play(mv))?;
            match (&node, size) {
                (StoredNode::Win { .. }, s) => children.push(Child {
                    mv,
                    nodes: s.unwrap_or(0),
                }),
                (_, Some(nodes)) => children.push(Child { mv, nodes }),
                (_, None) => {}
            }
        }
        Ok(Lookup::In {
            winner: node.winner(pos),
            table_leaf: children.is_empty() && !pos.is_game_over(self.rules()),
            children,
        })
    }
}

// ---------------------------------------------------------------------------
// Several sources

/// Several proofs answered as one: the first source with the node in its
/// proof answers (moves of other sources holding the node too are added);
/// otherwise the moves that lead into any proof.
pub struct Forest {
    sources: Vec<Box<dyn ProofSource>>,
}

impl Forest {
    /// A forest of sources (asked in this order).
    pub fn new(sources: Vec<Box<dyn ProofSource>>) -> Forest {
        Forest { sources }
    }

    /// Number of sources.
    pub fn len(&self) -> usize {
        self.sources.len()
    }

    /// Whether there is no source.
    pub fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }
}

fn merge(into: &mut Vec<Child>, more: Vec<Child>) {
    for c in more {
        match into.iter_mut().find(|x| x.mv == c.mv) {
            Some(x) => x.nodes = x.nodes.max(c.nodes),
            None => into.push(c),
        }
    }
}

/// The moves that lead into proofs, from every source's: below one move,
/// the sizes of proofs rooted at different positions (the files of a
/// split proof, one a reply) are added up (transpositions between them
/// counted in each), of proofs rooted at one position (two certificates
/// of one line) the larger is kept.
fn merge_before(before: Vec<(Option<&[MoveCode]>, Vec<Child>)>) -> Vec<Child> {
    /// The size behind a move of each proof root below it (`None`: a store).
    type Roots<'a> = Vec<(Option<&'a [MoveCode]>, u64)>;
    let mut by_move: Vec<(Move, Roots)> = Vec::new();
    for (root, entries) in before {
        for c in entries {
            let roots = match by_move.iter_mut().find(|x| x.0 == c.mv) {
                Some(x) => &mut x.1,
                None => {
                    by_move.push((c.mv, Vec::new()));
                    &mut by_move.last_mut().expect("pushed").1
                }
            };
            match roots.iter_mut().find(|r| root.is_some() && r.0 == root) {
                Some(r) => r.1 = r.1.max(c.nodes),
                None => roots.push((root, c.nodes)),
            }
        }
    }
    by_move
        .into_iter()
        .map(|(mv, roots)| {
            let stores = roots.iter().filter(|r| r.0.is_none()).map(|r| r.1).max();
            let files: u64 = roots.iter().filter_map(|r| r.0.map(|_| r.1)).sum();
            Child {
                mv,
                nodes: files.max(stores.unwrap_or(0)),
            }
        })
        .collect()
}

impl ProofSource for Forest {
    fn name(&self) -> String {
        self.sources
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn lookup(&self, line: &[Move], pos: &Position) -> Result<Lookup, SourceError> {
        let mut found: Option<Lookup> = None;
        let mut before = Vec::new();
        for s in &self.sources {
            match s.lookup(line, pos)? {
                Lookup::Off => {}
                Lookup::Before { entries } => before.push((s.root_line(), entries)),
                Lookup::In {
                    winner,
                    children,
                    table_leaf,
                } => match &mut found {
                    None => {
                        found = Some(Lookup::In {
                            winner,
                            children,
                            table_leaf,
                        })
                    }
                    Some(Lookup::In { children: c, .. }) => merge(c, children),
                    Some(_) => unreachable!("found holds In only"),
                },
            }
        }
        Ok(match found {
            Some(f) => f,
            None if before.is_empty() => Lookup::Off,
            None => Lookup::Before {
                entries: merge_before(before),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_before_proofs_add_up_over_files_rooted_apart() {
        let start = Position::startpos();
        let e3 = start.parse_move("e3").unwrap();
        let d4 = start.parse_move("d4").unwrap();
        let child = |mv, nodes| Child { mv, nodes };
        let (a, b) = (
            [e3.watkins_code(), MoveCode::from_raw(1)],
            [e3.watkins_code(), MoveCode::from_raw(2)],
        );
        let merged = merge_before(vec![
            // Two files of one split proof below 1.e3 ...
            (Some(&a[..]), vec![child(e3, 100)]),
            (Some(&b[..]), vec![child(e3, 30)]),
            // ... a second certificate of the first one's line ...
            (Some(&a[..]), vec![child(e3, 120), child(d4, 5)]),
            // ... and a store leading in too.
            (None, vec![child(d4, 9)]),
        ]);
        assert_eq!(merged, [child(e3, 150), child(d4, 9)]);
    }
}
