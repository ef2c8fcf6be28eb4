//! Proof extraction: once a node is proven, [`Prover`] walks it again: at
//! winner nodes the proven child with the smallest proof-size estimate
//! (tried in that order; a child whose proof fails to rebuild is skipped),
//! at loser nodes every legal reply. Positions merge by their packed
//! encoding (a DAG); a position still being rebuilt (on the walk's path)
//! is never reused, so the DAG has no cycle. A child whose tt entry was
//! overwritten is re-proven by a small search from there. The extracted
//! DAG is then written to the store ([`super::write`]).

use super::Prover;
use super::dfpn::{child_key, sat};
use super::report::{ProofSummary, SearchError};
use super::tt::INF;
use crate::rules::{Move, Outcome, Position};
use crate::store::{Key, StoreError, Verdict};
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
}

/// The proof being extracted: a DAG of positions.
#[derive(Default)]
pub(super) struct Extraction {
    /// Packed position -> node index.
    map: HashMap<Key, u32>,
    /// The nodes.
    pub(super) nodes: Vec<ExNode>,
    /// Finished nodes in completion order (children first).
    pub(super) finished: Vec<u32>,
}

impl Extraction {
    fn new_leaf(&mut self, pos: &Position, packed: Key, kind: ExKind) -> u32 {
        let i = self.nodes.len() as u32;
        self.nodes.push(ExNode {
            packed,
            z: pos.zobrist(),
            kind,
            children: Vec::new(),
            done: true,
        });
        self.map.insert(packed, i);
        self.finished.push(i);
        i
    }

    fn abandon(&mut self, from: u32) {
        for n in self.nodes.drain(from as usize..) {
            self.map.remove(&n.packed);
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
            Ok(Some(root)) => Some(self.writer.write_proof(self.rules, &self.ex, root)?),
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
        if let Some(&i) = self.ex.map.get(&packed) {
            return Ok(self.ex.nodes[i as usize].done.then_some(i));
        }
        if let Some(o) = pos.outcome(self.rules) {
            return Ok((o == Outcome::Win(self.prover))
                .then(|| self.ex.new_leaf(pos, packed, ExKind::Terminal)));
        }
        // Below the extraction's root, an endgame-table position is a leaf.
        if !self.ex.nodes.is_empty()
            && let Some(win) = self.endgame_win(pos)
        {
            return Ok(win.then(|| self.ex.new_leaf(pos, packed, ExKind::Endgame)));
        }
        let or = pos.turn() == self.prover;
        if let Some(rec) = self.writer.stored_record(self.rules, pos)? {
            let win = (rec.verdict == Verdict::Win) == or;
            let depth = self.writer.depth(pos.zobrist());
            let tables = rec.rests_on_tables();
            return Ok(win.then(|| {
                self.ex
                    .new_leaf(pos, packed, ExKind::Stored(rec.size, depth, tables))
            }));
        }
        let idx = self.ex.nodes.len() as u32;
        self.ex.nodes.push(ExNode {
            packed,
            z: pos.zobrist(),
            kind: if or {
                ExKind::Win(MoveCode::NONE)
            } else {
                ExKind::Loss
            },
            children: Vec::new(),
            done: false,
        });
        self.ex.map.insert(packed, idx);
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
                let packed_known = self.ex.map.get(&child.pack().0).copied();
                let size = if let Some(i) = packed_known {
                    if !self.ex.nodes[i as usize].done {
                        continue;
                    }
                    0
                } else if child.outcome(self.rules) == Some(Outcome::Win(self.prover)) {
                    0
                } else if let Some(win) = self.endgame_win(&child) {
                    if !win {
                        continue;
                    }
                    0
                } else if let Some(&v) = self.writer.stored.get(&z) {
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
                    let n = &mut self.ex.nodes[idx as usize];
                    n.kind = ExKind::Win(m.watkins_code());
                    n.children = vec![ci];
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
                Some(ci) => children.push(ci),
                None => return Ok(false),
            }
        }
        self.ex.nodes[idx as usize].children = children;
        Ok(true)
    }
}
