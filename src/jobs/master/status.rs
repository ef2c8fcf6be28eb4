//! The progress figures and the status file, `WORK_DIR/status.json`,
//! rewritten atomically every [`STATUS_EVERY`] for a master with no
//! terminal to be watched from another shell.

use super::{Master, MasterError};
use crate::jobs::top::State;
use crate::search::MoveStanding;
use serde::Serialize;
use std::path::PathBuf;
use std::time::{Duration, Instant};

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
    /// `running`, or how the run ended (a [`MasterResult`](super::MasterResult)).
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
    root_moves: &'a [MoveStanding],
    principal_line: &'a [MoveStanding],
    /// Why the master stopped, when `state` is `error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}
impl Master<'_, '_> {
    /// The progress figures now.
    pub(super) fn status(&self, running: usize, t0: Instant) -> Result<Status, MasterError> {
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
    pub(super) fn write_error_status_file(&mut self, why: String, t0: Instant) {
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
    pub(super) fn write_status_file(&mut self, state: &str, error: Option<String>, status: Status) {
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
            errln!(
                "warning: cannot write the status file {}: {e} (the search goes on)",
                path.display()
            );
        }
    }
}
