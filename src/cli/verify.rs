//! `antiproof verify`: certify a proof from the store or a win-tree file
//! with the independent checker (`crate::check`, shakmaty rules only).

use super::values;
use super::{EXIT_NO, EXIT_OK};
use crate::check::{self, Rules, TreeOptions, Verdict, game};
use crate::store::{Store, StoreReader};
use crate::wintree::{WinTree, WinTreeError};
use anyhow::Context;
use clap::Args;
use shakmaty::variant::Antichess;
use std::io::Write;
use std::path::{Path, PathBuf};

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
    /// Rule set: international (lichess), fics or joint.
    #[arg(long, default_value = "international", value_parser = values::rules)]
    rules: Rules,
    /// The side that wins (default: inferred from the proof's root).
    #[arg(long, value_parser = values::check_color)]
    winner: Option<shakmaty::Color>,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
    /// Endgame tables (a directory of `antiproof tables build`): a leaf of
    /// 4 men or fewer that is not a finished game is accepted when a table
    /// scores it a win for the winner; every table used (and those below
    /// it) is certified in this run, unless the directory's certification
    /// records hold a certification of the same file bytes (SHA-256).
    /// Without it such leaves leave the proof not certified.
    #[arg(long, value_name = "DIR")]
    tables: Option<PathBuf>,
    /// With --tables: ignore the certification records, certify every
    /// table used entry by entry (and record it afresh).
    #[arg(long, requires = "tables")]
    recertify: bool,
    /// The line (and a file's prolog) starts from this FEN instead of the
    /// standard start position.
    #[arg(long)]
    fen: Option<String>,
    /// Worker threads (default: all cores; at most 1024).
    #[arg(long, value_parser = values::threads())]
    threads: Option<usize>,
    /// Check the file this many times and report the best speed
    /// (benchmarking).
    #[arg(long, default_value_t = 1, hide = true, value_parser = values::repeat())]
    repeat: u32,
    /// The line to certify, from the start position (UCI or SAN). With
    /// --tree it must begin with the file's prolog; default: the file's
    /// root. With the store: default the start position.
    moves: Vec<String>,
}

/// Runs `antiproof verify`.
pub fn run(args: VerifyArgs) -> anyhow::Result<u8> {
    let tables = match &args.tables {
        Some(dir) => {
            if !dir.is_dir() {
                anyhow::bail!("--tables {}: not a directory", dir.display());
            }
            Some(std::sync::Arc::new(
                check::LeafTables::open(dir, args.rules).recertify(args.recertify),
            ))
        }
        None => None,
    };
    let start = match &args.fen {
        Some(f) => {
            let fen: shakmaty::fen::Fen = f
                .parse()
                .map_err(|e| anyhow::anyhow!("reading --fen {f:?}: {e}"))?;
            fen.into_position::<Antichess>(shakmaty::CastlingMode::Standard)
                .map_err(|e| anyhow::anyhow!("reading --fen {f:?}: {e}"))?
        }
        None => Antichess::default(),
    };
    let report = match &args.tree {
        Some(path) => {
            let tree = match WinTree::open(path) {
                Ok(t) => t,
                Err(e @ WinTreeError::Io { .. }) => return Err(e.into()),
                Err(e) => return Ok(malformed(&args, &e.to_string())),
            };
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
                start: args.fen.as_ref().map(|_| start.clone()),
                threads: args.threads,
                line,
                tables: tables.clone(),
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
            let (_store, reader, _) = open_store(args.db.as_deref())?;
            let (root, moves) = game::play_line(&start, &args.moves)
                .map_err(|e| anyhow::anyhow!("bad line: {e}"))?;
            let codes: Vec<_> = moves.iter().map(game::move_code).collect();
            let (line, _) = game::san_line(&start, &codes);
            let check = || {
                check::check_store_with(
                    &reader,
                    args.rules,
                    &root,
                    &line,
                    args.winner,
                    tables.as_deref(),
                )
            };
            match args.threads {
                Some(t) => rayon::ThreadPoolBuilder::new()
                    .num_threads(t)
                    .build()
                    .context("cannot start the checker's threads")?
                    .install(check),
                None => check(),
            }
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

/// Opens the proof store `db` (default: antiproof.redb in the current
/// directory) for reading, as `verify` and `export` do: the store, a read
/// transaction on it and the path opened.
pub(super) fn open_store(db: Option<&Path>) -> anyhow::Result<(Store, StoreReader, PathBuf)> {
    let path = db.map_or_else(|| PathBuf::from("antiproof.redb"), Path::to_path_buf);
    let store = Store::open_read_only(&path)
        .with_context(|| format!("cannot open the proof store {}", path.display()))?;
    let reader = store
        .reader()
        .with_context(|| format!("cannot read the proof store {}", path.display()))?;
    Ok((store, reader, path))
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
