//! The lines a store holds proofs of: table `lines` (`&str` -> bytes),
//! written by `prove` when it proves (or finds proven) the position of a
//! line, so that `verify --db` and `export` given no line know which
//! proofs the store is for. This module stores opaque keys and values;
//! the command line owns their meaning (`crate::cli::lines`). A store
//! written before the table existed lacks it: it reads as no lines.

use super::{Store, StoreError, engine, guard};
use redb::{ReadableTable, TableDefinition};

/// The table of proven lines.
const LINES: TableDefinition<&str, &[u8]> = TableDefinition::new("lines");

impl Store {
    /// Notes the proven line `key` (with `value`), replacing an entry of
    /// the same key.
    pub fn put_line(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.write(|tx| {
            let mut t = tx.open_table(LINES).map_err(engine)?;
            t.insert(key, value).map_err(engine)?;
            Ok(())
        })
    }

    /// Every proven line noted, in key order.
    pub fn lines(&self) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let tx = self.begin_read()?;
        guard::guarded(&self.path, || {
            let table = match tx.open_table(LINES) {
                Ok(t) => t,
                Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
                Err(e) => return Err(engine(e)),
            };
            let mut out = Vec::new();
            for item in table.iter().map_err(engine)? {
                let (k, v) = item.map_err(engine)?;
                out.push((k.value().to_string(), v.value().to_vec()));
            }
            Ok(out)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_kept_and_a_store_without_them_has_none() {
        let dir = std::env::temp_dir().join(format!("antiproof-lines-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("l.redb");
        let _ = std::fs::remove_file(&db);
        let store = Store::open(&db).unwrap();
        assert!(store.lines().unwrap().is_empty());
        store.put_line("b", b"2").unwrap();
        store.put_line("a", b"1").unwrap();
        store.put_line("b", b"3").unwrap();
        drop(store);
        let store = Store::open_read_only(&db).unwrap();
        assert_eq!(
            store.lines().unwrap(),
            vec![("a".into(), b"1".to_vec()), ("b".into(), b"3".to_vec())]
        );
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
