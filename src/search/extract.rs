//! Proof extraction: once a node is proven, [`Prover`] walks it again: at
//! winner nodes the proven child with the smallest proof-size estimate
//! (tried in that order; a child whose proof fails to rebuild is skipped),
//! at loser nodes every legal reply. Positions merge by their packed
//! encoding (a DAG); a position still being rebuilt (on the walk's path)
//! is never reused, so the DAG has no cycle. A child whose tt entry was
//! overwritten is re-proven by a small search from there. The extracted
//! DAG is then written to the store ([`super::write`]).
//!
//! Under the fifty-move rule every node also gets its headroom need
//! ([`crate::store::Need`]), and a position is merged with an extracted one
//! only if that proof's need fits the half-move clock it is reached at;
//! else it is extracted again (one position may then have several nodes,
//! chained by `next_same`). So along every path of the DAG, through
//! transpositions too, a node at clock `c` has `c + need <= 100`: no
//! position that is not a finished game is reached at clock 100 or more.

use super::Prover;
use super::dfpn::{child_key, sat};
use super::report::{ProofSummary, SearchError};
use super::tt::INF;
use crate::rules::{Move, Outcome, Position};
use crate::store::{Key, StoreError, WinLoss};
use crate::vocab::FIFTY_MOVE_PLIES;
use crate::vocab::MoveCode;
use std::collections::HashMap;

/// What an extracted position is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum ExKind {
    Terminal,
    /// A position of 4 men or fewer the endgame tables score as a win for
    /// the prover: a leaf, with no record.
    Endgame,
    /// A position stored before: proof size, proof depth when it was
    /// stored in this run (else 0), and whether its proof rests on
    /// endgame tables.
    Stored(u64, u32, bool),
    Win(MoveCode),
    Loss,
}

/// A position of the extracted proof.
pub(super) struct ExNode {
    pub(super) packed: Key,
    pub(super) z: u64,
    pub(super) kind: ExKind,
    pub(super) children: Vec<u32>,
    done: bool,
    /// The need of the proof (fifty-move rule; 0 for a game end).
    pub(super) need: u8,
    /// The next older node of the same position, or [`NO_NODE`].
    next_same: u32,
}

/// No node.
const NO_NODE: u32 = u32::MAX;

/// What the extraction holds of a position reached at some clock.
enum Known {
    /// Nothing.
    No,
    /// A node of it is being rebuilt (on the walk's path).
    OnPath,
    /// A finished node whose proof fits.
    Fits(u32),
    /// Only finished nodes whose proofs need more headroom.
    TooTight,
}

/// The proof being extracted: a DAG of positions.
#[derive(Default)]
pub(super) struct Extraction {
    /// Packed position -> index of its newest node.
    map: HashMap<Key, u32>,
    /// The nodes.
    pub(super) nodes: Vec<ExNode>,
    /// Finished nodes in completion order (children first).
    pub(super) finished: Vec<u32>,
}

impl Extraction {
    /// Adds a node (the newest of its position).
    fn push(&mut self, pos: &Position, packed: Key, kind: ExKind, done: bool, need: u8) -> u32 {
        let i = self.nodes.len() as u32;
        let next_same = self.map.insert(packed, i).unwrap_or(NO_NODE);
        self.nodes.push(ExNode {
            packed,
            z: pos.zobrist(),
            kind,
            children: Vec::new(),
            done,
            need,
            next_same,
        });
        i
    }

    fn new_leaf(&mut self, pos: &Position, packed: Key, kind: ExKind, need: u8) -> u32 {
        let i = self.push(pos, packed, kind, true, need);
        self.finished.push(i);
        i
    }

    /// The nodes of a position reached at half-move clock `clock`
    /// (`None`: no fifty-move rule, every finished node fits).
    fn known(&self, packed: &Key, clock: Option<u32>) -> Known {
        let mut i = self.map.get(packed).copied().unwrap_or(NO_NODE);
        let mut found = Known::No;
        while i != NO_NODE {
            let n = &self.nodes[i as usize];
            if !n.done {
                return Known::OnPath;
            }
            if clock.is_none_or(|c| c + n.need as u32 <= FIFTY_MOVE_PLIES) {
                if matches!(found, Known::No | Known::TooTight) {
                    found = Known::Fits(i);
                }
            } else if matches!(found, Known::No) {
                found = Known::TooTight;
            }
            i = n.next_same;
        }
        found
    }

    fn abandon(&mut self, from: u32) {
        // Newest first: a position's newest node is the map's.
        while self.nodes.len() > from as usize {
            let n = self.nodes.pop().expect("non-empty");
            let i = self.nodes.len() as u32;
            if self.map.get(&n.packed) == Some(&i) {
                if n.next_same == NO_NODE {
                    self.map.remove(&n.packed);
                } else {
                    self.map.insert(n.packed, n.next_same);
                }
            }
        }
        self.finished.retain(|&i| i < from);
    }
}

impl Prover<'_> {
    /// Extracts the proof of a proven node (the path's top is `pos`) and
    /// writes it to the store. `None` when the proof could not be rebuilt
    /// (stopped, or tt entries lost beyond repair).
    pub fn extract_and_store(
        &mut self,
        pos: &Position,
        key: u64,
    ) -> Result<Option<ProofSummary>, SearchError> {
        let was = self.search.extracting;
        self.search.extracting = true;
        self.ex.map.clear();
        self.ex.nodes.clear();
        self.ex.finished.clear();
        let r = self.ex(pos, key);
        let out = match r {
            Ok(Some(root)) => Some(self.writer.write_proof(&self.ex, root)?),
            Ok(None) => None,
            Err(e) => {
                self.search.extracting = was;
                return Err(e.into());
            }
        };
        self.ex = Extraction::default();
        self.search.extracting = was;
        Ok(out)
    }

    /// Rebuilds the proof of `pos` (the path's top). `Ok(None)`: not
    /// provable from here with what the tt holds.
    fn ex(&mut self, pos: &Position, key: u64) -> Result<Option<u32>, StoreError> {
        let packed = pos.pack().0;
        match self.ex.known(&packed, self.clock(pos)) {
            Known::OnPath => return Ok(None),
            Known::Fits(i) => return Ok(Some(i)),
            Known::No | Known::TooTight => {}
        }
        if let Some(o) = pos.outcome(self.rule_set.stalemate) {
            return Ok((o == Outcome::Win(self.prover))
                .then(|| self.ex.new_leaf(pos, packed, ExKind::Terminal, 0)));
        }
        if self.rule_set.fifty_move && pos.halfmoves() >= FIFTY_MOVE_PLIES {
            return Ok(None);
        }
        // Below the extraction's root, an endgame-table position is a leaf.
        if !self.ex.nodes.is_empty()
            && let Some((win, need)) = self.endgame(pos)
        {
            return Ok(win.then(|| self.ex.new_leaf(pos, packed, ExKind::Endgame, need)));
        }
        let or = pos.turn() == self.prover;
        if let Some((rec, need)) = self.writer.stored_entry(pos)?
            && self.fits(pos, need)
        {
            let win = (rec.verdict == WinLoss::Win) == or;
            let depth = self.writer.depth(pos.zobrist());
            let tables = rec.rests_on_tables();
            let kind = ExKind::Stored(rec.size, depth, tables);
            return Ok(win.then(|| self.ex.new_leaf(pos, packed, kind, need.unwrap_or(0))));
        }
        let kind = if or {
            ExKind::Win(MoveCode::NONE)
        } else {
            ExKind::Loss
        };
        let idx = self.ex.push(pos, packed, kind, false, 0);
        let ok = if or {
            self.ex_or(pos, key, idx)?
        } else {
            self.ex_and(pos, key, idx)?
        };
        if ok {
            self.ex.nodes[idx as usize].done = true;
            self.ex.finished.push(idx);
            Ok(Some(idx))
        } else {
            self.ex.abandon(idx);
            Ok(None)
        }
    }

    /// The half-move clock of `pos` under the fifty-move rule.
    #[inline]
    fn clock(&self, pos: &Position) -> Option<u32> {
        self.rule_set.fifty_move.then(|| pos.halfmoves())
    }

    /// The need of a node reached by `m` from its parent: 1 for a capture
    /// or pawn move, else 1 + the child's.
    #[inline]
    fn need_through(&self, m: Move, child: u32) -> u8 {
        crate::store::need_through(m.is_irreversible(), self.ex.nodes[child as usize].need)
    }

    fn ex_or(&mut self, pos: &Position, key: u64, idx: u32) -> Result<bool, StoreError> {
        for _attempt in 0..4 {
            let moves = pos.legal_moves();
            let mut cands: Vec<(u32, Move, Position, u64)> = Vec::new();
            for &m in moves.iter() {
                let child = pos.play(m);
                let z = child.zobrist();
                if !m.is_irreversible() && self.search.path.repeats(z) {
                    continue;
                }
                let ckey = child_key(key, m, &child);
                let known = self.ex.known(&child.pack().0, self.clock(&child));
                let stored = self
                    .writer
                    .stored_get(&child)?
                    .filter(|&(_, need)| self.fits(&child, need));
                let size = if let Known::OnPath = known {
                    continue;
                } else if let Known::Fits(_) = known {
                    0
                } else if child.outcome(self.rule_set.stalemate) == Some(Outcome::Win(self.prover))
                {
                    0
                } else if self.rule_set.fifty_move && child.halfmoves() >= FIFTY_MOVE_PLIES {
                    continue;
                } else if let Some(win) = self.endgame_win(&child) {
                    if !win {
                        continue;
                    }
                    0
                } else if let Some((v, _)) = stored {
                    if (v & 1 == 1) == (child.turn() == self.prover) {
                        sat(v >> 1)
                    } else {
                        continue;
                    }
                } else {
                    match self.search.tt.get(ckey) {
                        Some(v) if v.pn == 0 => v.dn,
                        _ => continue,
                    }
                };
                cands.push((size, m, child, ckey));
            }
            cands.sort_by_key(|c| c.0);
            for (_, m, child, ckey) in cands {
                self.search.path.push(child.zobrist(), m.is_irreversible());
                let r = self.ex(&child, ckey);
                self.search.path.pop();
                if let Some(ci) = r? {
                    let need = self.need_through(m, ci);
                    let n = &mut self.ex.nodes[idx as usize];
                    n.kind = ExKind::Win(m.watkins_code());
                    n.children = vec![ci];
                    n.need = need;
                    return Ok(true);
                }
            }
            if self.search.stopped {
                return Ok(false);
            }
            let (pn, _, _) = self.mid(pos, key, INF, INF);
            if pn != 0 {
                return Ok(false);
            }
        }
        Ok(false)
    }

    fn ex_and(&mut self, pos: &Position, key: u64, idx: u32) -> Result<bool, StoreError> {
        let moves = pos.legal_moves();
        let mut children = Vec::with_capacity(moves.len());
        let mut need = 0u8;
        for &m in moves.iter() {
            let child = pos.play(m);
            let irr = m.is_irreversible();
            if !irr && self.search.path.repeats(child.zobrist()) {
                return Ok(false);
            }
            let ckey = child_key(key, m, &child);
            self.search.path.push(child.zobrist(), irr);
            let mut tries = 0;
            let got = loop {
                let r = self.ex(&child, ckey);
                match r {
                    Err(e) => {
                        self.search.path.pop();
                        return Err(e);
                    }
                    Ok(Some(ci)) => break Some(ci),
                    Ok(None) => {
                        if tries >= 3 || self.search.stopped {
                            break None;
                        }
                        tries += 1;
                        let (pn, _, _) = self.mid(&child, ckey, INF, INF);
                        if pn != 0 {
                            break None;
                        }
                    }
                }
            };
            self.search.path.pop();
            match got {
                Some(ci) => {
                    need = need.max(self.need_through(m, ci));
                    children.push(ci);
                }
                None => return Ok(false),
            }
        }
        let n = &mut self.ex.nodes[idx as usize];
        n.children = children;
        n.need = need;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Under the fifty-move rule a position has several nodes, one per
    /// headroom; a node is reused only where its need fits the clock; an
    /// abandoned node gives its position back to the older one.
    #[test]
    fn nodes_of_one_position_are_reused_only_where_their_need_fits() {
        let pos = Position::startpos();
        let packed = pos.pack().0;
        let mut ex = Extraction::default();
        assert!(matches!(ex.known(&packed, Some(0)), Known::No));
        let a = ex.new_leaf(&pos, packed, ExKind::Terminal, 10);
        assert!(matches!(ex.known(&packed, Some(90)), Known::Fits(i) if i == a));
        assert!(matches!(ex.known(&packed, Some(91)), Known::TooTight));
        // Without the rule every finished node fits.
        assert!(matches!(ex.known(&packed, None), Known::Fits(i) if i == a));
        // A tighter proof of the same position, being rebuilt: on the path.
        let b = ex.push(&pos, packed, ExKind::Loss, false, 0);
        assert!(matches!(ex.known(&packed, Some(95)), Known::OnPath));
        ex.nodes[b as usize].done = true;
        ex.nodes[b as usize].need = 3;
        assert!(matches!(ex.known(&packed, Some(95)), Known::Fits(i) if i == b));
        assert!(matches!(ex.known(&packed, Some(98)), Known::TooTight));
        // Abandoning the newer node leaves the older one.
        ex.abandon(b);
        assert_eq!(ex.nodes.len(), 1);
        assert!(matches!(ex.known(&packed, Some(95)), Known::TooTight));
        assert!(matches!(ex.known(&packed, Some(80)), Known::Fits(i) if i == a));
        ex.abandon(a);
        assert!(matches!(ex.known(&packed, Some(0)), Known::No));
        assert!(ex.map.is_empty());
    }
}
