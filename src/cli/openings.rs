//! `antiproof openings`: The table of White's 20 first moves (`table`
//! is a hidden alias, the command's former name).

use super::EXIT_OK;
use crate::openings::{Certified, scan_certified, table, verify_entry};
use crate::vocab::RuleSet;
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `antiproof openings`.
#[derive(Args, Debug)]
pub struct OpeningsArgs {
    /// Print a JSON array of 20 objects (move, uci, published, reply, year,
    /// source, note, certified).
    #[arg(long)]
    json: bool,
    /// Directory of this project's certified proofs (`*.tree`, `*.tree.zst` or
    /// `*.tree.bz2` files with `*.tree`-named `*.json` sidecars), which must exist [default: proofs, read if it
    /// exists].
    #[arg(long)]
    proofs: Option<PathBuf>,
    /// Run the independent checker on every proof file now (instead of
    /// trusting the sidecar's `verified`).
    #[arg(long)]
    verify: bool,
}

fn describe(c: &Certified) -> String {
    let s = &c.line;
    let mut parts = vec![c.rule_set.clone()];
    if let Some(w) = &c.winner {
        parts.push(format!("{w} wins"));
    }
    if let Some(p) = c.positions {
        parts.push(format!("{} positions", crate::web::view::group(p)));
    }
    parts.push(match c.verified {
        Some(true) if c.checked_now => "verified now".into(),
        Some(true) => "verified".into(),
        Some(false) if c.checked_now => "NOT certified by the checker now".into(),
        Some(false) => "NOT verified".into(),
        None => "verification not recorded".into(),
    });
    format!("{s} ({})", parts.join(", "))
}

/// Runs `antiproof openings`.
pub fn run(args: OpeningsArgs) -> anyhow::Result<u8> {
    let mut certified = match &args.proofs {
        Some(dir) => scan_certified(dir)?,
        // The default: none certified when run away from the project.
        None if Path::new("proofs").is_dir() => scan_certified(Path::new("proofs"))?,
        None => Vec::new(),
    };
    if args.verify {
        for c in &mut certified {
            verify_entry(c)?;
        }
    }
    let rows = table(&certified);
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?;
        return Ok(EXIT_OK);
    }
    writeln!(
        out,
        "move  published reply  year  certified under            certified here"
    )?;
    for r in &rows {
        let certs: Vec<String> = r.certified.iter().map(describe).collect();
        // The rule sets under which some certificate of this move's lines
        // is verified (or recorded without a verdict): those its sidecar
        // says it holds under, else the one it was made under.
        let mut sets: Vec<&str> = r
            .certified
            .iter()
            .filter(|c| c.verified != Some(false))
            .flat_map(|c| {
                if c.holds_under.is_empty() {
                    vec![c.rule_set.as_str()]
                } else {
                    c.holds_under.iter().map(String::as_str).collect()
                }
            })
            .collect();
        sets.sort_unstable();
        sets.dedup();
        writeln!(
            out,
            "{:<5} {:<9} {:<6} {:<5} {:<26} {}",
            r.san,
            r.published.name(),
            r.reply.as_deref().unwrap_or("-"),
            r.year.map_or("-".to_string(), |y| y.to_string()),
            if sets.is_empty() {
                "-".to_string()
            } else if sets.len() == RuleSet::ALL.len() {
                "all six rule sets".to_string()
            } else {
                sets.join(", ")
            },
            if certs.is_empty() {
                "-".to_string()
            } else {
                certs.join("; ")
            }
        )?;
    }
    writeln!(out)?;
    writeln!(out, "Sources (full citations in data/openings.tsv):")?;
    for r in &rows {
        writeln!(out, "  {:<4} {}", r.san, r.source)?;
    }
    writeln!(
        out,
        "Certified proofs read from {}/ ({} files).",
        args.proofs
            .as_deref()
            .unwrap_or(Path::new("proofs"))
            .display(),
        certified.len()
    )?;
    Ok(EXIT_OK)
}
