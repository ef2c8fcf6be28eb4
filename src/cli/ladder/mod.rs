//! `antiproof prove --ladder`: the ladder benchmark's table (the rungs and
//! the child processes that run them are in [`rungs`]).

use super::prove::ProveArgs;
use super::{EXIT_ERROR, EXIT_OK};
mod rungs;

pub(crate) use rungs::Rungs;
use rungs::{LADDER, Ladder};
use std::io::Write;

/// `--ladder`: each rung in a child process (clean peak memory) with a
/// fresh store in a temporary directory, one row a rung.
pub(super) fn run(args: &ProveArgs) -> anyhow::Result<u8> {
    // The `prove` options of each rung under a rule set.
    let options_under = |rules: crate::vocab::RuleSet| {
        let mut o = vec![
            "--memory".to_string(),
            args.memory.to_string(),
            "--rules".to_string(),
            rules.to_string(),
        ];
        if let Some(l) = &args.limit {
            o.push("--limit".into());
            o.push(l.to_string());
        }
        if args.smaller_proof {
            o.push("--smaller-proof".into());
        }
        o
    };
    let options = options_under(args.rules.rule_set());
    // The baseline: the same options under international rules without
    // the fifty-move rule.
    let plain = crate::vocab::RuleSet::default();
    let baseline = (args.baseline && args.rules.rule_set() != plain).then(|| options_under(plain));
    let ladder = Ladder::new(options)?;
    let mut out = crate::cli::out::stdout();
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
        if let Some(o) = &baseline {
            match ladder.run_with(n, o)? {
                Ok(b) => {
                    let ratio = |x: f64, y: f64| {
                        if y > 0.0 {
                            format!("{:.3}", x / y)
                        } else {
                            "-".into()
                        }
                    };
                    writeln!(
                        out,
                        "      {:<9}  {:<9}  {:>7.2}  {:>6.2}  {:>9}  {:>10.0}  {:>9}  {:>5}  {:>7.1}   (baseline {plain}; cost: nodes x{}, CPU x{}, proof x{})",
                        "",
                        b.result,
                        b.time_s,
                        b.cpu_s,
                        b.nodes as u64,
                        b.nodes_per_second,
                        b.proof_positions as u64,
                        b.proof_depth as u64,
                        b.peak_memory_bytes / 1e6,
                        ratio(nodes, b.nodes),
                        ratio(cpu, b.cpu_s),
                        ratio(proof, b.proof_positions),
                    )?;
                }
                Err(stderr) => writeln!(out, "      baseline error: {stderr}")?,
            }
            out.flush()?;
        }
        out.flush()?;
    }
    Ok(worst)
}
