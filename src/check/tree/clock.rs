//! The fifty-move rule on a win-tree file: the worst (largest) half-move
//! clock at every node over all paths from the node certified into it,
//! transpositions included.
//!
//! Inside a region of the graph of regions ([`super::graph`]) the tree is
//! a tree: a node's clock is the plies since the last capture or pawn
//! move when one lies between the region's top and the node (the walk
//! checks those), else the clock at the top plus the plies from the top.
//! So only the region tops need the worst over paths: an edge into a
//! region brings either a clock of its own (a capture or pawn move on the
//! way) or its source region's worst clock plus its plies. One pass in
//! topological order gives every region's worst clock and the edge it
//! comes by; a node's worst clock is then its region's plus its plies.
//! Cost: O(regions + edges) time, 8 bytes per region for the deepest node
//! and 8 for the worst clock and its edge.

use super::graph::Shape;

/// No capture or pawn move between a region's top and a node.
pub(super) const NO_RESET: u32 = u32::MAX;

/// No path from the node certified reaches the region.
pub(super) const UNREACHED: u32 = u32::MAX;

/// An edge of the graph of regions: from a region to the region of a
/// transposition target, through the node `via` of the source region (a
/// transposition pointing at the target, or the target itself where its
/// parent lies in the source region). 16 bytes: plies are at most
/// [`crate::check::MAX_PLIES`], so they fit 16 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Edge {
    /// The source region.
    pub from: u32,
    /// The target region.
    pub to: u32,
    /// The slot the edge leaves by.
    pub via: u32,
    /// Plies from the source region's top to the target.
    pub plies: u16,
    /// Plies since the last capture or pawn move on the way, when there is
    /// one below the source region's top; else `u16::MAX`.
    pub since: u16,
}

/// Plies as an edge holds them (saturating; [`NO_RESET`] kept apart).
fn narrow(plies: u32) -> u16 {
    if plies == NO_RESET {
        u16::MAX
    } else {
        u16::try_from(plies)
            .unwrap_or(u16::MAX - 1)
            .min(u16::MAX - 1)
    }
}

impl Edge {
    /// An edge; `since` is [`NO_RESET`] when no capture or pawn move lies
    /// on the way.
    pub fn new(from: u32, to: u32, plies: u32, since: u32, via: u32) -> Edge {
        Edge {
            from,
            to,
            via,
            plies: narrow(plies),
            since: narrow(since),
        }
    }

    /// Whether a capture or pawn move lies on the way.
    pub fn resets(&self) -> bool {
        self.since != u16::MAX
    }

    /// The clock the edge brings to its target, from the source region's
    /// worst clock.
    fn clock(&self, from_clock: u32) -> u32 {
        if self.resets() {
            u32::from(self.since)
        } else {
            from_clock.saturating_add(u32::from(self.plies))
        }
    }
}

/// A table leaf under the fifty-move rule that the tables score a win in
/// `win_in` plies, with no capture or pawn move between its region's top
/// and itself: it counts iff its worst clock plus `win_in` is at most 100.
#[derive(Clone, Copy, Debug)]
pub(super) struct FiftyLeaf {
    /// Its region.
    pub region: u32,
    /// Plies from the region's top.
    pub plies: u32,
    /// The table's distance to the win (plies).
    pub win_in: u32,
    /// Its slot.
    pub slot: u32,
    /// Its position.
    pub key: super::Key,
}

/// Packs a region's deepest node for an atomic maximum: deeper first, then
/// the smaller slot. Never 0 (0 is "none").
pub(super) fn pack_deepest(plies: u32, slot: u32) -> u64 {
    (u64::from(plies) + 1) << 32 | u64::from(u32::MAX - slot)
}

/// The plies and slot of a packed deepest node, `None` for none.
pub(super) fn unpack_deepest(v: u64) -> Option<(u32, u32)> {
    (v != 0).then(|| (((v >> 32) - 1) as u32, u32::MAX - v as u32))
}

/// Every region's worst clock at its top, and the edge it comes by.
pub(super) struct Clocks {
    /// By region: the worst clock at its top ([`UNREACHED`]: none).
    pub worst: Vec<u32>,
    /// By region: the index in the edge list of the edge bringing the
    /// worst clock (`u32::MAX` for the first region and unreached ones).
    pub pred: Vec<u32>,
}

/// The worst clock at every region's top: `first` (where the walk began)
/// starts at `clock0`, and each edge, in topological order, brings its
/// clock. `edges` as [`super::graph::graph`] left them (sorted by source),
/// `shape` its result for an acyclic graph.
pub(super) fn propagate(shape: &Shape, edges: &[Edge], first: u32, clock0: u32) -> Clocks {
    let regions = shape.order.len();
    let mut worst = vec![UNREACHED; regions];
    let mut pred = vec![u32::MAX; regions];
    worst[first as usize] = clock0;
    for &v in &shape.order {
        let w = worst[v as usize];
        if w == UNREACHED {
            continue;
        }
        let (lo, hi) = (shape.start[v as usize], shape.start[v as usize + 1]);
        for (i, e) in edges[lo as usize..hi as usize].iter().enumerate() {
            let c = e.clock(w);
            let t = &mut worst[e.to as usize];
            if *t == UNREACHED || c > *t {
                *t = c;
                pred[e.to as usize] = lo + i as u32;
            }
        }
    }
    Clocks { worst, pred }
}

impl Clocks {
    /// The worst clock at a node `plies` below the top of `region` with no
    /// capture or pawn move in between (`None`: the region is unreached).
    pub fn at(&self, region: u32, plies: u32) -> Option<u32> {
        let w = self.worst[region as usize];
        (w != UNREACHED).then(|| w.saturating_add(plies))
    }

    /// The edges of the worst path into `region`, from the first region's
    /// top on, as indices into the edge list.
    pub fn path_into(&self, edges: &[Edge], region: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut r = region;
        while self.pred[r as usize] != u32::MAX && out.len() <= self.pred.len() {
            let e = self.pred[r as usize];
            out.push(e);
            r = edges[e as usize].from;
        }
        out.reverse();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::tree::graph::graph;

    /// Regions 0 (the root's), 1 and 2: the root reaches target 1 by a
    /// capture two plies before it, and by a transposition 7 plies below
    /// its top with no capture on the way; 1 reaches 2 after 3 quiet
    /// plies. The short path (the capture) gives 1 a clock of 2; the
    /// transposition gives 90 + 7 = 97, and 2 then has 100.
    #[test]
    fn the_worst_clock_arrives_through_the_transposition() {
        let mut edges = vec![
            Edge::new(0, 1, 5, 2, 10),
            Edge::new(0, 1, 7, NO_RESET, 20),
            Edge::new(1, 2, 3, NO_RESET, 30),
        ];
        let shape = graph(3, &mut edges, &[9, 3, 4], 0);
        assert!(shape.acyclic);
        assert_eq!(shape.longest, 14);
        let c = propagate(&shape, &edges, 0, 90);
        assert_eq!(c.worst, vec![90, 97, 100]);
        let path: Vec<u32> = c
            .path_into(&edges, 2)
            .iter()
            .map(|&e| edges[e as usize].via)
            .collect();
        assert_eq!(path, vec![20, 30]);
        assert_eq!(c.at(2, 4), Some(104));
        // From a clock of 0 the capture's clock is the worst into 1.
        let c = propagate(&shape, &edges, 0, 0);
        assert_eq!(c.worst, vec![0, 7, 10]);
        let via = edges[c.pred[1] as usize].via;
        assert_eq!(via, 20, "the quiet edge still brings more (7 > 2)");
    }

    #[test]
    fn a_capture_on_the_way_caps_the_clock() {
        let mut edges = vec![Edge::new(0, 1, 60, 1, 5), Edge::new(1, 2, 2, 0, 6)];
        let shape = graph(4, &mut edges, &[0, 0, 0, 0], 0);
        let c = propagate(&shape, &edges, 0, 99);
        assert_eq!(c.worst, vec![99, 1, 0, UNREACHED]);
        assert_eq!(c.at(3, 1), None);
        assert_eq!(c.path_into(&edges, 2), vec![0, 1]);
    }

    #[test]
    fn edges_are_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<Edge>(), 16);
        let e = Edge::new(1, 2, 70_000, NO_RESET, 3);
        assert!(!e.resets());
        assert_eq!(e.clock(5), 5 + 65_534);
        assert!(Edge::new(1, 2, 7, 0, 3).resets());
    }

    #[test]
    fn deepest_nodes_pack_deeper_then_first() {
        assert!(pack_deepest(5, 100) > pack_deepest(4, 1));
        assert!(pack_deepest(5, 1) > pack_deepest(5, 100));
        assert!(pack_deepest(0, u32::MAX - 1) > 0);
        assert_eq!(unpack_deepest(pack_deepest(7, 42)), Some((7, 42)));
        assert_eq!(unpack_deepest(0), None);
    }
}
