//! Where jobs run: [`Local`] worker processes on this machine, [`Threads`]
//! in this process, [`Slurm`] batch jobs (`sbatch`, watched with
//! `squeue`), or [`Steps`] of the Slurm allocation the master runs in
//! (`srun`); a simulated cluster, [`super::sim::Sim`], is in its own
//! module. `Local`, `Steps` and `Slurm` run a worker command (by default this
//! executable's `job run`) with the job file as its last argument, its
//! output in `JOB.log`; `Threads` runs the same job in a thread. The
//! master learns that a job ended when its worker is gone, and reads the
//! result file the worker left (or finds none: the job is re-queued).
//! Each executor says what its jobs can share ([`Executor::shares_table`],
//! [`Executor::in_process`]) and what a job's start costs
//! ([`Executor::min_job_nodes`]): adding one is a type here and its flag.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// An executor failure.
#[derive(Debug)]
pub enum ExecError {
    /// The worker program or a Slurm command cannot be started.
    Spawn(String, std::io::Error),
    /// A Slurm command failed.
    Slurm(String),
    /// A file of the job (its log) cannot be created: the name is taken
    /// by a link or a file this program did not make
    /// ([`crate::fsutil::create_fresh`]), or the directory refuses it.
    Create(PathBuf, std::io::Error),
    /// The engine did not take this job now but may later (Slurm's
    /// submit limit, a busy controller): the job was not started, and the
    /// executor holds submissions for a while ([`Executor::holding`]).
    Refused(String),
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExecError::Spawn(what, e) if e.kind() == std::io::ErrorKind::NotFound => {
                write!(
                    f,
                    "cannot run {what}: not found (is it installed and on PATH?)"
                )
            }
            ExecError::Spawn(what, e) => write!(f, "cannot run {what}: {e}"),
            ExecError::Create(path, e) => write!(f, "cannot create {}: {e}", path.display()),
            ExecError::Slurm(m) | ExecError::Refused(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for ExecError {}

/// A job whose worker is gone.
#[derive(Debug)]
pub struct Ended {
    /// The job file.
    pub job: PathBuf,
    /// Its worker's exit status, when known.
    pub status: Option<i32>,
}

/// Runs jobs.
pub trait Executor {
    /// Starts the job in `job` (a file), a search of `threads` threads
    /// (its `budget.threads`): it takes that many workers (a Slurm job
    /// that many CPUs).
    fn submit(&mut self, job: &Path, threads: u32) -> Result<(), ExecError>;
    /// Jobs whose workers have ended since the last call.
    fn poll(&mut self) -> Result<Vec<Ended>, ExecError>;
    /// Jobs running or queued.
    fn running(&self) -> usize;
    /// Workers taken: the search threads of the jobs running or queued
    /// (a job of T threads takes T; `--jobs` is how many there are).
    fn busy(&self) -> usize;
    /// Stops one job (its leaf was settled meanwhile); it will not be
    /// reported as ended.
    fn cancel(&mut self, job: &Path);
    /// Stops every job (the master is stopping).
    fn stop_all(&mut self);
    /// Whether submissions are held for now (after a refusal): the master
    /// sends nothing, and waits, even with no job running.
    fn holding(&self) -> bool {
        false
    }
    /// Virtual time since the run started, for an executor that simulates
    /// time ([`super::sim::Sim`]): the master's deadline and its jobs'
    /// time budgets are measured on it. `None`: the wall clock.
    fn clock(&self) -> Option<Duration> {
        None
    }
    /// A simulated cluster's figures (`--json`'s `sim`); `None` for a real
    /// executor.
    fn simulated(&self) -> Option<super::sim::SimFigures> {
        None
    }
    /// Whether the jobs can share one table file with each other (they
    /// all run on the master's machine): the master then makes one and
    /// names it in every job file (`--no-shared-table` aside).
    fn shares_table(&self) -> bool {
        false
    }
    /// Whether the jobs run as threads of the master's process (the
    /// shared table then lives in its memory, mapped once).
    fn in_process(&self) -> bool {
        false
    }
    /// The fewest nodes a job is worth when the first jobs get
    /// `job_nodes`: what a job's start costs, in nodes of search. A
    /// process that maps its table costs about a search of tens of
    /// thousands of nodes.
    fn min_job_nodes(&self, job_nodes: u64) -> u64 {
        job_nodes / 10
    }
}

/// The worker command: a program and its first arguments.
#[derive(Clone, Debug)]
pub struct WorkerCommand {
    /// The program.
    pub program: PathBuf,
    /// Arguments before the job file.
    pub args: Vec<String>,
}

impl WorkerCommand {
    /// This executable's `job run`.
    pub fn this_exe() -> std::io::Result<WorkerCommand> {
        Ok(WorkerCommand {
            program: std::env::current_exe()?,
            args: vec!["job".into(), "run".into()],
        })
    }

    /// A command line given as words (the first is the program).
    pub fn from_words(words: &str) -> Option<WorkerCommand> {
        let mut w = words.split_whitespace();
        Some(WorkerCommand {
            program: PathBuf::from(w.next()?),
            args: w.map(str::to_string).collect(),
        })
    }
}

/// Worker processes on this machine.
pub struct Local {
    worker: WorkerCommand,
    /// Each worker's job, process and search threads.
    children: Vec<(PathBuf, Child, u32)>,
    /// Workers let go with SIGTERM ([`Local::let_go`]), and when: reaped
    /// by [`Executor::poll`], never reported, SIGKILLed past
    /// [`LET_GO_PATIENCE`].
    stopping: Vec<(PathBuf, Child, Instant)>,
}

/// How long a worker let go with SIGTERM has to end before SIGKILL.
const LET_GO_PATIENCE: Duration = Duration::from_secs(5);

impl Local {
    /// Runs jobs with `worker`.
    pub fn new(worker: WorkerCommand) -> Local {
        Local {
            worker,
            children: Vec::new(),
            stopping: Vec::new(),
        }
    }
}

pub use super::job::log_path;

impl Local {
    /// Lets the worker of `job` go without waiting for it: SIGTERM now,
    /// SIGKILL if it has not ended within [`LET_GO_PATIENCE`]; it is not
    /// reported as ended, and what it writes on its way out (its result,
    /// its tree, its log) is removed once it has ended.
    fn let_go(&mut self, job: &Path) {
        let Some(i) = self.children.iter().position(|(j, _, _)| j == job) else {
            return;
        };
        let (job, c, _) = self.children.swap_remove(i);
        sigterm(&c);
        self.stopping.push((job, c, Instant::now()));
    }

    /// Reaps the workers let go that have ended (SIGKILL to those past
    /// their patience), removing what they wrote on their way out.
    fn reap_let_go(&mut self) {
        self.stopping.retain_mut(|(job, c, since)| {
            if matches!(c.try_wait(), Ok(None)) {
                if since.elapsed() < LET_GO_PATIENCE {
                    return true;
                }
                let _ = c.kill();
                let _ = c.wait();
            }
            super::job::remove_outputs(job);
            false
        });
    }
}

/// Sends SIGTERM to a child process not yet waited for.
fn sigterm(c: &Child) {
    // SAFETY: kill(2) on our own child's pid, which we have not yet
    // waited for (so it names that process).
    unsafe {
        libc::kill(c.id() as libc::pid_t, libc::SIGTERM);
    }
}

impl Local {
    /// Starts `worker` on `job`, a search of `threads` threads.
    fn spawn(&mut self, job: &Path, threads: u32, worker: &WorkerCommand) -> Result<(), ExecError> {
        // Never through a link or into a file the master did not make:
        // the names in a work directory are guessable, and a link there
        // (to the store) would have the worker's output written over its
        // target.
        let log_file = log_path(job);
        let log = crate::fsutil::create_fresh(&log_file)
            .map_err(|e| ExecError::Create(log_file.clone(), e))?;
        let err = log
            .try_clone()
            .map_err(|e| ExecError::Spawn("a log file".into(), e))?;
        let mut cmd = Command::new(&worker.program);
        cmd.args(&worker.args)
            .arg(job)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err);
        use std::os::unix::process::CommandExt;
        // SAFETY: the closure runs in the forked child before exec and
        // only calls prctl, which is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                // A killed master takes its workers with it (SIGTERM: they
                // stop and write an unresolved result no one reads).
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .map_err(|e| ExecError::Spawn(worker.program.display().to_string(), e))?;
        self.children.push((job.to_path_buf(), child, threads));
        Ok(())
    }
}

impl Executor for Local {
    fn shares_table(&self) -> bool {
        true
    }

    fn submit(&mut self, job: &Path, threads: u32) -> Result<(), ExecError> {
        let worker = self.worker.clone();
        self.spawn(job, threads, &worker)
    }

    fn poll(&mut self) -> Result<Vec<Ended>, ExecError> {
        self.reap_let_go();
        let mut ended = Vec::new();
        let mut i = 0;
        while i < self.children.len() {
            match self.children[i].1.try_wait() {
                Ok(Some(status)) => {
                    let (job, _, _) = self.children.swap_remove(i);
                    ended.push(Ended {
                        job,
                        status: status.code(),
                    });
                }
                Ok(None) => i += 1,
                Err(_) => {
                    let (job, _, _) = self.children.swap_remove(i);
                    ended.push(Ended { job, status: None });
                }
            }
        }
        Ok(ended)
    }

    fn running(&self) -> usize {
        self.children.len()
    }

    fn busy(&self) -> usize {
        self.children.iter().map(|c| c.2 as usize).sum()
    }

    fn cancel(&mut self, job: &Path) {
        if let Some(i) = self.children.iter().position(|(j, _, _)| j == job) {
            let (_, mut c, _) = self.children.swap_remove(i);
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn stop_all(&mut self) {
        for (_, c, _) in &self.children {
            sigterm(c);
        }
        let t0 = Instant::now();
        while t0.elapsed() < LET_GO_PATIENCE
            && (self
                .children
                .iter_mut()
                .any(|(_, c, _)| matches!(c.try_wait(), Ok(None)))
                || !self.stopping.is_empty())
        {
            self.reap_let_go();
            std::thread::sleep(Duration::from_millis(20));
        }
        for (_, c, _) in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.children.clear();
        for (job, mut c, _) in std::mem::take(&mut self.stopping) {
            let _ = c.kill();
            let _ = c.wait();
            super::job::remove_outputs(&job);
        }
    }
}

/// Jobs run in this process: each a thread running [`super::run::run_job`]
/// on its job file, which writes its result file as a worker process
/// would (the master reads and checks it the same way). No process start
/// per job, and the jobs map one shared table once: the executor for
/// many small jobs on one machine.
pub struct Threads {
    /// Each job's file, stop flag and search threads.
    running: Vec<(PathBuf, Arc<AtomicBool>, u32)>,
    cancelled: Vec<PathBuf>,
    done_tx: mpsc::Sender<(PathBuf, Option<i32>)>,
    done_rx: mpsc::Receiver<(PathBuf, Option<i32>)>,
}

impl Threads {
    /// An executor with no job running.
    pub fn new() -> Threads {
        let (done_tx, done_rx) = mpsc::channel();
        Threads {
            running: Vec::new(),
            cancelled: Vec::new(),
            done_tx,
            done_rx,
        }
    }
}

impl Default for Threads {
    fn default() -> Threads {
        Threads::new()
    }
}

impl Executor for Threads {
    fn shares_table(&self) -> bool {
        true
    }

    fn in_process(&self) -> bool {
        true
    }

    /// A thread's start costs little: a hundredth of the first budget.
    fn min_job_nodes(&self, job_nodes: u64) -> u64 {
        job_nodes / 100
    }

    fn submit(&mut self, job: &Path, threads: u32) -> Result<(), ExecError> {
        let stop = Arc::new(AtomicBool::new(false));
        let (path, flag, tx) = (job.to_path_buf(), stop.clone(), self.done_tx.clone());
        std::thread::Builder::new()
            .name("job".into())
            .spawn(move || {
                let status = match super::run::run_job(&path, Some(flag)) {
                    Ok(_) => Some(0),
                    Err(e) => {
                        if let Ok(mut log) = crate::fsutil::create_fresh(&log_path(&path)) {
                            use std::io::Write;
                            let _ = writeln!(log, "antiproof: {e}");
                        }
                        Some(2)
                    }
                };
                let _ = tx.send((path, status));
            })
            .map_err(|e| ExecError::Spawn("a job thread".into(), e))?;
        self.running.push((job.to_path_buf(), stop, threads));
        Ok(())
    }

    fn poll(&mut self) -> Result<Vec<Ended>, ExecError> {
        let mut ended = Vec::new();
        while let Ok((job, status)) = self.done_rx.try_recv() {
            if let Some(i) = self.cancelled.iter().position(|c| *c == job) {
                // What a cancelled job wrote after it was let go.
                self.cancelled.swap_remove(i);
                super::job::remove_outputs(&job);
                continue;
            }
            self.running.retain(|(j, _, _)| *j != job);
            ended.push(Ended { job, status });
        }
        Ok(ended)
    }

    fn running(&self) -> usize {
        self.running.len()
    }

    fn busy(&self) -> usize {
        self.running.iter().map(|r| r.2 as usize).sum()
    }

    fn cancel(&mut self, job: &Path) {
        if let Some(i) = self.running.iter().position(|(j, _, _)| j == job) {
            let (j, stop, _) = self.running.swap_remove(i);
            stop.store(true, Ordering::Relaxed);
            self.cancelled.push(j);
        }
    }

    fn stop_all(&mut self) {
        for (_, stop, _) in &self.running {
            stop.store(true, Ordering::Relaxed);
        }
        // Each thread stops at its search's next check and writes an
        // unresolved result (which no one reads).
        let t0 = Instant::now();
        while !self.running.is_empty() && t0.elapsed() < Duration::from_secs(30) {
            match self.done_rx.recv_timeout(Duration::from_millis(100)) {
                Ok((job, _)) => self.running.retain(|(j, _, _)| *j != job),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        self.running.clear();
    }
}

/// Jobs as Slurm job steps of the allocation the master runs in: each
/// job is `srun --exclusive --nodes=1 --ntasks=1 --cpus-per-task=T
/// --mem=M ... WORKER JOB`, a child process of the master as a local
/// worker is, its output in `JOB.log`. A step starts in well under a
/// second, where a batch job waits for the scheduler's next pass and a
/// node's prolog: the latency a job pays (docs/prove.md, "Slurm job
/// steps"). The master runs inside `sbatch -n P` (or `salloc`), and
/// `srun` places each step on a free CPU of the allocation, on any of its
/// nodes; so the jobs share no table (they may be on other machines) and
/// pass table excerpts down through the work directory, as batch jobs
/// do. When every CPU is taken `srun` waits for one (the master keeps at
/// most `--jobs` steps out). A job is stopped (its leaf settled, the
/// master stopping) by SIGTERM to its `srun`, which has Slurm cancel the
/// step; the master reads nothing of a stopped job.
pub struct Steps {
    /// The step's worker processes; its worker command is the one each
    /// step's `srun` runs.
    local: Local,
    args: String,
    mem_mb: u64,
}

impl Steps {
    /// Steps of `worker`, each with a CPU for each of its job's search
    /// threads and `mem_mb` megabytes (unless `args`, the user's extra
    /// `srun` arguments, name a memory option: then theirs). An error,
    /// with a clear message, when the master is not in an allocation
    /// (`SLURM_JOB_ID` unset) or `srun` cannot be run.
    pub fn new(worker: WorkerCommand, args: &str, mem_mb: u64) -> Result<Steps, ExecError> {
        if std::env::var_os("SLURM_JOB_ID").is_none() {
            return Err(ExecError::Slurm(
                "--executor srun runs each job as a step of the Slurm allocation the master runs in: \
                 start the master with sbatch or salloc (SLURM_JOB_ID is not set), \
                 or use --executor slurm to submit each job with sbatch"
                    .into(),
            ));
        }
        slurm_tool_runs("srun")?;
        Ok(Steps {
            local: Local::new(worker),
            args: args.to_string(),
            mem_mb,
        })
    }
}

/// Whether Slurm's `tool` runs here (`tool --version`): an error naming
/// it when it is not found or fails.
fn slurm_tool_runs(tool: &str) -> Result<(), ExecError> {
    let out = Command::new(tool)
        .arg("--version")
        .output()
        .map_err(|e| ExecError::Spawn(format!("`{tool}` (Slurm)"), e))?;
    if !out.status.success() {
        return Err(ExecError::Slurm(format!(
            "`{tool} --version` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// The command a step runs: `srun` with the step's shape, the user's
/// arguments, then the worker.
fn steps_command(worker: WorkerCommand, args: &str, cpus: usize, mem_mb: u64) -> WorkerCommand {
    let user: Vec<String> = args.split_whitespace().map(str::to_string).collect();
    let mut words = vec![
        // One task on one node, on CPUs no other step has (for a step,
        // --exclusive also means only the CPUs asked for).
        "--exclusive".to_string(),
        "--nodes=1".to_string(),
        "--ntasks=1".to_string(),
        format!("--cpus-per-task={cpus}"),
    ];
    // Without a memory of its own a step takes all of the allocation's
    // on its node, and the next step there waits for it to end.
    if !user.iter().any(|a| a.starts_with("--mem")) {
        words.push(format!("--mem={mem_mb}M"));
    }
    words.extend(user);
    words.push(worker.program.to_string_lossy().into_owned());
    words.extend(worker.args);
    WorkerCommand {
        program: PathBuf::from("srun"),
        args: words,
    }
}

impl Executor for Steps {
    fn submit(&mut self, job: &Path, threads: u32) -> Result<(), ExecError> {
        let step = steps_command(
            self.local.worker.clone(),
            &self.args,
            threads.max(1) as usize,
            self.mem_mb,
        );
        self.local.spawn(job, threads, &step)
    }

    fn poll(&mut self) -> Result<Vec<Ended>, ExecError> {
        self.local.poll()
    }

    fn running(&self) -> usize {
        self.local.running()
    }

    fn busy(&self) -> usize {
        self.local.busy()
    }

    /// SIGTERM to `srun`, which has Slurm cancel the step (SIGTERM to
    /// the worker, SIGKILL after the cluster's `KillWait`), without
    /// waiting: `srun` is reaped at a later poll, SIGKILLed if it has not
    /// ended within five seconds, and what the step wrote on its way out
    /// is removed then.
    fn cancel(&mut self, job: &Path) {
        self.local.let_go(job);
    }

    fn stop_all(&mut self) {
        self.local.stop_all();
    }

    /// A step's start (srun, the node's step daemon, the worker's start
    /// and its table) costs about what a local worker's does.
    fn min_job_nodes(&self, job_nodes: u64) -> u64 {
        job_nodes / 10
    }
}

/// Jobs as Slurm batch jobs: `sbatch --parsable --wrap "WORKER JOB"` with
/// the user's arguments, watched with `squeue` about once a second. A job
/// that leaves the queue has ended once its result file is there, or when
/// [`SlurmTiming::grace`] has passed without one (it was killed or failed,
/// and is re-queued): on a shared file system the master may see a file a
/// compute node wrote only some seconds later.
///
/// A cluster has bad moments: a controller too busy to answer, a limit on
/// jobs queued per user. The first `sbatch` and `squeue` of a run must
/// work (a wrong `--slurm-args` or a Slurm without `squeue --me` is an
/// error at once); after that a refused `sbatch` holds submissions for a
/// while and hands the job back ([`ExecError::Refused`]), and a failed
/// `squeue` is tried again at the next poll, each said once on stderr. Only
/// when they keep failing for [`SlurmTiming::patience`] (`sbatch` with no job
/// of ours left running) is it an error that stops the master.
pub struct Slurm {
    worker: WorkerCommand,
    args: Vec<String>,
    timing: SlurmTiming,
    /// Slurm job id -> job file, its CPUs (search threads) and, once it
    /// has left the queue, when it was first missed there.
    jobs: HashMap<String, (PathBuf, u32, Option<Instant>)>,
    last_poll: Option<Instant>,
    /// An `sbatch` and an `squeue` have worked in this run.
    sbatch_worked: bool,
    squeue_worked: bool,
    /// Since when `sbatch` (resp. `squeue`) has failed without a success
    /// between.
    sbatch_failing: Option<Instant>,
    squeue_failing: Option<Instant>,
    /// Submissions are held until then, and the pause before the next
    /// try after another refusal.
    hold_until: Option<Instant>,
    backoff: Duration,
}

/// How long the Slurm executor waits on a cluster's bad moments
/// (`--slurm-grace`, `--slurm-patience`: defaults there).
#[derive(Clone, Copy, Debug)]
pub struct SlurmTiming {
    /// How long after a job left the queue its result may take to show
    /// (shared file systems cache directory listings).
    pub grace: Duration,
    /// How long `sbatch` or `squeue` may keep failing before the master
    /// stops.
    pub patience: Duration,
}

/// The first pause of submissions after a refused `sbatch`; it doubles on
/// each refusal in a row, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(2);
/// The longest pause of submissions.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

impl Slurm {
    /// Submits with `worker` and the extra `sbatch` arguments `args`
    /// (partition, account, time, memory: `--slurm-args`). Fails at once,
    /// with a clear message, when `sbatch` or `squeue` cannot be run.
    pub fn new(worker: WorkerCommand, args: &str, timing: SlurmTiming) -> Result<Slurm, ExecError> {
        for tool in ["sbatch", "squeue"] {
            slurm_tool_runs(tool)?;
        }
        Ok(Slurm {
            worker,
            args: args.split_whitespace().map(str::to_string).collect(),
            timing,
            jobs: HashMap::new(),
            last_poll: None,
            sbatch_worked: false,
            squeue_worked: false,
            sbatch_failing: None,
            squeue_failing: None,
            hold_until: None,
            backoff: FIRST_BACKOFF,
        })
    }

    /// Jobs of ours still in the queue (not those that left it and wait
    /// for their result to show).
    fn queued(&self) -> usize {
        self.jobs
            .values()
            .filter(|(_, _, gone)| gone.is_none())
            .count()
    }

    /// `sbatch` failed with `msg` for `job`: an error at once when no
    /// `sbatch` has worked in this run, or when it has failed for longer
    /// than the patience with nothing of ours queued; else the job is
    /// handed back and submissions are held.
    fn sbatch_failed(&mut self, job: &Path, msg: String) -> ExecError {
        // The log made for it: the job was not taken.
        let _ = std::fs::remove_file(log_path(job));
        let now = Instant::now();
        let since = *self.sbatch_failing.get_or_insert(now);
        let msg = format!("sbatch failed for {}: {msg}", job.display());
        if !self.sbatch_worked {
            return ExecError::Slurm(msg);
        }
        if now.duration_since(since) >= self.timing.patience && self.queued() == 0 {
            return ExecError::Slurm(format!(
                "{msg} (failing for {} s, no job left running)",
                now.duration_since(since).as_secs()
            ));
        }
        if self.backoff == FIRST_BACKOFF {
            errln!(
                "antiproof: {msg}; holding submissions ({} jobs still queued), trying again",
                self.queued()
            );
        }
        self.hold_until = Some(now + self.backoff);
        self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
        ExecError::Refused(msg)
    }

    /// `squeue` failed with `msg`: an error when it never worked in this
    /// run or has failed for longer than the patience; else `None` (the
    /// next poll tries again).
    fn squeue_failed(&mut self, msg: String) -> Option<ExecError> {
        let now = Instant::now();
        let first = self.squeue_failing.is_none();
        let since = *self.squeue_failing.get_or_insert(now);
        if !self.squeue_worked || now.duration_since(since) >= self.timing.patience {
            return Some(ExecError::Slurm(msg));
        }
        if first {
            errln!("antiproof: {msg}; trying again");
        }
        None
    }
}

/// `s` quoted for a POSIX shell.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

impl Executor for Slurm {
    fn submit(&mut self, job: &Path, threads: u32) -> Result<(), ExecError> {
        let mut words = vec![shell_quote(&self.worker.program.to_string_lossy())];
        words.extend(self.worker.args.iter().map(|a| shell_quote(a)));
        words.push(shell_quote(&job.to_string_lossy()));
        let name = job
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // Made here, new, for Slurm to write into: Slurm opens `--output`
        // following links, and a link planted under the guessable name
        // would have the job's output written over its target.
        let log_file = log_path(job);
        crate::fsutil::create_fresh(&log_file).map_err(|e| ExecError::Create(log_file, e))?;
        let out = Command::new("sbatch")
            .arg("--parsable")
            .arg(format!("--job-name=antiproof-{name}"))
            .arg(format!("--output={}", log_path(job).display()))
            // SIGTERM 30 s before the time limit: the worker stops and
            // writes an unresolved result. `B:` sends it to the batch
            // shell, which is the worker (`exec`); without it Slurm signals
            // only job steps (srun), and the worker heard nothing until the
            // limit itself (seen on Slurm 22.05: SIGTERM at 84 s for a
            // 1-minute job, against 24 s with `B:`).
            .arg("--signal=B:TERM@30")
            // A CPU for each search thread (before the user's arguments,
            // which may name more).
            .args((threads > 1).then(|| format!("--cpus-per-task={threads}")))
            .args(&self.args)
            .arg(format!("--wrap=exec {}", words.join(" ")))
            .output()
            .map_err(|e| {
                let _ = std::fs::remove_file(log_path(job));
                ExecError::Spawn("`sbatch` (Slurm)".into(), e)
            })?;
        if !out.status.success() {
            let msg = String::from_utf8_lossy(&out.stderr).trim().to_string();
            return Err(self.sbatch_failed(job, msg));
        }
        let id = String::from_utf8_lossy(&out.stdout)
            .trim()
            .split(';')
            .next()
            .unwrap_or("")
            .to_string();
        if id.is_empty() {
            return Err(self.sbatch_failed(job, "it printed no job id".into()));
        }
        self.sbatch_worked = true;
        self.sbatch_failing = None;
        self.hold_until = None;
        self.backoff = FIRST_BACKOFF;
        self.jobs.insert(id, (job.to_path_buf(), threads, None));
        Ok(())
    }

    fn poll(&mut self) -> Result<Vec<Ended>, ExecError> {
        if self.jobs.is_empty()
            || self
                .last_poll
                .is_some_and(|t| t.elapsed() < Duration::from_millis(500))
        {
            return Ok(Vec::new());
        }
        self.last_poll = Some(Instant::now());
        let out = Command::new("squeue")
            .args(["-h", "-o", "%i", "--me"])
            .output()
            .map_err(|e| ExecError::Spawn("`squeue` (Slurm)".into(), e))?;
        if !out.status.success() {
            let msg = format!(
                "squeue failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            return match self.squeue_failed(msg) {
                Some(e) => Err(e),
                None => Ok(Vec::new()),
            };
        }
        self.squeue_worked = true;
        self.squeue_failing = None;
        let listed: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.trim().to_string())
            .collect();
        let now = Instant::now();
        let mut ended = Vec::new();
        let ids: Vec<String> = self.jobs.keys().cloned().collect();
        for id in ids {
            let (job, _, gone) = self.jobs.get_mut(&id).expect("listed above");
            if listed.contains(&id) {
                continue;
            }
            let since = *gone.get_or_insert(now);
            if super::job::result_path(job).exists()
                || now.duration_since(since) >= self.timing.grace
            {
                let (job, _, _) = self.jobs.remove(&id).expect("listed above");
                ended.push(Ended { job, status: None });
            }
        }
        if !ended.is_empty() {
            // A slot came free: a held submission may go now.
            self.hold_until = None;
        }
        Ok(ended)
    }

    fn running(&self) -> usize {
        self.jobs.len()
    }

    fn busy(&self) -> usize {
        self.jobs.values().map(|j| j.1 as usize).sum()
    }

    fn cancel(&mut self, job: &Path) {
        let ids: Vec<String> = self
            .jobs
            .iter()
            .filter(|(_, (j, _, _))| j.as_path() == job)
            .map(|(id, _)| id.clone())
            .collect();
        for id in ids {
            let _ = Command::new("scancel").arg(&id).output();
            self.jobs.remove(&id);
        }
    }

    fn stop_all(&mut self) {
        if !self.jobs.is_empty() {
            let ids: Vec<String> = self.jobs.keys().cloned().collect();
            let _ = Command::new("scancel").args(&ids).output();
        }
        self.jobs.clear();
    }

    fn holding(&self) -> bool {
        self.hold_until.is_some_and(|t| Instant::now() < t)
    }
}
