//! `antiproof browse`: Show the proof tree at a line in the terminal.

use super::values;
use super::{EXIT_ERROR, EXIT_OK};
use crate::rules::Color;
use crate::web::source::{Forest, ProofSource, RecordSource, SourceError, TreeSource};
use crate::web::view;
use crate::wintree::WinTreeError;
use anyhow::Context;
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where the proof comes from (shared by `browse` and `serve`).
#[derive(Args, Debug, Clone)]
pub struct SourceArgs {
    /// A proof store (redb database) to read; may be repeated.
    #[arg(long, value_name = "PATH")]
    pub db: Vec<PathBuf>,
    /// A Watkins win-tree file to read; may be repeated. With neither
    /// --db nor --tree, every *.tree (or *.tree.zst, *.tree.bz2) file of
    /// --proofs is read. A .bz2 or .zst file is decompressed once to an
    /// unlinked temporary file.
    #[arg(long, value_name = "FILE")]
    pub tree: Vec<PathBuf>,
    /// The directory of certified proofs read when neither --db nor --tree
    /// is given.
    #[arg(long, value_name = "DIR", default_value = "proofs")]
    pub proofs: PathBuf,
    #[command(flatten)]
    pub rules: values::RuleArgs,
    /// The winner of the win-tree files (default: the sidecar
    /// `<file>.json`'s `winner`, else read from the tree's shape).
    #[arg(long, value_parser = values::color)]
    pub winner: Option<Color>,
}

fn sidecar_winner(tree: &Path) -> Option<Color> {
    let text = crate::fsutil::read_regular_to_string(
        &crate::wintree::compressed::plain_name(tree).with_extension("json"),
    )
    .ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v.get("winner")?.as_str()?.parse().ok()
}

impl SourceArgs {
    /// Opens the proofs named (or `proofs/*.tree`).
    pub fn open(&self) -> anyhow::Result<Box<dyn ProofSource>> {
        let mut trees = self.tree.clone();
        if trees.is_empty() && self.db.is_empty() {
            let dir = &self.proofs;
            if dir.is_dir() {
                trees = crate::wintree::compressed::tree_files(dir)
                    .with_context(|| format!("reading {}", dir.display()))?;
            }
            if trees.is_empty() {
                anyhow::bail!(
                    "no proof to read: give --tree FILE or --db PATH (no *.tree, *.tree.zst or *.tree.bz2 file in {})",
                    dir.display()
                );
            }
        }
        let mut sources: Vec<Box<dyn ProofSource>> = Vec::new();
        for t in &trees {
            let winner = self.winner.or_else(|| sidecar_winner(t));
            // Each error says the path once: I/O and store errors name it
            // already.
            let s = TreeSource::open(t, self.rules.stalemate(), winner).map_err(|e| match e {
                SourceError::WinTree(e @ WinTreeError::Io { .. }) => anyhow::Error::new(e),
                SourceError::WinTree(e) => anyhow::anyhow!("{}: {e}", t.display()),
                e => anyhow::anyhow!("{}: {e}", t.display()),
            })?;
            sources.push(Box::new(s));
        }
        for d in &self.db {
            let s = RecordSource::open_store(d, self.rules.rule_set()).map_err(|e| match e {
                SourceError::Store(e) => e.naming(d),
                e => anyhow::anyhow!("{}: {e}", d.display()),
            })?;
            sources.push(Box::new(s));
        }
        Ok(if sources.len() == 1 {
            sources.pop().expect("one source")
        } else {
            Box::new(Forest::new(sources))
        })
    }
}

/// Arguments of `antiproof browse`.
#[derive(Args, Debug)]
pub struct BrowseArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Print the JSON object the HTTP endpoint answers.
    #[arg(long)]
    json: bool,
    /// The line from the start position: UCI or SAN moves, separated by
    /// spaces or commas (`e2e3 d7d5` or `e3,d5`).
    #[arg(value_name = "MOVES")]
    moves: Vec<String>,
}

/// Runs `antiproof browse`.
pub fn run(args: BrowseArgs) -> anyhow::Result<u8> {
    let source = args.source.open()?;
    let v = match view::view(&*source, args.source.rules.stalemate(), &args.moves) {
        Ok(v) => v,
        Err(e) if e.is_bad_request() => {
            eprintln!("antiproof: error: {e}");
            return Ok(EXIT_ERROR);
        }
        Err(e) => return Err(e.into()),
    };
    let mut out = crate::cli::out::stdout();
    if args.json {
        writeln!(out, "{}", v.json())?;
    } else {
        writeln!(out, "Proof:   {}", source.name())?;
        write!(out, "{}", v.text())?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}
