//! `antiproof export`: write a stored proof as a Watkins win-tree file.
//!
//! The flags resolved into an [`crate::export::Source`] and
//! [`crate::export::Layout`]; the walk, the fifty-move rule's headroom,
//! table expansion, merging and splitting are the library's
//! ([`crate::export`]). `--expand-tables --tables DIR` replaces table
//! leaves by the tables' subtrees; under the fifty-move rule
//! (`--rules lichess`, `--fifty-move-rule`) the rule set's own records are
//! followed and a position reached past its headroom is refused, naming
//! the line.

use super::values;
use super::{EXIT_NO, EXIT_OK};
use crate::export::{ExportError, Layout, Source};
use crate::rules::{Color, Position};
use crate::tables::Tables;
use crate::wintree::{WinTree, WriteOptions, compressed};
use anyhow::Context;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `antiproof export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The proof store (default: antiproof.redb in the current directory).
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,
    #[command(flatten)]
    rules: values::RuleArgs,
    /// The winner (default: the side with a win record at the line or just
    /// after it).
    #[arg(long, value_parser = values::color)]
    winner: Option<Color>,
    /// The file to write; a name ending in `.zst` (`x.tree.zst`) is
    /// written zstd-compressed, as `verify`, `browse`, `serve` and
    /// `openings` read it.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: PathBuf,
    /// Where the file would be larger than SIZE (`50M`; compressed, for a
    /// `.zst` name), write one certificate a reply instead: below the
    /// line's root, each move of the loser (after the winner's move where
    /// the winner moves first) gets a file of its own, rooted there with
    /// its whole line as prolog, named after the output with the moves
    /// added (`h4.tree.zst` -> `h4-b5-a3.tree.zst`, ...; `h4.joint.tree`
    /// -> `h4-b5-a3.joint.tree`), split again where still too large.
    /// `antiproof openings` adds such files up again.
    /// At most 100,000 files are written (a smaller SIZE is refused once
    /// it needs more, the files written so far removed).
    #[arg(long, value_name = "SIZE", value_parser = values::file_size)]
    split_above: Option<u64>,
    /// zstd level of a `.zst` output (1 to 22; higher: smaller and
    /// slower).
    #[arg(long, value_parser = values::zstd_level(), default_value_t = crate::wintree::compressed::ZSTD_LEVEL)]
    zstd_level: i32,
    /// Write no subtree-size table.
    #[arg(long)]
    no_sizes: bool,
    /// Print nothing when the file is written.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Start the line from this FEN instead of the standard start position
    /// (check the file with `verify --tree FILE --fen FEN`).
    #[arg(long)]
    fen: Option<String>,
    /// Endgame tables (a directory of `antiproof tables build`), for
    /// `--expand-tables`.
    #[arg(long, value_name = "DIR")]
    tables: Option<PathBuf>,
    /// Replace the leaves resting on endgame tables by full subtrees from
    /// the tables (needs --tables): the file then needs no tables.
    #[arg(long, requires = "tables")]
    expand_tables: bool,
    /// Merge: write this win-tree file's proof with each open leaf (a leaf
    /// that is not a finished game, such as those `verify --tree FILE
    /// --obligations OUT` lists) replaced by its proof from the store
    /// (`prove --obligations OUT`), positions shared. Leaves of 4 men or
    /// fewer without a record stay table leaves (or are expanded with
    /// --expand-tables). A store lacking a proof of an open leaf: exit 1,
    /// no file written.
    #[arg(long, value_name = "FILE", conflicts_with = "moves")]
    tree: Option<PathBuf>,
    /// The line from the start position (UCI or SAN); it becomes the
    /// file's prolog. Default: the line the store notes as proven (with
    /// several, they are named and one must be given).
    moves: Vec<String>,
}

/// Runs `antiproof export`.
pub fn run(args: ExportArgs) -> anyhow::Result<u8> {
    let rule_set = args.rules.rule_set();
    let db = args
        .db
        .clone()
        .unwrap_or_else(|| PathBuf::from(super::DEFAULT_DB));
    let mut inputs = vec![db.as_path()];
    inputs.extend(args.tables.as_deref());
    inputs.extend(args.tree.as_deref());
    let (_store, reader, path) = super::open_store(Some(&db))?;
    super::check_output(&args.output, crate::fsutil::OutputKind::WinTree, &inputs)?;
    let start = match &args.fen {
        Some(f) => super::prove::root_from_fen(f, rule_set.fifty_move)?,
        None => Position::startpos(),
    };
    let tables = if args.expand_tables {
        let dir = args.tables.as_ref().expect("clap: requires --tables");
        if !dir.is_dir() {
            anyhow::bail!("--tables {}: not a directory", dir.display());
        }
        Some(Tables::open(dir, rule_set))
    } else {
        None
    };
    let file = match &args.tree {
        Some(p) => {
            Some(WinTree::open(p).with_context(|| format!("reading --tree {}", p.display()))?)
        }
        None => None,
    };
    let (root, line) = match &file {
        Some(t) => {
            let mut pos = start;
            let mut line = Vec::new();
            for code in t.prolog() {
                let m = crate::rules::move_of_code(&pos, code).ok_or_else(|| {
                    anyhow::anyhow!(
                        "the prolog of the --tree file has an illegal move {}",
                        code.uci()
                    )
                })?;
                pos = pos.play(m);
                line.push(m);
            }
            (pos, line)
        }
        None if args.moves.is_empty() && args.fen.is_none() => {
            let moves = super::proven_lines::line_for(&db, rule_set, "export -o FILE")?;
            start
                .play_line(&moves)
                .map_err(|e| anyhow::anyhow!("bad move at {e}"))?
        }
        None => start
            .play_line(&args.moves)
            .map_err(|e| anyhow::anyhow!("bad move at {e}"))?,
    };
    let winner = match (args.winner, &file) {
        (Some(w), _) => w,
        // The side whose nodes have one child: the root's side when the
        // root has one.
        (None, Some(t)) => match t.children(0)?.count() {
            1 => root.turn(),
            _ => !root.turn(),
        },
        (None, None) => match crate::export::stored_winner(&reader, rule_set, &root)? {
            Some(w) => w,
            None => {
                errln!(
                    "antiproof: no proof in {} at this line under {}",
                    path.display(),
                    rule_set.describe()
                );
                return Ok(EXIT_NO);
            }
        },
    };
    let source = Source {
        rule_set,
        winner,
        start,
        line,
        merge: file.as_ref(),
        expand: tables.as_ref(),
    };
    let walked = match crate::export::walk(&reader, &source) {
        Ok(w) => w,
        Err(e @ ExportError::Broken { .. }) => {
            errln!("antiproof: {e}");
            return Ok(EXIT_NO);
        }
        Err(e) => return Err(e.into()),
    };
    let layout = Layout {
        opts: WriteOptions {
            size_table: !args.no_sizes,
            size_depth: None,
        },
        zstd: compressed::is_zstd_name(&args.output).then_some(args.zstd_level),
        split_above: args.split_above,
        output: &args.output,
        inputs: &inputs,
    };
    let parts = crate::export::write(&walked, &layout)?;
    if !args.quiet {
        report(&walked, &parts, rule_set, layout.zstd.is_some())?;
    }
    Ok(EXIT_OK)
}

/// The lines `export` prints: one a file written, and for a split, one
/// for the whole.
fn report(
    ex: &crate::export::Walked,
    parts: &[crate::export::Part],
    rule_set: crate::vocab::RuleSet,
    zstd: bool,
) -> anyhow::Result<()> {
    let split = crate::export::is_split(parts);
    let winner: Color = ex.winner;
    let mut out = crate::cli::out::stdout();
    for part in parts {
        writeln!(
            out,
            "wrote {}: rules {}, winner {}, {} positions, {} node slots ({} transpositions), {} size entries, {} bytes{}{}{}",
            part.path.display(),
            rule_set,
            winner,
            if split {
                ex.dag.reachable(part.node)
            } else {
                ex.dag.nodes.len() as u64
            },
            part.slots,
            part.transpositions,
            part.size_entries,
            part.len,
            if zstd {
                format!(" ({} uncompressed)", part.raw_len)
            } else {
                String::new()
            },
            if split || ex.grafted == 0 {
                String::new()
            } else {
                format!(", {} open leaves replaced by stored proofs", ex.grafted)
            },
            if split {
                String::new()
            } else if ex.table_leaves > 0 {
                format!(", {} leaves rest on endgame tables", ex.table_leaves)
            } else if ex.expanded > 0 {
                format!(
                    ", {} winner positions expanded from the endgame tables",
                    ex.expanded
                )
            } else {
                String::new()
            }
        )?;
        if part.too_large {
            writeln!(
                out,
                "  (over --split-above: no reply of the loser below its root to split at)"
            )?;
        }
    }
    if split {
        writeln!(
            out,
            "split into {} files, one a reply (a DAG of {} positions{}{}); each is a certificate of its own line",
            parts.len(),
            ex.dag.nodes.len(),
            if ex.grafted > 0 {
                format!(", {} open leaves replaced by stored proofs", ex.grafted)
            } else {
                String::new()
            },
            if ex.table_leaves > 0 {
                format!(", {} leaves rest on endgame tables", ex.table_leaves)
            } else {
                String::new()
            }
        )?;
    }
    Ok(())
}
