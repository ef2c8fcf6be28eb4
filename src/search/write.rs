//! Store writing: every position of an extracted proof that is not a game
//! end is written to the store: Win with the move where the prover is to
//! move, Loss where the opponent is, with the number of distinct positions
//! of its proof. A stored record is a proven leaf for later searches and
//! extractions; so the store always holds closed proofs: a stored Win's
//! move leads to a stored Loss or a won game end, and every move of a
//! stored Loss to a stored Win or a won game end.
//!
//! The writer also keeps the in-memory filter of stored positions the
//! search and the extraction consult.
//!
//! Under the fifty-move rule the records go to the rule set's own table
//! with each position's headroom need ([`crate::store::Need`]); where one
//! position has several proofs the one with the smallest need (then the
//! smallest size) is kept, in the store and in the filter.

use super::extract::{ExKind, Extraction};
use super::report::ProofSummary;
use crate::rules::{PackedPosition, Position};
use crate::store::{self, Key, Need, Record, Store, StoreError, Verdict};
use crate::vocab::MoveCode;
use crate::vocab::RuleSet;

pub(super) type ZMap<V> = crate::fasthash::FastMap<u64, V>;

/// The store side of a run: the store, the filter of stored positions, and
/// what this run wrote.
pub(super) struct Writer<'s> {
    /// The store, if any.
    pub(super) store: Option<&'s Store>,
    /// The rule set of the records read and written.
    pub(super) rule_set: RuleSet,
    /// Under the fifty-move rule: Zobrist hash of stored positions -> the
    /// need of their proof (the one in `stored`).
    pub(super) needs: ZMap<Need>,
    /// Zobrist hash of stored positions -> proof size << 1 | 1 if the side
    /// to move wins.
    pub(super) stored: ZMap<u64>,
    /// Zobrist hash of positions stored in this run -> depth of their proof.
    depths: ZMap<u32>,
    /// Records written in this run.
    pub(super) written: u64,
    /// A store error met during the search (which then stops).
    pub(super) error: Option<StoreError>,
}

impl<'s> Writer<'s> {
    /// A writer to `store`, with every proven position stored for `rules`
    /// loaded into the filter.
    pub(super) fn open(
        store: Option<&'s Store>,
        rule_set: RuleSet,
    ) -> Result<Writer<'s>, StoreError> {
        let mut stored = ZMap::default();
        let mut needs = ZMap::default();
        if let Some(s) = store {
            let reader = s.reader()?;
            reader.for_each_entry(rule_set, |k, r, need| {
                if let Ok(p) = Position::unpack(&PackedPosition(*k)) {
                    stored.insert(p.zobrist(), stored_value(&r));
                    if let Some(n) = need {
                        needs.insert(p.zobrist(), n);
                    }
                }
                Ok(())
            })?;
        }
        Ok(Writer {
            store,
            rule_set,
            needs,
            stored,
            depths: ZMap::default(),
            written: 0,
            error: None,
        })
    }

    /// The depth of the proof of a position stored in this run (else 0).
    pub(super) fn depth(&self, z: u64) -> u32 {
        self.depths.get(&z).copied().unwrap_or(0)
    }

    /// The stored record of a position, and its need under the
    /// fifty-move rule, if the filter knows it and the store confirms it by
    /// the full key.
    pub(super) fn stored_entry(
        &self,
        pos: &Position,
    ) -> Result<Option<(Record, Option<Need>)>, StoreError> {
        let Some(s) = self.store else {
            return Ok(None);
        };
        if !self.stored.contains_key(&pos.zobrist()) {
            return Ok(None);
        }
        s.get_entry(self.rule_set, &pos.pack().0)
    }

    /// The filter's value of a stored position and its need (under the
    /// fifty-move rule).
    #[inline]
    pub(super) fn stored_get(&self, z: u64) -> Option<(u64, Option<Need>)> {
        let v = *self.stored.get(&z)?;
        Some((v, self.needs.get(&z).copied()))
    }

    /// Sizes, depth and store writes of the extracted proof rooted at
    /// `root`.
    pub(super) fn write_proof(
        &mut self,
        ex: &Extraction,
        root: u32,
    ) -> Result<ProofSummary, StoreError> {
        let (depth, on_tables) = depths(ex);
        let size = sizes(ex);
        // Records of the nodes reachable from the root.
        let fifty = self.rule_set.fifty_move;
        let n = ex.nodes.len();
        let mut batch: Vec<(Key, Record, Need)> = Vec::new();
        let mut seen = vec![false; n];
        let mut stack = vec![root];
        seen[root as usize] = true;
        let mut written = 0u64;
        let mut new_stored: Vec<(u64, u64, Need, u32)> = Vec::new();
        while let Some(j) = stack.pop() {
            let node = &ex.nodes[j as usize];
            let flags = if on_tables[j as usize] {
                store::FLAG_TABLES
            } else {
                0
            };
            let rec = match node.kind {
                ExKind::Win(mv) => Some(Record {
                    verdict: Verdict::Win,
                    flags,
                    mv,
                    size: size[j as usize],
                }),
                ExKind::Loss => Some(Record {
                    verdict: Verdict::Loss,
                    flags,
                    mv: MoveCode::NONE,
                    size: size[j as usize],
                }),
                _ => None,
            };
            if let Some(r) = rec {
                batch.push((node.packed, r, node.need));
                new_stored.push((node.z, stored_value(&r), node.need, depth[j as usize]));
            }
            for &c in &node.children {
                if !seen[c as usize] {
                    seen[c as usize] = true;
                    stack.push(c);
                }
            }
            if batch.len() >= 100_000 {
                self.put(&batch)?;
                written += batch.len() as u64;
                batch.clear();
            }
        }
        self.put(&batch)?;
        written += batch.len() as u64;
        if self.store.is_some() {
            for (z, v, need, d) in new_stored {
                if fifty {
                    // Keep the filter's entry of the better proof, as the
                    // store does.
                    let better = match (self.stored.get(&z), self.needs.get(&z)) {
                        (Some(&ov), Some(&on)) => (need, v >> 1) < (on, ov >> 1),
                        _ => true,
                    };
                    if !better {
                        continue;
                    }
                    self.needs.insert(z, need);
                }
                self.stored.insert(z, v);
                self.depths.insert(z, d);
            }
        }
        self.written += written;
        let root_node = &ex.nodes[root as usize];
        Ok(ProofSummary {
            positions: size[root as usize],
            depth: depth[root as usize],
            written,
            root_move: match root_node.kind {
                ExKind::Win(mv) => Some(mv),
                _ => None,
            },
        })
    }
}

impl Writer<'_> {
    /// Writes a batch of records (with their needs under the fifty-move
    /// rule).
    fn put(&self, batch: &[(Key, Record, Need)]) -> Result<(), StoreError> {
        let Some(s) = self.store else {
            return Ok(());
        };
        if self.rule_set.fifty_move {
            s.put_batch_fifty(self.rule_set, batch)
        } else {
            let plain: Vec<(Key, Record)> = batch.iter().map(|&(k, r, _)| (k, r)).collect();
            s.put_batch(self.rule_set, &plain)
        }
    }
}

/// Each node's proof depth, and whether its proof rests on endgame tables.
fn depths(ex: &Extraction) -> (Vec<u32>, Vec<bool>) {
    let n = ex.nodes.len();
    let mut depth = vec![0u32; n];
    let mut tables = vec![false; n];
    // In completion order (children finish first).
    for &i in &ex.finished {
        let node = &ex.nodes[i as usize];
        tables[i as usize] = match node.kind {
            ExKind::Endgame => true,
            ExKind::Stored(_, _, t) => t,
            _ => node.children.iter().any(|&c| tables[c as usize]),
        };
        if let ExKind::Stored(_, d, _) = node.kind {
            depth[i as usize] = d;
            continue;
        }
        depth[i as usize] = node
            .children
            .iter()
            .map(|&c| depth[c as usize] + 1)
            .max()
            .unwrap_or(0);
    }
    (depth, tables)
}

/// Each node's number of distinct proof positions: exact by a stamped walk
/// from each node, while the work stays reasonable; beyond it, the sum over
/// children (an upper bound).
fn sizes(ex: &Extraction) -> Vec<u64> {
    let n = ex.nodes.len();
    let mut size = vec![0u64; n];
    let mut stamp = vec![u32::MAX; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut budget: u64 = 400_000_000;
    for (round, &i) in ex.finished.iter().enumerate() {
        let node = &ex.nodes[i as usize];
        if let ExKind::Stored(s, _, _) = node.kind {
            size[i as usize] = s.max(1);
            continue;
        }
        if node.children.is_empty() {
            size[i as usize] = 1;
            continue;
        }
        let upper: u64 = 1 + node.children.iter().map(|&c| size[c as usize]).sum::<u64>();
        if budget < upper {
            size[i as usize] = upper;
            continue;
        }
        let mark = round as u32;
        let mut count = 0u64;
        stack.clear();
        stack.push(i);
        stamp[i as usize] = mark;
        while let Some(j) = stack.pop() {
            let nj = &ex.nodes[j as usize];
            count += match nj.kind {
                ExKind::Stored(s, _, _) => s.max(1),
                _ => 1,
            };
            for &c in &nj.children {
                if stamp[c as usize] != mark {
                    stamp[c as usize] = mark;
                    stack.push(c);
                }
            }
        }
        budget = budget.saturating_sub(count);
        size[i as usize] = count;
    }
    size
}

/// The filter's value of a record: proof size << 1 | 1 for a win.
pub(super) fn stored_value(r: &Record) -> u64 {
    (r.size.min(u64::MAX >> 2) << 1) | (r.verdict == Verdict::Win) as u64
}
