//! The region graph: transposition targets cut the tree into regions; an
//! edge leads from a region to a target region with the plies between
//! them. Its topological order finds cycles and the longest line (and,
//! under the fifty-move rule, the worst clocks: [`super::clock`]).

use super::clock::Edge;
use rayon::prelude::*;

/// What the region graph says: whether it is acyclic, the longest line
/// from the root in plies, a region on a cycle, and (acyclic) the
/// topological order with the edge list's offsets by source region.
pub(super) struct Shape {
    pub acyclic: bool,
    pub longest: u64,
    pub cycle_at: Option<u32>,
    /// The regions in topological order (sources first); empty when
    /// cyclic.
    pub order: Vec<u32>,
    /// The edges leaving region `v` are `edges[start[v]..start[v + 1]]`.
    pub start: Vec<u32>,
}

/// Topological order of the region graph: `local` the deepest ply inside
/// each region, `root` the region the longest line starts from. `edges`
/// are sorted by source and target and thinned: per pair of regions one
/// edge without a capture or pawn move on the way (the longest) and one
/// with (the one bringing the largest clock, given the largest plies of
/// its kind for the longest line).
pub(super) fn graph(regions: usize, edges: &mut Vec<Edge>, local: &[u32], root: u32) -> Shape {
    let value = |e: &Edge| if e.resets() { e.since } else { e.plies };
    edges.par_sort_unstable_by_key(|e| (e.from, e.to, e.resets(), u16::MAX - value(e)));
    edges.dedup_by(|a, b| {
        let same = a.from == b.from && a.to == b.to && a.resets() == b.resets();
        if same && b.resets() {
            // The clock it brings does not depend on its plies.
            b.plies = b.plies.max(a.plies);
        }
        same
    });
    let mut start = vec![0u32; regions + 1];
    for e in edges.iter() {
        start[e.from as usize + 1] += 1;
    }
    for i in 0..regions {
        start[i + 1] += start[i];
    }
    let out = |v: usize| &edges[start[v] as usize..start[v + 1] as usize];
    let mut indeg = vec![0u32; regions];
    for e in edges.iter() {
        indeg[e.to as usize] += 1;
    }
    let mut order = Vec::with_capacity(regions);
    let mut queue: Vec<u32> = (0..regions as u32)
        .filter(|&v| indeg[v as usize] == 0)
        .collect();
    while let Some(v) = queue.pop() {
        order.push(v);
        for e in out(v as usize) {
            indeg[e.to as usize] -= 1;
            if indeg[e.to as usize] == 0 {
                queue.push(e.to);
            }
        }
    }
    if order.len() != regions {
        // Strip nodes that lead nowhere else, to land on a cycle.
        let mut left: Vec<bool> = vec![true; regions];
        for &v in &order {
            left[v as usize] = false;
        }
        let mut changed = true;
        while changed {
            changed = false;
            for v in 0..regions {
                if left[v] && !out(v).iter().any(|e| left[e.to as usize]) {
                    left[v] = false;
                    changed = true;
                }
            }
        }
        let at = (0..regions as u32).find(|&v| left[v as usize] && v != root);
        return Shape {
            acyclic: false,
            longest: 0,
            cycle_at: at,
            order: Vec::new(),
            start,
        };
    }
    let mut longest = vec![0u64; regions];
    for &v in order.iter().rev() {
        let mut best = local[v as usize] as u64;
        for e in out(v as usize) {
            best = best.max(e.plies as u64 + longest[e.to as usize]);
        }
        longest[v as usize] = best;
    }
    Shape {
        acyclic: true,
        longest: longest[root as usize],
        cycle_at: None,
        order,
        start,
    }
}
