//! The last pass: every entry of the size table is the true subtree size
//! of its node, the number of distinct non-transposition nodes reachable
//! from it following transposition links (itself included), as the
//! format defines it and the writer computes it. A wrong entry would make
//! browse and serve report a false size.
//!
//! Cost: one parallel pass collects the transposition slots, one walk of
//! the layout finds every node's range end; then, per listed node (in parallel), a walk over whole slot ranges (a node's subtree is the
//! range up to its next sibling in the pre-order layout), so the work is
//! in the transpositions reached, not the nodes: a range is counted at
//! once from the transpositions inside it, and only transpositions leading
//! out of it are followed.

use super::layout::path_to;
use super::{Ctx, Reason, Verdict};
use crate::wintree::{NodeKind, WinTree};
use rayon::prelude::*;
use std::collections::BTreeMap;

/// Transposition slots of the file, sorted, with their targets.
struct Transpositions {
    slots: Vec<u32>,
    targets: Vec<u32>,
}

impl Transpositions {
    fn collect(tree: &WinTree) -> Transpositions {
        const CHUNK: u32 = 1 << 16;
        let n = tree.len();
        let parts: Vec<Vec<(u32, u32)>> = (0..n.div_ceil(CHUNK))
            .into_par_iter()
            .map(|ch| {
                let lo = (ch * CHUNK).max(1);
                let hi = ((ch + 1) * CHUNK).min(n);
                (lo..hi)
                    .filter_map(|i| match tree.node(i).map(|x| x.kind) {
                        Ok(NodeKind::Transposition { target }) => Some((i, target)),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        let mut t = Transpositions {
            slots: Vec::new(),
            targets: Vec::new(),
        };
        for (s, g) in parts.into_iter().flatten() {
            t.slots.push(s);
            t.targets.push(g);
        }
        t
    }

    /// Indices into `slots` of the transpositions in `[a, b)`.
    fn within(&self, a: u32, b: u32) -> std::ops::Range<usize> {
        self.slots.partition_point(|&s| s < a)..self.slots.partition_point(|&s| s < b)
    }

    /// Non-transposition slots in `[a, b)`.
    fn plain(&self, a: u32, b: u32) -> u64 {
        (b - a) as u64 - self.within(a, b).len() as u64
    }
}

/// Checks every size-table entry; a file without a table passes. The
/// entries are checked in parallel (each walk is independent; the range
/// ends they need are found first, in one walk of the layout); the fault reported
/// is the one at the lowest slot, as a sequential check would find it.
pub(super) fn check(ctx: &Ctx) -> Result<(), Verdict> {
    let tree = ctx.tree;
    if tree.size_table_len() == 0 {
        return Ok(());
    }
    let trans = Transpositions::collect(tree);
    let mut entries: Vec<(u32, i32)> = tree.size_entries().collect();
    entries.sort_unstable();
    entries.dedup();
    let ends = RangeEnds::walk(tree);
    let fault = entries
        .par_iter()
        .filter_map(
            |&(slot, listed)| match subtree_size(tree, &trans, &ends, slot) {
                Err(r) => Some((slot, r)),
                Ok(actual) if listed as i64 != actual as i64 => Some((
                    slot,
                    Reason::WrongSize {
                        slot,
                        listed: listed as i64,
                        actual,
                    },
                )),
                Ok(_) => None,
            },
        )
        .min_by_key(|(slot, _)| *slot);
    match fault {
        Some((slot, reason)) => Err(ctx.located(slot, reason)),
        None => Ok(()),
    }
}

/// The number of distinct non-transposition nodes reachable from `slot`
/// (a transposition counts as its target). `ends` holds the range ends
/// found beforehand; one missing there (a slot the walk could not place)
/// is found now, by a descent from the root that reports what is wrong.
fn subtree_size(
    tree: &WinTree,
    trans: &Transpositions,
    ends: &RangeEnds,
    slot: u32,
) -> Result<u64, Reason> {
    // Visited ranges by start: disjoint, and since ranges of a pre-order
    // tree are nested or disjoint, a new range contains every visited one
    // that starts inside it.
    let mut seen: BTreeMap<u32, u32> = BTreeMap::new();
    let mut count = 0u64;
    let mut stack = vec![tree.resolve(slot)?];
    while let Some(x) = stack.pop() {
        if seen.range(..=x).next_back().is_some_and(|(_, &e)| x < e) {
            continue;
        }
        let end = match ends.get(x) {
            Some(e) => e,
            None => range_end(tree, x)?,
        };
        let inner: Vec<(u32, u32)> = seen.range(x..end).map(|(&a, &b)| (a, b)).collect();
        count += trans.plain(x, end);
        for (a, b) in inner {
            if b > end {
                return Err(Reason::Malformed(format!(
                    "the subtrees of nodes {x} and {a} overlap"
                )));
            }
            count -= trans.plain(a, b);
            seen.remove(&a);
        }
        seen.insert(x, end);
        for k in trans.within(x, end) {
            let t = trans.targets[k];
            if !(x..end).contains(&t) {
                stack.push(tree.resolve(t)?);
            }
        }
    }
    Ok(count)
}

/// The end of every inner node's slot range, found in one walk of the
/// layout from the root: a child's range ends at its next sibling, the last
/// child's at its parent's end. Before, each range end was found by its
/// own descent from the root, once for each of the millions of
/// transposition targets of a table-expanded proof.
struct RangeEnds {
    /// By slot; [`RangeEnds::NONE`] where the walk did not place one.
    ends: Vec<u32>,
}

impl RangeEnds {
    const NONE: u32 = u32::MAX;

    /// Walks the layout. A child whose range does not nest in its
    /// parent's, or that is met twice, is not placed (the descent that
    /// the check falls back to reports it).
    fn walk(tree: &WinTree) -> RangeEnds {
        let n = tree.len();
        let mut ends = vec![Self::NONE; n as usize];
        let mut stack = Vec::new();
        if tree.node(0).is_ok_and(|r| r.has_children()) {
            ends[0] = n;
            stack.push(0u32);
        }
        while let Some(x) = stack.pop() {
            let end = ends[x as usize];
            let Ok(children) = tree.children(x) else {
                continue;
            };
            for c in children {
                let Ok(c) = c else { break };
                let e = c.next_sibling.unwrap_or(end);
                if c.index <= x || e <= c.index || e > end || !c.has_children() {
                    continue;
                }
                if ends[c.index as usize] == Self::NONE {
                    ends[c.index as usize] = e;
                    stack.push(c.index);
                }
            }
        }
        RangeEnds { ends }
    }

    /// The range end of inner node `x`, where the walk placed it (`None`
    /// for a slot without children: [`range_end`] answers those at once).
    fn get(&self, x: u32) -> Option<u32> {
        match self.ends.get(x as usize) {
            Some(&e) if e != Self::NONE => Some(e),
            _ => None,
        }
    }
}

/// The end of a node's slot range: its next sibling's index, or its
/// parent's range end.
fn range_end(tree: &WinTree, x: u32) -> Result<u32, Reason> {
    let node = tree.node(x)?;
    if !node.has_children() {
        return Ok(x + 1);
    }
    path_to(tree, x)
        .map(|(_, end)| end)
        .ok_or_else(|| Reason::Malformed(format!("node {x} cannot be reached from the root")))
}
