//! The region graph: transposition targets cut the tree into regions; an
//! edge leads from a region to a target region with the plies between
//! them. Its topological order finds cycles and the longest line.

use rayon::prelude::*;

/// What the region graph says: whether it is acyclic, the longest line
/// from the root in plies, and a region on a cycle.
pub(super) struct Shape {
    pub acyclic: bool,
    pub longest: u64,
    pub cycle_at: Option<u32>,
}

/// Topological order of the region graph: `edges` are (from, to, plies),
/// `local` the deepest ply inside each region, `root` the region the
/// longest line starts from.
pub(super) fn graph(
    regions: usize,
    edges: &mut Vec<(u32, u32, u32)>,
    local: &[u32],
    root: u32,
) -> Shape {
    // Sorted by (from, to), largest plies first; keep that one per pair.
    edges.par_sort_unstable_by_key(|e| (e.0, e.1, u32::MAX - e.2));
    edges.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    let mut start = vec![0u32; regions + 1];
    for e in edges.iter() {
        start[e.0 as usize + 1] += 1;
    }
    for i in 0..regions {
        start[i + 1] += start[i];
    }
    let out = |v: usize| &edges[start[v] as usize..start[v + 1] as usize];
    let mut indeg = vec![0u32; regions];
    for e in edges.iter() {
        indeg[e.1 as usize] += 1;
    }
    let mut order = Vec::with_capacity(regions);
    let mut queue: Vec<u32> = (0..regions as u32)
        .filter(|&v| indeg[v as usize] == 0)
        .collect();
    while let Some(v) = queue.pop() {
        order.push(v);
        for e in out(v as usize) {
            indeg[e.1 as usize] -= 1;
            if indeg[e.1 as usize] == 0 {
                queue.push(e.1);
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
                if left[v] && !out(v).iter().any(|e| left[e.1 as usize]) {
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
        };
    }
    let mut longest = vec![0u64; regions];
    for &v in order.iter().rev() {
        let mut best = local[v as usize] as u64;
        for e in out(v as usize) {
            best = best.max(e.2 as u64 + longest[e.1 as usize]);
        }
        longest[v as usize] = best;
    }
    Shape {
        acyclic: true,
        longest: longest[root as usize],
        cycle_at: None,
    }
}
