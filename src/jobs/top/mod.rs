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
//!
//! The pieces: `node` (a node's and the header's layout), `resume`
//! (opening the tree, a stored one kept only where it is certain),
//! `select` (the most-proving frontier leaves).

mod node;
mod resume;
mod select;

pub use node::{HEADER_ID, Header, INF, NODE_LEN, State, TopNode, with_margin};

use crate::rules::{Color, Position, Rules};
use crate::store::{Key, Record, Store, StoreError, WinLoss};
use crate::vocab::MoveCode;
use std::collections::HashMap;
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
            verdict: if or { WinLoss::Win } else { WinLoss::Loss },
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
                    .map(|r| (r.verdict == WinLoss::Win) == (child.turn() == self.header.winner))
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

    /// The best number among the children of `parent` other than `child`
    /// and not settled (proof number where the winner moves, `or`, else
    /// disproof number; [`INF`] if none), children for which `passed(id,
    /// node)` holds left out: what a job's threshold at `child` is set
    /// against. The master passes over the siblings that workers are
    /// already searching (its `Siblings`): they gain nothing from this
    /// job stopping early.
    pub fn best_sibling(
        &self,
        parent: &TopNode,
        child: u64,
        or: bool,
        passed: impl Fn(u64, &TopNode) -> bool,
    ) -> Result<u32, StoreError> {
        Ok(self
            .children(parent)?
            .into_iter()
            .filter(|(id, c)| *id != child && !c.settled() && !passed(*id, c))
            .map(|(_, c)| if or { c.pn } else { c.dn })
            .min()
            .unwrap_or(INF))
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

    /// A scratch directory with an empty store, and the position after
    /// 1.e3 d5 (White to move and win).
    pub(super) fn scratch(name: &str) -> (std::path::PathBuf, Store, Position) {
        let dir = std::env::temp_dir().join(format!("antiproof-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("t.redb");
        let _ = std::fs::remove_file(&db);
        let store = Store::open(&db).unwrap();
        let (pos, _) = Position::startpos().play_line(&["e3", "d5"]).unwrap();
        (dir, store, pos)
    }

    #[test]
    fn a_threshold_is_set_against_the_siblings_no_job_is_searching() {
        let (dir, store, pos) = scratch("sibling");
        let mut t = TopTree::open(&store, Rules::International, &pos, Color::White, 100).unwrap();
        t.expand(0, 200, &HashMap::new()).unwrap();
        let root = t.get(0).unwrap();
        let kids: Vec<u64> = t
            .children(&root)
            .unwrap()
            .into_iter()
            .filter(|(_, c)| !c.settled())
            .map(|(id, _)| id)
            .collect();
        for &k in &kids {
            t.set(k, State::Frontier, 1000, 10).unwrap();
        }
        let (a, b, c) = (kids[0], kids[1], kids[2]);
        let in_flight = |_: u64, n: &TopNode| n.state == State::InFlight;
        t.set(b, State::Frontier, 50, 10).unwrap();
        t.set(c, State::Frontier, 70, 10).unwrap();
        let root = t.get(0).unwrap();
        assert_eq!(t.best_sibling(&root, a, true, in_flight).unwrap(), 50);
        // `b` goes out: a job at `a` stopping for it would hand no worker
        // to it, so the threshold is set against `c`.
        let mut n = t.get(b).unwrap();
        n.state = State::InFlight;
        t.put(b, n);
        assert_eq!(t.best_sibling(&root, a, true, in_flight).unwrap(), 70);
        assert_eq!(t.best_sibling(&root, a, true, |_, _| false).unwrap(), 50);
        // `c` has a job out below it, and is passed over too: the best
        // left is one of the others, at 1000.
        let busy = |id: u64, n: &TopNode| in_flight(id, n) || id == c;
        assert_eq!(t.best_sibling(&root, a, true, busy).unwrap(), 1000);
        // Where the loser moves, by disproof number; settled ones never.
        t.set(c, State::Proven, 0, 0).unwrap();
        assert_eq!(t.best_sibling(&root, a, false, in_flight).unwrap(), 10);
        drop(t);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
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
}
