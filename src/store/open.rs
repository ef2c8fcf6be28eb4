//! Opening a store (for writing, exclusively, fresh, existing, read-only),
//! repairing it, checking its integrity and compacting it.

use super::{
    Db, META, Proven, Rules, SCHEMA_VERSION, Store, StoreError, engine, guard, table_name,
};
use redb::{Builder, ConcurrencyMode, DatabaseError};
use std::path::Path;

fn builder() -> Builder {
    let mut b = Builder::new();
    b.set_concurrency_mode(ConcurrencyMode::SingleWriter);
    b
}

fn open_error(path: &Path, e: DatabaseError) -> StoreError {
    match e {
        DatabaseError::DatabaseAlreadyOpen => StoreError::InUse {
            path: path.to_path_buf(),
        },
        // The engine found the file damaged (a commit slot's checksum):
        // said as damage, with `store check` named.
        DatabaseError::Storage(redb::StorageError::Corrupted(message)) => StoreError::Damaged {
            path: path.to_path_buf(),
            message,
        },
        e => StoreError::Open {
            path: path.to_path_buf(),
            message: e.to_string(),
        },
    }
}

/// What [`Store::check_integrity`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Integrity {
    /// Intact (or repaired by the engine).
    Intact,
    /// Damaged beyond the engine's repair.
    Damaged,
    /// Not checked: the file cannot be opened for writing, which the
    /// engine's check needs; the cause (`Permission denied`).
    NotWritable(String),
}

/// Whether an error opening a file for writing says this process may not
/// write it (as opposed to a file that is bad).
fn not_writable(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
    )
}

/// A path that must name an existing regular file.
fn existing_file(path: &Path) -> Result<(), StoreError> {
    let fail = |message: &str| StoreError::Open {
        path: path.to_path_buf(),
        message: message.into(),
    };
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(m) if m.is_dir() => Err(fail("is a directory, not a proof store file")),
        Ok(m) => Err(fail(&crate::fsutil::not_regular(m.file_type()).to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(fail("no such file")),
        Err(e) => Err(fail(&e.to_string())),
    }
}

impl Store {
    /// Opens the store at `path` for writing, creating it (with the current
    /// schema) if the file does not exist. Other processes may read it
    /// meanwhile ([`Store::open_read_only`]); another writer is refused.
    /// A store left by a killed writer is repaired here (redb's repair:
    /// everything committed is kept).
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Store::open_with(path, builder(), false)
    }

    /// As [`Store::open`], but no other process may open the store while
    /// this one has it, and commits may be lazy ([`Store::set_lazy`]): a
    /// job's scratch store.
    pub fn open_exclusive(path: &Path) -> Result<Store, StoreError> {
        let mut b = Builder::new();
        b.set_concurrency_mode(ConcurrencyMode::ExclusiveWriter);
        Store::open_with(path, b, false)
    }

    /// As [`Store::open_exclusive`], but always a new, empty store in a
    /// file this process creates ([`crate::fsutil::create_fresh`]): a
    /// link or another's file under the name is refused, never written
    /// through (a job's scratch store, whose name is guessable).
    pub fn create_fresh_exclusive(path: &Path) -> Result<Store, StoreError> {
        let mut b = Builder::new();
        b.set_concurrency_mode(ConcurrencyMode::ExclusiveWriter);
        Store::open_with(path, b, true)
    }

    fn open_with(path: &Path, builder: Builder, fresh: bool) -> Result<Store, StoreError> {
        let existed = !fresh && path.exists();
        if existed {
            existing_file(path)?;
        }
        let file = if fresh {
            Some(
                crate::fsutil::create_fresh(path).map_err(|e| StoreError::Open {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                })?,
            )
        } else {
            None
        };
        let db = guard::guarded(path, || {
            match file {
                Some(f) => {
                    redb::backends::FileBackend::new(f).and_then(|b| builder.create_with_backend(b))
                }
                None => builder.create(path),
            }
            .map_err(|e| open_error(path, e))
        })?;
        let store = Store {
            db: Some(Db::Write(db)),
            path: path.to_path_buf(),
            lazy: std::sync::atomic::AtomicBool::new(false),
        };
        if !existed || store.is_empty_file()? {
            store.write(|tx| {
                let mut meta = tx.open_table(META).map_err(engine)?;
                meta.insert("schema", SCHEMA_VERSION.to_le_bytes().as_slice())
                    .map_err(engine)?;
                for rules in Rules::ALL {
                    tx.open_table(Proven::new(&table_name(rules)))
                        .map_err(engine)?;
                }
                Ok(())
            })?;
        }
        store.check_schema()?;
        Ok(store)
    }

    /// Opens an existing store; a missing file is an error.
    pub fn open_existing(path: &Path) -> Result<Store, StoreError> {
        existing_file(path)?;
        Store::open(path)
    }

    /// Opens an existing store for reading only: any number of processes
    /// may do so while one writes (each read sees its last commit). A
    /// missing file, or one that is not a store, is an error.
    ///
    /// A store whose writer was killed needs redb's repair before it can be
    /// read; when no writer holds it, it is repaired here (opened for
    /// writing and closed, which keeps everything committed) and then
    /// opened for reading. While a writer holds it, the writer has already
    /// repaired it.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        existing_file(path)?;
        // The engine's own error, so that "needs repair" is told by its
        // variant, not by the words of its message.
        let open = || guard::guarded(path, || Ok(builder().open_read_only(path)));
        let db = match open()? {
            Ok(db) => db,
            Err(DatabaseError::RepairAborted) => {
                Store::repair(path)?;
                open()?.map_err(|e| open_error(path, e))?
            }
            Err(e) => return Err(open_error(path, e)),
        };
        let store = Store {
            db: Some(Db::Read(db)),
            path: path.to_path_buf(),
            lazy: std::sync::atomic::AtomicBool::new(false),
        };
        store.check_schema()?;
        Ok(store)
    }

    /// Repairs a store left by a killed writer: opens it for writing (which
    /// runs redb's repair) and closes it.
    fn repair(path: &Path) -> Result<(), StoreError> {
        let db = guard::guarded(path, || {
            builder().open(path).map_err(|e| match open_error(path, e) {
                e @ StoreError::InUse { .. } => e,
                StoreError::Open { message, .. } => StoreError::Open {
                    path: path.to_path_buf(),
                    message: format!(
                        "its last writer stopped without closing it, and repairing it failed: {message}"
                    ),
                },
                e => e,
            })
        })?;
        if guard::drop_guarded(path, db) {
            return Err(StoreError::Damaged {
                path: path.to_path_buf(),
                message: "closing it after repair failed".into(),
            });
        }
        Ok(())
    }

    /// Checks the whole file's integrity (redb's page checksums and tree
    /// structure); repairs what redb can. Needs the store to be free of
    /// writers and readers, and the file open for writing (redb checks
    /// only through a writable handle): a file this process may not write
    /// (another user's, read-only, on a read-only file system) is
    /// [`Integrity::NotWritable`], not checked and not called damaged.
    pub fn check_integrity(path: &Path) -> Result<Integrity, StoreError> {
        existing_file(path)?;
        guard::guarded(path, || {
            let damaged = |message: String| StoreError::Damaged {
                path: path.to_path_buf(),
                message,
            };
            let mut db = match builder().open(path) {
                Ok(db) => db,
                Err(DatabaseError::Storage(redb::StorageError::Io(e))) if not_writable(&e) => {
                    return Ok(Integrity::NotWritable(e.to_string()));
                }
                Err(e) => {
                    return Err(match open_error(path, e) {
                        StoreError::Open { message, .. } => damaged(message),
                        e => e,
                    });
                }
            };
            match db.check_integrity().map_err(|e| damaged(e.to_string()))? {
                true => Ok(Integrity::Intact),
                false => Ok(Integrity::Damaged),
            }
        })
    }

    /// Compacts the file (gives back free pages); needs the store to be free
    /// of writers and readers. Returns the file size before and after.
    pub fn compact(path: &Path) -> Result<(u64, u64), StoreError> {
        existing_file(path)?;
        let size = || std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let before = size();
        guard::guarded(path, || {
            let mut db = builder().open(path).map_err(|e| open_error(path, e))?;
            while db.compact().map_err(engine)? {}
            Ok(())
        })?;
        Ok((before, size()))
    }
}
