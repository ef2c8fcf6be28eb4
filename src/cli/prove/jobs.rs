//! `antiproof prove --executor local|threads|slurm [--jobs N]`: the job-level search of
//! `crate::jobs::master`, on local worker processes or Slurm. See
//! docs/prove.md ("Many jobs").

use super::super::values::Limit;
use super::super::{EXIT_LIMIT, EXIT_NO, EXIT_OK};
use super::ProveArgs;
use crate::jobs::executor::{Executor, Local, Slurm, SlurmTiming, WorkerCommand};
use crate::jobs::job::Budget;
use crate::jobs::master::{MasterConfig, MasterResult, Status, WorkDirLock, run_master};
use crate::jobs::sim::{Measured, Sim, SimConfig, SimFigures};
use crate::store::Store;
use anyhow::{Context, anyhow, bail};
use clap::{Args, ValueEnum};
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

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
    /// search on one thread); with local, threads or slurm, a master
    /// keeps the top of the proof tree in the store and sends its
    /// most-proving leaves out as N jobs at a time (default: this
    /// machine's cores for local and threads; slurm needs it given).
    /// docs/prove.md, "Many jobs".
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096), value_name = "N")]
    jobs: Option<u32>,
    /// Where the work runs: search (threads of one search), local (job
    /// processes), threads (jobs as threads of this process), slurm
    /// (batch jobs).
    #[arg(long, value_enum, default_value = "search")]
    pub(super) executor: ExecutorKind,
    /// Where job files and results go (shared by master and workers;
    /// default: the store's path with `.jobs`).
    #[arg(long, value_name = "DIR")]
    work_dir: Option<PathBuf>,
    /// Node budget of the first jobs (`500k`, `2M`); each expansion
    /// doubles it for the children.
    #[arg(long, default_value = "1M", value_parser = count, value_name = "NODES")]
    job_nodes: u64,
    /// Search threads of each job, on its own table (jobs that share one
    /// machine's table run one thread; with --executor slurm each job
    /// asks for this many CPUs: `--cpus-per-task`).
    #[arg(long, default_value_t = 1, value_parser = crate::cli::values::threads(), value_name = "T")]
    job_threads: usize,
    /// Seconds one job may run at most.
    #[arg(long, default_value_t = 3600.0, value_name = "SECONDS")]
    job_time: f64,
    /// Selection stays with a top-tree child while it is within df-pn's
    /// margin of its best sibling (experimental).
    #[arg(long, hide = true)]
    job_focus: bool,
    /// Factor of a child's budget over its parent's.
    #[arg(long, default_value_t = 2, hide = true)]
    job_growth: u64,
    /// Extra arguments for every `sbatch` (partition, account, time,
    /// memory), as one string: `--slurm-args "-p short --mem=8G"`.
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
    /// Save the run state (the top tree with its numbers, what it proved
    /// and disproved, and the proofs of its proven nodes up to
    /// --state-records) to this zstd file every --state-every and when
    /// the run stops; and, when the store holds no top tree of this line
    /// (a fresh machine), restore it from this file first. Small (about
    /// 5 MB at most): keep it in the repository, beside `proofs/`, which
    /// `--known proofs/` loads back. docs/prove.md, "Runs that outlive
    /// their machine".
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// Time between two saves of --state (`10m`, `1h`).
    #[arg(long, default_value = "5m", value_parser = crate::cli::values::limit, value_name = "TIME")]
    state_every: Limit,
    /// Records of proven nodes' proofs --state may hold (each proof whole
    /// or not at all, smallest first; what does not fit is proven again
    /// after a restore unless --known holds it).
    #[arg(long, default_value_t = crate::jobs::state::DEFAULT_RECORDS, value_name = "N")]
    state_records: usize,
    /// Entries of the jobs' shared transposition table --state may hold
    /// (those of most work: what the jobs learnt of the lines not closed
    /// yet; 0: none). A resumed run puts them back into its shared table.
    #[arg(long, default_value_t = crate::jobs::state::DEFAULT_TT_ENTRIES, value_name = "N")]
    state_tt: usize,
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

/// A number as `--sim-rate` and `--sim-latency` take it (`1.5e6`, `2M`);
/// its range is checked by [`crate::jobs::sim::SimConfig::check`].
fn sim_number(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('M' | 'm') => (&t[..t.len() - 1], 1e6),
        Some('G' | 'g') => (&t[..t.len() - 1], 1e9),
        _ => (t, 1.0),
    };
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
        SimConfig {
            workers: self.jobs.unwrap_or(1) as usize,
            rate: self.sim_rate.unwrap_or(1.0),
            latency: self.sim_latency.unwrap_or(SIM_LATENCY_S),
            real_threads: 1,
        }
        .check()?;
        Ok(())
    }

    /// Jobs at once for a job executor: `--jobs`, else this machine's
    /// cores for the local and threads executors; Slurm needs it given.
    fn jobs_at_once(&self) -> anyhow::Result<usize> {
        match (self.jobs, self.executor) {
            (Some(n), _) => Ok(n as usize),
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
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        // SAFETY: kill with signal 0 only checks that the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// A count such as `1000`, `500k`, `2M`, `1G`.
fn count(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('M' | 'm') => (&t[..t.len() - 1], 1e6),
        Some('G' | 'g') => (&t[..t.len() - 1], 1e9),
        _ => (t, 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a count such as 500k or 2M"))?;
    let n = v * mult;
    if !(1.0..=1e15).contains(&n) {
        return Err(format!("{s:?}: a count from 1 to 10^15"));
    }
    Ok(n as u64)
}

/// Runs `prove` with a job executor.
/// `--state FILE` at the start: restores the file into the store when
/// the store holds no top tree of this line and the file exists (a fresh
/// machine), saying what it did on stderr. Returns the file's table
/// entries for the jobs' shared table (also when the store's own top
/// tree is resumed: the table did not outlive the last run either).
fn restore_state(
    store: &Store,
    rules: crate::rules::Rules,
    path: &std::path::Path,
    root: &crate::rules::Position,
    winner: crate::rules::Color,
) -> anyhow::Result<TtSeed> {
    use crate::jobs::state;
    if let Some((key, w)) = crate::jobs::top::stored_root(store, rules)?
        && key == root.pack().0
        && w == winner
    {
        eprintln!(
            "antiproof: the store holds this line's top tree: resuming it ({} is read only for its table entries)",
            path.display()
        );
        return Ok(match state::read(path) {
            Ok(st) if st.rules == rules && state::root_of(&st) == Some((key, w)) => {
                seed_of(&st, path)
            }
            _ => Vec::new(),
        });
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            eprintln!(
                "antiproof: no run state at {} yet: a fresh search, saved there as it goes",
                path.display()
            );
            return Ok(Vec::new());
        }
        _ => {}
    }
    let st = state::read(path)?;
    if st.rules != rules {
        bail!(
            "--state {}: the state of a search under {} rules, not {rules}",
            path.display(),
            st.rules
        );
    }
    store.top_clear(rules)?;
    let r = state::restore(store, path, &st, root, winner)?;
    eprintln!(
        "antiproof: run state restored from {}: {} top-tree nodes, {} records (a proven node whose proof is neither there nor in the store is reopened as the run resumes)",
        path.display(),
        r.nodes,
        r.records
    );
    Ok(seed_of(&st, path))
}

/// Entries for the jobs' shared table.
type TtSeed = Vec<(u64, crate::search::tt::TtValue)>;

/// A state file's table entries, if this build makes keys alike (said on
/// stderr either way).
fn seed_of(st: &crate::jobs::state::RunState, path: &std::path::Path) -> TtSeed {
    match st.tt_seed() {
        Some(seed) => {
            if !seed.is_empty() {
                eprintln!(
                    "antiproof: {} table entries of {} go into the jobs' shared table",
                    seed.len(),
                    path.display()
                );
            }
            seed.to_vec()
        }
        None => {
            eprintln!(
                "antiproof: the table entries of {} are of a build that makes keys otherwise: not used",
                path.display()
            );
            Vec::new()
        }
    }
}

pub(super) fn run(args: &ProveArgs) -> anyhow::Result<u8> {
    let many = &args.many;
    if args.ladder || args.obligations.is_some() {
        bail!("--executor local|threads|slurm proves one line: not with --ladder or --obligations");
    }
    if !(many.job_time > 0.0 && many.job_time.is_finite()) {
        bail!("--job-time must be a positive number of seconds");
    }
    let jobs = many.jobs_at_once()?;
    let rules = args.rules.stalemate();
    let (start, pos, played) = super::root_of(args)?;
    let winner = super::winner_of(args, &pos, &played);
    let sim = many.executor == ExecutorKind::Sim;
    let deadline = match args.limit {
        None => None,
        Some(Limit::Time(_)) if sim => None,
        Some(Limit::Time(d)) => Some(Instant::now() + d),
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
    let worker = match &many.worker {
        Some(w) => WorkerCommand::from_words(w).ok_or_else(|| anyhow!("--worker is empty"))?,
        None => WorkerCommand::this_exe().context("cannot find this program's path")?,
    };
    // The simulated cluster's rate when measured here, and one process's
    // nodes when the measuring search proved the line.
    let mut sim_measured: Option<Measured> = None;
    let mut exec: Box<dyn Executor> = match many.executor {
        ExecutorKind::Search => unreachable!("--executor search runs no jobs"),
        ExecutorKind::Local => Box::new(Local::new(worker)),
        ExecutorKind::Threads => Box::new(crate::jobs::executor::Threads::new()),
        ExecutorKind::Slurm => {
            let mut args = many.slurm_args.clone();
            if many.job_threads > 1 {
                args = format!("--cpus-per-task={} {args}", many.job_threads);
            }
            let timing = SlurmTiming {
                grace: std::time::Duration::from_secs(many.slurm_grace),
                patience: std::time::Duration::from_secs(many.slurm_patience),
            };
            Box::new(Slurm::new(worker, &args, timing)?)
        }
        ExecutorKind::Sim => {
            let (cfg, measured) = sim_config(args, jobs, &work_dir, &pos, winner)?;
            sim_measured = measured;
            Box::new(Sim::new(cfg)?)
        }
    };
    let store = Store::open(&args.db)?;
    super::load_known(args, &store)?;
    let mut tt_seed = Vec::new();
    let state = match &many.state {
        None => None,
        Some(path) => {
            let every = match many.state_every {
                Limit::Time(d) => d,
                Limit::Nodes(_) => bail!("--state-every takes a time (`5m`, `1h`)"),
            };
            // The state file is written over: never the store, nor a file
            // the run reads.
            let known = crate::known::tree_paths(&args.known)?;
            let mut inputs: Vec<&std::path::Path> = vec![args.db.as_path()];
            inputs.extend(known.iter().map(PathBuf::as_path));
            crate::cli::check_output(path, crate::fsutil::OutputKind::Beside, &inputs)?;
            tt_seed = restore_state(&store, rules, path, &pos, winner)?;
            Some(crate::jobs::state::StateSave {
                path: path.clone(),
                every,
                max_records: many.state_records,
                max_tt: many.state_tt,
            })
        }
    };
    let line = crate::rules::line_san(&start, &played);
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
        tables: args.tables.as_ref().map(|t| t.canonicalize()).transpose()?,
        deadline,
        virtual_limit: match args.limit {
            Some(Limit::Time(d)) if sim => Some(d),
            _ => None,
        },
        stop: Some(crate::search::run::stop_flag()),
        // Simulated workers have tables of their own, as Slurm jobs do.
        shared_tt: (exec.shares_table() && !many.no_shared_table).then(shared_table_path),
        in_process: exec.in_process(),
        focus: many.job_focus,
        state,
        tt_seed,
        min_nodes: exec.min_job_nodes(many.job_nodes),
    };
    let show = io::stderr().is_terminal() && !args.json;
    let mut show_status = |s: &Status| {
        eprint!(
            "\r{:>6.0} s  frontier {}  running {}  done {}  rejected {}  failed {}  root pn {} dn {}  positions {} ({:.0}/s)   ",
            s.elapsed,
            s.frontier,
            s.running,
            s.done,
            s.rejected,
            s.failed,
            super::fmt_pn(s.root_pn),
            super::fmt_pn(s.root_dn),
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
        eprint!("\r\x1b[K");
    }
    if report.result == MasterResult::Proven {
        super::store_line_back(&store, args.rules.rule_set(), &start, &played, winner)?;
    }
    let cpu = cpu_seconds();
    let result = report.result.name();
    let sim_figures = exec.simulated();
    let baseline = many
        .sim_baseline
        .or(sim_measured.filter(|m| m.proven).map(|m| m.nodes));
    let mut out = crate::cli::out::stdout();
    if args.json {
        let j = serde_json::json!({
            "result": result,
            "certifiable": report.result == MasterResult::Proven,
            "winner": winner.to_string().to_lowercase(),
            "line": line,
            "root_fen": pos.to_fen(),
            "rules": rules.to_string(),
            "jobs": jobs,
            "executor": format!("{:?}", many.executor).to_lowercase(),
            "shared_table": cfg.shared_tt.is_some(),
            "store_records": store.len(rules)?,
            "db": args.db.display().to_string(),
            "cpu_s": cpu,
            "revision": env!("ANTIPROOF_REVISION"),
            "report": report,
        });
        let mut j = j;
        if let Some(f) = &sim_figures {
            j["sim"] = sim_json(f, baseline, sim_measured.is_some());
        }
        writeln!(out, "{j}")?;
    } else {
        let what = match report.result {
            MasterResult::Proven => format!("proven: {} wins", winner.to_string().to_lowercase()),
            MasterResult::Disproven => format!(
                "disproven: {} cannot force a win (not certified)",
                winner.to_string().to_lowercase()
            ),
            MasterResult::Failed => {
                "failed: leaves whose jobs came back wrong twice block the proof".into()
            }
            MasterResult::Stopped => {
                "stopped by a limit or a signal (run the same command again to continue)".into()
            }
        };
        writeln!(out, "result:          {what}")?;
        writeln!(
            out,
            "line:            {}",
            if line.is_empty() {
                "(start)".to_string()
            } else {
                line.join(" ")
            }
        )?;
        writeln!(
            out,
            "jobs:            {} at once ({}); {} done, {} rejected, {} leaves failed",
            jobs,
            format!("{:?}", many.executor).to_lowercase(),
            report.jobs_done,
            report.jobs_rejected,
            report.leaves_failed
        )?;
        writeln!(
            out,
            "top tree:        {} nodes, {} bytes a node, root pn {} dn {}{}",
            report.top_nodes,
            report.top_bytes_per_node,
            super::fmt_pn(report.root_pn),
            super::fmt_pn(report.root_dn),
            resumed_note(&report)
        )?;
        let best: Vec<String> = report
            .root_moves
            .iter()
            .take(3)
            .map(|f| {
                let replies = if f.replies > 0 {
                    format!(", {} of {} replies proven", f.replies_proven, f.replies)
                } else {
                    String::new()
                };
                format!(
                    "{} ({}, pn {} dn {}{replies})",
                    f.san,
                    f.state,
                    super::fmt_pn(f.pn),
                    super::fmt_pn(f.dn)
                )
            })
            .collect();
        if !best.is_empty() {
            writeln!(out, "best moves:      {}", best.join("; "))?;
        }
        if let Some(last) = report.principal_line.last() {
            let moves: Vec<&str> = report
                .principal_line
                .iter()
                .map(|m| m.san.as_str())
                .collect();
            writeln!(
                out,
                "principal line:  {} (its last node {}, pn {} dn {})",
                moves.join(" "),
                last.state,
                super::fmt_pn(last.pn),
                super::fmt_pn(last.dn)
            )?;
        }
        writeln!(
            out,
            "store:           {} ({} records, {} merged now)",
            args.db.display(),
            store.len(rules)?,
            report.records_merged
        )?;
        match cpu {
            Some(c) => writeln!(
                out,
                "time:            {:.3} s ({c:.3} s CPU, workers included)",
                report.time_s
            )?,
            None => writeln!(out, "time:            {:.3} s", report.time_s)?,
        }
        if let Some(f) = &sim_figures {
            writeln!(out, "simulated:       {}", sim_summary(f, baseline))?;
        }
        writeln!(out, "rules:           {rules}")?;
        writeln!(out, "revision:        {}", env!("ANTIPROOF_REVISION"))?;
    }
    Ok(match report.result {
        MasterResult::Proven => EXIT_OK,
        MasterResult::Disproven | MasterResult::Failed => EXIT_NO,
        MasterResult::Stopped => EXIT_LIMIT,
    })
}

/// The simulated cluster's settings from the options: `--sim-rate`, else
/// this machine's single-process rate measured now (said on stderr, and
/// returned with one process's nodes when the measuring search proved the
/// line).
fn sim_config(
    args: &ProveArgs,
    workers: usize,
    work_dir: &std::path::Path,
    root: &crate::rules::Position,
    winner: crate::rules::Color,
) -> anyhow::Result<(SimConfig, Option<Measured>)> {
    let many = &args.many;
    let mut cfg = SimConfig {
        workers,
        rate: many.sim_rate.unwrap_or(1.0),
        latency: many.sim_latency.unwrap_or(SIM_LATENCY_S),
        real_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    cfg.check()?;
    if many.sim_rate.is_some() {
        return Ok((cfg, None));
    }
    let m = crate::jobs::sim::measure_rate(
        work_dir,
        root,
        args.rules.stalemate(),
        winner,
        args.memory.bytes() as u64,
        args.tables.as_deref(),
    )?;
    eprintln!(
        "antiproof: simulated workers search {:.0} nodes a second, this machine's single-process rate measured now ({} nodes in {:.2} s{}); the run is deterministic for a given rate: give --sim-rate {:.0} to repeat it",
        m.rate,
        m.nodes,
        m.seconds,
        if m.proven {
            ", which proved the line"
        } else {
            ""
        },
        m.rate
    );
    cfg.rate = m.rate;
    Ok((cfg, Some(m)))
}

/// The speedup of a simulated run against one process of `baseline`
/// nodes at the same rate: its time over the virtual time.
fn sim_speedup(f: &SimFigures, baseline: u64) -> f64 {
    let one = baseline as f64 / f.rate_nodes_per_s;
    if f.virtual_s > 0.0 {
        one / f.virtual_s
    } else {
        0.0
    }
}

/// `--json`'s `sim`: the figures, whether the rate was measured, and
/// against one process's nodes when known (`--sim-baseline`, or the
/// measuring search proved the line): `baseline_nodes`, `speedup`,
/// `efficiency` (speedup / workers), `work_inflation` (job nodes / one
/// process's).
fn sim_json(f: &SimFigures, baseline: Option<u64>, measured: bool) -> serde_json::Value {
    let mut j = serde_json::to_value(f).unwrap_or_default();
    j["rate_measured"] = measured.into();
    if let Some(b) = baseline {
        let s = sim_speedup(f, b);
        j["baseline_nodes"] = b.into();
        j["speedup"] = s.into();
        j["efficiency"] = (s / f.workers as f64).into();
        j["work_inflation"] = (f.job_nodes as f64 / b.max(1) as f64).into();
    }
    j
}

/// The summary's `simulated:` line.
fn sim_summary(f: &SimFigures, baseline: Option<u64>) -> String {
    let mut s = format!(
        "{} workers at {:.0} nodes/s, latency {} s: {:.1} virtual s, {} job nodes in {} jobs, workers busy {:.0} %",
        f.workers,
        f.rate_nodes_per_s,
        f.latency_s,
        f.virtual_s,
        f.job_nodes,
        f.jobs,
        100.0 * f.busy_fraction
    );
    match baseline {
        Some(b) => s.push_str(&format!(
            "; speedup {:.2}x against one process of {b} nodes ({:.1} s at the same rate)",
            sim_speedup(f, b),
            b as f64 / f.rate_nodes_per_s
        )),
        None => {
            s.push_str("; speedup: give --sim-baseline NODES (a plain prove's nodes on this line)")
        }
    }
    s
}

/// What the top-tree line says of a resumed tree: that it was resumed,
/// the leaves an earlier run failed or its workers disproved that this run
/// tried again, and the nodes the store's proofs settled.
fn resumed_note(report: &crate::jobs::master::MasterReport) -> String {
    if !report.resumed {
        return String::new();
    }
    let mut parts = Vec::new();
    if report.reopened > 0 {
        parts.push(format!(
            "{} {} failed or disproven by workers (not certified) tried again",
            report.reopened,
            if report.reopened == 1 {
                "leaf"
            } else {
                "leaves"
            }
        ));
    }
    if report.settled_from_store > 0 {
        parts.push(format!(
            "{} {} settled by proofs in the store",
            report.settled_from_store,
            if report.settled_from_store == 1 {
                "node"
            } else {
                "nodes"
            }
        ));
    }
    if parts.is_empty() {
        " (resumed)".into()
    } else {
        format!(" (resumed; {})", parts.join(", "))
    }
}

/// User plus system CPU time of this process and its waited-for children
/// (the local workers).
fn cpu_seconds() -> Option<f64> {
    let mut total = 0.0;
    for who in [libc::RUSAGE_SELF, libc::RUSAGE_CHILDREN] {
        // SAFETY: getrusage writes into the zeroed struct we own.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above; both `who` values are valid.
        if unsafe { libc::getrusage(who, &mut ru) } != 0 {
            return None;
        }
        let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
        total += t(ru.ru_utime) + t(ru.ru_stime);
    }
    Some(total)
}
