//! Opening the top tree: a fresh one, or the stored one of the same root
//! and winner resumed, keeping only what is certain.

use super::{HEADER_ID, Header, INF, State, TopNode, TopTree, combine, damaged};
use crate::rules::{Color, Position, Rules};
use crate::store::{Store, StoreError, WinLoss};
use std::collections::HashMap;

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
    /// [`crate::jobs::state`], without that node's proof). Jobs
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
                let win = (r.verdict == WinLoss::Win) == (pos.turn() == self.header.winner);
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
}

#[cfg(test)]
mod tests {
    use super::super::tests::scratch;
    use super::*;

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
}
