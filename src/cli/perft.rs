//! `antiproof perft`.

use super::values;
use crate::rules::{Position, perft};
use anyhow::Context;
use clap::Args;
use std::io::Write;
use std::time::Instant;

#[derive(Args, Debug)]
pub struct PerftArgs {
    /// Start from this FEN (default: the standard start position).
    #[arg(long)]
    fen: Option<String>,
    /// Print the count under each first move.
    #[arg(long)]
    divide: bool,
    /// Print timing to standard error.
    #[arg(long)]
    time: bool,
    /// Depth in plies (at most 20).
    #[arg(value_parser = values::perft_depth())]
    depth: u32,
}

pub fn run(args: PerftArgs) -> anyhow::Result<u8> {
    let pos = match &args.fen {
        Some(f) => Position::from_fen(f).with_context(|| format!("reading --fen {f:?}"))?,
        None => Position::startpos(),
    };
    let start = Instant::now();
    let mut out = crate::cli::out::stdout();
    let total = if args.divide {
        let rows = perft::divide(&pos, args.depth);
        for (m, n) in &rows {
            writeln!(out, "{m}: {n}")?;
        }
        rows.iter().map(|r| r.1).sum::<u64>()
    } else {
        perft::perft(&pos, args.depth)
    };
    writeln!(out, "{total}")?;
    if args.time {
        let s = start.elapsed().as_secs_f64();
        errln!(
            "{total} leaves in {s:.3} s ({:.1} M leaves/s)",
            total as f64 / s / 1e6
        );
    }
    Ok(super::EXIT_OK)
}
