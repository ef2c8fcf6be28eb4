//! Proof-number search with bounded memory, and proof extraction into the
//! proof store.
//!
//! # The search
//!
//! Depth-first proof-number search (df-pn, Nagai) with the 1+epsilon trick
//! of Pawlewicz and Lew (a child is searched until its proof number, at an
//! OR node, passes `min(threshold, pn2 * (1 + 1/4))`, where `pn2` is the
//! second-best sibling's; dually at AND nodes), over a fixed-size
//! transposition table ([`tt`]) of 16-byte entries sized from the memory
//! budget. Proof and disproof numbers are from the prover's side: OR nodes
//! have the prover to move. New nodes get the mobility initialisation:
//! proof 1 and disproof = number of legal moves at OR nodes, the dual at
//! AND nodes. A game-over position is a proof if the prover won it, else a
//! disproof (a draw is a disproof for both sides).
//!
//! # Soundness with transpositions
//!
//! There is no repetition rule, so a repetition just goes on; a cycle is
//! never a win for the prover. The search keeps the positions of the
//! current path since the last irreversible move (capture or pawn move) and
//! treats a child that repeats one of them as disproven, without storing
//! anything for it. Its parent's value then depends on the path, so table
//! keys carry the path where it matters:
//!
//! * a node reached by an irreversible move, or whose side to move must
//!   capture (every child is reached by a capture), has a value that no
//!   earlier position can influence: its key is its Zobrist hash, shared by
//!   every transposition;
//! * any other node's key is a hash of its parent's key and its own Zobrist
//!   hash, so it names the path back to the last shareable node, which is
//!   at or after the last irreversible move: the whole repetition window.
//!
//! Two nodes with one key therefore have one value, and every value in the
//! table is sound for every path that reaches that key. (This is the rule
//! "merge transpositions only right after an irreversible move or where
//! the side to move must capture" of Watkins' solver.)
//!
//! Proven wins are path-independent (an acyclic tree whose leaves are won
//! game ends wins whatever the history), and the extraction below rebuilds
//! every proof explicitly from real positions down to game ends or stored
//! records, so a hash collision in the table can cost time, never
//! soundness.
//!
//! # Extraction and the store
//!
//! Once a node is proven, [`Prover`] walks it again: at winner nodes the
//! proven child with the smallest proof-size estimate (tried in that order;
//! a child whose proof fails to rebuild is skipped), at loser nodes every
//! legal reply. Positions merge by their packed encoding (a DAG); a
//! position still being rebuilt (on the walk's path) is never reused, so
//! the DAG has no cycle. A child whose table entry was overwritten is
//! re-proven by a small search from there. Every position of the proof
//! that is not a game end is written to the store: Win with the move where
//! the prover is to move, Loss where the opponent is, with the number of
//! distinct positions of its proof. A stored record is a proven leaf for
//! later searches and extractions; so the store always holds closed proofs:
//! a stored Win's move leads to a stored Loss or a won game end, and every
//! move of a stored Loss to a stored Win or a won game end.
//!
//! Big proven subtrees are extracted and written while the search runs
//! (checkpoints), so a stopped or killed run keeps them and the next run
//! starts from them.

pub mod tt;

use crate::rules::{Color, Move, Outcome, Position, Role, Rules};
use crate::store::{self, Key, Record, Store, StoreError, Verdict};
use crate::tables::Tables;
use crate::vocab::MoveCode;
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tt::{INF, Tt, TtValue};

/// A hasher for keys that are already random (Zobrist hashes).
#[derive(Default, Clone, Copy)]
pub struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type ProgressFn<'s> = Box<dyn FnMut(&Progress) + Send + 's>;

type ZMap<V> = HashMap<u64, V, BuildHasherDefault<IdentityHasher>>;

/// When to stop a search early.
#[derive(Clone, Default)]
pub struct Limits {
    /// Stop after this many expanded nodes.
    pub nodes: Option<u64>,
    /// Stop at this instant.
    pub deadline: Option<Instant>,
    /// Stop when this flag is set (Ctrl-C).
    pub stop: Option<Arc<AtomicBool>>,
}

/// Settings of a proving run.
pub struct Config {
    /// The rule set.
    pub rules: Rules,
    /// Bytes for the transposition table.
    pub tt_bytes: usize,
    /// Limits.
    pub limits: Limits,
    /// A proven node whose proof-size estimate reaches this is extracted
    /// and written to the store during the search.
    pub checkpoint_size: u32,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            rules: Rules::International,
            tt_bytes: 64 << 20,
            limits: Limits::default(),
            checkpoint_size: 20_000,
        }
    }
}

/// Proofs up to this many positions (by the records' estimate) are walked
/// in the store after proving, for exact size and depth figures.
pub const WALK_LIMIT: u64 = 20_000_000;

/// Magic and version of a saved transposition table: bump it whenever the
/// node keys or the entry layout change.
const TABLE_MAGIC: &[u8; 8] = b"APTT0001";

/// A progress report, about once a second.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// Nodes expanded so far.
    pub nodes: u64,
    /// Time since the start.
    pub elapsed: Duration,
    /// The root's proof number.
    pub root_pn: u32,
    /// The root's disproof number.
    pub root_dn: u32,
    /// Table entries in use.
    pub tt_used: u64,
    /// Table capacity in entries.
    pub tt_capacity: u64,
    /// Bytes of the table in use (it grows up to the budget).
    pub tt_bytes: u64,
}

/// How a run ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ProveResult {
    /// The prover wins.
    Proven,
    /// The prover cannot win.
    Disproven,
    /// A limit stopped the search.
    Stopped,
}

/// The result of a run.
#[derive(Clone, Debug)]
pub struct ProveReport {
    /// How it ended.
    pub result: ProveResult,
    /// The winning move at the root when the prover is to move there.
    pub best_move: Option<Move>,
    /// Nodes expanded.
    pub nodes: u64,
    /// Child positions generated.
    pub generated: u64,
    /// Distinct positions in the proof, game ends included (exact, from a
    /// walk of the stored proof, up to [`WALK_LIMIT`] positions; beyond it an
    /// upper bound from the records' sizes).
    pub proof_positions: u64,
    /// Longest line of the proof in plies (exact when the proof was walked;
    /// else not counting below positions stored by earlier runs).
    pub proof_depth: u32,
    /// Records written to the store in this run.
    pub records_written: u64,
    /// The root's final proof and disproof numbers.
    pub root_pn: u32,
    /// See `root_pn`.
    pub root_dn: u32,
    /// Bytes of the transposition table.
    pub tt_bytes: u64,
    /// Time taken.
    pub elapsed: Duration,
}

/// What can go wrong in a proving run.
#[derive(Debug)]
pub enum SearchError {
    /// The store failed.
    Store(StoreError),
    /// The root is a finished game.
    GameOver(Outcome),
    /// A proof could not be rebuilt from the table (should not happen).
    Extraction(String),
}

impl fmt::Display for SearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SearchError::Store(e) => write!(f, "{e}"),
            SearchError::GameOver(o) => write!(f, "the game is already over ({o})"),
            SearchError::Extraction(m) => write!(f, "proof extraction failed: {m}"),
        }
    }
}

impl std::error::Error for SearchError {}

impl From<StoreError> for SearchError {
    fn from(e: StoreError) -> SearchError {
        SearchError::Store(e)
    }
}

#[derive(Clone, Copy)]
struct PathEntry {
    z: u64,
    irrev_start: u32,
}

#[derive(Clone, Copy)]
struct Kid {
    pos: Position,
    key: u64,
    irr: bool,
    pn: u32,
    dn: u32,
    size: u32,
}

#[inline(always)]
fn mix(parent: u64, z: u64) -> u64 {
    let mut x = parent.rotate_left(17) ^ z;
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[inline(always)]
fn sat(x: u64) -> u32 {
    if x >= INF as u64 { INF - 1 } else { x as u32 }
}

#[inline(always)]
fn eps(v: u32) -> u32 {
    if v >= INF - 1 {
        INF
    } else {
        sat(v as u64 + (v as u64 / 4).max(1))
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ExKind {
    Terminal,
    /// A position of 4 men or fewer the endgame tables score as a win for
    /// the prover: a leaf, with no record.
    Table,
    /// A position stored before: proof size, proof depth when it was
    /// stored in this run (else 0), and whether its proof rests on tables.
    Stored(u64, u32, bool),
    Win(MoveCode),
    Loss,
}

struct ExNode {
    packed: Key,
    z: u64,
    kind: ExKind,
    children: Vec<u32>,
    done: bool,
}

/// Summary of an extracted proof.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProofSummary {
    /// Distinct positions.
    pub positions: u64,
    /// Longest line in plies.
    pub depth: u32,
    /// Records written.
    pub written: u64,
    /// The root's winning move code, if the prover is to move there.
    pub root_move: Option<MoveCode>,
}

/// A proving run over one root position.
pub struct Prover<'s> {
    rules: Rules,
    prover: Color,
    tt: Tt,
    store: Option<&'s Store>,
    /// Zobrist hash of stored positions -> proof size << 1 | 1 if the side
    /// to move wins.
    stored: ZMap<u64>,
    /// Zobrist hash of positions stored in this run -> depth of their proof.
    depths: ZMap<u32>,
    path: Vec<PathEntry>,
    kids: Vec<Kid>,
    nodes: u64,
    generated: u64,
    limits: Limits,
    stopped: bool,
    next_check: u64,
    start: Instant,
    last_progress: Instant,
    progress: Option<ProgressFn<'s>>,
    root_pn: u32,
    root_dn: u32,
    extracting: bool,
    checkpoint_size: u32,
    written: u64,
    store_error: Option<StoreError>,
    ex_map: HashMap<Key, u32>,
    ex_nodes: Vec<ExNode>,
    ex_finished: Vec<u32>,
    /// Endgame tables scoring positions of 4 men or fewer.
    tables: Option<&'s Tables>,
}

impl<'s> Prover<'s> {
    /// A prover for `winner` under `config`, reading and writing `store`
    /// when given (every stored proven position is loaded into an in-memory
    /// filter first).
    pub fn new(
        config: Config,
        winner: Color,
        store: Option<&'s Store>,
    ) -> Result<Prover<'s>, SearchError> {
        let mut stored = ZMap::default();
        if let Some(s) = store {
            let reader = s.reader()?;
            reader.for_each(config.rules, |k, r| {
                if let Ok(p) = Position::unpack(&crate::rules::PackedPosition(*k)) {
                    stored.insert(p.zobrist(), stored_value(&r));
                }
                Ok(())
            })?;
        }
        let now = Instant::now();
        Ok(Prover {
            rules: config.rules,
            prover: winner,
            tt: Tt::with_bytes(config.tt_bytes),
            store,
            stored,
            depths: ZMap::default(),
            path: Vec::with_capacity(1024),
            kids: Vec::with_capacity(1 << 14),
            nodes: 0,
            generated: 0,
            limits: config.limits,
            stopped: false,
            next_check: 0,
            start: now,
            last_progress: now,
            progress: None,
            root_pn: 1,
            root_dn: 1,
            extracting: false,
            checkpoint_size: config.checkpoint_size.max(2),
            written: 0,
            store_error: None,
            ex_map: HashMap::new(),
            ex_nodes: Vec::new(),
            ex_finished: Vec::new(),
            tables: None,
        })
    }

    /// Scores positions of 4 men or fewer from `tables` (the side to move
    /// wins there by the table: a proven leaf for the prover when that is
    /// the prover, else a disproven one; a position the tables do not hold
    /// is searched). Records of positions whose proof rests on tables get
    /// [`store::FLAG_TABLES`]; table positions themselves get no record
    /// (leaves, as game ends).
    pub fn set_tables(&mut self, tables: &'s Tables) {
        self.tables = Some(tables);
    }

    /// Whether the tables score `pos` (not a game end) as a win for the
    /// prover; `None`: no tables, more than 4 men, or no table for it.
    #[inline]
    fn table_win(&self, pos: &Position) -> Option<bool> {
        let t = self.tables?;
        if pos.men() > crate::tables::MAX_MEN {
            return None;
        }
        let v = t.probe(pos)?;
        Some(match v {
            crate::tables::Value::Win(_) => pos.turn() == self.prover,
            crate::tables::Value::Loss(_) => pos.turn() != self.prover,
            crate::tables::Value::Draw => false,
        })
    }

    /// Saves the transposition table for resuming the search of `root`
    /// later ([`Prover::load_table`]); written to a temporary file, then
    /// renamed.
    pub fn save_table(&self, root: &Position, path: &std::path::Path) -> std::io::Result<()> {
        let tmp = path.with_extension("tmp");
        {
            let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
            use std::io::Write;
            w.write_all(&self.table_header(root))?;
            self.tt.save(&mut w)?;
            w.flush()?;
        }
        std::fs::rename(&tmp, path)
    }

    /// Loads a table saved by [`Prover::save_table`] for the same root,
    /// winner, rule set and table format. `Ok(false)`: the file is for
    /// another search or does not fit the memory budget (nothing loaded).
    /// Sound whatever the file's age: table values are valid for their
    /// keys on every path.
    pub fn load_table(&mut self, root: &Position, path: &std::path::Path) -> std::io::Result<bool> {
        use std::io::Read;
        let mut r = std::io::BufReader::new(std::fs::File::open(path)?);
        let want = self.table_header(root);
        let mut got = [0u8; 24];
        r.read_exact(&mut got)?;
        if got != want {
            return Ok(false);
        }
        self.tt.load(&mut r)
    }

    fn table_header(&self, root: &Position) -> [u8; 24] {
        let mut h = [0u8; 24];
        h[..8].copy_from_slice(TABLE_MAGIC);
        h[8] = self.rules.code();
        h[9] = self.prover as u8;
        h[16..24].copy_from_slice(&root.zobrist().to_le_bytes());
        h
    }

    /// Calls `f` about once a second during the search.
    pub fn on_progress(&mut self, f: impl FnMut(&Progress) + Send + 's) {
        self.progress = Some(Box::new(f));
    }

    /// Number of stored positions known to the in-memory filter.
    pub fn stored_len(&self) -> usize {
        self.stored.len()
    }

    /// Proves (or disproves) a win for the prover from `root`, writing the
    /// proof into the store when proven.
    pub fn prove(&mut self, root: &Position) -> Result<ProveReport, SearchError> {
        if let Some(o) = root.outcome(self.rules) {
            return Err(SearchError::GameOver(o));
        }
        self.start = Instant::now();
        self.last_progress = self.start;
        self.stopped = false;
        let or = root.turn() == self.prover;
        let mut report = ProveReport {
            result: ProveResult::Stopped,
            best_move: None,
            nodes: 0,
            generated: 0,
            proof_positions: 0,
            proof_depth: 0,
            records_written: 0,
            root_pn: 1,
            root_dn: 1,
            tt_bytes: self.tt.bytes(),
            elapsed: Duration::ZERO,
        };
        // Already in the store?
        if let Some(rec) = self.stored_record(root)? {
            let win_for_prover = (rec.verdict == Verdict::Win) == or;
            report.result = if win_for_prover {
                ProveResult::Proven
            } else {
                ProveResult::Disproven
            };
            if win_for_prover {
                report.proof_positions = rec.size;
                report.root_pn = 0;
                report.root_dn = INF;
                if or {
                    report.best_move = root
                        .legal_moves()
                        .iter()
                        .copied()
                        .find(|m| m.watkins_code().same_move(rec.mv));
                }
            } else {
                report.root_pn = INF;
                report.root_dn = 0;
            }
            if win_for_prover {
                self.exact_figures(root, &mut report)?;
            }
            report.elapsed = self.start.elapsed();
            return Ok(report);
        }
        let key = root.zobrist();
        self.path.clear();
        self.path.push(PathEntry {
            z: root.zobrist(),
            irrev_start: 0,
        });
        let (pn, dn, _) = self.mid(root, key, INF, INF);
        if self.stopped && pn != 0 && self.store.is_some() {
            self.flush_proven(root, key);
        }
        if let Some(e) = self.store_error.take() {
            return Err(e.into());
        }
        report.root_pn = pn;
        report.root_dn = dn;
        if pn == 0 {
            let summary = self.extract_and_store(root, key)?;
            match summary {
                Some(s) => {
                    report.result = ProveResult::Proven;
                    report.proof_positions = s.positions;
                    report.proof_depth = s.depth;
                    report.best_move = s.root_move.and_then(|c| {
                        root.legal_moves()
                            .iter()
                            .copied()
                            .find(|m| m.watkins_code().same_move(c))
                    });
                }
                None if self.stopped => report.result = ProveResult::Stopped,
                None => {
                    return Err(SearchError::Extraction(
                        "the root is proven but its proof could not be rebuilt".into(),
                    ));
                }
            }
            if report.result == ProveResult::Proven {
                self.exact_figures(root, &mut report)?;
            }
        } else if dn == 0 {
            report.result = ProveResult::Disproven;
        }
        report.nodes = self.nodes;
        report.generated = self.generated;
        report.records_written = self.written;
        report.elapsed = self.start.elapsed();
        Ok(report)
    }

    /// Replaces the proof's size and depth by exact figures from a walk of
    /// the stored proof (which also checks that it closes), unless the proof
    /// is too big to walk quickly.
    fn exact_figures(&self, root: &Position, report: &mut ProveReport) -> Result<(), SearchError> {
        let Some(store) = self.store else {
            return Ok(());
        };
        if report.proof_positions > WALK_LIMIT {
            return Ok(());
        }
        let table_leaf = |p: &Position| self.table_win(p) == Some(true);
        match walk_proof_with(store, self.rules, root, self.prover, &table_leaf)? {
            Some((positions, depth)) => {
                report.proof_positions = positions;
                report.proof_depth = depth;
                Ok(())
            }
            None => Err(SearchError::Extraction(
                "the stored proof does not close".into(),
            )),
        }
    }

    fn check_limits(&mut self) {
        self.next_check = self.nodes + 2048;
        if let Some(n) = self.limits.nodes
            && self.nodes >= n
        {
            self.stopped = true;
        }
        if let Some(s) = &self.limits.stop
            && s.load(Ordering::Relaxed)
        {
            self.stopped = true;
        }
        let now = Instant::now();
        if let Some(d) = self.limits.deadline
            && now >= d
        {
            self.stopped = true;
        }
        if now.duration_since(self.last_progress) >= Duration::from_secs(1) {
            self.last_progress = now;
            let p = Progress {
                nodes: self.nodes,
                elapsed: now.duration_since(self.start),
                root_pn: self.root_pn,
                root_dn: self.root_dn,
                tt_used: self.tt.used(),
                tt_capacity: self.tt.capacity(),
                tt_bytes: self.tt.bytes_in_use(),
            };
            if let Some(f) = self.progress.as_mut() {
                f(&p);
            }
        }
    }

    /// Whether a position with Zobrist hash `z`, about to be pushed on the
    /// path after a reversible move, repeats a position of the path.
    #[inline]
    fn repeats(&self, z: u64) -> bool {
        let len = self.path.len();
        let start = self.path[len - 1].irrev_start as usize;
        let mut i = len as isize - 2;
        while i >= start as isize {
            if self.path[i as usize].z == z {
                return true;
            }
            i -= 2;
        }
        false
    }

    #[inline]
    fn push_path(&mut self, z: u64, irr: bool) {
        let len = self.path.len();
        let irrev_start = if irr {
            len as u32
        } else {
            self.path[len - 1].irrev_start
        };
        self.path.push(PathEntry { z, irrev_start });
    }

    /// The initial (pn, dn, size) of a child not searched yet.
    #[inline]
    fn eval_child(&self, child: &Position, key: u64, irr: bool) -> (u32, u32, u32) {
        let z = child.zobrist();
        if !irr && self.repeats(z) {
            return (INF, 0, 0);
        }
        if let Some(v) = self.tt.get(key) {
            return decode(v);
        }
        let us = child.turn();
        let or = us == self.prover;
        // Game ends, in the order of `Position::outcome`, sharing the move
        // count with the mobility initialisation.
        let terminal = |o: Option<Outcome>| match o {
            Some(Outcome::Win(c)) if c == self.prover => Some((0, INF, 1)),
            Some(_) => Some((INF, 0, 0)),
            None => None,
        };
        if (child.count(us) == 0 || child.count(!us) == 0)
            && let Some(t) = terminal(child.outcome(self.rules))
        {
            return t;
        }
        let n = child.count_legal_moves();
        if (n == 0 || (child.occupied().0 & !child.by_role(Role::Bishop).0) == 0)
            && let Some(t) = terminal(child.outcome(self.rules))
        {
            return t;
        }
        if let Some(win) = self.table_win(child) {
            return if win { (0, INF, 1) } else { (INF, 0, 0) };
        }
        if !self.stored.is_empty()
            && let Some(&v) = self.stored.get(&z)
        {
            return if (v & 1 == 1) == or {
                (0, INF, sat(v >> 1).max(1))
            } else {
                (INF, 0, 0)
            };
        }
        if or {
            (1, n.max(1), 0)
        } else {
            (n.max(1), 1, 0)
        }
    }

    /// The df-pn MID procedure. The path's top is `pos`.
    fn mid(&mut self, pos: &Position, key: u64, thpn: u32, thdn: u32) -> (u32, u32, u32) {
        self.nodes += 1;
        if self.nodes >= self.next_check {
            self.check_limits();
        }
        let work_start = self.nodes;
        let or = pos.turn() == self.prover;
        let is_root = self.path.len() == 1 && !self.extracting;
        let base = self.kids.len();
        let moves = pos.legal_moves();
        self.generated += moves.len() as u64;
        // First pass: children, keys, and a prefetch of their table slots.
        for &m in moves.iter() {
            let child = pos.play(m);
            let irr = m.is_irreversible();
            let z = child.zobrist();
            let ckey = if irr || child.has_capture() {
                z
            } else {
                mix(key, z)
            };
            self.tt.prefetch(ckey);
            self.kids.push(Kid {
                pos: child,
                key: ckey,
                irr,
                pn: 1,
                dn: 1,
                size: 0,
            });
        }
        // Second pass: their values.
        for i in base..self.kids.len() {
            let k = self.kids[i];
            let (pn, dn, size) = self.eval_child(&k.pos, k.key, k.irr);
            let slot = &mut self.kids[i];
            slot.pn = pn;
            slot.dn = dn;
            slot.size = size;
            if (or && pn == 0) || (!or && dn == 0) {
                self.kids.truncate(i + 1);
                break;
            }
        }
        let (mut pn, mut dn);
        loop {
            (pn, dn) = summarize(&self.kids[base..], or);
            if is_root {
                self.root_pn = pn;
                self.root_dn = dn;
            }
            if pn >= thpn || dn >= thdn || pn == 0 || dn == 0 || self.stopped {
                break;
            }
            // Best child and the second-best value.
            let mut best = 0usize;
            let mut b1 = INF;
            let mut b2 = INF;
            // Ties at OR nodes go to the child with the larger disproof
            // number (measured: smaller proofs on rungs 5, 6 and 9).
            let mut bo = 0;
            for (i, k) in self.kids[base..].iter().enumerate() {
                let (v, o) = if or { (k.pn, k.dn) } else { (k.dn, k.pn) };
                if v < b1 {
                    b2 = b1;
                    b1 = v;
                    best = i;
                    bo = o;
                } else if v == b1 && or && o > bo {
                    b2 = v;
                    best = i;
                    bo = o;
                } else if v < b2 {
                    b2 = v;
                }
            }
            let k = self.kids[base + best];
            let (cthpn, cthdn) = if or {
                (
                    thpn.min(eps(b2)),
                    clamp_th(thdn as u64 - dn as u64 + k.dn as u64),
                )
            } else {
                (
                    clamp_th(thpn as u64 - pn as u64 + k.pn as u64),
                    thdn.min(eps(b2)),
                )
            };
            self.push_path(k.pos.zobrist(), k.irr);
            let (cpn, cdn, csize) = self.mid(&k.pos, k.key, cthpn, cthdn);
            self.path.pop();
            let slot = &mut self.kids[base + best];
            slot.pn = cpn;
            slot.dn = cdn;
            slot.size = csize;
        }
        let mut size = 0u32;
        if pn == 0 {
            let kids = &self.kids[base..];
            size = if or {
                kids.iter()
                    .filter(|k| k.pn == 0)
                    .map(|k| k.size)
                    .min()
                    .unwrap_or(0)
                    .saturating_add(1)
            } else {
                kids.iter()
                    .fold(1u32, |a, k| a.saturating_add(k.size))
                    .min(INF - 1)
            };
        }
        self.kids.truncate(base);
        let work = sat(self.nodes - work_start + 1);
        let v = if pn == 0 {
            TtValue {
                pn: 0,
                dn: size.max(1),
                work,
            }
        } else {
            TtValue { pn, dn, work }
        };
        self.tt.put(key, v);
        if pn == 0
            && !self.extracting
            && !is_root
            && size >= self.checkpoint_size
            && self.store.is_some()
        {
            self.checkpoint(pos, key);
        }
        (pn, dn, size)
    }

    /// After a stop: walks the table's tree from the root (the path's top)
    /// and writes the proofs of proven nodes found there that are not
    /// stored yet, so that the next run starts from them. Bounded: at most
    /// a million table probes and 500 extractions, of proofs estimated at
    /// 20 positions or more.
    fn flush_proven(&mut self, root: &Position, key: u64) {
        let mut probes: u64 = 1_000_000;
        let mut extractions: u32 = 500;
        self.flush_rec(root, key, &mut probes, &mut extractions);
    }

    fn flush_rec(&mut self, pos: &Position, key: u64, probes: &mut u64, extractions: &mut u32) {
        let or = pos.turn() == self.prover;
        let moves = pos.legal_moves();
        // Children with table entries: proven ones are written; of the
        // open ones the walk follows, at OR nodes, the two most promising
        // (smallest proof numbers), at AND nodes all.
        let mut open: Vec<(u32, Position, Move, u64)> = Vec::new();
        for &m in moves.iter() {
            if *probes == 0 || *extractions == 0 || self.store_error.is_some() {
                return;
            }
            *probes -= 1;
            let child = pos.play(m);
            let irr = m.is_irreversible();
            let z = child.zobrist();
            if (!irr && self.repeats(z)) || self.stored.contains_key(&z) {
                continue;
            }
            let ckey = Self::child_key(key, m, &child);
            let Some(v) = self.tt.get(ckey) else {
                continue;
            };
            if v.dn == 0 {
                continue;
            }
            if v.pn == 0 {
                if v.dn >= 20 && child.outcome(self.rules).is_none() {
                    *extractions -= 1;
                    self.push_path(z, irr);
                    self.checkpoint(&child, ckey);
                    self.path.pop();
                }
            } else {
                open.push((v.pn, child, m, ckey));
            }
        }
        open.sort_by_key(|o| o.0);
        if or {
            open.truncate(2);
        }
        for (_, child, m, ckey) in open {
            self.push_path(child.zobrist(), m.is_irreversible());
            self.flush_rec(&child, ckey, probes, extractions);
            self.path.pop();
        }
    }

    fn checkpoint(&mut self, pos: &Position, key: u64) {
        if self.stored.contains_key(&pos.zobrist()) {
            return;
        }
        match self.extract_and_store(pos, key) {
            Ok(_) => {}
            Err(SearchError::Store(e)) => {
                self.store_error = Some(e);
                self.stopped = true;
            }
            Err(_) => {}
        }
    }

    /// The stored record of a position if the filter knows it and the
    /// store confirms it by the full key.
    fn stored_record(&self, pos: &Position) -> Result<Option<Record>, StoreError> {
        let Some(s) = self.store else {
            return Ok(None);
        };
        if !self.stored.contains_key(&pos.zobrist()) {
            return Ok(None);
        }
        s.get(self.rules, &pos.pack().0)
    }

    /// Extracts the proof of a proven node (the path's top is `pos`) and
    /// writes it to the store. `None` when the proof could not be rebuilt
    /// (stopped, or table entries lost beyond repair).
    pub fn extract_and_store(
        &mut self,
        pos: &Position,
        key: u64,
    ) -> Result<Option<ProofSummary>, SearchError> {
        let was = self.extracting;
        self.extracting = true;
        self.ex_map.clear();
        self.ex_nodes.clear();
        self.ex_finished.clear();
        let r = self.ex(pos, key);
        let out = match r {
            Ok(Some(root)) => Some(self.write_proof(root)?),
            Ok(None) => None,
            Err(e) => {
                self.extracting = was;
                return Err(e.into());
            }
        };
        self.ex_map = HashMap::new();
        self.ex_nodes = Vec::new();
        self.ex_finished = Vec::new();
        self.extracting = was;
        Ok(out)
    }

    fn new_leaf(&mut self, pos: &Position, packed: Key, kind: ExKind) -> u32 {
        let i = self.ex_nodes.len() as u32;
        self.ex_nodes.push(ExNode {
            packed,
            z: pos.zobrist(),
            kind,
            children: Vec::new(),
            done: true,
        });
        self.ex_map.insert(packed, i);
        self.ex_finished.push(i);
        i
    }

    fn abandon(&mut self, from: u32) {
        for n in self.ex_nodes.drain(from as usize..) {
            self.ex_map.remove(&n.packed);
        }
        self.ex_finished.retain(|&i| i < from);
    }

    /// Rebuilds the proof of `pos` (the path's top). `Ok(None)`: not
    /// provable from here with what the table holds.
    fn ex(&mut self, pos: &Position, key: u64) -> Result<Option<u32>, StoreError> {
        let packed = pos.pack().0;
        if let Some(&i) = self.ex_map.get(&packed) {
            return Ok(self.ex_nodes[i as usize].done.then_some(i));
        }
        if let Some(o) = pos.outcome(self.rules) {
            return Ok((o == Outcome::Win(self.prover))
                .then(|| self.new_leaf(pos, packed, ExKind::Terminal)));
        }
        // Below the extraction's root, a table position is a leaf.
        if !self.ex_nodes.is_empty()
            && let Some(win) = self.table_win(pos)
        {
            return Ok(win.then(|| self.new_leaf(pos, packed, ExKind::Table)));
        }
        let or = pos.turn() == self.prover;
        if let Some(rec) = self.stored_record(pos)? {
            let win = (rec.verdict == Verdict::Win) == or;
            let depth = self.depths.get(&pos.zobrist()).copied().unwrap_or(0);
            let tables = rec.flags & store::FLAG_TABLES != 0;
            return Ok(
                win.then(|| self.new_leaf(pos, packed, ExKind::Stored(rec.size, depth, tables)))
            );
        }
        let idx = self.ex_nodes.len() as u32;
        self.ex_nodes.push(ExNode {
            packed,
            z: pos.zobrist(),
            kind: if or {
                ExKind::Win(MoveCode::NONE)
            } else {
                ExKind::Loss
            },
            children: Vec::new(),
            done: false,
        });
        self.ex_map.insert(packed, idx);
        let ok = if or {
            self.ex_or(pos, key, idx)?
        } else {
            self.ex_and(pos, key, idx)?
        };
        if ok {
            self.ex_nodes[idx as usize].done = true;
            self.ex_finished.push(idx);
            Ok(Some(idx))
        } else {
            self.abandon(idx);
            Ok(None)
        }
    }

    fn child_key(key: u64, m: Move, child: &Position) -> u64 {
        let z = child.zobrist();
        if m.is_irreversible() || child.has_capture() {
            z
        } else {
            mix(key, z)
        }
    }

    fn ex_or(&mut self, pos: &Position, key: u64, idx: u32) -> Result<bool, StoreError> {
        for _attempt in 0..4 {
            let moves = pos.legal_moves();
            let mut cands: Vec<(u32, Move, Position, u64)> = Vec::new();
            for &m in moves.iter() {
                let child = pos.play(m);
                let z = child.zobrist();
                if !m.is_irreversible() && self.repeats(z) {
                    continue;
                }
                let ckey = Self::child_key(key, m, &child);
                let packed_known = self.ex_map.get(&child.pack().0).copied();
                let size = if let Some(i) = packed_known {
                    if !self.ex_nodes[i as usize].done {
                        continue;
                    }
                    0
                } else if child.outcome(self.rules) == Some(Outcome::Win(self.prover)) {
                    0
                } else if let Some(win) = self.table_win(&child) {
                    if !win {
                        continue;
                    }
                    0
                } else if let Some(&v) = self.stored.get(&z) {
                    if (v & 1 == 1) == (child.turn() == self.prover) {
                        sat(v >> 1)
                    } else {
                        continue;
                    }
                } else {
                    match self.tt.get(ckey) {
                        Some(v) if v.pn == 0 => v.dn,
                        _ => continue,
                    }
                };
                cands.push((size, m, child, ckey));
            }
            cands.sort_by_key(|c| c.0);
            for (_, m, child, ckey) in cands {
                self.push_path(child.zobrist(), m.is_irreversible());
                let r = self.ex(&child, ckey);
                self.path.pop();
                if let Some(ci) = r? {
                    let n = &mut self.ex_nodes[idx as usize];
                    n.kind = ExKind::Win(m.watkins_code());
                    n.children = vec![ci];
                    return Ok(true);
                }
            }
            if self.stopped {
                return Ok(false);
            }
            let (pn, _, _) = self.mid(pos, key, INF, INF);
            if pn != 0 {
                return Ok(false);
            }
        }
        Ok(false)
    }

    fn ex_and(&mut self, pos: &Position, key: u64, idx: u32) -> Result<bool, StoreError> {
        let moves = pos.legal_moves();
        let mut children = Vec::with_capacity(moves.len());
        for &m in moves.iter() {
            let child = pos.play(m);
            let irr = m.is_irreversible();
            if !irr && self.repeats(child.zobrist()) {
                return Ok(false);
            }
            let ckey = Self::child_key(key, m, &child);
            self.push_path(child.zobrist(), irr);
            let mut tries = 0;
            let got = loop {
                let r = self.ex(&child, ckey);
                match r {
                    Err(e) => {
                        self.path.pop();
                        return Err(e);
                    }
                    Ok(Some(ci)) => break Some(ci),
                    Ok(None) => {
                        if tries >= 3 || self.stopped {
                            break None;
                        }
                        tries += 1;
                        let (pn, _, _) = self.mid(&child, ckey, INF, INF);
                        if pn != 0 {
                            break None;
                        }
                    }
                }
            };
            self.path.pop();
            match got {
                Some(ci) => children.push(ci),
                None => return Ok(false),
            }
        }
        self.ex_nodes[idx as usize].children = children;
        Ok(true)
    }

    /// Sizes, depth and store writes of the extracted proof rooted at
    /// `root`.
    fn write_proof(&mut self, root: u32) -> Result<ProofSummary, StoreError> {
        let n = self.ex_nodes.len();
        let mut depth = vec![0u32; n];
        let mut size = vec![0u64; n];
        // Whether a node's proof rests on endgame tables.
        let mut tables = vec![false; n];
        // Depths in completion order (children finish first).
        for &i in &self.ex_finished {
            let node = &self.ex_nodes[i as usize];
            tables[i as usize] = match node.kind {
                ExKind::Table => true,
                ExKind::Stored(_, _, t) => t,
                _ => node.children.iter().any(|&c| tables[c as usize]),
            };
            if let ExKind::Stored(_, d, _) = node.kind {
                depth[i as usize] = d;
                continue;
            }
            depth[i as usize] = node
                .children
                .iter()
                .map(|&c| depth[c as usize] + 1)
                .max()
                .unwrap_or(0);
        }
        // Exact distinct counts by a stamped walk from each node, while the
        // work stays reasonable; beyond it, the sum over children (an upper
        // bound).
        let mut stamp = vec![u32::MAX; n];
        let mut stack: Vec<u32> = Vec::new();
        let mut budget: u64 = 400_000_000;
        for (round, &i) in self.ex_finished.iter().enumerate() {
            let node = &self.ex_nodes[i as usize];
            if let ExKind::Stored(s, _, _) = node.kind {
                size[i as usize] = s.max(1);
                continue;
            }
            if node.children.is_empty() {
                size[i as usize] = 1;
                continue;
            }
            let upper: u64 = 1 + node.children.iter().map(|&c| size[c as usize]).sum::<u64>();
            if budget < upper {
                size[i as usize] = upper;
                continue;
            }
            let mark = round as u32;
            let mut count = 0u64;
            stack.clear();
            stack.push(i);
            stamp[i as usize] = mark;
            while let Some(j) = stack.pop() {
                let nj = &self.ex_nodes[j as usize];
                count += match nj.kind {
                    ExKind::Stored(s, _, _) => s.max(1),
                    _ => 1,
                };
                for &c in &nj.children {
                    if stamp[c as usize] != mark {
                        stamp[c as usize] = mark;
                        stack.push(c);
                    }
                }
            }
            budget = budget.saturating_sub(count);
            size[i as usize] = count;
        }
        // Records of the nodes reachable from the root.
        let srules = self.rules;
        let mut batch: Vec<(Key, Record)> = Vec::new();
        let mut seen = vec![false; n];
        stack.clear();
        stack.push(root);
        seen[root as usize] = true;
        let mut written = 0u64;
        let mut new_stored: Vec<(u64, u64, u32)> = Vec::new();
        while let Some(j) = stack.pop() {
            let node = &self.ex_nodes[j as usize];
            let rec = match node.kind {
                ExKind::Win(mv) => Some(Record {
                    verdict: Verdict::Win,
                    flags: if tables[j as usize] {
                        store::FLAG_TABLES
                    } else {
                        0
                    },
                    mv,
                    size: size[j as usize],
                }),
                ExKind::Loss => Some(Record {
                    verdict: Verdict::Loss,
                    flags: if tables[j as usize] {
                        store::FLAG_TABLES
                    } else {
                        0
                    },
                    mv: MoveCode::NONE,
                    size: size[j as usize],
                }),
                _ => None,
            };
            if let Some(r) = rec {
                batch.push((node.packed, r));
                new_stored.push((node.z, stored_value(&r), depth[j as usize]));
            }
            for &c in &node.children {
                if !seen[c as usize] {
                    seen[c as usize] = true;
                    stack.push(c);
                }
            }
            if batch.len() >= 100_000 {
                if let Some(s) = self.store {
                    s.put_batch(srules, &batch)?;
                }
                written += batch.len() as u64;
                batch.clear();
            }
        }
        if let Some(s) = self.store {
            s.put_batch(srules, &batch)?;
        }
        written += batch.len() as u64;
        if self.store.is_some() {
            for (z, v, d) in new_stored {
                self.stored.insert(z, v);
                self.depths.insert(z, d);
            }
        }
        self.written += written;
        let root_node = &self.ex_nodes[root as usize];
        Ok(ProofSummary {
            positions: size[root as usize],
            depth: depth[root as usize],
            written,
            root_move: match root_node.kind {
                ExKind::Win(mv) => Some(mv),
                _ => None,
            },
        })
    }
}

/// Walks the stored proof of `root` (the winner to win) and returns its
/// exact number of distinct positions (game ends included) and its depth in
/// plies. `Ok(None)` if the store does not hold a closed proof (a record
/// missing or saying otherwise, an illegal move, a leaf not won, a cycle).
pub fn walk_proof(
    store: &Store,
    rules: Rules,
    root: &Position,
    winner: Color,
) -> Result<Option<(u64, u32)>, StoreError> {
    walk_proof_with(store, rules, root, winner, &|_| false)
}

/// As [`walk_proof`], a position without a record for which `table_leaf`
/// says true being a leaf (a table win for the winner).
pub fn walk_proof_with(
    store: &Store,
    rules: Rules,
    root: &Position,
    winner: Color,
    table_leaf: &dyn Fn(&Position) -> bool,
) -> Result<Option<(u64, u32)>, StoreError> {
    let reader = store.reader()?;
    let srules = rules;
    // Key -> None while on the path, Some(depth) when done.
    let mut seen: HashMap<Key, Option<u32>> = HashMap::new();
    struct Frame {
        key: Key,
        kids: Vec<Position>,
        depth: u32,
    }
    // Returns Err(()) on a broken proof, Ok(Some(frame)) to descend, Ok(None)
    // for a game end (recorded done).
    let open = |pos: &Position,
                seen: &mut HashMap<Key, Option<u32>>|
     -> Result<Result<Option<Frame>, ()>, StoreError> {
        let key = pos.pack().0;
        if let Some(o) = pos.outcome(rules) {
            if o != Outcome::Win(winner) {
                return Ok(Err(()));
            }
            seen.insert(key, Some(0));
            return Ok(Ok(None));
        }
        let Some(rec) = reader.get(srules, &key)? else {
            if table_leaf(pos) {
                seen.insert(key, Some(0));
                return Ok(Ok(None));
            }
            return Ok(Err(()));
        };
        let moves = pos.legal_moves();
        let kids = if pos.turn() == winner {
            if rec.verdict != Verdict::Win {
                return Ok(Err(()));
            }
            match moves.iter().find(|m| m.watkins_code().same_move(rec.mv)) {
                Some(&m) => vec![pos.play(m)],
                None => return Ok(Err(())),
            }
        } else {
            if rec.verdict != Verdict::Loss {
                return Ok(Err(()));
            }
            moves.iter().map(|&m| pos.play(m)).collect()
        };
        seen.insert(key, None);
        Ok(Ok(Some(Frame {
            key,
            kids,
            depth: 0,
        })))
    };
    let mut stack: Vec<Frame> = Vec::new();
    match open(root, &mut seen)? {
        Err(()) => return Ok(None),
        Ok(None) => return Ok(Some((1, 0))),
        Ok(Some(f)) => stack.push(f),
    }
    let mut root_depth = 0;
    while let Some(top) = stack.last_mut() {
        match top.kids.pop() {
            Some(c) => {
                let ck = c.pack().0;
                match seen.get(&ck) {
                    Some(Some(d)) => top.depth = top.depth.max(d + 1),
                    Some(None) => return Ok(None),
                    None => match open(&c, &mut seen)? {
                        Err(()) => return Ok(None),
                        Ok(None) => top.depth = top.depth.max(1),
                        Ok(Some(f)) => stack.push(f),
                    },
                }
            }
            None => {
                let f = stack.pop().expect("non-empty");
                seen.insert(f.key, Some(f.depth));
                match stack.last_mut() {
                    Some(p) => p.depth = p.depth.max(f.depth + 1),
                    None => root_depth = f.depth,
                }
            }
        }
    }
    Ok(Some((seen.len() as u64, root_depth)))
}

/// The filter's value of a record: proof size << 1 | 1 for a win.
fn stored_value(r: &Record) -> u64 {
    (r.size.min(u64::MAX >> 2) << 1) | (r.verdict == Verdict::Win) as u64
}

#[inline(always)]
fn clamp_th(x: u64) -> u32 {
    if x >= INF as u64 { INF } else { x as u32 }
}

#[inline(always)]
fn decode(v: TtValue) -> (u32, u32, u32) {
    if v.pn == 0 {
        (0, INF, v.dn)
    } else if v.dn == 0 {
        (INF, 0, 0)
    } else {
        (v.pn, v.dn, 0)
    }
}

#[inline]
fn summarize(kids: &[Kid], or: bool) -> (u32, u32) {
    let mut mn = INF;
    let mut sum = 0u64;
    for k in kids {
        let (a, b) = if or { (k.pn, k.dn) } else { (k.dn, k.pn) };
        mn = mn.min(a);
        sum += b as u64;
    }
    let (x, y) = if mn == 0 {
        (0, INF)
    } else if sum == 0 {
        (INF, 0)
    } else {
        (mn, sat(sum))
    };
    if or { (x, y) } else { (y, x) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summarize_or_and() {
        let p = Position::startpos();
        let k = |pn, dn| Kid {
            pos: p,
            key: 0,
            irr: false,
            pn,
            dn,
            size: 0,
        };
        assert_eq!(summarize(&[k(2, 3), k(1, 4)], true), (1, 7));
        assert_eq!(summarize(&[k(2, 3), k(1, 4)], false), (3, 3));
        assert_eq!(summarize(&[k(0, INF), k(1, 4)], true), (0, INF));
        assert_eq!(summarize(&[k(INF, 0), k(1, 4)], false), (INF, 0));
        assert_eq!(summarize(&[k(INF, 0), k(INF, 0)], true), (INF, 0));
    }

    #[test]
    fn repetitions_are_seen_back_to_the_last_irreversible_move() {
        let mut p = Prover::new(Config::default(), Color::White, None).unwrap();
        let start = Position::startpos();
        let mut walk = |line: &[&str]| {
            let mut pos = start;
            p.path.clear();
            p.path.push(PathEntry {
                z: pos.zobrist(),
                irrev_start: 0,
            });
            let mut last = false;
            for (i, s) in line.iter().enumerate() {
                let m = pos.parse_move(s).unwrap();
                let next = pos.play(m);
                if i + 1 == line.len() {
                    last = !m.is_irreversible() && p.repeats(next.zobrist());
                } else {
                    p.push_path(next.zobrist(), m.is_irreversible());
                }
                pos = next;
            }
            last
        };
        assert!(walk(&["Nf3", "Nf6", "Ng1", "Ng8"]));
        assert!(!walk(&["Nf3", "Nf6", "Ng1", "Nc6"]));
        // The window starts at 1.e3: the position right after it repeats.
        assert!(walk(&["e3", "Nc6", "Nf3", "Nb8", "Ng1"]));
        assert!(!walk(&["e3", "Nc6", "Nf3", "Nb8"]));
    }

    #[test]
    fn path_keys_only_where_the_value_can_depend_on_the_path() {
        let start = Position::startpos();
        let nf3 = start.parse_move("Nf3").unwrap();
        let e4 = start.parse_move("e4").unwrap();
        // A reversible move to a position without captures: path key.
        let a = Prover::child_key(1, nf3, &start.play(nf3));
        let b = Prover::child_key(2, nf3, &start.play(nf3));
        assert_ne!(a, b);
        // An irreversible move: the position's own hash, shared.
        let c = Prover::child_key(1, e4, &start.play(e4));
        assert_eq!(c, start.play(e4).zobrist());
    }

    #[test]
    fn proves_rung_one_without_a_store() {
        let (pos, _) = Position::startpos().play_line(&["e3", "d5"]).unwrap();
        let mut p = Prover::new(Config::default(), Color::White, None).unwrap();
        let r = p.prove(&pos).unwrap();
        assert_eq!(r.result, ProveResult::Proven);
        assert!(r.proof_positions > 0);
    }
}
