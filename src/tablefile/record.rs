//! Certification records: which table files a certification has passed,
//! so that a later run can skip certifying the same bytes again.
//!
//! Certifying all 4-man tables takes the best part of an hour on a small
//! machine, and a proof whose leaves rest on 4-man tables needs most of
//! them certified. A record holds, for one table, the SHA-256 of its whole
//! file (header and data) at the time it was certified. A later
//! certification of a file with the same digest is the same certification
//! and is skipped; any change to the file (a rebuilt table, a flipped bit)
//! changes the digest, and the table is certified again.
//!
//! # Where records live, and why
//!
//! A record is a claim this program made on this machine, so records live
//! where only this program writes them: one text file, [`RECORD_FILE`], in
//! the user's own state directory ([`default_dir`]:
//! `$ANTIPROOF_STATE_DIR`, else `$XDG_STATE_HOME/antiproof`, else
//! `~/.local/state/antiproof`). They are **never** read from a table
//! directory: a table directory can come from anyone, and a record file
//! shipped beside a forged table (one wrong entry, checksums recomputed)
//! would otherwise vouch for it. A `certified.tsv` found in a table
//! directory (antiproof 0.1 wrote them there) is ignored.
//!
//! One tab-separated line per certification:
//!
//! ```text
//! # antiproof table certifications: rules, material, SHA-256 of the file, positions, moves, by
//! international<TAB>KQvK<TAB>3f5a…(64 hex digits)<TAB>10776800<TAB>123456789<TAB>antiproof 0.1.0
//! ```
//!
//! The rule set is written by name (`international`, or
//! `international+fifty` for a table under the fifty-move rule, whose
//! header flag also makes its digest differ from any plain table's).
//! Records are keyed by the file's digest, and a record counts only if it
//! was written by this very version of the checker (the `by` field): a new
//! version certifies again. Lines are only appended (one `write` each), and
//! lines that do not parse are ignored (that table is then simply
//! certified again). Only certification code writes records (`tables
//! verify`, and the checker's `verify --tables`); the generator never does.
//! With no state directory (no `$HOME`), nothing is recorded.
//!
//! What a record is worth: a correct table is unique (every entry is the
//! exact game value, and unused entries are 0), so a table certified
//! against certified tables below it stays right even if those are rebuilt
//! later: they are then certified again before it, and being correct they
//! hold the same values. `--recertify` ignores the records and writes
//! fresh ones.

use super::certify::{self, Certified, CertifyError};
use super::{RuleSet, Table, TableSource};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The record file's name in the state directory.
pub const RECORD_FILE: &str = "certified.tsv";

/// The environment variable that names the state directory.
pub const STATE_DIR_ENV: &str = "ANTIPROOF_STATE_DIR";

/// Who writes records, and whose records count: this checker's version.
const BY: &str = concat!("antiproof ", env!("CARGO_PKG_VERSION"));

/// This user's state directory for antiproof: `$ANTIPROOF_STATE_DIR`, else
/// `$XDG_STATE_HOME/antiproof`, else `$HOME/.local/state/antiproof`;
/// `None` when none of them is set (then nothing is recorded).
pub fn default_dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = var(STATE_DIR_ENV) {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = var("XDG_STATE_HOME") {
        return Some(PathBuf::from(d).join("antiproof"));
    }
    var("HOME").map(|h| PathBuf::from(h).join(".local/state/antiproof"))
}

const HEADER_LINE: &str = "# antiproof table certifications: rules, material, SHA-256 of the file, positions, moves, by\n";

/// One table's certification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CertificationRecord {
    /// SHA-256 of the whole table file.
    pub digest: [u8; 32],
    /// What the certification checked.
    pub certified: Certified,
}

/// This machine's certification records.
#[derive(Debug)]
pub struct Records {
    /// The record file; `None`: records are off.
    path: Option<PathBuf>,
    map: HashMap<[u8; 32], (RuleSet, String, CertificationRecord)>,
    /// Whether a record was written through this handle (the first is
    /// said on standard error: the file is outside any directory the
    /// command was given).
    wrote: bool,
}

/// The SHA-256 of a table's file bytes; `None` for a table not read from
/// a file.
pub fn digest(table: &Table) -> Option<[u8; 32]> {
    table.file_bytes().map(|b| Sha256::digest(b).into())
}

fn hex(d: &[u8; 32]) -> String {
    let mut s = String::with_capacity(64);
    for b in d {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn parse_hex(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 || !s.is_ascii() {
        return None;
    }
    let mut d = [0u8; 32];
    for (i, b) in d.iter_mut().enumerate() {
        *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(d)
}

fn parse_line(line: &str) -> Option<((RuleSet, String), CertificationRecord)> {
    let f: Vec<&str> = line.split('\t').collect();
    if f.len() != 6 || f[5] != BY {
        return None;
    }
    let rules: RuleSet = f[0].parse().ok()?;
    let material = f[1].to_string();
    let digest = parse_hex(f[2])?;
    let positions = f[3].parse().ok()?;
    let moves = f[4].parse().ok()?;
    Some((
        (rules, material),
        CertificationRecord {
            digest,
            certified: Certified {
                positions,
                unused: 0,
                moves,
            },
        },
    ))
}

impl Records {
    /// The records in state directory `dir` (none if it has no record
    /// file yet). Never give it a table directory: see the module docs.
    pub fn load(dir: &Path) -> io::Result<Records> {
        let path = dir.join(RECORD_FILE);
        let mut map = HashMap::new();
        match crate::fsutil::read_regular_to_string(&path) {
            Ok(text) => {
                for line in text.lines() {
                    if let Some(((rules, material), r)) = parse_line(line) {
                        map.insert(r.digest, (rules, material, r));
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        Ok(Records {
            path: Some(path),
            map,
            wrote: false,
        })
    }

    /// The records of `dir`, or none at all (records off) for `None`.
    pub fn load_in(dir: Option<&Path>) -> io::Result<Records> {
        match dir {
            Some(d) => Records::load(d),
            None => Ok(Records {
                path: None,
                map: HashMap::new(),
                wrote: false,
            }),
        }
    }

    /// The record file (`None`: records are off).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The record of a table whose file has this digest.
    pub fn matching(
        &self,
        rules: impl Into<RuleSet>,
        material: &str,
        digest: &[u8; 32],
    ) -> Option<CertificationRecord> {
        let rules = rules.into();
        self.map
            .get(digest)
            .filter(|(r, m, _)| *r == rules && m == material)
            .map(|(_, _, rec)| *rec)
    }

    /// Records a certification (appended to the record file, whose
    /// directory is made if missing). Without a record file, nothing.
    pub fn add(
        &mut self,
        rules: impl Into<RuleSet>,
        material: &str,
        record: CertificationRecord,
    ) -> io::Result<()> {
        let rules = rules.into();
        self.map
            .insert(record.digest, (rules, material.to_string(), record));
        let Some(path) = &self.path else {
            return Ok(());
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let new = !path.exists();
        let mut f = OpenOptions::new().create(true).append(true).open(path)?;
        let mut line = String::new();
        if new {
            line.push_str(HEADER_LINE);
        }
        let _ = writeln!(
            line,
            "{rules}\t{material}\t{}\t{}\t{}\t{BY}",
            hex(&record.digest),
            record.certified.positions,
            record.certified.moves,
        );
        f.write_all(line.as_bytes())?;
        if !self.wrote {
            self.wrote = true;
            errln!(
                "antiproof: note: table certifications recorded in {} (later runs on this \
                 machine reuse them for the same file bytes; --recertify ignores them; \
                 {STATE_DIR_ENV} puts them elsewhere)",
                path.display()
            );
        }
        Ok(())
    }
}

/// How a table came to be certified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Certification {
    /// Certified entry by entry in this run.
    Now(Certified),
    /// A record holds a certification of these exact file bytes.
    Recorded(Certified),
}

impl Certification {
    /// What the certification checked.
    pub fn certified(self) -> Certified {
        match self {
            Certification::Now(c) | Certification::Recorded(c) => c,
        }
    }
}

/// Certifies `table` (see [`certify::certify`]) unless `records` holds a
/// certification of the same file bytes and `recertify` is false; a new
/// certification is recorded. Tables below this one must have been
/// certified (now or by record) first: records say nothing about them.
/// A record that cannot be written is reported on standard error and
/// otherwise ignored.
pub fn certify_or_reuse<S: TableSource + Sync>(
    table: &Table,
    src: &S,
    records: &mut Records,
    recertify: bool,
) -> Result<Certification, CertifyError> {
    let rules = table.header.rule_set;
    let name = table.header.material.to_string();
    let digest = digest(table);
    if !recertify
        && let Some(d) = &digest
        && let Some(r) = records.matching(rules, &name, d)
    {
        return Ok(Certification::Recorded(r.certified));
    }
    let c = certify::certify(table, src)?;
    if let Some(digest) = digest
        && let Err(e) = records.add(
            rules,
            &name,
            CertificationRecord {
                digest,
                certified: c,
            },
        )
    {
        errln!(
            "antiproof: could not record the certification of {name} in {}: {e}",
            records
                .path()
                .map_or("-".into(), |p| p.display().to_string())
        );
    }
    Ok(Certification::Now(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Rules;

    #[test]
    fn lines_round_trip_and_bad_lines_are_ignored() {
        let d = [0xabu8; 32];
        let line = format!("fics\tKQvK\t{}\t12\t34\t{BY}", hex(&d));
        let ((rules, m), r) = parse_line(&line).unwrap();
        assert_eq!((rules, m.as_str()), (Rules::Fics.into(), "KQvK"));
        let fifty = line.replacen("fics", "fics+fifty", 1);
        assert_eq!(
            parse_line(&fifty).unwrap().0.0,
            RuleSet::new(Rules::Fics, true)
        );
        assert_eq!(r.digest, d);
        assert_eq!((r.certified.positions, r.certified.moves), (12, 34));
        assert!(parse_line("# comment").is_none());
        assert!(parse_line(&line.replace("ab", "zz")).is_none());
        assert!(parse_line("fics\tKQvK\tabc\t1\t2").is_none());
        assert!(parse_line("chess\tKQvK\t00\t1\t2").is_none());
        // Another version's records do not count.
        assert!(parse_line(&line.replace(BY, "antiproof 0.0.9")).is_none());
    }

    #[test]
    fn records_are_keyed_by_digest_and_material() {
        let dir = std::env::temp_dir().join(format!("antiproof-records-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let rec = |b: u8| CertificationRecord {
            digest: [b; 32],
            certified: Certified {
                positions: 1,
                unused: 0,
                moves: 2,
            },
        };
        let mut r = Records::load(&dir).unwrap();
        r.add(Rules::International, "KvK", rec(1)).unwrap();
        r.add(Rules::International, "KvK", rec(2)).unwrap();
        let again = Records::load(&dir).unwrap();
        for b in [1, 2] {
            assert!(
                again
                    .matching(Rules::International, "KvK", &[b; 32])
                    .is_some()
            );
        }
        assert!(again.matching(Rules::Fics, "KvK", &[1; 32]).is_none());
        assert!(
            again
                .matching(RuleSet::new(Rules::International, true), "KvK", &[1; 32])
                .is_none()
        );
        assert!(
            again
                .matching(Rules::International, "KvB", &[1; 32])
                .is_none()
        );
        let mut off = Records::load_in(None).unwrap();
        off.add(Rules::International, "KvK", rec(3)).unwrap();
        assert!(off.path().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
