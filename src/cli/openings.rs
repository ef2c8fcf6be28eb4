//! `antiproof openings`: The table of White's 20 first moves (`table`
//! is a hidden alias, the command's former name).

use super::EXIT_OK;
use crate::openings::{Certified, Combined, TableRow, scan_certified, table, verify_entry};
use crate::vocab::RuleSet;
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `antiproof openings`.
#[derive(Args, Debug)]
pub struct OpeningsArgs {
    /// Print a JSON array of 20 objects (move, uci, published, reply, year,
    /// source, note, certified, proven_here).
    #[arg(long)]
    json: bool,
    /// Directory of this project's certified proofs (`*.tree`, `*.tree.zst` or
    /// `*.tree.bz2` files with `*.tree`-named `*.json` sidecars), which must exist [default: proofs, read if it
    /// exists].
    #[arg(long)]
    proofs: Option<PathBuf>,
    /// Run the independent checker on every proof file now, under each
    /// rule set its sidecar claims, and show what the file and the checker
    /// say (line, winner, size, rule sets) instead of the sidecar; a
    /// sidecar claiming otherwise is named.
    #[arg(long)]
    verify: bool,
}

/// A certificate's rule set, winner, size and verdict, in words.
fn details(c: &Certified) -> Vec<String> {
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
    if !c.sidecar_disagrees.is_empty() {
        parts.push("its sidecar DISAGREES (see below)".into());
    }
    parts
}

fn describe(c: &Certified) -> String {
    format!("{} ({})", c.line, details(c).join(", "))
}

/// The certificates of a row, those of one line split into parts (files
/// whose lines go past the line's first two moves, made under one rule
/// set for one winner) as one entry.
fn describe_all(certs: &[Certified]) -> Vec<String> {
    let key = |c: &Certified| {
        let two: Vec<&str> = c.line.split_whitespace().take(2).collect();
        (
            two.join(" "),
            c.rule_set.clone(),
            c.winner.clone(),
            c.verified,
            c.sidecar_disagrees.is_empty(),
        )
    };
    let mut groups: Vec<(_, Vec<&Certified>)> = Vec::new();
    for c in certs {
        let k = key(c);
        // A certificate of the line itself (two moves or fewer) is never
        // a part.
        let part = c.line.split_whitespace().nth(2).is_some();
        match groups
            .iter_mut()
            .find(|g| part && g.0 == k && g.1[0].line != k.0)
        {
            Some(g) => g.1.push(c),
            None => groups.push((k, vec![c])),
        }
    }
    groups
        .into_iter()
        .map(|(k, group)| {
            if group.len() == 1 {
                return describe(group[0]);
            }
            let mut merged = group[0].clone();
            merged.positions = group.iter().map(|c| c.positions).sum();
            merged.checked_now = group.iter().all(|c| c.checked_now);
            format!(
                "{} ... ({} files, {})",
                k.0,
                group.len(),
                details(&merged).join(", ")
            )
        })
        .collect()
}

/// The "proven here" column: the move's result as the certificates prove
/// it together, under which rule sets; else how many replies they prove.
fn proven_here(p: &Combined) -> String {
    let winner = p.winner.as_deref().unwrap_or("?");
    let sets = |list: &[String]| {
        if list.len() == RuleSet::ALL.len() {
            "all six rule sets".to_string()
        } else {
            list.join(", ")
        }
    };
    if !p.proven_under.is_empty() {
        return format!("{winner} wins: {}", sets(&p.proven_under));
    }
    if p.replies == 0 {
        return "-".to_string();
    }
    let after = p
        .winner_move
        .as_ref()
        .map_or(String::new(), |m| format!(" to {m}"));
    format!(
        "{winner}: {} of {} replies{after} ({})",
        p.replies_proven,
        p.replies,
        sets(&p.replies_under)
    )
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
        "move  published reply  year  proven here                        certified here"
    )?;
    for r in &rows {
        let certs = describe_all(&r.certified);
        writeln!(
            out,
            "{:<5} {:<9} {:<6} {:<5} {:<34} {}",
            r.san,
            r.published.name(),
            r.reply.as_deref().unwrap_or("-"),
            r.year.map_or("-".to_string(), |y| y.to_string()),
            proven_here(&r.proven_here),
            if certs.is_empty() {
                "-".to_string()
            } else {
                certs.join("; ")
            }
        )?;
    }
    let partial: Vec<&TableRow> = rows
        .iter()
        .filter(|r| r.proven_here.proven_under.is_empty() && r.proven_here.replies > 0)
        .collect();
    if !partial.is_empty() {
        writeln!(out)?;
        for r in partial {
            let p = &r.proven_here;
            writeln!(
                out,
                "1.{}{}: replies not proven here yet: {}",
                r.san,
                p.winner_move
                    .as_ref()
                    .map_or(String::new(), |m| format!(" {m}")),
                p.missing.join(" ")
            )?;
        }
    }
    let disagreeing: Vec<&Certified> = certified
        .iter()
        .filter(|c| !c.sidecar_disagrees.is_empty())
        .collect();
    if !disagreeing.is_empty() {
        writeln!(out)?;
        for c in disagreeing {
            for d in &c.sidecar_disagrees {
                writeln!(out, "{}: the sidecar disagrees with the file: {d}", c.file)?;
            }
        }
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
