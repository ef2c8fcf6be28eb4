//! Smaller proofs by proving alternatives: after the greedy passes
//! ([`super::shrink`]), which only move a winner node into positions the
//! proof holds already, this pass tries the winner's other moves into
//! positions outside the proof. Each is proven by a search bounded by
//! the positions it could save, its proof extracted and written; the move
//! is changed where the new proof adds fewer positions than leave with
//! the old one.
//!
//! # One pass
//!
//! The stored proof of the root is loaded with its dominator tree
//! ([`super::shrink::Doms`]). Winner nodes are taken from the root down
//! (a topological order, `rank`). For a winner node `x`, the positions in
//! the proof only through it (`lost`: its dominator subtree, `x`
//! excluded) leave when its move changes. For each other move to a
//! position `c` outside the proof: a game won by the winner, or an
//! endgame-table win, costs one position; else the store's proof of `c`
//! (proven now by a df-pn search of at most [`NODES_PER_POSITION`] nodes
//! per position of `lost` when the store has none) is walked, counting
//! the positions it adds: those outside the proof and those below `x`
//! that it keeps. The walk stops at positions of the proof that stay
//! (not below `x`). The cheapest move is taken when it costs less than
//! `lost`. Rewritten records are written at the end of the pass; passes
//! repeat (at most [`PASSES`]), each on the proof as stored.
//!
//! # Soundness
//!
//! * Closure: a new move leads to a position whose stored proof closes
//!   (walked to its end, or to positions of the closed proof).
//! * No cycle. Within a pass the ranks stay a topological order of the
//!   changing graph: the walk from `c` may stop only at positions of the
//!   proof ranked after `x` (they reach only positions ranked after
//!   them), never reaches `x` itself, never enters a position an earlier
//!   change of this pass took into its proof or left (rejected, not
//!   walked), and checks for cycles of its own (a position met again on
//!   its path). The positions a change adds are ranked just after `x`.
//! * The fifty-move rule: not run under it (the proof's needs would have
//!   to be kept, as the greedy passes do).
//!
//! The records of the proofs of alternatives that are not taken stay in
//! the store, unused by the root's proof: every stored record is a proof.

use super::Prover;
use super::dfpn::child_key;
use super::report::SearchError;
use super::shrink::{Doms, LoadedProof, NONE, load_proof};
use super::tt::INF;
use super::write::Overlay;
use crate::rules::{Move, Outcome, Position};
use crate::store::{FLAG_TABLES, Key, Need, Record, StoreError, WinLoss};
use crate::stored::{StoredNode, StoredProof};
use std::collections::{HashMap, HashSet};

/// Winner nodes with fewer positions than this hanging on them alone are
/// left as they are.
pub const MIN_LOST: u64 = 2;

/// The search of an alternative expands at most this many nodes per
/// position it could save (at least [`MIN_NODES`], at most
/// [`MAX_NODES`]).
pub const NODES_PER_POSITION: u64 = 8;

/// See [`NODES_PER_POSITION`].
pub const MIN_NODES: u64 = 64;

/// See [`NODES_PER_POSITION`].
pub const MAX_NODES: u64 = 1 << 20;

/// Passes at most.
pub const PASSES: usize = 2;

/// Positions a walk may go down at most (deeper: not taken).
const MAX_WALK_DEPTH: usize = 4_096;

/// What a pass over alternatives did (in `prove --json` as
/// `alternatives`).
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct AlternativeFigures {
    /// Searches of alternatives.
    pub searches: u64,
    /// Of those, alternatives proven.
    pub proven: u64,
    /// Nodes those searches (and their extractions) expanded.
    pub nodes: u64,
    /// Records rewritten with another move.
    pub rewritten: u64,
    /// Cut short by the run's limits or an interrupt (Ctrl-C): the stored
    /// proof is whole, but not as small as a full pass would make it.
    pub stopped: bool,
}

/// A walk of an alternative's stored proof against the current one.
struct Walked {
    /// Positions the alternative adds (or keeps below the node).
    cost: u64,
    /// Positions of the proof it stops at (they stay).
    free: Vec<u32>,
    /// Positions it goes through.
    keys: Vec<Key>,
    /// The stored size of the alternative's proof, and whether it rests
    /// on endgame tables.
    size: u64,
    tables: bool,
}

/// What one position of a walk is.
enum Step {
    /// Counted, nothing below.
    Leaf,
    /// Counted, and walked into.
    Into(Vec<Move>),
    /// A position of the proof that stays: not counted, not walked.
    Free(u32),
    /// The alternative cannot be taken.
    Reject,
}

/// The pass's view of the proof: the loaded proof, its dominators, the
/// nodes changed so far and the positions taken or left by those changes.
struct PassState<'a> {
    lp: &'a LoadedProof,
    d: &'a Doms,
    switched: Vec<bool>,
    taken: HashSet<Key>,
}

impl PassState<'_> {
    /// Whether the node `v` left the proof with an earlier change.
    fn gone(&self, v: u32) -> bool {
        self.d.under(&self.switched, v)
    }
}

impl Prover<'_> {
    /// Runs the passes over the stored proof of the proven `root`, after
    /// the greedy ones; `max_positions` as for those. Does nothing under
    /// the fifty-move rule or without a store.
    pub(super) fn shrink_by_alternatives(
        &mut self,
        root: &Position,
        max_positions: u64,
    ) -> Result<AlternativeFigures, SearchError> {
        let mut figures = AlternativeFigures::default();
        if self.writer.store.is_none() || self.rule_set.fifty_move {
            return Ok(figures);
        }
        // The proofs of alternatives are committed together, not one at a
        // time (a crash before loses only proofs no record points to yet).
        self.writer.defer();
        let r = self.alternative_passes(root, max_positions, &mut figures);
        let c = self.writer.commit_deferred();
        r?;
        c?;
        figures.stopped = self.search.stopped;
        Ok(figures)
    }

    /// The passes of [`Prover::shrink_by_alternatives`].
    fn alternative_passes(
        &mut self,
        root: &Position,
        max_positions: u64,
        figures: &mut AlternativeFigures,
    ) -> Result<(), SearchError> {
        let Some(store) = self.writer.store else {
            return Ok(());
        };
        let rules = self.writer.rule_set;
        // Alternatives a bounded search did not prove, with the bound.
        let mut failed: HashMap<Key, u64> = HashMap::new();
        for _ in 0..PASSES {
            let endgame_leaf = |p: &Position| self.endgame(p).and_then(|(w, n)| w.then_some(n));
            let Some(lp) = load_proof(
                store,
                rules,
                root,
                self.root_key,
                self.prover,
                &endgame_leaf,
                max_positions,
            )?
            else {
                break;
            };
            let Some(d) = Doms::new(&lp.dag.kids, 0, |_| 1) else {
                break;
            };
            let mut st = PassState {
                lp: &lp,
                d: &d,
                switched: vec![false; lp.dag.kids.len()],
                taken: HashSet::new(),
            };
            let mut stale = vec![false; lp.dag.kids.len()];
            let mut batch: Vec<(Key, Record, Need)> = Vec::new();
            for &x in &d.order {
                let xu = x as usize;
                let Some(rec) = lp.nodes[xu].record else {
                    continue;
                };
                if !lp.dag.winner[xu] || rec.verdict != WinLoss::Win || stale[xu] || st.gone(x) {
                    continue;
                }
                let lost = d.dsize[xu] - 1;
                if lost < MIN_LOST || st.taken.contains(&lp.nodes[xu].pos.pack().0) {
                    continue;
                }
                let Some((m, w)) = self.best_alternative(&st, x, lost, &mut failed, figures)?
                else {
                    if self.search.stopped {
                        break;
                    }
                    continue;
                };
                let record = Record {
                    verdict: WinLoss::Win,
                    flags: (rec.flags & !FLAG_TABLES) | if w.tables { FLAG_TABLES } else { 0 },
                    mv: m.watkins_code(),
                    size: w.size.saturating_add(1),
                };
                batch.push((lp.nodes[xu].pos.pack().0, record, 0));
                st.switched[xu] = true;
                st.taken.extend(w.keys);
                for v in w.free {
                    let mut a = v;
                    while a != 0 {
                        a = d.idom[a as usize];
                        stale[a as usize] = true;
                    }
                }
                if self.search.stopped {
                    break;
                }
            }
            if !batch.is_empty() {
                // The proofs the new moves lead to first.
                self.writer.commit_deferred()?;
                self.writer.defer();
                store.replace_batch(rules, &batch)?;
                figures.rewritten += batch.len() as u64;
            }
            if batch.is_empty() || self.search.stopped {
                break;
            }
        }
        Ok(())
    }

    /// The winner node `x`'s cheapest move into a position outside the
    /// proof, if it costs fewer than `lost` positions.
    fn best_alternative(
        &mut self,
        st: &PassState<'_>,
        x: u32,
        lost: u64,
        failed: &mut HashMap<Key, u64>,
        figures: &mut AlternativeFigures,
    ) -> Result<Option<(Move, Walked)>, SearchError> {
        let pos = st.lp.nodes[x as usize].pos;
        let mut best: Option<(Move, Walked)> = None;
        for &m in pos.legal_moves().iter() {
            let limit = best.as_ref().map_or(lost, |(_, w)| w.cost);
            if limit <= 1 {
                break;
            }
            let c = pos.play(m);
            let key = c.pack().0;
            if st.lp.ids.contains_key(&key) || st.taken.contains(&key) {
                continue;
            }
            let leaf = |tables| Walked {
                cost: 1,
                free: Vec::new(),
                keys: vec![key],
                size: 1,
                tables,
            };
            if let Some(o) = c.outcome(self.rule_set.stalemate) {
                if o == Outcome::Win(self.prover) {
                    best = Some((m, leaf(false)));
                }
                continue;
            }
            if let Some(win) = self.endgame_win(&c) {
                if win {
                    best = Some((m, leaf(true)));
                }
                continue;
            }
            match self.writer.stored_entry(&c)? {
                // The loser is to move at `c`: proven for the winner by a
                // Loss record.
                Some((r, _)) if r.verdict != WinLoss::Loss => continue,
                Some(_) => {}
                None => {
                    // The move's entry in the table, by the key the search
                    // gave it on the path the proof was loaded by: known
                    // lost, it is not tried; else the search goes on from
                    // what the proving search left there.
                    let ckey = child_key(st.lp.keys[x as usize], m, &c);
                    if self.search.tt.get(ckey).is_some_and(|v| v.dn == 0) {
                        continue;
                    }
                    let cap = (limit * NODES_PER_POSITION).clamp(MIN_NODES, MAX_NODES);
                    // Not again with the same bound or a smaller one.
                    if failed.get(&key).is_some_and(|&tried| tried >= cap) {
                        continue;
                    }
                    figures.searches += 1;
                    let proven = self.prove_bounded(&c, ckey, cap, figures)?;
                    if self.search.stopped {
                        return Ok(None);
                    }
                    if !proven {
                        failed.insert(key, cap);
                        continue;
                    }
                    figures.proven += 1;
                }
            }
            if let Some(w) = self.walk_alternative(st, x, &c, limit)?
                && w.cost < limit
            {
                best = Some((m, w));
            }
        }
        Ok(best)
    }

    /// Proves `c` (table key `key`) by a df-pn search from it of at most
    /// `cap` nodes, and writes its proof to the store; whether it did. The
    /// search's path holds `c` alone, so what it proves is proven whatever
    /// came before (the extraction rebuilds the proof from real positions
    /// and walks no cycle); values it finds under the key's path may be
    /// more hopeful than the proving search's, which only costs time. Leaves
    /// `search.stopped` set only when the run's own limits are reached.
    fn prove_bounded(
        &mut self,
        c: &Position,
        key: u64,
        cap: u64,
        figures: &mut AlternativeFigures,
    ) -> Result<bool, SearchError> {
        self.search.path.reset(c.zobrist());
        self.search.root_len = 1;
        let start = self.search.nodes;
        self.search.budget.cap(Some(start + cap));
        let (pn, _, _) = self.mid(c, key, INF, INF);
        let mut proven = false;
        if pn == 0 {
            // The extraction may search again where entries were lost:
            // within the same bound.
            self.search.budget.cap(Some(self.search.nodes + cap));
            proven = self.extract_and_store(c, key)?.is_some();
        }
        self.search.budget.cap(None);
        figures.nodes += self.search.nodes - start;
        self.search.stopped = self.limits_reached();
        Ok(proven && !self.search.stopped)
    }

    /// Walks the stored proof of `c`, a child of the winner node `x`,
    /// against the pass's proof: `None` when it cannot be taken (it
    /// reaches `x` or a position ranked before it, enters what an earlier
    /// change took or left, has a cycle or does not close) or costs
    /// `limit` or more.
    fn walk_alternative(
        &self,
        st: &PassState<'_>,
        x: u32,
        c: &Position,
        limit: u64,
    ) -> Result<Option<Walked>, StoreError> {
        let Some(overlay) = self.writer.overlay() else {
            return Ok(None);
        };
        let proof = StoredProof::new(overlay, self.writer.rule_set);
        let Some(crec) = proof.record(c)? else {
            return Ok(None);
        };
        let mut w = Walked {
            cost: 0,
            free: Vec::new(),
            keys: Vec::new(),
            size: crec.size,
            tables: crec.rests_on_tables(),
        };
        // Positions met: `false` while on the walk's path, `true` after.
        let mut seen: HashMap<Key, bool> = HashMap::new();
        let mut stack = Vec::new();
        type Stack = Vec<(Position, Key, Vec<Move>, usize)>;
        let enter = |pos: Position,
                     w: &mut Walked,
                     stack: &mut Stack,
                     seen: &mut HashMap<Key, bool>|
         -> Result<bool, StoreError> {
            let key = pos.pack().0;
            match seen.get(&key) {
                Some(false) => return Ok(false),
                Some(true) => return Ok(true),
                None => {}
            }
            match self.step(st, x, &proof, &pos, &key)? {
                Step::Reject => return Ok(false),
                Step::Free(v) => {
                    seen.insert(key, true);
                    w.free.push(v);
                    return Ok(true);
                }
                Step::Leaf => {
                    seen.insert(key, true);
                }
                Step::Into(moves) => {
                    seen.insert(key, false);
                    stack.push((pos, key, moves, 0));
                }
            }
            w.cost += 1;
            w.keys.push(key);
            Ok(w.cost < limit && stack.len() <= MAX_WALK_DEPTH)
        };
        if !enter(*c, &mut w, &mut stack, &mut seen)? {
            return Ok(None);
        }
        while let Some(top) = stack.last_mut() {
            let (pos, key, moves, i) = top;
            if let Some(&m) = moves.get(*i) {
                *i += 1;
                let child = pos.play(m);
                if !enter(child, &mut w, &mut stack, &mut seen)? {
                    return Ok(None);
                }
            } else {
                let key = *key;
                stack.pop();
                seen.insert(key, true);
            }
        }
        Ok(Some(w))
    }

    /// What the position `pos` (packed `key`) is to a walk from a child of
    /// the winner node `x`.
    fn step(
        &self,
        st: &PassState<'_>,
        x: u32,
        proof: &StoredProof<Overlay<'_>>,
        pos: &Position,
        key: &Key,
    ) -> Result<Step, StoreError> {
        if st.taken.contains(key) {
            return Ok(Step::Reject);
        }
        if let Some(&v) = st.lp.ids.get(key) {
            let (rv, rx) = (st.d.rank[v as usize], st.d.rank[x as usize]);
            if v == x || rv == NONE {
                return Ok(Step::Reject);
            }
            // Below `x`, it is kept only if the alternative reaches it: walk
            // on. Elsewhere it stays, if it can reach nothing before `x` (a
            // leaf reaches nothing).
            if !st.d.dominates(x, v) {
                let leaf = st.lp.dag.kids[v as usize].is_empty();
                return Ok(if st.gone(v) || (rv <= rx && !leaf) {
                    Step::Reject
                } else {
                    Step::Free(v)
                });
            }
        }
        Ok(match proof.node_for(pos, self.prover)? {
            Err(_) | Ok(StoredNode::Missing) => Step::Reject,
            Ok(StoredNode::GameEnd(_)) => Step::Leaf,
            Ok(StoredNode::TableSized) if self.endgame_win(pos) == Some(true) => Step::Leaf,
            Ok(StoredNode::TableSized) => Step::Reject,
            Ok(n @ (StoredNode::Win { .. } | StoredNode::Loss { .. })) => Step::Into(n.moves(pos)),
        })
    }
}
