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

    #[test]
    fn focused_selection_stays_with_a_child_within_the_margin() {
        let (dir, store, pos) = scratch("focus");
        let mut t = TopTree::open(&store, Rules::International, &pos, Color::White, 100).unwrap();
        t.expand(0, 200, &HashMap::new()).unwrap();
        // The root's children (White to move: the winner) at 100 but two.
        let kids = open(&t, 0);
        for &k in &kids {
            t.set(k, State::Frontier, 1000, 10).unwrap();
        }
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
        t.expand(0, 200, &HashMap::new()).unwrap();
        let kids = open(&t, 0);
        for &k in &kids {
            t.set(k, State::Frontier, 1000, 10).unwrap();
        }
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
}
