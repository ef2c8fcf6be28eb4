//! The proof store: proven positions in an embedded redb database.
//!
//! One module owns the storage engine. Everything above it speaks in keys
//! (the 25-byte packed position of `rules::PackedPosition`, whose layout is
//! documented there and re-derived independently by the checker) and
//! fixed-width [`Record`]s. This module depends on no rules code, so the
//! checker can read the store without trusting the prover.
//!
//! # Layout (schema version 1)
//!
//! * table `meta` (`&str` -> bytes): `schema` = u32 LE [`SCHEMA_VERSION`];
//!   other keys are free-form metadata (runs, checkpoints).
//! * table `proven_<rules>` for each rule set ([`Rules::name`]:
//!   `proven_international`, `proven_fics`, `proven_joint`) (`[u8; 25]` ->
//!   `[u8; 12]`): one record per proven position under that rule set, see
//!   [`Record`]. A store created before a rule set existed lacks its table:
//!   readers see no record there, and the first write creates it.
//! * table `lines` (`&str` -> bytes): the lines `prove` proved, for
//!   commands given no line (`lines.rs`; absent in older stores).
//!
//! A store written by another schema version is refused with
//! [`StoreError::Schema`], never rewritten.
//!
//! # Sharing
//!
//! The database is opened in redb's single-writer mode: one process writes
//! ([`Store::open`], `prove`), and any number of others read at the same
//! time ([`Store::open_read_only`]: `verify`, `export`, `browse`, `serve`),
//! each read seeing the writer's last commit. A second writer is refused
//! with [`StoreError::InUse`].
//!
//! # Why redb
//!
//! Measured on this store's shape (20 M records, 24-byte keys, 12-byte
//! values, batched inserts): sled 0.34.7 passed 15 GB resident before it
//! had inserted 4 M records; redb 4.x inserted 70 k records/s at 1.1 GB
//! resident, 111 bytes a record on disk, and read 320 k random keys/s;
//! fjall 3.x inserted faster (200 k/s, 48 bytes a record) but read 3-4x
//! slower.
//!
//! The pieces: [`StoreError`] (`error.rs`), opening and checking the file
//! (`open.rs`), read snapshots ([`StoreReader`]), the records' encoding
//! (`record.rs`), the top tree's table (`top.rs`), the proved lines
//! (`lines.rs`) and the engine guard (`guard.rs`).

use redb::{
    Database, ReadOnlyDatabase, ReadableDatabase, ReadableTable, ReadableTableMetadata,
    TableDefinition,
};

mod error;
pub mod filter;
mod guard;
mod lines;
mod open;
mod reader;
mod record;
mod top_bytes;

pub use error::StoreError;
use error::engine;
pub use open::Integrity;
pub use reader::StoreReader;

pub use record::{
    FIFTY_RECORD_LEN, FLAG_TABLES, Need, Record, WinLoss, fifty_better, need_through,
};
use record::{fifty_bytes, fifty_from_bytes};

use std::path::{Path, PathBuf};

/// Width of a key: a packed position.
pub const KEY_LEN: usize = 25;
/// Width of a record.
pub const RECORD_LEN: usize = 12;
/// The store's schema version.
pub const SCHEMA_VERSION: u32 = 1;

/// A key: a packed position.
pub type Key = [u8; KEY_LEN];

const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
/// The rule set of a table of records (defined in [`crate::vocab`]).
pub use crate::vocab::{RuleSet, Rules};

/// The records of one rule set with the fifty-move rule.
type ProvenFifty<'a> = TableDefinition<'a, &'static [u8; KEY_LEN], &'static [u8; FIFTY_RECORD_LEN]>;

/// The records of one rule set: table `proven_<name>`.
type Proven<'a> = TableDefinition<'a, &'static [u8; KEY_LEN], &'static [u8; RECORD_LEN]>;

/// The name of the table of records under `rules`: `proven_` and the rule
/// set's file name (`proven_international`, `proven_fics`,
/// `proven_joint`; `proven_international_fifty` with the fifty-move rule).
fn table_name(rules: impl Into<RuleSet>) -> String {
    format!("proven_{}", rules.into().file_name())
}
/// The database, as opened.
enum Db {
    Write(Database),
    Read(ReadOnlyDatabase),
}

/// An open proof store.
///
/// Every call into the storage engine is guarded ([`guard`]): whatever the
/// bytes of the file, a damaged store is a [`StoreError::Damaged`] naming
/// it, never a panic.
pub struct Store {
    /// `None` only while being dropped.
    db: Option<Db>,
    path: PathBuf,
    /// Whether the next commits need not reach the disk at once
    /// ([`Store::set_lazy`]).
    lazy: std::sync::atomic::AtomicBool,
}

impl Drop for Store {
    fn drop(&mut self) {
        if let Some(db) = self.db.take()
            && guard::drop_guarded(&self.path, db)
        {
            errln!(
                "antiproof: warning: closing the proof store {} failed: it is damaged \
                 (try `antiproof store check --db {}`)",
                self.path.display(),
                self.path.display()
            );
        }
    }
}
impl Store {
    fn db(&self) -> &Db {
        self.db.as_ref().expect("the database is open until drop")
    }

    /// Whether this handle may write.
    pub fn is_writable(&self) -> bool {
        matches!(self.db(), Db::Write(_))
    }

    fn writer(&self) -> Result<&Database, StoreError> {
        match self.db() {
            Db::Write(d) => Ok(d),
            Db::Read(_) => Err(StoreError::ReadOnly {
                path: self.path.clone(),
            }),
        }
    }

    /// With `lazy`, the following commits are not synced to the disk: a
    /// crash (or SIGKILL) may lose them, never the store, which reopens at
    /// the last commit made without it. Only for a store of
    /// [`Store::open_exclusive`] (a job's scratch store). Turning it off
    /// makes the next commit durable (with everything before it).
    pub fn set_lazy(&self, lazy: bool) {
        self.lazy.store(lazy, std::sync::atomic::Ordering::Relaxed);
    }

    /// Makes every commit so far durable (an empty durable commit).
    pub fn sync(&self) -> Result<(), StoreError> {
        let lazy = self.lazy.swap(false, std::sync::atomic::Ordering::Relaxed);
        let r = self.write(|_| Ok(()));
        self.set_lazy(lazy);
        r
    }

    /// Runs `f` in one write transaction and commits it, guarded.
    fn write(
        &self,
        f: impl FnOnce(&redb::WriteTransaction) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let db = self.writer()?;
        let lazy = self.lazy.load(std::sync::atomic::Ordering::Relaxed);
        guard::guarded(&self.path, || {
            let mut tx = db.begin_write().map_err(engine)?;
            if lazy {
                tx.set_durability(redb::Durability::None).map_err(engine)?;
            }
            f(&tx)?;
            tx.commit().map_err(engine)
        })
    }

    fn begin_read(&self) -> Result<redb::ReadTransaction, StoreError> {
        guard::guarded(&self.path, || {
            match self.db() {
                Db::Write(d) => d.begin_read(),
                Db::Read(d) => d.begin_read(),
            }
            .map_err(engine)
        })
    }

    fn is_empty_file(&self) -> Result<bool, StoreError> {
        let tx = self.begin_read()?;
        guard::guarded(&self.path, || {
            Ok(tx.list_tables().map_err(engine)?.next().is_none())
        })
    }

    fn check_schema(&self) -> Result<(), StoreError> {
        let found = self
            .meta("schema")?
            .and_then(|b| b.try_into().ok().map(u32::from_le_bytes));
        if found != Some(SCHEMA_VERSION) {
            return Err(StoreError::Schema {
                path: self.path.clone(),
                found,
            });
        }
        Ok(())
    }

    /// The path of the database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A metadata value.
    pub fn meta(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let tx = self.begin_read()?;
        guard::guarded(&self.path, || {
            let table = match tx.open_table(META) {
                Ok(t) => t,
                Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
                Err(e) => return Err(engine(e)),
            };
            Ok(table.get(key).map_err(engine)?.map(|v| v.value().to_vec()))
        })
    }

    /// Sets a metadata value (not `schema`).
    pub fn set_meta(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        assert_ne!(key, "schema", "the schema version is not metadata to set");
        self.write(|tx| {
            let mut meta = tx.open_table(META).map_err(engine)?;
            meta.insert(key, value).map_err(engine)?;
            Ok(())
        })
    }

    /// The record of a position, if proven.
    pub fn get(&self, rules: impl Into<RuleSet>, key: &Key) -> Result<Option<Record>, StoreError> {
        self.reader()?.get(rules, key)
    }

    /// The record of a position and, under the fifty-move rule, its need.
    pub fn get_entry(
        &self,
        rules: impl Into<RuleSet>,
        key: &Key,
    ) -> Result<Option<(Record, Option<Need>)>, StoreError> {
        self.reader()?.get_entry(rules, key)
    }

    /// A read snapshot, for many lookups without a transaction each.
    pub fn reader(&self) -> Result<StoreReader, StoreError> {
        Ok(StoreReader {
            tx: Some(self.begin_read()?),
            path: self.path.clone(),
        })
    }

    /// Writes a batch of records in one transaction. A key already present
    /// is overwritten. Under the fifty-move rule every record gets need
    /// 100 (valid at clock 0 only): use [`Store::put_batch_fifty`].
    pub fn put_batch(
        &self,
        rules: impl Into<RuleSet>,
        items: &[(Key, Record)],
    ) -> Result<(), StoreError> {
        let rules = rules.into();
        if rules.fifty_move {
            let with: Vec<(Key, Record, Need)> = items
                .iter()
                .map(|(k, r)| (*k, *r, crate::vocab::FIFTY_MOVE_PLIES as Need))
                .collect();
            return self.put_batch_fifty(rules, &with);
        }
        if items.is_empty() {
            return Ok(());
        }
        self.write(|tx| {
            let mut table = tx
                .open_table(Proven::new(&table_name(rules)))
                .map_err(engine)?;
            for (k, r) in items {
                table.insert(k, &r.to_bytes()).map_err(engine)?;
            }
            Ok(())
        })
    }

    /// Writes a batch of records with their needs under a rule set with
    /// the fifty-move rule, in one transaction. Where a key is already
    /// present (or repeats in the batch) the record with the smaller need,
    /// then the smaller proof, is kept ([`fifty_better`]).
    pub fn put_batch_fifty(
        &self,
        rules: RuleSet,
        items: &[(Key, Record, Need)],
    ) -> Result<(), StoreError> {
        assert!(
            rules.fifty_move,
            "put_batch_fifty is for the fifty-move rule"
        );
        self.write_fifty(rules, items, false)
    }

    /// Writes a batch of records in one transaction, each replacing the
    /// key's record whatever it was (under the fifty-move rule with its
    /// need; the need is ignored otherwise). For rewriting a stored proof
    /// in place (`crate::search` shrinking a proof): the caller keeps it
    /// closed and acyclic.
    pub fn replace_batch(
        &self,
        rules: RuleSet,
        items: &[(Key, Record, Need)],
    ) -> Result<(), StoreError> {
        if !rules.fifty_move {
            let plain: Vec<(Key, Record)> = items.iter().map(|&(k, r, _)| (k, r)).collect();
            return self.put_batch(rules, &plain);
        }
        self.write_fifty(rules, items, true)
    }

    /// Writes records with their needs to a fifty-move table in one
    /// transaction: each replacing the key's record (`replace`), or only
    /// where it is better than the stored one ([`fifty_better`]).
    fn write_fifty(
        &self,
        rules: RuleSet,
        items: &[(Key, Record, Need)],
        replace: bool,
    ) -> Result<(), StoreError> {
        if items.is_empty() {
            return Ok(());
        }
        self.write(|tx| {
            let mut table = tx
                .open_table(ProvenFifty::new(&table_name(rules)))
                .map_err(engine)?;
            for (k, r, need) in items {
                if !replace {
                    let old = match table.get(k).map_err(engine)? {
                        Some(v) => Some(fifty_from_bytes(v.value())?),
                        None => None,
                    };
                    if old.is_some_and(|(o, on)| !fifty_better((r, *need), (&o, on))) {
                        continue;
                    }
                }
                table.insert(k, &fifty_bytes(r, *need)).map_err(engine)?;
            }
            Ok(())
        })
    }

    /// Number of proven positions under a rule set.
    pub fn len(&self, rules: impl Into<RuleSet>) -> Result<u64, StoreError> {
        let rules = rules.into();
        let tx = self.begin_read()?;
        guard::guarded(&self.path, || {
            // A store made before this rule set existed lacks its table.
            let name = table_name(rules);
            let table = if rules.fifty_move {
                tx.open_table(ProvenFifty::new(&name)).map(|t| t.len())
            } else {
                tx.open_table(Proven::new(&name)).map(|t| t.len())
            };
            match table {
                Ok(n) => n.map_err(engine),
                Err(redb::TableError::TableDoesNotExist(_)) => Ok(0),
                Err(e) => Err(engine(e)),
            }
        })
    }

    /// Size of the database file in bytes.
    pub fn file_bytes(&self) -> u64 {
        std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0)
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::MoveCode;

    /// A fresh directory and a store path in it (the file not there yet).
    fn fresh(name: &str) -> (PathBuf, PathBuf) {
        let dir =
            std::env::temp_dir().join(format!("antiproof-store-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.redb");
        let _ = std::fs::remove_file(&path);
        (dir, path)
    }

    /// A win record with move code `mv` and proof size `size`.
    fn win(mv: u16, size: u64) -> Record {
        Record {
            verdict: WinLoss::Win,
            flags: 0,
            mv: MoveCode::from_raw(mv),
            size,
        }
    }

    #[test]
    fn records_round_trip_and_persist() {
        let (dir, path) = fresh("new");
        let r = win(0x1234, 77);
        {
            let s = Store::open(&path).unwrap();
            s.put_batch(Rules::International, &[([7; KEY_LEN], r)])
                .unwrap();
        }
        let s = Store::open_existing(&path).unwrap();
        assert_eq!(s.get(Rules::International, &[7; KEY_LEN]).unwrap(), Some(r));
        assert_eq!(s.get(Rules::Fics, &[7; KEY_LEN]).unwrap(), None);
        assert_eq!(s.len(Rules::International).unwrap(), 1);
        assert!(Record::from_bytes(&[9; RECORD_LEN]).is_err());
        drop(s);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `replace_batch` overwrites whatever is stored, under the fifty-move
    /// rule too, where `put_batch_fifty` keeps the better record.
    #[test]
    fn replace_batch_overwrites_under_every_rule_set() {
        let (dir, path) = fresh("replace");
        let s = Store::open(&path).unwrap();
        let k = [5; KEY_LEN];
        let plain = RuleSet::new(Rules::International, false);
        s.put_batch(plain, &[(k, win(1, 10))]).unwrap();
        s.replace_batch(plain, &[(k, win(2, 20), 0)]).unwrap();
        assert_eq!(s.get(plain, &k).unwrap(), Some(win(2, 20)));
        let fifty = RuleSet::new(Rules::International, true);
        s.put_batch_fifty(fifty, &[(k, win(1, 10), 7)]).unwrap();
        // Larger: put_batch_fifty keeps the old one, replace_batch does not.
        s.put_batch_fifty(fifty, &[(k, win(2, 20), 7)]).unwrap();
        assert_eq!(s.get_entry(fifty, &k).unwrap(), Some((win(1, 10), Some(7))));
        s.replace_batch(fifty, &[(k, win(2, 20), 6)]).unwrap();
        assert_eq!(s.get_entry(fifty, &k).unwrap(), Some((win(2, 20), Some(6))));
        drop(s);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_store_older_than_a_rule_set_reads_and_takes_it() {
        let (dir, path) = fresh("old");
        let r = win(0x0abc, 5);
        {
            // As created before joint rules: no `proven_joint` table.
            let s = Store::open(&path).unwrap();
            s.write(|tx| {
                assert!(
                    tx.delete_table(Proven::new(&table_name(Rules::Joint)))
                        .map_err(engine)?
                );
                Ok(())
            })
            .unwrap();
        }
        {
            let s = Store::open_read_only(&path).unwrap();
            assert_eq!(s.get(Rules::Joint, &[3; KEY_LEN]).unwrap(), None);
            assert_eq!(s.len(Rules::Joint).unwrap(), 0);
            let mut n = 0;
            s.reader()
                .unwrap()
                .for_each(Rules::Joint, |_, _| {
                    n += 1;
                    Ok(())
                })
                .unwrap();
            assert_eq!(n, 0);
        }
        let s = Store::open_existing(&path).unwrap();
        assert_eq!(s.len(Rules::Joint).unwrap(), 0);
        s.put_batch(Rules::Joint, &[([3; KEY_LEN], r)]).unwrap();
        assert_eq!(s.get(Rules::Joint, &[3; KEY_LEN]).unwrap(), Some(r));
        assert_eq!(s.len(Rules::Joint).unwrap(), 1);
        drop(s);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
