//! Antichess endgame tables up to 4 men, by retrograde analysis, and their
//! certification.
//!
//! * [`material`]: material signatures (`KNvB`) and their orientation.
//! * [`index`]: positions to table indices and back (symmetries, identical
//!   men), shared by the generator and the certifier.
//! * [`format`]: the file format (header, checksum, memory-mapped reading).
//! * [`generate`]: retrograde generation with `crate::rules`.
//! * [`certify`]: checks every entry of a table against its successors
//!   with shakmaty's move generation, without trusting the generator.
//!
//! A table holds, for every position of one material and either side to
//! move, the value for the side to move: win, loss or draw, and for wins
//! and losses the distance to the end of the game in plies (DTW) with best
//! play (the winner hurries, the loser delays). Positions where an
//! en-passant capture is legal are not in any table: their value is the
//! best over their moves (all captures), one ply ahead.
//!
//! Use [`Tables`] to open a directory of tables: [`Tables::probe`] for the
//! prover's fast path (never builds), [`Tables::value`] to build what is
//! missing on demand, and [`certify::probe_shakmaty`] for the checker's
//! side.
//!
//! See `docs/tables.md` for the format, indexing and figures.

pub mod certify;
pub mod format;
pub mod generate;
pub mod index;
pub mod material;

use crate::rules::{Color, Outcome, Position, Role, RuleSet};
pub use format::{Stats, Table};
pub use index::Layout;
pub use material::Material;
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

/// Most men a table holds.
pub const MAX_MEN: u32 = index::MAX_MEN as u32;

/// Win, draw or loss, for the side to move.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Wdl {
    /// The side to move wins.
    Win,
    /// Nobody can force a win.
    Draw,
    /// The side to move loses.
    Loss,
}

impl Wdl {
    /// `"win"`, `"draw"` or `"loss"`.
    pub fn name(self) -> &'static str {
        match self {
            Wdl::Win => "win",
            Wdl::Draw => "draw",
            Wdl::Loss => "loss",
        }
    }
}

/// The value of a position for the side to move, with the distance to the
/// end of the game in plies (DTW) for wins and losses.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Value {
    /// Wins in this many plies.
    Win(u16),
    /// Draw.
    Draw,
    /// Loses in this many plies.
    Loss(u16),
}

impl Value {
    /// The value code: 0 draw, `1 + 2n` win in n, `2 + 2n` loss in n.
    pub fn code(self) -> u32 {
        match self {
            Value::Draw => 0,
            Value::Win(n) => 1 + 2 * n as u32,
            Value::Loss(n) => 2 + 2 * n as u32,
        }
    }

    /// The value of a code.
    #[inline(always)]
    pub fn from_code(c: u32) -> Value {
        if c == 0 {
            Value::Draw
        } else if c & 1 == 1 {
            Value::Win(((c - 1) / 2) as u16)
        } else {
            Value::Loss(((c - 2) / 2) as u16)
        }
    }

    /// The entry byte: the code if below 255 (distances up to 126 plies);
    /// `None` beyond (such entries hold [`format::ESCAPE`] and their code
    /// in the table's overflow list).
    pub fn to_byte(self) -> Option<u8> {
        let c = self.code();
        if c < format::ESCAPE as u32 {
            Some(c as u8)
        } else {
            None
        }
    }

    /// The value of an entry byte below [`format::ESCAPE`].
    #[inline(always)]
    pub fn from_byte(b: u8) -> Value {
        Value::from_code(b as u32)
    }

    /// Win, draw or loss.
    pub fn wdl(self) -> Wdl {
        match self {
            Value::Win(_) => Wdl::Win,
            Value::Draw => Wdl::Draw,
            Value::Loss(_) => Wdl::Loss,
        }
    }

    /// The distance in plies, for wins and losses.
    pub fn dtw(self) -> Option<u16> {
        match self {
            Value::Win(n) | Value::Loss(n) => Some(n),
            Value::Draw => None,
        }
    }

    /// The value of a move for the side that makes it, given the value of
    /// the position after it (for the other side): a loss there in `n` is a
    /// win in `n + 1` here, and so on.
    pub fn after_move(self) -> Value {
        match self {
            Value::Win(n) => Value::Loss(n + 1),
            Value::Draw => Value::Draw,
            Value::Loss(n) => Value::Win(n + 1),
        }
    }

    /// An order on values for the side to move: quicker wins first, then
    /// draws, then slower losses.
    pub fn score(self) -> i32 {
        match self {
            Value::Win(n) => 100_000 - n as i32,
            Value::Draw => 0,
            Value::Loss(n) => -100_000 + n as i32,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Win(n) => write!(f, "win in {n}"),
            Value::Draw => f.write_str("draw"),
            Value::Loss(n) => write!(f, "loss in {n}"),
        }
    }
}

/// Errors of the tables.
#[derive(Debug)]
pub enum TableError {
    /// Reading or writing a file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file is not a valid table.
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A position has more men than tables cover.
    TooManyMen {
        /// The position.
        fen: String,
        /// Its men.
        men: u32,
    },
    /// A needed table is not built (and building was not asked for).
    Missing {
        /// Canonical material.
        material: String,
        /// Rule set.
        rules: RuleSet,
        /// Where it was looked for.
        path: PathBuf,
    },
    /// A distance does not fit the one-byte entry.
    DtwOverflow {
        /// The material being built.
        material: String,
    },
    /// A table stored for another rule set.
    WrongRules {
        /// The file.
        path: PathBuf,
        /// Its rule set.
        found: RuleSet,
    },
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            TableError::BadFile { path, reason } => {
                write!(f, "{}: not a valid table: {reason}", path.display())
            }
            TableError::TooManyMen { fen, men } => write!(
                f,
                "position {fen} has {men} men; the tables cover at most {MAX_MEN}"
            ),
            TableError::Missing {
                material,
                rules,
                path,
            } => write!(
                f,
                "table {material} ({rules}) is not built (looked for {})",
                path.display()
            ),
            TableError::DtwOverflow { material } => write!(
                f,
                "table {material}: a distance exceeds {} plies",
                generate::MAX_DTW
            ),
            TableError::WrongRules { path, found } => {
                write!(f, "{}: table is for {found} rules", path.display())
            }
        }
    }
}

impl std::error::Error for TableError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TableError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Something that hands out tables by canonical material.
pub trait TableSource {
    /// Runs `f` on the table of `material` (canonical).
    fn with_table<R>(
        &self,
        material: &Material,
        f: impl FnOnce(&Table) -> R,
    ) -> Result<R, TableError>;
}

/// A fixed set of loaded tables (the dependencies of a generation; a
/// short list, searched linearly).
pub struct TableSet(pub Vec<(Material, Arc<Table>)>);

impl TableSource for TableSet {
    fn with_table<R>(
        &self,
        material: &Material,
        f: impl FnOnce(&Table) -> R,
    ) -> Result<R, TableError> {
        match self.0.iter().find(|(m, _)| m == material) {
            Some((_, t)) => Ok(f(t)),
            None => Err(TableError::Missing {
                material: material.to_string(),
                rules: RuleSet::International,
                path: PathBuf::new(),
            }),
        }
    }
}

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

/// The value of a position for its side to move, from its game end, a
/// table, or (en passant possible) one ply ahead.
pub fn value_of<S: TableSource>(
    pos: &Position,
    rules: RuleSet,
    src: &S,
) -> Result<Value, TableError> {
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
            let v = value_of(&pos.play(m), rules, src)?.after_move();
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

/// A hasher for material keys (one `u64`): a multiply and a shift.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        let h = (self.0 ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = h ^ (h >> 29);
    }
}

type TableMap = HashMap<u64, (Material, Arc<Table>), BuildHasherDefault<KeyHasher>>;

/// A directory of tables for one rule set, loaded on first use.
pub struct Tables {
    dir: PathBuf,
    rules: RuleSet,
    build: bool,
    loaded: RwLock<TableMap>,
    /// Materials found missing by [`Tables::probe`] (not looked for again).
    missing: RwLock<std::collections::HashSet<u64, BuildHasherDefault<KeyHasher>>>,
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

    /// Opens a directory for reading only: a missing table is not built
    /// ([`Tables::probe`] then answers `None`).
    pub fn open(dir: impl AsRef<Path>, rules: RuleSet) -> Tables {
        Tables {
            dir: dir.as_ref().to_path_buf(),
            rules,
            build: false,
            loaded: RwLock::new(TableMap::default()),
            missing: RwLock::default(),
            building: Mutex::new(()),
        }
    }

    /// Opens a directory where missing tables are built on demand.
    pub fn open_building(dir: impl AsRef<Path>, rules: RuleSet) -> Tables {
        Tables {
            build: true,
            ..Tables::open(dir, rules)
        }
    }

    /// The rule set.
    pub fn rules(&self) -> RuleSet {
        self.rules
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of a material's table.
    pub fn path(&self, material: &Material) -> PathBuf {
        format::table_path(&self.dir, material, self.rules)
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
        if path.exists() {
            let t = Table::open(&path, true)?;
            if t.header.rules != self.rules {
                return Err(TableError::WrongRules {
                    path,
                    found: t.header.rules,
                });
            }
            let t = Arc::new(t);
            self.loaded.write().unwrap().insert(m.key(), (m, t.clone()));
            return Ok(t);
        }
        if !self.build {
            return Err(TableError::Missing {
                material: m.to_string(),
                rules: self.rules,
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
        let g = generate::run(&layout, self.rules, &TableSet(deps))?;
        let table = Table::from_data(layout, self.rules, g.data, g.overflow, g.stats);
        table.write(&path)?;
        drop(table);
        let t = Arc::new(Table::open(&path, false)?);
        report(&BuildEvent {
            material: m,
            entries: t.header.entries,
            stats: t.header.stats,
            seconds: start.elapsed().as_secs_f64(),
            path,
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
    pub fn value(&self, pos: &Position) -> Result<Value, TableError> {
        value_of(pos, self.rules, self)
    }

    /// The prover's fast path: the value of a position with at most 4 men
    /// from the tables, or `None` (more men, or a table not available: a
    /// table file found missing is not looked for again by this
    /// `Tables`). Never builds, whatever the opening mode. Game ends and
    /// en-passant positions are valued directly.
    pub fn probe(&self, pos: &Position) -> Option<Value> {
        if pos.men() > MAX_MEN {
            return None;
        }
        value_of(pos, self.rules, &NoBuild(self)).ok()
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
                rules: self.0.rules,
                path: self.0.path(&m),
            });
        }
        let path = self.0.path(&m);
        let t = match Table::open(&path, true) {
            Ok(t) if t.header.rules == self.0.rules => Arc::new(t),
            Ok(t) => {
                return Err(TableError::WrongRules {
                    path,
                    found: t.header.rules,
                });
            }
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
