//! `antiproof verify`: certify a proof from the store or a win-tree file
//! with the independent checker (`crate::check`, shakmaty rules only).

use super::{EXIT_NO, EXIT_OK};
use crate::check::{self, Rules, TreeOptions, Verdict, game};
use crate::store::Store;
use crate::wintree::{WinTree, WinTreeError};
use anyhow::Context;
use clap::Args;
use shakmaty::variant::Antichess;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `antiproof verify`.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The proof store to read (default: antiproof.redb in the current
    /// directory).
    #[arg(long, value_name = "PATH", conflicts_with = "tree")]
    db: Option<PathBuf>,
    /// A Watkins win-tree file to check instead of the store.
    #[arg(long, value_name = "FILE")]
    tree: Option<PathBuf>,
    /// Rule set: international (lichess) or fics.
    #[arg(long, default_value = "international", value_parser = parse_rules)]
    rules: Rules,
    /// The side that wins (default: inferred from the proof's root).
    #[arg(long, value_parser = check::parse_color)]
    winner: Option<shakmaty::Color>,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
    /// Worker threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Check the file this many times and report the best speed
    /// (benchmarking).
    #[arg(long, default_value_t = 1, hide = true)]
    repeat: u32,
    /// The line to certify, from the start position (UCI or SAN). With
    /// --tree it must begin with the file's prolog; default: the file's
    /// root. With the store: default the start position.
    moves: Vec<String>,
}

fn parse_rules(s: &str) -> Result<Rules, String> {
    s.parse()
}

/// Runs `antiproof verify`.
pub fn run(args: VerifyArgs) -> anyhow::Result<u8> {
    let report = match &args.tree {
        Some(path) => {
            let tree = match WinTree::open(path) {
                Ok(t) => t,
                Err(e @ WinTreeError::Io { .. }) => return Err(e.into()),
                Err(e) => return Ok(malformed(&args, &e.to_string())),
            };
            let start = Antichess::default();
            let prolog = tree.prolog();
            let line = if args.moves.is_empty() {
                Vec::new()
            } else {
                let (_, moves) = game::play_line(&start, &args.moves)
                    .map_err(|e| anyhow::anyhow!("bad line: {e}"))?;
                let codes: Vec<_> = moves.iter().map(game::move_code).collect();
                let n = prolog.len().min(codes.len());
                if codes.len() < prolog.len()
                    || !codes[..n].iter().zip(&prolog).all(|(a, b)| a.same_move(*b))
                {
                    anyhow::bail!(
                        "the line does not begin with the file's prolog ({})",
                        prolog.iter().map(|m| m.uci()).collect::<Vec<_>>().join(" ")
                    );
                }
                codes[prolog.len()..].to_vec()
            };
            let opts = TreeOptions {
                rules: args.rules,
                winner: args.winner,
                start: None,
                threads: args.threads,
                line,
            };
            let mut best = check::check_tree(&tree, &opts);
            for _ in 1..args.repeat {
                let r = check::check_tree(&tree, &opts);
                if r.elapsed < best.elapsed {
                    best = r;
                }
            }
            best
        }
        None => {
            let path = args
                .db
                .clone()
                .unwrap_or_else(|| PathBuf::from("antiproof.redb"));
            let store = Store::open_existing(&path)
                .with_context(|| format!("cannot open the proof store {}", path.display()))?;
            let reader = store
                .reader()
                .with_context(|| format!("cannot read the proof store {}", path.display()))?;
            let start = Antichess::default();
            let (root, moves) = game::play_line(&start, &args.moves)
                .map_err(|e| anyhow::anyhow!("bad line: {e}"))?;
            let codes: Vec<_> = moves.iter().map(game::move_code).collect();
            let (line, _) = game::san_line(&start, &codes);
            check::check_store(&reader, args.rules, &root, &line, args.winner)
        }
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", report.to_json())?;
    } else {
        writeln!(out, "{report}")?;
    }
    Ok(match report.verdict {
        Verdict::Certified => EXIT_OK,
        _ => EXIT_NO,
    })
}

/// Reports a file that cannot be parsed at all: rejected.
fn malformed(args: &VerifyArgs, what: &str) -> u8 {
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "verdict": "rejected",
                "rules": args.rules.name(),
                "rejection": {"kind": "Malformed", "reason": format!("malformed file: {what}")},
            })
        );
    } else {
        println!("REJECTED: malformed file: {what}");
    }
    EXIT_NO
}
