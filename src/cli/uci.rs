//! `antiproof uci`: Play proofs as a UCI engine (for chess GUIs).

use super::EXIT_OK;
use super::browse::{open_store, open_tree, sidecar_winner, summary, tree_files};
use super::values;
use crate::rules::Color;
use crate::tables::Tables;
use crate::uci::index::TreeFile;
use crate::uci::{Engine, Proofs};
use crate::vocab::RuleSet;
use crate::web::source::ProofSource;
use crate::wintree::WinTreeError;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `antiproof uci`.
#[derive(Args, Debug)]
pub struct UciArgs {
    /// A Watkins win-tree file to play; may be repeated. With neither
    /// --db nor --tree, every *.tree (or *.tree.zst, *.tree.bz2) file of
    /// --proofs is played.
    #[arg(long, value_name = "FILE")]
    tree: Vec<PathBuf>,
    /// A proof store (redb database) to play; may be repeated.
    #[arg(long, value_name = "PATH")]
    db: Vec<PathBuf>,
    /// The directory of certified proofs played when neither --db nor
    /// --tree is given.
    #[arg(long, value_name = "DIR", default_value = "proofs")]
    proofs: PathBuf,
    /// Rule set (international, fics, joint, optionally +fifty; lichess).
    /// Default: the one the files' sidecars say every file holds under
    /// (the rule set they were made under when it is one of them).
    #[arg(long, value_parser = values::rule_set, value_name = "RULES")]
    rules: Option<RuleSet>,
    /// The winner of the win-tree files (default: the sidecar
    /// `<file>.json`'s `winner`, else read from the tree's shape).
    #[arg(long, value_parser = values::color)]
    winner: Option<Color>,
    /// A directory of endgame tables (`antiproof tables build`): off the
    /// proof, a position of at most 4 men is played by them.
    #[arg(long, value_name = "DIR")]
    tables: Option<PathBuf>,
}

/// The rule set to play under and why: `--rules`, else one every file
/// holds under by its sidecar (`holds_under`, else the rule set it was
/// made under), preferring the first file's own; international for stores
/// alone. Also a warning for each file not recorded to hold under it.
fn rule_set(args: &UciArgs, trees: &[PathBuf]) -> anyhow::Result<(RuleSet, String, Vec<String>)> {
    let mut held: Vec<(String, Vec<RuleSet>, Option<RuleSet>)> = Vec::new();
    for t in trees {
        let c = crate::openings::certified_entry(t)?;
        let made = c.rule_set.parse::<RuleSet>().ok();
        let sets: Vec<RuleSet> = if c.holds_under.is_empty() {
            made.into_iter().collect()
        } else {
            c.holds_under
                .iter()
                .filter_map(|s| s.parse().ok())
                .collect()
        };
        held.push((t.display().to_string(), sets, made));
    }
    let (rules, why) = match args.rules {
        Some(r) => (r, "--rules".to_string()),
        None if held.is_empty() => (
            RuleSet::default(),
            "the default; give --rules for another".to_string(),
        ),
        None => {
            let common: Vec<RuleSet> = RuleSet::ALL
                .into_iter()
                .filter(|r| held.iter().all(|h| h.1.contains(r)))
                .collect();
            let first_made = held[0].2.filter(|r| common.contains(r));
            match first_made.or(common.first().copied()) {
                Some(r) => (
                    r,
                    if held.len() == 1 {
                        "by the file's sidecar".to_string()
                    } else {
                        "every file holds under it by its sidecar".to_string()
                    },
                ),
                None => anyhow::bail!(
                    "the proofs hold under no one rule set by their sidecars: give --rules ({})",
                    held.iter()
                        .map(|h| format!(
                            "{}: {}",
                            h.0,
                            h.1.iter().map(|r| r.name()).collect::<Vec<_>>().join(" ")
                        ))
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            }
        }
    };
    let warnings = held
        .iter()
        .filter(|h| !h.1.contains(&rules))
        .map(|h| format!("{} is not recorded to hold under {rules}", h.0))
        .collect();
    Ok((rules, why, warnings))
}

/// Runs `antiproof uci`.
pub fn run(args: UciArgs) -> anyhow::Result<u8> {
    let trees = tree_files(&args.tree, &args.db, &args.proofs)?;
    // The files first, so that a file that cannot be read is named as
    // such (not as a sidecar's problem).
    let mut files = Vec::new();
    for t in &trees {
        files.push(TreeFile::open(t).map_err(|e| match e {
            // I/O errors name the path already.
            e @ WinTreeError::Io { .. } => anyhow::Error::new(e),
            e => anyhow::anyhow!("{}: {e}", t.display()),
        })?);
    }
    let (rules, why, warnings) = rule_set(&args, &trees)?;
    let mut opened = Vec::new();
    for (t, file) in trees.iter().zip(files) {
        let winner = args.winner.or_else(|| sidecar_winner(t));
        let source: Box<dyn ProofSource> = Box::new(open_tree(t, rules.stalemate, winner)?);
        opened.push((source, file));
    }
    let mut stores: Vec<Box<dyn ProofSource>> = Vec::new();
    for d in &args.db {
        stores.push(Box::new(open_store(d, rules)?));
    }
    let tables = match &args.tables {
        Some(dir) => {
            anyhow::ensure!(
                dir.is_dir(),
                "table directory {}: no such directory",
                dir.display()
            );
            Some(Tables::open(dir, rules))
        }
        None => None,
    };
    let mut about = vec![format!(
        "antiproof plays {} under {} ({why})",
        summary(&trees, !args.tree.is_empty(), &args.db, &args.proofs),
        rules.describe()
    )];
    about.extend(warnings.iter().map(|w| format!("warning: {w}")));
    about.push(match &args.tables {
        Some(d) => format!(
            "off the proof: the endgame tables in {} where they hold the position, else the first legal move",
            d.display()
        ),
        None => "off the proof: the first legal move in UCI order (--tables DIR: endgame tables)"
            .to_string(),
    });
    let proofs = Proofs::new(opened, stores, rules, tables);
    let mut out = std::io::stdout().lock();
    match Engine::new(&proofs, about).run(std::io::stdin().lock(), &mut out) {
        // The GUI went away (its end of the pipe closed): the engine's
        // session is over, which is no error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(EXIT_OK),
        r => {
            r.context("UCI")?;
            Ok(EXIT_OK)
        }
    }
}
