//! Run state of a plain search: what one df-pn search knows, in a small
//! file that outlives its machine (`prove --state FILE` with no job
//! executor).
//!
//! A plain search keeps its numbers in its transposition table, which it
//! saves whole beside the store when it stops (gigabytes, on one machine,
//! and nothing at all when the process is killed). The state file holds
//! what a fresh machine needs to go on, written every `--state-every` and
//! when the search stops:
//!
//! * the table's entries with the most work below them (up to
//!   `--state-tt`, [`DEFAULT_TT_ENTRIES`] by default): the search's proof and disproof numbers where it
//!   worked longest. They are the prover's guesses, never proof: a proof
//!   is still extracted from real positions and certified. They are kept
//!   with a fingerprint of how the table's keys are made
//!   ([`super::tt_key_fingerprint`]) and used only by a build that makes
//!   keys alike;
//! * the records this search wrote to the store (the proofs it
//!   checkpointed), up to `--state-records`, with their needs under the
//!   fifty-move rule.
//!
//! It names its rule set, root and winner, so the state of another search
//! is refused. It is written atomically (a temporary file renamed over the
//! old), zstd compressed, and ends with a SHA-256 of what it holds, so a
//! damaged or cut file is refused, never half read.
//!
//! A job-level search has a state file of its own (`crate::jobs::state`,
//! with its top tree); the two are told apart by their first line. What
//! both kinds share lives here: the error type, reading and writing the
//! compressed file, the checked body between the magic line and the
//! digest, and the table entry's 20 bytes.
//!
//! # Layout (version 1), inside one zstd frame
//!
//! ```text
//! magic    "antiproof-search-state\n"         23 bytes
//! version  u32 LE = 1
//! rules    u8 (Rules::code), fifty u8 (0 or 1)
//! root     25 bytes (the packed position), winner u8 (0 white, 1 black)
//! keys     u64 LE: the tt key fingerprint
//! count    u64 LE: records
//! records  count x (key 25 bytes, record 12 bytes, need u8)
//! count    u64 LE: tt entries
//! entries  count x (key u64 LE, pn u32 LE, dn u32 LE, work u32 LE)
//! sha256   32 bytes of everything above
//! ```

use super::tt::{Tt, TtValue};
use crate::rules::{Color, Position};
use crate::store::{KEY_LEN, Key, Need, RECORD_LEN, Record, RuleSet, Rules, Store, StoreError};
use sha2::{Digest, Sha256};
use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 23] = b"antiproof-search-state\n";
const VERSION: u32 = 1;

/// Table entries a plain search's state holds by default (`--state-tt`):
/// 20 bytes each before compression, about 4.3 MB compressed. Fewer
/// measured worse: a state of 100,000 entries resumed rung 10 in more
/// nodes than a fresh search (docs/prove.md, "A plain search's state").
pub const DEFAULT_TT_ENTRIES: usize = 400_000;

/// The fewest table entries a plain search's state holds by default when
/// its records take the rest of [`StateSave::max_items`].
pub const MIN_TT_ENTRIES: usize = 100_000;

/// A state file (of either kind) is refused past this size once
/// decompressed.
const MAX_BYTES: u64 = 1 << 30;

/// Bytes of one table entry, in a state file of either kind and in a
/// job's table excerpt (`crate::jobs::excerpt`).
pub(crate) const ENTRY_LEN: usize = 20;

/// Appends one table entry: key (u64), pn, dn, work (u32 each), all
/// little-endian.
pub(crate) fn push_entry(b: &mut Vec<u8>, key: u64, v: &TtValue) {
    b.extend_from_slice(&key.to_le_bytes());
    b.extend_from_slice(&v.pn.to_le_bytes());
    b.extend_from_slice(&v.dn.to_le_bytes());
    b.extend_from_slice(&v.work.to_le_bytes());
}

/// The table entry [`push_entry`] wrote.
pub(crate) fn entry(b: &[u8; ENTRY_LEN]) -> (u64, TtValue) {
    let u32_at = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
    (
        u64::from_le_bytes(b[..8].try_into().expect("8 bytes")),
        TtValue {
            pn: u32_at(8),
            dn: u32_at(12),
            work: u32_at(16),
        },
    )
}

/// A state file's bytes (of either kind) between its magic line and its
/// SHA-256, checked, read in order.
pub(crate) struct Body<'a> {
    body: &'a [u8],
    at: usize,
}

impl<'a> Body<'a> {
    /// The bytes of `b` after `magic`, if it begins with it and ends with
    /// the SHA-256 of what precedes; `other` is the other kind's magic
    /// line and what to say when `b` begins with it.
    pub(crate) fn open(
        b: &'a [u8],
        magic: &[u8],
        other: (&[u8], &str),
    ) -> Result<Body<'a>, String> {
        if b.len() < magic.len() + 32 || !b.starts_with(magic) {
            return Err(if b.starts_with(other.0) {
                other.1.to_string()
            } else {
                "it does not begin with the state file's magic line".into()
            });
        }
        let (body, digest) = b.split_at(b.len() - 32);
        if Sha256::digest(body).as_slice() != digest {
            return Err("its checksum does not match (damaged or cut short)".into());
        }
        Ok(Body {
            body,
            at: magic.len(),
        })
    }

    /// The next `n` bytes.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let s = self
            .body
            .get(self.at..self.at + n)
            .ok_or_else(|| format!("cut short at byte {}", self.at))?;
        self.at += n;
        Ok(s)
    }

    /// Refuses bytes left after the last field read.
    pub(crate) fn end(&self) -> Result<(), String> {
        match self.body.len() - self.at {
            0 => Ok(()),
            n => Err(format!("{n} bytes after the last field")),
        }
    }
}

/// What can go wrong saving or reading a run state file, of either kind
/// (this module's, and a job-level search's, `crate::jobs::state`).
#[derive(Debug)]
pub enum StateError {
    /// The file could not be read or written.
    Io(PathBuf, std::io::Error),
    /// The file is not a state file of this kind and layout, or is
    /// damaged.
    Malformed(PathBuf, String),
    /// The file is the state of another search than the command's.
    Mismatch(PathBuf, String),
    /// The store failed.
    Store(StoreError),
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // The cause is the source.
            StateError::Io(p, _) => write!(f, "run state {}", p.display()),
            StateError::Malformed(p, why) => {
                write!(
                    f,
                    "run state {}: not a valid state file: {why}",
                    p.display()
                )
            }
            StateError::Mismatch(p, why) => write!(f, "run state {}: {why}", p.display()),
            StateError::Store(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for StateError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StateError::Io(_, e) => Some(e),
            // Transparent: its message is the store error's own.
            StateError::Store(e) => e.source(),
            _ => None,
        }
    }
}

impl From<StoreError> for StateError {
    fn from(e: StoreError) -> StateError {
        StateError::Store(e)
    }
}

/// Writes a state file's bytes to `path`: zstd compressed, atomically (a
/// temporary file renamed over the old). Returns the file's size.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<u64, StateError> {
    let compressed =
        zstd::bulk::compress(bytes, 19).map_err(|e| StateError::Io(path.to_path_buf(), e))?;
    crate::fsutil::write_atomic(path, |w| w.write_all(&compressed))
        .map_err(|e| StateError::Io(path.to_path_buf(), e))?;
    Ok(compressed.len() as u64)
}

/// Reads a state file's bytes from `path` (a regular file), refusing one
/// past [`MAX_BYTES`] once decompressed.
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, StateError> {
    let io = |e| StateError::Io(path.to_path_buf(), e);
    let file = crate::fsutil::open_regular(path).map_err(io)?;
    let mut bytes = Vec::new();
    zstd::stream::read::Decoder::new(file)
        .map_err(io)?
        .take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| StateError::Malformed(path.to_path_buf(), format!("zstd: {e}")))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(StateError::Malformed(
            path.to_path_buf(),
            format!("more than {MAX_BYTES} bytes once decompressed"),
        ));
    }
    Ok(bytes)
}

/// A plain search's state, as read from a file or collected from a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchState {
    /// The rule set searched.
    pub rule_set: RuleSet,
    /// The root's packed position.
    pub root: Key,
    /// The side proven to win.
    pub winner: Color,
    /// How the tt entries' keys were made (0 with no entries).
    pub tt_fingerprint: u64,
    /// Records the search wrote, with their needs (the fifty-move rule's;
    /// unused without it).
    pub records: Vec<(Key, Record, Need)>,
    /// The table's entries of most work, by key.
    pub tt: Vec<(u64, TtValue)>,
}

/// Where and how often a run saves its state, and how much (a plain
/// search's or a job-level master's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateSave {
    /// The state file.
    pub path: PathBuf,
    /// Time between two saves while the run goes on (it is saved when it
    /// stops too, however it stops short of a kill).
    pub every: std::time::Duration,
    /// Records it may hold.
    pub max_records: usize,
    /// Table entries it may hold.
    pub max_tt: usize,
    /// Records and table entries together, when set (a plain search's
    /// default, `--state-tt` not given): the entries fill what the records
    /// leave, down to [`MIN_TT_ENTRIES`], so the file stays near 5 MB
    /// however many records the search wrote (about 10 bytes each
    /// compressed, either kind).
    pub max_items: Option<usize>,
}

impl StateSave {
    /// Table entries a state of `records` records holds.
    pub fn tt_entries(&self, records: usize) -> usize {
        match self.max_items {
            Some(n) => n
                .saturating_sub(records)
                .max(MIN_TT_ENTRIES)
                .min(self.max_tt),
            None => self.max_tt,
        }
    }
}

/// What a save wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateSaved {
    /// Records written.
    pub records: u64,
    /// Records left out (past `max_records`).
    pub records_left: u64,
    /// Table entries written.
    pub tt_entries: u64,
    /// Bytes of the file.
    pub bytes: u64,
}

impl SearchState {
    /// The tt entries, if this build makes keys as the saving one did.
    pub fn tt_seed(&self) -> Option<&[(u64, TtValue)]> {
        (self.tt.is_empty() || self.tt_fingerprint == super::tt_key_fingerprint())
            .then_some(&self.tt[..])
    }

    /// Refuses the state of another search than the one of `rule_set`
    /// from `root` for `winner`, naming the difference.
    pub fn check_for(
        &self,
        path: &Path,
        rule_set: RuleSet,
        root: &Position,
        winner: Color,
    ) -> Result<(), StateError> {
        if self.rule_set != rule_set {
            return Err(StateError::Mismatch(
                path.to_path_buf(),
                format!(
                    "it is the state of a search under {}, not {}",
                    self.rule_set.name(),
                    rule_set.name()
                ),
            ));
        }
        if self.root != root.pack().0 || self.winner != winner {
            let fen = Position::unpack(&crate::rules::PackedPosition(self.root))
                .map(|p| p.to_fen())
                .unwrap_or_else(|_| "?".into());
            return Err(StateError::Mismatch(
                path.to_path_buf(),
                format!(
                    "it is the state of a search for {} from {fen}, not of this one ({} from {})",
                    self.winner.to_string().to_lowercase(),
                    winner.to_string().to_lowercase(),
                    root.to_fen()
                ),
            ));
        }
        Ok(())
    }

    /// Writes the records the store does not hold yet into `store`;
    /// returns how many.
    pub fn restore_records(&self, store: &Store) -> Result<u64, StoreError> {
        let mut written = 0;
        for chunk in self.records.chunks(100_000) {
            let reader = store.reader()?;
            let mut fresh = Vec::with_capacity(chunk.len());
            for &(k, r, n) in chunk {
                if reader.get(self.rule_set, &k)?.is_none() {
                    fresh.push((k, r, n));
                }
            }
            drop(reader);
            if self.rule_set.fifty_move {
                store.put_batch_fifty(self.rule_set, &fresh)?;
            } else {
                let plain: Vec<(Key, Record)> = fresh.iter().map(|&(k, r, _)| (k, r)).collect();
                store.put_batch(self.rule_set, &plain)?;
            }
            written += fresh.len() as u64;
        }
        Ok(written)
    }
}

/// The state of the search of `rule_set` from `root` for `winner`: the
/// records of `keys` that `store` holds (at most `save.max_records`, in
/// the order given) and the entries of `tt` of most work, as many as
/// [`StateSave::tt_entries`] leaves for them.
pub fn collect(
    store: &Store,
    rule_set: RuleSet,
    root: Key,
    winner: Color,
    keys: &[Key],
    tt: &Tt,
    save: &StateSave,
) -> Result<(SearchState, u64), StoreError> {
    let max_records = save.max_records;
    let reader = store.reader()?;
    let mut records = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut left = 0u64;
    for k in keys {
        if !seen.insert(*k) {
            continue;
        }
        if records.len() >= max_records {
            left += 1;
            continue;
        }
        if let Some((r, need)) = reader.get_entry(rule_set, k)? {
            records.push((
                *k,
                r,
                need.unwrap_or(crate::vocab::FIFTY_MOVE_PLIES as Need),
            ));
        }
    }
    let tt = tt.most_worked(save.tt_entries(records.len()));
    Ok((
        SearchState {
            rule_set,
            root,
            winner,
            tt_fingerprint: if tt.is_empty() {
                0
            } else {
                super::tt_key_fingerprint()
            },
            records,
            tt,
        },
        left,
    ))
}

/// The file's bytes before compression.
fn encode(s: &SearchState) -> Vec<u8> {
    let mut b = Vec::with_capacity(128 + s.records.len() * 38 + s.tt.len() * ENTRY_LEN);
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&VERSION.to_le_bytes());
    b.push(s.rule_set.stalemate.code());
    b.push(s.rule_set.fifty_move as u8);
    b.extend_from_slice(&s.root);
    b.push(match s.winner {
        Color::White => 0,
        Color::Black => 1,
    });
    b.extend_from_slice(&s.tt_fingerprint.to_le_bytes());
    b.extend_from_slice(&(s.records.len() as u64).to_le_bytes());
    for (k, r, n) in &s.records {
        b.extend_from_slice(k);
        b.extend_from_slice(&r.to_bytes());
        b.push(*n);
    }
    b.extend_from_slice(&(s.tt.len() as u64).to_le_bytes());
    for (k, v) in &s.tt {
        push_entry(&mut b, *k, v);
    }
    let digest = Sha256::digest(&b);
    b.extend_from_slice(&digest);
    b
}

/// Reads [`encode`]'s bytes.
fn decode(b: &[u8]) -> Result<SearchState, String> {
    let mut body = Body::open(
        b,
        MAGIC,
        (
            b"antiproof-run-state\n",
            "it is a job-level search's state (give it with --executor threads, local, slurm, srun or sim)",
        ),
    )?;
    let mut take = |n: usize| body.take(n);
    let u32_of = |s: &[u8]| u32::from_le_bytes(s.try_into().expect("4 bytes"));
    let u64_of = |s: &[u8]| u64::from_le_bytes(s.try_into().expect("8 bytes"));
    let version = u32_of(take(4)?);
    if version != VERSION {
        return Err(format!(
            "layout version {version}, this build reads {VERSION}"
        ));
    }
    let code = take(1)?[0];
    let stalemate = Rules::from_code(code).ok_or_else(|| format!("rule-set code {code}"))?;
    let fifty_move = match take(1)?[0] {
        0 => false,
        1 => true,
        f => return Err(format!("fifty-move flag {f}")),
    };
    let root: Key = take(KEY_LEN)?.try_into().expect("25 bytes");
    let winner = match take(1)?[0] {
        0 => Color::White,
        1 => Color::Black,
        w => return Err(format!("winner {w}")),
    };
    let tt_fingerprint = u64_of(take(8)?);
    let n = u64_of(take(8)?);
    let mut records = Vec::new();
    for _ in 0..n {
        let key: Key = take(KEY_LEN)?.try_into().expect("25 bytes");
        let rec = Record::from_bytes(take(RECORD_LEN)?.try_into().expect("12 bytes"))
            .map_err(|e| format!("a record: {e}"))?;
        let need = take(1)?[0];
        records.push((key, rec, need));
    }
    let n = u64_of(take(8)?);
    let mut tt = Vec::new();
    for _ in 0..n {
        tt.push(entry(
            take(ENTRY_LEN)?.try_into().expect("an entry's bytes"),
        ));
    }
    body.end()?;
    Ok(SearchState {
        rule_set: RuleSet {
            stalemate,
            fifty_move,
        },
        root,
        winner,
        tt_fingerprint,
        records,
        tt,
    })
}

/// Writes `state` to `path` ([`write_file`]); returns the file's bytes.
pub fn write(path: &Path, state: &SearchState) -> Result<u64, StateError> {
    write_file(path, &encode(state))
}

/// Reads a state file.
pub fn read(path: &Path) -> Result<SearchState, StateError> {
    decode(&read_file(path)?).map_err(|why| StateError::Malformed(path.to_path_buf(), why))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::WinLoss;
    use crate::vocab::MoveCode;

    fn sample(rule_set: RuleSet) -> SearchState {
        let root = Position::startpos();
        let rec = Record {
            verdict: WinLoss::Win,
            flags: 0,
            mv: MoveCode::NONE,
            size: 7,
        };
        SearchState {
            rule_set,
            root: root.pack().0,
            winner: Color::White,
            tt_fingerprint: crate::search::tt_key_fingerprint(),
            records: vec![(root.pack().0, rec, 9)],
            tt: vec![(
                42,
                TtValue {
                    pn: 3,
                    dn: 4,
                    work: 5,
                },
            )],
        }
    }

    #[test]
    fn a_state_reads_back_as_written_and_a_damaged_one_is_refused() {
        for rule_set in [
            RuleSet::from(Rules::International),
            RuleSet {
                stalemate: Rules::Joint,
                fifty_move: true,
            },
        ] {
            let s = sample(rule_set);
            let b = encode(&s);
            assert_eq!(decode(&b).unwrap(), s);
            let mut bad = b.clone();
            let mid = bad.len() / 2;
            bad[mid] ^= 1;
            assert!(decode(&bad).unwrap_err().contains("checksum"));
            assert!(decode(&b[..b.len() - 1]).is_err());
        }
        assert!(
            decode(b"antiproof-run-state\n and more bytes than the digest needs ....")
                .unwrap_err()
                .contains("job-level")
        );
    }

    #[test]
    fn records_take_the_table_entries_room_down_to_a_floor_unless_counts_are_given() {
        let save = |max_items| StateSave {
            path: PathBuf::from("s.zst"),
            every: std::time::Duration::from_secs(1),
            max_records: 400_000,
            max_tt: DEFAULT_TT_ENTRIES,
            max_items,
        };
        let shared = save(Some(DEFAULT_TT_ENTRIES));
        assert_eq!(shared.tt_entries(0), DEFAULT_TT_ENTRIES);
        assert_eq!(shared.tt_entries(150_000), 250_000);
        assert_eq!(shared.tt_entries(390_000), MIN_TT_ENTRIES);
        // `--state-tt` given: its count, whatever the records.
        assert_eq!(save(None).tt_entries(390_000), DEFAULT_TT_ENTRIES);
    }

    #[test]
    fn the_state_of_another_search_is_refused_naming_it() {
        let s = sample(RuleSet::from(Rules::International));
        let p = Path::new("s.zst");
        let start = Position::startpos();
        s.check_for(p, RuleSet::from(Rules::International), &start, Color::White)
            .unwrap();
        let e = s
            .check_for(p, RuleSet::from(Rules::Joint), &start, Color::White)
            .unwrap_err()
            .to_string();
        assert!(e.contains("under"), "{e}");
        let e = s
            .check_for(p, RuleSet::from(Rules::International), &start, Color::Black)
            .unwrap_err()
            .to_string();
        assert!(e.contains("for white"), "{e}");
    }
}
