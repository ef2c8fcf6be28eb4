//! Run state: what a job-level search knows, in a small file that
//! outlives its machine (`prove --state FILE`).
//!
//! The store of a long run holds its top tree ([`super::top`]) and every
//! record its jobs proved, and lives on one machine. The state file holds
//! what the next session, on any machine, needs to go on:
//!
//! * the top tree whole, every node with its numbers and state (what was
//!   proven and disproven, the budgets, the run generation);
//! * the stored proofs of its proven nodes, each whole or not at all,
//!   smallest first, up to a number of records ([`DEFAULT_RECORDS`]):
//!   what did not fit is proven again after a restore (its node reopened
//!   as a frontier leaf), unless a proof loaded as a known win
//!   ([`crate::known`], `prove --known proofs/`) holds its position;
//! * the entries of the jobs' shared transposition table with the most
//!   work below them (up to [`DEFAULT_TT_ENTRIES`]): what the jobs had
//!   learnt of the lines not closed yet (above all the disproofs, which
//!   no record keeps), so a resumed run does not search them from
//!   nothing. They are the prover's guesses, never proof: a job's proof
//!   is still certified before it is merged. They are kept with a
//!   fingerprint of how the table's keys are made
//!   ([`crate::search::tt_key_fingerprint`]) and used only by a build
//!   that makes keys alike.
//!
//! It is written atomically (a temporary file renamed over the old), zstd
//! compressed, and ends with a SHA-256 of what it holds, so a damaged or
//! cut file is refused, never half read.
//!
//! Restoring ([`restore`]) writes the records and the tree into a store
//! that has no top tree of this root; the master then resumes it as it
//! resumes a tree of its own store ([`super::top::TopTree::open`]): what
//! is not certain is reopened, a proven node whose position has no record
//! in the store among it (its proof did not fit in the file, and no known
//! win holds it), and every inner node's numbers are summed again.
//!
//! # Layout (version 2), inside one zstd frame
//!
//! ```text
//! magic   "antiproof-run-state\n"            20 bytes
//! version u32 LE = 2
//! rules   u8 (Rules::code)
//! count   u64 LE: top-tree values (the header value included)
//! values  count x (id u64 LE, len u16 LE, len bytes)
//! count   u64 LE: records
//! records count x (key 25 bytes, record 12 bytes)
//! keys    u64 LE: the tt key fingerprint
//! count   u64 LE: tt entries
//! entries count x (key u64 LE, pn u32 LE, dn u32 LE, work u32 LE)
//! sha256  32 bytes of everything above
//! ```
//!
//! Version 1 (no tt section: `keys` to `entries` absent) is read too.

use super::top::{HEADER_ID, State, TopNode};
use crate::rules::{Position, Rules};
use crate::search::tt::{Tt, TtValue};
use crate::store::{KEY_LEN, Key, RECORD_LEN, Record, Store, StoreError};
use crate::stored::{StoredNode, StoredProof};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::path::Path;

const MAGIC: &[u8; 20] = b"antiproof-run-state\n";
const VERSION: u32 = 2;

/// Records of proven nodes' proofs a state file holds by default: about
/// 38 bytes each before compression, so some 5 MB compressed at most.
pub const DEFAULT_RECORDS: usize = 400_000;

/// Transposition-table entries a state file holds by default: 20 bytes
/// each before compression (about 1.6 MB compressed for 100,000).
pub const DEFAULT_TT_ENTRIES: usize = 100_000;

pub use crate::search::state::StateError;

/// A run's state as read from a file or the store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunState {
    /// The stalemate rule of the search (jobs run without the fifty-move
    /// rule).
    pub rules: Rules,
    /// The top tree's values by id, the header's included, as the store
    /// holds them.
    pub values: Vec<(u64, Vec<u8>)>,
    /// Records of the proven nodes' proofs.
    pub records: Vec<(Key, Record)>,
    /// How the tt entries' keys were made
    /// ([`crate::search::tt_key_fingerprint`]; 0 with no entries).
    pub tt_fingerprint: u64,
    /// The shared table's entries of most work, by key.
    pub tt: Vec<(u64, TtValue)>,
}

impl RunState {
    /// The tt entries, if this build makes keys as the saving one did.
    pub fn tt_seed(&self) -> Option<&[(u64, TtValue)]> {
        (self.tt.is_empty() || self.tt_fingerprint == crate::search::tt_key_fingerprint())
            .then_some(&self.tt[..])
    }
}

/// What [`save`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Saved {
    /// Top-tree nodes.
    pub nodes: u64,
    /// Proven nodes whose proofs went in whole.
    pub proofs_kept: u64,
    /// Proven nodes whose proofs did not fit (or did not close).
    pub proofs_left: u64,
    /// Records written.
    pub records: u64,
    /// Transposition-table entries written.
    pub tt_entries: u64,
    /// Bytes of the file.
    pub bytes: u64,
}

/// What [`restore`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Restored {
    /// Top-tree nodes restored.
    pub nodes: u64,
    /// Records written to the store.
    pub records: u64,
}

/// Reads the top tree of `rules` from `store`, the proofs of its proven
/// nodes (up to `max_records` records, each proof whole or not at all,
/// smallest first) and the `max_tt` entries of `tt` of most work.
pub fn collect(
    store: &Store,
    rules: Rules,
    max_records: usize,
    tt: Option<&Tt>,
    max_tt: usize,
) -> Result<(RunState, Saved), StateError> {
    let Some(header) = store.top_get(rules, HEADER_ID)? else {
        return Err(StateError::Store(StoreError::Corrupt(
            "the store holds no top tree to save".into(),
        )));
    };
    let mut values = store.top_range(rules, 0, u64::MAX - 1)?;
    values.push((HEADER_ID, header));
    let nodes: Vec<(u64, TopNode)> = values
        .iter()
        .filter(|(id, _)| *id != HEADER_ID)
        .filter_map(|(id, b)| TopNode::from_bytes(b).map(|n| (*id, n)))
        .collect();
    let proven: HashSet<u64> = nodes
        .iter()
        .filter(|(_, n)| n.state == State::Proven)
        .map(|(id, _)| *id)
        .collect();
    // The highest proven nodes: their proofs hold those below.
    let reader = store.reader()?;
    let proof = StoredProof::new(&reader, rules);
    let mut tops: Vec<(u64, TopNode)> = nodes
        .iter()
        .filter(|(id, n)| proven.contains(id) && !proven.contains(&n.parent))
        .map(|&(_, n)| {
            let size = reader
                .get(rules, &n.key)
                .ok()
                .flatten()
                .map_or(1, |r| r.size);
            (size, n)
        })
        .collect();
    tops.sort_by_key(|(size, _)| *size);
    let mut seen: HashSet<Key> = HashSet::new();
    let mut records: Vec<(Key, Record)> = Vec::new();
    let (mut kept, mut left) = (0u64, 0u64);
    for (_, n) in tops {
        let mark = records.len();
        let mut added: Vec<Key> = Vec::new();
        let mut stack = vec![n.position()];
        let mut closed = true;
        while let Some(pos) = stack.pop() {
            let key = pos.pack().0;
            if seen.contains(&key) {
                continue;
            }
            match proof.node(&pos)? {
                Ok(StoredNode::GameEnd(_)) => continue,
                Ok(node @ (StoredNode::Win { .. } | StoredNode::Loss { .. })) => {
                    let rec = *node.record().expect("a record");
                    seen.insert(key);
                    added.push(key);
                    records.push((key, rec));
                    stack.extend(node.moves(&pos).iter().map(|&m| pos.play(m)));
                }
                _ => {
                    closed = false;
                    break;
                }
            }
            if records.len() > max_records {
                closed = false;
                break;
            }
        }
        if closed {
            kept += 1;
        } else {
            records.truncate(mark);
            for k in added {
                seen.remove(&k);
            }
            left += 1;
        }
    }
    let tt = tt.map_or_else(Vec::new, |t| t.most_worked(max_tt));
    let saved = Saved {
        nodes: nodes.len() as u64,
        proofs_kept: kept,
        proofs_left: left,
        records: records.len() as u64,
        tt_entries: tt.len() as u64,
        bytes: 0,
    };
    Ok((
        RunState {
            rules,
            values,
            records,
            tt_fingerprint: if tt.is_empty() {
                0
            } else {
                crate::search::tt_key_fingerprint()
            },
            tt,
        },
        saved,
    ))
}

/// The file's bytes before compression.
fn encode(state: &RunState) -> Vec<u8> {
    let mut b = Vec::with_capacity(64 + state.values.len() * 80 + state.records.len() * 37);
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&VERSION.to_le_bytes());
    b.push(state.rules.code());
    b.extend_from_slice(&(state.values.len() as u64).to_le_bytes());
    for (id, v) in &state.values {
        b.extend_from_slice(&id.to_le_bytes());
        b.extend_from_slice(&(v.len() as u16).to_le_bytes());
        b.extend_from_slice(v);
    }
    b.extend_from_slice(&(state.records.len() as u64).to_le_bytes());
    for (k, r) in &state.records {
        b.extend_from_slice(k);
        b.extend_from_slice(&r.to_bytes());
    }
    b.extend_from_slice(&state.tt_fingerprint.to_le_bytes());
    b.extend_from_slice(&(state.tt.len() as u64).to_le_bytes());
    for (k, v) in &state.tt {
        super::excerpt::push_entry(&mut b, *k, v);
    }
    let digest = Sha256::digest(&b);
    b.extend_from_slice(&digest);
    b
}

/// Reads [`encode`]'s bytes.
fn decode(b: &[u8]) -> Result<RunState, String> {
    let mut body = crate::search::state::Body::open(
        b,
        MAGIC,
        (
            b"antiproof-search-state\n",
            "it is a plain search's state (give it with no --executor, or --executor search)",
        ),
    )?;
    let mut take = |n: usize| body.take(n);
    let version = u32::from_le_bytes(take(4)?.try_into().expect("4"));
    if version != VERSION && version != 1 {
        return Err(format!(
            "layout version {version}, this build reads {VERSION}"
        ));
    }
    let code = take(1)?[0];
    let rules = Rules::from_code(code).ok_or_else(|| format!("rule-set code {code}"))?;
    let n = u64::from_le_bytes(take(8)?.try_into().expect("8"));
    let mut values = Vec::new();
    for _ in 0..n {
        let id = u64::from_le_bytes(take(8)?.try_into().expect("8"));
        let len = u16::from_le_bytes(take(2)?.try_into().expect("2")) as usize;
        values.push((id, take(len)?.to_vec()));
    }
    let n = u64::from_le_bytes(take(8)?.try_into().expect("8"));
    let mut records = Vec::new();
    for _ in 0..n {
        let key: Key = take(KEY_LEN)?.try_into().expect("25");
        let rec = Record::from_bytes(take(RECORD_LEN)?.try_into().expect("12"))
            .map_err(|e| format!("a record: {e}"))?;
        records.push((key, rec));
    }
    let mut tt = Vec::new();
    let mut tt_fingerprint = 0;
    if version >= 2 {
        tt_fingerprint = u64::from_le_bytes(take(8)?.try_into().expect("8"));
        let n = u64::from_le_bytes(take(8)?.try_into().expect("8"));
        for _ in 0..n {
            let e = take(super::excerpt::ENTRY_LEN)?;
            tt.push(super::excerpt::entry(
                e.try_into().expect("an entry's bytes"),
            ));
        }
    }
    body.end()?;
    Ok(RunState {
        rules,
        values,
        records,
        tt_fingerprint,
        tt,
    })
}

/// Saves the run state of `store`'s top tree under `rules`, with the
/// entries of most work of the jobs' shared table `tt`, to `s.path`
/// (atomically; see the module doc).
pub fn save(
    store: &Store,
    rules: Rules,
    s: &StateSave,
    tt: Option<&Tt>,
) -> Result<Saved, StateError> {
    let path = &s.path;
    let (state, mut saved) = collect(store, rules, s.max_records, tt, s.max_tt)?;
    saved.bytes = crate::search::state::write_file(path, &encode(&state))?;
    Ok(saved)
}

/// Reads a state file.
pub fn read(path: &Path) -> Result<RunState, StateError> {
    decode(&crate::search::state::read_file(path)?)
        .map_err(|why| StateError::Malformed(path.to_path_buf(), why))
}

/// The root key and winner a state's header names, if it has one.
pub fn root_of(state: &RunState) -> Option<(Key, crate::rules::Color)> {
    let (_, b) = state.values.iter().find(|(id, _)| *id == HEADER_ID)?;
    super::top::Header::from_value(b).map(|h| (h.root, h.winner))
}

/// Writes `state` (read from `path`) into `store` as the top tree of
/// `root` for `winner`, then settles it against the store's records (see
/// the module doc). Refused when the state is of another search, or the
/// store already holds a top tree under the rule set.
pub fn restore(
    store: &Store,
    path: &Path,
    state: &RunState,
    root: &Position,
    winner: crate::rules::Color,
) -> Result<Restored, StateError> {
    let mismatch = |why: String| StateError::Mismatch(path.to_path_buf(), why);
    match root_of(state) {
        None => {
            return Err(StateError::Malformed(
                path.to_path_buf(),
                "no header".into(),
            ));
        }
        Some((key, w)) if key != root.pack().0 || w != winner => {
            let fen = Position::unpack(&crate::rules::PackedPosition(key))
                .map(|p| p.to_fen())
                .unwrap_or_else(|_| "?".into());
            return Err(mismatch(format!(
                "it is the state of a search for {} from {fen}, not of this one ({} from {})",
                w.to_string().to_lowercase(),
                winner.to_string().to_lowercase(),
                root.to_fen()
            )));
        }
        Some(_) => {}
    }
    if store.top_len(state.rules)? > 0 {
        return Err(mismatch(format!(
            "the store {} already holds a top tree under {} rules",
            store.path().display(),
            state.rules
        )));
    }
    // The records first, then the tree with what they settle.
    for chunk in state.records.chunks(100_000) {
        let reader = store.reader()?;
        let mut fresh = Vec::with_capacity(chunk.len());
        for (k, r) in chunk {
            if reader.get(state.rules, k)?.is_none() {
                fresh.push((*k, *r));
            }
        }
        drop(reader);
        store.put_batch(state.rules, &fresh)?;
    }
    let mut values = Vec::with_capacity(state.values.len());
    for (id, b) in &state.values {
        if *id != HEADER_ID && TopNode::from_bytes(b).is_none() {
            return Err(StateError::Malformed(
                path.to_path_buf(),
                format!("node {id}"),
            ));
        }
        values.push((*id, b.clone()));
    }
    store.top_commit(state.rules, &values, &[])?;
    Ok(Restored {
        nodes: values.len() as u64 - 1,
        records: state.records.len() as u64,
    })
}

/// Where and how often a master saves its run state (the same settings
/// as a plain search's).
pub use crate::search::state::StateSave;

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RunState {
        RunState {
            rules: Rules::Fics,
            values: vec![(0, vec![1, 2, 3]), (HEADER_ID, vec![9; 39])],
            records: vec![(
                [7; KEY_LEN],
                Record {
                    verdict: crate::store::WinLoss::Win,
                    flags: 0,
                    mv: crate::vocab::MoveCode::from_raw(0x1234),
                    size: 42,
                },
            )],
            tt_fingerprint: crate::search::tt_key_fingerprint(),
            tt: vec![(
                0x0123_4567_89ab_cdef,
                TtValue {
                    pn: 0,
                    dn: 17,
                    work: 1 << 20,
                },
            )],
        }
    }

    #[test]
    fn a_version_1_file_is_read_with_no_tt_entries() {
        let mut s = sample();
        s.tt.clear();
        s.tt_fingerprint = 0;
        let mut b = encode(&s);
        // Version 1: no tt section (its 16 bytes before the digest).
        b.truncate(b.len() - 32 - 16);
        b[MAGIC.len()..MAGIC.len() + 4].copy_from_slice(&1u32.to_le_bytes());
        let digest = Sha256::digest(&b);
        b.extend_from_slice(&digest);
        assert_eq!(decode(&b).unwrap(), s);
    }

    #[test]
    fn tt_entries_of_another_key_scheme_are_not_used() {
        let mut s = sample();
        assert_eq!(s.tt_seed().map(<[_]>::len), Some(1));
        s.tt_fingerprint ^= 1;
        assert_eq!(s.tt_seed(), None);
    }

    #[test]
    fn the_entries_of_most_work_are_kept() {
        let mut t = Tt::with_bytes(16 << 20);
        for k in 1..=1000u64 {
            let key = k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            t.put(
                key,
                TtValue {
                    pn: 3,
                    dn: 5,
                    work: k as u32,
                },
            );
        }
        let best = t.most_worked(10);
        assert_eq!(best.len(), 10);
        for (key, v) in &best {
            assert_eq!(t.get(*key), Some(*v), "a kept entry is the table's");
            assert!(
                v.work >= 512,
                "work {} kept among the 10 of most work",
                v.work
            );
        }
        assert_eq!(t.most_worked(5000).len(), 1000);
        assert!(t.most_worked(0).is_empty());
    }

    #[test]
    fn the_layout_round_trips_and_any_changed_byte_is_refused() {
        let s = sample();
        let b = encode(&s);
        assert_eq!(decode(&b).unwrap(), s);
        for i in 0..b.len() {
            let mut c = b.clone();
            c[i] ^= 1;
            assert!(decode(&c).is_err(), "byte {i} changed and read");
        }
        for n in 0..b.len() {
            assert!(decode(&b[..n]).is_err(), "cut at {n} and read");
        }
    }
}
