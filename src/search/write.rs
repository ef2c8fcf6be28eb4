//! Store writing: every position of an extracted proof that is not a game
//! end is written to the store: Win with the move where the prover is to
//! move, Loss where the opponent is, with the number of distinct positions
//! of its proof. A stored record is a proven leaf for later searches and
//! extractions; so the store always holds closed proofs: a stored Win's
//! move leads to a stored Loss or a won game end, and every move of a
//! stored Loss to a stored Win or a won game end.
//!
//! The writer also keeps the in-memory filter of stored positions the
//! search and the extraction consult ([`StoredFilter`]: hashes only, every
//! hit confirmed by the store by the full key).
//!
//! Under the fifty-move rule the records go to the rule set's own table
//! with each position's headroom need ([`crate::store::Need`]); where one
//! position has several proofs the one with the smallest need (then the
//! smallest size) is kept in the store, which the lookups read.

use super::extract::{ExKind, Extraction};
use super::report::ProofSummary;
use crate::rules::{PackedPosition, Position};
use crate::store::filter::StoredFilter;
use crate::store::{self, Key, Need, Record, Store, StoreError, WinLoss};
use crate::vocab::MoveCode;
use crate::vocab::RuleSet;
use std::cell::RefCell;

pub(super) type ZMap<V> = crate::fasthash::FastMap<u64, V>;

/// Slots of the cache of confirmed store lookups (about 1.8 MB, allocated
/// at the first lookup).
const CACHE_SLOTS: usize = 1 << 15;

/// One confirmed lookup: the full key and what the store said.
#[derive(Clone, Copy)]
struct CacheSlot {
    key: Key,
    entry: Option<(Record, Option<Need>)>,
}

/// The store side of a run: the store, the filter of stored positions, and
/// what this run wrote.
///
/// The filter ([`StoredFilter`], about 2.4 bytes a record) only says which
/// positions may be stored; every hit is confirmed by reading the store by
/// the position's full key, and the answers (records, or "not stored" for
/// a false positive) are kept in a small direct-mapped cache, so a search
/// that keeps meeting the same stored children reads the store once for
/// each. Without a store the filter and the cache are empty and cost
/// nothing.
pub(super) struct Writer<'s> {
    /// The store, if any.
    pub(super) store: Option<&'s Store>,
    /// The rule set of the records read and written.
    pub(super) rule_set: RuleSet,
    /// Zobrist hashes of the stored positions (may have false positives).
    filter: StoredFilter,
    /// Confirmed lookups, indexed by Zobrist hash, checked by full key.
    cache: RefCell<Vec<Option<CacheSlot>>>,
    /// Zobrist hash of positions stored in this run -> depth of their proof.
    depths: ZMap<u32>,
    /// Records written in this run.
    pub(super) written: u64,
    /// A store error met during the search (which then stops).
    pub(super) error: Option<StoreError>,
    /// While deferring ([`Writer::defer`]): records written but not yet
    /// committed, by key, with their need.
    pending: Option<std::collections::HashMap<Key, (Record, Need)>>,
    /// The keys of the records committed in this run, when kept (a plain
    /// search saving its run state, [`super::state`]).
    pub(super) written_keys: Option<std::sync::Arc<std::sync::Mutex<Vec<Key>>>>,
}

/// Reads records as a deferring [`Writer`] sees them: its records not yet
/// committed first, then the store.
pub(super) struct Overlay<'a> {
    pending: Option<&'a std::collections::HashMap<Key, (Record, Need)>>,
    store: &'a Store,
}

impl crate::stored::RecordLookup for Overlay<'_> {
    fn record(&self, rules: RuleSet, key: &Key) -> Result<Option<Record>, StoreError> {
        if let Some(&(r, _)) = self.pending.and_then(|p| p.get(key)) {
            return Ok(Some(r));
        }
        self.store.get(rules, key)
    }
}

impl<'s> Writer<'s> {
    /// A writer to `store`, with every proven position stored for `rules`
    /// loaded into the filter.
    pub(super) fn open(
        store: Option<&'s Store>,
        rule_set: RuleSet,
    ) -> Result<Writer<'s>, StoreError> {
        let filter = match store {
            Some(s) => load_filter(s, rule_set)?,
            None => StoredFilter::default(),
        };
        Ok(Writer {
            store,
            rule_set,
            filter,
            cache: RefCell::new(Vec::new()),
            depths: ZMap::default(),
            written: 0,
            error: None,
            pending: None,
            written_keys: None,
        })
    }

    /// From now on, records are kept in memory instead of committed one
    /// proof at a time, until [`Writer::commit_deferred`] writes them in
    /// one transaction (each commit is a disk sync: a pass proving many
    /// small proofs would spend its time waiting for the disk). Lookups
    /// see them meanwhile. Not under the fifty-move rule (where the store
    /// chooses between two proofs of one position): there it does nothing.
    pub(super) fn defer(&mut self) {
        if self.store.is_some() && !self.rule_set.fifty_move && self.pending.is_none() {
            self.pending = Some(Default::default());
        }
    }

    /// Commits the records kept since [`Writer::defer`] and writes through
    /// again.
    pub(super) fn commit_deferred(&mut self) -> Result<(), StoreError> {
        let Some(pending) = self.pending.take() else {
            return Ok(());
        };
        let batch: Vec<(Key, Record, Need)> =
            pending.into_iter().map(|(k, (r, n))| (k, r, n)).collect();
        for chunk in batch.chunks(100_000) {
            self.put(chunk)?;
        }
        Ok(())
    }

    /// The records as this writer sees them ([`Overlay`]); `None` without
    /// a store.
    pub(super) fn overlay(&self) -> Option<Overlay<'_>> {
        Some(Overlay {
            pending: self.pending.as_ref(),
            store: self.store?,
        })
    }

    /// Number of positions in the filter.
    pub(super) fn stored_len(&self) -> usize {
        self.filter.len()
    }

    /// Bytes of memory the filter holds.
    pub(super) fn filter_bytes(&self) -> u64 {
        self.filter.bytes()
    }

    /// Whether the filter holds nothing (then nothing is stored).
    #[inline]
    pub(super) fn filter_is_empty(&self) -> bool {
        self.filter.is_empty()
    }

    /// Hints the processor to fetch the filter's offsets for hash `z`
    /// (see [`StoredFilter::prefetch_offsets`]).
    #[inline(always)]
    pub(super) fn prefetch_offsets(&self, z: u64) {
        self.filter.prefetch_offsets(z);
    }

    /// Hints the processor to fetch the filter's remainders for hash `z`.
    #[inline(always)]
    pub(super) fn prefetch_remainders(&self, z: u64) {
        self.filter.prefetch_remainders(z);
    }

    /// The depth of the proof of a position stored in this run (else 0).
    pub(super) fn depth(&self, z: u64) -> u32 {
        self.depths.get(&z).copied().unwrap_or(0)
    }

    /// The stored record of a position, and its need under the
    /// fifty-move rule: when the filter may hold it, read from the store
    /// by the full key (or from the cache of such reads).
    pub(super) fn stored_entry(
        &self,
        pos: &Position,
    ) -> Result<Option<(Record, Option<Need>)>, StoreError> {
        if self.store.is_none() {
            return Ok(None);
        }
        let z = pos.zobrist();
        if !self.filter.contains(z) {
            return Ok(None);
        }
        self.stored_entry_by_key(z, &pos.pack().0)
    }

    /// As [`Writer::stored_entry`], for the position of Zobrist hash `z`
    /// and packed key `key`, once the filter said it may be stored.
    fn stored_entry_by_key(
        &self,
        z: u64,
        key: &Key,
    ) -> Result<Option<(Record, Option<Need>)>, StoreError> {
        let Some(s) = self.store else {
            return Ok(None);
        };
        let key = *key;
        if let Some(&(r, _)) = self.pending.as_ref().and_then(|p| p.get(&key)) {
            return Ok(Some((r, None)));
        }
        let slot = z as usize & (CACHE_SLOTS - 1);
        if let Some(Some(c)) = self.cache.borrow().get(slot)
            && c.key == key
        {
            return Ok(c.entry);
        }
        let entry = s.get_entry(self.rule_set, &key)?;
        let mut cache = self.cache.borrow_mut();
        if cache.is_empty() {
            cache.resize(CACHE_SLOTS, None);
        }
        cache[slot] = Some(CacheSlot { key, entry });
        Ok(entry)
    }

    /// Whether a position is stored (confirmed by the full key).
    pub(super) fn is_stored(&self, pos: &Position) -> Result<bool, StoreError> {
        Ok(self.stored_entry(pos)?.is_some())
    }

    /// A stored position's proof size << 1 | 1 if the side to move wins,
    /// and its need (under the fifty-move rule), confirmed by the full key.
    #[inline]
    pub(super) fn stored_get(
        &self,
        pos: &Position,
    ) -> Result<Option<(u64, Option<Need>)>, StoreError> {
        if self.filter.is_empty() {
            return Ok(None);
        }
        Ok(self
            .stored_entry(pos)?
            .map(|(r, need)| (stored_value(&r), need)))
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
        let n = ex.nodes.len();
        let mut batch: Vec<(Key, Record, Need)> = Vec::new();
        let mut seen = vec![false; n];
        let mut stack = vec![root];
        seen[root as usize] = true;
        let mut written = 0u64;
        let mut new_stored: Vec<(u64, Option<u32>)> = Vec::new();
        while let Some(j) = stack.pop() {
            let node = &ex.nodes[j as usize];
            let flags = if on_tables[j as usize] {
                store::FLAG_TABLES
            } else {
                0
            };
            let rec = match node.kind {
                ExKind::Win(mv) => Some(Record {
                    verdict: WinLoss::Win,
                    flags,
                    mv,
                    size: size[j as usize],
                }),
                ExKind::Loss => Some(Record {
                    verdict: WinLoss::Loss,
                    flags,
                    mv: MoveCode::NONE,
                    size: size[j as usize],
                }),
                _ => None,
            };
            if let Some(r) = rec {
                // Under the fifty-move rule the store keeps the better of
                // two proofs of one position; the depth kept is its.
                let kept = !self.rule_set.fifty_move
                    || !self.filter.contains(node.z)
                    || match self.stored_entry_by_key(node.z, &node.packed)? {
                        Some((o, Some(on))) => store::fifty_better((&r, node.need), (&o, on)),
                        _ => true,
                    };
                batch.push((node.packed, r, node.need));
                new_stored.push((node.z, kept.then_some(depth[j as usize])));
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
        if !batch.is_empty() {
            self.put(&batch)?;
        }
        written += batch.len() as u64;
        if let Some(s) = self.store {
            let mut rebuild = false;
            {
                let mut cache = self.cache.borrow_mut();
                for &(z, d) in &new_stored {
                    // The store now decides these positions afresh.
                    if let Some(c) = cache.get_mut(z as usize & (CACHE_SLOTS - 1)) {
                        *c = None;
                    }
                    rebuild |= !self.filter.insert(z);
                    if let Some(d) = d {
                        self.depths.insert(z, d);
                    }
                }
            }
            if rebuild {
                // Past its load: rebuilt from the store's keys, sized for
                // them.
                // With the records not yet committed, and room for them.
                let pending: Vec<Key> = self
                    .pending
                    .iter()
                    .flat_map(|p| p.keys().copied())
                    .collect();
                self.filter = StoredFilter::default();
                self.filter = load_filter_with(s, self.rule_set, &pending)?;
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
    /// rule), or keeps them while deferring ([`Writer::defer`]).
    fn put(&mut self, batch: &[(Key, Record, Need)]) -> Result<(), StoreError> {
        if let Some(p) = self.pending.as_mut() {
            p.extend(batch.iter().map(|&(k, r, n)| (k, (r, n))));
            return Ok(());
        }
        let Some(s) = self.store else {
            return Ok(());
        };
        if self.rule_set.fifty_move {
            s.put_batch_fifty(self.rule_set, batch)?;
        } else {
            let plain: Vec<(Key, Record)> = batch.iter().map(|&(k, r, _)| (k, r)).collect();
            s.put_batch(self.rule_set, &plain)?;
        }
        if let Some(keys) = &self.written_keys {
            let mut keys = keys.lock().unwrap_or_else(|e| e.into_inner());
            keys.extend(batch.iter().map(|&(k, _, _)| k));
        }
        Ok(())
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

/// The filter of the positions stored for `rule_set`, from the store's
/// keys: sized for the store's record count, and built as they come (never
/// more than the filter and a small side set in memory).
fn load_filter(s: &Store, rule_set: RuleSet) -> Result<StoredFilter, StoreError> {
    load_filter_with(s, rule_set, &[])
}

/// [`load_filter`] with the positions of the keys `more` too.
fn load_filter_with(
    s: &Store,
    rule_set: RuleSet,
    more: &[Key],
) -> Result<StoredFilter, StoreError> {
    let mut filter = StoredFilter::with_expected(s.len(rule_set)? + more.len() as u64);
    let mut add = |k: &Key| {
        if let Ok(p) = Position::unpack(&PackedPosition(*k)) {
            filter.insert(p.zobrist());
        }
    };
    more.iter().for_each(&mut add);
    let reader = s.reader()?;
    reader.for_each_entry(rule_set, |k, _, _| {
        add(k);
        Ok(())
    })?;
    filter.fold();
    Ok(filter)
}

/// A record's value for ranking and proof-size estimates: proof size << 1
/// | 1 for a win.
pub(super) fn stored_value(r: &Record) -> u64 {
    (r.size.min(u64::MAX >> 2) << 1) | (r.verdict == WinLoss::Win) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Rules;

    fn loss(size: u64) -> Record {
        Record {
            verdict: WinLoss::Loss,
            flags: 0,
            mv: MoveCode::NONE,
            size,
        }
    }

    #[test]
    fn hits_are_confirmed_by_the_full_key_and_cached() {
        let dir = std::env::temp_dir().join(format!("antiproof-write-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.redb");
        let _ = std::fs::remove_file(&path);
        let rules = RuleSet::from(Rules::International);
        let (stored, _) = Position::startpos().play_line(&["e3", "e5"]).unwrap();
        let (absent, _) = Position::startpos().play_line(&["e3", "d5"]).unwrap();
        let store = Store::open(&path).unwrap();
        store
            .put_batch(rules, &[(stored.pack().0, loss(42))])
            .unwrap();
        let mut w = Writer::open(Some(&store), rules).unwrap();
        assert_eq!(w.stored_len(), 1);
        assert!(w.filter_bytes() > 0);
        let want = Some((loss(42), None));
        assert_eq!(w.stored_entry(&stored).unwrap(), want);
        assert_eq!(w.stored_get(&stored).unwrap(), Some((42 << 1, None)));
        // A false positive of the filter (simulated: the hash of a position
        // that is not stored) is rejected by the store.
        assert!(!w.is_stored(&absent).unwrap());
        w.filter.insert(absent.zobrist());
        assert!(w.filter.contains(absent.zobrist()));
        assert!(!w.is_stored(&absent).unwrap());
        assert_eq!(w.stored_get(&absent).unwrap(), None);
        // Answers come from the cache now: a record the writer did not
        // write is not seen...
        store
            .put_batch(rules, &[(stored.pack().0, loss(7))])
            .unwrap();
        assert_eq!(w.stored_entry(&stored).unwrap(), want);
        // ... until the slot is dropped, as `write_proof` does for what it
        // writes.
        w.cache.borrow_mut()[stored.zobrist() as usize & (CACHE_SLOTS - 1)] = None;
        assert_eq!(w.stored_entry(&stored).unwrap(), Some((loss(7), None)));
        drop(w);
        // Without a store: nothing, and no memory.
        let none = Writer::open(None, rules).unwrap();
        assert_eq!(none.stored_entry(&stored).unwrap(), None);
        assert_eq!(none.filter_bytes(), 0);
        assert!(none.cache.borrow().is_empty());
        drop(store);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
