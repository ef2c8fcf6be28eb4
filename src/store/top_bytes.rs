//! The top tree of a job-level search (`prove --jobs N`, see
//! `crate::jobs`): one table `top_<rules>` (`u64` node id -> bytes) beside
//! the proven records, so a killed master resumes from the store. This
//! module only stores opaque node bytes; `crate::jobs::top` owns their
//! layout.

use super::{Rules, Store, StoreError, engine, guard};
use redb::{ReadableTableMetadata, TableDefinition};

/// The top-tree table of one rule set.
type Top<'a> = TableDefinition<'a, u64, &'static [u8]>;

/// `top_` and the rule set's name.
fn top_name(rules: Rules) -> String {
    format!("top_{}", rules.name())
}

impl Store {
    /// The bytes of top-tree node `id` under `rules`, if any.
    pub fn top_get(&self, rules: Rules, id: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let tx = self.begin_read()?;
        guard::guarded(&self.path, || {
            let table = match tx.open_table(Top::new(&top_name(rules))) {
                Ok(t) => t,
                Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
                Err(e) => return Err(engine(e)),
            };
            Ok(table.get(id).map_err(engine)?.map(|v| v.value().to_vec()))
        })
    }

    /// The nodes `first .. first + n` that exist, in id order.
    pub fn top_range(
        &self,
        rules: Rules,
        first: u64,
        n: u64,
    ) -> Result<Vec<(u64, Vec<u8>)>, StoreError> {
        let tx = self.begin_read()?;
        guard::guarded(&self.path, || {
            let table = match tx.open_table(Top::new(&top_name(rules))) {
                Ok(t) => t,
                Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
                Err(e) => return Err(engine(e)),
            };
            let mut out = Vec::new();
            for item in table
                .range(first..first.saturating_add(n))
                .map_err(engine)?
            {
                let (k, v) = item.map_err(engine)?;
                out.push((k.value(), v.value().to_vec()));
            }
            Ok(out)
        })
    }

    /// Writes top-tree nodes and proven records in one transaction: a
    /// killed master sees both or neither.
    pub fn top_commit(
        &self,
        rules: Rules,
        nodes: &[(u64, Vec<u8>)],
        records: &[(super::Key, super::Record)],
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            let mut table = tx.open_table(Top::new(&top_name(rules))).map_err(engine)?;
            for (id, bytes) in nodes {
                table.insert(*id, bytes.as_slice()).map_err(engine)?;
            }
            drop(table);
            let mut proven = tx
                .open_table(super::Proven::new(&super::table_name(rules)))
                .map_err(engine)?;
            for (k, r) in records {
                proven.insert(k, &r.to_bytes()).map_err(engine)?;
            }
            Ok(())
        })
    }

    /// Deletes the top tree under `rules` (a search of another root).
    pub fn top_clear(&self, rules: Rules) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.delete_table(Top::new(&top_name(rules)))
                .map_err(engine)?;
            Ok(())
        })
    }

    /// Number of top-tree nodes under `rules` (with the header).
    pub fn top_len(&self, rules: Rules) -> Result<u64, StoreError> {
        let tx = self.begin_read()?;
        guard::guarded(&self.path, || {
            match tx.open_table(Top::new(&top_name(rules))) {
                Ok(t) => t.len().map_err(engine),
                Err(redb::TableError::TableDoesNotExist(_)) => Ok(0),
                Err(e) => Err(engine(e)),
            }
        })
    }
}
