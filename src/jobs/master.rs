//! The master of a job-level search (`prove --jobs N`): the top tree in
//! the store ([`super::top`]), up to N jobs out at once on an
//! [`Executor`], every result taken in through [`super::merge`].
//!
//! A round: take the results of ended jobs (a proven leaf's certified
//! records enter the store; a disproven leaf is settled; an unresolved one
//! is expanded one ply, its children's jobs getting `growth` times its
//! budget; a rejected or missing result puts the leaf back in the
//! frontier, and a leaf rejected twice (or whose worker vanished three
//! times) is marked failed, never proven in this run: the next run over
//! the store tries it again, as it does leaves a worker disproved, see
//! `TopTree::open`); stop if the root is settled,
//! the deadline passed or the stop flag is set; select the most-proving
//! free leaves and send each out as a job; commit the round in one store
//! transaction.
//!
//! Every [`STATUS_EVERY`] the master also writes a status file,
//! `WORK_DIR/status.json` ([`status_path`]), atomically: the progress a
//! terminal shows, the root's moves and the run's state, for a master with
//! no terminal (a batch job, `nohup`) to be watched from another shell.

use super::executor::{ExecError, Executor};
use super::job::{Budget, Job, Outcome, Thresholds, result_path, tree_path, with_suffix};
use super::merge::{Rejected, take_result};
use super::top::{INF, NODE_LEN, State, TopNode, TopTree, with_margin};
use crate::check::LeafTables;
use crate::rules::{Color, Position, Rules};
use crate::store::{Store, StoreError};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A master's settings.
pub struct MasterConfig {
    /// The rule set.
    pub rules: Rules,
    /// The root position.
    pub root: Position,
    /// The line from the start to the root (SAN), for the job files.
    pub line: Vec<String>,
    /// The side to prove a win for.
    pub winner: Color,
    /// Jobs out at once.
    pub jobs: usize,
    /// Where job files and results go.
    pub work_dir: PathBuf,
    /// The budget of the first jobs; `time_s` caps every job.
    pub budget: Budget,
    /// Each expansion multiplies its children's node budget by this.
    pub growth: u64,
    /// Endgame tables for the workers and the checker.
    pub tables: Option<PathBuf>,
    /// Stop at this instant.
    pub deadline: Option<Instant>,
    /// Stop after this long on the executor's virtual clock, for an
    /// executor that simulates time ([`Executor::clock`]; `--limit` with
    /// `--executor sim`); ignored by the others.
    pub virtual_limit: Option<Duration>,
    /// Stop when this flag is set.
    pub stop: Option<Arc<AtomicBool>>,
    /// A transposition table the jobs share (local workers): created
    /// empty at `budget.memory_bytes` when the run starts, named in every
    /// job, removed when it ends.
    pub shared_tt: Option<PathBuf>,
    /// The jobs run in this process (the shared table is then this
    /// process's memory, not a file).
    pub in_process: bool,
    /// Nodes a job searches before a threshold may stop it (its start-up
    /// is paid for).
    pub min_nodes: u64,
    /// Selection stays with a child within df-pn's margin of its best
    /// sibling (experimental).
    pub focus: bool,
    /// Save the run state to a file (`prove --state`), see
    /// [`super::state`].
    pub state: Option<super::state::StateSave>,
    /// Entries put into the shared table when it is made (a restored run
    /// state's, [`super::state::RunState::tt_seed`]); unused without one.
    pub tt_seed: Vec<(u64, crate::search::tt::TtValue)>,
}

/// How a master run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MasterResult {
    /// The root is proven and its proof is in the store.
    Proven,
    /// The root is disproven (by the workers' searches: not certified).
    Disproven,
    /// The root cannot be proven because leaves failed.
    Failed,
    /// A limit or a signal stopped it (run again to resume).
    Stopped,
}

impl MasterResult {
    /// Its name, as `--json` and the status file write it (`proven`,
    /// `disproven`, `failed`, `stopped`).
    pub fn name(self) -> &'static str {
        match self {
            MasterResult::Proven => "proven",
            MasterResult::Disproven => "disproven",
            MasterResult::Failed => "failed",
            MasterResult::Stopped => "stopped",
        }
    }
}

/// One job's figures.
#[derive(Clone, Debug, Serialize)]
pub struct JobFigure {
    /// The job's id.
    pub id: String,
    /// Its top-tree node.
    pub node: u64,
    /// Its node's depth in the top tree.
    pub depth: u16,
    /// Its line from the start (SAN).
    pub line: String,
    /// Its node budget.
    pub budget_nodes: u64,
    /// `proven`, `disproven`, `unresolved`, or `rejected`.
    pub outcome: String,
    /// Why it was rejected.
    pub rejected: Option<String>,
    /// Nodes its search expanded (from its result).
    pub nodes: u64,
    /// Seconds its worker reported.
    pub time_s: f64,
    /// Seconds the checker took over its certificate.
    pub check_s: f64,
    /// Records it brought into the store.
    pub records: u64,
}

/// What a master run did.
#[derive(Clone, Debug, Serialize)]
pub struct MasterReport {
    /// How it ended.
    pub result: MasterResult,
    /// The root's proof number.
    pub root_pn: u32,
    /// The root's disproof number.
    pub root_dn: u32,
    /// Whether it resumed a top tree left by an earlier run.
    pub resumed: bool,
    /// Leaves an earlier run left failed, or disproven by its workers
    /// (not certified), tried again in this one.
    pub reopened: u64,
    /// Top-tree nodes settled at the start from proofs the store holds
    /// (made since the tree was left), whatever the tree said.
    pub settled_from_store: u64,
    /// Jobs that came back accepted.
    pub jobs_done: u64,
    /// Results rejected (each named in `each`).
    pub jobs_rejected: u64,
    /// Jobs stopped because their leaf no longer mattered.
    pub jobs_cancelled: u64,
    /// Leaves marked failed.
    pub leaves_failed: u64,
    /// Records merged into the store.
    pub records_merged: u64,
    /// Nodes in the top tree.
    pub top_nodes: u64,
    /// Bytes of one top-tree node's key and value (the store adds its own
    /// page overhead).
    pub top_bytes_per_node: u64,
    /// Wall-clock seconds.
    pub time_s: f64,
    /// The root's moves as the top tree has them: how far each got.
    pub root_moves: Vec<MoveFigure>,
    /// The top tree's most-proving path from the root when the run ended
    /// (empty when the root is settled).
    pub principal_line: Vec<LineStep>,
    /// Every job.
    pub each: Vec<JobFigure>,
}

/// A root move's standing in the top tree.
#[derive(Clone, Debug, Serialize)]
pub struct MoveFigure {
    /// The move (SAN).
    pub san: String,
    /// `frontier`, `inflight`, `inner`, `proven`, `disproven` or `failed`.
    pub state: String,
    /// Its proof number.
    pub pn: u32,
    /// Its disproof number.
    pub dn: u32,
    /// The replies to it in the top tree (0 until it is expanded).
    pub replies: u32,
    /// Of those, the ones proven (a win for the winner after the reply).
    pub replies_proven: u32,
}

/// One move of the principal line: the top tree's most-proving path from
/// the root, where the search is now.
#[derive(Clone, Debug, Serialize)]
pub struct LineStep {
    /// The move (SAN).
    pub san: String,
    /// `frontier`, `inflight` or `inner`.
    pub state: String,
    /// The proof number after it.
    pub pn: u32,
    /// The disproof number after it.
    pub dn: u32,
}

/// A progress report, once a round at most once a second.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Status {
    /// Frontier leaves waiting.
    pub frontier: u64,
    /// Jobs running (or queued on Slurm).
    pub running: usize,
    /// Jobs accepted.
    pub done: u64,
    /// Results rejected.
    pub rejected: u64,
    /// Leaves failed.
    pub failed: u64,
    /// The root's numbers.
    pub root_pn: u32,
    /// See `root_pn`.
    pub root_dn: u32,
    /// Records in the store.
    pub positions: u64,
    /// Nodes of the jobs that came back so far, this run.
    pub job_nodes: u64,
    /// Seconds so far.
    #[serde(rename = "elapsed_s")]
    pub elapsed: f64,
}

/// How often the status file is rewritten.
pub const STATUS_EVERY: Duration = Duration::from_secs(10);

/// The status file of a work directory (see the module doc).
pub fn status_path(work_dir: &std::path::Path) -> PathBuf {
    work_dir.join("status.json")
}

/// The status file's contents.
#[derive(Serialize)]
struct StatusFile<'a> {
    format: &'static str,
    version: u32,
    /// `running`, or how the run ended (a [`MasterResult`]).
    state: &'a str,
    /// The master's process id.
    pid: u32,
    /// When this was written (seconds since the Unix epoch).
    updated_unix_s: u64,
    line: &'a [String],
    winner: &'static str,
    rules: String,
    #[serde(flatten)]
    status: Status,
    top_nodes: u64,
    root_moves: &'a [MoveFigure],
    principal_line: &'a [LineStep],
    /// Why the master stopped, when `state` is `error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

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
    /// Another master holds the work directory ([`lock_path`]).
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

/// The move into top-tree node `c` from its parent's position `pos`, in
/// SAN (`?` for a code that is not a legal move there).
fn move_san(pos: &Position, c: &TopNode) -> String {
    crate::rules::move_of_code(pos, crate::vocab::MoveCode::from_raw(c.mv))
        .map(|m| pos.san(m))
        .unwrap_or_else(|| "?".into())
}

/// A node state as the report and the status file write it (`frontier`,
/// `inflight`, `inner`, `proven`, `disproven`, `failed`).
fn state_name(s: State) -> String {
    format!("{s:?}").to_lowercase()
}

/// Removes what jobs of earlier runs over this store left in the work
/// directory (`gN-nID-aK.json` and the files named after it, for N not
/// `generation`), when a run starts and when it ends: a stopped or killed
/// run's jobs are re-queued under new names, so their files would only
/// pile up. Other files are left alone.
fn remove_stale_jobs(work_dir: &std::path::Path, generation: u32) {
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

/// A work directory's lock ([`lock_path`]), which [`run_master`] needs:
/// a work directory belongs to one store, and the job files, results and
/// status file of two masters there would mix (each would read, reject
/// and count the other's results against its leaves). Held while this
/// lives; the kernel lets it go should the process be killed, so a
/// killed master's lock never blocks the next.
pub struct WorkDirLock {
    dir: PathBuf,
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
        match crate::fsutil::lock_exclusive(&path, &note) {
            Ok(crate::fsutil::Locked::Held(lock)) => Ok(WorkDirLock {
                dir: work_dir.to_path_buf(),
                _lock: lock,
            }),
            Ok(crate::fsutil::Locked::Busy(holder)) => Err(MasterError::Busy {
                work_dir: work_dir.to_path_buf(),
                holder,
            }),
            Err(e) => Err(MasterError::Io(path, e)),
        }
    }
}

/// Removes a file when dropped (the shared table, however the run ends).
struct RemoveOnDrop(Option<PathBuf>);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            crate::search::tt::Tt::release_shared(p);
            let _ = std::fs::remove_file(p);
        }
    }
}

/// A job out: its node and the job as sent.
struct Out {
    node: u64,
    job: Job,
}

/// The master loop's state.
struct Master<'a, 's> {
    cfg: &'a MasterConfig,
    store: &'s Store,
    top: TopTree<'s>,
    out: HashMap<PathBuf, Out>,
    tables: Option<Arc<LeafTables>>,
    report: MasterReport,
    /// A status file could not be written (said once).
    status_file_failed: bool,
    /// Where the selection went last at each inner node (`cfg.focus`).
    focus: HashMap<u64, u64>,
}

/// Runs a job-level search of `cfg.root` over `store` on `exec`, calling
/// `progress` about once a second. Returns when the root is settled, the
/// deadline passes or the stop flag is set; jobs still out are stopped
/// (the next run re-queues them). An executor error stops the jobs and is
/// returned; what was committed stays. `lock` is `cfg.work_dir`'s
/// ([`WorkDirLock::take`]), held by the caller for the run.
pub fn run_master(
    store: &Store,
    cfg: &MasterConfig,
    lock: &WorkDirLock,
    exec: &mut dyn Executor,
    mut progress: Option<&mut dyn FnMut(&Status)>,
) -> Result<MasterReport, MasterError> {
    let t0 = Instant::now();
    std::fs::create_dir_all(&cfg.work_dir).map_err(|e| MasterError::Io(cfg.work_dir.clone(), e))?;
    assert_eq!(
        lock.dir, cfg.work_dir,
        "the work directory's lock is another directory's"
    );
    let top = TopTree::open(store, cfg.rules, &cfg.root, cfg.winner, cfg.budget.nodes)?;
    remove_stale_jobs(&cfg.work_dir, top.header.generation);
    if let Some(p) = &cfg.shared_tt {
        let bytes = usize::try_from(cfg.budget.memory_bytes).unwrap_or(usize::MAX);
        if cfg.in_process {
            crate::search::tt::Tt::create_in_process(p, bytes);
        } else {
            crate::search::tt::Tt::create_shared(p, bytes)
                .map_err(|e| MasterError::Io(p.clone(), e))?;
        }
        if !cfg.tt_seed.is_empty() {
            let mut tt =
                crate::search::tt::Tt::open_shared(p).map_err(|e| MasterError::Io(p.clone(), e))?;
            for &(key, v) in &cfg.tt_seed {
                tt.put(key, v);
            }
        }
    }
    let _remove = RemoveOnDrop(cfg.shared_tt.clone());
    let mut m = Master {
        cfg,
        store,
        report: MasterReport {
            result: MasterResult::Stopped,
            root_pn: 1,
            root_dn: 1,
            resumed: top.resumed,
            reopened: top.reopened,
            settled_from_store: top.from_store,
            jobs_done: 0,
            jobs_rejected: 0,
            jobs_cancelled: 0,
            leaves_failed: 0,
            records_merged: 0,
            top_nodes: 0,
            top_bytes_per_node: (NODE_LEN + 8) as u64,
            time_s: 0.0,
            root_moves: Vec::new(),
            principal_line: Vec::new(),
            each: Vec::new(),
        },
        top,
        out: HashMap::new(),
        tables: cfg
            .tables
            .as_ref()
            .map(|d| Arc::new(LeafTables::open(d, cfg.rules))),
        status_file_failed: false,
        focus: HashMap::new(),
    };
    let result = m.run(exec, &mut progress, t0);
    exec.stop_all();
    // Again at the end: a worker of a killed master stops on SIGTERM and
    // may write its result after the start's clean-up.
    remove_stale_jobs(&cfg.work_dir, m.top.header.generation);
    let flushed = m.top.flush();
    let failure = match (&result, &flushed) {
        (Err(e), _) => Some(e.to_string()),
        (Ok(()), Err(e)) => Some(e.to_string()),
        _ => None,
    };
    if let Some(why) = failure {
        // The status file says the run is over, and why, instead of an
        // old `running`.
        m.write_error_status_file(why, t0);
    }
    flushed?;
    m.save_state();
    result?;
    let root = m.top.root()?;
    m.report.root_pn = root.pn;
    m.report.root_dn = root.dn;
    m.report.top_nodes = m.top.len();
    m.report.root_moves = m.root_moves(&root)?;
    m.report.principal_line = m.principal_line()?;
    m.report.result = match root.state {
        State::Proven => MasterResult::Proven,
        State::Disproven | State::Failed if m.top.census()?[State::Failed as usize] > 0 => {
            MasterResult::Failed
        }
        State::Disproven => MasterResult::Disproven,
        State::Failed => MasterResult::Failed,
        _ => MasterResult::Stopped,
    };
    m.report.time_s = t0.elapsed().as_secs_f64();
    let status = m.status(0, t0)?;
    m.write_status_file(m.report.result.name(), None, status);
    Ok(m.report)
}

impl Master<'_, '_> {
    /// Saves the run state (`cfg.state`), saying on stderr what was saved
    /// or why it could not be: a run goes on without its state file.
    fn save_state(&mut self) {
        let Some(s) = &self.cfg.state else {
            return;
        };
        if let Err(e) = self.top.flush() {
            eprintln!("antiproof: warning: run state not saved: {e}");
            return;
        }
        // The jobs' shared table, read as it stands (jobs may be writing).
        let tt = match &self.cfg.shared_tt {
            Some(p) if s.max_tt > 0 => match crate::search::tt::Tt::open_shared(p) {
                Ok(t) => Some(t),
                Err(e) => {
                    eprintln!(
                        "antiproof: warning: the run state keeps no table entries: {}: {e}",
                        p.display()
                    );
                    None
                }
            },
            _ => None,
        };
        match super::state::save(self.store, self.cfg.rules, s, tt.as_ref()) {
            Ok(saved) => eprintln!(
                "antiproof: run state saved to {}: {} top-tree nodes, {} of {} proven nodes' proofs ({} records), {} table entries, {} bytes",
                s.path.display(),
                saved.nodes,
                saved.proofs_kept,
                saved.proofs_kept + saved.proofs_left,
                saved.records,
                saved.tt_entries,
                saved.bytes
            ),
            Err(e) => eprintln!("antiproof: warning: run state not saved: {e}"),
        }
    }

    /// The root's moves with their numbers and replies proven, best first
    /// (by proof number where the winner moves, else disproof number).
    fn root_moves(&self, root: &super::top::TopNode) -> Result<Vec<MoveFigure>, MasterError> {
        let pos = root.position();
        let or = pos.turn() == self.cfg.winner;
        let mut moves = self.top.children(root)?;
        moves.sort_by_key(|(_, c)| c.order(or));
        let mut out = Vec::new();
        for (_, c) in moves {
            let kids = self.top.children(&c)?;
            out.push(MoveFigure {
                san: move_san(&pos, &c),
                state: state_name(c.state),
                pn: c.pn,
                dn: c.dn,
                replies: kids.len() as u32,
                replies_proven: kids
                    .iter()
                    .filter(|(_, k)| k.state == State::Proven)
                    .count() as u32,
            });
        }
        Ok(out)
    }

    /// The principal line: from the root, at each inner node the child
    /// the selection would follow (by proof number where the winner
    /// moves, else by disproof number; jobs out included), down to a
    /// leaf, at most 200 plies.
    fn principal_line(&self) -> Result<Vec<LineStep>, MasterError> {
        let mut out = Vec::new();
        let mut node = self.top.root()?;
        while node.state == State::Inner && out.len() < 200 {
            let pos = node.position();
            let or = pos.turn() == self.cfg.winner;
            let Some((_, next)) = self
                .top
                .children(&node)?
                .into_iter()
                .filter(|(_, c)| !c.settled())
                .min_by_key(|(_, c)| c.order(or))
            else {
                break;
            };
            out.push(LineStep {
                san: move_san(&pos, &next),
                state: state_name(next.state),
                pn: next.pn,
                dn: next.dn,
            });
            node = next;
        }
        Ok(out)
    }

    /// The progress figures now.
    fn status(&self, running: usize, t0: Instant) -> Result<Status, MasterError> {
        let c = self.top.census()?;
        let root = self.top.root()?;
        Ok(Status {
            frontier: c[State::Frontier as usize],
            running,
            done: self.report.jobs_done,
            rejected: self.report.jobs_rejected,
            failed: c[State::Failed as usize],
            root_pn: root.pn,
            root_dn: root.dn,
            positions: self.store.len(self.cfg.rules)?,
            job_nodes: self.report.each.iter().map(|e| e.nodes).sum(),
            elapsed: t0.elapsed().as_secs_f64(),
        })
    }

    /// Rewrites the status file with state `error` and `why`, with the
    /// figures that can still be read.
    fn write_error_status_file(&mut self, why: String, t0: Instant) {
        let status = self.status(0, t0).unwrap_or(Status {
            frontier: 0,
            running: 0,
            done: self.report.jobs_done,
            rejected: self.report.jobs_rejected,
            failed: self.report.leaves_failed,
            root_pn: self.report.root_pn,
            root_dn: self.report.root_dn,
            positions: 0,
            job_nodes: self.report.each.iter().map(|e| e.nodes).sum(),
            elapsed: t0.elapsed().as_secs_f64(),
        });
        self.write_status_file("error", Some(why), status);
    }

    /// Rewrites the status file with `state` (`running`, a result's name,
    /// or `error` with `error` saying why), `status` and the top tree's
    /// root moves and principal line as far as they can be read. It only
    /// informs: a failure to write it is said once on stderr and the
    /// search goes on.
    fn write_status_file(&mut self, state: &str, error: Option<String>, status: Status) {
        let moves = self
            .top
            .root()
            .map_err(MasterError::from)
            .and_then(|r| self.root_moves(&r))
            .unwrap_or_default();
        let principal = self.principal_line().unwrap_or_default();
        let file = StatusFile {
            format: "antiproof-status",
            version: 1,
            state,
            pid: std::process::id(),
            updated_unix_s: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
            line: &self.cfg.line,
            winner: self.cfg.winner.name(),
            rules: self.cfg.rules.to_string(),
            status,
            top_nodes: self.top.len(),
            root_moves: &moves,
            principal_line: &principal,
            error,
        };
        let path = status_path(&self.cfg.work_dir);
        let written = crate::fsutil::write_atomic(&path, |w| {
            serde_json::to_writer_pretty(&mut *w, &file)?;
            std::io::Write::write_all(w, b"\n")
        });
        if let Err(e) = written
            && !self.status_file_failed
        {
            self.status_file_failed = true;
            eprintln!(
                "warning: cannot write the status file {}: {e} (the search goes on)",
                path.display()
            );
        }
    }

    fn stopped(&self, exec: &dyn Executor) -> bool {
        self.cfg
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
            || self.cfg.deadline.is_some_and(|d| Instant::now() >= d)
            || self.virtual_left(exec).is_some_and(|l| l.is_zero())
    }

    /// What is left of `cfg.virtual_limit` on the executor's clock, when
    /// it simulates time ([`Executor::clock`]) and a limit is set.
    fn virtual_left(&self, exec: &dyn Executor) -> Option<Duration> {
        Some(self.cfg.virtual_limit?.saturating_sub(exec.clock()?))
    }

    fn run(
        &mut self,
        exec: &mut dyn Executor,
        progress: &mut Option<&mut dyn FnMut(&Status)>,
        t0: Instant,
    ) -> Result<(), MasterError> {
        let mut last_report = Instant::now();
        // The first status file once the first jobs are out.
        let mut last_status_file: Option<Instant> = None;
        let mut last_state = Instant::now();
        loop {
            let mut took = false;
            for ended in exec.poll()? {
                self.take(ended.job)?;
                took = true;
            }
            if took {
                self.cancel_settled(exec)?;
            }
            let root = self.top.root()?;
            if root.settled() || self.stopped(exec) {
                return Ok(());
            }
            let sent = self.dispatch(exec)?;
            self.top.flush()?;
            if exec.running() == 0 && sent == 0 && !exec.holding() {
                // Nothing out and nothing to send: every leaf is settled
                // but the root is not (cannot happen), or all failed.
                return Ok(());
            }
            let report_due = progress.is_some() && last_report.elapsed() >= Duration::from_secs(1);
            let file_due = last_status_file.is_none_or(|t| t.elapsed() >= STATUS_EVERY);
            if report_due || file_due {
                // One reading of the figures for both.
                let status = self.status(exec.running(), t0)?;
                if let Some(p) = progress.as_mut()
                    && report_due
                {
                    last_report = Instant::now();
                    p(&status);
                }
                if file_due {
                    last_status_file = Some(Instant::now());
                    self.write_status_file("running", None, status);
                }
            }
            if self
                .cfg
                .state
                .as_ref()
                .is_some_and(|s| last_state.elapsed() >= s.every)
            {
                last_state = Instant::now();
                self.save_state();
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Sends jobs to fill the free slots; returns how many were sent.
    fn dispatch(&mut self, exec: &mut dyn Executor) -> Result<usize, MasterError> {
        let mut sent = 0;
        // Leaves the store already holds are settled without a job, and
        // the selection runs again.
        for _ in 0..64 {
            if exec.holding() {
                break;
            }
            let free = self.cfg.jobs.saturating_sub(exec.running());
            if free == 0 {
                break;
            }
            let picked = if self.cfg.focus {
                self.top.select_focused(free, Some(&mut self.focus))?
            } else {
                self.top.select(free)?
            };
            if picked.is_empty() {
                break;
            }
            let mut settled = false;
            let reader = self.store.reader()?;
            for id in picked {
                let mut n = self.top.get(id)?;
                let pos = n.position();
                if let Some(r) = reader.get(self.cfg.rules, &n.key)? {
                    let win = (r.verdict == crate::store::Verdict::Win)
                        == (pos.turn() == self.cfg.winner);
                    let state = if win { State::Proven } else { State::Disproven };
                    self.top.set(id, state, 0, 0)?;
                    settled = true;
                    continue;
                }
                if pos.turn() != self.cfg.winner {
                    // Every reply must be proven: the replies go out as
                    // jobs of their own (no speculation here).
                    self.top.expand(id, n.budget, &HashMap::new())?;
                    settled = true;
                    continue;
                }
                let id_s = format!("g{}-n{id}-a{}", self.top.header.generation, n.attempts);
                let path = self.cfg.work_dir.join(format!("{id_s}.json"));
                for p in [result_path(&path), tree_path(&path)] {
                    let _ = std::fs::remove_file(p);
                }
                let mut time_s = self.cfg.budget.time_s;
                if let Some(d) = self.cfg.deadline {
                    time_s = time_s.min(d.saturating_duration_since(Instant::now()).as_secs_f64());
                }
                if let Some(left) = self.virtual_left(exec) {
                    time_s = time_s.min(left.as_secs_f64());
                }
                // Thresholds stop a job early for a sibling that looks
                // better; only worth it where the jobs share a table (a
                // job stopped early leaves its work there), otherwise a
                // job runs to its budget.
                let thresholds = match self.cfg.shared_tt {
                    Some(_) => self.thresholds(id)?,
                    None => None,
                };
                // The replayed node (with its clock) and the positions
                // before it since the last capture or pawn move.
                let (line, mut replayed) = self.replay(id)?;
                let (root, history) = match replayed.pop() {
                    Some(root) if root.pack() == pos.pack() => {
                        let start = if root.halfmoves() == 0 {
                            replayed.len()
                        } else {
                            replayed
                                .iter()
                                .rposition(|p| p.halfmoves() == 0)
                                .unwrap_or(0)
                        };
                        (root, replayed.split_off(start))
                    }
                    _ => (pos, Vec::new()),
                };
                let mut job = Job::new(
                    id_s,
                    root,
                    line,
                    self.cfg.rules,
                    self.cfg.winner,
                    Budget {
                        nodes: n.budget.max(1),
                        time_s: time_s.max(0.1),
                        memory_bytes: self.cfg.budget.memory_bytes,
                        threads: self.cfg.budget.threads,
                    },
                    self.cfg.tables.clone(),
                );
                job.file.thresholds = thresholds;
                job.file.shared_tt = self.cfg.shared_tt.clone();
                job.set_history(history);
                job.write(&path)
                    .map_err(|e| MasterError::Io(path.clone(), e))?;
                if let Err(e) = exec.submit(&path) {
                    let _ = std::fs::remove_file(&path);
                    return match e {
                        // Not taken now (the executor said why and holds
                        // submissions): the leaf stays in the frontier.
                        ExecError::Refused(_) => Ok(sent),
                        e => Err(e.into()),
                    };
                }
                n.state = State::InFlight;
                self.top.put(id, n);
                self.out.insert(path, Out { node: id, job });
                sent += 1;
            }
            if !settled {
                break;
            }
        }
        Ok(sent)
    }

    /// Stops the jobs whose leaves lie below a node settled meanwhile (a
    /// sibling's result decided their parent): their work is moot.
    fn cancel_settled(&mut self, exec: &mut dyn Executor) -> Result<(), MasterError> {
        let mut moot = Vec::new();
        for (path, o) in &self.out {
            let mut at = self.top.get(o.node)?.parent;
            while at != super::top::HEADER_ID {
                let n = self.top.get(at)?;
                if n.settled() {
                    moot.push((path.clone(), o.node));
                    break;
                }
                at = n.parent;
            }
        }
        for (path, node) in moot {
            exec.cancel(&path);
            self.out.remove(&path);
            let mut n = self.top.get(node)?;
            n.state = State::Frontier;
            self.top.put(node, n);
            self.report.jobs_cancelled += 1;
            for p in [
                path.clone(),
                with_suffix(&path, ".log"),
                with_suffix(&path, ".redb"),
            ] {
                let _ = std::fs::remove_file(p);
            }
        }
        Ok(())
    }

    /// Thresholds for a job at `id`, as df-pn's MID passes them down from
    /// the root (infinite there): where the winner moves, a child gets
    /// the proof number at which its best sibling would look better (the
    /// 1 + 1/4 margin of the search), and the disproof number its parent
    /// may reach less what its siblings hold; dually where the loser
    /// moves. A child already past its sibling (selected because the
    /// better one is out) gets a quarter more than its own numbers, so
    /// every job does some work. `None` where both stay infinite.
    fn thresholds(&self, id: u64) -> Result<Option<Thresholds>, MasterError> {
        let eps = |v: u32| -> u32 {
            if v >= INF - 1 {
                INF
            } else {
                with_margin(v).min(INF as u64 - 1) as u32
            }
        };
        let sub = |th: u32, a: u32, b: u32| -> u32 {
            // th - a + b, saturating; infinite stays infinite.
            if th == INF {
                INF
            } else {
                (th as u64 + b as u64)
                    .saturating_sub(a as u64)
                    .min(INF as u64 - 1) as u32
            }
        };
        let mut chain = vec![id];
        let mut at = self.top.get(id)?.parent;
        while at != super::top::HEADER_ID {
            chain.push(at);
            at = self.top.get(at)?.parent;
        }
        chain.reverse();
        let (mut thpn, mut thdn) = (INF, INF);
        for w in chain.windows(2) {
            let parent = self.top.get(w[0])?;
            let child = self.top.get(w[1])?;
            let or = parent.position().turn() == self.cfg.winner;
            let second = self
                .top
                .children(&parent)?
                .into_iter()
                .filter(|(cid, c)| *cid != w[1] && !c.settled())
                .map(|(_, c)| if or { c.pn } else { c.dn })
                .min()
                .unwrap_or(INF);
            if or {
                thpn = thpn.min(eps(second).max(eps(child.pn)));
                thdn = sub(thdn, parent.dn, child.dn).max(child.dn.saturating_add(1));
            } else {
                thdn = thdn.min(eps(second).max(eps(child.dn)));
                thpn = sub(thpn, parent.pn, child.pn).max(child.pn.saturating_add(1));
            }
        }
        Ok((thpn != INF || thdn != INF).then_some(Thresholds {
            pn: thpn,
            dn: thdn,
            min_nodes: self.cfg.min_nodes,
        }))
    }

    /// Node `id` replayed from the root: the SAN line from the start (the
    /// master's line, then the top tree's moves), and the positions from
    /// the root to the node with their half-move clocks (which top-tree
    /// keys do not keep).
    fn replay(&self, id: u64) -> Result<(Vec<String>, Vec<Position>), MasterError> {
        let mut moves = Vec::new();
        let mut n = self.top.get(id)?;
        let mut at = id;
        while at != 0 {
            moves.push(crate::vocab::MoveCode::from_raw(n.mv));
            at = n.parent;
            n = self.top.get(at)?;
        }
        moves.reverse();
        let mut line = self.cfg.line.clone();
        let mut pos = self.cfg.root;
        let mut path = vec![pos];
        for c in moves {
            let Some(m) = crate::rules::move_of_code(&pos, c) else {
                break;
            };
            line.push(pos.san(m));
            pos = pos.play(m);
            path.push(pos);
        }
        Ok((line, path))
    }

    /// Takes in the result of the job in `path`, whose worker ended.
    fn take(&mut self, path: PathBuf) -> Result<(), MasterError> {
        let Some(Out { node, job }) = self.out.remove(&path) else {
            return Ok(());
        };
        let n = self.top.get(node)?;
        let mut fig = JobFigure {
            id: job.file.id.clone(),
            node,
            depth: n.depth,
            line: job.file.line.join(" "),
            budget_nodes: job.file.budget.nodes,
            outcome: String::new(),
            rejected: None,
            nodes: 0,
            time_s: 0.0,
            check_s: 0.0,
            records: 0,
        };
        let reader = self.store.reader()?;
        let taken = take_result(&path, &job, &reader, self.tables.as_ref())?;
        drop(reader);
        match taken {
            Ok(acc) => {
                self.report.jobs_done += 1;
                fig.nodes = acc.result.nodes;
                fig.time_s = acc.result.time_s;
                fig.check_s = acc.check_s;
                fig.records = acc.records.len() as u64;
                self.report.records_merged += fig.records;
                match acc.result.outcome {
                    Outcome::Proven => {
                        fig.outcome = "proven".into();
                        self.top.add_records(acc.records);
                        self.top.set(node, State::Proven, 0, INF)?;
                    }
                    Outcome::Disproven => {
                        fig.outcome = "disproven".into();
                        self.top.set(node, State::Disproven, INF, 0)?;
                    }
                    Outcome::Unresolved
                        if acc.result.stopped_by.as_deref() == Some("threshold") =>
                    {
                        // A sibling looks better now: the leaf goes back
                        // to the frontier with the numbers its search
                        // reached (the shared table keeps its work), as
                        // df-pn leaves a child.
                        fig.outcome = "unresolved".into();
                        self.top.set(
                            node,
                            State::Frontier,
                            acc.result.root_pn.clamp(1, INF - 1),
                            acc.result.root_dn.clamp(1, INF - 1),
                        )?;
                    }
                    Outcome::Unresolved => {
                        fig.outcome = "unresolved".into();
                        // Its budget ran out: the leaf is expanded, its
                        // children (each a job of its own) getting
                        // `growth` times its budget.
                        let budget = n.budget.saturating_mul(self.cfg.growth.max(1));
                        let hints: HashMap<u16, (u32, u32)> = acc
                            .result
                            .children
                            .iter()
                            .filter_map(|h| {
                                let code = crate::vocab::MoveCode::from_uci(&h.uci)?;
                                Some((code.cleared().raw(), (h.pn, h.dn)))
                            })
                            .collect();
                        self.top.expand(node, budget, &hints)?;
                    }
                }
                for p in [
                    path.clone(),
                    result_path(&path),
                    tree_path(&path),
                    with_suffix(&path, ".log"),
                ] {
                    let _ = std::fs::remove_file(p);
                }
            }
            Err(why) => {
                self.report.jobs_rejected += 1;
                fig.outcome = "rejected".into();
                let limit = if matches!(why, Rejected::NoResult(_)) {
                    3
                } else {
                    2
                };
                eprintln!(
                    "antiproof: job {} (line {}) rejected: {why}",
                    job.file.id,
                    job.file.line.join(" ")
                );
                fig.rejected = Some(why.to_string());
                let mut n = self.top.get(node)?;
                n.attempts = n.attempts.saturating_add(1);
                if n.attempts >= limit {
                    self.report.leaves_failed += 1;
                    self.top.put(node, n);
                    self.top.set(node, State::Failed, INF, 0)?;
                } else {
                    n.state = State::Frontier;
                    self.top.put(node, n);
                }
            }
        }
        self.report.each.push(fig);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::job_generation;

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
