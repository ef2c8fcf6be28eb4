//! A master's work directory: its lock (one master a directory), the
//! removal of earlier runs' job files, and of the shared table when the
//! run ends.

use super::MasterError;
use std::path::PathBuf;

/// Removes what jobs of earlier runs over this store left in the work
/// directory (`gN-nID-aK.json` and the files named after it, for N not
/// `generation`), when a run starts and when it ends: a stopped or killed
/// run's jobs are re-queued under new names, so their files would only
/// pile up. Other files are left alone.
pub(super) fn remove_stale_jobs(work_dir: &std::path::Path, generation: u32) {
    let Ok(entries) = std::fs::read_dir(work_dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        if let Some(g) = job_generation(name)
            && g != generation
        {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The run generation of a job file's name (`g3-n17-a0.json`, and the
/// result, certificate, log and scratch store named after it), `None` for
/// any other name.
fn job_generation(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('g')?;
    let (g, rest) = rest.split_once("-n")?;
    let (node, rest) = rest.split_once("-a")?;
    let (attempt, _) = rest.split_once(".json")?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(node) && digits(attempt)).then_some(())?;
    g.parse().ok()
}

/// The lock file of a work directory, held by its master for its run.
pub fn lock_path(work_dir: &std::path::Path) -> PathBuf {
    work_dir.join("master.lock")
}

/// A work directory's lock ([`lock_path`]), which [`run_master`](super::run_master) needs:
/// a work directory belongs to one store, and the job files, results and
/// status file of two masters there would mix (each would read, reject
/// and count the other's results against its leaves). Held while this
/// lives; the kernel lets it go should the process be killed, so a
/// killed master's lock never blocks the next.
pub struct WorkDirLock {
    pub(super) dir: PathBuf,
    _lock: crate::fsutil::FileLock,
}

impl WorkDirLock {
    /// Takes the lock of `work_dir` (which must exist) for a master of
    /// the store `db`, before the store is opened or anything in the
    /// directory touched; held by another master: [`MasterError::Busy`],
    /// naming its pid and store.
    pub fn take(
        work_dir: &std::path::Path,
        db: &std::path::Path,
    ) -> Result<WorkDirLock, MasterError> {
        let path = lock_path(work_dir);
        let note = format!(
            "pid {}, store {}",
            std::process::id(),
            db.canonicalize().as_deref().unwrap_or(db).display()
        );
        let start = std::time::Instant::now();
        loop {
            match crate::fsutil::lock_exclusive(&path, &note) {
                Ok(crate::fsutil::Locked::Held(lock)) => {
                    return Ok(WorkDirLock {
                        dir: work_dir.to_path_buf(),
                        _lock: lock,
                    });
                }
                // The master named in the note is gone, yet its lock is
                // held: a worker it was starting when it was killed holds
                // the lock's descriptor between fork and exec (the lock
                // belongs to the open file, which a forked child shares
                // until its exec closes it). That lasts a moment; wait it out.
                Ok(crate::fsutil::Locked::Busy(holder))
                    if start.elapsed() < GONE_HOLDER_PATIENCE
                        && holder_pid(&holder).is_some_and(crate::fsutil::process_gone) =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Ok(crate::fsutil::Locked::Busy(holder)) => {
                    return Err(MasterError::Busy {
                        work_dir: work_dir.to_path_buf(),
                        holder,
                    });
                }
                Err(e) => return Err(MasterError::Io(path, e)),
            }
        }
    }
}

/// How long [`WorkDirLock::take`] waits for a lock whose named master is
/// gone (a child it forked may hold the descriptor until its exec).
const GONE_HOLDER_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

/// The pid a lock's note names (`pid N, store S`).
fn holder_pid(note: &str) -> Option<u32> {
    let rest = note.strip_prefix("pid ")?;
    let digits = rest.split(|c: char| !c.is_ascii_digit()).next()?;
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::{WorkDirLock, holder_pid, job_generation};
    use crate::fsutil::{Locked, lock_exclusive, process_gone};

    #[test]
    fn a_lock_note_names_its_pid_and_a_live_process_is_told_from_a_gone_one() {
        assert_eq!(holder_pid("pid 17718, store /x/t.redb"), Some(17718));
        assert_eq!(holder_pid("pid 3"), Some(3));
        assert_eq!(holder_pid(""), None);
        assert_eq!(holder_pid("pid x"), None);
        assert!(!process_gone(std::process::id()));
        // Above the kernel's largest pid (2^22).
        assert!(process_gone(4_194_305));
    }

    /// A lock whose note names a gone process is waited for (a child of a
    /// killed master holds it until its exec); one whose note names a
    /// live process is refused at once.
    #[test]
    fn a_lock_left_by_a_gone_master_is_waited_for_a_live_ones_refused() {
        let dir =
            std::env::temp_dir().join(format!("antiproof-workdir-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("t.redb");
        let path = super::lock_path(&dir);
        let Locked::Held(held) = lock_exclusive(&path, "pid 4194305, store t.redb").unwrap() else {
            panic!("a new lock is free");
        };
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            drop(held);
        });
        let lock = WorkDirLock::take(&dir, &db).expect("the gone holder's lock is waited for");
        release.join().unwrap();
        drop(lock);
        let note = format!("pid {}, store t.redb", std::process::id());
        let Locked::Held(held) = lock_exclusive(&path, &note).unwrap() else {
            panic!("the lock was let go");
        };
        let t0 = std::time::Instant::now();
        match WorkDirLock::take(&dir, &db) {
            Err(super::MasterError::Busy { holder, .. }) => assert_eq!(holder, note),
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("the lock was taken twice"),
        }
        assert!(t0.elapsed() < super::GONE_HOLDER_PATIENCE);
        drop(held);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn job_file_names_tell_their_generation() {
        assert_eq!(job_generation("g3-n17-a0.json"), Some(3));
        assert_eq!(job_generation("g12-n5913-a1.json.result.json"), Some(12));
        assert_eq!(job_generation("g2-n1740-a0.json.tree"), Some(2));
        assert_eq!(job_generation("g2-n1740-a0.json.redb"), Some(2));
        for other in [
            "status.json",
            "g3-nX-a0.json",
            "g-n1-a0.json",
            "notes.txt",
            "g3-n1-a0",
        ] {
            assert_eq!(job_generation(other), None, "{other}");
        }
    }
}
