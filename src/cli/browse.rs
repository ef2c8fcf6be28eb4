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

pub(super) fn sidecar_winner(tree: &Path) -> Option<Color> {
    let text = crate::fsutil::read_regular_to_string(
        &crate::wintree::compressed::plain_name(tree).with_extension("json"),
    )
    .ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v.get("winner")?.as_str()?.parse().ok()
}

/// How many proofs at most a start-up line names one by one; past that it
/// gives counts (`64 win-tree files in proofs/`).
const NAMED: usize = 3;

/// The win-tree files a command reads: `tree` (`--tree`), else (with no
/// store given either) every proof file of the directory `proofs`.
pub(super) fn tree_files(
    tree: &[PathBuf],
    db: &[PathBuf],
    proofs: &Path,
) -> anyhow::Result<Vec<PathBuf>> {
    let mut trees = tree.to_vec();
    if trees.is_empty() && db.is_empty() {
        if proofs.is_dir() {
            trees = crate::wintree::compressed::tree_files(proofs)
                .with_context(|| format!("reading {}", proofs.display()))?;
        }
        if trees.is_empty() {
            anyhow::bail!(
                "no proof to read: give --tree FILE or --db PATH (no *.tree, *.tree.zst or *.tree.bz2 file in {})",
                proofs.display()
            );
        }
    }
    Ok(trees)
}

/// The proofs read, in a few words for a start-up line: their names when
/// there are at most [`NAMED`], else how many files (and from which
/// directory, when they are those of `proofs` because no `--tree` was
/// given) and stores.
pub(super) fn summary(trees: &[PathBuf], named: bool, db: &[PathBuf], proofs: &Path) -> String {
    if trees.len() + db.len() <= NAMED {
        let names: Vec<String> = trees
            .iter()
            .chain(db)
            .map(|p| p.display().to_string())
            .collect();
        return names.join(", ");
    }
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut parts = Vec::new();
    if !trees.is_empty() {
        let mut files = plural(trees.len(), "win-tree file", "win-tree files");
        if !named {
            files.push_str(&format!(" in {}/", proofs.display()));
        }
        parts.push(files);
    }
    if !db.is_empty() {
        parts.push(plural(db.len(), "proof store", "proof stores"));
    }
    parts.join(" and ")
}

/// Opens one win-tree file as a proof source, the error naming the file
/// once.
pub(super) fn open_tree(
    t: &Path,
    rules: crate::rules::Rules,
    winner: Option<Color>,
) -> anyhow::Result<TreeSource> {
    // I/O errors name the path already.
    TreeSource::open(t, rules, winner).map_err(|e| match e {
        SourceError::WinTree(e @ WinTreeError::Io { .. }) => anyhow::Error::new(e),
        SourceError::WinTree(e) => anyhow::anyhow!("{}: {e}", t.display()),
        e => anyhow::anyhow!("{}: {e}", t.display()),
    })
}

/// Opens a proof store as a proof source, the error naming it once.
pub(super) fn open_store(
    d: &Path,
    rules: crate::vocab::RuleSet,
) -> anyhow::Result<RecordSource<crate::store::Store>> {
    RecordSource::open_store(d, rules).map_err(|e| match e {
        SourceError::Store(e) => e.naming(d),
        e => anyhow::anyhow!("{}: {e}", d.display()),
    })
}

impl SourceArgs {
    /// The win-tree files to read: `--tree`, else (with no `--db`) every
    /// proof file of `--proofs`.
    pub fn tree_files(&self) -> anyhow::Result<Vec<PathBuf>> {
        tree_files(&self.tree, &self.db, &self.proofs)
    }

    /// The proofs read, in a few words for a start-up line ([`summary`]).
    pub fn summary(&self) -> anyhow::Result<String> {
        Ok(summary(
            &self.tree_files()?,
            !self.tree.is_empty(),
            &self.db,
            &self.proofs,
        ))
    }

    /// Opens the proofs named (or `proofs/*.tree`).
    pub fn open(&self) -> anyhow::Result<Box<dyn ProofSource>> {
        let trees = self.tree_files()?;
        let mut sources: Vec<Box<dyn ProofSource>> = Vec::new();
        for t in &trees {
            let winner = self.winner.or_else(|| sidecar_winner(t));
            sources.push(Box::new(open_tree(t, self.rules.stalemate(), winner)?));
        }
        for d in &self.db {
            sources.push(Box::new(open_store(d, self.rules.rule_set())?));
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
            errln!("antiproof: error: {e}");
            return Ok(EXIT_ERROR);
        }
        Err(e) => return Err(e.into()),
    };
    let mut out = crate::cli::out::stdout();
    if args.json {
        writeln!(out, "{}", v.json())?;
    } else {
        writeln!(out, "Proof:   {}", args.source.summary()?)?;
        write!(out, "{}", v.text())?;
    }
    out.flush()?;
    Ok(EXIT_OK)
}
