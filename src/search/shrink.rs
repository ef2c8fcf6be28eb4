//! Smaller proofs: after a proof is extracted and written, the stored proof
//! of the root is read back as a DAG of positions and, at each winner
//! node, the stored move may be replaced by another move whose result is
//! already a position of the DAG (a transposition into the rest of the
//! proof), when that leaves fewer distinct positions in the whole proof.
//!
//! The extraction ([`super::extract`]) builds its DAG depth first and takes,
//! at each winner node, the proven move with the smallest size estimate of
//! its own subtree; it cannot see that a move it rejected leads to a
//! position a later part of the proof proves anyway, nor look into proofs
//! written by checkpoints during the search (stored leaves to it). This
//! pass works on the whole stored proof, checkpoints included.
//!
//! # The greedy passes
//!
//! Within one pass the dominator tree of the DAG (from the root) gives, for
//! a winner node `x`, the positions that are in the proof only through `x`
//! (its dominator subtree, `x` excluded): exactly those that leave the
//! proof when `x`'s one move is changed. A move of `x` to a position that
//! is in the proof and not dominated by `x` costs no new position, so the
//! change gains that whole subtree. Winner nodes are taken from the root
//! down (topological order); a changed node's dominated positions are gone
//! for the rest of the pass, and the dominators of the new target's
//! position are stale (their gains may be overstated) until the next pass,
//! which recomputes everything. Passes repeat until nothing changes (at
//! most [`MAX_PASSES`]).
//!
//! # Soundness
//!
//! * Closure: a new move leads to a position of the DAG, whose record (or
//!   game end, or endgame-table leaf) is already part of the closed stored
//!   proof; records are never removed.
//! * No cycle: a move `x -> t` is taken only if `x` cannot be reached from
//!   `t` in the current graph (by a topological order while it holds, else
//!   by a bounded search; when the bound is hit the move is not taken).
//!   Everything reachable from `t` is in the DAG, so no cycle can close
//!   through positions outside it either.
//! * Fifty-move rule: the new move's need (1 for a capture or pawn move,
//!   else 1 + the target's stored need) must be at most `x`'s stored need;
//!   so every position keeps fitting every clock it is reached at (the
//!   stored needs along every edge of the store stay consistent: a record's
//!   need bounds the need through each of its moves), and the rewritten
//!   record gets that smaller or equal need.
//!
//! Rewritten records keep their verdict (`Win`), get the new move, the size
//! `1 +` the target's stored size (a winner node's proof is itself plus
//! its one child's), and the endgame-table flag of the target. Sizes of
//! other records are left as they are (estimates for move ordering).

use crate::rules::{Color, Move, Position};
use crate::store::{FLAG_TABLES, Key, Need, Record, Store, StoreError, WinLoss};
use crate::stored::{StoredNode, StoredProof};
use crate::vocab::RuleSet;
use std::collections::HashMap;

/// Passes at most.
pub const MAX_PASSES: usize = 8;

/// Nodes visited at most, over a whole run, by the bounded searches that
/// rule out a cycle where the topological order cannot.
const CYCLE_SEARCH_BUDGET: u64 = 50_000_000;

/// No node.
pub(super) const NONE: u32 = u32::MAX;

/// An alternative move of a winner node: the node it leads to, and the
/// headroom need through it (fifty-move rule).
#[derive(Clone, Copy, Debug)]
pub(super) struct Alt {
    pub(super) target: u32,
    pub(super) need: u8,
}

/// An abstract proof DAG for the greedy passes: node 0 is the root; a
/// winner node has one child (the stored move's) and its alternatives;
/// any other node has all its children (a loser node) or none (a leaf).
#[derive(Default)]
pub(super) struct Dag {
    /// The children of each node.
    pub(super) kids: Vec<Vec<u32>>,
    /// Whether a node is a winner node (one move, may change).
    pub(super) winner: Vec<bool>,
    /// The alternatives of each winner node (empty for the others).
    pub(super) alts: Vec<Vec<Alt>>,
    /// Each node's stored headroom need (fifty-move rule; else unused).
    pub(super) need: Vec<u8>,
    /// Whether the fifty-move rule holds (alternatives must fit the need).
    pub(super) fifty: bool,
    /// For each winner node changed: the index of its chosen alternative.
    pub(super) chosen: Vec<Option<usize>>,
    /// Nodes left for the cycle searches.
    budget: u64,
}

impl Dag {
    /// Adds a node; returns its index.
    pub(super) fn add(&mut self, winner: bool, need: u8) -> u32 {
        let i = self.kids.len() as u32;
        self.kids.push(Vec::new());
        self.winner.push(winner);
        self.alts.push(Vec::new());
        self.need.push(need);
        self.chosen.push(None);
        i
    }

    /// The number of nodes reachable from the root (the proof's distinct
    /// positions); `None` if the graph has a cycle.
    pub(super) fn size(&self) -> Option<u64> {
        topo(&self.kids, 0).map(|o| o.len() as u64)
    }

    /// Runs greedy passes until nothing changes; returns the number of
    /// moves changed (a node changed twice counts twice). Leaves the graph
    /// as it was if it has a cycle.
    pub(super) fn minimise(&mut self) -> u64 {
        self.budget = CYCLE_SEARCH_BUDGET;
        let mut changed = 0;
        for _ in 0..MAX_PASSES {
            match self.pass() {
                Some(0) | None => break,
                Some(c) => changed += c,
            }
        }
        changed
    }

    /// One greedy pass; `None` if the graph has a cycle.
    fn pass(&mut self) -> Option<u64> {
        let n = self.kids.len();
        let d = Doms::new(&self.kids, 0, |_| 1)?;
        let mut switched = vec![false; n];
        let mut stale = vec![false; n];
        let mut order_holds = true;
        let mut changed = 0u64;
        let mut seen = vec![false; n];
        for &x in &d.order {
            let xu = x as usize;
            if !self.winner[xu] || self.alts[xu].is_empty() || stale[xu] {
                continue;
            }
            // Positions in the proof only through `x`.
            let lost = d.dsize[xu] - 1;
            if lost == 0 || d.under(&switched, x) {
                continue;
            }
            let current = self.kids[xu].first().copied();
            // The best alternative and its gain.
            let mut pick: Option<(usize, u64)> = None;
            for ai in 0..self.alts[xu].len() {
                let alt = self.alts[xu][ai];
                let t = alt.target;
                if Some(t) == current || (self.fifty && alt.need > self.need[xu]) {
                    continue;
                }
                let tu = t as usize;
                let gain = if d.rank[tu] == NONE {
                    // Not in the proof: only a leaf, at one new position.
                    if !self.kids[tu].is_empty() {
                        continue;
                    }
                    lost - 1
                } else if d.dominates(x, t) {
                    // Below `x`: what it reaches below `x` stays. (It
                    // cannot reach `x` while the order holds.)
                    if !order_holds && self.reaches(t, x, &mut seen) {
                        continue;
                    }
                    match self.kept_below(&d, x, t, &mut seen) {
                        Some(keep) => lost.saturating_sub(keep),
                        None => continue,
                    }
                } else {
                    if d.under(&switched, t) {
                        continue;
                    }
                    let ordered = order_holds && d.rank[tu] > d.rank[xu];
                    if !ordered && self.reaches(t, x, &mut seen) {
                        continue;
                    }
                    lost
                };
                if gain > 0 && pick.is_none_or(|(_, g)| gain > g) {
                    pick = Some((ai, gain));
                    if gain == lost {
                        break;
                    }
                }
            }
            let pick = pick.map(|(ai, _)| ai);
            let Some(ai) = pick else { continue };
            let t = self.alts[xu][ai].target;
            self.kids[xu] = vec![t];
            self.chosen[xu] = Some(ai);
            switched[xu] = true;
            changed += 1;
            if d.rank[t as usize] != NONE {
                if d.rank[t as usize] < d.rank[xu] {
                    order_holds = false;
                }
                let mut a = t;
                while a != 0 {
                    a = d.idom[a as usize];
                    stale[a as usize] = true;
                }
            }
        }
        Some(changed)
    }

    /// The number of nodes reachable from `t` that `x` dominates (they stay
    /// in the proof if `x` moves to `t`); `None` when the search budget
    /// runs out.
    fn kept_below(&mut self, d: &Doms, x: u32, t: u32, seen: &mut [bool]) -> Option<u64> {
        let mut stack = vec![t];
        let mut visited = vec![t];
        seen[t as usize] = true;
        let mut count = 0u64;
        let mut out = true;
        while let Some(v) = stack.pop() {
            if self.budget == 0 {
                out = false;
                break;
            }
            self.budget -= 1;
            count += 1;
            for &c in &self.kids[v as usize] {
                // A node `x` does not dominate stays anyway, and so does
                // everything it reaches.
                if !seen[c as usize] && d.dominates(x, c) {
                    seen[c as usize] = true;
                    visited.push(c);
                    stack.push(c);
                }
            }
        }
        for v in visited {
            seen[v as usize] = false;
        }
        out.then_some(count)
    }

    /// Whether `to` can be reached from `from` (a bounded search: `true`
    /// when the budget runs out).
    fn reaches(&mut self, from: u32, to: u32, seen: &mut [bool]) -> bool {
        let mut stack = vec![from];
        let mut visited = vec![from];
        seen[from as usize] = true;
        let mut found = false;
        while let Some(v) = stack.pop() {
            if v == to || self.budget == 0 {
                found = true;
                break;
            }
            self.budget -= 1;
            for &c in &self.kids[v as usize] {
                if !seen[c as usize] {
                    seen[c as usize] = true;
                    visited.push(c);
                    stack.push(c);
                }
            }
        }
        for v in visited {
            seen[v as usize] = false;
        }
        found
    }
}

/// The nodes reachable from `root` in a topological order (`root` first,
/// every edge forward); `None` if there is a cycle.
pub(super) fn topo(kids: &[Vec<u32>], root: u32) -> Option<Vec<u32>> {
    let n = kids.len();
    if root as usize >= n {
        return Some(Vec::new());
    }
    // 0: new, 1: on the stack, 2: done.
    let mut state = vec![0u8; n];
    let mut post = Vec::with_capacity(n);
    let mut stack: Vec<(u32, usize)> = vec![(root, 0)];
    state[root as usize] = 1;
    while let Some(top) = stack.last_mut() {
        let (v, i) = *top;
        if let Some(&c) = kids[v as usize].get(i) {
            top.1 += 1;
            match state[c as usize] {
                0 => {
                    state[c as usize] = 1;
                    stack.push((c, 0));
                }
                1 => return None,
                _ => {}
            }
        } else {
            state[v as usize] = 2;
            post.push(v);
            stack.pop();
        }
    }
    post.reverse();
    Some(post)
}

/// The dominator tree of a DAG from its root, with a topological order and
/// each node's dominator-subtree weight: the weight of what is reachable
/// only through the node (itself included).
pub(super) struct Doms {
    /// The reachable nodes in a topological order, the root first.
    pub(super) order: Vec<u32>,
    /// Each node's index in `order` ([`NONE`]: unreachable).
    pub(super) rank: Vec<u32>,
    /// Each reachable node's immediate dominator (the root's own).
    pub(super) idom: Vec<u32>,
    /// Depth in the dominator tree.
    depth: Vec<u32>,
    /// Weight of each node's dominator subtree.
    pub(super) dsize: Vec<u64>,
    root: u32,
}

impl Doms {
    /// The dominators of the graph `kids` from `root`, nodes weighing
    /// `weight`; `None` if the graph has a cycle.
    pub(super) fn new(kids: &[Vec<u32>], root: u32, weight: impl Fn(u32) -> u64) -> Option<Doms> {
        let n = kids.len();
        let order = topo(kids, root)?;
        let mut rank = vec![NONE; n];
        for (i, &v) in order.iter().enumerate() {
            rank[v as usize] = i as u32;
        }
        // Predecessors among reachable nodes (CSR).
        let mut start = vec![0u32; n + 1];
        for &v in &order {
            for &c in &kids[v as usize] {
                start[c as usize + 1] += 1;
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut preds = vec![0u32; start[n] as usize];
        for &v in &order {
            for &c in &kids[v as usize] {
                preds[fill[c as usize] as usize] = v;
                fill[c as usize] += 1;
            }
        }
        // Immediate dominators in topological order (every predecessor
        // first): the nearest common dominator of the predecessors.
        let mut idom = vec![NONE; n];
        let mut depth = vec![0u32; n];
        let mut dsize = vec![0u64; n];
        if !order.is_empty() {
            idom[root as usize] = root;
        }
        for &v in order.iter().skip(1) {
            let mut d = NONE;
            for &p in &preds[start[v as usize] as usize..start[v as usize + 1] as usize] {
                d = if d == NONE {
                    p
                } else {
                    let (mut a, mut b) = (d, p);
                    while a != b {
                        if depth[a as usize] >= depth[b as usize] {
                            a = idom[a as usize];
                        } else {
                            b = idom[b as usize];
                        }
                    }
                    a
                };
            }
            idom[v as usize] = d;
            depth[v as usize] = depth[d as usize] + 1;
        }
        for &v in order.iter().rev() {
            dsize[v as usize] += weight(v);
            if v != root {
                dsize[idom[v as usize] as usize] += dsize[v as usize];
            }
        }
        Some(Doms {
            order,
            rank,
            idom,
            depth,
            dsize,
            root,
        })
    }

    /// Whether `x` dominates the reachable node `t` (every path from the
    /// root to `t` passes `x`; `t` itself included).
    pub(super) fn dominates(&self, x: u32, t: u32) -> bool {
        let mut a = t;
        while self.depth[a as usize] > self.depth[x as usize] {
            a = self.idom[a as usize];
        }
        a == x
    }

    /// Whether a strict dominator of the reachable node `v` is marked in
    /// `marked` (changed: `v` may have left the proof).
    pub(super) fn under(&self, marked: &[bool], v: u32) -> bool {
        let mut a = v;
        while a != self.root {
            a = self.idom[a as usize];
            if marked[a as usize] {
                return true;
            }
        }
        false
    }
}

/// What a shrink did.
#[derive(Clone, Copy, Debug, Default)]
pub struct ShrinkFigures {
    /// Distinct positions of the stored proof before.
    pub before: u64,
    /// And after.
    pub after: u64,
    /// Records rewritten with another move.
    pub rewritten: u64,
}

/// A position of the loaded proof.
pub(super) struct Loaded {
    pub(super) pos: Position,
    /// The record (none for a game end or table leaf).
    pub(super) record: Option<Record>,
    /// Whether the proof here is an endgame-table leaf.
    pub(super) table_leaf: bool,
}

/// A stored proof read into memory: its [`Dag`], the position of each
/// node, the index of each packed position, for each winner node the
/// moves of its alternatives (parallel to `dag.alts`), and each node's
/// search-table key along the path the breadth-first load reached it by
/// (from the root's key given to [`load_proof`]).
pub(super) struct LoadedProof {
    pub(super) dag: Dag,
    pub(super) nodes: Vec<Loaded>,
    pub(super) ids: HashMap<Key, u32>,
    pub(super) alt_moves: Vec<Vec<Move>>,
    pub(super) keys: Vec<u64>,
}

/// Reads the stored proof of `root` (a win for `winner`, search-table key
/// `root_key`) breadth first, with every winner node's moves into other
/// positions of the proof as its alternatives. `Ok(None)`: it does not
/// close, or has more than `max_positions` positions.
pub(super) fn load_proof(
    store: &Store,
    rules: RuleSet,
    root: &Position,
    root_key: u64,
    winner: Color,
    endgame_leaf: &dyn Fn(&Position) -> Option<u8>,
    max_positions: u64,
) -> Result<Option<LoadedProof>, StoreError> {
    let reader = store.reader()?;
    let proof = StoredProof::new(&reader, rules);
    let fifty = rules.fifty_move;
    let mut dag = Dag {
        fifty,
        ..Dag::default()
    };
    let mut loaded: Vec<Loaded> = Vec::new();
    let mut ids: HashMap<Key, u32> = HashMap::new();
    // Breadth first from the root.
    let add = |dag: &mut Dag, loaded: &mut Vec<Loaded>, pos: Position| -> u32 {
        let i = dag.add(pos.turn() == winner, 0);
        loaded.push(Loaded {
            pos,
            record: None,
            table_leaf: false,
        });
        i
    };
    ids.insert(root.pack().0, add(&mut dag, &mut loaded, *root));
    let mut keys = vec![root_key];
    let mut next = 0usize;
    while next < loaded.len() {
        if loaded.len() as u64 > max_positions {
            return Ok(None);
        }
        let i = next;
        next += 1;
        let pos = loaded[i].pos;
        let moves: Vec<Move> = match proof.node_for(&pos, winner)? {
            Err(_) | Ok(StoredNode::Missing) => return Ok(None),
            Ok(StoredNode::GameEnd(_)) => Vec::new(),
            Ok(StoredNode::TableSized) => match endgame_leaf(&pos) {
                Some(need) => {
                    dag.need[i] = need;
                    loaded[i].table_leaf = true;
                    Vec::new()
                }
                None => return Ok(None),
            },
            Ok(n @ (StoredNode::Win { .. } | StoredNode::Loss { .. })) => {
                loaded[i].record = n.record().copied();
                if fifty {
                    dag.need[i] = proof.need(&pos)?.unwrap_or(Need::MAX);
                }
                n.moves(&pos)
            }
        };
        for m in moves {
            let child = pos.play(m);
            let key = child.pack().0;
            let c = match ids.get(&key) {
                Some(&c) => c,
                None => {
                    let c = add(&mut dag, &mut loaded, child);
                    ids.insert(key, c);
                    keys.push(super::dfpn::child_key(keys[i], m, &child));
                    c
                }
            };
            dag.kids[i].push(c);
        }
    }
    // Alternatives: moves into positions of the proof.
    let mut alt_moves: Vec<Vec<Move>> = vec![Vec::new(); loaded.len()];
    for (i, l) in loaded.iter().enumerate() {
        let Some(r) = l.record else { continue };
        if r.verdict != WinLoss::Win || l.pos.turn() != winner {
            continue;
        }
        let current = dag.kids[i][0];
        for &m in l.pos.legal_moves().iter() {
            let Some(&t) = ids.get(&l.pos.play(m).pack().0) else {
                continue;
            };
            if t == current || dag.winner[t as usize] {
                continue;
            }
            let need = if m.is_irreversible() {
                1
            } else {
                dag.need[t as usize].saturating_add(1)
            };
            dag.alts[i].push(Alt { target: t, need });
            alt_moves[i].push(m);
        }
    }
    Ok(Some(LoadedProof {
        dag,
        nodes: loaded,
        ids,
        alt_moves,
        keys,
    }))
}

/// Reads the stored proof of `root` (a win for `winner`) into a [`Dag`],
/// minimises it and rewrites the changed winner records. `endgame_leaf`
/// says whether a position without a record is an endgame-table win for
/// the winner, and its need. `Ok(None)`: the stored proof does not close
/// (nothing is changed; the caller's walk reports it), or is too big.
pub fn shrink_stored_proof(
    store: &Store,
    rules: RuleSet,
    root: &Position,
    winner: Color,
    endgame_leaf: &dyn Fn(&Position) -> Option<u8>,
    max_positions: u64,
) -> Result<Option<ShrinkFigures>, StoreError> {
    let fifty = rules.fifty_move;
    let Some(LoadedProof {
        mut dag,
        nodes: loaded,
        alt_moves,
        ..
    }) = load_proof(store, rules, root, 0, winner, endgame_leaf, max_positions)?
    else {
        return Ok(None);
    };
    let before = dag.size().unwrap_or(0);
    let rewritten = dag.minimise();
    let after = dag.size().unwrap_or(before);
    let mut figures = ShrinkFigures {
        before,
        after,
        rewritten: 0,
    };
    if rewritten == 0 || after >= before {
        return Ok(Some(figures));
    }
    let mut batch: Vec<(Key, Record, Need)> = Vec::new();
    for (i, l) in loaded.iter().enumerate() {
        let Some(ai) = dag.chosen[i] else { continue };
        let Some(old) = l.record else { continue };
        let alt = dag.alts[i][ai];
        let t = &loaded[alt.target as usize];
        let (tsize, tables) = match t.record {
            Some(tr) => (tr.size, tr.rests_on_tables()),
            None => (1, t.table_leaf),
        };
        let record = Record {
            verdict: WinLoss::Win,
            flags: (old.flags & !FLAG_TABLES) | if tables { FLAG_TABLES } else { 0 },
            mv: alt_moves[i][ai].watkins_code(),
            size: tsize.saturating_add(1),
        };
        batch.push((l.pos.pack().0, record, if fifty { alt.need } else { 0 }));
    }
    store.replace_batch(rules, &batch)?;
    figures.rewritten = batch.len() as u64;
    Ok(Some(figures))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DAG from edges: `w` marks winner nodes; `alts` (node, target,
    /// need) their alternatives.
    fn dag(n: usize, w: &[u32], edges: &[(u32, u32)], alts: &[(u32, u32, u8)]) -> Dag {
        let mut d = Dag::default();
        for i in 0..n {
            d.add(w.contains(&(i as u32)), 10);
        }
        for &(a, b) in edges {
            d.kids[a as usize].push(b);
        }
        for &(x, t, need) in alts {
            d.alts[x as usize].push(Alt { target: t, need });
        }
        d
    }

    /// Root 0 (loser) with children 1 and 2 (winners). 1 -> 3 -> {5, 6,
    /// 7}; 2 -> 4 -> {8}.
    const TWO_BRANCHES: [(u32, u32); 8] = [
        (0, 1),
        (0, 2),
        (1, 3),
        (2, 4),
        (3, 5),
        (3, 6),
        (3, 7),
        (4, 8),
    ];

    /// On [`TWO_BRANCHES`], winner 1 may also move to 4 (already in the
    /// proof through 2): its own subtree {3, 5, 6, 7} leaves.
    #[test]
    fn a_move_into_the_rest_of_the_proof_replaces_a_bigger_subtree() {
        let mut d = dag(9, &[1, 2], &TWO_BRANCHES, &[(1, 4, 1)]);
        assert_eq!(d.size(), Some(9));
        assert_eq!(d.minimise(), 1);
        assert_eq!(d.kids[1], vec![4]);
        assert_eq!(d.chosen[1], Some(0));
        assert_eq!(d.size(), Some(5));
    }

    /// The first proven move (to 3) shares nothing; the alternative 4 is
    /// also reached from elsewhere: taken even though 4 comes later in the
    /// order. But a move back up to an ancestor would close a cycle: never.
    #[test]
    fn no_cycle_is_ever_made() {
        // 0 -> {1, 2}; 1 -> 3 -> {5, 6}; 2 -> 4 -> {1}.
        let edges = [(0, 1), (0, 2), (1, 3), (2, 4), (3, 5), (3, 6), (4, 1)];
        // Winner 1 could move to 4, which reaches 1: a cycle.
        let mut d = dag(7, &[1, 2], &edges, &[(1, 4, 1)]);
        assert_eq!(d.minimise(), 0);
        assert_eq!(d.kids[1], vec![3]);
        assert_eq!(d.size(), Some(7));
    }

    /// Under the fifty-move rule an alternative needing more headroom than
    /// the node's stored need is not taken ([`TWO_BRANCHES`]).
    #[test]
    fn alternatives_must_fit_the_need() {
        let mut d = dag(9, &[1, 2], &TWO_BRANCHES, &[(1, 4, 11)]);
        d.fifty = true;
        assert_eq!(d.minimise(), 0);
        d.alts[1][0].need = 10;
        assert_eq!(d.minimise(), 1);
        assert_eq!(d.size(), Some(5));
    }

    /// A target below the node itself (in the subtree that would leave)
    /// keeps what it reaches: 1 -> 5 directly drops 2, 3 and 4. A move is
    /// not changed when nothing hangs on the node alone.
    #[test]
    fn a_move_below_keeps_only_what_it_reaches_and_no_gain_no_change() {
        // 0 -> 1 -> 2 -> {3, 4}; 3 -> 5 (a leaf). Winners 1 and 3.
        let edges = [(0, 1), (1, 2), (2, 3), (2, 4), (3, 5)];
        let mut d = dag(6, &[1, 3], &edges, &[(1, 5, 1)]);
        assert_eq!(d.minimise(), 1);
        assert_eq!(d.kids[1], vec![5]);
        assert_eq!(d.size(), Some(3));
        // 0 -> {1, 2}; winner 1 -> 3 (a leaf, also a child of 2): nothing
        // hangs on 1 alone.
        let edges = [(0, 1), (0, 2), (1, 3), (2, 3), (2, 4)];
        let mut d = dag(5, &[1], &edges, &[(1, 4, 1)]);
        assert_eq!(d.minimise(), 0);
        assert_eq!(d.kids[1], vec![3]);
    }

    /// Changes chain over passes: after one node moves, another's subtree
    /// becomes its own and can go too.
    #[test]
    fn passes_repeat_until_nothing_changes() {
        // 0 -> {1, 2, 9}; winners 1, 2, 9. 1 -> 3 -> {4, 5}; 2 -> 6 ->
        // {7}; 9 -> 10 -> {7, 11}. 1 may go to 6, 9 may go to 6. (StoredNode 8
        // is not in the proof.)
        let edges = [
            (0, 1),
            (0, 2),
            (0, 9),
            (1, 3),
            (3, 4),
            (3, 5),
            (2, 6),
            (6, 7),
            (9, 10),
            (10, 7),
            (10, 11),
        ];
        let mut d = dag(12, &[1, 2, 9], &edges, &[(1, 6, 1), (9, 6, 1)]);
        assert_eq!(d.size(), Some(11));
        assert_eq!(d.minimise(), 2);
        assert_eq!(d.kids[1], vec![6]);
        assert_eq!(d.kids[9], vec![6]);
        assert_eq!(d.size(), Some(6));
    }
}
