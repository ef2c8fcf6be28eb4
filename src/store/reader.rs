//! Read snapshots of the store.

use super::{
    Key, Need, Proven, ProvenFifty, Record, RuleSet, StoreError, engine, fifty_from_bytes, guard,
    table_name,
};
use redb::ReadableTable;
use std::path::PathBuf;

/// A read snapshot of the store.
pub struct StoreReader {
    /// `None` only while being dropped.
    pub(super) tx: Option<redb::ReadTransaction>,
    pub(super) path: PathBuf,
}

impl Drop for StoreReader {
    fn drop(&mut self) {
        if let Some(tx) = self.tx.take() {
            guard::drop_guarded(&self.path, tx);
        }
    }
}

impl StoreReader {
    fn tx(&self) -> &redb::ReadTransaction {
        self.tx.as_ref().expect("the snapshot is open until drop")
    }

    /// The record of a position, if proven. (A store made before `rules`
    /// existed has no table for it: no record.)
    pub fn get(&self, rules: impl Into<RuleSet>, key: &Key) -> Result<Option<Record>, StoreError> {
        Ok(self.get_entry(rules, key)?.map(|(r, _)| r))
    }

    /// The record of a position, if proven, and under the fifty-move rule
    /// its need.
    pub fn get_entry(
        &self,
        rules: impl Into<RuleSet>,
        key: &Key,
    ) -> Result<Option<(Record, Option<Need>)>, StoreError> {
        let rules = rules.into();
        guard::guarded(&self.path, || {
            let name = table_name(rules);
            if rules.fifty_move {
                let table = match self.tx().open_table(ProvenFifty::new(&name)) {
                    Ok(t) => t,
                    Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
                    Err(e) => return Err(engine(e)),
                };
                return match table.get(key).map_err(engine)? {
                    Some(v) => {
                        let (r, need) = fifty_from_bytes(v.value())?;
                        Ok(Some((r, Some(need))))
                    }
                    None => Ok(None),
                };
            }
            let table = match self.tx().open_table(Proven::new(&name)) {
                Ok(t) => t,
                Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
                Err(e) => return Err(engine(e)),
            };
            match table.get(key).map_err(engine)? {
                Some(v) => Ok(Some((Record::from_bytes(v.value())?, None))),
                None => Ok(None),
            }
        })
    }

    /// Calls `f` on every record under a rule set, in key order. (A panic
    /// of `f` itself is reported as a damaged store too: keep `f` simple.)
    pub fn for_each(
        &self,
        rules: impl Into<RuleSet>,
        mut f: impl FnMut(&Key, Record) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        self.for_each_entry(rules, |k, r, _| f(k, r))
    }

    /// As [`StoreReader::for_each`], with each record's need under the
    /// fifty-move rule.
    pub fn for_each_entry(
        &self,
        rules: impl Into<RuleSet>,
        mut f: impl FnMut(&Key, Record, Option<Need>) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let rules = rules.into();
        guard::guarded(&self.path, || {
            let name = table_name(rules);
            if rules.fifty_move {
                let table = match self.tx().open_table(ProvenFifty::new(&name)) {
                    Ok(t) => t,
                    Err(redb::TableError::TableDoesNotExist(_)) => return Ok(()),
                    Err(e) => return Err(engine(e)),
                };
                for item in table.iter().map_err(engine)? {
                    let (k, v) = item.map_err(engine)?;
                    let (r, need) = fifty_from_bytes(v.value())?;
                    f(k.value(), r, Some(need))?;
                }
                return Ok(());
            }
            let table = match self.tx().open_table(Proven::new(&name)) {
                Ok(t) => t,
                Err(redb::TableError::TableDoesNotExist(_)) => return Ok(()),
                Err(e) => return Err(engine(e)),
            };
            for item in table.iter().map_err(engine)? {
                let (k, v) = item.map_err(engine)?;
                f(k.value(), Record::from_bytes(v.value())?, None)?;
            }
            Ok(())
        })
    }
}
