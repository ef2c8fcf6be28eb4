//! The top tree of a job-level search, kept in the store (table
//! `top_<rules>`, `crate::store::Store::top_get` and friends) so a killed
//! master resumes from it.
//!
//! Node ids are `u64`; the root is 0; the children of a node are
//! contiguous ids. Each node is one value of [`NODE_LEN`] bytes (layout
//! in [`TopNode::to_bytes`]); the header (root, winner, next id, run
//! generation) is the value at id [`HEADER_ID`].
//!
//! Proof and disproof numbers are from the winner's side: a node where the
//! winner moves is an OR node (proof number the minimum of its children's,
//! disproof number the sum), the other an AND node. A new leaf starts with
//! mobility values (1 and the number of moves at an OR node, the reverse
//! at an AND node); an unresolved job sets its root's numbers. Changes are
//! buffered and committed together with the proven records they bring
//! ([`TopTree::flush`]): one transaction a round of the master.
//!
//! A position that repeats one on its path from the root is disproven here
//! (a repetition is never a win for the winner), which keeps the tree a
//! tree; transpositions between branches are found through the store (a
//! leaf whose position the store already holds is settled without a job).

use crate::rules::{Color, Position, Rules};
use crate::store::{KEY_LEN, Key, Record, Store, StoreError, Verdict};
use crate::vocab::MoveCode;
use std::collections::HashMap;

/// Proof or disproof number "infinite".
pub const INF: u32 = u32::MAX;
/// The id of the header value.
pub const HEADER_ID: u64 = u64::MAX;
/// Bytes of one node's value.
pub const NODE_LEN: usize = 1 + KEY_LEN + 8 + 2 + 1 + 1 + 4 + 4 + 8 + 8 + 2 + 2;
/// Version byte of the node and header layout.
const LAYOUT: u8 = 1;

/// Where a node stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum State {
    /// A leaf waiting for a job.
    Frontier = 0,
    /// A leaf whose job is out.
    InFlight = 1,
    /// Expanded: its numbers come from its children.
    Inner = 2,
    /// The winner wins here.
    Proven = 3,
    /// The winner cannot win here (or it repeats its path).
    Disproven = 4,
    /// Its job failed twice (a wrong or unreadable result): never proven.
    Failed = 5,
}

impl State {
    fn from_u8(b: u8) -> Option<State> {
        Some(match b {
            0 => State::Frontier,
            1 => State::InFlight,
            2 => State::Inner,
            3 => State::Proven,
            4 => State::Disproven,
            5 => State::Failed,
            _ => return None,
        })
    }
}

/// One node of the top tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TopNode {
    /// The packed position.
    pub key: Key,
    /// The parent's id ([`HEADER_ID`] at the root).
    pub parent: u64,
    /// The move from the parent (raw Watkins code).
    pub mv: u16,
    /// Where it stands.
    pub state: State,
    /// Jobs of this node that came back wrong or never came back.
    pub attempts: u8,
    /// Proof number.
    pub pn: u32,
    /// Disproof number.
    pub dn: u32,
    /// Node budget of this leaf's next job.
    pub budget: u64,
    /// First child's id (when expanded).
    pub first_child: u64,
    /// Number of children.
    pub children: u16,
    /// Plies from the root.
    pub depth: u16,
}

impl TopNode {
    /// The value bytes: layout byte, key, parent, move, state, attempts,
    /// pn, dn, budget, first child, children, depth (little-endian).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(NODE_LEN);
        v.push(LAYOUT);
        v.extend_from_slice(&self.key);
        v.extend_from_slice(&self.parent.to_le_bytes());
        v.extend_from_slice(&self.mv.to_le_bytes());
        v.push(self.state as u8);
        v.push(self.attempts);
        v.extend_from_slice(&self.pn.to_le_bytes());
        v.extend_from_slice(&self.dn.to_le_bytes());
        v.extend_from_slice(&self.budget.to_le_bytes());
        v.extend_from_slice(&self.first_child.to_le_bytes());
        v.extend_from_slice(&self.children.to_le_bytes());
        v.extend_from_slice(&self.depth.to_le_bytes());
        v
    }

    /// Reads [`Self::to_bytes`]' layout; `None` if it is not that.
    pub fn from_bytes(b: &[u8]) -> Option<TopNode> {
        if b.len() != NODE_LEN || b[0] != LAYOUT {
            return None;
        }
        let mut at = 1;
        let mut take = |n: usize| {
            let s = &b[at..at + n];
            at += n;
            s
        };
        let key: Key = take(KEY_LEN).try_into().ok()?;
        let u64_of = |s: &[u8]| u64::from_le_bytes(s.try_into().unwrap());
        let u32_of = |s: &[u8]| u32::from_le_bytes(s.try_into().unwrap());
        let u16_of = |s: &[u8]| u16::from_le_bytes(s.try_into().unwrap());
        let parent = u64_of(take(8));
        let mv = u16_of(take(2));
        let state = State::from_u8(take(1)[0])?;
        let attempts = take(1)[0];
        let pn = u32_of(take(4));
        let dn = u32_of(take(4));
        let budget = u64_of(take(8));
        let first_child = u64_of(take(8));
        let children = u16_of(take(2));
        let depth = u16_of(take(2));
        Some(TopNode {
            key,
            parent,
            mv,
            state,
            attempts,
            pn,
            dn,
            budget,
            first_child,
            children,
            depth,
        })
    }

    /// The position.
    pub fn position(&self) -> Position {
        Position::unpack(&crate::rules::PackedPosition(self.key))
            .expect("top-tree keys are packed positions")
    }

    /// Whether the node is settled (proven, disproven or failed).
    pub fn settled(&self) -> bool {
        matches!(self.state, State::Proven | State::Disproven | State::Failed)
    }

    /// The key siblings are ordered by, most-proving first: proof number
    /// then disproof number where the winner moves (`or`), else the
    /// other way round.
    pub fn order(&self, or: bool) -> (u32, u32) {
        if or {
            (self.pn, self.dn)
        } else {
            (self.dn, self.pn)
        }
    }
}

/// `v` with df-pn's margin of 1 + 1/4 (plus one, so that it always
/// grows): how far a child may fall behind its best sibling before the
/// search leaves it.
pub fn with_margin(v: u32) -> u64 {
    u64::from(v) + u64::from(v) / 4 + 1
}

/// The header: what the tree is a search of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The root's packed position.
    pub root: Key,
    /// The side proven to win.
    pub winner: Color,
    /// The next free node id.
    pub next_id: u64,
    /// Master runs over this tree so far (job files carry it, so a
    /// resumed master never reads a result of a run before).
    pub generation: u32,
}

impl Header {
    fn to_bytes(self) -> Vec<u8> {
        let mut v = vec![LAYOUT];
        v.extend_from_slice(&self.root);
        v.push(self.winner as u8);
        v.extend_from_slice(&self.next_id.to_le_bytes());
        v.extend_from_slice(&self.generation.to_le_bytes());
        v
    }

    /// Reads a header value ([`super::state`] reads the one a state file
    /// holds).
    pub(super) fn from_value(b: &[u8]) -> Option<Header> {
        Header::from_bytes(b)
    }

    fn from_bytes(b: &[u8]) -> Option<Header> {
        if b.len() != 1 + KEY_LEN + 1 + 8 + 4 || b[0] != LAYOUT {
            return None;
        }
        Some(Header {
            root: b[1..1 + KEY_LEN].try_into().ok()?,
            winner: match b[1 + KEY_LEN] {
                0 => Color::White,
                1 => Color::Black,
                _ => return None,
            },
            next_id: u64::from_le_bytes(b[KEY_LEN + 2..KEY_LEN + 10].try_into().ok()?),
            generation: u32::from_le_bytes(b[KEY_LEN + 10..].try_into().ok()?),
        })
    }
}

/// The root and winner of the top tree `store` holds under `rules`, if
/// any.
pub fn stored_root(store: &Store, rules: Rules) -> Result<Option<(Key, Color)>, StoreError> {
    Ok(store
        .top_get(rules, HEADER_ID)?
        .and_then(|b| Header::from_bytes(&b))
        .map(|h| (h.root, h.winner)))
}

/// The top tree over a store, with a buffer of changes not yet committed.
pub struct TopTree<'s> {
    store: &'s Store,
    rules: Rules,
    /// What the tree is a search of.
    pub header: Header,
    dirty: HashMap<u64, TopNode>,
    header_dirty: bool,
    records: Vec<(Key, Record)>,
    /// Whether this run resumed a tree left by an earlier one.
    pub resumed: bool,
    /// On resuming: leaves an earlier run left failed, or disproven by a
    /// worker's search (not certified), made frontier leaves again.
    pub reopened: u64,
    /// On resuming: nodes settled from the store's records (a proof made
    /// since, by another run or a plain `prove`), whatever the tree said.
    pub from_store: u64,
}

/// Saturating sum of proof numbers.
fn add(a: u32, b: u32) -> u32 {
    a.saturating_add(b)
}

/// An inner node's numbers from its children's (`or`: the winner moves
/// there): the least proof number and the sum of disproof numbers, or the
/// other way round.
fn combine(or: bool, kids: &[TopNode]) -> (u32, u32) {
    let (mut pn, mut dn) = if or { (INF, 0) } else { (0, INF) };
    for c in kids {
        if or {
            pn = pn.min(c.pn);
            dn = add(dn, c.dn);
        } else {
            pn = add(pn, c.pn);
            dn = dn.min(c.dn);
        }
    }
    (pn, dn)
}

fn damaged(store: &Store, what: String) -> StoreError {
    StoreError::Damaged {
        path: store.path().to_path_buf(),
        message: format!("top tree: {what}"),
    }
}

impl<'s> TopTree<'s> {
    /// Opens the top tree of `root` for `winner` in `store`: resumes the
    /// stored one if it is of this root and winner, keeping only what is
    /// certain ([`Self::reopen`]: jobs that were out are re-queued, failed
    /// and worker-disproven leaves tried again, the store's proofs taken),
    /// else starts afresh (any other top tree under
    /// `rules` is deleted) with the root a leaf of budget `budget`.
    pub fn open(
        store: &'s Store,
        rules: Rules,
        root: &Position,
        winner: Color,
        budget: u64,
    ) -> Result<TopTree<'s>, StoreError> {
        let key = root.pack().0;
        let old = store
            .top_get(rules, HEADER_ID)?
            .and_then(|b| Header::from_bytes(&b));
        let mut tree = TopTree {
            store,
            rules,
            header: Header {
                root: key,
                winner,
                next_id: 1,
                generation: 1,
            },
            dirty: HashMap::new(),
            header_dirty: true,
            records: Vec::new(),
            resumed: false,
            reopened: 0,
            from_store: 0,
        };
        match old {
            Some(h) if h.root == key && h.winner == winner => {
                tree.header = Header {
                    generation: h.generation + 1,
                    ..h
                };
                tree.resumed = true;
                let mut nodes = Vec::with_capacity(h.next_id as usize);
                for (id, b) in store.top_range(rules, 0, h.next_id)? {
                    if id != nodes.len() as u64 {
                        return Err(damaged(store, format!("node {} is missing", nodes.len())));
                    }
                    let n = TopNode::from_bytes(&b)
                        .ok_or_else(|| damaged(store, format!("node {id} is malformed")))?;
                    nodes.push(n);
                }
                tree.reopen(nodes)?;
            }
            _ => {
                store.top_clear(rules)?;
                let (pn, dn) = tree.initial(root);
                tree.put(
                    0,
                    TopNode {
                        key,
                        parent: HEADER_ID,
                        mv: 0,
                        state: State::Frontier,
                        attempts: 0,
                        pn,
                        dn,
                        budget,
                        first_child: 0,
                        children: 0,
                        depth: 0,
                    },
                );
            }
        }
        tree.flush()?;
        Ok(tree)
    }

    /// What a resumed tree keeps of an earlier run, `nodes` being the
    /// whole stored tree (ids `0..next_id`): only what is certain. A
    /// proven node whose position has no record in the store (and is no
    /// game end) is reopened (a tree restored from a run-state file,
    /// [`super::state`], without that node's proof). Jobs
    /// that were out are frontier leaves again. A node the store holds a
    /// record of is settled by it (a proof made since, by another run or
    /// a plain `prove`, wins over the tree's claim). A leaf that failed
    /// is a frontier leaf again, with mobility values and no failed
    /// attempts: this run tries it afresh. A leaf that a worker's search
    /// disproved (not certified) is kept disproven while the root is not:
    /// the run goes on trusting it as guidance, as it did before it
    /// stopped (re-searching every disproof cost a resumed run more nodes
    /// than a whole uninterrupted one, docs/prove.md). Where those
    /// disproofs made the root disproven, the run would end at once on
    /// the same unchecked word, so they are frontier leaves again too; a
    /// game end or a repetition of its path stays disproven. Inner nodes
    /// are then recomputed from their children, children first (they
    /// have the larger ids).
    fn reopen(&mut self, mut nodes: Vec<TopNode>) -> Result<(), StoreError> {
        let root_lost = nodes
            .first()
            .is_some_and(|r| matches!(r.state, State::Disproven | State::Failed));
        let reader = self.store.reader()?;
        let mut changed = vec![false; nodes.len()];
        for id in (0..nodes.len()).rev() {
            let mut n = nodes[id];
            let pos = n.position();
            let record = reader.get(self.rules, &n.key)?;
            // A proven node keeps its proof where the store holds it (a
            // record, or a game end); one whose record is gone (a tree
            // restored from a run-state file without that proof) is
            // reopened like a disproven one.
            if n.state == State::Proven
                && (record.is_some() || (n.children == 0 && pos.outcome(self.rules).is_some()))
            {
                continue;
            }
            if let Some(r) = record {
                let win = (r.verdict == Verdict::Win) == (pos.turn() == self.header.winner);
                (n.state, n.pn, n.dn) = if win {
                    (State::Proven, 0, INF)
                } else {
                    (State::Disproven, INF, 0)
                };
            } else if n.children == 0 {
                match n.state {
                    State::InFlight => n.state = State::Frontier,
                    State::Proven => {
                        n.state = State::Frontier;
                        (n.pn, n.dn) = self.initial(&pos);
                        self.reopened += 1;
                    }
                    State::Failed if !self.certainly_lost(&nodes, &n) => {
                        n.state = State::Frontier;
                        n.attempts = 0;
                        (n.pn, n.dn) = self.initial(&pos);
                        self.reopened += 1;
                    }
                    State::Disproven if root_lost && !self.certainly_lost(&nodes, &n) => {
                        n.state = State::Frontier;
                        n.attempts = 0;
                        (n.pn, n.dn) = self.initial(&pos);
                        self.reopened += 1;
                    }
                    _ => {}
                }
            } else {
                let first = n.first_child as usize;
                let kids = nodes
                    .get(first..first + n.children as usize)
                    .ok_or_else(|| {
                        damaged(self.store, format!("node {id}'s children are missing"))
                    })?;
                let or = pos.turn() == self.header.winner;
                (n.pn, n.dn) = combine(or, kids);
                n.state = if n.pn == 0 {
                    let record = self.proven_record(&reader, or, kids)?;
                    self.records.push((n.key, record));
                    State::Proven
                } else if n.dn == 0 {
                    State::Disproven
                } else {
                    State::Inner
                };
            }
            if n != nodes[id] {
                if record.is_some() && n.state != nodes[id].state {
                    self.from_store += 1;
                }
                nodes[id] = n;
                changed[id] = true;
            }
        }
        drop(reader);
        for (id, n) in nodes.into_iter().enumerate() {
            if changed[id] {
                self.dirty.insert(id as u64, n);
            }
        }
        Ok(())
    }

    /// Whether leaf `n` of the stored tree `nodes` is lost for the winner
    /// for certain: a finished game, or a repetition of its path.
    fn certainly_lost(&self, nodes: &[TopNode], n: &TopNode) -> bool {
        if n.position().outcome(self.rules).is_some() {
            return true;
        }
        let mut p = n.parent;
        while let Some(a) = nodes.get(p as usize) {
            if a.key == n.key {
                return true;
            }
            p = a.parent;
        }
        false
    }

    /// The record of a node proven by its children `kids` (`or`: the
    /// winner moves there): a win with the first proven child's move, or
    /// a loss where the other side moves; its size from the children's
    /// records.
    fn proven_record(
        &self,
        reader: &crate::store::StoreReader,
        or: bool,
        kids: &[TopNode],
    ) -> Result<Record, StoreError> {
        let mut size = 1u64;
        let mut mv = MoveCode::NONE;
        for c in kids {
            if or && c.pn != 0 {
                continue;
            }
            size = size.saturating_add(reader.get(self.rules, &c.key)?.map_or(1, |r| r.size));
            if or {
                mv = MoveCode::from_raw(c.mv);
                break;
            }
        }
        Ok(Record {
            verdict: if or { Verdict::Win } else { Verdict::Loss },
            flags: 0,
            mv,
            size,
        })
    }

    /// Mobility values of a new leaf.
    fn initial(&self, pos: &Position) -> (u32, u32) {
        let n = pos.legal_moves().len().max(1) as u32;
        if pos.turn() == self.header.winner {
            (1, n)
        } else {
            (n, 1)
        }
    }

    /// Node `id`.
    pub fn get(&self, id: u64) -> Result<TopNode, StoreError> {
        if let Some(n) = self.dirty.get(&id) {
            return Ok(*n);
        }
        let b = self
            .store
            .top_get(self.rules, id)?
            .ok_or_else(|| damaged(self.store, format!("node {id} is missing")))?;
        TopNode::from_bytes(&b)
            .ok_or_else(|| damaged(self.store, format!("node {id} is malformed")))
    }

    /// The children of `n`, with their ids.
    pub fn children(&self, n: &TopNode) -> Result<Vec<(u64, TopNode)>, StoreError> {
        if n.children == 0 {
            return Ok(Vec::new());
        }
        let mut out = Vec::with_capacity(n.children as usize);
        let stored = self
            .store
            .top_range(self.rules, n.first_child, n.children as u64)?;
        let mut stored: HashMap<u64, Vec<u8>> = stored.into_iter().collect();
        for id in n.first_child..n.first_child + n.children as u64 {
            let node = match self.dirty.get(&id) {
                Some(d) => *d,
                None => stored
                    .remove(&id)
                    .and_then(|b| TopNode::from_bytes(&b))
                    .ok_or_else(|| damaged(self.store, format!("node {id} is missing")))?,
            };
            out.push((id, node));
        }
        Ok(out)
    }

    /// Changes node `id` (committed by the next [`Self::flush`]).
    pub fn put(&mut self, id: u64, n: TopNode) {
        self.dirty.insert(id, n);
    }

    /// Adds proven records to commit with the next [`Self::flush`].
    pub fn add_records(&mut self, records: Vec<(Key, Record)>) {
        self.records.extend(records);
    }

    /// Commits the buffered changes and records in one transaction.
    pub fn flush(&mut self) -> Result<(), StoreError> {
        if self.dirty.is_empty() && self.records.is_empty() && !self.header_dirty {
            return Ok(());
        }
        let mut nodes: Vec<(u64, Vec<u8>)> = self
            .dirty
            .iter()
            .map(|(id, n)| (*id, n.to_bytes()))
            .collect();
        if self.header_dirty {
            nodes.push((HEADER_ID, self.header.to_bytes()));
        }
        self.store.top_commit(self.rules, &nodes, &self.records)?;
        self.dirty.clear();
        self.records.clear();
        self.header_dirty = false;
        Ok(())
    }

    /// The root.
    pub fn root(&self) -> Result<TopNode, StoreError> {
        self.get(0)
    }

    /// Nodes in the tree so far.
    pub fn len(&self) -> u64 {
        self.header.next_id
    }

    /// Whether the tree has only its root.
    pub fn is_empty(&self) -> bool {
        self.header.next_id <= 1
    }

    /// Up to `want` frontier leaves, most-proving first: from the root,
    /// at an OR node the children by proof number, at an AND node by
    /// disproof number, each followed as long as it has leaves not yet
    /// taken (in-flight leaves are skipped: that is what makes the leaves
    /// of one round differ).
    pub fn select(&self, want: usize) -> Result<Vec<u64>, StoreError> {
        self.select_focused(want, None)
    }

    /// [`Self::select`], staying with the child `focus` remembers at each
    /// inner node while that child's number (proof number where the
    /// winner moves, else disproof number) is within df-pn's margin
    /// (1 + 1/4) of its best sibling's, instead of moving to whichever
    /// sibling is ahead by one; `focus` is updated with where the leaves
    /// were found.
    pub fn select_focused(
        &self,
        want: usize,
        mut focus: Option<&mut HashMap<u64, u64>>,
    ) -> Result<Vec<u64>, StoreError> {
        let mut out = Vec::new();
        let root = self.get(0)?;
        self.collect(0, root, want, &mut out, &mut focus)?;
        Ok(out)
    }

    fn collect(
        &self,
        id: u64,
        n: TopNode,
        want: usize,
        out: &mut Vec<u64>,
        focus: &mut Option<&mut HashMap<u64, u64>>,
    ) -> Result<(), StoreError> {
        match n.state {
            State::Frontier => out.push(id),
            State::Inner => {
                let or = n.position().turn() == self.header.winner;
                let mut kids: Vec<(u64, TopNode)> = self
                    .children(&n)?
                    .into_iter()
                    .filter(|(_, c)| matches!(c.state, State::Frontier | State::Inner))
                    .collect();
                kids.sort_by_key(|(_, c)| c.order(or));
                if let Some(f) = focus.as_deref()
                    && let Some(&last) = f.get(&id)
                    && let Some(at) = kids.iter().position(|(cid, _)| *cid == last)
                {
                    let key = |c: &TopNode| c.order(or).0;
                    if u64::from(key(&kids[at].1)) <= with_margin(key(&kids[0].1)) {
                        let k = kids.remove(at);
                        kids.insert(0, k);
                    }
                }
                let mut first = None;
                for (cid, c) in kids {
                    if out.len() >= want {
                        break;
                    }
                    let before = out.len();
                    self.collect(cid, c, want, out, focus)?;
                    if first.is_none() && out.len() > before {
                        first = Some(cid);
                    }
                }
                if let (Some(f), Some(cid)) = (focus.as_deref_mut(), first) {
                    f.insert(id, cid);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Sets leaf `id` settled or with new numbers, and updates its
    /// ancestors.
    pub fn set(&mut self, id: u64, state: State, pn: u32, dn: u32) -> Result<(), StoreError> {
        let mut n = self.get(id)?;
        n.state = state;
        (n.pn, n.dn) = match state {
            State::Proven => (0, INF),
            State::Disproven | State::Failed => (INF, 0),
            _ => (pn.max(1), dn.max(1)),
        };
        self.put(id, n);
        self.update_ancestors(n.parent)
    }

    /// Expands leaf `id` one ply: each child is a game end (settled), a
    /// position the store already holds (settled), a repetition of its
    /// path (disproven), or a new frontier leaf of budget
    /// `child_budget`, with the numbers `hints` gives its move (raw move
    /// code without the en-passant bit -> pn, dn; a hint never settles a child: both are kept
    /// between 1 and INF - 1) or else mobility values; then updates the
    /// ancestors.
    pub fn expand(
        &mut self,
        id: u64,
        child_budget: u64,
        hints: &HashMap<u16, (u32, u32)>,
    ) -> Result<(), StoreError> {
        let mut n = self.get(id)?;
        let pos = n.position();
        let path = self.path_keys(&n)?;
        let moves = pos.legal_moves();
        let first = self.header.next_id;
        let reader = self.store.reader()?;
        for (i, &m) in moves.iter().enumerate() {
            let child = pos.play(m);
            let key = child.pack().0;
            let (pn, dn) = match hints.get(&m.watkins_code().cleared().raw()) {
                Some(&(p, d)) => (p.clamp(1, INF - 1), d.clamp(1, INF - 1)),
                None => self.initial(&child),
            };
            let mut c = TopNode {
                key,
                parent: id,
                mv: m.watkins_code().raw(),
                state: State::Frontier,
                attempts: 0,
                pn,
                dn,
                budget: child_budget,
                first_child: 0,
                children: 0,
                depth: n.depth.saturating_add(1),
            };
            let settled = if let Some(o) = child.outcome(self.rules) {
                Some(o.winner() == Some(self.header.winner))
            } else if path.contains(&key) {
                Some(false)
            } else {
                reader
                    .get(self.rules, &key)?
                    .map(|r| (r.verdict == Verdict::Win) == (child.turn() == self.header.winner))
            };
            if let Some(win) = settled {
                c.state = if win { State::Proven } else { State::Disproven };
                (c.pn, c.dn) = if win { (0, INF) } else { (INF, 0) };
            }
            self.put(first + i as u64, c);
        }
        drop(reader);
        self.header.next_id = first + moves.len() as u64;
        self.header_dirty = true;
        n.state = State::Inner;
        n.first_child = first;
        n.children = moves.len() as u16;
        self.put(id, n);
        self.update_ancestors(id)
    }

    /// The keys of `n`'s path from the root, `n` included.
    fn path_keys(&self, n: &TopNode) -> Result<Vec<Key>, StoreError> {
        let mut keys = vec![n.key];
        let mut p = n.parent;
        while p != HEADER_ID {
            let a = self.get(p)?;
            keys.push(a.key);
            p = a.parent;
        }
        Ok(keys)
    }

    /// Recomputes the numbers of inner node `id` and its ancestors from
    /// their children; a node that becomes proven gets its record (a win
    /// with the proven child's move where the winner moves, a loss where
    /// the other side does).
    fn update_ancestors(&mut self, mut id: u64) -> Result<(), StoreError> {
        while id != HEADER_ID {
            let mut n = self.get(id)?;
            if n.state != State::Inner {
                return Ok(());
            }
            let pos = n.position();
            let or = pos.turn() == self.header.winner;
            let kids: Vec<TopNode> = self.children(&n)?.into_iter().map(|(_, c)| c).collect();
            let (pn, dn) = combine(or, &kids);
            let before = (n.pn, n.dn);
            (n.pn, n.dn) = (pn, dn);
            if pn == 0 {
                n.state = State::Proven;
                let reader = self.store.reader()?;
                let record = self.proven_record(&reader, or, &kids)?;
                drop(reader);
                self.records.push((n.key, record));
            } else if dn == 0 {
                n.state = State::Disproven;
            }
            self.put(id, n);
            if (n.pn, n.dn) == before && !n.settled() {
                return Ok(());
            }
            id = n.parent;
        }
        Ok(())
    }

    /// Counts of nodes by state (one pass over the stored tree).
    pub fn census(&self) -> Result<[u64; 6], StoreError> {
        let mut c = [0u64; 6];
        for (id, b) in self.store.top_range(self.rules, 0, self.header.next_id)? {
            let n = self
                .dirty
                .get(&id)
                .copied()
                .or_else(|| TopNode::from_bytes(&b));
            if let Some(n) = n {
                c[n.state as usize] += 1;
            }
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_round_trip() {
        let n = TopNode {
            key: Position::startpos().pack().0,
            parent: 7,
            mv: 0x1234,
            state: State::InFlight,
            attempts: 1,
            pn: 5,
            dn: INF,
            budget: 1 << 20,
            first_child: 99,
            children: 20,
            depth: 3,
        };
        let b = n.to_bytes();
        assert_eq!(b.len(), NODE_LEN);
        assert_eq!(TopNode::from_bytes(&b), Some(n));
        assert_eq!(TopNode::from_bytes(&b[1..]), None);
        let h = Header {
            root: n.key,
            winner: Color::Black,
            next_id: 42,
            generation: 3,
        };
        assert_eq!(Header::from_bytes(&h.to_bytes()), Some(h));
    }

    /// A scratch directory with an empty store, and the position after
    /// 1.e3 d5 (White to move and win).
    fn scratch(name: &str) -> (std::path::PathBuf, Store, Position) {
        let dir = std::env::temp_dir().join(format!("antiproof-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("t.redb");
        let _ = std::fs::remove_file(&db);
        let store = Store::open(&db).unwrap();
        let (pos, _) = Position::startpos().play_line(&["e3", "d5"]).unwrap();
        (dir, store, pos)
    }

    #[test]
    fn expansion_settles_game_ends_and_selects_distinct_leaves() {
        let (dir, store, pos) = scratch("top");
        let mut t = TopTree::open(&store, Rules::International, &pos, Color::White, 100).unwrap();
        assert!(!t.resumed);
        t.expand(0, 200, &HashMap::new()).unwrap();
        t.flush().unwrap();
        let picked = t.select(3).unwrap();
        assert_eq!(picked.len(), 3);
        let mut d = picked.clone();
        d.dedup();
        assert_eq!(d.len(), 3);
        let mut n = t.get(picked[0]).unwrap();
        n.state = State::InFlight;
        t.put(picked[0], n);
        t.flush().unwrap();
        assert!(!t.select(3).unwrap().contains(&picked[0]));
        drop(t);
        // Resumed: the in-flight leaf is a frontier leaf again.
        let t = TopTree::open(&store, Rules::International, &pos, Color::White, 100).unwrap();
        assert!(t.resumed);
        assert_eq!(t.get(picked[0]).unwrap().state, State::Frontier);
        assert_eq!(t.header.generation, 2);
        drop(t);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_resumed_tree_reopens_what_workers_disproved_or_failed() {
        let (dir, store, pos) = scratch("reopen");
        let mut t = TopTree::open(&store, Rules::International, &pos, Color::White, 100).unwrap();
        t.expand(0, 200, &HashMap::new()).unwrap();
        // Every child disproven by a worker's word, one failed: the root
        // (the winner to move) is disproven.
        let kids: Vec<u64> = t
            .children(&t.root().unwrap())
            .unwrap()
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        for &k in &kids {
            t.set(k, State::Disproven, 0, 0).unwrap();
        }
        let mut n = t.get(kids[0]).unwrap();
        n.attempts = 2;
        t.put(kids[0], n);
        t.set(kids[0], State::Failed, 0, 0).unwrap();
        t.flush().unwrap();
        assert_eq!(t.root().unwrap().state, State::Disproven);
        drop(t);
        let t = TopTree::open(&store, Rules::International, &pos, Color::White, 100).unwrap();
        assert_eq!(t.reopened, kids.len() as u64);
        assert_eq!(t.from_store, 0);
        let root = t.root().unwrap();
        assert_eq!(root.state, State::Inner);
        assert!(root.pn >= 1 && root.pn < INF && root.dn >= 1, "{root:?}");
        for (_, c) in t.children(&root).unwrap() {
            assert_eq!((c.state, c.attempts), (State::Frontier, 0));
        }
        drop(t);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_resumed_tree_keeps_workers_disproofs_while_its_root_is_open() {
        let (dir, store, pos) = scratch("keep-disproofs");
        let mut t = TopTree::open(&store, Rules::International, &pos, Color::White, 100).unwrap();
        t.expand(0, 200, &HashMap::new()).unwrap();
        let kids: Vec<u64> = t
            .children(&t.root().unwrap())
            .unwrap()
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        // Two of the winner's moves disproven by a worker's word, one
        // failed: the root stays open.
        t.set(kids[0], State::Disproven, INF, 0).unwrap();
        t.set(kids[1], State::Disproven, INF, 0).unwrap();
        t.set(kids[2], State::Failed, INF, 0).unwrap();
        t.flush().unwrap();
        assert_eq!(t.root().unwrap().state, State::Inner);
        drop(t);
        let t = TopTree::open(&store, Rules::International, &pos, Color::White, 100).unwrap();
        assert_eq!(t.reopened, 1, "only the failed leaf is tried again");
        assert_eq!(t.get(kids[0]).unwrap().state, State::Disproven);
        assert_eq!(t.get(kids[1]).unwrap().state, State::Disproven);
        assert_eq!(t.get(kids[2]).unwrap().state, State::Frontier);
        drop(t);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_resumed_tree_reopens_a_proven_leaf_whose_record_is_gone() {
        let (dir, store, pos) = scratch("proven-gone");
        let mut t = TopTree::open(&store, Rules::International, &pos, Color::White, 100).unwrap();
        t.expand(0, 200, &HashMap::new()).unwrap();
        let (kid, _) = t
            .children(&t.root().unwrap())
            .unwrap()
            .into_iter()
            .find(|(_, c)| !c.settled())
            .unwrap();
        // One of the AND node's replies proven by a job's word, its proof
        // not in the store (a tree restored from a state file without it).
        t.expand(kid, 200, &HashMap::new()).unwrap();
        let (grand, _) = t
            .children(&t.get(kid).unwrap())
            .unwrap()
            .into_iter()
            .find(|(_, c)| !c.settled())
            .unwrap();
        t.set(grand, State::Proven, 0, 0).unwrap();
        t.flush().unwrap();
        assert_eq!(t.get(grand).unwrap().state, State::Proven);
        drop(t);
        let t = TopTree::open(&store, Rules::International, &pos, Color::White, 100).unwrap();
        assert_eq!(t.get(grand).unwrap().state, State::Frontier);
        assert_eq!(t.get(kid).unwrap().state, State::Inner);
        assert!(t.reopened >= 1);
        drop(t);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn focused_selection_stays_with_a_child_within_the_margin() {
        let (dir, store, pos) = scratch("focus");
        let mut t = TopTree::open(&store, Rules::International, &pos, Color::White, 100).unwrap();
        t.expand(0, 200, &HashMap::new()).unwrap();
        // The root's children (White to move: the winner) at 100 but two.
        let kids: Vec<u64> = t
            .children(&t.root().unwrap())
            .unwrap()
            .into_iter()
            .filter(|(_, c)| !c.settled())
            .map(|(id, _)| id)
            .collect();
        for &k in &kids {
            t.set(k, State::Frontier, 1000, 10).unwrap();
        }
        let (a, b) = (kids[0], kids[1]);
        t.set(a, State::Frontier, 100, 10).unwrap();
        t.set(b, State::Frontier, 101, 10).unwrap();
        let mut focus = HashMap::new();
        assert_eq!(t.select_focused(1, Some(&mut focus)).unwrap(), vec![a]);
        assert_eq!(focus.get(&0), Some(&a));
        // `a` passes `b` by less than a quarter: the plain selection
        // moves to `b`, the focused one stays.
        t.set(a, State::Frontier, 120, 10).unwrap();
        assert_eq!(t.select(1).unwrap(), vec![b]);
        assert_eq!(t.select_focused(1, Some(&mut focus)).unwrap(), vec![a]);
        // By more than a quarter: it moves too.
        t.set(a, State::Frontier, 140, 10).unwrap();
        assert_eq!(t.select_focused(1, Some(&mut focus)).unwrap(), vec![b]);
        assert_eq!(focus.get(&0), Some(&b));
        drop(t);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
