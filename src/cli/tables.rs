//! `antiproof tables`: endgame tables up to 4 men: build, verify, probe,
//! bench. See docs/tables.md.

use super::values;
use super::{EXIT_NO, EXIT_OK};
use crate::rules::{Color, Piece, Position, Role, Square};
use crate::tablefile::record::{self, Certification, Records};
use crate::tables::certify::CertifyError;
use crate::tables::{BuildEvent, MAX_MEN, Material, TableError, TableSet, Tables, Value};
use crate::vocab::{FIFTY_MOVE_PLIES, RuleSet};
use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Arguments of `antiproof tables`.
#[derive(Args, Debug)]
pub struct TablesArgs {
    #[command(subcommand)]
    command: TablesCommand,
}

#[derive(Subcommand, Debug)]
enum TablesCommand {
    /// Build tables (and the smaller ones they need) into the cache directory.
    Build(BuildArgs),
    /// Certify tables with shakmaty's move generation, entry by entry.
    Verify(VerifyArgs),
    /// The value of a position and of each of its moves.
    Probe(ProbeArgs),
    /// Probe rate on random positions of the built tables.
    Bench(BenchArgs),
}

#[derive(Args, Debug)]
struct Common {
    /// Table directory (default: $XDG_CACHE_HOME/antiproof/tables or
    /// ~/.cache/antiproof/tables).
    #[arg(long)]
    dir: Option<PathBuf>,
    #[command(flatten)]
    rules: values::RuleArgs,
}

impl Common {
    fn dir(&self) -> PathBuf {
        self.dir.clone().unwrap_or_else(Tables::default_dir)
    }
}

#[derive(Args, Debug)]
struct BuildArgs {
    #[command(flatten)]
    common: Common,
    /// Build every material with up to this many men (2 to 4), when no
    /// material is named.
    #[arg(long, default_value_t = 4, value_parser = values::men())]
    men: u32,
    /// Materials to build, e.g. KNvB PPvP (default: all up to --men).
    materials: Vec<String>,
}

#[derive(Args, Debug)]
struct VerifyArgs {
    #[command(flatten)]
    common: Common,
    /// Certify every table entry by entry, ignoring the directory's
    /// certification records (which are then written afresh).
    #[arg(long)]
    recertify: bool,
    /// Materials to certify, with every table they lead to (default: every
    /// table of the rule set in the directory).
    materials: Vec<String>,
}

#[derive(Args, Debug)]
struct ProbeArgs {
    #[command(flatten)]
    common: Common,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// The position (FEN or EPD), at most 4 men.
    fen: String,
}

#[derive(Args, Debug)]
struct BenchArgs {
    #[command(flatten)]
    common: Common,
    /// Random positions to probe (at most 10^12).
    #[arg(long, default_value_t = 1_000_000, value_parser = values::probes())]
    probes: u64,
}

/// Runs `antiproof tables`.
pub fn run(args: TablesArgs) -> anyhow::Result<u8> {
    match args.command {
        TablesCommand::Build(a) => build(a),
        TablesCommand::Verify(a) => verify(a),
        TablesCommand::Probe(a) => probe(a),
        TablesCommand::Bench(a) => bench(a),
    }
}

fn parse_materials(names: &[String]) -> anyhow::Result<Vec<Material>> {
    let mut v = Vec::new();
    for n in names {
        let m: Material = n.parse()?;
        if m.men() > MAX_MEN {
            bail!(
                "material {n} has {} men; tables cover at most {MAX_MEN}",
                m.men()
            );
        }
        v.push(m.canonical());
    }
    Ok(v)
}

fn build(a: BuildArgs) -> anyhow::Result<u8> {
    let rule_set = a.common.rules.rule_set();
    let materials = if a.materials.is_empty() {
        Material::all_up_to(a.men)
    } else {
        parse_materials(&a.materials)?
    };
    let dir = a.common.dir();
    let tables = Tables::open_building(&dir, rule_set);
    let start = Instant::now();
    let mut out = crate::cli::out::stdout();
    writeln!(
        out,
        "tables: {} material(s), rules {rule_set}, directory {}{}",
        materials.len(),
        dir.display(),
        if rule_set.fifty_move {
            " (distances: plies to the next capture or pawn move)"
        } else {
            ""
        }
    )?;
    let mut built = 0u64;
    let mut bytes = 0u64;
    let mut err = None;
    for m in &materials {
        let r = tables.build(m, &mut |e: &BuildEvent| {
            built += 1;
            bytes += e.entries;
            let _ = writeln!(
                crate::cli::out::stdout(),
                "built {:<6} {:>10} entries  {:>9} wins {:>9} losses {:>9} draws  \
                 longest win {:>3} loss {:>3}  {:.2}s",
                e.material.to_string(),
                e.entries,
                e.stats.wins,
                e.stats.losses,
                e.stats.draws,
                e.stats.longest_win,
                e.stats.longest_loss,
                e.seconds
            );
            if let Some(why) = &e.replaced {
                let _ = writeln!(
                    crate::cli::out::stdout(),
                    "  (replaced a file that was not this table: {why})"
                );
            }
        });
        if let Err(e) = r {
            err = Some(e);
            break;
        }
    }
    writeln!(
        out,
        "built {built} table(s), {bytes} bytes of entries, in {:.1}s (rules {rule_set})",
        start.elapsed().as_secs_f64(),
    )?;
    if let Some(e) = err {
        return Err(e.into());
    }
    Ok(EXIT_OK)
}

/// Every table file of a rule set in a directory, which must exist.
fn tables_in_dir(dir: &std::path::Path, rules: RuleSet) -> anyhow::Result<Vec<Material>> {
    crate::fsutil::existing_dir(dir)
        .with_context(|| format!("table directory {}", dir.display()))?;
    let suffix = format!(".{}.apt", rules.file_name());
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let name = e?.file_name().to_string_lossy().into_owned();
        if let Some(m) = name.strip_suffix(&suffix)
            && let Ok(m) = m.parse::<Material>()
        {
            v.push(m.canonical());
        }
    }
    Ok(v)
}

/// How to replace a rejected table.
fn rebuild_hint(dir: &std::path::Path, m: &Material, rules: RuleSet) -> String {
    let path = crate::tables::format::table_path(dir, m, rules);
    format!(
        "  to rebuild it: delete {}, then run antiproof tables build --dir {} --rules {rules} {m}",
        path.display(),
        dir.display()
    )
}

fn verify(a: VerifyArgs) -> anyhow::Result<u8> {
    let dir = a.common.dir();
    let rules = a.common.rules.rule_set();
    let roots = if a.materials.is_empty() {
        let roots = tables_in_dir(&dir, rules)?;
        if roots.is_empty() {
            bail!(
                "no tables of rules {rules} in {d}; build them with `antiproof tables build --dir {d}`",
                d = dir.display()
            );
        }
        roots
    } else {
        // A missing directory: each named table "is not built".
        parse_materials(&a.materials)?
    };
    // The closure under successors, smallest first.
    let mut all = BTreeSet::new();
    let mut stack = roots;
    while let Some(m) = stack.pop() {
        if all.insert((m.men(), m.pawns(), m.to_string(), m)) {
            stack.extend(m.successors());
        }
    }
    let tables = Tables::open(&dir, rules);
    let records_dir = record::default_dir();
    let mut records = Records::load_in(records_dir.as_deref()).with_context(|| {
        format!(
            "reading the certification records in {}",
            records_dir.as_deref().unwrap_or(Path::new("-")).display()
        )
    })?;
    let mut out = crate::cli::out::stdout();
    writeln!(
        out,
        "verifying {} table(s), rules {rules}, directory {}",
        all.len(),
        dir.display()
    )?;
    let start = Instant::now();
    let (mut positions, mut recorded) = (0u64, 0usize);
    for (_, _, name, m) in &all {
        let t = match tables.table(m) {
            Ok(t) => t,
            Err(e @ TableError::BadFile { .. }) => {
                writeln!(out, "REJECTED {e}")?;
                writeln!(out, "{}", rebuild_hint(&dir, m, rules))?;
                return Ok(EXIT_NO);
            }
            Err(e) => return Err(e.into()),
        };
        let mut set = vec![(*m, t.clone())];
        for d in m.successors() {
            // Smaller tables were certified (or rejected) before this one.
            set.push((d, tables.table(&d)?));
        }
        let set = TableSet(set);
        let t0 = Instant::now();
        match record::certify_or_reuse(&t, &set, &mut records, a.recertify) {
            Ok(Certification::Now(c)) => {
                positions += c.positions;
                writeln!(
                    out,
                    "ok {name:<6} {:>10} positions {:>11} moves  {:.2}s",
                    c.positions,
                    c.moves,
                    t0.elapsed().as_secs_f64()
                )?;
            }
            Ok(Certification::Recorded(c)) => {
                recorded += 1;
                writeln!(
                    out,
                    "ok {name:<6} {:>10} positions {:>11} moves  (certification record of this machine, same file bytes)",
                    c.positions, c.moves,
                )?;
            }
            Err(CertifyError::Table(e)) => return Err(e.into()),
            Err(e) => {
                writeln!(out, "REJECTED {e}")?;
                writeln!(out, "{}", rebuild_hint(&dir, m, rules))?;
                return Ok(EXIT_NO);
            }
        }
    }
    writeln!(
        out,
        "verified {} table(s), {positions} positions, in {:.1}s (rules {rules}){}",
        all.len(),
        start.elapsed().as_secs_f64(),
        if recorded > 0 {
            format!(
                "; {recorded} of them by an earlier certification on this machine ({}; --recertify to check them again)",
                records.path().unwrap_or(Path::new("-")).display()
            )
        } else {
            String::new()
        }
    )?;
    Ok(EXIT_OK)
}

fn json_value(v: Value) -> serde_json::Value {
    serde_json::json!({
        "wdl": v.wdl().name(),
        "dtw": v.dtw(),
    })
}

/// A fifty-move value (at a half-move clock of 0) seen at `clock`: win or
/// loss with its distance to the next capture or pawn move if decisive
/// then, else a draw.
fn json_fifty(v: Value, clock: u32) -> serde_json::Value {
    let v = at_clock(v, clock);
    serde_json::json!({
        "wdl": v.wdl().name(),
        "dtz": v.dtw(),
    })
}

/// A fifty-move value at a half-move clock: itself if decisive then
/// ([`Value::decisive_at`]), else a draw.
fn at_clock(v: Value, clock: u32) -> Value {
    if v.decisive_at(clock) { v } else { Value::Draw }
}

/// Words for a fifty-move value at a clock.
fn describe_fifty(v: Value) -> String {
    match v {
        Value::Win(0) | Value::Loss(0) | Value::Draw => v.to_string(),
        Value::Win(n) => format!("win, {n} plies to the next capture or pawn move"),
        Value::Loss(n) => format!("loss, {n} plies to the next capture or pawn move"),
    }
}

/// What a finished game is, in words (`None` when it is not finished):
/// the tables value it without a table, and "win in 0" alone would not
/// say why.
fn game_over(pos: &Position, rules: crate::rules::Rules) -> Option<String> {
    let o = pos.outcome(rules)?;
    let (us, them) = (pos.turn(), !pos.turn());
    Some(if pos.count(us) == 0 {
        format!(
            "the game is over: {} (to move) has no pieces left, so {o}",
            us.name()
        )
    } else if pos.count(them) == 0 {
        format!(
            "the game is over: {} has no pieces left, so {o}",
            them.name()
        )
    } else if pos.is_stalemate() {
        format!(
            "the game is over: {} (to move) has no legal move, so under {rules} rules: {o}",
            us.name()
        )
    } else {
        format!("the game is over: {o} (no win is possible)")
    })
}

fn probe(a: ProbeArgs) -> anyhow::Result<u8> {
    let pos = Position::from_fen(&a.fen).with_context(|| format!("reading FEN {:?}", a.fen))?;
    if pos.men() == 0 {
        bail!(
            "FEN {:?} is an empty board: no antichess position (a game ends when one side has \
             no pieces left, so the other still has some)",
            a.fen
        );
    }
    if pos.men() > MAX_MEN {
        bail!(
            "position {} has {} men; the tables cover at most {MAX_MEN}",
            a.fen,
            pos.men()
        );
    }
    let rule_set = a.common.rules.rule_set();
    let rules = rule_set.stalemate;
    let clock = pos.halfmoves();
    if rule_set.fifty_move && clock > FIFTY_MOVE_PLIES {
        bail!(
            "the halfmove clock {clock} of FEN {:?} is beyond {FIFTY_MOVE_PLIES}:              under the fifty-move rule the game is already drawn",
            a.fen
        );
    }
    let dir = a.common.dir();
    let tables = Tables::open_building(&dir, rule_set);
    if pos.outcome(rules).is_none() {
        // Missing tables are built, and kept: said before (a build takes
        // seconds to minutes), and where, which is the user's cache
        // directory without --dir.
        let material = crate::tables::material_of(&pos).canonical();
        if !tables.path(&material).exists() {
            errln!(
                "antiproof: building the endgame table {material} (and the smaller ones it needs) \
                 into {}{}; built once and kept there",
                dir.display(),
                if a.common.dir.is_none() {
                    " (the default directory: no --dir given)"
                } else {
                    ""
                }
            );
        }
        tables.table_reporting(&material, &mut |e: &BuildEvent| {
            errln!("antiproof: built {} ({:.1} s)", e.path.display(), e.seconds);
        })?;
    }
    let value = tables.value(&pos)?;
    let moves = crate::tables::ranked_moves(&pos, rule_set, clock, |p| tables.value(p))?;
    let shown = if rule_set.fifty_move {
        at_clock(value, clock)
    } else {
        value
    };
    let json = |v: Value| {
        if rule_set.fifty_move {
            json_fifty(v, clock)
        } else {
            json_value(v)
        }
    };
    let mut out = crate::cli::out::stdout();
    if a.json {
        let mv: Vec<serde_json::Value> = moves
            .iter()
            .map(|&(m, v)| {
                let mut j = json(v);
                j["uci"] = m.uci().to_string().into();
                j
            })
            .collect();
        let mut j = json(value);
        j["fen"] = pos.to_fen().into();
        j["rules"] = rule_set.name().into();
        if rule_set.fifty_move {
            j["clock"] = clock.into();
        }
        j["moves"] = mv.into();
        if let Some(why) = game_over(&pos, rules) {
            j["game_over"] = why.into();
        }
        writeln!(out, "{j}")?;
    } else {
        writeln!(out, "{}", pos.to_fen())?;
        if let Some(why) = game_over(&pos, rules) {
            writeln!(out, "rules {rule_set}: {why}")?;
        } else if rule_set.fifty_move {
            writeln!(
                out,
                "rules {rule_set}, halfmove clock {clock}: {} for {} (to move)",
                describe_fifty(shown),
                pos.turn().name()
            )?;
        } else {
            writeln!(
                out,
                "rules {rules}: {value} for {} (to move)",
                pos.turn().name()
            )?;
        }
        for (m, v) in &moves {
            let v = if rule_set.fifty_move {
                describe_fifty(*v)
            } else {
                v.to_string()
            };
            writeln!(out, "  {:<6} {v}", m.uci().to_string())?;
        }
    }
    Ok(EXIT_OK)
}

/// A small xorshift generator for the benchmark.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn bench(a: BenchArgs) -> anyhow::Result<u8> {
    let dir = a.common.dir();
    let rules = a.common.rules.rule_set();
    let materials = tables_in_dir(&dir, rules)?;
    if materials.is_empty() {
        bail!(
            "no {rules} tables in {}: run `antiproof tables build` first",
            dir.display()
        );
    }
    let tables = Tables::open(&dir, rules);
    for m in &materials {
        tables.table(m)?;
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut positions = Vec::new();
    while (positions.len() as u64) < a.probes.min(1_000_000) {
        let m = materials[(rng.next() % materials.len() as u64) as usize];
        let mut pieces = Vec::new();
        for c in 0..2 {
            for r in 0..6 {
                for _ in 0..m.counts[c][r] {
                    let sq = Square::new((rng.next() % 64) as u32).unwrap();
                    pieces.push((
                        sq,
                        Piece {
                            color: Color::ALL[c],
                            role: Role::from_index(r).unwrap(),
                        },
                    ));
                }
            }
        }
        let turn = Color::ALL[(rng.next() & 1) as usize];
        if let Ok(p) = Position::from_pieces(pieces, turn, None) {
            positions.push(p);
        }
    }
    let start = Instant::now();
    let mut found = 0u64;
    let mut wins = 0u64;
    for i in 0..a.probes {
        if let Some(v) = tables.probe(&positions[(i % positions.len() as u64) as usize]) {
            found += 1;
            if matches!(v, Value::Win(_)) {
                wins += 1;
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    writeln!(
        crate::cli::out::stdout(),
        "{} probes of random positions over {} tables ({rules}): {found} answered, {wins} wins, \
         {:.3}s, {:.0} probes/s",
        a.probes,
        materials.len(),
        secs,
        a.probes as f64 / secs
    )?;
    Ok(EXIT_OK)
}
