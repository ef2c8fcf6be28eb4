//! `antiproof verify`: certify a proof from the store or a win-tree file
//! with the independent checker (`crate::check`, shakmaty rules only).

use super::out::outln;
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
    /// else $TMPDIR; at most the space free there, and a thousand times
    /// the compressed size unless $ANTIPROOF_DECOMPRESS_LIMIT says
    /// otherwise) and checked from there. Given more than once (the
    /// files of a proof split by reply, `export --split-above`): each file
    /// is checked on its own, then whether they prove MOVES together
    /// (default: the longest line all their roots share), every reply
    /// covered; exit 0 only when every file is certified and the line is
    /// proven.
    #[arg(long, value_name = "FILE")]
    tree: Vec<PathBuf>,
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
    /// root. With the store: default the line the store notes as proven
    /// (`prove` notes each; with several, they are named and one must be
    /// given).
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
pub fn run(mut args: VerifyArgs) -> anyhow::Result<u8> {
    if let Some(out) = &args.obligations {
        let mut inputs: Vec<&Path> = args.tree.iter().map(PathBuf::as_path).collect();
        inputs.extend(args.tables.as_deref());
        super::check_output(out, crate::fsutil::OutputKind::Obligations, &inputs)?;
    }
    let rule_set = args.rules.rule_set();
    if args.tree.is_empty() && args.moves.is_empty() && args.fen.is_none() {
        let db = args
            .db
            .clone()
            .unwrap_or_else(|| PathBuf::from(super::DEFAULT_DB));
        args.moves = super::proven_lines::line_for(&db, rule_set, "verify")?;
    }
    let fifty_move = if rule_set.fifty_move {
        Some(start_clock(args.fen.as_deref())?)
    } else {
        None
    };
    // Under the fifty-move rule the store's proof is checked as the
    // win-tree file `export` writes of it: the checker follows the clock
    // along every path of a file, transpositions included.
    if args.tree.len() > 1 {
        return verify_together(&args, fifty_move);
    }
    let stored = match (args.tree.first(), fifty_move) {
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
            match stored_tree_bytes(&reader, rule_set, start, &args.moves, winner)? {
                Ok(bytes) => Some(WinTree::from_vec(bytes).with_context(|| {
                    format!("the proof stored in {} as a win tree", path.display())
                })?),
                Err(why) => {
                    return rejected_unchecked(
                        &args,
                        "NoProof",
                        &format!("{}: {why}", path.display()),
                    );
                }
            }
        }
        _ => None,
    };
    let tables = leaf_tables(&args)?;
    let start = start_position(&args)?;
    let file = match (args.tree.first(), stored) {
        (Some(path), _) => match WinTree::open(path) {
            Ok(t) => Some(t),
            Err(e @ WinTreeError::Io { .. }) => return Err(e.into()),
            Err(e) => return malformed(&args, &e.to_string()),
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
                rule_set,
                start_clock: fifty_move.unwrap_or(0),
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
    let mut out = crate::cli::out::stdout();
    if args.json {
        writeln!(out, "{}", report.to_json())?;
    } else {
        writeln!(out, "{report}")?;
    }
    if let (Some(out), Some(tree)) = (&args.obligations, args.tree.first())
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

/// The endgame tables of `--tables`, for the checker's leaves.
fn leaf_tables(args: &VerifyArgs) -> anyhow::Result<Option<std::sync::Arc<check::LeafTables>>> {
    let Some(dir) = &args.tables else {
        return Ok(None);
    };
    if !dir.is_dir() {
        anyhow::bail!("--tables {}: not a directory", dir.display());
    }
    Ok(Some(std::sync::Arc::new(
        check::LeafTables::open(dir, args.rules.rule_set()).recertify(args.recertify),
    )))
}

/// The position lines start from: `--fen`'s, else the standard start.
fn start_position(args: &VerifyArgs) -> anyhow::Result<Antichess> {
    let Some(f) = &args.fen else {
        return Ok(Antichess::default());
    };
    let fen: shakmaty::fen::Fen = f
        .parse()
        .map_err(|e| anyhow::anyhow!("reading --fen {f:?}: {e}"))?;
    game::position_from_fen(fen).map_err(|e| anyhow::anyhow!("reading --fen {f:?}: {e}"))
}

/// `verify --tree A --tree B ...`: each file checked on its own (from its
/// root), then whether the certified ones prove the line together
/// (`check::cover`, shakmaty's moves): MOVES, else the longest line all
/// the files' roots share. Exit 0 when every file is certified and the
/// line is proven, 1 otherwise (the missing replies named).
fn verify_together(args: &VerifyArgs, fifty_move: Option<u32>) -> anyhow::Result<u8> {
    use check::cover::{Certificate, coverage_from};
    if args.obligations.is_some() {
        anyhow::bail!("--obligations takes one --tree file");
    }
    let tables = leaf_tables(args)?;
    let start = start_position(args)?;
    let mut checked = Vec::new();
    for path in &args.tree {
        let tree = match WinTree::open(path) {
            Ok(t) => t,
            Err(e @ WinTreeError::Io { .. }) => return Err(e.into()),
            Err(e) => {
                checked.push((path, None, Err(format!("malformed file: {e}"))));
                continue;
            }
        };
        let line = game::uci_line(&start, &tree.prolog());
        let opts = TreeOptions {
            rule_set: args.rules.rule_set(),
            start_clock: fifty_move.unwrap_or(0),
            winner: args.winner,
            start: args.fen.as_ref().map(|_| start.clone()),
            threads: args.threads,
            tables: tables.clone(),
            open_leaves: true,
            ..TreeOptions::default()
        };
        let report = check::check_tree(&tree, &opts);
        checked.push((path, Some(line), Ok(report)));
    }
    // The line: MOVES, else what every file's root line begins with.
    let line: Vec<String> = if args.moves.is_empty() {
        let lines: Vec<&Vec<String>> = checked.iter().filter_map(|c| c.1.as_ref()).collect();
        let mut common = lines.first().map(|l| l.to_vec()).unwrap_or_default();
        for l in &lines[1.min(lines.len())..] {
            let n = common
                .iter()
                .zip(l.iter())
                .take_while(|(a, b)| a == b)
                .count();
            common.truncate(n);
        }
        common
    } else {
        let (_, moves) =
            game::play_line(&start, &args.moves).map_err(|e| anyhow::anyhow!("bad move at {e}"))?;
        moves
            .iter()
            .map(|m| m.to_uci(shakmaty::CastlingMode::Standard).to_string())
            .collect()
    };
    let certified: Vec<(&Vec<String>, shakmaty::Color)> = checked
        .iter()
        .filter_map(|(_, line, r)| match (line, r) {
            (Some(l), Ok(r)) if r.verdict == Verdict::Certified => Some((l, r.winner)),
            _ => None,
        })
        .collect();
    let winner = match args.winner {
        Some(w) => Some(w),
        None => {
            let mut ws: Vec<shakmaty::Color> = certified.iter().map(|c| c.1).collect();
            ws.dedup();
            match ws.as_slice() {
                [] => None,
                [w] => Some(*w),
                _ => {
                    anyhow::bail!("the files prove wins for both sides: give --winner white|black")
                }
            }
        }
    };
    let certs: Vec<Certificate> = certified
        .iter()
        .map(|(l, w)| Certificate {
            line: l.to_vec(),
            winner: *w,
        })
        .collect();
    let cover = match winner {
        Some(w) => Some(
            coverage_from(&start, &certs, &line, w, args.rules.rule_set())
                .map_err(|e| anyhow::anyhow!("the line to certify: {e}"))?,
        ),
        None => None,
    };
    let all_certified = certified.len() == checked.len();
    let proven = all_certified && cover.as_ref().is_some_and(|c| c.proven);
    let codes: Vec<_> = {
        let (_, moves) = game::play_line(&start, &line).map_err(|e| anyhow::anyhow!("{e}"))?;
        moves.iter().map(game::move_code).collect()
    };
    let (san, _) = game::san_line(&start, &codes);
    let verdict = if proven {
        "certified"
    } else if all_certified {
        "not certified"
    } else {
        "rejected"
    };
    let missing: Vec<String> = cover
        .as_ref()
        .map(|c| c.missing().iter().map(|m| m.to_string()).collect())
        .unwrap_or_default();
    let mut out = crate::cli::out::stdout();
    if args.json {
        let files: Vec<serde_json::Value> = checked
            .iter()
            .map(|(p, _, r)| {
                let mut v = match r {
                    Ok(r) => r.to_json(),
                    Err(why) => serde_json::json!({"verdict": "rejected", "rejection": {"kind": "Malformed", "reason": why}}),
                };
                v["file"] = p.display().to_string().into();
                v
            })
            .collect();
        let v = serde_json::json!({
            "verdict": verdict,
            "line": san,
            "rule_set": args.rules.rule_set().name(),
            "rules": args.rules.stalemate().name(),
            "fifty_move_rule": fifty_move.is_some(),
            "winner": winner.map(game::color_name),
            "winner_move": cover.as_ref().and_then(|c| c.winner_move.clone()),
            "replies": cover.as_ref().map_or(0, |c| c.replies.len()),
            "replies_proven": cover.as_ref().map_or(0, |c| c.counts().0),
            "missing": missing,
            "files": files,
        });
        writeln!(out, "{v}")?;
    } else {
        for (p, _, r) in &checked {
            let what = match r {
                Ok(r) => match &r.verdict {
                    Verdict::Certified => format!(
                        "certified: {} ({} positions)",
                        r.root_line,
                        crate::web::view::group(r.positions)
                    ),
                    Verdict::Rejected(j) => format!("REJECTED at {}: {}", j.line, j.reason),
                    Verdict::NotCertified { table_leaves } => {
                        format!("not certified: {table_leaves} leaves rest on endgame tables")
                    }
                    Verdict::Open { open_leaves } => {
                        format!("not certified: {open_leaves} open leaves")
                    }
                },
                Err(why) => format!("REJECTED: {why}"),
            };
            writeln!(out, "{}: {what}", p.display())?;
        }
        let who = winner.map_or("?", game::color_name);
        let line_name = if san.is_empty() {
            "the start position".to_string()
        } else {
            san.clone()
        };
        match (proven, all_certified) {
            (true, _) => writeln!(
                out,
                "CERTIFIED together: {line_name} is won by {who}, {} files, every branch checked",
                checked.len()
            )?,
            (false, false) => writeln!(
                out,
                "REJECTED: {} of {} files are not certified",
                checked.len() - certified.len(),
                checked.len()
            )?,
            (false, true) => {
                let after = cover
                    .as_ref()
                    .and_then(|c| c.winner_move.clone())
                    .map_or(String::new(), |m| format!(" after {m}"));
                writeln!(
                    out,
                    "NOT CERTIFIED together: {line_name} for {who}: replies{after} not proven by these files: {}",
                    if missing.is_empty() {
                        "(no reply reached)".to_string()
                    } else {
                        missing.join(" ")
                    }
                )?;
            }
        }
        writeln!(out, "rules:       {}", args.rules.rule_set())?;
    }
    Ok(if proven { EXIT_OK } else { EXIT_NO })
}

/// Writes the open leaves of `report` (a check of the win-tree file
/// `tree`) to `out`, atomically: header comment lines naming the file, the
/// rule set (the stalemate rule, and whether the fifty-move rule is on)
/// and the winner, then one `EPD ; line: UCI moves` line a distinct
/// position.
fn write_obligations(out: &Path, tree: &Path, report: &check::Report) -> anyhow::Result<()> {
    let mut text = format!(
        "{}\n# file: {}\n# rules: {}\n# fifty-move-rule: {}\n# winner: {}\n# root: {}\n# open: {}\n",
        crate::fsutil::OBLIGATIONS_MAGIC,
        tree.display(),
        report.rule_set.stalemate.name(),
        if report.rule_set.fifty_move {
            "yes"
        } else {
            "no"
        },
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
fn malformed(args: &VerifyArgs, what: &str) -> anyhow::Result<u8> {
    rejected_unchecked(args, "Malformed", &format!("malformed file: {what}"))
}

/// A rejection before any position is checked (kind `kind`, for JSON):
/// exit 1.
fn rejected_unchecked(args: &VerifyArgs, kind: &str, reason: &str) -> anyhow::Result<u8> {
    if args.json {
        outln!(
            "{}",
            serde_json::json!({
                "verdict": "rejected",
                "rules": args.rules.stalemate().name(),
                "fifty_move_rule": args.rules.rule_set().fifty_move,
                "rule_set": args.rules.rule_set().name(),
                "rejection": {"kind": kind, "reason": reason},
            })
        )?;
    } else {
        outln!("REJECTED: {reason}")?;
        outln!("rules:       {}", args.rules.rule_set())?;
    }
    Ok(EXIT_NO)
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
                errprint!(
                    "\rchecked {n} of {total} slots ({:.1}%), about {left:.0} s left   ",
                    100.0 * n as f64 / total.max(1) as f64
                );
                shown = true;
            }
            if shown {
                errprint!("\r\x1b[K");
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

/// The stored proof at the line `moves` from `start` as the bytes of the
/// win-tree file `export` writes of it (no size table), for `verify --db`
/// under the fifty-move rule. `Ok(Err(why))`: no proof there, or a broken
/// one (the line named).
fn stored_tree_bytes(
    reader: &crate::store::StoreReader,
    rule_set: crate::vocab::RuleSet,
    start: crate::rules::Position,
    moves: &[String],
    winner: Option<crate::rules::Color>,
) -> anyhow::Result<Result<Vec<u8>, String>> {
    let (root, line) = start
        .play_line(moves)
        .map_err(|e| anyhow::anyhow!("bad move at {e}"))?;
    let winner = match winner {
        Some(w) => w,
        None => match crate::export::stored_winner(reader, rule_set, &root)? {
            Some(w) => w,
            None => {
                return Ok(Err(format!(
                    "no proof in the store at this line under {}",
                    rule_set.describe()
                )));
            }
        },
    };
    let source = crate::export::Source {
        rule_set,
        winner,
        start,
        line,
        merge: None,
        expand: None,
    };
    match crate::export::tree_bytes(reader, &source) {
        Ok(bytes) => Ok(Ok(bytes)),
        Err(e @ crate::export::ExportError::Broken { .. }) => Ok(Err(e.to_string())),
        Err(e) => Err(e.into()),
    }
}
