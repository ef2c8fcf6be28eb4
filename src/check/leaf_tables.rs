//! Endgame-table leaves: a leaf of 4 men or fewer that is not a finished
//! game is accepted when a table scores it as a win for the winner AND
//! that table is certified in the same run.
//!
//! Tables are read through the rules-free [`crate::tablefile`] (never
//! `crate::tables`, the generator). During a walk each table leaf is
//! scored with [`certify::probe_shakmaty`] (shakmaty decides game ends and
//! en passant; the table gives the value), and every table touched is
//! noted. After the walk, [`LeafTables::certify_used`] certifies each table
//! touched and, since a table's entries are only as good as those of the
//! tables its captures and promotions lead to, every table below it: each
//! once per run (the results are cached in the [`LeafTables`]). A leaf
//! value read from a table that fails certification never certifies a
//! proof.
//!
//! A table whose exact file bytes (SHA-256) a certification record in the
//! directory holds is not certified again ([`crate::tablefile::record`]);
//! the report names such tables apart, and [`LeafTables::recertify`]
//! turns records off. New certifications are recorded.

use crate::tablefile::certify;
use crate::tablefile::record::{self, Certification, Records};
use crate::tablefile::{Material, Rules, Table, TableError, TableSource, Value, format};
use shakmaty::variant::Antichess;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

/// A directory of endgame tables for one rule set, as the checker reads
/// it: loaded on first use, certified after the walk.
pub struct LeafTables {
    dir: PathBuf,
    /// The rule set (tables that respect the fifty-move rule, whose values
    /// are distances to the next capture or pawn move, when it has it: see
    /// [`LeafTables::open`]).
    rule_set: crate::vocab::RuleSet,
    loaded: RwLock<HashMap<u64, Arc<Table>>>,
    /// Canonical materials read while scoring leaves.
    used: Mutex<BTreeSet<MaterialName>>,
    /// Canonical materials whose files were not there.
    missing: Mutex<BTreeSet<MaterialName>>,
    /// Certification results, by material name (cached for the run).
    certified: Mutex<BTreeMap<String, Result<Certification, String>>>,
    /// Certify every table, whatever the records say.
    recertify: bool,
    /// The state directory holding this machine's certification records
    /// (`None`: records off). Never the table directory.
    records_dir: Option<PathBuf>,
}

/// A material ordered by its name (for reports).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct MaterialName(Material);

impl Ord for MaterialName {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.0.men(), self.0.to_string()).cmp(&(other.0.men(), other.0.to_string()))
    }
}

impl PartialOrd for MaterialName {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Debug for LeafTables {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LeafTables")
            .field("dir", &self.dir)
            .field("rule_set", &self.rule_set)
            .finish_non_exhaustive()
    }
}

/// What certifying the tables used by a proof found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TablesUsed {
    /// The directory.
    pub dir: String,
    /// Tables that scored leaves (canonical material names, e.g. `KQvK`).
    pub used: Vec<String>,
    /// Every table certified for them (the used ones and those below).
    pub certified: Vec<String>,
    /// Those of `certified` taken from certification records (same file
    /// bytes certified by an earlier run), not certified entry by entry now.
    pub recorded: Vec<String>,
    /// Positions checked by the certifications made in this run (not
    /// counting the recorded ones).
    pub positions: u64,
}

impl LeafTables {
    /// Tables of `rules` (a whole rule set, or a stalemate rule alone:
    /// without the fifty-move rule) in `dir` (nothing is read yet).
    ///
    /// With the fifty-move rule on, the tables read are those built for it,
    /// and [`LeafTables::score`] gives, for the side to move at a half-move
    /// clock of 0, `Win(n)` / `Loss(n)` where `n` is the plies to the next
    /// capture or pawn move (or game end) under best play within the rule,
    /// and `Draw` for everything else (cursed wins and blessed losses
    /// included). A leaf at clock `c` is then won by the side to move iff
    /// `Win(n)` with `c + n <= 100`. Game ends (`n = 0`) count at any clock
    /// up to 100 ([`Value::decisive_at`]). Certification
    /// ([`LeafTables::certify_used`]) certifies these tables under the rule.
    pub fn open(dir: impl AsRef<Path>, rules: impl Into<crate::vocab::RuleSet>) -> LeafTables {
        LeafTables {
            dir: dir.as_ref().to_path_buf(),
            rule_set: rules.into(),
            loaded: RwLock::default(),
            used: Mutex::default(),
            missing: Mutex::default(),
            certified: Mutex::default(),
            recertify: false,
            records_dir: record::default_dir(),
        }
    }

    /// The whole rule set.
    pub fn rule_set(&self) -> crate::vocab::RuleSet {
        self.rule_set
    }

    /// Whether these are tables for the fifty-move rule.
    pub fn fifty_move(&self) -> bool {
        self.rule_set.fifty_move
    }

    /// Keep certification records in `dir` instead of this user's state
    /// directory (`None`: no records, every table certified each run).
    pub fn records_in(mut self, dir: Option<PathBuf>) -> LeafTables {
        self.records_dir = dir;
        self
    }

    /// With `yes`, certification records are ignored: every table used is
    /// certified entry by entry (and recorded afresh).
    pub fn recertify(mut self, yes: bool) -> LeafTables {
        self.recertify = yes;
        self
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The table of a canonical material, read from its file (header,
    /// sizes and data checksum checked; its rule set and material must be
    /// the asked ones). Not certified by this.
    fn table(&self, m: &Material) -> Result<Arc<Table>, TableError> {
        let m = m.canonical();
        if let Some(t) = self.loaded.read().unwrap().get(&m.key()) {
            return Ok(t.clone());
        }
        let path = format::table_path(&self.dir, &m, self.rule_set);
        if !path.exists() {
            self.missing.lock().unwrap().insert(MaterialName(m));
            return Err(TableError::Missing {
                material: m.to_string(),
                rules: self.rule_set,
                path,
            });
        }
        let t = Arc::new(Table::open_expected(&path, self.rule_set, &m)?);
        self.loaded.write().unwrap().insert(m.key(), t.clone());
        Ok(t)
    }

    /// The value of a leaf for its side to move, from the tables (not yet
    /// certified: see [`LeafTables::certify_used`]); every table read is
    /// noted as used. Under the fifty-move rule, the fifty-move value at a
    /// half-move clock of 0 (see [`LeafTables::open`]).
    pub fn score(&self, pos: &Antichess) -> Result<Value, TableError> {
        certify::probe_shakmaty(
            pos,
            self.rule_set,
            &Source {
                tables: self,
                note: true,
            },
        )
    }

    /// The names of the tables looked for but not found so far.
    pub fn missing(&self) -> Vec<String> {
        self.missing
            .lock()
            .unwrap()
            .iter()
            .map(|m| m.0.to_string())
            .collect()
    }

    /// The stalemate rule.
    pub fn rules(&self) -> Rules {
        self.rule_set.stalemate
    }

    /// The names of the tables read by [`LeafTables::score`] so far.
    pub fn used(&self) -> Vec<String> {
        self.used
            .lock()
            .unwrap()
            .iter()
            .map(|m| m.0.to_string())
            .collect()
    }

    /// Certifies every table used so far and every table below them (each
    /// once per `LeafTables`): what was certified, or the first failure
    /// (naming the table and, for a wrong entry, its position).
    pub fn certify_used(&self) -> Result<TablesUsed, String> {
        let used: Vec<Material> = self.used.lock().unwrap().iter().map(|m| m.0).collect();
        let mut all: BTreeSet<MaterialName> = BTreeSet::new();
        let mut stack = used.clone();
        while let Some(m) = stack.pop() {
            if all.insert(MaterialName(m.canonical())) {
                stack.extend(m.successors());
            }
        }
        let mut positions = 0;
        let mut recorded = Vec::new();
        let mut records = None;
        // Fewest men first: a failure names the smallest wrong table.
        for MaterialName(m) in &all {
            let name = m.to_string();
            let cached = self.certified.lock().unwrap().get(&name).cloned();
            let r = match cached {
                Some(r) => r,
                None => {
                    if records.is_none() {
                        let dir = self.records_dir.as_deref();
                        records = Some(Records::load_in(dir).map_err(|e| {
                            format!(
                                "reading the certification records in {}: {e}",
                                dir.map_or("-".into(), |d| d.display().to_string())
                            )
                        })?);
                    }
                    let records = records.as_mut().expect("loaded above");
                    let r = self.table(m).map_err(|e| e.to_string()).and_then(|t| {
                        record::certify_or_reuse(
                            &t,
                            &Source {
                                tables: self,
                                note: false,
                            },
                            records,
                            self.recertify,
                        )
                        .map_err(|e| e.to_string())
                    });
                    self.certified
                        .lock()
                        .unwrap()
                        .insert(name.clone(), r.clone());
                    r
                }
            };
            match r {
                Ok(Certification::Now(c)) => positions += c.positions,
                Ok(Certification::Recorded(_)) => recorded.push(name),
                Err(e) => {
                    return Err(format!(
                        "endgame table {name} ({}) is not certified: {e}",
                        self.rule_set
                    ));
                }
            }
        }
        Ok(TablesUsed {
            dir: self.dir.display().to_string(),
            used: used.iter().map(|m| m.to_string()).collect(),
            certified: all.iter().map(|m| m.0.to_string()).collect(),
            recorded,
            positions,
        })
    }
}

/// Hands out tables, noting them as used by leaves when `note` is set
/// (scoring leaves), not when certifying.
struct Source<'a> {
    tables: &'a LeafTables,
    note: bool,
}

impl TableSource for Source<'_> {
    fn with_table<R>(
        &self,
        material: &Material,
        f: impl FnOnce(&Table) -> R,
    ) -> Result<R, TableError> {
        let t = self.tables.table(material)?;
        if self.note {
            self.tables
                .used
                .lock()
                .unwrap()
                .insert(MaterialName(material.canonical()));
        }
        Ok(f(&t))
    }
}
