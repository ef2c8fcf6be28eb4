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

    /// Up to `want` frontier leaves, the needed ones first: a leaf in
    /// flight counts as proven (JL-PNS's virtual win), so where the winner
    /// moves one move with a job out, or taken in this selection, covers
    /// the node, and leaves go to the loser's replies still uncovered
    /// anywhere in the tree (each must be proven) before a second move is
    /// tried anywhere. Only the workers left over then get leaves as
    /// [`Self::select_focused`] picks them (with its `speculation`
    /// bound).
    pub fn select_needed(
        &self,
        want: usize,
        mut focus: Option<&mut HashMap<u64, u64>>,
        speculation: Option<f64>,
    ) -> Result<Vec<u64>, StoreError> {
        let mut out = Vec::new();
        let root = self.get(0)?;
        self.collect_needed(0, root, want, &mut out)?;
        if out.len() < want {
            let mut more = Vec::new();
            self.collect(0, root, want, &mut more, &mut focus, speculation)?;
            let taken: std::collections::HashSet<u64> = out.iter().copied().collect();
            out.extend(
                more.into_iter()
                    .filter(|id| !taken.contains(id))
                    .take(want - out.len()),
            );
        }
        Ok(out)
    }

    /// The first pass of [`Self::select_needed`]: takes the leaves that
    /// cover node `id`, and says whether it is covered (proven, in flight,
    /// or every leaf it needs taken) within `want`.
    fn collect_needed(
        &self,
        id: u64,
        n: TopNode,
        want: usize,
        out: &mut Vec<u64>,
    ) -> Result<bool, StoreError> {
        match n.state {
            State::Frontier if out.len() < want => {
                out.push(id);
                Ok(true)
            }
            State::InFlight | State::Proven => Ok(true),
            State::Inner => {
                let or = n.position().turn() == self.header.winner;
                let kids = self.children(&n)?;
                if or
                    && kids
                        .iter()
                        .any(|(_, c)| matches!(c.state, State::InFlight | State::Proven))
                {
                    return Ok(true);
                }
                let mut open: Vec<(u64, TopNode)> = kids
                    .into_iter()
                    .filter(|(_, c)| matches!(c.state, State::Frontier | State::Inner))
                    .collect();
                open.sort_by_key(|(_, c)| c.order(or));
                if or {
                    for (cid, c) in open {
                        if out.len() >= want {
                            break;
                        }
                        if self.collect_needed(cid, c, want, out)? {
                            return Ok(true);
                        }
                    }
                    Ok(false)
                } else {
                    let mut all = true;
                    for (cid, c) in open {
                        if out.len() >= want {
                            return Ok(false);
                        }
                        all &= self.collect_needed(cid, c, want, out)?;
                    }
                    Ok(all)
                }
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
    fn needed_leaves_come_before_a_second_move_of_the_winner() {
        let (dir, store, pos) = scratch("needed");
        let mut t = TopTree::open(&store, Rules::International, &pos, Color::White, 100).unwrap();
        t.expand(0, 200, &HashMap::new()).unwrap();
        // White's best move `a`, its replies `r1` (Black's best) and the
        // others, and White's moves below `r1`.
        let kids = open(&t, 0);
        for &k in &kids[1..] {
            t.set(k, State::Frontier, 1_000_000, 10).unwrap();
        }
        let a = kids[0];
        t.expand(a, 200, &HashMap::new()).unwrap();
        // r1: a reply after which White has several moves (no capture).
        let mut replies = open(&t, a);
        let most = |id: &u64| t.get(*id).unwrap().position().legal_moves().len();
        let at = (0..replies.len())
            .max_by_key(|&i| most(&replies[i]))
            .unwrap();
        let r1 = replies.remove(at);
        replies.insert(0, r1);
        assert!(most(&r1) >= 2);
        t.set(r1, State::Frontier, 10, 1).unwrap();
        for &r in &replies[1..] {
            t.set(r, State::Frontier, 10, 1_000_000).unwrap();
        }
        t.expand(r1, 400, &HashMap::new()).unwrap();
        let below = open(&t, r1);
        // The plain selection takes two moves below r1 (one is
        // speculation); needed-first takes one there and another reply.
        let plain = t.select(2).unwrap();
        assert!(plain.iter().all(|id| below.contains(id)), "{plain:?}");
        let needed = t.select_needed(2, None, None).unwrap();
        assert_eq!(needed.len(), 2, "{needed:?}");
        assert!(below.contains(&needed[0]), "{needed:?}");
        assert!(replies[1..].contains(&needed[1]), "{needed:?}");
        // With r1's first move in flight, r1 is covered: the leaves go to
        // the other replies.
        t.set(needed[0], State::InFlight, 10, 10).unwrap();
        let next = t.select_needed(3, None, None).unwrap();
        assert!(next.iter().all(|id| replies[1..].contains(id)), "{next:?}");
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
