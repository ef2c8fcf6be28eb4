//! The prover: one proving run over one root, orchestrating the search
//! ([`super::dfpn`]), the extraction ([`super::extract`]), the store
//! writes ([`super::write`]) and the checkpoints ([`super::checkpoint`]).

use super::config::Config;
use super::dfpn::Search;
use super::extract::Extraction;
use super::report::{Progress, ProveReport, ProveResult, SearchError};
use super::shrink::shrink_stored_proof;
use super::tt::INF;
use super::walk::{WALK_LIMIT, Walked, walk_proof_within};
use super::write::Writer;
use crate::rules::{Color, Position};
use crate::store::{Store, WinLoss};
use crate::tables::Tables;
use crate::vocab::RuleSet;
use std::time::{Duration, Instant};

/// Proofs up to this many positions (by the records' estimate) are shrunk
/// after proving ([`super::shrink`]).
const SHRINK_LIMIT: u64 = 5_000_000;

/// A proving run over one root position.
pub struct Prover<'s> {
    /// The rule set: the stalemate rule, and whether the fifty-move rule
    /// is on (see [`super::dfpn`]).
    pub(super) rule_set: RuleSet,
    /// The side proven to win.
    pub(super) prover: Color,
    /// Endgame tables scoring positions of 4 men or fewer.
    tables: Option<&'s Tables>,
    /// The df-pn search.
    pub(super) search: Search<'s>,
    /// The proof being extracted.
    pub(super) ex: Extraction,
    /// The store, its filter, and what was written.
    pub(super) writer: Writer<'s>,
    /// The tt key of the last search's root.
    pub(super) root_key: u64,
    /// The root's proof- and disproof-number thresholds
    /// ([`Prover::set_root_thresholds`]).
    root_thresholds: (u32, u32),
    /// Nodes to expand before the root's thresholds may stop the search.
    root_min_nodes: u64,
    /// Search threads ([`Config::threads`]).
    threads: usize,
    /// The limits of the run, for the other search threads.
    limits: super::config::Limits,
    /// Nodes the other search threads expanded.
    other_threads_nodes: u64,
    /// Nodes of the threaded phases not on their busiest thread (so the
    /// span is the nodes less these: [`ProveReport::span_nodes`]).
    off_span_nodes: u64,
    /// [`Config::lockstep`].
    lockstep: bool,
    /// [`Config::shrink_alternatives`].
    shrink_alternatives: bool,
    /// The last search's root, after the positions before it
    /// ([`Prover::prove_after`]'s history): where [`Prover::standing`]
    /// starts.
    pub(super) root_line: Vec<Position>,
    /// Told where the search stands every so often
    /// ([`Prover::on_standing`]).
    pub(super) standing_log: Option<StandingLog<'s>>,
}

/// The tie-break seed of a run's helper thread `helper` (0, 1, ...;
/// the first thread keeps the run's own `seed`): another for each,
/// never 0, so where children tie the threads of one search go to
/// different ones instead of the same. Measured on rung 10 with two
/// threads (docs/prove.md, "Threads of one search"): a median of 10.4 s
/// over 14 rounds against 13.8 s with the run's seed for both.
pub(super) fn helper_seed(seed: u64, helper: usize) -> u64 {
    let s = seed ^ (helper as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    if s == 0 { 1 } else { s }
}

/// A call told where the search stands, at most once every `every`.
pub(super) struct StandingLog<'s> {
    pub(super) when: super::dfpn::Every,
    pub(super) f: StandingFn<'s>,
}

/// A callback told the progress and the [`super::Standing`] of a running
/// search ([`Prover::on_standing`]).
pub type StandingFn<'s> = Box<dyn FnMut(&Progress, &super::Standing) + Send + 's>;

impl<'s> Prover<'s> {
    /// A prover for `winner` under `config`, reading and writing `store`
    /// when given (every stored proven position is loaded into an in-memory
    /// filter first).
    pub fn new(
        config: Config,
        winner: Color,
        store: Option<&'s Store>,
    ) -> Result<Prover<'s>, SearchError> {
        let writer = Writer::open(store, config.rule_set)?;
        let limits = config.limits.clone();
        let mut search = Search::new(config.tt_bytes, config.limits, config.checkpoint_size);
        search.checkpoint_plies = config.checkpoint_plies;
        search.flush_nodes = config.flush_nodes;
        search.seed = config.seed;
        search.clock_init = config.clock_init;
        Ok(Prover {
            rule_set: config.rule_set,
            prover: winner,
            tables: None,
            search,
            ex: Extraction::default(),
            writer,
            root_key: 0,
            root_thresholds: (INF, INF),
            root_min_nodes: 0,
            threads: config.threads.max(1),
            limits,
            other_threads_nodes: 0,
            off_span_nodes: 0,
            lockstep: config.lockstep,
            shrink_alternatives: config.shrink_alternatives,
            root_line: Vec::new(),
            standing_log: None,
        })
    }

    /// Scores positions of 4 men or fewer from `tables` (the side to move
    /// wins there by the table: a proven leaf for the prover when that is
    /// the prover, else a disproven one; a position the tables do not hold
    /// is searched). Records of positions whose proof rests on tables get
    /// [`crate::store::FLAG_TABLES`]; table positions themselves get no
    /// record (leaves, as game ends).
    pub fn set_tables(&mut self, tables: &'s Tables) {
        self.tables = Some(tables);
    }

    /// Whether the endgame tables score `pos` (not a game end) as a win
    /// for the prover; `None`: no tables, more than 4 men, or no table for
    /// it.
    #[inline]
    pub(super) fn endgame_win(&self, pos: &Position) -> Option<bool> {
        self.endgame(pos).map(|(win, _)| win)
    }

    /// As [`Prover::endgame_win`], with the table's distance: under the
    /// fifty-move rule the plies to the next capture or pawn move, the
    /// proof's need (a win or loss that does not fit the position's clock
    /// is a draw, so no win for the prover).
    #[inline]
    pub(super) fn endgame(&self, pos: &Position) -> Option<(bool, u8)> {
        let t = self.tables?;
        if pos.men() > crate::tables::MAX_MEN {
            return None;
        }
        let v = t.probe(pos)?;
        let fits = |n: u16| {
            !self.rule_set.fifty_move
                || pos.halfmoves() + n as u32 <= crate::vocab::FIFTY_MOVE_PLIES
        };
        let need = |n: u16| n.min(u8::MAX as u16) as u8;
        Some(match v {
            crate::tables::Value::Win(n) => (pos.turn() == self.prover && fits(n), need(n)),
            crate::tables::Value::Loss(n) => (pos.turn() != self.prover && fits(n), need(n)),
            crate::tables::Value::Draw => (false, 0),
        })
    }

    /// Whether a proof of `pos` with headroom need `need` holds at its
    /// half-move clock: always without the fifty-move rule.
    #[inline]
    pub(super) fn fits(&self, pos: &Position, need: Option<u8>) -> bool {
        !self.rule_set.fifty_move
            || pos.halfmoves() + need.unwrap_or(u8::MAX) as u32 <= crate::vocab::FIFTY_MOVE_PLIES
    }

    /// Searches with `tt` instead of the table the configuration sized: a
    /// table shared with other processes ([`super::tt::Tt::open_shared`]).
    pub fn use_table(&mut self, tt: super::tt::Tt) {
        self.search.tt = tt;
    }

    /// Puts `entries` into the table (a job's inherited table excerpt,
    /// `crate::jobs::excerpt`): tt values hold for their keys on every
    /// path, so they only guide the search.
    pub fn seed_table(&mut self, entries: &[(u64, super::tt::TtValue)]) {
        for &(key, v) in entries {
            self.search.tt.put(key, v);
        }
    }

    /// The search's transposition table.
    pub fn table(&self) -> &super::tt::Tt {
        &self.search.tt
    }

    /// The table's `k` entries of most work ([`super::tt::Tt::most_worked`]).
    pub fn most_worked(&self, k: usize) -> Vec<(u64, super::tt::TtValue)> {
        self.search.tt.most_worked(k)
    }

    /// Stops the search (unresolved, [`ProveResult::Stopped`]) as soon as
    /// the root's proof number reaches `pn` or its disproof number `dn`,
    /// as df-pn leaves a child once a sibling looks better (a job of a
    /// job-level search, given its siblings' numbers).
    /// The thresholds are raised as needed until the search has expanded
    /// `min_nodes` nodes.
    pub fn set_root_thresholds(&mut self, pn: u32, dn: u32, min_nodes: u64) {
        self.root_thresholds = (pn.max(1), dn.max(1));
        self.root_min_nodes = min_nodes;
    }

    /// Calls `save` with the table about once every `every` during the
    /// search (at its limit checks, on the first search thread).
    pub fn on_save(
        &mut self,
        every: std::time::Duration,
        save: impl FnMut(&super::tt::Tt) + Send + 's,
    ) {
        self.search.budget.saver = Some(super::dfpn::Saver {
            when: super::dfpn::Every::new(every),
            save: Box::new(save),
        });
    }

    /// Adds the key of every record this prover commits to the store from
    /// now on to `keys`.
    pub fn track_written(
        &mut self,
        keys: std::sync::Arc<std::sync::Mutex<Vec<crate::store::Key>>>,
    ) {
        self.writer.written_keys = Some(keys);
    }

    /// Calls `f` about once a second during the search.
    pub fn on_progress(&mut self, f: impl FnMut(&Progress) + Send + 's) {
        self.search.budget.progress = Some(Box::new(f));
    }

    /// Calls `f` with the progress and where the search stands
    /// ([`Prover::standing`]) every `every` during the search (by the
    /// search's first thread; not while a proof is being extracted).
    pub fn on_standing(
        &mut self,
        every: Duration,
        f: impl FnMut(&Progress, &super::Standing) + Send + 's,
    ) {
        self.standing_log = Some(StandingLog {
            when: super::dfpn::Every::new(every),
            f: Box::new(f),
        });
    }

    /// Number of stored positions known to the in-memory filter.
    pub fn stored_len(&self) -> usize {
        self.writer.stored_len()
    }

    /// Bytes of memory the in-memory filter of stored positions holds
    /// (about 2.4 a record; 0 without a store).
    pub fn filter_bytes(&self) -> u64 {
        self.writer.filter_bytes()
    }

    /// Proves (or disproves) a win for the prover from `root`, writing the
    /// proof into the store when proven.
    pub fn prove(&mut self, root: &Position) -> Result<ProveReport, SearchError> {
        self.prove_after(&[], root)
    }

    /// As [`Prover::prove`], for a root reached through `history`: the
    /// positions before it since the last capture or pawn move (or since
    /// a start with no history), oldest first, each followed by the next
    /// (then `root`) by one legal move. A repetition of any of them is a
    /// draw, as on the board, and the root's tt key is the one a search
    /// from `history[0]` gives it, so searches of several roots of one
    /// line (the jobs of a job-level search) share one table's entries.
    pub fn prove_after(
        &mut self,
        history: &[Position],
        root: &Position,
    ) -> Result<ProveReport, SearchError> {
        if let Some(o) = root.outcome(self.rule_set.stalemate) {
            return Err(SearchError::GameOver(o));
        }
        self.search.budget.restart();
        if let Some(log) = self.standing_log.as_mut() {
            log.when.restart();
        }
        self.search.stopped = false;
        let mut report = ProveReport {
            result: ProveResult::Stopped,
            best_move: None,
            nodes: 0,
            other_threads_nodes: 0,
            span_nodes: 0,
            generated: 0,
            proof_positions: 0,
            proof_positions_exact: false,
            proof_depth: 0,
            records_written: 0,
            root_pn: 1,
            root_dn: 1,
            tt_bytes: self.search.tt.bytes(),
            filter_bytes: self.writer.filter_bytes(),
            proof_need: None,
            shrink: None,
            alternatives: None,
            shrink_time: Duration::ZERO,
            extract_time: Duration::ZERO,
            elapsed: Duration::ZERO,
        };
        // A draw by the fifty-move rule already.
        if self.rule_set.fifty_move && root.halfmoves() >= crate::vocab::FIFTY_MOVE_PLIES {
            report.result = ProveResult::Disproven;
            report.root_pn = INF;
            report.root_dn = 0;
            return Ok(report);
        }
        // Already in the store?
        if self.answer_from_store(root, &mut report)? {
            if self.shrink_alternatives && report.result == ProveResult::Proven {
                // Asked for a smaller proof of a proven line: the passes
                // over the stored proof (again, where a run was stopped
                // in them).
                self.start_path(history, root);
                self.shrink(root, &mut report)?;
                self.exact_figures(root, &mut report)?;
                report.nodes = self.search.nodes;
                report.records_written = self.writer.written;
            }
            self.root_need(root, &mut report)?;
            report.elapsed = self.search.budget.start.elapsed();
            return Ok(report);
        }
        let key = self.start_path(history, root);
        let (pn, dn) = self.search_root(root, key);
        if self.search.stopped && pn != 0 && self.writer.store.is_some() {
            self.flush_proven(root, key);
        }
        if let Some(e) = self.writer.error.take() {
            return Err(e.into());
        }
        report.root_pn = pn;
        report.root_dn = dn;
        if pn == 0 {
            let start = Instant::now();
            let summary = self.extract_and_store(root, key)?;
            report.extract_time = start.elapsed();
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
                None if self.search.stopped => report.result = ProveResult::Stopped,
                None => {
                    return Err(SearchError::Extraction(
                        "the root is proven but its proof could not be rebuilt".into(),
                    ));
                }
            }
            if report.result == ProveResult::Proven {
                self.shrink(root, &mut report)?;
                self.exact_figures(root, &mut report)?;
            }
        } else if dn == 0 {
            report.result = ProveResult::Disproven;
        }
        self.root_need(root, &mut report)?;
        report.nodes = self.search.nodes;
        report.other_threads_nodes = self.other_threads_nodes;
        report.span_nodes = self.search.nodes.saturating_sub(self.off_span_nodes);
        report.generated = self.search.generated;
        report.records_written = self.writer.written;
        report.filter_bytes = self.writer.filter_bytes();
        report.elapsed = self.search.budget.start.elapsed();
        Ok(report)
    }

    /// The df-pn search of `root` (tt key `key`, path set): its proof and
    /// disproof numbers when it ends (solved, stopped by a limit, or over
    /// the root's thresholds). With [`Config::threads`] above 1, the other
    /// threads search the same root on the same tt, each steering away
    /// from the nodes the others are in ([`super::dfpn::Busy`]), until one
    /// solves it; this thread then takes the root's value from the tt.
    fn search_root(&mut self, root: &Position, key: u64) -> (u32, u32) {
        if self.threads < 2 {
            return self.search_root_alone(root, key);
        }
        match self.search_root_threads(root, key) {
            Some(v) => v,
            None => self.search_root_alone(root, key),
        }
    }

    /// [`Prover::search_root`] with its threads, on the table grown to its
    /// full size and shared (it cannot grow while shared; growing it in
    /// steps, all threads stopping and starting again from the root at
    /// each doubling, was tried and measured no faster on rung 10: medians
    /// of 0.65-0.77 of one thread's time over three 7-round runs, against
    /// 0.59 and 0.66); `None` if it cannot be shared.
    fn search_root_threads(&mut self, root: &Position, key: u64) -> Option<(u32, u32)> {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
        self.search.tt.grow_full();
        let view = self.search.tt.share()?;
        let helpers = self.threads - 1;
        let busy = Arc::new(super::dfpn::Busy::new());
        let halt = Arc::new(AtomicBool::new(false));
        let solved = AtomicBool::new(false);
        let pool = Arc::new(super::dfpn::Pool::default());
        pool.nodes.store(self.search.nodes, Relaxed);
        // With lockstep, this thread is 0 in the round and helper i is i + 1.
        let turns = self
            .lockstep
            .then(|| Arc::new(super::dfpn::Lockstep::new(helpers + 1)));
        self.search.budget.lockstep = turns.clone().map(|t| (t, 0));
        self.search.busy = Some(busy.clone());
        self.search.budget.halt = Some(halt.clone());
        self.search
            .budget
            .pool(Some(pool.clone()), self.search.nodes);
        let mut views = vec![view];
        while views.len() < helpers {
            views.extend(views[0].view());
        }
        let line = self.search.path.entries();
        let root_len = self.search.root_len;
        let (rule_set, prover, tables) = (self.rule_set, self.prover, self.tables);
        let store = self.writer.store;
        let limits = self.limits.clone();
        let (seed, clock_init) = (self.search.seed, self.search.clock_init);
        let (pn, dn, helper_nodes) = std::thread::scope(|scope| {
            let handles: Vec<_> = views
                .into_iter()
                .enumerate()
                .map(|(i, tt)| {
                    let (busy, halt, pool) = (busy.clone(), halt.clone(), pool.clone());
                    let (solved, line, limits) = (&solved, &line, limits.clone());
                    let turn = turns.clone().map(|t| (t, i + 1));
                    std::thread::Builder::new()
                        .name(format!("search-{}", i + 1))
                        .stack_size(super::run::STACK_BYTES)
                        .spawn_scoped(scope, move || {
                            // Out of the round however this thread ends.
                            let _leave = turn.as_ref().map(|(t, me)| LeaveRound(t, *me));
                            if let Some((t, me)) = &turn {
                                t.wait(*me);
                            }
                            let config = Config {
                                rule_set,
                                tt_bytes: 0,
                                limits,
                                checkpoint_size: INF,
                                checkpoint_plies: 0,
                                flush_nodes: 0,
                                threads: 1,
                                shrink_alternatives: false,
                                seed: helper_seed(seed, i),
                                lockstep: false,
                                clock_init,
                            };
                            // With the store, for its proven positions
                            // (its own filter; it writes nothing: no
                            // checkpoints, no extraction).
                            let Ok(mut h) = Prover::new(config, prover, store) else {
                                return 0;
                            };
                            if let Some(t) = tables {
                                h.set_tables(t);
                            }
                            h.use_table(tt);
                            h.search.busy = Some(busy);
                            h.search.budget.halt = Some(halt.clone());
                            h.search.budget.pool(Some(pool), 0);
                            h.search.budget.lockstep = turn.clone();
                            h.search.path.set_entries(line);
                            h.search.root_len = root_len;
                            let (pn, dn, _) = h.mid(root, key, INF, INF);
                            if pn == 0 || dn == 0 {
                                solved.store(true, Relaxed);
                                halt.store(true, Relaxed);
                            }
                            h.search.nodes
                        })
                        // A thread the system will not start is one
                        // thread fewer, not a failed run (nor one the
                        // round waits for).
                        .inspect_err(|_| {
                            if let Some(t) = &turns {
                                t.leave(i + 1);
                            }
                        })
                        .ok()
                })
                .collect();
            let before = self.search.nodes;
            let (mut pn, mut dn) = {
                let _leave = turns.as_ref().map(|t| LeaveRound(t, 0));
                if let Some(t) = &turns {
                    t.wait(0);
                }
                let v = self.search_root_alone(root, key);
                // In its turn (lockstep): each helper sees the halt at
                // its next slice, the same in every run.
                halt.store(true, Relaxed);
                v
            };
            let own = self.search.nodes - before;
            let each: Vec<u64> = handles
                .into_iter()
                .flatten()
                .map(|h| h.join().unwrap_or(0))
                .collect();
            let nodes: u64 = each.iter().sum();
            let longest = each.iter().copied().fold(own, u64::max);
            self.off_span_nodes += own + nodes - longest;
            if pn != 0 && dn != 0 && solved.load(Relaxed) {
                // Another thread solved the root: its value is in the tt.
                if let Some(v) = self.search.tt.get(key)
                    && (v.pn == 0 || v.dn == 0)
                {
                    (pn, dn) = (v.pn, if v.pn == 0 { INF } else { 0 });
                }
            }
            (pn, dn, nodes)
        });
        self.search.busy = None;
        self.search.budget.halt = None;
        self.search.budget.lockstep = None;
        self.search.budget.pool(None, 0);
        // The other threads are gone: the table is this thread's again
        // (to extract from, and to save if the search stopped).
        self.search.tt.unshare();
        self.search.nodes += helper_nodes;
        self.other_threads_nodes += helper_nodes;
        if pn == 0 || dn == 0 {
            // Solved, whichever thread did it: the halt stopped nothing.
            self.search.stopped = false;
            return Some((pn, dn));
        }
        if self.search.stopped && !self.limits_reached() {
            // Halted by a thread that solved the root, whose entry is gone
            // from the tt since: on alone.
            return Some(self.search_root_alone(root, key));
        }
        Some((pn, dn))
    }

    /// Sets the search path to `history` then `root`, and the root's tt
    /// key, which it returns.
    pub(super) fn start_path(&mut self, history: &[Position], root: &Position) -> u64 {
        let mut line: Vec<Position> = history.to_vec();
        line.push(*root);
        self.root_line.clone_from(&line);
        let key = super::dfpn::line_key(&line);
        self.root_key = key;
        self.search.path.reset(line[0].zobrist());
        for p in &line[1..] {
            self.search.path.push(p.zobrist(), p.halfmoves() == 0);
        }
        self.search.root_len = line.len();
        key
    }

    /// Moves the run's deadline, if any, `by` later, for this thread and
    /// the other search threads it starts: time spent before the search
    /// (loading a saved table) is not the search's.
    pub fn defer_deadline(&mut self, by: std::time::Duration) {
        self.limits.defer_deadline(by);
        self.search.budget.defer_deadline(by);
    }

    /// Whether the run's own limits (not another thread) stop it.
    pub(super) fn limits_reached(&self) -> bool {
        self.search
            .budget
            .over_limits(self.search.nodes, Instant::now())
            || self.writer.error.is_some()
    }

    /// [`Prover::search_root`] on this thread alone.
    fn search_root_alone(&mut self, root: &Position, key: u64) -> (u32, u32) {
        let (mut thpn, mut thdn) = self.root_thresholds;
        let start_nodes = self.search.nodes;
        self.search.stopped = false;
        loop {
            let (pn, dn, _) = self.mid(root, key, thpn, thdn);
            if pn == 0
                || dn == 0
                || self.search.stopped
                || self.search.nodes - start_nodes >= self.root_min_nodes
            {
                break (pn, dn);
            }
            // Over a threshold before the minimum work: a little further.
            thpn = thpn.max(super::dfpn::eps(pn));
            thdn = thdn.max(super::dfpn::eps(dn));
        }
    }

    /// Under the fifty-move rule, sets the report's proof need from the
    /// root's record, when proven.
    fn root_need(&self, root: &Position, report: &mut ProveReport) -> Result<(), SearchError> {
        if self.rule_set.fifty_move && report.result == ProveResult::Proven {
            report.proof_need = self
                .writer
                .stored_entry(root)?
                .and_then(|(_, n)| n)
                .map(u32::from);
        }
        Ok(())
    }

    /// Fills `report` from the store's record of `root`, if it has one:
    /// `Ok(true)` then.
    fn answer_from_store(
        &self,
        root: &Position,
        report: &mut ProveReport,
    ) -> Result<bool, SearchError> {
        let Some((rec, need)) = self.writer.stored_entry(root)? else {
            return Ok(false);
        };
        if !self.fits(root, need) {
            return Ok(false);
        }
        let or = root.turn() == self.prover;
        let win_for_prover = (rec.verdict == WinLoss::Win) == or;
        if win_for_prover {
            report.result = ProveResult::Proven;
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
            self.exact_figures(root, report)?;
        } else {
            report.result = ProveResult::Disproven;
            report.root_pn = INF;
            report.root_dn = 0;
        }
        Ok(true)
    }

    /// Makes the stored proof of the proven `root` smaller where moves
    /// into positions it holds anyway allow ([`super::shrink`]), unless it
    /// is too big to load; the report's best move is then the root's
    /// stored one.
    fn shrink(&mut self, root: &Position, report: &mut ProveReport) -> Result<(), SearchError> {
        let Some(store) = self.writer.store else {
            return Ok(());
        };
        if report.proof_positions > SHRINK_LIMIT {
            return Ok(());
        }
        let start = Instant::now();
        let rules = self.writer.rule_set;
        let greedy = |p: &Self| {
            let endgame_leaf = |pos: &Position| p.endgame(pos).and_then(|(w, n)| w.then_some(n));
            shrink_stored_proof(store, rules, root, p.prover, &endgame_leaf, SHRINK_LIMIT)
        };
        report.shrink = greedy(self)?;
        if report.shrink.is_some() && self.shrink_alternatives {
            let nodes = self.search.nodes;
            let a = self.shrink_by_alternatives(root, SHRINK_LIMIT)?;
            self.search.nodes = nodes;
            report.alternatives = Some(a);
            if a.rewritten > 0
                && let Some(again) = greedy(self)?
                && let Some(f) = report.shrink.as_mut()
            {
                f.after = again.after;
                f.rewritten += again.rewritten;
            }
        }
        let changed = report.shrink.is_some_and(|f| f.rewritten > 0)
            || report.alternatives.is_some_and(|a| a.rewritten > 0);
        if changed
            && root.turn() == self.prover
            && let Some((rec, _)) = self.writer.stored_entry(root)?
        {
            report.best_move = root
                .legal_moves()
                .iter()
                .copied()
                .find(|m| m.watkins_code().same_move(rec.mv));
        }
        report.shrink_time = start.elapsed();
        Ok(())
    }

    /// Replaces the proof's size and depth by exact figures from a walk of
    /// the stored proof (which also checks that it closes), whatever the
    /// records' estimate says (it counts a position once for every path
    /// into it); past [`WALK_LIMIT`] distinct positions the estimate stays,
    /// as an upper bound (`proof_positions_exact` false).
    fn exact_figures(&self, root: &Position, report: &mut ProveReport) -> Result<(), SearchError> {
        let Some(store) = self.writer.store else {
            return Ok(());
        };
        let endgame_leaf = |p: &Position| self.endgame_win(p) == Some(true);
        let rules = self.writer.rule_set;
        match walk_proof_within(store, rules, root, self.prover, &endgame_leaf, WALK_LIMIT)? {
            Walked::Closed { positions, depth } => {
                report.proof_positions = positions;
                report.proof_depth = depth;
                report.proof_positions_exact = true;
                Ok(())
            }
            Walked::TooBig => {
                report.proof_positions = report.proof_positions.max(WALK_LIMIT);
                report.proof_positions_exact = false;
                Ok(())
            }
            Walked::Broken => Err(SearchError::Extraction(
                "the stored proof does not close".into(),
            )),
        }
    }
}

/// Takes a search thread out of its lockstep round when dropped (its
/// search ended, or it unwound).
struct LeaveRound<'a>(&'a super::dfpn::Lockstep, usize);

impl Drop for LeaveRound<'_> {
    fn drop(&mut self) {
        self.0.leave(self.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proves_rung_one_without_a_store() {
        let (pos, _) = Position::startpos().play_line(&["e3", "d5"]).unwrap();
        let mut p = Prover::new(Config::default(), Color::White, None).unwrap();
        let r = p.prove(&pos).unwrap();
        assert_eq!(r.result, ProveResult::Proven);
        assert!(r.proof_positions > 0);
    }

    #[test]
    fn each_helper_thread_breaks_ties_its_own_way() {
        for seed in [0, 1, 12345, u64::MAX] {
            let mut seen: Vec<u64> = (0..super::super::MAX_THREADS)
                .map(|i| helper_seed(seed, i))
                .collect();
            assert!(seen.iter().all(|&s| s != 0 && s != seed), "{seed}");
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), super::super::MAX_THREADS, "{seed}");
        }
    }
}
