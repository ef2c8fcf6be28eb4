//! The search policy of the command line: where a stopped search keeps
//! its transposition table, the search thread and its stack, and the stop
//! flag that Ctrl-C (and SIGTERM, SIGHUP) set.

use super::state::{SearchState, StateError, StateSave, StateSaved};
use super::{Config, ProgressFn, ProveReport, ProveResult, Prover, SearchError};
use crate::rules::{Color, Position};
use crate::store::Key;
use crate::store::Store;
use crate::tables::Tables;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Stack of the search thread: the search and the extraction recurse once
/// a ply, and proofs run hundreds of plies deep.
pub const STACK_BYTES: usize = 1 << 30;

/// Where a stopped search keeps its transposition table: next to the
/// store, `PATH.table` (one search's tt; another root replaces it). A
/// search with endgame tables uses `PATH.table-endgame`: its values may
/// rest on the tables, so a run without tables must not resume from it.
pub fn tt_file(db: &Path, endgame_tables: bool) -> PathBuf {
    let mut s = db.as_os_str().to_os_string();
    s.push(".table");
    if endgame_tables {
        s.push("-endgame");
    }
    PathBuf::from(s)
}

/// A stop flag for [`super::Limits::stop`], set by Ctrl-C, SIGTERM or
/// SIGHUP: the first stops the search at a consistent point; a second
/// quits at once with exit status 130 (the store stays consistent: redb
/// commits are atomic). Only the first call installs the signal handler
/// (tests run several searches in one process): later calls get a flag
/// no signal sets.
pub fn stop_flag() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let _ = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::Relaxed) {
            std::process::exit(130);
        }
    });
    stop
}

/// One proving run as the command line makes it.
pub struct ProvingRun<'a> {
    /// The position to prove.
    pub root: Position,
    /// The side to prove a win for.
    pub winner: Color,
    /// The run's settings.
    pub config: Config,
    /// The store.
    pub store: &'a Store,
    /// The store's path: the saved tt lives next to it ([`tt_file`]).
    pub db: &'a Path,
    /// Endgame tables, if any.
    pub tables: Option<&'a Tables>,
    /// The run state it saves, if any.
    pub state: Option<StateRun<'a>>,
    /// Told where the search stands every so often
    /// ([`Prover::on_standing`]), if at all.
    pub standing_log: Option<(std::time::Duration, super::StandingFn<'a>)>,
}

/// A plain search's run state ([`super::state`]): where and how often it
/// is saved, and what was read at the start.
pub struct StateRun<'a> {
    /// Where, how often and how much.
    pub save: StateSave,
    /// The state read at the start, its records already put into the
    /// store: its table entries seed a search that resumes no saved table
    /// (a fresh machine), and its records' keys go into every save.
    pub restored: Option<SearchState>,
    /// Told each save (a line for stderr).
    pub say: &'a (dyn Fn(&str) + Sync),
}

/// How a [`ProvingRun`] ended.
pub struct Finished {
    /// The prover's report.
    pub report: ProveReport,
    /// Whether the search resumed from a saved tt.
    pub resumed: bool,
    /// Where a stopped search saved its tt for the next run, and the
    /// file's size in bytes.
    pub saved_tt: Option<(PathBuf, u64)>,
    /// Table entries put into the search from a restored run state.
    pub state_seeded: u64,
    /// What the last save of the run state wrote.
    pub state_saved: Option<StateSaved>,
    /// Where a stopped search stands ([`Prover::standing`]).
    pub standing: Option<super::Standing>,
}

/// What can go wrong in a [`ProvingRun`].
#[derive(Debug)]
pub enum RunError {
    /// The search failed.
    Search(SearchError),
    /// The tt of a stopped search could not be saved.
    SaveTt(PathBuf, std::io::Error),
    /// The run state of a stopped search could not be saved.
    SaveState(StateError),
    /// The search thread panicked.
    Panicked,
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Search(e) => write!(f, "{e}"),
            RunError::SaveTt(p, e) => {
                write!(f, "saving the transposition table to {}: {e}", p.display())
            }
            // The state's error is the source.
            RunError::SaveState(_) => write!(f, "saving the run state"),
            RunError::Panicked => write!(f, "the search thread panicked"),
        }
    }
}

impl std::error::Error for RunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RunError::SaveState(e) => Some(e),
            _ => None,
        }
    }
}

impl From<SearchError> for RunError {
    fn from(e: SearchError) -> RunError {
        RunError::Search(e)
    }
}

/// Runs `job` on a search thread with a [`STACK_BYTES`] stack: resumes
/// from the saved tt when there is one for this search (any other, or a
/// damaged one, is named to `warn` and ignored: the search starts fresh),
/// reports progress to `progress`, and afterwards saves the tt if the
/// search stopped, else deletes it.
pub fn prove<'a>(
    job: ProvingRun<'a>,
    progress: Option<ProgressFn<'a>>,
    warn: &(dyn Fn(&str) + Sync),
) -> Result<Finished, RunError> {
    let tt_path = tt_file(job.db, job.tables.is_some());
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("prove".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, move || -> Result<Finished, RunError> {
                let rule_set = job.config.rule_set;
                let mut prover = Prover::new(job.config, job.winner, Some(job.store))?;
                if let Some(t) = job.tables {
                    prover.set_tables(t);
                }
                let mut resumed = false;
                if tt_path.exists() {
                    let loading = std::time::Instant::now();
                    match prover.load_tt(&job.root, &tt_path) {
                        Ok(()) => resumed = true,
                        Err(e) => warn(&format!(
                            "ignoring the saved transposition table {}: {e}; starting fresh",
                            tt_path.display()
                        )),
                    }
                    // Reading gigabytes takes minutes on a loaded machine:
                    // a time limit is the search's, as `--known`'s
                    // loading is left out of it too.
                    prover.defer_deadline(loading.elapsed());
                }
                if let Some(f) = progress {
                    prover.on_progress(f);
                }
                if let Some((every, f)) = job.standing_log {
                    prover.on_standing(every, f);
                }
                let mut state_seeded = 0;
                let mut last_save = None;
                let saver = job.state.map(|st| {
                    if !resumed && let Some(seed) = st.restored.as_ref().and_then(|r| r.tt_seed()) {
                        prover.seed_table(seed);
                        state_seeded = seed.len() as u64;
                    }
                    let keys: Vec<Key> = st
                        .restored
                        .as_ref()
                        .map(|r| r.records.iter().map(|&(k, _, _)| k).collect())
                        .unwrap_or_default();
                    let keys = Arc::new(Mutex::new(keys));
                    prover.track_written(keys.clone());
                    StateSaver {
                        save: st.save,
                        keys,
                        store: job.store,
                        rule_set,
                        root: job.root.pack().0,
                        winner: job.winner,
                        say: st.say,
                    }
                });
                let saved_last = Arc::new(Mutex::new(None));
                if let Some(s) = &saver {
                    // Once before the search: a file that cannot be
                    // written stops the run now, not hours into it.
                    last_save = Some(s.save_now(prover.table()).map_err(RunError::SaveState)?);
                    let (s, saved_last) = (s.clone(), saved_last.clone());
                    let every = s.save.every;
                    prover.on_save(every, move |tt| match s.save_now(tt) {
                        Ok(done) => {
                            *saved_last.lock().unwrap_or_else(|e| e.into_inner()) = Some(done)
                        }
                        // Told, and tried again at the next save: the
                        // search goes on.
                        Err(e) => (s.say)(&format!(
                            "warning: saving the run state: {}",
                            with_causes(&e)
                        )),
                    });
                }
                let report = prover.prove(&job.root)?;
                // A stopped search keeps its tt for the next run; a
                // finished one no longer needs it.
                let mut saved_tt = None;
                let mut standing = None;
                if report.result == ProveResult::Stopped {
                    standing = Some(prover.standing());
                    prover
                        .save_tt(&job.root, &tt_path)
                        .map_err(|e| RunError::SaveTt(tt_path.clone(), e))?;
                    let bytes = std::fs::metadata(&tt_path).map_or(0, |m| m.len());
                    saved_tt = Some((tt_path.clone(), bytes));
                } else if tt_path.exists() {
                    let _ = std::fs::remove_file(&tt_path);
                }
                // After the table (a failed save of the state loses
                // nothing else): a stopped search saves its state as it
                // stops.
                if let Some(s) = &saver {
                    if report.result == ProveResult::Stopped {
                        let tt = prover.table();
                        last_save = Some(s.save_now(tt).map_err(RunError::SaveState)?);
                    } else if let Some(done) = *saved_last.lock().unwrap_or_else(|e| e.into_inner())
                    {
                        last_save = Some(done);
                    }
                }
                Ok(Finished {
                    report,
                    resumed,
                    saved_tt,
                    state_seeded,
                    state_saved: last_save,
                    standing,
                })
            })
            .expect("spawning the search thread")
            .join()
            .map_err(|_| RunError::Panicked)?
    })
}

/// `e` and its causes, as one line.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(&format!(": {c}"));
        cause = c.source();
    }
    s
}

/// What saves a plain search's run state, the same every time it is
/// called.
#[derive(Clone)]
struct StateSaver<'a> {
    save: StateSave,
    /// The keys of the records to keep: the restored state's, then what
    /// the search committed.
    keys: Arc<Mutex<Vec<Key>>>,
    store: &'a Store,
    rule_set: crate::store::RuleSet,
    root: Key,
    winner: Color,
    say: &'a (dyn Fn(&str) + Sync),
}

impl StateSaver<'_> {
    /// Saves the state now, with `tt`'s entries of most work, and says so.
    fn save_now(&self, tt: &super::tt::Tt) -> Result<StateSaved, StateError> {
        // Read in place: the records are committed on this (the search's)
        // thread, so nothing waits on the lock meanwhile.
        let keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        let (state, left) = super::state::collect(
            self.store,
            self.rule_set,
            self.root,
            self.winner,
            &keys[..],
            tt,
            &self.save,
        )?;
        drop(keys);
        let bytes = super::state::write(&self.save.path, &state)?;
        let saved = StateSaved {
            records: state.records.len() as u64,
            records_left: left,
            tt_entries: state.tt.len() as u64,
            bytes,
        };
        (self.say)(&format!(
            "run state saved to {}: {} records{}, {} table entries, {} bytes",
            self.save.path.display(),
            saved.records,
            if left > 0 {
                format!(" ({left} more left out: --state-records)")
            } else {
                String::new()
            },
            saved.tt_entries,
            saved.bytes
        ));
        Ok(saved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_tt_files_keep_their_names() {
        let db = Path::new("/x/a.redb");
        assert_eq!(tt_file(db, false), PathBuf::from("/x/a.redb.table"));
        assert_eq!(tt_file(db, true), PathBuf::from("/x/a.redb.table-endgame"));
    }
}
