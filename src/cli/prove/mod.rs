//! `antiproof prove`: prove a forced win for a line and store its solution
//! tree. See docs/prove.md.

use super::ladder::Rungs;
use super::values::{self, Limit, MemorySize};
use crate::rules::{Color, Move, Position};
use crate::search::run::{self, ProvingRun};
use crate::search::{Config, Limits, Progress, ProgressFn, ProveResult, StandingFn};
use crate::store::Store;
use anyhow::{Context, anyhow, bail};
use clap::Args;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

mod checks;
mod jobs;
mod obligations;
mod summary;

use checks::{check_memory, check_outputs};
use obligations::run_obligations;
use summary::{Summary, cpu_seconds, fmt_pn, print_summary, read_status_kb, revision};

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
    /// Stop after this long (`30s`, `5m`, `1h`; at most 1 year; counted
    /// from the end of `--known`'s loading, without a saved table's) or
    /// this many nodes (`10M nodes`; at most 10^15).
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
    /// Write every node proven this many plies below the root or fewer
    /// as soon as it is proven (tests use 0 to leave it to the stop).
    #[arg(long, default_value_t = crate::search::CHECKPOINT_PLIES, hide = true)]
    checkpoint_plies: u32,
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
    /// Raise each new position's proof number by its half-move clock over
    /// D (0-100; 0, the default: off), so that in a quiet stretch the
    /// search prefers captures and pawn moves to endless reorderings of the
    /// same shuffling moves. A heuristic with an erratic effect: 4 proved
    /// 1.e3 Nc6 2.Ba6 bxa6 3.a4 Nb8 where 0 stood for hours, but other
    /// values and lines gain nothing or lose (docs/prove.md). Not with the
    /// job executors.
    #[arg(long, value_name = "D", default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=100))]
    pub(super) clock_init: u32,
    /// With --jobs N above 1 and one search: its threads take turns, a
    /// slice each in a fixed round, so two runs search the same nodes (as
    /// the simulated cluster runs a job of several threads); the report's
    /// `span_nodes` is the busiest thread's share. For measurements.
    #[arg(long, hide = true)]
    pub(super) lockstep: bool,
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
    /// When standard error is not a terminal (a run in the background):
    /// write a line there every TIME (`10m`, `1h`; default 10m; `0s`:
    /// never) on where the search stands: nodes, rate, the root's
    /// numbers, its best moves and the principal line. One line's search
    /// only (a job-level search keeps `status.json` in its work
    /// directory instead).
    #[arg(long, value_parser = values::limit, value_name = "TIME")]
    log_every: Option<Limit>,
    #[command(flatten)]
    many: jobs::ManyArgs,
    /// Moves from the start position (or --fen), UCI or SAN.
    moves: Vec<String>,
}

/// How often a search in the background says where it stands
/// (`--log-every`, default 10 minutes; zero: never), refused with what
/// runs no one search.
fn log_every(args: &ProveArgs, job_executor: bool) -> anyhow::Result<Duration> {
    let Some(limit) = args.log_every else {
        return Ok(Duration::from_secs(600));
    };
    let Limit::Time(t) = limit else {
        bail!("--log-every takes a time (`10m`, `1h`), not a node count");
    };
    if job_executor || args.ladder || args.obligations.is_some() {
        bail!(
            "--log-every logs one line's search: not with the job executors (their master keeps \
             status.json in its work directory), --ladder or --obligations"
        );
    }
    Ok(t)
}

/// Runs `antiproof prove`.
pub fn run(args: ProveArgs) -> anyhow::Result<u8> {
    let job_executor = args.many.job_executor();
    args.many.check_sim_options()?;
    args.many.check_job_options()?;
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
    if args.clock_init != 0 && job_executor {
        bail!(
            "--clock-init works with one search or --executor search (a job file does not carry it)"
        );
    }
    let log_every = log_every(&args, job_executor)?;
    if job_executor {
        args.rules
            .without_fifty("prove --jobs with job executors")?;
        return jobs::run(&args);
    }
    let state_save = args.many.plain_state()?;
    if state_save.is_some() && (args.ladder || args.obligations.is_some()) {
        bail!("--state saves the search of one line: not with --ladder or --obligations");
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
    let say = |w: &str| errln!("antiproof: {w}");
    let state = match state_save {
        Some(save) => Some(plain_state(
            &args, save, &store, rule_set, &pos, winner, &say,
        )?),
        None => None,
    };
    let state_path = state.as_ref().map(|s| s.save.path.display().to_string());
    let config = Config {
        rule_set,
        tt_bytes: args.memory.bytes(),
        limits,
        checkpoint_size: args.checkpoint_size,
        checkpoint_plies: args.checkpoint_plies,
        flush_nodes: crate::search::FLUSH_NODES,
        threads: args.many.threads(),
        shrink_alternatives: args.smaller_proof,
        seed: args.seed,
        lockstep: args.lockstep,
        clock_init: args.clock_init,
    };
    let show_progress = io::stderr().is_terminal() && !args.json;
    let progress: Option<ProgressFn> = show_progress.then(|| {
        Box::new(|p: &Progress| {
            let rss = read_status_kb("VmRSS:").unwrap_or(0) / 1024;
            let rate = p.nodes as f64 / p.elapsed.as_secs_f64().max(1e-9);
            errprint!(
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
    let standing_log: Option<StandingFn> = (!io::stderr().is_terminal() && !log_every.is_zero())
        .then(|| {
            Box::new(|p: &Progress, st: &crate::search::Standing| {
                errln!("antiproof: {}", summary::standing_line(p, st));
            }) as StandingFn
        });
    let job = ProvingRun {
        root: pos,
        winner,
        config,
        store: &store,
        db: &args.db,
        tables: tables.as_ref(),
        state,
        standing_log: standing_log.map(|f| (log_every, f)),
    };
    let warn = |w: &str| errln!("antiproof: warning: {w}");
    let finished = run::prove(job, progress, &warn)?;
    if finished.state_seeded > 0 {
        errln!(
            "antiproof: the search started from the run state's {} table entries",
            finished.state_seeded
        );
    }
    let (state_saved, state_seeded) = (finished.state_saved, finished.state_seeded);
    let (report, resumed, saved_tt) = (finished.report, finished.resumed, finished.saved_tt);
    let (root_moves, principal_line, principal_line_quiet_plies) = match finished.standing {
        Some(st) => (
            Some(st.root_moves),
            Some(st.principal_line),
            Some(st.line_quiet_plies),
        ),
        None => (None, None, None),
    };
    if report.result == ProveResult::Proven {
        store_line_back(&store, rule_set, &start, &played, winner)?;
        super::proven_lines::note(&store, rule_set, args.fen.as_deref(), &played, winner)?;
    }
    if show_progress {
        errprint!("\r{:80}\r", "");
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
        span_nodes: report.span_nodes,
        root_pn: report.root_pn,
        root_dn: report.root_dn,
        root_moves,
        principal_line,
        principal_line_quiet_plies,
        proof_positions: report.proof_positions,
        proof_positions_exact: report.proof_positions_exact,
        proof_depth: report.proof_depth,
        records_written: report.records_written,
        resumed_table: resumed,
        store_records: store.len(rule_set)?,
        store_bytes: store.file_bytes(),
        tt_bytes: report.tt_bytes,
        saved_tt: saved_tt.as_ref().map(|(p, _)| p.display().to_string()),
        saved_tt_bytes: saved_tt.as_ref().map(|&(_, b)| b),
        state: state_path,
        state_bytes: state_saved.map(|s| s.bytes),
        state_records: state_saved.map(|s| s.records),
        state_tt_entries: state_saved.map(|s| s.tt_entries),
        state_restored_tt_entries: state_seeded,
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
        clock_init: args.clock_init,
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

/// Refuses a `--state` file that is one of the run's inputs (the store,
/// a `--known` file, or one of `more`): it is written over.
pub(super) fn check_state_output(
    args: &ProveArgs,
    state: &std::path::Path,
    more: &[&std::path::Path],
) -> anyhow::Result<()> {
    let known = crate::known::tree_paths(&args.known)?;
    let mut inputs: Vec<&std::path::Path> = vec![args.db.as_path()];
    inputs.extend(known.iter().map(std::path::PathBuf::as_path));
    inputs.extend_from_slice(more);
    crate::cli::check_output(state, crate::fsutil::OutputKind::Beside, &inputs)?;
    Ok(())
}

/// A plain search's run state (`--state FILE`, resolved as `save`): the
/// file may not be one of the run's inputs; when it exists it must be
/// this search's, and its records go into the store now (before the
/// search loads the store's filter), its table entries when the search
/// starts.
fn plain_state<'a>(
    args: &ProveArgs,
    save: crate::search::state::StateSave,
    store: &Store,
    rule_set: crate::store::RuleSet,
    pos: &crate::rules::Position,
    winner: crate::rules::Color,
    say: &'a (dyn Fn(&str) + Sync),
) -> anyhow::Result<run::StateRun<'a>> {
    let saved_tt = run::tt_file(&args.db, args.tables.is_some());
    check_state_output(args, &save.path, &[&saved_tt])?;
    let absent = matches!(std::fs::symlink_metadata(&save.path),
        Err(e) if e.kind() == io::ErrorKind::NotFound);
    let restored = if !absent {
        let st = crate::search::state::read(&save.path)?;
        st.check_for(&save.path, rule_set, pos, winner)?;
        let fresh = st.restore_records(store)?;
        say(&format!(
            "run state read from {}: {} records ({fresh} new in the store), {} table entries{}",
            save.path.display(),
            st.records.len(),
            st.tt.len(),
            if st.tt_seed().is_none() {
                " (of another key scheme: not used)"
            } else if saved_tt.exists() {
                " (the saved table beside the store is resumed instead)"
            } else {
                ""
            }
        ));
        Some(st)
    } else {
        say(&format!(
            "no run state at {} yet: a fresh search, saved there as it goes",
            save.path.display()
        ));
        None
    };
    Ok(run::StateRun {
        save,
        restored,
        say,
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
    let mut limits = Limits {
        stop: Some(run::stop_flag()),
        ..Limits::default()
    };
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
    // A time limit counts from here: loading known wins (minutes for all
    // of `proofs/`, each file certified first) does not eat the search's
    // time, which a run of `--limit 4m --known proofs/` once spent whole.
    if let Some(l) = args.limit {
        l.apply(&mut limits);
    }
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
    let (mut loaded, mut written, mut in_part) = (0usize, 0u64, 0usize);
    for f in &files {
        let l = known::load_file(store, rules, f, None)?;
        if let Some(why) = l.in_part(rules) {
            in_part += 1;
            errln!(
                "antiproof: --known {}: loaded in part under {rules} ({why}, left to the search)",
                f.display()
            );
        }
        match l {
            Loaded::Loaded { written: w, .. } => {
                loaded += 1;
                written += w;
            }
            Loaded::NotCertified { verdict } => errln!(
                "antiproof: --known {}: not loaded, under {rules}: {verdict}",
                f.display()
            ),
        }
    }
    let part = if in_part > 0 {
        format!(" ({in_part} of them in part)")
    } else {
        String::new()
    };
    errln!(
        "antiproof: known wins: {loaded} of {} files certified and loaded under {rules}{part}, {written} new records",
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
        errln!(
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
        errln!(
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
