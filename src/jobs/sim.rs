//! A simulated cluster (`prove --executor sim --jobs P`): the master's own
//! loop (selection, merge, certification) against P virtual workers.
//!
//! Every job is really run on this machine, each with a table of its own
//! as a Slurm job has (no shared table, so no thresholds: jobs run to
//! their budgets), in any order and on as many of this machine's cores as
//! there are. What is simulated is only *when* a job ends: a job sent at
//! virtual time `s` ends at `s + latency + nodes / rate`, where `nodes`
//! is what its search really expanded. The master learns of ended jobs in
//! virtual-time order only (ties by the order they were sent), so what it
//! sees, and so every job it sends, is a function of the command alone:
//! the same command gives the same jobs, the same virtual time and the
//! same proof whatever the machine's load, for a given rate.
//!
//! Time budgets become node budgets (a job's `time_s` times the rate);
//! the master's `--limit` is a virtual deadline ([`Executor::clock`]).
//!
//! A job of T search threads (`--job-threads`, or given idle workers by
//! `--job-widen`) takes T workers, as a Slurm job with
//! `--cpus-per-task=T` takes T cores. Its threads run in lockstep
//! ([`crate::search::Config::lockstep`]: a slice each in a fixed round),
//! so it searches the same nodes every time, and it ends at its start +
//! latency + its busiest thread's nodes / rate.
//!
//! The model leaves out the master's own time (selecting, certifying and
//! merging cost no virtual time), the network and shared file system (a
//! result is seen the instant its job ends), per-node speed differences
//! and node failures. See docs/prove.md, "A simulated cluster".

use super::executor::{Ended, ExecError, Executor, log_path};
use super::job::Job;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How the simulated cluster runs.
#[derive(Clone, Copy, Debug)]
pub struct SimConfig {
    /// Virtual workers (`--jobs`).
    pub workers: usize,
    /// Nodes a second one virtual worker searches (`--sim-rate`).
    pub rate: f64,
    /// Seconds from a job's sending to its search's start (`--sim-latency`:
    /// sbatch, the queue, the worker's start).
    pub latency: f64,
    /// Jobs really run at once on this machine (its cores): changes the
    /// wall time only, never what the master sees.
    pub real_threads: usize,
}

/// A bad simulation setting.
#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// The rate is not a positive finite number.
    Rate(f64),
    /// The latency is negative or not finite.
    Latency(f64),
    /// No workers.
    Workers,
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Rate(r) => write!(
                f,
                "--sim-rate {r}: the nodes a second of one worker, a positive number"
            ),
            SimError::Latency(l) => write!(
                f,
                "--sim-latency {l}: the seconds from sending a job to its start, zero or more"
            ),
            SimError::Workers => write!(f, "--jobs: a simulated cluster needs 1 worker or more"),
        }
    }
}

impl std::error::Error for SimError {}

impl SimConfig {
    /// Checks the settings.
    pub fn check(&self) -> Result<(), SimError> {
        if !(self.rate.is_finite() && self.rate > 0.0) {
            return Err(SimError::Rate(self.rate));
        }
        if !(self.latency.is_finite() && self.latency >= 0.0) {
            return Err(SimError::Latency(self.latency));
        }
        if self.workers == 0 {
            return Err(SimError::Workers);
        }
        Ok(())
    }
}

/// What a simulated run did (`--json`'s `sim`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SimFigures {
    /// Virtual workers.
    pub workers: usize,
    /// Nodes a second of one worker.
    pub rate_nodes_per_s: f64,
    /// Seconds from sending a job to its start.
    pub latency_s: f64,
    /// Virtual seconds from the start to the master's end.
    pub virtual_s: f64,
    /// Nodes all jobs searched in virtual time (a job stopped or
    /// cancelled early counts what it had searched by then).
    pub job_nodes: u64,
    /// Jobs sent.
    pub jobs: u64,
    /// Of the workers' time, the share spent searching (not waiting for
    /// a job, nor in a job's latency).
    pub busy_fraction: f64,
    /// Nodes the jobs really ran (cancelled jobs run whole, or not at all
    /// when cancelled before they were needed): this machine's work.
    pub real_nodes: u64,
}

/// A job sent and not yet reported.
struct Out {
    path: PathBuf,
    /// Order of sending (ties in virtual time go by it).
    seq: u64,
    /// Virtual time it was sent.
    start: f64,
    /// Its node budget (after the time budget became nodes).
    budget: u64,
    /// The workers it takes: its search threads.
    threads: usize,
    /// Once really run: what it searched and its worker's status.
    ran: Option<(Ran, Option<i32>)>,
}

/// What a job really searched.
#[derive(Clone, Copy, Debug, Default)]
struct Ran {
    /// Nodes, all its threads together.
    nodes: u64,
    /// Of them, its busiest thread's: the job's length at one worker's
    /// rate (its threads in lockstep: [`crate::search::Config::lockstep`]).
    span: u64,
}

impl Out {
    /// When the job ends in virtual time, once run.
    fn end(&self, cfg: &SimConfig) -> Option<f64> {
        self.ran
            .map(|(r, _)| self.start + cfg.latency + r.span as f64 / cfg.rate)
    }
}

/// The simulated cluster's executor (see the module doc).
pub struct Sim {
    cfg: SimConfig,
    now: f64,
    seq: u64,
    out: Vec<Out>,
    job_nodes: u64,
    real_nodes: u64,
    jobs: u64,
    busy_s: f64,
}

impl Sim {
    /// A cluster of `cfg.workers` idle workers at virtual time 0.
    pub fn new(cfg: SimConfig) -> Result<Sim, SimError> {
        cfg.check()?;
        Ok(Sim {
            cfg,
            now: 0.0,
            seq: 0,
            out: Vec::new(),
            job_nodes: 0,
            real_nodes: 0,
            jobs: 0,
            busy_s: 0.0,
        })
    }

    /// The figures so far.
    pub fn figures(&self) -> SimFigures {
        let span = self.cfg.workers as f64 * self.now;
        SimFigures {
            workers: self.cfg.workers,
            rate_nodes_per_s: self.cfg.rate,
            latency_s: self.cfg.latency,
            virtual_s: self.now,
            job_nodes: self.job_nodes,
            jobs: self.jobs,
            busy_fraction: if span > 0.0 {
                (self.busy_s / span).min(1.0)
            } else {
                0.0
            },
            real_nodes: self.real_nodes,
        }
    }

    /// Counts the search of job `o` up to virtual time `self.now` (all
    /// of it when it ended by then).
    fn count(&mut self, o: &Out) {
        let nodes = match (o.ran, o.end(&self.cfg)) {
            (Some((r, _)), Some(end)) if end <= self.now => r.nodes,
            (ran, _) => {
                // Each of its threads searching at the rate until now.
                let searching = (self.now - o.start - self.cfg.latency).max(0.0);
                let cap = ran.map_or(o.budget, |(r, _)| r.nodes);
                ((searching * self.cfg.rate * o.threads as f64) as u64).min(cap)
            }
        };
        self.job_nodes += nodes;
        self.busy_s += nodes as f64 / self.cfg.rate;
    }

    /// Really runs the jobs that may end first, until the earliest end is
    /// known: a job not run yet cannot end before its start plus the
    /// latency. Runs them `real_threads` at a time.
    fn run_until_known(&mut self) {
        loop {
            let known = self
                .out
                .iter()
                .filter_map(|o| o.end(&self.cfg))
                .fold(f64::INFINITY, f64::min);
            let mut waiting: Vec<usize> = (0..self.out.len())
                .filter(|&i| {
                    self.out[i].ran.is_none() && self.out[i].start + self.cfg.latency <= known
                })
                .collect();
            if waiting.is_empty() {
                return;
            }
            waiting.sort_by_key(|&i| self.out[i].seq);
            waiting.truncate(self.cfg.real_threads.max(1));
            let paths: Vec<PathBuf> = waiting.iter().map(|&i| self.out[i].path.clone()).collect();
            let ran: Vec<(Ran, Option<i32>)> = std::thread::scope(|s| {
                let handles: Vec<_> = paths.iter().map(|p| s.spawn(move || run_one(p))).collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or((Ran::default(), Some(2))))
                    .collect()
            });
            for (&i, r) in waiting.iter().zip(ran) {
                self.real_nodes += r.0.nodes;
                self.out[i].ran = Some(r);
            }
        }
    }
}

/// Nodes the rate is measured over ([`measure_rate`]).
pub const MEASURE_NODES: u64 = 1_000_000;

/// This machine's single-process rate, as [`measure_rate`] found it.
#[derive(Clone, Copy, Debug)]
pub struct Measured {
    /// Nodes a second.
    pub rate: f64,
    /// Nodes the measuring search expanded.
    pub nodes: u64,
    /// Its seconds.
    pub seconds: f64,
    /// It proved the root (so `nodes` is one process's nodes on the line).
    pub proven: bool,
}

/// Measures this machine's single-process rate: one job of the root (a
/// table of its own, [`MEASURE_NODES`] nodes at most), run here in the
/// work directory as `sim-rate.json`, its files removed after.
pub fn measure_rate(
    work_dir: &Path,
    root: &crate::rules::Position,
    rules: crate::rules::Rules,
    winner: crate::rules::Color,
    memory_bytes: u64,
    tables: Option<&Path>,
) -> Result<Measured, super::run::RunJobError> {
    let path = work_dir.join("sim-rate.json");
    let job = Job::new(
        "sim-rate".into(),
        *root,
        Vec::new(),
        rules,
        winner,
        super::job::Budget {
            nodes: MEASURE_NODES,
            time_s: 60.0,
            memory_bytes,
            threads: 1,
        },
        tables.map(Path::to_path_buf),
    );
    job.write(&path)
        .map_err(|e| super::run::RunJobError::Write(path.clone(), e))?;
    let t0 = std::time::Instant::now();
    let ran = super::run::run_job(&path, None);
    let seconds = t0.elapsed().as_secs_f64().max(1e-3);
    super::job::remove_with_outputs(&path);
    let r = ran?;
    Ok(Measured {
        rate: (r.nodes.max(1) as f64 / seconds).max(1.0),
        nodes: r.nodes,
        seconds,
        proven: r.outcome == super::job::JobOutcome::Proven,
    })
}

/// Runs one job in this process, as a worker would: what it searched and
/// its status.
fn run_one(path: &Path) -> (Ran, Option<i32>) {
    match super::run::run_job(path, None) {
        Ok(r) => (
            Ran {
                nodes: r.nodes,
                span: r.span_nodes.unwrap_or(r.nodes).min(r.nodes),
            },
            Some(0),
        ),
        Err(e) => {
            if let Ok(mut log) = crate::fsutil::create_fresh(&log_path(path)) {
                use std::io::Write;
                let _ = writeln!(log, "antiproof: {e}");
            }
            (Ran::default(), Some(2))
        }
    }
}

impl Executor for Sim {
    /// The job's threads are its file's (`threads` is the same).
    fn submit(&mut self, job: &Path, _threads: u32) -> Result<(), ExecError> {
        // The time budget becomes nodes at the rate, and the job's wall
        // clock stops nothing (it would make the run depend on the load).
        let mut j = Job::read(job).map_err(|e| {
            ExecError::Spawn(
                format!("the simulated worker ({})", job.display()),
                std::io::Error::other(e.to_string()),
            )
        })?;
        let b = &mut j.file.budget;
        let threads = b.threads.max(1) as usize;
        // Its time budget, on each of its threads.
        let by_time = (b.time_s * self.cfg.rate * threads as f64).ceil().max(1.0);
        b.nodes = b.nodes.min(by_time.min(u64::MAX as f64) as u64).max(1);
        b.time_s = 1e9;
        let budget = b.nodes;
        // Threads in turns: the same nodes whatever this machine's load.
        j.file.lockstep = threads > 1;
        j.write(job)
            .map_err(|e| ExecError::Create(job.to_path_buf(), e))?;
        self.out.push(Out {
            path: job.to_path_buf(),
            seq: self.seq,
            start: self.now,
            budget,
            threads,
            ran: None,
        });
        self.seq += 1;
        self.jobs += 1;
        Ok(())
    }

    /// A simulated job's start costs its latency: as many nodes as a
    /// worker searches in that time, so a threshold stops no job before
    /// it has searched as long as it waited (at least a tenth of the
    /// first budget, at most half of it, as thresholds must still stop
    /// jobs).
    fn min_job_nodes(&self, job_nodes: u64) -> u64 {
        let waited = (self.cfg.latency * self.cfg.rate).min(u64::MAX as f64) as u64;
        (job_nodes / 10).max(waited).min(job_nodes / 2)
    }

    fn poll(&mut self) -> Result<Vec<Ended>, ExecError> {
        if self.out.is_empty() {
            return Ok(Vec::new());
        }
        self.run_until_known();
        let cfg = self.cfg;
        let Some(t) = self
            .out
            .iter()
            .filter_map(|o| o.end(&cfg))
            .min_by(f64::total_cmp)
        else {
            return Ok(Vec::new());
        };
        self.now = self.now.max(t);
        let (mut done, rest): (Vec<Out>, Vec<Out>) =
            self.out.drain(..).partition(|o| o.end(&cfg) == Some(t));
        self.out = rest;
        done.sort_by_key(|o| o.seq);
        let mut ended = Vec::new();
        for o in done {
            self.count(&o);
            ended.push(Ended {
                job: o.path.clone(),
                status: o.ran.and_then(|(_, s)| s),
            });
        }
        Ok(ended)
    }

    fn running(&self) -> usize {
        self.out.len()
    }

    /// Workers busy: the threads of the jobs out.
    fn busy(&self) -> usize {
        self.out.iter().map(|o| o.threads).sum()
    }

    fn cancel(&mut self, job: &Path) {
        if let Some(i) = self.out.iter().position(|o| o.path == job) {
            let o = self.out.swap_remove(i);
            self.count(&o);
            super::job::remove_outputs(job);
        }
    }

    fn stop_all(&mut self) {
        for o in std::mem::take(&mut self.out) {
            self.count(&o);
            super::job::remove_outputs(&o.path);
        }
    }

    fn clock(&self) -> Option<Duration> {
        Some(Duration::from_secs_f64(self.now))
    }

    fn simulated(&self) -> Option<SimFigures> {
        Some(self.figures())
    }
}

#[cfg(test)]
mod tests {
    use super::{SimConfig, SimError};

    fn cfg(rate: f64, latency: f64, workers: usize) -> SimConfig {
        SimConfig {
            workers,
            rate,
            latency,
            real_threads: 1,
        }
    }

    #[test]
    fn bad_settings_are_refused_naming_the_option() {
        assert_eq!(cfg(0.0, 1.0, 2).check(), Err(SimError::Rate(0.0)));
        assert!(matches!(
            cfg(f64::NAN, 1.0, 2).check(),
            Err(SimError::Rate(_))
        ));
        assert_eq!(cfg(1e6, -1.0, 2).check(), Err(SimError::Latency(-1.0)));
        assert_eq!(cfg(1e6, 1.0, 0).check(), Err(SimError::Workers));
        assert!(cfg(1e6, 0.0, 1).check().is_ok());
        assert!(SimError::Rate(0.0).to_string().starts_with("--sim-rate 0:"));
    }
}
