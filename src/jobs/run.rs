//! Running one job (`antiproof job run FILE`): a df-pn search of the job's
//! root within its budgets, into a store of its own next to the job file
//! (`JOB.redb`, removed afterwards); when proven, the proof is exported as
//! a win-tree certificate (`JOB.tree`); then the result file is written
//! (`JOB.result.json`), both atomically, the certificate first, so a
//! result file that exists is complete.
//!
//! A stop flag (Ctrl-C, SIGTERM: a Slurm job at its time limit) ends the
//! search at a consistent point and the job reports unresolved with its
//! root's proof and disproof numbers.

use super::job::{
    ChildHint, Job, JobFileError, JobOutcome, ResultFile, result_path, tree_path, with_suffix,
};
use crate::fsutil::OutputKind;
use crate::search::run::STACK_BYTES;
use crate::search::{Config, Limits, ProveResult, Prover, SearchError};
use crate::store::{Store, StoreError};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What can go wrong running a job.
#[derive(Debug)]
pub enum RunJobError {
    /// The job file is unreadable or wrong.
    Job(JobFileError),
    /// The job's own store failed.
    Store(StoreError),
    /// The search failed.
    Search(SearchError),
    /// The proof could not be exported.
    Export(crate::export::ExportError),
    /// The result or certificate could not be written.
    Write(PathBuf, std::io::Error),
    /// An output is refused: it is the job file, its shared table, or a
    /// file of another kind.
    Output(crate::fsutil::OutputRefused),
    /// The search thread panicked.
    Panicked,
}

impl fmt::Display for RunJobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunJobError::Job(e) => write!(f, "{e}"),
            RunJobError::Store(e) => write!(f, "the job's store: {e}"),
            RunJobError::Search(e) => write!(f, "{e}"),
            RunJobError::Export(e) => write!(f, "exporting the proof: {e}"),
            RunJobError::Write(p, e) => write!(f, "cannot write {}: {e}", p.display()),
            RunJobError::Output(e) => write!(f, "{e}"),
            RunJobError::Panicked => write!(f, "the search thread panicked"),
        }
    }
}

// Display names each cause itself, so no `source()` (it would be
// printed twice).
impl std::error::Error for RunJobError {}

/// The table a job may have (`asked`, its `memory_bytes`), said on stderr
/// (the job's log) when it is clamped to [`crate::sysmem::table_limit`]. A
/// job file comes from a master on another machine, so its size is a
/// wish, not a command: a table past the machine's memory would get the
/// worker killed once it filled, its job lost.
fn table_bytes(id: &str, asked: u64, threads: u32) -> u64 {
    let limit = crate::sysmem::table_limit(
        threads as usize,
        crate::sysmem::usable_bytes(),
        crate::sysmem::available_bytes(),
    );
    match limit {
        Some(limit) if asked > limit.bytes => {
            errln!(
                "antiproof: job {id}: memory_bytes {asked} is more than this machine has for it: its table is limited to {limit}"
            );
            limit.bytes
        }
        _ => asked,
    }
}

/// Runs the job in `path` and writes its result (and certificate) next to
/// it. `stop`, when set, ends the search early (unresolved).
pub fn run_job(path: &Path, stop: Option<Arc<AtomicBool>>) -> Result<ResultFile, RunJobError> {
    let t0 = Instant::now();
    let job = Job::read(path).map_err(RunJobError::Job)?;
    let db = super::job::store_path(path);
    // No output over the job file or its shared table (a job file from
    // elsewhere may name anything), nor over a store or a table.
    let mut inputs = vec![path];
    inputs.extend(job.file.shared_tt.as_deref());
    inputs.extend(job.file.tt_excerpt.as_deref());
    let excerpt_out = super::excerpt::excerpt_path(path);
    for (out, kind) in [
        (tree_path(path), OutputKind::WinTree),
        (result_path(path), OutputKind::Beside),
        (db.clone(), OutputKind::Store),
        (excerpt_out.clone(), OutputKind::Beside),
    ] {
        crate::fsutil::check_output(&out, kind, &inputs).map_err(RunJobError::Output)?;
    }
    remove_store(&db);
    let store = Store::create_fresh_exclusive(&db).map_err(RunJobError::Store)?;
    // A scratch store, removed when the job ends: nothing to sync.
    store.set_lazy(true);
    let tables = job
        .file
        .tables
        .as_ref()
        .map(|d| crate::tables::Tables::open(d, job.rules));
    let b = job.file.budget;
    // The search stops on `stop` (a signal, or a cancelled job), and on
    // the thresholds inside the search.
    let halt = stop.clone().unwrap_or_default();
    let limits = Limits {
        nodes: Some(b.nodes),
        deadline: Some(Instant::now() + Duration::from_secs_f64(b.time_s.min(1e9))),
        stop: Some(halt.clone()),
    };
    let thresholds = job.file.thresholds;
    let config = Config {
        // Jobs run without the fifty-move rule (`prove --jobs` refuses it).
        rule_set: crate::vocab::RuleSet::from(job.rules),
        tt_bytes: usize::try_from(table_bytes(&job.file.id, b.memory_bytes, b.threads))
            .unwrap_or(usize::MAX),
        limits,
        checkpoint_size: 20_000,
        // An unresolved job's records are not merged.
        checkpoint_plies: 0,
        flush_nodes: 0,
        threads: b.threads as usize,
        shrink_alternatives: false,
        seed: 0,
        lockstep: job.file.lockstep,
        clock_init: 0,
    };
    let report = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("job".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, || -> Result<_, SearchError> {
                let mut prover = Prover::new(config, job.winner, Some(&store))?;
                let mut shared = false;
                if let Some(p) = &job.file.shared_tt {
                    match crate::search::tt::Tt::open_shared(p) {
                        Ok(tt) => {
                            prover.use_table(tt);
                            shared = true;
                        }
                        Err(e) => errln!(
                            "antiproof: job {}: shared table {}: {e} (using a table of its own)",
                            job.file.id,
                            p.display()
                        ),
                    }
                }
                // An ancestor's excerpt, into a table of its own (a shared
                // one holds what the excerpt would).
                if let Some(p) = job.file.tt_excerpt.as_deref().filter(|_| !shared) {
                    match super::excerpt::read(p) {
                        Ok(entries) => prover.seed_table(&entries),
                        Err(e) => {
                            errln!("antiproof: job {}: table excerpt ignored: {e}", job.file.id)
                        }
                    }
                }
                if let Some(t) = &tables {
                    prover.set_tables(t);
                }
                if let Some(t) = thresholds {
                    prover.set_root_thresholds(t.pn, t.dn, t.min_nodes);
                }
                let report = prover.prove_after(&job.history, &job.root)?;
                let stopped = report.result == ProveResult::Stopped;
                let children = if stopped {
                    prover.root_children(&job.root)
                } else {
                    Vec::new()
                };
                let excerpt = if stopped && job.file.tt_excerpt_out > 0 && !shared {
                    let k = job.file.tt_excerpt_out.min(super::excerpt::MAX_ENTRIES) as usize;
                    Some(prover.most_worked(k))
                } else {
                    None
                };
                Ok((report, children, excerpt))
            })
            .expect("spawning the search thread")
            .join()
            .map_err(|_| RunJobError::Panicked)
    })?
    .map_err(RunJobError::Search)?;
    let (report, children, excerpt) = report;
    // The excerpt goes with the result: one that cannot be written costs
    // the jobs below a warm start, not the result.
    let excerpt = excerpt.and_then(
        |entries| match super::excerpt::write(&excerpt_out, &entries) {
            Ok(_) => excerpt_out
                .file_name()
                .map(|n| n.to_string_lossy().into_owned()),
            Err(e) => {
                errln!(
                    "antiproof: job {}: cannot write the table excerpt {}: {e}",
                    job.file.id,
                    excerpt_out.display()
                );
                None
            }
        },
    );
    // Export reads the store through a store of its own.
    store.sync().map_err(RunJobError::Store)?;
    drop(store);
    let outcome = match report.result {
        ProveResult::Proven => JobOutcome::Proven,
        ProveResult::Disproven => JobOutcome::Disproven,
        ProveResult::Stopped => JobOutcome::Unresolved,
    };
    let tree = if outcome == JobOutcome::Proven {
        let out = tree_path(path);
        export(&db, &job, &out)?;
        out.file_name().map(|n| n.to_string_lossy().into_owned())
    } else {
        None
    };
    remove_store(&db);
    let result = ResultFile {
        format: super::job::RESULT_FORMAT.into(),
        version: super::job::VERSION,
        id: job.file.id.clone(),
        root_fen: job.file.root_fen.clone(),
        rules: job.file.rules.clone(),
        winner: job.file.winner.clone(),
        outcome,
        root_pn: report.root_pn,
        root_dn: report.root_dn,
        nodes: report.nodes,
        span_nodes: (b.threads > 1).then_some(report.span_nodes),
        proof_positions: report.proof_positions,
        time_s: t0.elapsed().as_secs_f64(),
        tree,
        stopped_by: (outcome == JobOutcome::Unresolved).then(|| {
            if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                "signal".to_string()
            } else if thresholds.is_some()
                && !halt.load(Ordering::Relaxed)
                && report.nodes < b.nodes
                && t0.elapsed().as_secs_f64() < b.time_s
            {
                "threshold".to_string()
            } else {
                "budget".to_string()
            }
        }),
        children: children
            .iter()
            .map(|c| ChildHint {
                uci: c.mv.uci().to_string(),
                pn: c.pn,
                dn: c.dn,
            })
            .collect(),
        tt_excerpt: excerpt,
    };
    let rp = result_path(path);
    result
        .write(&rp)
        .map_err(|e| RunJobError::Write(rp.clone(), e))?;
    Ok(result)
}

/// Exports the proof of the job's root from its store `db` to `out` (a
/// win-tree file with its size table, the job's root as its start and no
/// prolog), as `antiproof export --fen ROOT` writes it.
fn export(db: &Path, job: &Job, out: &Path) -> Result<(), RunJobError> {
    let store = Store::open_read_only(db).map_err(RunJobError::Store)?;
    let reader = store.reader().map_err(RunJobError::Store)?;
    let inputs = [db];
    crate::fsutil::check_output(out, OutputKind::WinTree, &inputs).map_err(RunJobError::Output)?;
    let source = crate::export::Source {
        rule_set: crate::vocab::RuleSet::new(job.rules, false),
        winner: job.winner,
        start: job.root,
        line: Vec::new(),
        merge: None,
        expand: None,
    };
    let walked = crate::export::walk(&reader, &source).map_err(RunJobError::Export)?;
    crate::export::write(&walked, &crate::export::one_file(out, &inputs))
        .map_err(RunJobError::Export)?;
    Ok(())
}

/// Removes a job's store and anything the search left beside it.
fn remove_store(db: &Path) {
    for p in [
        db.to_path_buf(),
        with_suffix(db, ".table"),
        with_suffix(db, ".table-endgame"),
    ] {
        let _ = std::fs::remove_file(p);
    }
}
