//! `prove --obligations FILE`: the open leaves of a partial proof, each
//! proven in turn into the store.

use super::super::out::outln;
use super::{ProveArgs, open_run};
use crate::search::run::{self, ProvingRun};
use crate::search::{Config, ProveResult};
use anyhow::bail;
use std::path::{Path, PathBuf};

/// `prove --obligations FILE`: proves each position of the file, in
/// order, for the header's winner. Exit 0 when all are proven, 1 when any
/// is disproven (the others are still tried), 3 when a limit or a signal
/// stopped the run (run it again to resume: proven ones are in the store).
pub(super) fn run_obligations(args: &ProveArgs, path: &Path) -> anyhow::Result<u8> {
    let rules = args.rules.stalemate();
    let rule_set = args.rules.rule_set();
    let list = crate::cli::obligations::read(path, rule_set)?;
    let winner = match (args.winner, list.winner) {
        (Some(a), Some(b)) if a != b => bail!(
            "--winner {a}, but the obligations of {} are owed for {b}",
            path.display()
        ),
        (Some(a), _) | (None, Some(a)) => a,
        (None, None) => bail!(
            "the obligations file {} names no winner (`# winner:` header): give --winner",
            path.display()
        ),
    };
    let (limits, tables, store) = open_run(args)?;
    let warn = |w: &str| errln!("antiproof: warning: {w}");
    let total = list.positions.len();
    let (mut proven, mut disproven, mut stopped) = (0usize, Vec::new(), None);
    let mut saved_tt: Option<(PathBuf, u64)> = None;
    let mut results = Vec::new();
    for (n, pos) in &list.positions {
        let job = ProvingRun {
            root: *pos,
            winner,
            config: Config {
                rule_set,
                tt_bytes: args.memory.bytes(),
                limits: limits.clone(),
                checkpoint_size: args.checkpoint_size,
                checkpoint_plies: args.checkpoint_plies,
                flush_nodes: crate::search::FLUSH_NODES,
                threads: args.many.threads(),
                shrink_alternatives: args.smaller_proof,
                seed: args.seed,
                lockstep: false,
                clock_init: args.clock_init,
            },
            store: &store,
            db: &args.db,
            tables: tables.as_ref(),
            state: None,
            standing_log: None,
        };
        let finished = run::prove(job, None, &warn)?;
        let report = finished.report;
        saved_tt = finished.saved_tt.or(saved_tt);
        let what = match report.result {
            ProveResult::Proven => {
                proven += 1;
                "proven"
            }
            ProveResult::Disproven => {
                disproven.push(*n);
                "disproven"
            }
            ProveResult::Stopped => "stopped",
        };
        results.push(serde_json::json!({
            "line": n,
            "epd": pos.to_epd(),
            "result": what,
            "nodes": report.nodes,
            "proof_positions": report.proof_positions,
        }));
        if !args.json {
            outln!(
                "{what:<10} line {n}: {} ({} nodes, {} proof positions)",
                pos.to_epd(),
                report.nodes,
                report.proof_positions
            )?;
        }
        if report.result == ProveResult::Stopped {
            stopped = Some(*n);
            break;
        }
    }
    let result = if !disproven.is_empty() {
        "disproven"
    } else if stopped.is_some() {
        "stopped"
    } else {
        "proven"
    };
    if args.json {
        let j = serde_json::json!({
            "result": result,
            "obligations": path.display().to_string(),
            "rules": rules.to_string(),
            "fifty_move_rule": rule_set.fifty_move,
            "rule_set": rule_set.name(),
            "winner": winner.to_string().to_lowercase(),
            "positions": total,
            "proven": proven,
            "disproven_lines": disproven,
            "stopped_at_line": stopped,
            "saved_tt": saved_tt.as_ref().map(|(p, _)| p.display().to_string()),
            "saved_tt_bytes": saved_tt.as_ref().map(|&(_, b)| b),
            "db": args.db.display().to_string(),
            "each": results,
        });
        outln!("{j}")?;
    } else {
        outln!(
            "result:          {proven} of {total} obligations proven for {}{}{}",
            winner.to_string().to_lowercase(),
            if disproven.is_empty() {
                String::new()
            } else {
                format!(
                    "; disproven (not certified): line(s) {}",
                    disproven
                        .iter()
                        .map(|n| n.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
            match stopped {
                Some(n) => format!(
                    "; stopped at line {n} by a limit or a signal (run the same command again to continue)"
                ),
                None => String::new(),
            }
        )?;
        outln!("store:           {}", args.db.display())?;
        if let Some((p, bytes)) = &saved_tt {
            outln!(
                "saved table:     {} ({:.1} MB): the stopped search's transposition table, for \
                 the next run to resume from (delete it to start afresh)",
                p.display(),
                *bytes as f64 / 1e6
            )?;
        }
    }
    Ok(if !disproven.is_empty() {
        crate::cli::EXIT_NO
    } else if stopped.is_some() {
        crate::cli::EXIT_LIMIT
    } else {
        crate::cli::EXIT_OK
    })
}
