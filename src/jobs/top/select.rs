//! Selection: the most-proving frontier leaves, optionally staying with
//! a child within df-pn's margin of its best sibling.

use super::{State, TopNode, TopTree, with_margin};
use crate::store::StoreError;
use std::collections::HashMap;

impl TopTree<'_> {
    /// Up to `want` frontier leaves, most-proving first: from the root,
    /// at an OR node the children by proof number, at an AND node by
    /// disproof number, each followed as long as it has leaves not yet
    /// taken (in-flight leaves are skipped: that is what makes the leaves
    /// of one round differ).
    pub fn select(&self, want: usize) -> Result<Vec<u64>, StoreError> {
        self.select_focused(want, None, None)
    }

    /// [`Self::select`], staying with the child `focus` remembers at each
    /// inner node while that child's number (proof number where the
    /// winner moves, else disproof number) is within df-pn's margin
    /// (1 + 1/4) of its best sibling's, instead of moving to whichever
    /// sibling is ahead by one; `focus` is updated with where the leaves
    /// were found.
    ///
    /// With `speculation` F, where the winner moves the selection goes
    /// to a child only while its proof number is at most F times the
    /// best sibling's (F >= 1): a leaf
    /// of a move far behind is not worth a worker (the job would most
    /// likely search a move that does not win), so fewer than `want`
    /// leaves may come back while jobs are out.
    pub fn select_focused(
        &self,
        want: usize,
        mut focus: Option<&mut HashMap<u64, u64>>,
        speculation: Option<f64>,
    ) -> Result<Vec<u64>, StoreError> {
        let mut out = Vec::new();
        let root = self.get(0)?;
        self.collect(0, root, want, &mut out, &mut focus, speculation)?;
        Ok(out)
    }

    /// Up to `want` frontier leaves, picked one at a time so that the
    /// workers spread over near siblings instead of filling the best
    /// one's subtree first: from the root, at each inner node the child
    /// whose number (proof number where the winner moves, else disproof
    /// number) times 1 + `spread` x (the jobs out at or below it) is
    /// least, falling back to the next where a child has no free leaf.
    /// `busy` counts the jobs out at or below each node; each leaf
    /// picked counts as one more along its path for the picks after it.
    /// `speculation` bounds the winner's moves as in
    /// [`Self::select_focused`], on the numbers themselves.
    pub fn select_spread(
        &self,
        want: usize,
        busy: &HashMap<u64, u32>,
        spread: f64,
        speculation: Option<f64>,
    ) -> Result<Vec<u64>, StoreError> {
        let mut busy = busy.clone();
        let mut out = Vec::new();
        let root = self.get(0)?;
        while out.len() < want {
            let mut path = Vec::new();
            if !self.descend(0, root, &busy, spread, speculation, &out, &mut path)? {
                break;
            }
            for id in &path {
                *busy.entry(*id).or_insert(0) += 1;
            }
            out.push(*path.last().expect("a pick has a leaf"));
        }
        Ok(out)
    }

    /// The children of `n` a selection may go to: leaves not out and
    /// inner nodes, neither settled, in move order.
    fn selectable_children(&self, n: &TopNode) -> Result<Vec<(u64, TopNode)>, StoreError> {
        Ok(self
            .children(n)?
            .into_iter()
            .filter(|(_, c)| matches!(c.state, State::Frontier | State::Inner))
            .collect())
    }

    /// One pick of [`Self::select_spread`] below `id`: pushes the path to
    /// the leaf (from `id`) on `path` and says whether one was found.
    #[allow(clippy::too_many_arguments)]
    fn descend(
        &self,
        id: u64,
        n: TopNode,
        busy: &HashMap<u64, u32>,
        spread: f64,
        speculation: Option<f64>,
        taken: &[u64],
        path: &mut Vec<u64>,
    ) -> Result<bool, StoreError> {
        match n.state {
            State::Frontier if !taken.contains(&id) => {
                path.push(id);
                Ok(true)
            }
            State::Inner => {
                let or = n.position().turn() == self.header.winner;
                let mut kids = self.selectable_children(&n)?;
                let best = kids.iter().map(|(_, c)| c.pn).min().unwrap_or(0);
                if or && let Some(f) = speculation {
                    kids.retain(|(_, c)| f64::from(c.pn) <= f * f64::from(best));
                }
                let weighed = |cid: u64, c: &TopNode| {
                    let jobs = busy.get(&cid).copied().unwrap_or(0);
                    f64::from(c.order(or).0) * (1.0 + spread * f64::from(jobs))
                };
                kids.sort_by(|(a, x), (b, y)| {
                    weighed(*a, x)
                        .total_cmp(&weighed(*b, y))
                        .then(x.order(or).cmp(&y.order(or)))
                });
                path.push(id);
                for (cid, c) in kids {
                    if self.descend(cid, c, busy, spread, speculation, taken, path)? {
                        return Ok(true);
                    }
                }
                path.pop();
                Ok(false)
            }
            _ => Ok(false),
        }
    }

    fn collect(
        &self,
        id: u64,
        n: TopNode,
        want: usize,
        out: &mut Vec<u64>,
        focus: &mut Option<&mut HashMap<u64, u64>>,
        speculation: Option<f64>,
    ) -> Result<(), StoreError> {
        match n.state {
            State::Frontier => out.push(id),
            State::Inner => {
                let or = n.position().turn() == self.header.winner;
                let mut kids = self.selectable_children(&n)?;
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
                let best = kids.iter().map(|(_, c)| c.pn).min().unwrap_or(0);
                let mut first = None;
                for (cid, c) in kids {
                    if out.len() >= want {
                        break;
                    }
                    if or
                        && let Some(f) = speculation
                        && f64::from(c.pn) > f * f64::from(best)
                    {
                        break;
                    }
                    let before = out.len();
                    self.collect(cid, c, want, out, focus, speculation)?;
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
}

#[cfg(test)]
mod tests {
    use super::super::tests::scratch;
    use super::*;
    use crate::rules::{Color, Rules};

    /// The children of `id` not settled, in move order.
    fn open(t: &TopTree, id: u64) -> Vec<u64> {
        t.children(&t.get(id).unwrap())
            .unwrap()
            .into_iter()
            .filter(|(_, c)| !c.settled())
            .map(|(id, _)| id)
            .collect()
    }

    /// Expands `t`'s root and sets every child a leaf at 1000 / 10;
    /// returns them in move order.
    fn expanded_root(t: &mut TopTree) -> Vec<u64> {
        t.expand(0, 200, &HashMap::new()).unwrap();
        let kids = open(t, 0);
        for &k in &kids {
            t.set(k, State::Frontier, 1000, 10).unwrap();
        }
        kids
    }

    #[test]
    fn focused_selection_stays_with_a_child_within_the_margin() {
        let (dir, store, pos) = scratch("focus");
        let mut t = TopTree::open(&store, Rules::International, &pos, Color::White, 100).unwrap();
        // The root's children (White to move: the winner) at 100 but two.
        let kids = expanded_root(&mut t);
        let (a, b) = (kids[0], kids[1]);
        t.set(a, State::Frontier, 100, 10).unwrap();
        t.set(b, State::Frontier, 101, 10).unwrap();
        let mut focus = HashMap::new();
        assert_eq!(
            t.select_focused(1, Some(&mut focus), None).unwrap(),
            vec![a]
        );
        assert_eq!(focus.get(&0), Some(&a));
        // `a` passes `b` by less than a quarter: the plain selection
        // moves to `b`, the focused one stays.
        t.set(a, State::Frontier, 120, 10).unwrap();
        assert_eq!(t.select(1).unwrap(), vec![b]);
        assert_eq!(
            t.select_focused(1, Some(&mut focus), None).unwrap(),
            vec![a]
        );
        // By more than a quarter: it moves too.
        t.set(a, State::Frontier, 140, 10).unwrap();
        assert_eq!(
            t.select_focused(1, Some(&mut focus), None).unwrap(),
            vec![b]
        );
        assert_eq!(focus.get(&0), Some(&b));
        drop(t);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn bounded_speculation_leaves_moves_far_behind_alone() {
        let (dir, store, pos) = scratch("speculate");
        let mut t = TopTree::open(&store, Rules::International, &pos, Color::White, 100).unwrap();
        let kids = expanded_root(&mut t);
        let (a, b, c) = (kids[0], kids[1], kids[2]);
        t.set(a, State::Frontier, 100, 10).unwrap();
        t.set(b, State::Frontier, 150, 10).unwrap();
        t.set(c, State::Frontier, 151, 10).unwrap();
        // Unbounded, three leaves are the three best moves.
        assert_eq!(t.select(3).unwrap(), vec![a, b, c]);
        // At most 1.5 times the best: `c` is left alone, fewer leaves.
        assert_eq!(t.select_focused(3, None, Some(1.5)).unwrap(), vec![a, b]);
        assert_eq!(t.select_focused(3, None, Some(1.0)).unwrap(), vec![a]);
        drop(t);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn spread_selection_moves_to_a_near_sibling_as_jobs_go_out() {
        let (dir, store, pos) = scratch("spread");
        let mut t = TopTree::open(&store, Rules::International, &pos, Color::White, 100).unwrap();
        let kids = expanded_root(&mut t);
        let (a, b) = (kids[0], kids[1]);
        // `a` (the winner's best move) gets two open replies of 50 each,
        // the rest proven: its proof number is 100; `b`'s is 150.
        t.expand(a, 200, &HashMap::new()).unwrap();
        let replies = open(&t, a);
        for &r in &replies[2..] {
            t.set(r, State::Proven, 0, 0).unwrap();
        }
        let (a1, a2) = (replies[0], replies[1]);
        t.set(a1, State::Frontier, 50, 10).unwrap();
        t.set(a2, State::Frontier, 50, 10).unwrap();
        t.set(b, State::Frontier, 150, 10).unwrap();
        assert_eq!(t.get(a).unwrap().pn, 100);
        // The plain selection fills `a`'s subtree first.
        assert_eq!(t.select(2).unwrap(), vec![a1, a2]);
        let none = HashMap::new();
        // Weighed by 1 + 1 x its jobs, `a` counts 200 after one pick: the
        // second goes to `b`. At a quarter, 125: it stays with `a`.
        assert_eq!(t.select_spread(2, &none, 1.0, None).unwrap(), vec![a1, b]);
        assert_eq!(t.select_spread(2, &none, 0.25, None).unwrap(), vec![a1, a2]);
        // Jobs already out count the same way: three below `a` make it
        // 175 against 150.
        let out: HashMap<u64, u32> = [(a, 2)].into();
        assert_eq!(t.select_spread(1, &out, 0.25, None).unwrap(), vec![a1]);
        let out: HashMap<u64, u32> = [(a, 3)].into();
        assert_eq!(t.select_spread(1, &out, 0.25, None).unwrap(), vec![b]);
        // The speculation bound still holds: `b` is past 1.25 x 100.
        assert_eq!(
            t.select_spread(2, &none, 1.0, Some(1.25)).unwrap(),
            vec![a1, a2]
        );
        drop(t);
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
