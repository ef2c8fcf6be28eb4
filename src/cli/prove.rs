//! `antiproof prove`: prove a forced win for a line and store its solution
//! tree. See docs/prove.md.

use super::ladder::Rungs;
use super::out::outln;
use super::values::{self, Limit, MemorySize};
use crate::rules::{Color, Move, Position};
use crate::search::run::{self, Job};
use crate::search::{Config, Limits, Progress, ProgressFn, ProveReport, ProveResult};
use crate::store::Store;
use anyhow::{Context, anyhow, bail};
use clap::Args;
use serde::Serialize;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

mod jobs;

/// Arguments of `antiproof prove`.
#[derive(Args, Debug)]
pub struct ProveArgs {
    /// The proof store (redb file; created if missing).
    #[arg(long, default_value = "antiproof.redb")]
    db: PathBuf,
    #[command(flatten)]
    pub(super) rules: values::RuleArgs,
    /// Start from this FEN instead of the standard start position.
    #[arg(long)]
    fen: Option<String>,
    /// The side to prove a win for (default: the side to move after the moves).
    #[arg(long, value_parser = values::color)]
    winner: Option<Color>,
    /// Stop after this long (`30s`, `5m`, `1h`; at most 1 year) or this many
    /// nodes (`10M nodes`; at most 10^15).
    #[arg(long, value_parser = values::limit)]
    pub(super) limit: Option<Limit>,
    /// Memory for the transposition table (`512M`, `4G`; 64K to 1T).
    #[arg(long, default_value = "1G", value_parser = values::memory)]
    pub(super) memory: MemorySize,
    /// Print one JSON object instead of the text summary.
    #[arg(long)]
    json: bool,
    /// Run the ladder benchmark (docs/ladder.md, compiled in) instead of
    /// one line, each rung in a fresh temporary store.
    #[arg(long)]
    ladder: bool,
    /// With --ladder under other rules than international without the
    /// fifty-move rule: also run each rung under those, and print its
    /// figures and the cost ratios below the rung's row.
    #[arg(long, requires = "ladder")]
    pub(super) baseline: bool,
    /// Rungs of the ladder to run, such as `1-10` or `1,3,6-8`.
    #[arg(long, default_value = "1-10", value_parser = values::rungs)]
    pub(super) rungs: Rungs,
    /// Write proven subtrees whose estimated proof size reaches this during
    /// the search (checkpoints; tests use small values).
    #[arg(long, default_value_t = 20_000, hide = true, value_parser = values::proof_size())]
    checkpoint_size: u32,
    /// After proving, make the stored proof smaller by also proving the
    /// winner's other moves where they could replace a bigger part of it,
    /// each by a search bounded by the positions it could save. Costs
    /// several times the proving time (rung 8: 45,761 -> 41,119 positions,
    /// 5 s -> 41 s of CPU); for proofs to publish. On a line the store
    /// has proven already, works on its stored proof (so a run stopped in
    /// it goes on). Not with the job executors, nor under the fifty-move
    /// rule.
    #[arg(long)]
    pub(super) smaller_proof: bool,
    /// Break ties between equally promising moves by a hash salted with
    /// this seed (0: the default order). Another seed searches in another
    /// order and finds another proof, often of another size (rung 7:
    /// 4,428 to 9,957 positions with --smaller-proof over seeds 0-12, 4,808
    /// with 0): proving with several seeds and keeping the smallest proof
    /// is how the proofs to publish are made smaller still
    /// (`scripts/make-proofs.sh --smaller --seeds N`). Not with the job
    /// executors.
    #[arg(long, default_value_t = 0)]
    pub(super) seed: u64,
    /// Endgame tables (a directory of `antiproof tables build`): positions
    /// of 4 men or fewer are scored from them (a table win for the prover
    /// is a proven leaf, anything else a disproven one); records whose
    /// proof rests on them get flag bit 0. Check such proofs with
    /// `verify --tables DIR`, or export them with `--expand-tables`.
    #[arg(long, value_name = "DIR")]
    tables: Option<PathBuf>,
    /// Prove every position of an obligations file (`verify --tree FILE
    /// --obligations OUT` writes one) for the winner its header names,
    /// into the store; then `export --tree FILE --db` merges the proofs
    /// into one certificate. Positions already proven in the store are
    /// found there. A time limit covers the whole run, a node limit each
    /// position.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["fen", "ladder", "moves"])]
    obligations: Option<PathBuf>,
    /// Known wins: certified win-tree files (or directories of them, such
    /// as `proofs/`) loaded into the store before the search, each
    /// certified by the independent checker under the rule set first
    /// (`store load` does the same on its own); the search then stops
    /// wherever it transposes into one. Files not certified under the
    /// rule set are named and skipped. Given more than once, all are
    /// loaded.
    #[arg(long, value_name = "FILE|DIR")]
    known: Vec<PathBuf>,
    #[command(flatten)]
    many: jobs::ManyArgs,
    /// Moves from the start position (or --fen), UCI or SAN.
    moves: Vec<String>,
}

/// The JSON summary of a run.
#[derive(Serialize)]
struct Summary {
    result: &'static str,
    /// Whether the independent checker can certify the result: a proof
    /// can (`antiproof verify`); a disproof cannot (it rests on the
    /// search alone), nor can a stop.
    certifiable: bool,
    winner: String,
    winning_move: Option<String>,
    winning_move_uci: Option<String>,
    nodes: u64,
    generated: u64,
    nodes_per_second: f64,
    /// Search threads on the one transposition table (`--jobs N`).
    threads: usize,
    /// Of `nodes`, those of the threads other than the first.
    other_threads_nodes: u64,
    /// The root's proof and disproof numbers when the run ended
    /// (4294967295 is infinite: 0 and that for a proof).
    root_pn: u32,
    root_dn: u32,
    proof_positions: u64,
    proof_depth: u32,
    records_written: u64,
    resumed_table: bool,
    store_records: u64,
    store_bytes: u64,
    /// The transposition table's budget (`--memory`): the most it may
    /// take, allocated as it fills, not memory used.
    tt_bytes: u64,
    /// A stopped search: where it saved its transposition table for the
    /// next run (`DB.table`), and the file's size.
    saved_tt: Option<String>,
    saved_tt_bytes: Option<u64>,
    /// Bytes of the in-memory filter of the store's positions (about 2.4
    /// a record).
    filter_bytes: u64,
    peak_memory_bytes: Option<u64>,
    time_s: f64,
    /// Seconds of the pass that takes smaller proofs (part of `time_s`).
    shrink_s: f64,
    /// Proof positions before that pass, and records it rewrote.
    shrink_before: Option<u64>,
    shrink_rewritten: Option<u64>,
    /// The pass that proves the winner's other moves: searches run,
    /// alternatives proven, nodes expanded (not in `nodes`), records
    /// rewritten.
    alternatives: Option<crate::search::AlternativeFigures>,
    /// Seconds of the final extraction of the root's proof (with its
    /// writes; part of `time_s`).
    extract_s: f64,
    cpu_s: Option<f64>,
    /// The stalemate rule (`international`, `fics`, `joint`).
    rules: String,
    /// Whether the fifty-move rule was on.
    fifty_move_rule: bool,
    /// The whole rule set (`international+fifty`).
    rule_set: String,
    /// Under the fifty-move rule: the most plies from the root to the first
    /// capture, pawn move or game end along any line of the stored proof.
    proof_need: Option<u32>,
    root_fen: String,
    line: Vec<String>,
    db: String,
    revision: String,
    /// The tie-break seed (`--seed`; 0: the default order).
    seed: u64,
    /// The endgame-table directory (`--tables`), if any.
    tables: Option<String>,
    /// With `--tables` at a root of 4 men or fewer: its value in the
    /// table (`win in 66 for white (to move)`), which the search's one
    /// ply to the table positions below confirms.
    root_table: Option<String>,
}

/// Refuses a `--memory` above what this machine (or this process's
/// control group) has, where the table lives on this machine (not for
/// Slurm's jobs, which run elsewhere and clamp their own): the table
/// grows to its budget as it fills, so the process would be killed by the
/// kernel instead, its unsaved work lost. The table of threads of one
/// search is touched whole at the start: it must fit in what is
/// available now.
fn check_memory(args: &ProveArgs) -> anyhow::Result<()> {
    if args.many.executor == jobs::ExecutorKind::Slurm {
        return Ok(());
    }
    match memory_refusal(
        args.memory,
        args.many.threads(),
        crate::sysmem::usable_bytes(),
        crate::sysmem::available_bytes(),
    ) {
        Some(why) => bail!(why),
        None => Ok(()),
    }
}

/// Why a table of `memory` for `threads` search threads does not fit a
/// machine of `usable` bytes with `available` free now: over
/// [`crate::sysmem::table_limit`], the one policy a job clamps its table
/// to; `None` when it fits or the machine cannot tell.
fn memory_refusal(
    memory: MemorySize,
    threads: usize,
    usable: Option<u64>,
    available: Option<u64>,
) -> Option<String> {
    let limit = crate::sysmem::table_limit(threads, usable, available)?;
    if memory.0 <= limit.bytes {
        return None;
    }
    Some(match limit.of {
        crate::sysmem::LimitOf::Machine(_) => format!(
            "--memory {memory}: more than this machine has for a table, {limit}; past it the kernel would kill the search"
        ),
        crate::sysmem::LimitOf::Available(_) => {
            format!(
                "--memory {memory} with {threads} threads: more than their table may have, {limit}"
            )
        }
    })
}

/// Refuses a store, or a saved table beside it, that is one of the run's
/// input files (`--obligations`, `--tables`, `--known`): nothing is
/// written then.
fn check_outputs(args: &ProveArgs) -> anyhow::Result<()> {
    use crate::fsutil::OutputKind;
    // Of a tables directory, its tables are inputs (a store may live
    // beside them).
    let tables: Vec<PathBuf> = match &args.tables {
        Some(d) if d.is_dir() => crate::fsutil::files_with_ext(d, "apt")?,
        Some(d) => vec![d.clone()],
        None => Vec::new(),
    };
    let known = crate::known::tree_paths(&args.known)?;
    let mut inputs: Vec<&Path> = args.obligations.iter().map(PathBuf::as_path).collect();
    inputs.extend(tables.iter().map(PathBuf::as_path));
    inputs.extend(known.iter().map(PathBuf::as_path));
    super::check_output(&args.db, OutputKind::Store, &inputs)?;
    for endgame in [false, true] {
        let tt = crate::search::run::tt_file(&args.db, endgame);
        super::check_output(&tt, OutputKind::Beside, &inputs)?;
    }
    Ok(())
}

/// Runs `antiproof prove`.
pub fn run(args: ProveArgs) -> anyhow::Result<u8> {
    let job_executor = args.many.job_executor();
    args.many.check_sim_options()?;
    check_memory(&args)?;
    check_outputs(&args)?;
    if args.smaller_proof && (job_executor || args.rules.rule_set().fifty_move) {
        bail!(
            "--smaller-proof works with one search or --executor search, and not under the fifty-move rule"
        );
    }
    if args.seed != 0 && job_executor {
        bail!(
            "--seed works with one search or --executor search (the job executors' searches take the default order)"
        );
    }
    if job_executor {
        args.rules
            .without_fifty("prove --jobs with job executors")?;
        return jobs::run(&args);
    }
    if args.ladder {
        return super::ladder::run(&args);
    }
    if let Some(path) = &args.obligations {
        return run_obligations(&args, path);
    }
    let rules = args.rules.stalemate();
    let rule_set = args.rules.rule_set();
    let (start, pos, played) = root_of(&args)?;
    let winner = winner_of(&args, &pos, &played);
    let (limits, tables, store) = open_run(&args)?;
    let root_table = root_table_value(tables.as_ref(), &pos)?;
    let config = Config {
        rule_set,
        tt_bytes: args.memory.bytes(),
        limits,
        checkpoint_size: args.checkpoint_size,
        threads: args.many.threads(),
        shrink_alternatives: args.smaller_proof,
        seed: args.seed,
    };
    let show_progress = io::stderr().is_terminal() && !args.json;
    let progress: Option<ProgressFn> = show_progress.then(|| {
        Box::new(|p: &Progress| {
            let rss = read_status_kb("VmRSS:").unwrap_or(0) / 1024;
            let rate = p.nodes as f64 / p.elapsed.as_secs_f64().max(1e-9);
            eprint!(
                "\r{:>12} nodes  {:>6.0} k nodes/s  root pn {} dn {}  tt {} MB  rss {} MB   ",
                p.nodes,
                rate / 1e3,
                fmt_pn(p.root_pn),
                fmt_pn(p.root_dn),
                p.tt_bytes >> 20,
                rss
            );
        }) as ProgressFn
    });
    let job = Job {
        root: pos,
        winner,
        config,
        store: &store,
        db: &args.db,
        tables: tables.as_ref(),
    };
    let warn = |w: &str| eprintln!("antiproof: warning: {w}");
    let finished = run::prove(job, progress, &warn)?;
    let (report, resumed, saved_tt) = (finished.report, finished.resumed, finished.saved_tt);
    if report.result == ProveResult::Proven {
        store_line_back(&store, rule_set, &start, &played, winner)?;
        super::proven_lines::note(&store, rule_set, args.fen.as_deref(), &played, winner)?;
    }
    if show_progress {
        eprint!("\r{:80}\r", "");
    }
    let secs = report.elapsed.as_secs_f64();
    let line_san = crate::rules::line_san(&start, &played);
    let summary = Summary {
        result: match report.result {
            ProveResult::Proven => "proven",
            ProveResult::Disproven => "disproven",
            ProveResult::Stopped => "stopped",
        },
        certifiable: report.result == ProveResult::Proven,
        winner: winner.to_string().to_lowercase(),
        winning_move: report.best_move.map(|m| pos.san(m)),
        winning_move_uci: report.best_move.map(|m| m.uci().to_string()),
        nodes: report.nodes,
        generated: report.generated,
        nodes_per_second: report.nodes as f64 / secs.max(1e-9),
        threads: args.many.threads(),
        other_threads_nodes: report.other_threads_nodes,
        root_pn: report.root_pn,
        root_dn: report.root_dn,
        proof_positions: report.proof_positions,
        proof_depth: report.proof_depth,
        records_written: report.records_written,
        resumed_table: resumed,
        store_records: store.len(rule_set)?,
        store_bytes: store.file_bytes(),
        tt_bytes: report.tt_bytes,
        saved_tt: saved_tt.as_ref().map(|(p, _)| p.display().to_string()),
        saved_tt_bytes: saved_tt.as_ref().map(|&(_, b)| b),
        filter_bytes: report.filter_bytes,
        peak_memory_bytes: read_status_kb("VmHWM:").map(|k| k * 1024),
        time_s: secs,
        shrink_s: report.shrink_time.as_secs_f64(),
        shrink_before: report.shrink.map(|f| f.before),
        shrink_rewritten: report.shrink.map(|f| f.rewritten),
        alternatives: report.alternatives,
        extract_s: report.extract_time.as_secs_f64(),
        cpu_s: cpu_seconds(),
        rules: rules.to_string(),
        fifty_move_rule: rule_set.fifty_move,
        rule_set: rule_set.name(),
        proof_need: report.proof_need,
        root_fen: pos.to_fen(),
        line: line_san,
        db: args.db.display().to_string(),
        revision: revision(),
        seed: args.seed,
        tables: args.tables.as_ref().map(|d| d.display().to_string()),
        root_table: root_table.map(|v| {
            let v = match v {
                // Fifty-move tables count plies to the next capture or
                // pawn move (from a clock of 0), not to the end.
                crate::tables::Value::Win(n) | crate::tables::Value::Loss(n)
                    if rule_set.fifty_move =>
                {
                    let what = if matches!(v, crate::tables::Value::Win(_)) {
                        "win"
                    } else {
                        "loss"
                    };
                    format!("{what}, {n} plies to the next capture or pawn move from a clock of 0")
                }
                v => v.to_string(),
            };
            format!("{v} for {} (to move)", pos.turn().name())
        }),
    };
    let mut out = crate::cli::out::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&summary)?)?;
    } else {
        print_summary(&mut out, &summary, &report)?;
    }
    Ok(match report.result {
        ProveResult::Proven => super::EXIT_OK,
        ProveResult::Disproven => super::EXIT_NO,
        ProveResult::Stopped => super::EXIT_LIMIT,
    })
}

/// `prove --obligations FILE`: proves each position of the file, in
/// order, for the header's winner. Exit 0 when all are proven, 1 when any
/// is disproven (the others are still tried), 3 when a limit or a signal
/// stopped the run (run it again to resume: proven ones are in the store).
fn run_obligations(args: &ProveArgs, path: &Path) -> anyhow::Result<u8> {
    let rules = args.rules.stalemate();
    let rule_set = args.rules.rule_set();
    let list = super::obligations::read(path, rule_set)?;
    let winner = match (args.winner, list.winner) {
        (Some(a), Some(b)) if a != b => bail!(
            "--winner {a}, but the obligations of {} are owed for {b}",
            path.display()
        ),
        (Some(a), _) | (None, Some(a)) => a,
        (None, None) => bail!(
            "the obligations file {} names no winner (`# winner:` header): give --winner",
            path.display()
        ),
    };
    let (limits, tables, store) = open_run(args)?;
    let warn = |w: &str| eprintln!("antiproof: warning: {w}");
    let total = list.positions.len();
    let (mut proven, mut disproven, mut stopped) = (0usize, Vec::new(), None);
    let mut saved_tt: Option<(PathBuf, u64)> = None;
    let mut results = Vec::new();
    for (n, pos) in &list.positions {
        let job = Job {
            root: *pos,
            winner,
            config: Config {
                rule_set,
                tt_bytes: args.memory.bytes(),
                limits: limits.clone(),
                checkpoint_size: args.checkpoint_size,
                threads: args.many.threads(),
                shrink_alternatives: args.smaller_proof,
                seed: args.seed,
            },
            store: &store,
            db: &args.db,
            tables: tables.as_ref(),
        };
        let finished = run::prove(job, None, &warn)?;
        let report = finished.report;
        saved_tt = finished.saved_tt.or(saved_tt);
        let what = match report.result {
            ProveResult::Proven => {
                proven += 1;
                "proven"
            }
            ProveResult::Disproven => {
                disproven.push(*n);
                "disproven"
            }
            ProveResult::Stopped => "stopped",
        };
        results.push(serde_json::json!({
            "line": n,
            "epd": pos.to_epd(),
            "result": what,
            "nodes": report.nodes,
            "proof_positions": report.proof_positions,
        }));
        if !args.json {
            outln!(
                "{what:<10} line {n}: {} ({} nodes, {} proof positions)",
                pos.to_epd(),
                report.nodes,
                report.proof_positions
            )?;
        }
        if report.result == ProveResult::Stopped {
            stopped = Some(*n);
            break;
        }
    }
    let result = if !disproven.is_empty() {
        "disproven"
    } else if stopped.is_some() {
        "stopped"
    } else {
        "proven"
    };
    if args.json {
        let j = serde_json::json!({
            "result": result,
            "obligations": path.display().to_string(),
            "rules": rules.to_string(),
            "fifty_move_rule": rule_set.fifty_move,
            "rule_set": rule_set.name(),
            "winner": winner.to_string().to_lowercase(),
            "positions": total,
            "proven": proven,
            "disproven_lines": disproven,
            "stopped_at_line": stopped,
            "saved_tt": saved_tt.as_ref().map(|(p, _)| p.display().to_string()),
            "saved_tt_bytes": saved_tt.as_ref().map(|&(_, b)| b),
            "db": args.db.display().to_string(),
            "each": results,
        });
        outln!("{j}")?;
    } else {
        outln!(
            "result:          {proven} of {total} obligations proven for {}{}{}",
            winner.to_string().to_lowercase(),
            if disproven.is_empty() {
                String::new()
            } else {
                format!(
                    "; disproven (not certified): line(s) {}",
                    disproven
                        .iter()
                        .map(|n| n.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            },
            match stopped {
                Some(n) => format!(
                    "; stopped at line {n} by a limit or a signal (run the same command again to continue)"
                ),
                None => String::new(),
            }
        )?;
        outln!("store:           {}", args.db.display())?;
        if let Some((p, bytes)) = &saved_tt {
            outln!(
                "saved table:     {} ({:.1} MB): the stopped search's transposition table, for \
                 the next run to resume from (delete it to start afresh)",
                p.display(),
                *bytes as f64 / 1e6
            )?;
        }
    }
    Ok(if !disproven.is_empty() {
        super::EXIT_NO
    } else if stopped.is_some() {
        super::EXIT_LIMIT
    } else {
        super::EXIT_OK
    })
}

/// With endgame tables, the table value of a root of 4 men or fewer (the
/// search then only expands it: every position below is a table
/// position). A root whose table is not in the directory is an error
/// naming the table and how to build it: the search would otherwise go on
/// without it, a long search where a table answers at once.
fn root_table_value(
    tables: Option<&crate::tables::Tables>,
    pos: &Position,
) -> anyhow::Result<Option<crate::tables::Value>> {
    let Some(t) = tables else {
        return Ok(None);
    };
    if pos.men() > crate::tables::MAX_MEN {
        return Ok(None);
    }
    let material = crate::tables::material_of(pos).canonical();
    t.value(pos).map(Some).with_context(|| {
        format!(
            "the position to prove has {} men: its table {material} must be in --tables {} \
             (antiproof tables build --dir {} --rules {} {material})",
            pos.men(),
            t.dir().display(),
            t.dir().display(),
            t.rule_set()
        )
    })
}

/// What every proving run of the command sets up: its limits (with the
/// stop flag that Ctrl-C, SIGTERM and SIGHUP set), the endgame tables if
/// given, and the store.
fn open_run(args: &ProveArgs) -> anyhow::Result<(Limits, Option<crate::tables::Tables>, Store)> {
    let mut limits = Limits::default();
    if let Some(l) = args.limit {
        l.apply(&mut limits);
    }
    limits.stop = Some(run::stop_flag());
    let tables = match &args.tables {
        Some(dir) => {
            if !dir.is_dir() {
                bail!("--tables {}: not a directory", dir.display());
            }
            Some(crate::tables::Tables::open(dir, args.rules.rule_set()))
        }
        None => None,
    };
    let store = Store::open(&args.db)?;
    load_known(args, &store)?;
    Ok((limits, tables, store))
}

/// Loads `--known` files into `store` under the run's rule set, saying
/// on stderr what was loaded and what not.
pub(super) fn load_known(args: &ProveArgs, store: &Store) -> anyhow::Result<()> {
    use crate::known::{self, Loaded};
    if args.known.is_empty() {
        return Ok(());
    }
    let rules = args.rules.rule_set();
    let files = known::tree_paths(&args.known)?;
    if files.is_empty() {
        bail!("--known {:?}: no win-tree files there", args.known);
    }
    let (mut loaded, mut written) = (0usize, 0u64);
    for f in &files {
        match known::load_file(store, rules, f, None)? {
            Loaded::Loaded { written: w, .. } => {
                loaded += 1;
                written += w;
            }
            Loaded::NotCertified { verdict } => eprintln!(
                "antiproof: --known {}: not loaded, under {rules}: {verdict}",
                f.display()
            ),
        }
    }
    eprintln!(
        "antiproof: known wins: {loaded} of {} files certified and loaded under {rules}, {written} new records",
        files.len()
    );
    Ok(())
}

/// After a proof, the line's own moves as stored proof as far back as
/// they carry it (`crate::search::guide`), said on stderr when they do:
/// `prove e3 c6 Bb5` proves 1.e3 c6 too.
pub(super) fn store_line_back(
    store: &Store,
    rules: crate::vocab::RuleSet,
    start: &Position,
    played: &[Move],
    winner: Color,
) -> anyhow::Result<()> {
    let back = crate::search::guide::store_line_back(store, rules, start, played, winner)?;
    if back > 0 {
        let line = crate::rules::line_san(start, &played[..played.len() - back]);
        eprintln!(
            "antiproof: the line's own moves carry the proof back: {} wins after {}",
            winner.to_string().to_lowercase(),
            if line.is_empty() {
                "the start".to_string()
            } else {
                line.join(" ")
            }
        );
    }
    Ok(())
}

/// The root of `--fen`. Under the fifty-move rule its half-move field is
/// the root's clock: it must be a number from 0 to 100.
/// The start (`--fen`, else the standard position), the position to prove
/// (the start after the line's moves, which must not be a finished game)
/// and the moves played; under the fifty-move rule the FEN's half-move
/// field is checked ([`root_from_fen`]).
pub(super) fn root_of(args: &ProveArgs) -> anyhow::Result<(Position, Position, Vec<Move>)> {
    let rule_set = args.rules.rule_set();
    let start = match &args.fen {
        Some(f) => root_from_fen(f, rule_set.fifty_move)?,
        None => Position::startpos(),
    };
    let (pos, played) = start
        .play_line(&args.moves)
        .map_err(|e| anyhow!("bad move at {e}"))?;
    if let Some(o) = pos.outcome(rule_set.stalemate) {
        bail!(
            "the game is already over after the moves given ({o}; FEN {}): nothing to prove",
            pos.to_fen()
        );
    }
    Ok((start, pos, played))
}

/// The side to prove a win for: `--winner`, else the side to move at the
/// root. When that default goes against the published result of the
/// line's first move (`prove h3 Nh6`: White to move, 1.h3 published as
/// lost), a note on stderr names `--winner` for the other side: the search
/// for the side that loses can only stop or disprove.
pub(super) fn winner_of(args: &ProveArgs, pos: &Position, played: &[Move]) -> Color {
    if let Some(w) = args.winner {
        return w;
    }
    let turn = pos.turn();
    if args.fen.is_none()
        && let Some(first) = played.first()
        && let Some(w) = crate::openings::published_winner(&first.uci().to_string())
        && w != turn
    {
        eprintln!(
            "antiproof: note: proving a win for {} (the side to move, the default); 1.{} is published as a win for {} (international rules): --winner {} proves that",
            crate::web::view::name(turn),
            Position::startpos().san(*first),
            crate::web::view::name(w),
            w.name()
        );
    }
    turn
}

pub(super) fn root_from_fen(fen: &str, fifty_move: bool) -> anyhow::Result<Position> {
    if fifty_move && let Some(h) = fen.split_whitespace().nth(4) {
        match h.parse::<u32>() {
            Ok(n) if n <= crate::vocab::FIFTY_MOVE_PLIES => {}
            _ => bail!(
                "--fen {fen:?}: the half-move clock field {h:?} is not a number from 0 to {} (the fifty-move rule counts from it)",
                crate::vocab::FIFTY_MOVE_PLIES
            ),
        }
    }
    Position::from_fen(fen).with_context(|| format!("reading --fen {fen:?}"))
}

fn fmt_pn(v: u32) -> String {
    if v == u32::MAX {
        "inf".into()
    } else {
        v.to_string()
    }
}

fn print_summary(out: &mut impl Write, s: &Summary, r: &ProveReport) -> io::Result<()> {
    let what = match r.result {
        ProveResult::Proven => format!("proven: {} wins", s.winner),
        ProveResult::Disproven => format!("disproven: {} cannot force a win", s.winner),
        ProveResult::Stopped => {
            "stopped by a limit or a signal (run the same command again to continue)".to_string()
        }
    };
    writeln!(out, "result:          {what}")?;
    if r.result == ProveResult::Disproven {
        writeln!(
            out,
            "note:            disproofs are not certified by the checker (only proofs are)"
        )?;
    }
    let line = if s.line.is_empty() {
        "(start)".to_string()
    } else {
        s.line.join(" ")
    };
    writeln!(out, "line:            {line}")?;
    if let Some(m) = &s.winning_move {
        writeln!(out, "winning move:    {m}")?;
    }
    writeln!(
        out,
        "nodes:           {}{}",
        s.nodes,
        if s.resumed_table {
            " (resumed from the saved transposition table)"
        } else {
            ""
        }
    )?;
    if s.threads > 1 {
        writeln!(
            out,
            "nodes/s:         {:.0} ({} search threads)",
            s.nodes_per_second, s.threads
        )?;
    } else {
        writeln!(out, "nodes/s:         {:.0}", s.nodes_per_second)?;
    }
    if r.result == ProveResult::Stopped {
        writeln!(
            out,
            "root pn / dn:    {} / {}",
            fmt_pn(s.root_pn),
            fmt_pn(s.root_dn)
        )?;
    }
    if r.result == ProveResult::Proven {
        writeln!(out, "proof positions: {}", s.proof_positions)?;
        writeln!(out, "proof depth:     {} plies", s.proof_depth)?;
        if let Some(a) = &s.alternatives {
            writeln!(
                out,
                "smaller proof:   {} searches, {} proven, {} nodes; {} moves changed{}",
                a.searches,
                a.proven,
                a.nodes,
                a.rewritten,
                if a.stopped {
                    " (stopped early: the proof is whole, run again to go on)"
                } else {
                    ""
                }
            )?;
        }
    }
    writeln!(
        out,
        "store:           {} ({} records, {} written now, {} bytes)",
        s.db, s.store_records, s.records_written, s.store_bytes
    )?;
    if let (Some(path), Some(bytes)) = (&s.saved_tt, s.saved_tt_bytes) {
        writeln!(
            out,
            "saved table:     {path} ({:.1} MB): the transposition table, for the next run of \
             this line on this store to resume from; removed once the line is settled, \
             replaced by a stopped run of another line (delete it to start afresh)",
            bytes as f64 / 1e6
        )?;
    }
    if let Some(p) = s.peak_memory_bytes {
        writeln!(
            out,
            "peak memory:     {:.1} MB resident at most (stored-position filter {:.2} MB)",
            p as f64 / 1e6,
            s.filter_bytes as f64 / 1e6
        )?;
    }
    writeln!(
        out,
        "table budget:    {:.1} MB (--memory: the most the transposition table may take, \
         allocated as it fills)",
        s.tt_bytes as f64 / 1e6
    )?;
    match s.cpu_s {
        Some(c) => writeln!(out, "time:            {:.3} s ({c:.3} s CPU)", s.time_s)?,
        None => writeln!(out, "time:            {:.3} s", s.time_s)?,
    }
    let rules = if s.fifty_move_rule {
        format!("{} (with the fifty-move rule)", s.rule_set)
    } else {
        s.rules.clone()
    };
    writeln!(out, "rules:           {rules}")?;
    if let Some(n) = s.proof_need {
        writeln!(
            out,
            "fifty-move need: {n} plies to the first capture or pawn move on the longest line"
        )?;
    }
    writeln!(out, "root FEN:        {}", s.root_fen)?;
    if s.seed != 0 {
        writeln!(out, "seed:            {} (tie-break order)", s.seed)?;
    }
    if let Some(t) = &s.tables {
        writeln!(out, "endgame tables:  {t} (positions of 4 men or fewer)")?;
    }
    if let Some(v) = &s.root_table {
        writeln!(out, "root in table:   {v}")?;
    }
    writeln!(out, "revision:        {}", s.revision)?;
    Ok(())
}

/// User plus system CPU time of this process so far.
fn cpu_seconds() -> Option<f64> {
    // SAFETY: getrusage writes into the zeroed struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_SELF is always valid.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return None;
    }
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    Some(t(ru.ru_utime) + t(ru.ru_stime))
}

/// A field of /proc/self/status in kB.
fn read_status_kb(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    line[field.len()..].split_whitespace().next()?.parse().ok()
}

/// The git revision this binary was built from (`+dirty` with uncommitted
/// changes; `unknown` outside a checkout), recorded by `build.rs`.
fn revision() -> String {
    env!("ANTIPROOF_REVISION").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_must_fit_the_machine_and_a_threaded_one_what_is_free() {
        const G: u64 = 1 << 30;
        let m = |g: u64| MemorySize(g * G);
        // Past the machine: refused, threads or not.
        let why = memory_refusal(m(32), 1, Some(24 * G), Some(20 * G)).unwrap();
        assert!(
            why.contains("--memory 32G: more than this machine has for a table, 21.0 GiB (7/8 of this machine's 24.0 GiB"),
            "{why}"
        );
        // The same policy a job clamps its table to: 7/8 of the machine.
        assert!(memory_refusal(m(22), 1, Some(24 * G), Some(20 * G)).is_some());
        assert_eq!(memory_refusal(m(21), 1, Some(24 * G), Some(20 * G)), None);
        // One thread grows its table as it fills: what is free now does
        // not matter.
        assert_eq!(memory_refusal(m(16), 1, Some(24 * G), Some(4 * G)), None);
        // Threads touch theirs whole at the start.
        let why = memory_refusal(m(16), 2, Some(24 * G), Some(4 * G)).unwrap();
        assert!(
            why.contains("with 2 threads") && why.contains("the 4.0 GiB available now"),
            "{why}"
        );
        assert_eq!(memory_refusal(m(2), 2, Some(24 * G), Some(4 * G)), None);
        // A machine that cannot tell refuses nothing.
        assert_eq!(memory_refusal(m(1024), 8, None, None), None);
    }
}
