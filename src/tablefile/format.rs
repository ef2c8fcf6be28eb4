//! The table file format (version 1).
//!
//! A file is a 128-byte header followed by one byte per index (see
//! [`super::index`]). All integers are little-endian.
//!
//! | offset | size | field |
//! |-------:|-----:|-------|
//! | 0   | 8  | magic `APTABLE\0` |
//! | 8   | 4  | format version (1) |
//! | 12  | 1  | rules: 0 international, 1 FICS, 2 joint |
//! | 13  | 1  | men |
//! | 14  | 1  | symmetry mask (`0xff` pawnless, `0x03` with pawns) |
//! | 15  | 1  | flags: bit 0 set for a table under the fifty-move rule (values are distances to the next capture or pawn move, see `docs/tables.md`); other bits 0 |
//! | 16  | 16 | material name (canonical, e.g. `KNvB`), ASCII, zero-padded |
//! | 32  | 8  | entries (bytes of data) |
//! | 40  | 8  | checksum of the data |
//! | 48  | 8  | wins (used entries, either side to move) |
//! | 56  | 8  | losses |
//! | 64  | 8  | draws |
//! | 72  | 8  | unused entries |
//! | 80  | 2  | longest win (plies) |
//! | 82  | 2  | longest loss (plies) |
//! | 84  | 8  | overflow records |
//! | 92  | 28 | 0 |
//! | 120 | 8  | checksum of bytes 0..120 |
//!
//! Entry byte, value for the side to move: `0` draw (or unused index),
//! `1 + 2n` win in `n` plies, `2 + 2n` loss in `n` plies (`n` <= 126), and
//! `255` (escape) for a longer distance: the value is then in the overflow
//! list after the entries, 6-byte records (index `u32`, code `u16`) sorted
//! by index, where the code is `1 + 2n` or `2 + 2n` as above.
//!
//! A table under the fifty-move rule has the same layout and entry codes;
//! its distances are DTZ (plies to the next capture, pawn move or game end,
//! at most 100) instead of DTW, and its file name carries the rule set's
//! file name (`KBNvK.international_fifty.apt`). Files without the flag read
//! exactly as before.
//!
//! Checksum (of everything after the header: entries and overflow list):
//! FNV-1a over 64-bit little-endian words (the tail zero-padded to a word),
//! starting from the FNV-64 offset basis, then the length in bytes mixed in
//! the same way.

use super::index::Layout;
use super::material::Material;
use super::{RuleSet, Rules, TableError, Value};
use memmap2::Mmap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// File magic.
pub const MAGIC: &[u8; 8] = b"APTABLE\0";
/// Format version written and read.
pub const FORMAT_VERSION: u32 = 1;
/// Header size in bytes.
pub const HEADER_LEN: usize = 128;
/// The entry byte meaning "see the overflow list".
pub const ESCAPE: u8 = 255;
/// Header flag (byte 15): the table respects the fifty-move rule.
pub const FLAG_FIFTY_MOVE: u8 = 1;
/// Bytes per overflow record: index (`u32`), then code (`u16`).
pub const OVERFLOW_RECORD: usize = 6;

/// FNV-1a over 64-bit words; see the module docs.
pub fn checksum(bytes: &[u8]) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        h = (h ^ u64::from_le_bytes(c.try_into().unwrap())).wrapping_mul(PRIME);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(PRIME);
    }
    (h ^ bytes.len() as u64).wrapping_mul(PRIME)
}

/// The counts kept in a header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Used entries won by the side to move.
    pub wins: u64,
    /// Used entries lost by the side to move.
    pub losses: u64,
    /// Used entries drawn.
    pub draws: u64,
    /// Unused indices.
    pub unused: u64,
    /// Longest win in plies.
    pub longest_win: u16,
    /// Longest loss in plies.
    pub longest_loss: u16,
}

impl Stats {
    /// Counts one used entry's value.
    pub fn tally(&mut self, value: Value) {
        match value {
            Value::Win(n) => {
                self.wins += 1;
                self.longest_win = self.longest_win.max(n);
            }
            Value::Loss(n) => {
                self.losses += 1;
                self.longest_loss = self.longest_loss.max(n);
            }
            Value::Draw => self.draws += 1,
        }
    }
}

/// A table header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Rule set: the stalemate rule, and whether the values respect the
    /// fifty-move rule (header flag [`FLAG_FIFTY_MOVE`]).
    pub rule_set: RuleSet,
    /// Material, canonical.
    pub material: Material,
    /// Entries.
    pub entries: u64,
    /// Overflow records.
    pub overflow: u64,
    /// Checksum of the data.
    pub checksum: u64,
    /// Counts.
    pub stats: Stats,
}

impl Header {
    fn to_bytes(&self, layout: &Layout) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..8].copy_from_slice(MAGIC);
        b[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        b[12] = self.rule_set.stalemate.code();
        b[13] = layout.men as u8;
        b[14] = layout.sym_mask;
        b[15] = if self.rule_set.fifty_move {
            FLAG_FIFTY_MOVE
        } else {
            0
        };
        let name = self.material.to_string();
        b[16..16 + name.len()].copy_from_slice(name.as_bytes());
        b[32..40].copy_from_slice(&self.entries.to_le_bytes());
        b[40..48].copy_from_slice(&self.checksum.to_le_bytes());
        b[48..56].copy_from_slice(&self.stats.wins.to_le_bytes());
        b[56..64].copy_from_slice(&self.stats.losses.to_le_bytes());
        b[64..72].copy_from_slice(&self.stats.draws.to_le_bytes());
        b[72..80].copy_from_slice(&self.stats.unused.to_le_bytes());
        b[80..82].copy_from_slice(&self.stats.longest_win.to_le_bytes());
        b[82..84].copy_from_slice(&self.stats.longest_loss.to_le_bytes());
        b[84..92].copy_from_slice(&self.overflow.to_le_bytes());
        let h = checksum(&b[..120]);
        b[120..128].copy_from_slice(&h.to_le_bytes());
        b
    }

    fn from_bytes(b: &[u8], path: &Path) -> Result<Header, TableError> {
        let bad = |what: &str| TableError::BadFile {
            path: path.to_path_buf(),
            reason: what.to_string(),
        };
        if b.len() < HEADER_LEN {
            return Err(bad("shorter than the 128-byte header"));
        }
        if &b[0..8] != MAGIC {
            return Err(bad("not an antiproof table (bad magic)"));
        }
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
        let version = u32::from_le_bytes(b[8..12].try_into().unwrap());
        if version != FORMAT_VERSION {
            return Err(bad(&format!(
                "format version {version}, this program reads {FORMAT_VERSION}"
            )));
        }
        if checksum(&b[..120]) != u64_at(120) {
            return Err(bad("header checksum mismatch"));
        }
        let rules = Rules::from_code(b[12]).ok_or_else(|| bad("unknown rule set code"))?;
        if b[15] & !FLAG_FIFTY_MOVE != 0 {
            return Err(bad("unknown header flags"));
        }
        let name_end = b[16..32].iter().position(|&c| c == 0).unwrap_or(16);
        let name = std::str::from_utf8(&b[16..16 + name_end]).map_err(|_| bad("material name"))?;
        let material: Material = name.parse().map_err(|_| bad("material name"))?;
        Ok(Header {
            rule_set: RuleSet::new(rules, b[15] & FLAG_FIFTY_MOVE != 0),
            material,
            entries: u64_at(32),
            overflow: u64_at(84),
            checksum: u64_at(40),
            stats: Stats {
                wins: u64_at(48),
                losses: u64_at(56),
                draws: u64_at(64),
                unused: u64_at(72),
                longest_win: u16::from_le_bytes(b[80..82].try_into().unwrap()),
                longest_loss: u16::from_le_bytes(b[82..84].try_into().unwrap()),
            },
        })
    }
}

/// The file name of a table of `rules` (a whole rule set, or a stalemate
/// rule alone: without the fifty-move rule):
/// `<MATERIAL>.<rule set file name>.apt`, e.g. `KNvB.international.apt`,
/// `KBNvK.international_fifty.apt`.
pub fn file_name(material: &Material, rules: impl Into<RuleSet>) -> String {
    format!("{}.{}.apt", material.canonical(), rules.into().file_name())
}

/// The path of a table of `rules` in a directory (see [`file_name`]).
pub fn table_path(dir: &Path, material: &Material, rules: impl Into<RuleSet>) -> PathBuf {
    dir.join(file_name(material, rules))
}

enum Data {
    Mapped(Mmap),
    Owned(Vec<u8>),
}

/// One table, read from its file (memory-mapped) or just built.
pub struct Table {
    /// Index layout.
    pub layout: Layout,
    /// Header.
    pub header: Header,
    /// Entries, then the overflow list.
    data: Data,
}

impl Table {
    /// A table of `rules` (a whole rule set, whose fifty-move rule is the
    /// header flag written to its file, or a stalemate rule alone: without
    /// the fifty-move rule) from built data: one byte per entry, and the
    /// codes of the entries holding [`ESCAPE`], sorted by index.
    pub fn from_data(
        layout: Layout,
        rules: impl Into<RuleSet>,
        mut data: Vec<u8>,
        overflow: Vec<(u32, u16)>,
        stats: Stats,
    ) -> Table {
        let entries = data.len() as u64;
        for (i, c) in &overflow {
            data.extend_from_slice(&i.to_le_bytes());
            data.extend_from_slice(&c.to_le_bytes());
        }
        let header = Header {
            rule_set: rules.into(),
            material: layout.material,
            entries,
            overflow: overflow.len() as u64,
            checksum: checksum(&data),
            stats,
        };
        Table {
            layout,
            header,
            data: Data::Owned(data),
        }
    }

    /// Everything after the header.
    #[inline(always)]
    fn tail(&self) -> &[u8] {
        match &self.data {
            Data::Mapped(m) => &m[HEADER_LEN..],
            Data::Owned(v) => v,
        }
    }

    /// The whole file (header included) of a table read from a file.
    pub fn file_bytes(&self) -> Option<&[u8]> {
        match &self.data {
            Data::Mapped(m) => Some(m),
            Data::Owned(_) => None,
        }
    }

    /// The entry bytes.
    #[inline(always)]
    pub fn bytes(&self) -> &[u8] {
        &self.tail()[..self.header.entries as usize]
    }

    /// The overflow list bytes.
    pub fn overflow_bytes(&self) -> &[u8] {
        &self.tail()[self.header.entries as usize..]
    }

    /// The entry byte at an index.
    #[inline(always)]
    pub fn get(&self, index: u64) -> u8 {
        self.tail()[index as usize]
    }

    /// The value at an index, for the side to move.
    #[inline(always)]
    pub fn value(&self, index: u64) -> super::Value {
        let b = self.get(index);
        if b != ESCAPE {
            return super::Value::from_byte(b);
        }
        let list = self.overflow_bytes();
        let n = list.len() / OVERFLOW_RECORD;
        let rec = |k: usize| {
            let r = &list[k * OVERFLOW_RECORD..(k + 1) * OVERFLOW_RECORD];
            (
                u32::from_le_bytes(r[0..4].try_into().unwrap()) as u64,
                u16::from_le_bytes(r[4..6].try_into().unwrap()),
            )
        };
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let (i, c) = rec(mid);
            if i == index {
                return super::Value::from_code(c as u32);
            }
            if i < index {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        // Not reachable in a table that passed `overflow_ok`.
        super::Value::Draw
    }

    /// Whether the overflow list is well formed: sorted, one record per
    /// escape byte, each code beyond the byte range.
    pub fn overflow_ok(&self) -> bool {
        let list = self.overflow_bytes();
        if !list.len().is_multiple_of(OVERFLOW_RECORD) {
            return false;
        }
        let escapes = self.bytes().iter().filter(|&&b| b == ESCAPE).count();
        if escapes != list.len() / OVERFLOW_RECORD {
            return false;
        }
        let mut last: Option<u64> = None;
        for r in list.chunks_exact(OVERFLOW_RECORD) {
            let i = u32::from_le_bytes(r[0..4].try_into().unwrap()) as u64;
            let c = u16::from_le_bytes(r[4..6].try_into().unwrap());
            if last.is_some_and(|l| l >= i)
                || i >= self.header.entries
                || self.get(i) != ESCAPE
                || (c as u32) < ESCAPE as u32
            {
                return false;
            }
            last = Some(i);
        }
        true
    }

    /// Writes the table to `path` atomically ([`crate::fsutil::write_atomic`]:
    /// a temporary file, synced, then renamed), so a reader never sees half
    /// a table and one with the old file mapped keeps a valid mapping.
    pub fn write(&self, path: &Path) -> Result<(), TableError> {
        let io = |e: std::io::Error| TableError::Io {
            path: path.to_path_buf(),
            source: e,
        };
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(io)?;
        }
        crate::fsutil::write_atomic(path, |f| {
            f.write_all(&self.header.to_bytes(&self.layout))?;
            f.write_all(self.tail())
        })
        .map_err(io)
    }

    /// Opens the table file of `material` under `rules` (a whole rule set,
    /// or a stalemate rule alone: without the fifty-move rule), as found at
    /// its path in a table directory, checking everything [`Table::open`]
    /// checks with the data checksum, and that the header names this rule
    /// set (stalemate rule and fifty-move flag) and material: the one way
    /// both the prover's tables and the checker open a table from a
    /// directory.
    pub fn open_expected(
        path: &Path,
        rules: impl Into<RuleSet>,
        material: &Material,
    ) -> Result<Table, TableError> {
        let rules: RuleSet = rules.into();
        let t = Table::open(path, true)?;
        if t.header.rule_set != rules {
            return Err(TableError::WrongRules {
                path: path.to_path_buf(),
                found: t.header.rule_set,
            });
        }
        if t.header.material != *material {
            return Err(TableError::BadFile {
                path: path.to_path_buf(),
                reason: format!("holds table {}, not {material}", t.header.material),
            });
        }
        Ok(t)
    }

    /// Opens a table file, memory-mapped, checking magic, version, header
    /// checksum, size, and (if `check_data`) the data checksum.
    pub fn open(path: &Path, check_data: bool) -> Result<Table, TableError> {
        let io = |e: std::io::Error| TableError::Io {
            path: path.to_path_buf(),
            source: e,
        };
        let f = crate::fsutil::open_regular(path).map_err(io)?;
        // SAFETY: table files are written once through a rename and never
        // modified in place; a concurrent truncation by another program
        // would be a misuse of the cache directory.
        let map = unsafe { Mmap::map(&f) }.map_err(io)?;
        let header = Header::from_bytes(&map, path)?;
        let layout = Layout::new(&header.material);
        let bad = |what: String| TableError::BadFile {
            path: path.to_path_buf(),
            reason: what,
        };
        let expected = HEADER_LEN as u64 + layout.size() + header.overflow * OVERFLOW_RECORD as u64;
        if header.entries != layout.size() || map.len() as u64 != expected {
            return Err(bad(format!(
                "size mismatch: {} bytes after the header for {} entries and {} overflow records of {}",
                map.len().saturating_sub(HEADER_LEN),
                layout.size(),
                header.overflow,
                header.material
            )));
        }
        if check_data && checksum(&map[HEADER_LEN..]) != header.checksum {
            return Err(bad("data checksum mismatch".into()));
        }
        Ok(Table {
            layout,
            header,
            data: Data::Mapped(map),
        })
    }

    /// Whether the data matches the header's checksum.
    pub fn checksum_ok(&self) -> bool {
        checksum(self.tail()) == self.header.checksum
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tablefile::Value;

    #[test]
    fn long_distances_go_to_the_overflow_list_and_survive_a_file() {
        let m: Material = "KvK".parse().unwrap();
        let layout = Layout::new(&m);
        let mut data = vec![0u8; layout.size() as usize];
        data[5] = ESCAPE;
        data[9] = Value::Loss(3).to_byte().unwrap();
        data[700] = ESCAPE;
        let over = vec![
            (5, Value::Win(200).code() as u16),
            (700, Value::Loss(127).code() as u16),
        ];
        let t = Table::from_data(layout, Rules::Fics, data, over, Stats::default());
        assert!(t.overflow_ok() && t.checksum_ok());
        assert_eq!(t.value(5), Value::Win(200));
        assert_eq!(t.value(9), Value::Loss(3));
        assert_eq!(t.value(700), Value::Loss(127));
        let dir = std::env::temp_dir().join(format!("antiproof-format-{}", std::process::id()));
        let path = table_path(&dir, &m, Rules::Fics);
        t.write(&path).unwrap();
        let r = Table::open(&path, true).unwrap();
        assert_eq!(r.header.overflow, 2);
        assert_eq!(r.value(5), Value::Win(200));
        assert_eq!(r.value(700), Value::Loss(127));
        assert!(r.overflow_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn checksum_sees_every_byte_and_the_length() {
        let a = checksum(b"hello world");
        assert_ne!(a, checksum(b"hello worle"));
        assert_ne!(checksum(b"ab"), checksum(b"ab\0"));
        assert_eq!(a, checksum(b"hello world"));
    }
}
