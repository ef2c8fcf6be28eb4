//! `antiproof prove --ladder`: the ladder benchmark's table (the runs are
//! in `crate::search::ladder`).

use super::prove::ProveArgs;
use super::{EXIT_ERROR, EXIT_OK};
use crate::search::ladder::{LADDER, Ladder};
use std::io::{self, Write};

/// `--ladder`: each rung in a child process (clean peak memory) with a
/// fresh store in a temporary directory, one row a rung.
pub(super) fn run(args: &ProveArgs) -> anyhow::Result<u8> {
    let mut options = vec![
        "--memory".to_string(),
        args.memory.to_string(),
        "--rules".to_string(),
        args.rules.rule_set().to_string(),
    ];
    if let Some(l) = &args.limit {
        options.push("--limit".into());
        options.push(l.to_string());
    }
    let ladder = Ladder::new(options)?;
    let mut out = io::stdout().lock();
    writeln!(
        out,
        "rung  line       result      time s   CPU s      nodes     nodes/s  proof pos  depth  peak MB  B/node  store B/pos | anchor s  ratio  CPU ratio  anchor nodes  anchor proof"
    )?;
    let mut worst = EXIT_OK;
    for &n in &args.rungs.0 {
        let rung = &LADDER[n as usize - 1];
        let v = match ladder.run(n)? {
            Ok(v) => v,
            Err(stderr) => {
                writeln!(out, "{n:>4}  {:<9}  error: {stderr}", rung.line)?;
                worst = worst.max(EXIT_ERROR);
                continue;
            }
        };
        let code = v.code.unwrap_or(EXIT_ERROR as i32) as u8;
        worst = worst.max(code);
        let t = v.time_s;
        let proof = v.proof_positions;
        let store_per = if proof > 0.0 {
            v.store_bytes / proof
        } else {
            0.0
        };
        let cpu = v.cpu_s;
        let (anchor, ratio, cpu_ratio) = match rung.anchor_s {
            Some(a) => (
                format!("{a:>8.3}"),
                format!("{:>5.2}", t / a),
                format!("{:>9.2}", cpu / a),
            ),
            None => ("       -".into(), "    -".into(), "        -".into()),
        };
        let nodes = v.nodes;
        let per_node = if nodes > 0.0 {
            v.peak_memory_bytes / nodes
        } else {
            0.0
        };
        writeln!(
            out,
            "{n:>4}  {:<9}  {:<9}  {t:>7.2}  {cpu:>6.2}  {:>9}  {:>10.0}  {:>9}  {:>5}  {:>7.1}  {per_node:>6.1}  {:>11.1} | {anchor}  {ratio}  {cpu_ratio}  {:>12}  {:>12}",
            rung.line,
            v.result,
            nodes as u64,
            v.nodes_per_second,
            proof as u64,
            v.proof_depth as u64,
            v.peak_memory_bytes / 1e6,
            store_per,
            rung.anchor_nodes
                .map(|x| format!("{x:.0}"))
                .unwrap_or("-".into()),
            rung.anchor_proof
                .map(|x| x.to_string())
                .unwrap_or("-".into()),
        )?;
        out.flush()?;
    }
    Ok(worst)
}
