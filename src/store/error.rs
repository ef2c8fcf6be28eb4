//! What goes wrong with a store, as one error type.

use super::SCHEMA_VERSION;
use std::fmt;
use std::path::{Path, PathBuf};

/// A store that could not be opened, read or written.
#[derive(Debug)]
pub enum StoreError {
    /// The database file could not be opened or created.
    Open {
        /// Its path.
        path: PathBuf,
        /// What the engine said.
        message: String,
    },
    /// The store was written by another schema version.
    Schema {
        /// Its path.
        path: PathBuf,
        /// The version found (None: no version recorded).
        found: Option<u32>,
    },
    /// Another process has the store open for writing.
    InUse {
        /// Its path.
        path: PathBuf,
    },
    /// A write to a store opened read-only.
    ReadOnly {
        /// Its path.
        path: PathBuf,
    },
    /// A record or key that cannot be decoded.
    Corrupt(String),
    /// The storage engine found the file damaged (it panicked or failed a
    /// consistency check); nothing more is read from it.
    Damaged {
        /// Its path.
        path: PathBuf,
        /// What the engine said.
        message: String,
    },
    /// The engine failed during a read or write.
    Engine(String),
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Open { path, message } => {
                write!(f, "cannot open proof store {}: {message}", path.display())
            }
            StoreError::Schema { path, found } => match found {
                Some(v) => write!(
                    f,
                    "proof store {} has schema version {v}; this antiproof reads version {SCHEMA_VERSION}",
                    path.display()
                ),
                None => write!(
                    f,
                    "{} is not an antiproof proof store (no schema version)",
                    path.display()
                ),
            },
            StoreError::InUse { path } => write!(
                f,
                "proof store {} is being written by another process (a prove run?); \
                 only one may write at a time, while any number may read",
                path.display()
            ),
            StoreError::ReadOnly { path } => {
                write!(f, "proof store {} is open read-only", path.display())
            }
            StoreError::Corrupt(m) => write!(f, "corrupt proof store: {m}"),
            StoreError::Damaged { path, message } => write!(
                f,
                "proof store {} is damaged ({message}); `antiproof store check --db {}` \
                 checks it, and a store that fails that must be rebuilt by proving again \
                 (certificates already exported are not affected)",
                path.display(),
                path.display()
            ),
            StoreError::Engine(m) => write!(f, "proof store error: {m}"),
        }
    }
}

impl std::error::Error for StoreError {}

impl StoreError {
    /// The store's path, when the message names it (a caller adds it
    /// otherwise, so a message says the path once).
    pub fn path(&self) -> Option<&Path> {
        match self {
            StoreError::Open { path, .. }
            | StoreError::Schema { path, .. }
            | StoreError::InUse { path }
            | StoreError::ReadOnly { path }
            | StoreError::Damaged { path, .. } => Some(path),
            StoreError::Corrupt(_) | StoreError::Engine(_) => None,
        }
    }

    /// The error as the command line reports it: the path once, then the
    /// cause (`cannot open proof store X: no such file`).
    pub fn naming(self, path: &Path) -> anyhow::Error {
        if self.path().is_some() {
            anyhow::Error::new(self)
        } else {
            anyhow::anyhow!("proof store {}: {self}", path.display())
        }
    }
}

pub(super) fn engine<E: fmt::Display>(e: E) -> StoreError {
    StoreError::Engine(e.to_string())
}
