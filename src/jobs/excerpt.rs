//! A job's table excerpt: the entries of most work of an unresolved job's
//! transposition table, written beside its job file (`JOB.json.tt`) for
//! the jobs below it to start from.
//!
//! Jobs with tables of their own (Slurm's, the simulated cluster's,
//! `--no-shared-table`) lose their search when they end: a leaf whose job
//! ran out of budget is expanded, and each child's job used to start from
//! an empty table, searching again what its parent had searched below it.
//! With excerpts, a child's job loads the excerpt of its nearest ancestor
//! that has one, and its own excerpt (what it loaded and what it added)
//! goes on to its children. Entries are tt values for their keys on every
//! path, so any excerpt is sound; nothing in one is trusted beyond
//! guiding the search (a proof still has to be extracted, exported and
//! certified). A damaged file, or one of another key scheme
//! ([`crate::search::tt_key_fingerprint`]), is named in the job's log and
//! ignored.
//!
//! The file: the magic `APTTX001`, the key fingerprint (u64), the entry
//! count (u64), then each entry as key (u64), pn, dn, work (u32 each),
//! all little-endian, and the SHA-256 of what precedes it.

use crate::search::tt::TtValue;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"APTTX001";

// One table entry's bytes, as in a run state file.
pub(super) use crate::search::state::{ENTRY_LEN, entry, push_entry};

/// Entries a job's excerpt holds at most, whatever its budget
/// (20 bytes each: 40 MB).
pub const MAX_ENTRIES: u64 = 2_000_000;

/// The excerpt of the job in `job` (its file, `JOB.json.tt`).
pub fn excerpt_path(job: &Path) -> PathBuf {
    super::job::with_suffix(job, ".tt")
}

/// The entries to keep of a job of `budget` nodes: about half its nodes
/// (df-pn revisits nodes, so a table holds fewer entries than its search
/// expanded), at least 1,000 and at most [`MAX_ENTRIES`].
pub fn entries_for(budget: u64) -> u64 {
    (budget / 2).clamp(1_000, MAX_ENTRIES)
}

/// Writes `entries` to `path`, atomically, as a new file (never through a
/// link nor over another file's contents).
pub fn write(path: &Path, entries: &[(u64, TtValue)]) -> std::io::Result<u64> {
    let mut b = Vec::with_capacity(24 + entries.len() * ENTRY_LEN + 32);
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&crate::search::tt_key_fingerprint().to_le_bytes());
    b.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    for (k, v) in entries {
        push_entry(&mut b, *k, v);
    }
    let digest = Sha256::digest(&b);
    b.extend_from_slice(&digest);
    crate::fsutil::write_atomic(path, |w| w.write_all(&b))?;
    Ok(b.len() as u64)
}

/// Reads an excerpt [`write`] wrote; an error says what is wrong with it.
pub fn read(path: &Path) -> Result<Vec<(u64, TtValue)>, String> {
    use std::io::Read;
    let mut b = Vec::new();
    crate::fsutil::open_regular(path)
        .and_then(|mut f| f.read_to_end(&mut b))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let bad = |why: &str| format!("{}: not a table excerpt: {why}", path.display());
    if b.len() < 24 + 32 || &b[..8] != MAGIC {
        return Err(bad("it does not begin with the excerpt's magic"));
    }
    let (body, digest) = b.split_at(b.len() - 32);
    if Sha256::digest(body).as_slice() != digest {
        return Err(bad("its checksum does not match (damaged or cut short)"));
    }
    let word = |at: usize| u64::from_le_bytes(body[at..at + 8].try_into().expect("8 bytes"));
    if word(8) != crate::search::tt_key_fingerprint() {
        return Err(format!(
            "{}: its keys are another build's (another key scheme)",
            path.display()
        ));
    }
    let n = word(16);
    if n.checked_mul(ENTRY_LEN as u64) != Some((body.len() - 24) as u64) {
        return Err(bad("its entry count does not match its length"));
    }
    Ok(body[24..]
        .chunks_exact(ENTRY_LEN)
        .map(|c| entry(c.try_into().expect("an entry's bytes")))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("antiproof-excerpt-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn an_excerpt_round_trips_and_any_changed_byte_is_refused() {
        let d = dir("round");
        let p = d.join("g1-n2-a0.json.tt");
        let entries: Vec<(u64, TtValue)> = (0..50u64)
            .map(|i| {
                (
                    i * 7919,
                    TtValue {
                        pn: i as u32,
                        dn: 2 * i as u32,
                        work: 3,
                    },
                )
            })
            .collect();
        write(&p, &entries).unwrap();
        assert_eq!(read(&p).unwrap(), entries);
        let good = std::fs::read(&p).unwrap();
        for at in [0, 9, 17, 30, good.len() - 1] {
            let mut b = good.clone();
            b[at] ^= 1;
            std::fs::write(&p, &b).unwrap();
            assert!(read(&p).is_err(), "byte {at} changed, still read");
        }
        std::fs::write(&p, &good[..good.len() - 5]).unwrap();
        assert!(read(&p).unwrap_err().contains("not a table excerpt"));
        assert!(read(&d.join("none")).is_err());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn entries_kept_follow_the_budget_within_bounds() {
        assert_eq!(entries_for(0), 1_000);
        assert_eq!(entries_for(1_000_000), 500_000);
        assert_eq!(entries_for(u64::MAX), MAX_ENTRIES);
        assert_eq!(
            excerpt_path(Path::new("/w/g1-n2-a0.json")),
            Path::new("/w/g1-n2-a0.json.tt")
        );
    }
}
