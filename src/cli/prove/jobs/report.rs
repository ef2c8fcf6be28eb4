//! What `prove` with a job executor prints when the master ends: the
//! JSON object (`--json`) or the text summary.

use super::super::ProveArgs;
use super::super::summary::{best_moves, fmt_pn, principal_line};
use crate::jobs::master::{MasterReport, MasterResult};
use crate::jobs::sim::SimFigures;
use crate::rules::{Color, Position};
use std::io::Write;

/// A finished job-level run, as printed.
pub(super) struct Ended<'a> {
    pub(super) args: &'a ProveArgs,
    pub(super) report: &'a MasterReport,
    pub(super) winner: Color,
    /// The line's moves, SAN.
    pub(super) line: &'a [String],
    /// The line's position.
    pub(super) root: &'a Position,
    /// Jobs at once.
    pub(super) jobs: usize,
    /// Whether the jobs shared a table.
    pub(super) shared_table: bool,
    /// Records in the store under the run's rules.
    pub(super) store_records: u64,
    /// CPU seconds, workers included.
    pub(super) cpu_s: Option<f64>,
    /// A simulated cluster's figures.
    pub(super) sim: Option<&'a SimFigures>,
    /// One process's nodes, for the simulated speedup.
    pub(super) baseline: Option<u64>,
    /// Whether the simulated rate was measured here.
    pub(super) rate_measured: bool,
}

/// Prints the run's end to `out`.
pub(super) fn print(out: &mut impl Write, e: &Ended<'_>) -> anyhow::Result<()> {
    let Ended {
        args,
        report,
        winner,
        line,
        root: pos,
        jobs,
        ..
    } = *e;
    let many = &args.many;
    let rules = args.rules.stalemate();
    let cpu = e.cpu_s;
    let result = report.result.name();
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
            "shared_table": e.shared_table,
            "store_records": e.store_records,
            "db": args.db.display().to_string(),
            "cpu_s": cpu,
            "revision": env!("ANTIPROOF_REVISION"),
            "report": report,
        });
        let mut j = j;
        if let Some(f) = e.sim {
            j["sim"] = super::sim::sim_json(f, e.baseline, e.rate_measured);
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
            fmt_pn(report.root_pn),
            fmt_pn(report.root_dn),
            resumed_note(report)
        )?;
        if !report.root_moves.is_empty() {
            writeln!(out, "best moves:      {}", best_moves(&report.root_moves))?;
        }
        if !report.principal_line.is_empty() {
            writeln!(
                out,
                "principal line:  {}",
                principal_line(&report.principal_line)
            )?;
        }
        writeln!(
            out,
            "store:           {} ({} records, {} merged now)",
            args.db.display(),
            e.store_records,
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
        if let Some(f) = e.sim {
            writeln!(
                out,
                "simulated:       {}",
                super::sim::sim_summary(f, e.baseline)
            )?;
        }
        writeln!(out, "rules:           {rules}")?;
        writeln!(out, "revision:        {}", env!("ANTIPROOF_REVISION"))?;
    }
    Ok(())
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
