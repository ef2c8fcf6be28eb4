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
//! Records live in one text file per table directory,
//! [`RECORD_FILE`], one tab-separated line per certified table:
//!
//! ```text
//! # antiproof table certifications: rules, material, SHA-256 of the file, positions, moves, by
//! international<TAB>KQvK<TAB>3f5a…(64 hex digits)<TAB>10776800<TAB>123456789<TAB>antiproof 0.1.0
//! ```
//!
//! Lines are only appended (one `write` each), the last line for a rule
//! set and material counts, and lines that do not parse are ignored (that
//! table is then simply certified again). Only certification code writes
//! records (`tables verify`, and the checker's `verify --tables`); the
//! generator never does.
//!
//! What a record is worth: it says that this program certified a file
//! with these exact bytes. A correct table is unique (every entry is the
//! exact game value, and unused entries are 0), so a table certified
//! against certified tables below it stays right even if those are rebuilt
//! later: they are then certified again before it, and being correct they
//! hold the same values. A record file from someone else is as trustworthy
//! as its author; `--recertify` ignores the records and writes fresh ones.

use super::certify::{self, Certified, CertifyError};
use super::{Rules, Table, TableSource};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The record file's name in a table directory.
pub const RECORD_FILE: &str = "certified.tsv";

const HEADER_LINE: &str = "# antiproof table certifications: rules, material, SHA-256 of the file, positions, moves, by\n";

/// One table's certification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// SHA-256 of the whole table file.
    pub digest: [u8; 32],
    /// What the certification checked.
    pub certified: Certified,
}

/// The certification records of one table directory.
#[derive(Debug)]
pub struct Records {
    path: PathBuf,
    map: HashMap<(Rules, String), Record>,
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

fn parse_line(line: &str) -> Option<((Rules, String), Record)> {
    let f: Vec<&str> = line.split('\t').collect();
    if f.len() < 5 {
        return None;
    }
    let rules: Rules = f[0].parse().ok()?;
    let material = f[1].to_string();
    let digest = parse_hex(f[2])?;
    let positions = f[3].parse().ok()?;
    let moves = f[4].parse().ok()?;
    Some((
        (rules, material),
        Record {
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
    /// The records of a table directory (none if it has no record file).
    pub fn load(dir: &Path) -> io::Result<Records> {
        let path = dir.join(RECORD_FILE);
        let mut map = HashMap::new();
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                for line in text.lines() {
                    if let Some((k, r)) = parse_line(line) {
                        map.insert(k, r);
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        Ok(Records { path, map })
    }

    /// The record file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The record of a table whose file has this digest.
    pub fn matching(&self, rules: Rules, material: &str, digest: &[u8; 32]) -> Option<Record> {
        self.map
            .get(&(rules, material.to_string()))
            .filter(|r| &r.digest == digest)
            .copied()
    }

    /// Records a certification (appended to the record file).
    pub fn add(&mut self, rules: Rules, material: &str, record: Record) -> io::Result<()> {
        self.map.insert((rules, material.to_string()), record);
        let new = !self.path.exists();
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        let mut line = String::new();
        if new {
            line.push_str(HEADER_LINE);
        }
        let _ = writeln!(
            line,
            "{rules}\t{material}\t{}\t{}\t{}\tantiproof {}",
            hex(&record.digest),
            record.certified.positions,
            record.certified.moves,
            env!("CARGO_PKG_VERSION")
        );
        f.write_all(line.as_bytes())
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
    let rules = table.header.rules;
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
            Record {
                digest,
                certified: c,
            },
        )
    {
        eprintln!(
            "antiproof: could not record the certification of {name} in {}: {e}",
            records.path().display()
        );
    }
    Ok(Certification::Now(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_and_bad_lines_are_ignored() {
        let d = [0xabu8; 32];
        let line = format!("fics\tKQvK\t{}\t12\t34\tantiproof 0.1.0", hex(&d));
        let ((rules, m), r) = parse_line(&line).unwrap();
        assert_eq!((rules, m.as_str()), (Rules::Fics, "KQvK"));
        assert_eq!(r.digest, d);
        assert_eq!((r.certified.positions, r.certified.moves), (12, 34));
        assert!(parse_line("# comment").is_none());
        assert!(parse_line(&line.replace("ab", "zz")).is_none());
        assert!(parse_line("fics\tKQvK\tabc\t1\t2").is_none());
        assert!(parse_line("chess\tKQvK\t00\t1\t2").is_none());
    }
}
