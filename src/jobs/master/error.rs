//! What stops a master with an error.

use crate::jobs::executor::ExecError;
use crate::store::StoreError;
use std::fmt;
use std::path::PathBuf;

/// What stops a master with an error.
#[derive(Debug)]
pub enum MasterError {
    /// The store failed.
    Store(StoreError),
    /// The executor failed (sbatch missing or failing, a worker that
    /// cannot start).
    Exec(ExecError),
    /// A job file could not be written.
    Io(PathBuf, std::io::Error),
    /// Another master holds the work directory ([`lock_path`](super::lock_path)).
    Busy {
        /// The work directory.
        work_dir: PathBuf,
        /// What the other master wrote in the lock file (its pid and
        /// store).
        holder: String,
    },
}

impl fmt::Display for MasterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MasterError::Store(e) => write!(f, "{e}"),
            MasterError::Exec(e) => write!(f, "{e}"),
            MasterError::Io(p, e) => write!(f, "cannot write {}: {e}", p.display()),
            MasterError::Busy { work_dir, holder } => write!(
                f,
                "the work directory {} is in use by another master ({}): a work directory \
                 belongs to one store; give this run another --work-dir",
                work_dir.display(),
                if holder.is_empty() {
                    "which one, it has not written yet"
                } else {
                    holder
                }
            ),
        }
    }
}

impl std::error::Error for MasterError {}

impl From<StoreError> for MasterError {
    fn from(e: StoreError) -> MasterError {
        MasterError::Store(e)
    }
}

impl From<ExecError> for MasterError {
    fn from(e: ExecError) -> MasterError {
        MasterError::Exec(e)
    }
}
