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
}

#[cfg(test)]
mod tests {
    use super::super::tests::scratch;
    use super::*;
    use crate::rules::{Color, Rules};

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
