//! The master of a job-level search (`prove --jobs N`): the top tree in
//! the store ([`super::top`]), up to N jobs out at once on an
//! [`Executor`], every result taken in through [`super::merge`].
//!
//! A round: take the results of ended jobs (a proven leaf's certified
//! records enter the store; a disproven leaf is settled; an unresolved one
//! is expanded one ply, its children's jobs getting `growth` times its
//! budget, up to `max_nodes`; a rejected or missing result puts the leaf back in the
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
//!
//! The pieces: `report` (what a run did), `status` (the progress
//! figures and the status file), `workdir` (the work directory's lock
//! and clean-up), `error` ([`MasterError`]).

mod error;
mod kept_excerpts;
mod report;
mod status;
mod workdir;

pub use error::MasterError;
use kept_excerpts::{KeptExcerpts, excerpts_kept};
pub use report::{JobFigure, MasterReport, MasterResult};
pub use status::{STATUS_EVERY, Status, status_path};
use workdir::remove_stale_jobs;
pub use workdir::{WorkDirLock, lock_path};

use super::executor::{ExecError, Executor};
use super::job::{Budget, Job, JobOutcome, Thresholds};
use super::merge::{Rejected, take_result};
use super::shared_table::SharedTable;
use super::top::{INF, NODE_LEN, State, TopTree};
use crate::check::LeafTables;
use crate::rules::{Color, Position, Rules};
use crate::store::Store;
use std::collections::HashMap;
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
    /// No job's node budget exceeds this: past it an expansion's children
    /// keep their parent's budget, so a long forced line grows the top
    /// tree instead of handing one job ever more nodes (a stored node's
    /// larger budget, from an older run, is cut to it too).
    pub max_nodes: u64,
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
    /// Where the winner moves, the selection goes to a child only while
    /// its proof number is at most this many times its best sibling's
    /// ([`super::top::TopTree::select_focused`]); `None`: to any.
    pub speculation: Option<f64>,
    /// A leaf where the loser moves goes out as one job (all its replies
    /// in one worker: one start, one latency, one table), and is expanded
    /// into a job a reply only when that job runs out of budget. `false`:
    /// expanded at once, as the first versions did (`prove
    /// --job-expand-loser-nodes`), which costs a job start for each reply,
    /// most of them proven in a fraction of it.
    pub loser_jobs: bool,
    /// Which siblings a job's thresholds are set against ([`Siblings`]).
    pub siblings: Siblings,
    /// A job's threshold where its sibling is ahead: that sibling's
    /// number times this, plus one (df-pn's 1 + 1/4 by default, the
    /// search's own margin). A job stopped at its threshold costs a
    /// start and, without a shared table, what its excerpt does not
    /// keep: a wider margin makes fewer of them.
    pub threshold_margin: f64,
    /// Save the run state to a file (`prove --state`), see
    /// [`super::state`].
    pub state: Option<super::state::StateSave>,
    /// Entries put into the shared table when it is made (a restored run
    /// state's, [`super::state::RunState::tt_seed`]); unused without one.
    pub tt_seed: Vec<(u64, crate::search::tt::TtValue)>,
    /// Jobs pass table excerpts down ([`super::excerpt`]): an unresolved
    /// job writes the entries of most work of its table, and the jobs
    /// below its leaf start from them. For jobs with tables of their own
    /// (no `shared_tt`).
    pub excerpts: bool,
    /// Where a job ran out of budget, the top tree grows below its leaf
    /// along the job's own search: a child whose entry in the job's
    /// excerpt shows at least 1/`deep` of the job's budget in work is
    /// expanded too, and so on down ([`Master::expand_along_excerpt`]).
    /// 0: one ply only.
    pub deep: u64,
    /// Leaves are picked one at a time, a child's number weighed by 1 +
    /// this x the jobs out below it, so the workers spread over near
    /// siblings ([`super::top::TopTree::select_spread`]); 0: the plain
    /// selection, filling the best child's subtree first.
    pub spread: f64,
    /// Workers a selection leaves idle go to the jobs it sends, as more
    /// search threads on each job's table, up to this many a job (the
    /// simulated cluster, where a job of T threads takes T workers; 0 or
    /// 1: every job has `budget.threads`).
    pub widen: usize,
    /// With `widen`: threads a job asks for each first budget in its own
    /// (1: a job of twice the first budget asks for two).
    pub widen_per_budget: u64,
    /// A leaf's node budget is each thread's: a job of T threads may
    /// search T times its leaf's budget, so a wide job lasts about as
    /// long as a job of one thread instead of 1/T of it (`prove
    /// --job-budget-per-thread`).
    pub budget_per_thread: bool,
}

/// Which of a node's siblings a job's thresholds are set against: a job
/// stops once its node's numbers pass the best of them (with the margin).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Siblings {
    /// Every sibling not settled, those being searched by jobs of their
    /// own included: the first versions' way, and the command's choice
    /// where jobs share a table (a job stopped early loses little there,
    /// its work being in the table; `prove
    /// --job-thresholds-all-siblings` elsewhere, to compare).
    All,
    /// Siblings whose own job is not out: a sibling searched by a worker
    /// of its own gains nothing from this job stopping early, and a
    /// stopped job costs another start (`prove
    /// --job-thresholds-free-leaves`, the default without a shared table
    /// until 2026-12-06, to compare).
    NotInFlight,
    /// Siblings with no job out at them or anywhere below them: stopping
    /// for a move the workers are already on hands it nothing either.
    /// The default without a shared table.
    Idle,
}

/// Plies below a job's leaf that [`Master::expand_along_excerpt`] grows
/// the top tree to at most.
const DEEP_PLIES: u16 = 12;

/// Expansions [`Master::expand_along_excerpt`] makes at most after one
/// job.
const DEEP_EXPANSIONS: usize = 256;

/// A table excerpt as read ([`KeptExcerpts::table`]).
type ExcerptTable = Arc<HashMap<u64, crate::search::tt::TtValue>>;

/// A job out: its node and the job as sent.
struct Out {
    node: u64,
    job: Job,
    /// When it was sent on the executor's virtual clock (`--executor sim`).
    sent_at: Option<Duration>,
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
    /// The jobs' shared table (`cfg.shared_tt`), removed when the run ends.
    shared: Option<SharedTable>,
    /// The table excerpts of the nodes whose jobs left one
    /// (`cfg.excerpts`).
    excerpts: KeptExcerpts,
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
    // Sized to need: what the first jobs can fill, growing to --memory.
    let shared = match &cfg.shared_tt {
        Some(p) => Some(
            SharedTable::create(
                p,
                cfg.in_process,
                SharedTable::first_bytes(cfg.jobs, cfg.budget.nodes, cfg.budget.memory_bytes),
                cfg.budget.memory_bytes,
                &cfg.tt_seed,
            )
            .map_err(|e| MasterError::Io(p.clone(), e))?,
        ),
        None => None,
    };
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
        shared,
        excerpts: KeptExcerpts::new(excerpts_kept(cfg.jobs)),
    };
    let result = m.run(exec, &mut progress, t0);
    exec.stop_all();
    m.excerpts.remove_all();
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
            errln!("antiproof: warning: run state not saved: {e}");
            return;
        }
        // The jobs' shared table, read as it stands (jobs may be writing).
        let tt = match self.shared.as_ref().map(SharedTable::current) {
            Some(p) if s.max_tt > 0 => match crate::search::tt::Tt::open_shared(p) {
                Ok(t) => Some(t),
                Err(e) => {
                    errln!(
                        "antiproof: warning: the run state keeps no table entries: {}: {e}",
                        p.display()
                    );
                    None
                }
            },
            _ => None,
        };
        match super::state::save(self.store, self.cfg.rules, s, tt.as_ref()) {
            Ok(saved) => errln!(
                "antiproof: run state saved to {}: {} top-tree nodes, {} of {} proven nodes' proofs ({} records), {} table entries, {} bytes",
                s.path.display(),
                saved.nodes,
                saved.proofs_kept,
                saved.proofs_kept + saved.proofs_left,
                saved.records,
                saved.tt_entries,
                saved.bytes
            ),
            Err(e) => errln!("antiproof: warning: run state not saved: {e}"),
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
                self.take(ended.job, exec.clock())?;
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
        // The jobs out at or below each node (for `Siblings::Idle` and
        // `spread`): counted once a slot is known to be free, then kept
        // up to date as jobs are sent.
        let counts = self.cfg.siblings == Siblings::Idle || self.cfg.spread > 0.0;
        let mut busy: Option<HashMap<u64, u32>> = None;
        // Leaves the store already holds are settled without a job, and
        // the selection runs again.
        for _ in 0..64 {
            if exec.holding() {
                break;
            }
            let free = self.cfg.jobs.saturating_sub(exec.busy());
            if free == 0 {
                break;
            }
            if counts && busy.is_none() {
                let mut b = HashMap::new();
                for o in self.out.values() {
                    self.mark_busy(o.node, &mut b)?;
                }
                busy = Some(b);
            }
            let picked = match busy.as_ref() {
                Some(b) if self.cfg.spread > 0.0 => {
                    self.top
                        .select_spread(free, b, self.cfg.spread, self.cfg.speculation)?
                }
                _ => {
                    let focus = self.cfg.focus.then_some(&mut self.focus);
                    self.top.select_focused(free, focus, self.cfg.speculation)?
                }
            };
            if picked.is_empty() {
                break;
            }
            let mut settled = false;
            let reader = self.store.reader()?;
            let picks = picked.len();
            for (k, id) in picked.into_iter().enumerate() {
                let mut n = self.top.get(id)?;
                let pos = n.position();
                if let Some(r) = reader.get(self.cfg.rules, &n.key)? {
                    let win = (r.verdict == crate::store::WinLoss::Win)
                        == (pos.turn() == self.cfg.winner);
                    let state = if win { State::Proven } else { State::Disproven };
                    self.top.set(id, state, 0, 0)?;
                    settled = true;
                    continue;
                }
                if pos.turn() != self.cfg.winner && !self.cfg.loser_jobs {
                    // Every reply must be proven: with loser leaves
                    // expanded at once, the replies go out as jobs of
                    // their own (no speculation here), ordered by what the
                    // jobs above learnt of them.
                    let hints = self.excerpt_hints(id)?;
                    self.top.expand(id, n.budget, &hints)?;
                    settled = true;
                    continue;
                }
                let Some(threads) = self.threads_for(exec, picks - k, n.budget) else {
                    // Held until the workers it needs are free: nothing
                    // else goes out before it.
                    return Ok(sent);
                };
                // `--job-budget-per-thread`: the leaf's budget for each thread.
                let per_thread = if self.cfg.budget_per_thread {
                    u64::from(threads)
                } else {
                    1
                };
                let id_s = format!("g{}-n{id}-a{}", self.top.header.generation, n.attempts);
                let path = self.cfg.work_dir.join(format!("{id_s}.json"));
                // A stale result or certificate of this name is never
                // read as the new job's; the other names are made new
                // (a link or a stranger's file there stops the run).
                for p in [super::job::result_path(&path), super::job::tree_path(&path)] {
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
                // better; only worth it where a job stopped early leaves
                // its work to the next (a shared table, or its table
                // excerpt), otherwise a job runs to its budget.
                let thresholds = if self.cfg.shared_tt.is_some() || self.cfg.excerpts {
                    self.thresholds(id, busy.as_ref())?
                } else {
                    None
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
                        nodes: n
                            .budget
                            .clamp(1, self.cfg.max_nodes.max(1))
                            .saturating_mul(per_thread),
                        time_s: time_s.max(0.1),
                        memory_bytes: self.cfg.budget.memory_bytes,
                        threads,
                    },
                    self.cfg.tables.clone(),
                );
                job.file.thresholds = thresholds;
                job.file.shared_tt = self.shared.as_mut().map(|t| t.give(&path));
                if self.cfg.excerpts && job.file.shared_tt.is_none() {
                    job.file.tt_excerpt = self.excerpt_above(id)?.map(|(at, p)| {
                        // Used: the last to go.
                        self.excerpts.touch(at);
                        p
                    });
                    job.file.tt_excerpt_out = super::excerpt::entries_for(job.file.budget.nodes);
                }
                job.set_history(history);
                job.write(&path)
                    .map_err(|e| MasterError::Io(path.clone(), e))?;
                if let Err(e) = exec.submit(&path, threads) {
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
                if let Some(b) = busy.as_mut() {
                    self.mark_busy(id, b)?;
                }
                let sent_at = exec.clock();
                self.out.insert(
                    path,
                    Out {
                        node: id,
                        job,
                        sent_at,
                    },
                );
                sent += 1;
            }
            if !settled {
                break;
            }
        }
        Ok(sent)
    }

    /// Counts a job out at `id` in `busy`, at `id` and every node above.
    fn mark_busy(&self, id: u64, busy: &mut HashMap<u64, u32>) -> Result<(), MasterError> {
        let mut at = id;
        while at != super::top::HEADER_ID {
            *busy.entry(at).or_insert(0) += 1;
            at = self.top.get(at)?.parent;
        }
        Ok(())
    }

    /// Whether node `at` or one above it is settled (`at` the header's id:
    /// no).
    fn settled_from(&self, mut at: u64) -> Result<bool, MasterError> {
        while at != super::top::HEADER_ID {
            let n = self.top.get(at)?;
            if n.settled() {
                return Ok(true);
            }
            at = n.parent;
        }
        Ok(false)
    }

    /// Stops the jobs whose leaves lie below a node settled meanwhile (a
    /// sibling's result decided their parent): their work is moot.
    fn cancel_settled(&mut self, exec: &mut dyn Executor) -> Result<(), MasterError> {
        let mut moot = Vec::new();
        for (path, o) in &self.out {
            if self.settled_from(self.top.get(o.node)?.parent)? {
                moot.push((path.clone(), o.node));
            }
        }
        self.drop_settled_excerpts()?;
        for (path, node) in moot {
            exec.cancel(&path);
            self.out.remove(&path);
            self.sweep_doomed_excerpts();
            self.table_ended(&path, 0)?;
            let mut n = self.top.get(node)?;
            n.state = State::Frontier;
            self.top.put(node, n);
            self.report.jobs_cancelled += 1;
            // And what a job stopped by a signal wrote on its way out
            // (a job step does: SIGTERM, then its unresolved result).
            super::job::remove_with_outputs(&path);
        }
        Ok(())
    }

    /// The table excerpt nearest above node `id` (its own first), if
    /// any, and the node whose it is.
    fn excerpt_above(&self, id: u64) -> Result<Option<(u64, PathBuf)>, MasterError> {
        let top = &self.top;
        self.excerpts.nearest(id, |n| {
            let up = top.get(n)?.parent;
            Ok::<_, MasterError>((up != super::top::HEADER_ID).then_some(up))
        })
    }

    /// The numbers the nearest table excerpt above node `id` holds for
    /// its children, by move code, as a job's hints give them (a child the
    /// excerpt does not hold has none). Nothing without excerpts, or when
    /// the excerpt cannot be read (said once in the job's log that read
    /// it; here it only orders the children).
    fn excerpt_hints(&mut self, id: u64) -> Result<HashMap<u16, (u32, u32)>, MasterError> {
        Ok(match self.excerpt_line(id)? {
            Some((table, mut line)) => Self::hints_in(&table, &mut line),
            None => HashMap::new(),
        })
    }

    /// The numbers `table` holds for the children of the last position
    /// of `line` (keyed as [`Self::excerpt_line`] says), by move code;
    /// `line` is as it was on return.
    fn hints_in(
        table: &HashMap<u64, crate::search::tt::TtValue>,
        line: &mut Vec<Position>,
    ) -> HashMap<u16, (u32, u32)> {
        let mut hints = HashMap::new();
        let Some(&pos) = line.last() else {
            return hints;
        };
        for &m in pos.legal_moves().iter() {
            line.push(pos.play(m));
            if let Some(v) = table.get(&crate::search::tt_key_of_line(line)) {
                let numbers = match (v.pn, v.dn) {
                    (0, _) => (0, INF),
                    (_, 0) => (INF, 0),
                    (p, d) => (p, d),
                };
                hints.insert(m.watkins_code().cleared().raw(), numbers);
            }
            line.pop();
        }
        hints
    }

    /// The nearest table excerpt above node `id` that can be read, and
    /// the node's line since the last capture or pawn move, as its job's
    /// search keys it.
    fn excerpt_line(
        &mut self,
        id: u64,
    ) -> Result<Option<(ExcerptTable, Vec<Position>)>, MasterError> {
        let Some((_, file)) = self.excerpt_above(id)? else {
            return Ok(None);
        };
        let Some(table) = self.excerpts.table(&file) else {
            return Ok(None);
        };
        let (_, mut line) = self.replay(id)?;
        let start = line.iter().rposition(|p| p.halfmoves() == 0).unwrap_or(0);
        line.drain(..start);
        Ok(Some((table, line)))
    }

    /// Grows the top tree below `node`, just expanded after its job of
    /// `spent` nodes ran out of budget: each new child whose entry in
    /// that job's excerpt shows at least `spent / cfg.deep` nodes of work
    /// is expanded in turn (its children numbered by the excerpt), down
    /// to [`DEEP_PLIES`] plies and [`DEEP_EXPANSIONS`] expansions. The
    /// job's own search says where its work went, so the leaves that its
    /// successors get lie where one process's search would be, several
    /// plies down, instead of one job re-searching the same line with
    /// twice the budget. The excerpt is read and the node's line replayed
    /// once; each node below extends its parent's line by its move.
    fn expand_along_excerpt(
        &mut self,
        node: u64,
        spent: u64,
        budget: u64,
    ) -> Result<(), MasterError> {
        // The job's own excerpt only: an older one above says where
        // another job's budget went.
        if self.excerpt_above(node)?.map(|(at, _)| at) != Some(node) {
            return Ok(());
        }
        let Some((table, line)) = self.excerpt_line(node)? else {
            return Ok(());
        };
        let base = self.top.get(node)?.depth;
        let mut queue = std::collections::VecDeque::from([(node, line)]);
        let mut expansions = 0;
        while let Some((at, line)) = queue.pop_front() {
            let n = self.top.get(at)?;
            let Some(&pos) = line.last() else {
                continue;
            };
            for (c, child) in self.top.children(&n)? {
                if child.state != State::Frontier || child.depth.saturating_sub(base) > DEEP_PLIES {
                    continue;
                }
                let Some(m) =
                    crate::rules::move_of_code(&pos, crate::vocab::MoveCode::from_raw(child.mv))
                else {
                    continue;
                };
                let mut below = line.clone();
                below.push(pos.play(m));
                let Some(v) = table.get(&crate::search::tt_key_of_line(&below)) else {
                    continue;
                };
                if v.pn == 0 || v.dn == 0 || (v.work as u64).saturating_mul(self.cfg.deep) < spent {
                    continue;
                }
                if expansions >= DEEP_EXPANSIONS {
                    return Ok(());
                }
                let hints = Self::hints_in(&table, &mut below);
                self.top.expand(c, budget, &hints)?;
                expansions += 1;
                queue.push_back((c, below));
            }
        }
        Ok(())
    }

    /// Whether a job out names `file` as its excerpt.
    fn excerpt_named(out: &HashMap<PathBuf, Out>, file: &std::path::Path) -> bool {
        out.values()
            .any(|o| o.job.file.tt_excerpt.as_deref() == Some(file))
    }

    /// Removes the doomed excerpts no job out names any more.
    fn sweep_doomed_excerpts(&mut self) {
        let out = &self.out;
        self.excerpts.sweep(|f| Self::excerpt_named(out, f));
    }

    /// Removes the excerpts of nodes settled, or below a settled node: no
    /// job is sent there any more.
    fn drop_settled_excerpts(&mut self) -> Result<(), MasterError> {
        let mut gone = Vec::new();
        for node in self.excerpts.nodes() {
            if self.settled_from(node)? {
                gone.push(node);
            }
        }
        let out = &self.out;
        self.excerpts
            .drop_nodes(&gone, |f| Self::excerpt_named(out, f));
        Ok(())
    }

    /// Search threads for the next job sent, of node budget `budget`, with
    /// `left` picks of this selection still to send (this one included):
    /// `budget.threads`; with [`Config::widen`], [`Config::widen_per_budget`]
    /// threads for each first budget in its budget (a job whose budget has
    /// doubled along a line that keeps running out gets twice the
    /// workers), and at least its share of the workers the picks leave
    /// idle (the first picks, the most proving, get the remainder).
    /// `None`: fewer workers are free than its budget asks, so it waits
    /// for them (before anything of the job is made).
    fn threads_for(&self, exec: &dyn Executor, left: usize, budget: u64) -> Option<u32> {
        let base = self.cfg.budget.threads.max(1) as usize;
        if self.cfg.widen <= 1 || left == 0 {
            return Some(base as u32);
        }
        let most = self.cfg.widen.max(base).min(self.cfg.jobs.max(1));
        let free = self.cfg.jobs.saturating_sub(exec.busy());
        let by_budget = (budget / self.cfg.budget.nodes.max(1))
            .saturating_mul(self.cfg.widen_per_budget.max(1))
            .clamp(base as u64, most as u64) as usize;
        if by_budget > free {
            return None;
        }
        let share = free.div_ceil(left);
        Some(share.max(by_budget).clamp(base, most) as u32)
    }

    /// Thresholds for a job at `id`, as df-pn's MID passes them down from
    /// the root (infinite there): where the winner moves, a child gets
    /// the proof number at which its best sibling would look better (the
    /// 1 + 1/4 margin of the search), and the disproof number its parent
    /// may reach less what its siblings hold; dually where the loser
    /// moves. A child already past its sibling (selected because the
    /// better one is out) gets a quarter more than its own numbers, so
    /// every job does some work. `None` where both stay infinite. `busy`:
    /// the jobs out at or below each node, those with any passed over as
    /// siblings (`Siblings::Idle`, which the caller counts them for).
    fn thresholds(
        &self,
        id: u64,
        busy: Option<&HashMap<u64, u32>>,
    ) -> Result<Option<Thresholds>, MasterError> {
        let passed = |sib: u64, n: &super::top::TopNode| match self.cfg.siblings {
            Siblings::All => false,
            Siblings::NotInFlight => n.state == State::InFlight,
            Siblings::Idle => {
                n.state == State::InFlight
                    || busy.is_some_and(|b| b.get(&sib).is_some_and(|&k| k > 0))
            }
        };
        let margin = self.cfg.threshold_margin;
        let eps = |v: u32| -> u32 {
            if v >= INF - 1 {
                INF
            } else {
                // Exact in f64 for any u32 (34 bits of mantissa at most):
                // at 1.25 this is `top::with_margin`, v + v / 4 + 1.
                (f64::from(v) * margin + 1.0).min(f64::from(INF - 1)) as u32
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
            let second = self.top.best_sibling(&parent, w[1], or, passed)?;
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

    /// The job in `path` is no longer out, after `nodes` nodes: the shared
    /// table's generations follow ([`SharedTable::ended`]). A table that
    /// cannot grow (no room on /dev/shm) stays as it is, said once: the
    /// run goes on.
    fn table_ended(&mut self, path: &std::path::Path, nodes: u64) -> Result<(), MasterError> {
        if let Some(t) = &mut self.shared
            && let Err(e) = t.ended(path, nodes)
        {
            errln!(
                "antiproof: warning: the jobs' shared table stays at {}: {e}",
                crate::sysmem::human(t.bytes())
            );
        }
        Ok(())
    }

    /// Takes in the result of the job in `path`, whose worker ended (at
    /// `ended_at` on the executor's virtual clock, if it has one).
    fn take(&mut self, path: PathBuf, ended_at: Option<Duration>) -> Result<(), MasterError> {
        let Some(Out { node, job, sent_at }) = self.out.remove(&path) else {
            return Ok(());
        };
        self.sweep_doomed_excerpts();
        let n = self.top.get(node)?;
        let mut fig = JobFigure {
            id: job.file.id.clone(),
            node,
            depth: n.depth,
            line: job.file.line.join(" "),
            budget_nodes: job.file.budget.nodes,
            threads: job.file.budget.threads,
            outcome: String::new(),
            rejected: None,
            nodes: 0,
            span_nodes: None,
            time_s: 0.0,
            check_s: 0.0,
            records: 0,
            stopped_by: None,
            sent_s: sent_at.map(|t| t.as_secs_f64()),
            ended_s: sent_at.and(ended_at).map(|t| t.as_secs_f64()),
        };
        let reader = self.store.reader()?;
        let taken = take_result(&path, &job, &reader, self.tables.as_ref())?;
        drop(reader);
        // The shared table's fill counts the nodes of the results taken
        // (a rejected one's are not known).
        let nodes = taken.as_ref().map_or(0, |acc| acc.result.nodes);
        self.table_ended(&path, nodes)?;
        let excerpt = super::excerpt::excerpt_path(&path);
        // The excerpt of an unresolved job that says it wrote one, under
        // the one name a job's excerpt has; any other goes.
        match &taken {
            Ok(acc)
                if acc.result.outcome == JobOutcome::Unresolved
                    && acc.result.tt_excerpt.as_deref()
                        == excerpt.file_name().and_then(|n| n.to_str())
                    && self.cfg.excerpts
                    && excerpt.is_file() =>
            {
                let out = &self.out;
                self.excerpts
                    .keep(node, &path, |f| Self::excerpt_named(out, f))
            }
            _ => {
                let _ = std::fs::remove_file(&excerpt);
            }
        }
        match taken {
            Ok(acc) => {
                self.report.jobs_done += 1;
                fig.nodes = acc.result.nodes;
                fig.span_nodes = acc.result.span_nodes;
                fig.time_s = acc.result.time_s;
                fig.check_s = acc.check_s;
                fig.records = acc.records.len() as u64;
                fig.stopped_by = acc.result.stopped_by.clone();
                self.report.records_merged += fig.records;
                match acc.result.outcome {
                    JobOutcome::Proven => {
                        fig.outcome = "proven".into();
                        self.top.add_records(acc.records);
                        self.top.set(node, State::Proven, 0, INF)?;
                    }
                    JobOutcome::Disproven => {
                        fig.outcome = "disproven".into();
                        self.top.set(node, State::Disproven, INF, 0)?;
                    }
                    JobOutcome::Unresolved
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
                    JobOutcome::Unresolved => {
                        fig.outcome = "unresolved".into();
                        // Its budget ran out: the leaf is expanded, its
                        // children (each a job of its own) getting
                        // `growth` times its budget, up to the cap.
                        let budget = n
                            .budget
                            .saturating_mul(self.cfg.growth.max(1))
                            .min(self.cfg.max_nodes)
                            .max(1);
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
                        if self.cfg.deep > 0 {
                            self.expand_along_excerpt(node, n.budget, budget)?;
                        }
                    }
                }
                super::job::remove_with_outputs(&path);
            }
            Err(why) => {
                self.report.jobs_rejected += 1;
                fig.outcome = "rejected".into();
                let limit = if matches!(why, Rejected::NoResult(_)) {
                    3
                } else {
                    2
                };
                errln!(
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
