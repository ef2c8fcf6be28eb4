//! Antichess endgame tables up to 4 men, by retrograde analysis, and their
//! certification.
//!
//! * [`generate`]: retrograde generation with `crate::rules`.
//! * [`fifty`]: the same under the fifty-move rule (distances to the next
//!   capture or pawn move, cursed wins drawn; see [`Tables::open`]).
//! * [`Tables`]: a directory of tables, built on demand, and the prover's
//!   probe.
//!
//! The file format, indexing, materials and the certifier live in the
//! rules-free [`crate::tablefile`] (the independent checker reads tables
//! through it) and are re-exported here: [`material`], [`index`],
//! [`format`](mod@format), [`certify`].
//!
//! A table holds, for every position of one material and either side to
//! move, the value for the side to move: win, loss or draw, and for wins
//! and losses the distance to the end of the game in plies (DTW) with best
//! play (the winner hurries, the loser delays). Positions where an
//! en-passant capture is legal are not in any table: their value is the
//! best over their moves (all captures), one ply ahead.
//!
//! Tables under the fifty-move rule ([`Tables::open`], built by
//! [`fifty`]) hold instead the value under the rule at a half-move clock of
//! 0 with the plies to the next capture or pawn move (DTZ); see
//! `docs/tables.md`, "Tables under the fifty-move rule".
//!
//! Use [`Tables`] to open a directory of tables: [`Tables::probe`] for the
//! prover's fast path (never builds), [`Tables::value`] to build what is
//! missing on demand, and [`certify::probe_shakmaty`] for the checker's
//! side.
//!
//! See `docs/tables.md` for the format, indexing and figures.

pub mod fifty;
pub mod generate;

use crate::rules::{Color, Outcome, Position, Role, Rules};
pub use crate::tablefile::{Layout, Material};
pub use crate::tablefile::{
    MAX_MEN, Stats, Table, TableError, TableSet, TableSource, Value, Wdl, certify, format, index,
    material,
};
pub use crate::vocab::RuleSet;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

/// The material of a rules position.
pub fn material_of(pos: &Position) -> Material {
    let mut m = Material::default();
    for c in Color::ALL {
        for r in Role::ALL {
            m.counts[c.index()][r.index()] = pos.pieces(c, r).count() as u8;
        }
    }
    m
}

/// The value of a position for its side to move under `rules` (a whole
/// rule set, or a stalemate rule alone: without the fifty-move rule), from
/// its game end, a table, or (en passant possible) one ply ahead. Under
/// the fifty-move rule, the fifty-move value at a half-move clock of 0
/// (`src` holding the tables built for the rule; see [`Tables::open`]); a
/// position with en passant is then valued over its moves (all captures,
/// so each a win or loss in 1 or a draw).
pub fn value_of<S: TableSource>(
    pos: &Position,
    rules: impl Into<RuleSet>,
    src: &S,
) -> Result<Value, TableError> {
    let rule_set = rules.into();
    let rules = rule_set.stalemate;
    if let Some(o) = pos.outcome(rules) {
        return Ok(match o {
            Outcome::Draw => Value::Draw,
            Outcome::Win(c) if c == pos.turn() => Value::Win(0),
            Outcome::Win(_) => Value::Loss(0),
        });
    }
    if pos.men() > MAX_MEN {
        return Err(TableError::TooManyMen {
            fen: pos.to_fen(),
            men: pos.men(),
        });
    }
    if pos.ep_square().is_some() {
        let mut best: Option<Value> = None;
        for &m in pos.legal_moves().iter() {
            let child = value_of(&pos.play(m), rule_set, src)?;
            let v = if rule_set.fifty_move {
                child.after_move_fifty(m.is_irreversible())
            } else {
                child.after_move()
            };
            if best.is_none_or(|b| v.score() > b.score()) {
                best = Some(v);
            }
        }
        return Ok(best.expect("a position with en passant has a move"));
    }
    let m = material_of(pos);
    let p = if m.is_canonical() {
        *pos
    } else {
        pos.flip_colors()
    };
    src.with_table(&m.canonical(), |t| {
        let sq = generate::squares_of(&p, &t.layout);
        t.value(t.layout.encode(&sq))
    })
}

/// The legal moves of `pos` with their values for the side to move, best
/// first (quicker wins, then draws, then slower losses; ties in UCI order),
/// from `child_value`, the value of the position after each move for the
/// side to move there. Under the fifty-move rule (`rules.fifty_move`, with
/// fifty-move values as [`Tables::open`] gives them) at half-move
/// clock `clock`: [`Value::after_move_fifty`], drawn unless decisive at
/// the clock. Empty when the game is over. What `tables probe` lists and
/// `uci` plays off a proof.
pub fn ranked_moves<E>(
    pos: &Position,
    rules: RuleSet,
    clock: u32,
    mut child_value: impl FnMut(&Position) -> Result<Value, E>,
) -> Result<Vec<(crate::rules::Move, Value)>, E> {
    let mut moves = Vec::new();
    if pos.outcome(rules.stalemate).is_some() {
        return Ok(moves);
    }
    for &m in pos.legal_moves().iter() {
        let child = child_value(&pos.play(m))?;
        let v = if rules.fifty_move {
            match child.after_move_fifty(m.is_irreversible()) {
                v if v.decisive_at(clock) => v,
                _ => Value::Draw,
            }
        } else {
            child.after_move()
        };
        moves.push((m, v));
    }
    moves.sort_by_key(|&(m, v)| (-v.score(), m.uci().to_string()));
    Ok(moves)
}

type TableMap = HashMap<u64, (Material, Arc<Table>), crate::fasthash::FastBuild>;

/// A directory of tables for one rule set, loaded on first use.
pub struct Tables {
    dir: PathBuf,
    /// The rule set (tables for the fifty-move rule when it has it: see
    /// [`Tables::open`]).
    rule_set: RuleSet,
    build: bool,
    loaded: RwLock<TableMap>,
    /// Materials found missing by [`Tables::probe`] (not looked for again).
    missing: RwLock<std::collections::HashSet<u64, crate::fasthash::FastBuild>>,
    /// Serialises building.
    building: Mutex<()>,
}

/// What building one table did.
#[derive(Clone, Debug)]
pub struct BuildEvent {
    /// The material.
    pub material: Material,
    /// Entries.
    pub entries: u64,
    /// Counts.
    pub stats: Stats,
    /// Seconds spent.
    pub seconds: f64,
    /// The file written.
    pub path: PathBuf,
    /// Why a file already there was replaced (it was not a valid table of
    /// this material and rule set), if one was.
    pub replaced: Option<String>,
}

impl Tables {
    /// The default directory: `$XDG_CACHE_HOME/antiproof/tables`, else
    /// `~/.cache/antiproof/tables`, else `./antiproof-tables`.
    pub fn default_dir() -> PathBuf {
        if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|x| !x.is_empty()) {
            return PathBuf::from(x).join("antiproof").join("tables");
        }
        if let Some(h) = std::env::var_os("HOME").filter(|x| !x.is_empty()) {
            return PathBuf::from(h)
                .join(".cache")
                .join("antiproof")
                .join("tables");
        }
        PathBuf::from("antiproof-tables")
    }

    /// Opens a directory of tables of `rules` (a whole rule set, or a
    /// stalemate rule alone: without the fifty-move rule) for reading only:
    /// a missing table is not built ([`Tables::probe`] then answers `None`).
    ///
    /// With the fifty-move rule on, the tables read (and built, see
    /// [`Tables::open_building`]) are those for the rule
    /// (`KBNvK.international_fifty.apt`), and [`Tables::probe`] and
    /// [`Tables::value`] give, for the side to move at a half-move clock of
    /// 0, `Win(n)` / `Loss(n)` where `n` is the plies to the next capture
    /// or pawn move (or game end) under best play within the rule, and
    /// `Draw` for everything else (cursed wins, blessed losses). A position
    /// at clock `c` is won by the side to move iff `Win(n)` with
    /// `c + n <= 100` ([`Value::decisive_at`]); game ends (`n = 0`) count
    /// at any clock.
    pub fn open(dir: impl AsRef<Path>, rules: impl Into<RuleSet>) -> Tables {
        Tables {
            dir: dir.as_ref().to_path_buf(),
            rule_set: rules.into(),
            build: false,
            loaded: RwLock::new(TableMap::default()),
            missing: RwLock::default(),
            building: Mutex::new(()),
        }
    }

    /// As [`Tables::open`], building missing tables on demand.
    pub fn open_building(dir: impl AsRef<Path>, rules: impl Into<RuleSet>) -> Tables {
        Tables {
            build: true,
            ..Tables::open(dir, rules)
        }
    }

    /// The whole rule set (stalemate rule and fifty-move rule).
    pub fn rule_set(&self) -> RuleSet {
        self.rule_set
    }

    /// Whether these are tables for the fifty-move rule.
    pub fn fifty_move(&self) -> bool {
        self.rule_set.fifty_move
    }

    /// The stalemate rule.
    pub fn rules(&self) -> Rules {
        self.rule_set.stalemate
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of a material's table.
    pub fn path(&self, material: &Material) -> PathBuf {
        format::table_path(&self.dir, material, self.rule_set)
    }

    /// The loaded tables, by canonical material.
    pub fn loaded(&self) -> Vec<Material> {
        let mut v: Vec<Material> = self.loaded.read().unwrap().values().map(|e| e.0).collect();
        v.sort_by_key(|m| m.to_string());
        v
    }

    /// The table of a material: loaded, read from its file, or (when
    /// building is on) built with its dependencies first.
    pub fn table(&self, material: &Material) -> Result<Arc<Table>, TableError> {
        self.table_reporting(material, &mut |_| {})
    }

    /// As [`Tables::table`], calling `report` after each table built.
    pub fn table_reporting(
        &self,
        material: &Material,
        report: &mut dyn FnMut(&BuildEvent),
    ) -> Result<Arc<Table>, TableError> {
        let m = material.canonical();
        if let Some((_, t)) = self.loaded.read().unwrap().get(&m.key()) {
            return Ok(t.clone());
        }
        let path = self.path(&m);
        let mut replaced = None;
        if path.exists() {
            match Table::open_expected(&path, self.rule_set, &m) {
                Ok(t) => {
                    let t = Arc::new(t);
                    self.loaded.write().unwrap().insert(m.key(), (m, t.clone()));
                    return Ok(t);
                }
                // A cache file that is not this table: rebuilt when
                // building, an error otherwise.
                Err(e @ (TableError::BadFile { .. } | TableError::WrongRules { .. }))
                    if self.build =>
                {
                    replaced = Some(e.to_string());
                }
                Err(e) => return Err(e),
            }
        }
        if !self.build {
            return Err(TableError::Missing {
                material: m.to_string(),
                rules: self.rule_set,
                path,
            });
        }
        let mut deps = Vec::new();
        for d in m.successors() {
            deps.push((d, self.table_reporting(&d, report)?));
        }
        let _guard = self.building.lock().unwrap();
        if let Some((_, t)) = self.loaded.read().unwrap().get(&m.key()) {
            return Ok(t.clone());
        }
        let start = std::time::Instant::now();
        let layout = Layout::new(&m);
        let rules = self.rule_set.stalemate;
        let g = if self.rule_set.fifty_move {
            fifty::run(&layout, rules, &TableSet(deps))?
        } else {
            generate::run(&layout, rules, &TableSet(deps))?
        };
        let table = Table::from_data(layout, self.rule_set, g.data, g.overflow, g.stats);
        table.write(&path)?;
        drop(table);
        let t = Arc::new(Table::open(&path, false)?);
        report(&BuildEvent {
            material: m,
            entries: t.header.entries,
            stats: t.header.stats,
            seconds: start.elapsed().as_secs_f64(),
            path,
            replaced,
        });
        self.loaded.write().unwrap().insert(m.key(), (m, t.clone()));
        Ok(t)
    }

    /// Builds (or loads) the table of a material and everything it needs.
    pub fn build(
        &self,
        material: &Material,
        report: &mut dyn FnMut(&BuildEvent),
    ) -> Result<Arc<Table>, TableError> {
        self.table_reporting(material, report)
    }

    /// The value of a position for the side to move, building missing
    /// tables if building is on. Game ends are valued without tables.
    /// An error for more than 4 men.
    ///
    /// Under the fifty-move rule, the fifty-move value at a half-move clock
    /// of 0 (see [`Tables::open`]).
    pub fn value(&self, pos: &Position) -> Result<Value, TableError> {
        value_of(pos, self.rule_set, self)
    }

    /// The prover's fast path: the value of a position with at most 4 men
    /// from the tables, or `None` (more men, or a table not available: a
    /// table file found missing is not looked for again by this
    /// `Tables`). Never builds, whatever the opening mode. Game ends and
    /// en-passant positions are valued directly. Under the fifty-move rule,
    /// the fifty-move value at a half-move clock of 0 (see
    /// [`Tables::open`]).
    pub fn probe(&self, pos: &Position) -> Option<Value> {
        if pos.men() > MAX_MEN {
            return None;
        }
        value_of(pos, self.rule_set, &NoBuild(self)).ok()
    }
}

impl TableSource for Tables {
    fn with_table<R>(
        &self,
        material: &Material,
        f: impl FnOnce(&Table) -> R,
    ) -> Result<R, TableError> {
        let t = self.table(material)?;
        Ok(f(&t))
    }
}

/// A view of [`Tables`] that loads existing files but never builds.
struct NoBuild<'a>(&'a Tables);

impl TableSource for NoBuild<'_> {
    fn with_table<R>(
        &self,
        material: &Material,
        f: impl FnOnce(&Table) -> R,
    ) -> Result<R, TableError> {
        let m = material.canonical();
        if let Some((_, t)) = self.0.loaded.read().unwrap().get(&m.key()) {
            return Ok(f(t));
        }
        if self.0.missing.read().unwrap().contains(&m.key()) {
            return Err(TableError::Missing {
                material: m.to_string(),
                rules: self.0.rule_set,
                path: self.0.path(&m),
            });
        }
        let path = self.0.path(&m);
        let t = match Table::open_expected(&path, self.0.rule_set, &m) {
            Ok(t) => Arc::new(t),
            Err(e) => {
                self.0.missing.write().unwrap().insert(m.key());
                return Err(e);
            }
        };
        self.0
            .loaded
            .write()
            .unwrap()
            .insert(m.key(), (m, t.clone()));
        Ok(f(&t))
    }
}
