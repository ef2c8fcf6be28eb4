//! `prove --executor sim`: the simulated cluster's settings from the
//! options, and its figures as `--json` and the summary give them.

use super::super::ProveArgs;
use super::SIM_LATENCY_S;
use crate::jobs::sim::{Measured, SimConfig, SimFigures};

/// The simulated cluster's settings from the options: `--sim-rate`, else
/// this machine's single-process rate measured now (said on stderr, and
/// returned with one process's nodes when the measuring search proved the
/// line).
pub(super) fn sim_config(
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
    errln!(
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
pub(super) fn sim_json(f: &SimFigures, baseline: Option<u64>, measured: bool) -> serde_json::Value {
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
pub(super) fn sim_summary(f: &SimFigures, baseline: Option<u64>) -> String {
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
