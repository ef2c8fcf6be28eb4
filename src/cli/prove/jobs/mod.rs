//! `antiproof prove --executor local|threads|slurm|srun|sim [--jobs N]`: the job-level search of
//! `crate::jobs::master`, on local worker processes or Slurm. See
//! docs/prove.md ("Many jobs").

use super::super::values::Limit;
use super::super::{EXIT_LIMIT, EXIT_NO, EXIT_OK};
use super::ProveArgs;
use crate::jobs::executor::{Executor, Local, Slurm, SlurmTiming, Steps, WorkerCommand};
use crate::jobs::job::Budget;
use crate::jobs::master::{MasterConfig, MasterResult, Siblings, Status, WorkDirLock, run_master};
use crate::jobs::sim::{Measured, Sim, SimConfig};
use crate::store::Store;
use anyhow::{Context, anyhow, bail};
use clap::{Args, ValueEnum};
use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::time::Instant;

mod report;
mod sim;
mod state;

use report::Ended;
use sim::sim_config;
use state::restore_state;

/// Where jobs run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ExecutorKind {
    /// No jobs: one df-pn search of this process whose N threads share
    /// one transposition table (the fastest on one machine).
    Search,
    /// Worker processes on this machine.
    Local,
    /// Jobs as threads of this process (no process start per job, one
    /// mapping of the shared table): the job-level search's fastest on
    /// one machine.
    Threads,
    /// Slurm batch jobs (sbatch; the work directory must be shared).
    Slurm,
    /// Slurm job steps (srun) of the allocation the master runs in
    /// (`sbatch -n P` or `salloc`): a step starts in well under a second,
    /// a batch job when the scheduler gets to it (the work directory must
    /// be shared).
    Srun,
    /// A simulated cluster of --jobs P workers: every job run here, each
    /// with a table of its own, its end in virtual time (--sim-rate,
    /// --sim-latency); deterministic for a given rate.
    Sim,
}

/// The options of a job-level search.
#[derive(Args, Debug)]
pub(crate) struct ManyArgs {
    /// Workers at once. With --executor search (the default), N threads
    /// of one search share one transposition table (default 1: one
    /// search on one thread); with local, threads, slurm, srun or sim, a
    /// master keeps the top of the proof tree in the store and sends its
    /// most-proving leaves out as jobs on N workers (CPUs) at a time, a
    /// job of T search threads taking T of them (default: this machine's
    /// cores for local and threads, the allocation's tasks for srun;
    /// slurm and sim need it given).
    /// docs/prove.md, "Many jobs".
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096), value_name = "N")]
    jobs: Option<u32>,
    /// Where the work runs: search (threads of one search), local (job
    /// processes), threads (jobs as threads of this process), slurm
    /// (batch jobs), srun (job steps of the master's Slurm allocation),
    /// sim (a simulated cluster).
    #[arg(long, value_enum, default_value = "search")]
    pub(super) executor: ExecutorKind,
    /// Where job files and results go (shared by master and workers;
    /// default: the store's path with `.jobs`).
    #[arg(long, value_name = "DIR")]
    work_dir: Option<PathBuf>,
    /// Node budget of the first jobs (`500k`, `2M`); each expansion
    /// doubles it for the children, up to --job-max-nodes.
    #[arg(long, default_value = "1M", value_parser = count, value_name = "NODES")]
    job_nodes: u64,
    /// No job gets a larger node budget than this (default 256 times
    /// --job-nodes): a job that runs out of it is expanded, and its
    /// children get the same, so a long forced line grows the top tree
    /// rather than one job's budget.
    #[arg(long, value_parser = count, value_name = "NODES")]
    job_max_nodes: Option<u64>,
    /// Search threads of each job, on the machine's shared table or its
    /// own: each takes one of the --jobs workers (with --executor slurm or
    /// srun a job asks for a CPU a thread: `--cpus-per-task`).
    #[arg(long, default_value_t = 1, value_parser = crate::cli::values::threads(), value_name = "T")]
    job_threads: usize,
    /// Seconds one job may run at most.
    #[arg(long, default_value_t = 3600.0, value_name = "SECONDS")]
    job_time: f64,
    /// Selection stays with a top-tree child while it is within df-pn's
    /// margin of its best sibling (experimental).
    #[arg(long, hide = true)]
    job_focus: bool,
    /// Where the winner moves, jobs go to a move only while its proof
    /// number is at most F times the best move's (F >= 1; 0: to any).
    #[arg(long, default_value_t = 0.0, value_name = "F")]
    job_speculation: f64,
    /// A leaf where the loser moves is expanded at once, a job for each
    /// reply, instead of going out as one job (the first versions' way;
    /// measured slower, kept to compare).
    #[arg(long, hide = true)]
    job_expand_loser_nodes: bool,
    /// A job's thresholds are set against every sibling not settled,
    /// those being searched by jobs of their own included (the first
    /// versions' way, still the one with a shared table; measured slower
    /// without one, kept to compare).
    #[arg(long, hide = true)]
    job_thresholds_all_siblings: bool,
    /// A job's thresholds are set against the siblings whose own job is
    /// not out, those with jobs out below them included (the default
    /// without a shared table until 2026-12-06; kept to compare).
    #[arg(long, hide = true, conflicts_with = "job_thresholds_all_siblings")]
    job_thresholds_free_leaves: bool,
    /// A job's threshold where a sibling is ahead: the sibling's number
    /// times this, plus one (df-pn's 1.25 by default).
    #[arg(long, default_value_t = 1.25, hide = true, value_name = "F")]
    job_threshold_margin: f64,
    /// Where a job runs out of budget, its leaf's children whose entry
    /// in the job's excerpt shows at least 1/F of its budget in work are
    /// expanded too, and so on down (0: one ply, the default).
    #[arg(long, default_value_t = 0, hide = true, value_name = "F")]
    job_deep_expand: u64,
    /// Leaves are picked one at a time, a child's number weighed by 1 + F
    /// x the jobs out below it, so the workers spread over near siblings
    /// (0: the best child's subtree is filled first, the default).
    #[arg(long, default_value_t = 0.0, value_name = "F")]
    job_spread: f64,
    /// Workers a selection leaves idle go to the jobs it sends as more
    /// search threads, up to T a job, and a job asks for threads by its
    /// budget (--job-widen-per-budget), waiting for them (0: every job has
    /// --job-threads). On the simulated cluster the threads run in
    /// lockstep.
    #[arg(long, default_value_t = 0, value_name = "T")]
    job_widen: usize,
    /// With --job-widen: threads a job asks for each first budget
    /// (--job-nodes) in its own budget.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..), value_name = "K")]
    job_widen_per_budget: u64,
    /// --job-nodes is each search thread's: a job of T threads may search
    /// T times its budget, so a job of many threads lasts about as long as
    /// one of one thread (with --job-widen or --job-threads).
    #[arg(long)]
    job_budget_per_thread: bool,
    /// Factor of a child's budget over its parent's.
    #[arg(long, default_value_t = 2, hide = true)]
    job_growth: u64,
    /// Extra arguments for every `sbatch` (partition, account, time,
    /// memory), as one string: `--slurm-args "-p short --mem=8G"`; with
    /// --executor srun, for every `srun` (a step's memory is --memory and
    /// a margin unless these name one).
    #[arg(
        long,
        default_value = "",
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    slurm_args: String,
    /// Seconds a Slurm job's result may take to show in the work
    /// directory after the job left the queue (a shared file system's
    /// caches) before the job counts as lost and is run again.
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(0..=86_400), value_name = "SECONDS")]
    slurm_grace: u64,
    /// Seconds `sbatch` or `squeue` may keep failing (a busy controller,
    /// a submit limit) before the master stops; the first of each must
    /// work.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=604_800), value_name = "SECONDS")]
    slurm_patience: u64,
    /// With the local executor, the jobs do not share one transposition
    /// table (by default they map one file of `--memory` bytes on
    /// /dev/shm, so a job finds what earlier and concurrent jobs learnt).
    #[arg(long)]
    no_shared_table: bool,
    /// Jobs with tables of their own (slurm, sim, --no-shared-table) do
    /// not pass table excerpts down: by default an unresolved job leaves
    /// the entries of most work of its table (`JOB.json.tt`, about 10
    /// bytes a node of its budget, at most 40 MB) and the jobs below its
    /// leaf start from them. docs/prove.md, "Table excerpts".
    #[arg(long)]
    no_table_excerpts: bool,
    /// Save the run state to this zstd file every --state-every and when
    /// the run stops, and restore it first on a fresh machine. A job-level
    /// search's holds its top tree with its numbers, what it proved and
    /// disproved, and the proofs of its proven nodes up to
    /// --state-records (restored when the store holds no top tree of this
    /// line); a plain search's holds its table's entries of most work
    /// (--state-tt) and the records it wrote (restored when no saved
    /// table is beside the store). Small (about 5 MB at most): keep it in
    /// the repository, beside `proofs/`, which `--known proofs/` loads
    /// back. docs/prove.md, "Runs that outlive their machine".
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// Time between two saves of --state (`10m`, `1h`).
    #[arg(long, default_value = "5m", value_parser = crate::cli::values::limit, value_name = "TIME")]
    state_every: Limit,
    /// Records --state may hold: a job-level search's proven nodes'
    /// proofs (each whole or not at all, smallest first), a plain
    /// search's records in the order it wrote them. What does not fit is
    /// proven again after a restore unless --known holds it.
    #[arg(long, default_value_t = crate::jobs::state::DEFAULT_RECORDS as u64,
          value_parser = clap::value_parser!(u64).range(0..=MAX_STATE_ITEMS), value_name = "N")]
    state_records: u64,
    /// Entries of the transposition table --state may hold (the jobs'
    /// shared table, or a plain search's own; those of most work: what
    /// the search learnt of the lines not closed yet; 0: none). A resumed
    /// run puts them back into its table. Default 100,000 for a job-level
    /// search; for a plain one, 400,000 less the records the state holds,
    /// at least 100,000 (so the file stays near 5 MB; docs/prove.md, "A
    /// plain search's state").
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=MAX_STATE_ITEMS), value_name = "N")]
    state_tt: Option<u64>,
    /// The worker command instead of this program's `job run` (another
    /// engine; the job file is its last argument).
    #[arg(long, hide = true, value_name = "COMMAND")]
    worker: Option<String>,
    /// With --executor sim: nodes a second of one simulated worker
    /// (default: this machine's single-process rate, measured at the
    /// start; a run is deterministic for a given rate).
    #[arg(long, value_parser = sim_number, value_name = "NODES_PER_S")]
    sim_rate: Option<f64>,
    /// With --executor sim: seconds from sending a job to its search's
    /// start (sbatch, the queue, the worker's start).
    #[arg(long, value_parser = sim_number, value_name = "SECONDS")]
    sim_latency: Option<f64>,
    /// With --executor sim: one process's nodes on this line (a plain
    /// `prove --json`'s `nodes`), for the speedup in the summary.
    #[arg(long, value_parser = count, value_name = "NODES")]
    sim_baseline: Option<u64>,
}

/// The time between two saves of a run state: `--state-every` is a time
/// of at least 0.1 s (a save takes about that much: more often, a run
/// would do little else).
fn state_every(every: Limit) -> anyhow::Result<std::time::Duration> {
    match every {
        Limit::Time(d) if d.as_secs_f64() >= 0.1 => Ok(d),
        Limit::Time(d) => bail!("--state-every {d:?}: saves at least 0.1 s apart"),
        Limit::Nodes(_) => bail!("--state-every takes a time (`5m`, `1h`)"),
    }
}

/// The most records, and the most table entries, a state file may be
/// asked to hold (`--state-records`, `--state-tt`): both at their most
/// stay well below the size a state file is read to (1 GiB).
const MAX_STATE_ITEMS: u64 = 10_000_000;

/// A number as `--sim-rate` and `--sim-latency` take it (`1.5e6`, `2M`);
/// its range is checked by [`crate::jobs::sim::SimConfig::check`].
fn sim_number(s: &str) -> Result<f64, String> {
    let (num, mult) = split_multiplier(s);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a number such as 1.5e6 or 2M"))?;
    Ok(v * mult)
}

/// The default `--sim-latency`: seconds for sbatch, the queue and a
/// worker's start.
pub(crate) const SIM_LATENCY_S: f64 = 3.0;

impl ManyArgs {
    /// Search threads of a one-process search: `--jobs` (default 1) with
    /// the search executor, else 1.
    pub(super) fn threads(&self) -> usize {
        match self.executor {
            ExecutorKind::Search => self.jobs.unwrap_or(1) as usize,
            _ => 1,
        }
    }

    /// Whether a master hands out jobs (`--executor local|threads|slurm`,
    /// with any `--jobs`, 1 included).
    pub(super) fn job_executor(&self) -> bool {
        self.executor != ExecutorKind::Search
    }

    /// The --sim-* options name the simulated cluster's settings: refused
    /// with any other executor, where they would be ignored.
    pub(super) fn check_sim_options(&self) -> anyhow::Result<()> {
        if self.executor != ExecutorKind::Sim {
            for (given, name) in [
                (self.sim_rate.is_some(), "--sim-rate"),
                (self.sim_latency.is_some(), "--sim-latency"),
                (self.sim_baseline.is_some(), "--sim-baseline"),
            ] {
                if given {
                    bail!(
                        "{name} is a setting of the simulated cluster: give it with --executor sim"
                    );
                }
            }
            return Ok(());
        }
        // Before anything is made: the rate (when given) and the latency.
        let workers = self.jobs.unwrap_or(1) as usize;
        SimConfig {
            workers,
            rate: self.sim_rate.unwrap_or(1.0),
            latency: self.sim_latency.unwrap_or(SIM_LATENCY_S),
            real_threads: 1,
        }
        .check()?;
        Ok(())
    }

    /// The job-level search's settings are refused with a plain search
    /// (`--executor search`, the default), which runs no jobs and would
    /// ignore them: `--state` above all, whose run would keep no state.
    /// The --sim-* settings are [`Self::check_sim_options`]'s.
    pub(super) fn check_job_options(&self) -> anyhow::Result<()> {
        if self.executor != ExecutorKind::Search {
            return Ok(());
        }
        /// The settings as given with none of them.
        #[derive(clap::Parser)]
        struct Defaults {
            #[command(flatten)]
            many: ManyArgs,
        }
        let d = <Defaults as clap::Parser>::try_parse_from(["prove"])
            .map_err(|e| anyhow!("the job settings' defaults: {e}"))?
            .many;
        macro_rules! refuse_given {
            ($($field:ident => $flag:literal),* $(,)?) => {
                $(
                    if format!("{:?}", self.$field) != format!("{:?}", d.$field) {
                        if $flag.starts_with("--state") {
                            bail!("{} goes with --state FILE", $flag);
                        }
                        bail!(
                            "{} is a setting of the job-level search, which --executor search (the default) does not run: give it with --executor threads, local, slurm, srun or sim",
                            $flag
                        );
                    }
                )*
            };
        }
        if self.state.is_none() {
            refuse_given!(
                state_every => "--state-every",
                state_records => "--state-records",
                state_tt => "--state-tt",
            );
        }
        refuse_given!(
            work_dir => "--work-dir",
            job_nodes => "--job-nodes",
            job_max_nodes => "--job-max-nodes",
            job_threads => "--job-threads",
            job_time => "--job-time",
            job_focus => "--job-focus",
            job_speculation => "--job-speculation",
            job_expand_loser_nodes => "--job-expand-loser-nodes",
            job_thresholds_all_siblings => "--job-thresholds-all-siblings",
            job_thresholds_free_leaves => "--job-thresholds-free-leaves",
            job_threshold_margin => "--job-threshold-margin",
            job_deep_expand => "--job-deep-expand",
            job_spread => "--job-spread",
            job_growth => "--job-growth",
            job_widen => "--job-widen",
            job_widen_per_budget => "--job-widen-per-budget",
            job_budget_per_thread => "--job-budget-per-thread",
            slurm_args => "--slurm-args",
            slurm_grace => "--slurm-grace",
            slurm_patience => "--slurm-patience",
            no_shared_table => "--no-shared-table",
            no_table_excerpts => "--no-table-excerpts",
            worker => "--worker",
        );
        Ok(())
    }

    /// Where and how often a plain search saves its run state
    /// (`--state`, with `--state-every`, `--state-records`, `--state-tt`).
    /// With `--state-tt` left out, its records and table entries share
    /// [`crate::search::state::DEFAULT_TT_ENTRIES`] (about 5 MB).
    pub(super) fn plain_state(&self) -> anyhow::Result<Option<crate::search::state::StateSave>> {
        let mut save = self.state_save(crate::search::state::DEFAULT_TT_ENTRIES)?;
        if let Some(s) = save.as_mut()
            && self.state_tt.is_none()
        {
            s.max_items = Some(crate::search::state::DEFAULT_TT_ENTRIES);
        }
        Ok(save)
    }

    /// The `--state` settings, with `default_tt` table entries unless
    /// `--state-tt` is given.
    fn state_save(
        &self,
        default_tt: usize,
    ) -> anyhow::Result<Option<crate::search::state::StateSave>> {
        let Some(path) = &self.state else {
            return Ok(None);
        };
        Ok(Some(crate::search::state::StateSave {
            path: path.clone(),
            every: state_every(self.state_every)?,
            max_records: self.state_records as usize,
            max_tt: self.state_tt.map_or(default_tt, |n| n as usize),
            max_items: None,
        }))
    }

    /// Jobs at once for a job executor: `--jobs`, else this machine's
    /// cores for the local and threads executors, and the allocation's
    /// tasks (`SLURM_NTASKS`) for srun; Slurm needs it given.
    fn jobs_at_once(&self) -> anyhow::Result<usize> {
        match (self.jobs, self.executor) {
            (Some(n), _) => Ok(n as usize),
            (None, ExecutorKind::Srun) => {
                match std::env::var("SLURM_NTASKS")
                    .ok()
                    .and_then(|v| v.trim().parse::<usize>().ok())
                {
                    Some(n) if (1..=4096).contains(&n) => Ok(n),
                    Some(n) if n > 4096 => bail!(
                        "the allocation has {n} tasks (SLURM_NTASKS), more than --jobs takes (4096): give --jobs N"
                    ),
                    _ => bail!(
                        "--executor srun needs --jobs N, or an allocation made with --ntasks (SLURM_NTASKS is not set)"
                    ),
                }
            }
            (None, ExecutorKind::Slurm) => {
                bail!("--executor slurm needs --jobs N: how many Slurm jobs to keep queued at once")
            }
            (None, ExecutorKind::Sim) => {
                bail!("--executor sim needs --jobs P: how many workers to simulate")
            }
            (None, _) => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
        }
    }
}

/// Where the local jobs' shared table goes: on /dev/shm (memory) where
/// there is one, else the temporary directory; named by this process.
fn shared_table_path() -> PathBuf {
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    remove_stale_tables(&dir);
    dir.join(format!("antiproof-{}.tt", std::process::id()))
}

/// Removes the shared tables of masters that are gone (killed before they
/// could remove their own), so a killed master does not keep its table's
/// memory on /dev/shm.
fn remove_stale_tables(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("antiproof-"))
            .and_then(|n| n.strip_suffix(".tt"))
            // `antiproof-PID.tt`, and its later generations
            // `antiproof-PID.gN.tt` (crate::jobs::shared_table).
            .and_then(|n| n.split('.').next())
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if crate::fsutil::process_gone(pid) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// `s` trimmed, as its number and the multiplier of its last letter (`k`
/// 10^3, `M` 10^6, `G` 10^9, either case; none: 1), for [`count`] and
/// [`sim_number`].
fn split_multiplier(s: &str) -> (&str, f64) {
    let t = s.trim();
    match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('M' | 'm') => (&t[..t.len() - 1], 1e6),
        Some('G' | 'g') => (&t[..t.len() - 1], 1e9),
        _ => (t, 1.0),
    }
}

/// A count such as `1000`, `500k`, `2M`, `1G`.
fn count(s: &str) -> Result<u64, String> {
    let (num, mult) = split_multiplier(s);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a count such as 500k or 2M"))?;
    let n = v * mult;
    if !(1.0..=1e15).contains(&n) {
        return Err(format!("{s:?}: a count from 1 to 10^15"));
    }
    Ok(n as u64)
}

/// The executor `--executor` names, made from the options: with the
/// simulated cluster's rate when it was measured here.
fn executor(
    args: &ProveArgs,
    jobs: usize,
    work_dir: &std::path::Path,
    pos: &crate::rules::Position,
    winner: crate::rules::Color,
) -> anyhow::Result<(Box<dyn Executor>, Option<Measured>)> {
    let many = &args.many;
    let worker = match &many.worker {
        Some(w) => WorkerCommand::from_words(w).ok_or_else(|| anyhow!("--worker is empty"))?,
        None => WorkerCommand::this_exe().context("cannot find this program's path")?,
    };
    let mut sim_measured: Option<Measured> = None;
    let exec: Box<dyn Executor> = match many.executor {
        ExecutorKind::Search => unreachable!("--executor search runs no jobs"),
        ExecutorKind::Local => Box::new(Local::new(worker)),
        ExecutorKind::Threads => Box::new(crate::jobs::executor::Threads::new()),
        ExecutorKind::Slurm => {
            let timing = SlurmTiming {
                grace: std::time::Duration::from_secs(many.slurm_grace),
                patience: std::time::Duration::from_secs(many.slurm_patience),
            };
            Box::new(Slurm::new(worker, &many.slurm_args, timing)?)
        }
        ExecutorKind::Srun => {
            // The job's table, and a margin for the rest of the process.
            let table_mb = args.memory.bytes() as u64 >> 20;
            let mem_mb = table_mb + (table_mb / 8).max(512);
            Box::new(Steps::new(worker, &many.slurm_args, mem_mb)?)
        }
        ExecutorKind::Sim => {
            let (cfg, measured) = sim_config(args, jobs, work_dir, pos, winner)?;
            sim_measured = measured;
            Box::new(Sim::new(cfg)?)
        }
    };
    Ok((exec, sim_measured))
}

/// Runs `prove` with a job executor.
pub(super) fn run(args: &ProveArgs) -> anyhow::Result<u8> {
    let many = &args.many;
    if args.ladder || args.obligations.is_some() {
        bail!("--executor local|threads|slurm proves one line: not with --ladder or --obligations");
    }
    if !(many.job_time > 0.0 && many.job_time.is_finite()) {
        bail!("--job-time must be a positive number of seconds");
    }
    if !(1.0..=1e6).contains(&many.job_threshold_margin) {
        bail!(
            "--job-threshold-margin {} must be a factor from 1 to 10^6",
            many.job_threshold_margin
        );
    }
    if !(0.0..=1e6).contains(&many.job_spread) {
        bail!(
            "--job-spread {} must be a factor from 0 to 10^6",
            many.job_spread
        );
    }
    if !(many.job_speculation == 0.0 || (1.0..=1e6).contains(&many.job_speculation)) {
        bail!(
            "--job-speculation {} must be 0 (none) or a factor from 1 to 10^6",
            many.job_speculation
        );
    }
    let max_nodes = many
        .job_max_nodes
        .unwrap_or(many.job_nodes.saturating_mul(256));
    if max_nodes < many.job_nodes {
        bail!(
            "--job-max-nodes {max_nodes} is below --job-nodes {}: the first jobs would already be over the cap",
            many.job_nodes
        );
    }
    let jobs = many.jobs_at_once()?;
    // A job of T threads takes T workers: it must fit.
    if many.job_threads > jobs {
        bail!(
            "--job-threads {}: a job of T threads takes T of the workers, and --jobs gives {jobs}",
            many.job_threads
        );
    }
    // Up to T threads a job, and never more than there are workers (a
    // sweep over P keeps one T); past what one search takes, a mistake.
    if many.job_widen > crate::search::MAX_THREADS {
        bail!(
            "--job-widen {}: a job has at most {} search threads",
            many.job_widen,
            crate::search::MAX_THREADS
        );
    }
    if many.job_widen_per_budget != 1 && many.job_widen == 0 {
        bail!("--job-widen-per-budget sizes the threads of widened jobs: give it with --job-widen");
    }
    let rules = args.rules.stalemate();
    let (start, pos, played) = super::root_of(args)?;
    let winner = super::winner_of(args, &pos, &played);
    let sim = many.executor == ExecutorKind::Sim;
    let run_time = match args.limit {
        None => None,
        Some(Limit::Time(_)) if sim => None,
        Some(Limit::Time(d)) => Some(d),
        Some(Limit::Nodes(_)) => {
            bail!(
                "--limit with --jobs takes a time (`30s`, `1h`); node budgets are per job (--job-nodes)"
            )
        }
    };
    if let Some(t) = &args.tables
        && !t.is_dir()
    {
        bail!("--tables {}: not a directory", t.display());
    }
    let work_dir = many
        .work_dir
        .clone()
        .unwrap_or_else(|| crate::jobs::job::with_suffix(&args.db, ".jobs"));
    std::fs::create_dir_all(&work_dir)
        .with_context(|| format!("cannot create the work directory {}", work_dir.display()))?;
    let work_dir = work_dir.canonicalize()?;
    // Before the store is opened (or made): another master there stops
    // this one with nothing written.
    let lock = WorkDirLock::take(&work_dir, &args.db)?;
    // The simulated cluster's rate when measured here, and one process's
    // nodes when the measuring search proved the line.
    let (mut exec, sim_measured) = executor(args, jobs, &work_dir, &pos, winner)?;
    let store = Store::open(&args.db)?;
    super::load_known(args, &store)?;
    // As a plain run's: the time counts from the end of the loading.
    let deadline = run_time.map(|d| Instant::now() + d);
    let mut tt_seed = Vec::new();
    let state = match many.state_save(crate::jobs::state::DEFAULT_TT_ENTRIES)? {
        None => None,
        Some(save) => {
            super::check_state_output(args, &save.path, &[])?;
            tt_seed = restore_state(&store, rules, &save.path, &pos, winner)?;
            Some(save)
        }
    };
    let line = crate::rules::line_san(&start, &played);
    let shares = exec.shares_table() && !many.no_shared_table;
    let cfg = MasterConfig {
        rules,
        root: pos,
        line: line.clone(),
        winner,
        jobs,
        work_dir,
        budget: Budget {
            nodes: many.job_nodes,
            time_s: many.job_time,
            memory_bytes: args.memory.bytes() as u64,
            threads: many.job_threads as u32,
        },
        growth: many.job_growth,
        max_nodes,
        tables: args.tables.as_ref().map(|t| t.canonicalize()).transpose()?,
        deadline,
        virtual_limit: match args.limit {
            Some(Limit::Time(d)) if sim => Some(d),
            _ => None,
        },
        stop: Some(crate::search::run::stop_flag()),
        // Simulated workers have tables of their own, as Slurm jobs do.
        shared_tt: shares.then(shared_table_path),
        in_process: exec.in_process(),
        focus: many.job_focus,
        speculation: (many.job_speculation >= 1.0).then_some(many.job_speculation),
        loser_jobs: !many.job_expand_loser_nodes,
        // With a shared table a job stopped early loses little (its
        // work is in the table for the next), and the old thresholds
        // measured better there (issue 29: rung 10, threads, 2 workers).
        siblings: if many.job_thresholds_all_siblings || shares {
            Siblings::All
        } else if many.job_thresholds_free_leaves {
            Siblings::NotInFlight
        } else {
            Siblings::Idle
        },
        threshold_margin: many.job_threshold_margin,
        state,
        tt_seed,
        // A shared table holds what excerpts would pass down.
        excerpts: !many.no_table_excerpts && !shares,
        deep: many.job_deep_expand,
        spread: many.job_spread,
        widen: many.job_widen,
        widen_per_budget: many.job_widen_per_budget,
        budget_per_thread: many.job_budget_per_thread,
        min_nodes: exec.min_job_nodes(many.job_nodes),
    };
    let show = io::stderr().is_terminal() && !args.json;
    let mut show_status = |s: &Status| {
        errprint!(
            "\r{:>6.0} s  frontier {}  running {}  done {}  rejected {}  failed {}  root pn {} dn {}  positions {} ({:.0}/s)   ",
            s.elapsed,
            s.frontier,
            s.running,
            s.done,
            s.rejected,
            s.failed,
            super::summary::fmt_pn(s.root_pn),
            super::summary::fmt_pn(s.root_dn),
            s.positions,
            s.positions as f64 / s.elapsed.max(1e-9)
        );
    };
    let progress: Option<&mut dyn FnMut(&Status)> =
        if show { Some(&mut show_status) } else { None };
    let report = run_master(&store, &cfg, &lock, exec.as_mut(), progress)?;
    if report.result == MasterResult::Proven {
        super::super::proven_lines::note(
            &store,
            rules.into(),
            args.fen.as_deref(),
            &played,
            winner,
        )?;
    }
    if show {
        errprint!("\r\x1b[K");
    }
    if report.result == MasterResult::Proven {
        super::store_line_back(&store, args.rules.rule_set(), &start, &played, winner)?;
    }
    let sim_figures = exec.simulated();
    let ended = Ended {
        args,
        report: &report,
        winner,
        line: &line,
        root: &pos,
        jobs,
        shared_table: cfg.shared_tt.is_some(),
        store_records: store.len(rules)?,
        cpu_s: super::summary::cpu_seconds(),
        sim: sim_figures.as_ref(),
        baseline: many
            .sim_baseline
            .or(sim_measured.filter(|m| m.proven).map(|m| m.nodes)),
        rate_measured: sim_measured.is_some(),
    };
    report::print(&mut crate::cli::out::stdout(), &ended)?;
    Ok(match report.result {
        MasterResult::Proven => EXIT_OK,
        MasterResult::Disproven | MasterResult::Failed => EXIT_NO,
        MasterResult::Stopped => EXIT_LIMIT,
    })
}
