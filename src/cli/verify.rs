//! `antiproof verify`: certify a proof from the store or a win-tree file
//! with the independent checker (`crate::check`, shakmaty rules only).

use super::values;
use super::{EXIT_NO, EXIT_OK, EXIT_OPEN};
use crate::check::{self, TreeOptions, Verdict, game};
use crate::wintree::{WinTree, WinTreeError};
use anyhow::Context;
use clap::Args;
use shakmaty::variant::Antichess;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// Arguments of `antiproof verify`.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The proof store to read (default: antiproof.redb in the current
    /// directory).
    #[arg(long, value_name = "PATH", conflicts_with = "tree")]
    db: Option<PathBuf>,
    /// A Watkins win-tree file to check instead of the store; a bzip2 or
    /// zstd file (`.bz2`, `.zst`, told by its first bytes) is decompressed
    /// once to an unlinked temporary file (in $ANTIPROOF_STATE_DIR/cache,
    /// else $TMPDIR) and checked from there.
    #[arg(long, value_name = "FILE")]
    tree: Option<PathBuf>,
    #[command(flatten)]
    rules: values::RuleArgs,
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
    /// With --tree: write the open leaves (positions that are not
    /// finished games and not scored by a certified endgame table), each
    /// distinct position once, to this file as EPD lines with their lines
    /// from the start (`prove --obligations` proves them). Written unless
    /// the proof is rejected; exit 4 when there are open leaves.
    #[arg(long, value_name = "OUT", requires = "tree")]
    obligations: Option<PathBuf>,
    /// With --tables: ignore the certification records, certify every
    /// table used entry by entry (and record it afresh).
    #[arg(long, requires = "tables")]
    recertify: bool,
    /// The line (and a file's prolog) starts from this FEN instead of the
    /// standard start position. Under the fifty-move rule its half-move
    /// clock field (0 to 100) is the clock there (0 without --fen).
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

/// The half-move clock the fifty-move rule starts from: `--fen`'s
/// half-move field (the fifth), 0 when it has none or there is no `--fen`.
/// A field that is not a number, or over 100, is an error naming it.
fn start_clock(fen: Option<&str>) -> anyhow::Result<u32> {
    let Some(field) = fen.and_then(|f| f.split_ascii_whitespace().nth(4)) else {
        return Ok(0);
    };
    match field.parse::<u32>() {
        Ok(c) if c <= crate::vocab::FIFTY_MOVE_PLIES => Ok(c),
        Ok(_) => anyhow::bail!(
            "--fen: the half-move clock field is {field}, over {} (the fifty-move rule would \
             already have drawn the game)",
            crate::vocab::FIFTY_MOVE_PLIES
        ),
        Err(_) => {
            anyhow::bail!("--fen: the half-move clock field {field:?} is not a number of plies")
        }
    }
}

/// Runs `antiproof verify`.
pub fn run(args: VerifyArgs) -> anyhow::Result<u8> {
    let rule_set = args.rules.rule_set();
    let fifty_move = if rule_set.fifty_move {
        Some(start_clock(args.fen.as_deref())?)
    } else {
        None
    };
    // Under the fifty-move rule the store's proof is checked as the
    // win-tree file `export` writes of it: the checker follows the clock
    // along every path of a file, transpositions included.
    let stored = match (&args.tree, fifty_move) {
        (None, Some(_)) => {
            let (_store, reader, path) = super::open_store(args.db.as_deref())?;
            let start = match &args.fen {
                Some(f) => super::prove::root_from_fen(f, true)?,
                None => crate::rules::Position::startpos(),
            };
            let winner = args.winner.map(|c| match c {
                shakmaty::Color::White => crate::rules::Color::White,
                shakmaty::Color::Black => crate::rules::Color::Black,
            });
            match super::export::stored_tree_bytes(&reader, rule_set, start, &args.moves, winner)? {
                Ok(bytes) => Some(WinTree::from_vec(bytes).with_context(|| {
                    format!("the proof stored in {} as a win tree", path.display())
                })?),
                Err(why) => {
                    return Ok(rejected_unchecked(
                        &args,
                        "NoProof",
                        &format!("{}: {why}", path.display()),
                    ));
                }
            }
        }
        _ => None,
    };
    let tables = match &args.tables {
        Some(dir) => {
            if !dir.is_dir() {
                anyhow::bail!("--tables {}: not a directory", dir.display());
            }
            Some(std::sync::Arc::new(
                check::LeafTables::open_rule_set(dir, rule_set).recertify(args.recertify),
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
    let file = match (&args.tree, stored) {
        (Some(path), _) => match WinTree::open(path) {
            Ok(t) => Some(t),
            Err(e @ WinTreeError::Io { .. }) => return Err(e.into()),
            Err(e) => return Ok(malformed(&args, &e.to_string())),
        },
        (None, stored) => stored,
    };
    let report = match file {
        Some(tree) => {
            let prolog = tree.prolog();
            let (_, moves) = game::play_line(&start, &args.moves)
                .map_err(|e| anyhow::anyhow!("bad move at {e}"))?;
            let line = if moves.is_empty() {
                Vec::new()
            } else {
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
            let progress = std::io::stderr()
                .is_terminal()
                .then(|| Progress::start(tree.len() as u64));
            let opts = TreeOptions {
                progress: progress.as_ref().map(|p| p.counter.clone()),
                rules: args.rules.stalemate(),
                fifty_move,
                winner: args.winner,
                start: args.fen.as_ref().map(|_| start.clone()),
                threads: args.threads,
                line,
                tables: tables.clone(),
                open_leaves: true,
                // Every open leaf described only when they are all wanted:
                // describing one walks to its slot.
                open_listed: if args.obligations.is_some() {
                    usize::MAX
                } else {
                    check::OPEN_NAMED
                },
            };
            let mut best = check::check_tree(&tree, &opts);
            drop(progress);
            for _ in 1..args.repeat {
                let r = check::check_tree(&tree, &opts);
                if r.elapsed < best.elapsed {
                    best = r;
                }
            }
            best
        }
        None => {
            let (_store, reader, _) = super::open_store(args.db.as_deref())?;
            let (root, moves) = game::play_line(&start, &args.moves)
                .map_err(|e| anyhow::anyhow!("bad move at {e}"))?;
            let codes: Vec<_> = moves.iter().map(game::move_code).collect();
            let (line, _) = game::san_line(&start, &codes);
            let check = || {
                check::check_store_with(
                    &reader,
                    args.rules.stalemate(),
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
    if let (Some(out), Some(tree)) = (&args.obligations, &args.tree)
        && !matches!(report.verdict, Verdict::Rejected(_))
    {
        write_obligations(out, tree, &report)?;
    }
    Ok(match report.verdict {
        Verdict::Certified => EXIT_OK,
        Verdict::Open { .. } => EXIT_OPEN,
        _ => EXIT_NO,
    })
}

/// The first line of an obligations file (read by `prove --obligations`,
/// see `super::obligations`).
const OBLIGATIONS_MAGIC: &str = "# antiproof obligations";

/// Writes the open leaves of `report` (a check of the win-tree file
/// `tree`) to `out`, atomically: header comment lines naming the file, the
/// rule set (the stalemate rule, and whether the fifty-move rule is on)
/// and the winner, then one `EPD ; line: UCI moves` line a distinct
/// position.
fn write_obligations(out: &Path, tree: &Path, report: &check::Report) -> anyhow::Result<()> {
    let mut text = format!(
        "{}\n# file: {}\n# rules: {}\n# fifty-move-rule: {}\n# winner: {}\n# root: {}\n# open: {}\n",
        OBLIGATIONS_MAGIC,
        tree.display(),
        report.rules.name(),
        if report.fifty_move { "yes" } else { "no" },
        game::color_name(report.winner),
        report.root_fen,
        report.open_count
    );
    for o in &report.open {
        text.push_str(&format!("{} ; line: {}\n", o.epd, o.line.join(" ")));
    }
    crate::fsutil::write_atomic(out, |w| w.write_all(text.as_bytes()))
        .with_context(|| format!("cannot write the obligations file {}", out.display()))
}

/// Reports a file that cannot be parsed at all: rejected.
fn malformed(args: &VerifyArgs, what: &str) -> u8 {
    rejected_unchecked(args, "Malformed", &format!("malformed file: {what}"))
}

/// A rejection before any position is checked (kind `kind`, for JSON):
/// exit 1.
fn rejected_unchecked(args: &VerifyArgs, kind: &str, reason: &str) -> u8 {
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "verdict": "rejected",
                "rules": args.rules.stalemate().name(),
                "fifty_move_rule": args.rules.rule_set().fifty_move,
                "rule_set": args.rules.rule_set().name(),
                "rejection": {"kind": kind, "reason": reason},
            })
        );
    } else {
        println!("REJECTED: {reason}");
        println!("rules:       {}", args.rules.rule_set());
    }
    EXIT_NO
}

/// A progress line on standard error (a terminal) while a file is checked:
/// positions checked of the file's slots, and the time left at the rate so
/// far. Cleared when dropped.
struct Progress {
    counter: std::sync::Arc<std::sync::atomic::AtomicU64>,
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    fn start(total: u64) -> Progress {
        use std::sync::atomic::Ordering::Relaxed;
        let counter = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (c, d) = (counter.clone(), done.clone());
        let thread = std::thread::spawn(move || {
            let t0 = std::time::Instant::now();
            let mut shown = false;
            while !d.load(Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(200));
                let n = c.load(Relaxed).min(total);
                let secs = t0.elapsed().as_secs_f64();
                // Small files finish before anything is worth showing.
                if secs < 1.0 || n == 0 || d.load(Relaxed) {
                    continue;
                }
                let left = secs * (total - n) as f64 / n as f64;
                eprint!(
                    "\rchecked {n} of {total} slots ({:.1}%), about {left:.0} s left   ",
                    100.0 * n as f64 / total.max(1) as f64
                );
                shown = true;
            }
            if shown {
                eprint!("\r\x1b[K");
            }
        });
        Progress {
            counter,
            done,
            thread: Some(thread),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
