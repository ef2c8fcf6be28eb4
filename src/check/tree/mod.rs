//! Checking a win-tree file.
//!
//! [`check_tree`] runs passes over one [`Ctx`], the check's fixed inputs:
//! 1. [`check_prolog`], [`resolve_line`]: the prolog and the line to the
//!    node to certify are legal;
//! 2. [`Targets::collect`]: every slot decodes; the transposition targets;
//! 3. [`start_at`]: the winner and the node the line leads to;
//! 4. [`Walker::visit`]: every branch below it replayed and checked
//!    ([`walk`]);
//! 5. [`Walker::settle_deferred`]: transpositions met before their target
//!    compared with it, targets outside the subtree walked too;
//! 6. [`assemble`]: cycles and the longest line on the graph of regions
//!    ([`graph`]), under the fifty-move rule the worst clocks ([`clock`]),
//!    the size table ([`sizes`]), and the verdict.

mod clock;
mod fifty;
mod graph;
mod layout;
mod sizes;
mod targets;
mod walk;

use super::game::{self, KEY_LEN};
use super::{LeafTables, OpenLeaf, Reason, Rejection, Report, Verdict};
use crate::wintree::{MoveCode, Node, WinTree};
use layout::{follow, infer_winner, path_to};
use shakmaty::variant::Antichess;
use shakmaty::{Color, Position};
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use targets::Targets;
use walk::{Acc, NO_REGION, Place, Walker};

/// Options of [`check_tree`].
#[derive(Clone, Debug, Default)]
pub struct TreeOptions {
    /// The rule set the proof is checked under. Under the fifty-move rule
    /// every node that is not a finished game must be reached with a
    /// clock under [`crate::vocab::FIFTY_MOVE_PLIES`] by every path into
    /// it (transpositions included), and a table leaf counts only when its
    /// win fits in what is left (see [`super::leaf_tables`]).
    pub rule_set: crate::vocab::RuleSet,
    /// Under the fifty-move rule, the half-move clock at the start
    /// position (before the prolog; a file holds no clock, so 0 for the
    /// standard start position). Unread without the rule.
    pub start_clock: u32,
    /// The winner; `None`: inferred from the root (the side whose nodes
    /// have single children).
    pub winner: Option<Color>,
    /// The position the prolog starts from; `None`: the standard start
    /// position (as in every published file). For tests of positions set
    /// up from a FEN.
    pub start: Option<Antichess>,
    /// Worker threads; `None`: all cores.
    pub threads: Option<usize>,
    /// Moves after the prolog to the node to certify (the file's root when
    /// empty). Transpositions leaving that subtree are followed: their
    /// targets' subtrees are checked too.
    pub line: Vec<MoveCode>,
    /// Endgame tables scoring leaves of 4 men or fewer that are not
    /// finished games (see [`super::leaf_tables`]); `None`: such leaves make
    /// the proof not certified.
    pub tables: Option<Arc<LeafTables>>,
    /// Leaves that are not finished games and not scored by a table are
    /// *open* rather than faults: listed in [`Report::open`], the verdict
    /// then [`Verdict::Open`]. Off: such a leaf of more than 4 men rejects
    /// the proof and one of 4 men or fewer leaves it not certified.
    pub open_leaves: bool,
    /// How many open leaves to describe in [`Report::open`] (position and
    /// line, in file order); all of them are counted. Describing one costs
    /// a walk to its slot, so a check that only reports keeps this small
    /// ([`super::OPEN_NAMED`]); `verify --obligations` asks for all.
    pub open_listed: usize,
    /// Bumped (in steps of [`PROGRESS_STEP`]) as the file's slots are
    /// checked, for a progress display; `None`: no counting.
    pub progress: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
}

/// Slots between two bumps of [`TreeOptions::progress`].
pub const PROGRESS_STEP: u64 = 1 << 14;

type Key = [u8; KEY_LEN];

/// What every pass reads: the file, the options, the position the prolog
/// starts from, the prolog and the clock.
struct Ctx<'t> {
    tree: &'t WinTree<'t>,
    opts: &'t TreeOptions,
    start: Antichess,
    prolog: Vec<MoveCode>,
    t0: Instant,
}

impl Ctx<'_> {
    /// The SAN line and the position after the prolog and `moves` (the
    /// line ends with `?` at the first illegal move).
    fn replay(&self, moves: &[MoveCode]) -> (String, Antichess) {
        let mut all = self.prolog.clone();
        all.extend_from_slice(moves);
        game::san_line(&self.start, &all)
    }

    /// A rejection at a slot, with the line to it.
    fn located(&self, slot: u32, reason: Reason) -> Verdict {
        let (line, fen) = match path_to(self.tree, slot) {
            Some((p, _)) => {
                let (line, pos) = self.replay(&p);
                (line, game::fen(&pos))
            }
            None => ("(unknown: the file structure is broken)".into(), "?".into()),
        };
        Verdict::Rejected(Box::new(Rejection {
            line,
            fen,
            node: Some(slot),
            reason,
        }))
    }

    /// The report with its verdict and time.
    fn finish(&self, mut report: Report, verdict: Verdict) -> Report {
        report.verdict = verdict;
        report.elapsed = self.t0.elapsed();
        report
    }
}

/// A rejection at no node of the file.
fn rejected(line: String, fen: String, reason: Reason) -> Verdict {
    Verdict::Rejected(Box::new(Rejection {
        line,
        fen,
        node: None,
        reason,
    }))
}

/// Checks a win-tree file: see the module docs of [`crate::check`].
pub fn check_tree(tree: &WinTree, opts: &TreeOptions) -> Report {
    let t0 = Instant::now();
    let ctx = Ctx {
        tree,
        opts,
        start: opts.start.clone().unwrap_or_default(),
        prolog: tree.prolog(),
        t0,
    };
    let (root_line, root) = ctx.replay(&[]);
    let winner = opts.winner.unwrap_or(root.turn());
    let mut report = Report::begin(opts.rule_set, &root, root_line, winner, t0);
    if let Err(v) = check_prolog(&ctx, &report) {
        return ctx.finish(report, v);
    }
    let pool = match Pool::new(opts.threads) {
        Ok(p) => p,
        Err(e) => {
            let reason = Reason::Malformed(format!("cannot start threads: {e}"));
            let v = rejected(String::new(), report.root_fen.clone(), reason);
            return ctx.finish(report, v);
        }
    };
    let sub_root = match resolve_line(&ctx, &mut report) {
        Ok(p) => p,
        Err(v) => return ctx.finish(report, v),
    };
    let clock0 = match line_clock(&ctx) {
        Ok(c) => c,
        Err(v) => return ctx.finish(report, v),
    };
    pool.install(|| check_in_pool(&ctx, &root, &sub_root, clock0, report))
}

/// Under the fifty-move rule, the half-move clock at the node to certify
/// (after the prolog and the line); a position on the way reached at 100
/// or more is a fault. `None` without the rule.
fn line_clock(ctx: &Ctx) -> Result<Option<u32>, Verdict> {
    if !ctx.opts.rule_set.fifty_move {
        return Ok(None);
    }
    let clock = ctx.opts.start_clock;
    let mut all = ctx.prolog.clone();
    all.extend_from_slice(&ctx.opts.line);
    let clocks = game::clocks_along(&ctx.start, clock, &all);
    let last = clocks.len() - 1;
    match clocks[..last]
        .iter()
        .position(|&c| c >= crate::vocab::FIFTY_MOVE_PLIES)
    {
        Some(i) => {
            let (line, pos) = game::san_line(&ctx.start, &all[..i]);
            let reason = Reason::FiftyMoveRule { plies: clocks[i] };
            Err(rejected(line, game::fen(&pos), reason))
        }
        None => Ok(Some(clocks[last])),
    }
}

/// The prolog's moves are moves, and legal.
fn check_prolog(ctx: &Ctx, report: &Report) -> Result<(), Verdict> {
    for (i, c) in ctx.prolog.iter().enumerate() {
        if c.is_null() || !c.is_move() {
            let (line, pos) = game::san_line(&ctx.start, &ctx.prolog[..i]);
            let reason =
                Reason::BadLine(format!("prolog move {} ({:#06x}) is not a move", i + 1, c));
            return Err(rejected(line, game::fen(&pos), reason));
        }
    }
    if report.root_line.ends_with('?') {
        let reason = Reason::BadLine("a prolog move is not legal".into());
        return Err(rejected(
            report.root_line.clone(),
            report.root_fen.clone(),
            reason,
        ));
    }
    Ok(())
}

/// The position of the node to certify, reached by the line after the
/// prolog; the report's root becomes that node.
fn resolve_line(ctx: &Ctx, report: &mut Report) -> Result<Antichess, Verdict> {
    let (full_line, sub_root) = ctx.replay(&ctx.opts.line);
    if full_line.ends_with('?') {
        let reason = Reason::BadLine("a move of the line is not legal".into());
        return Err(rejected(full_line, report.root_fen.clone(), reason));
    }
    report.root_line = full_line;
    report.root_fen = game::fen(&sub_root);
    Ok(sub_root)
}

/// The worker threads. Deep lines recurse: the workers get large
/// (virtual) stacks. The pool for all cores is built once per process.
enum Pool {
    Shared(&'static rayon::ThreadPool),
    Own(rayon::ThreadPool),
}

impl Pool {
    fn new(threads: Option<usize>) -> Result<Pool, String> {
        static POOL: OnceLock<Result<rayon::ThreadPool, String>> = OnceLock::new();
        match threads {
            None => match POOL.get_or_init(|| build_pool(0)) {
                Ok(p) => Ok(Pool::Shared(p)),
                Err(e) => Err(e.clone()),
            },
            Some(t) => build_pool(t).map(Pool::Own),
        }
    }

    fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match self {
            Pool::Shared(p) => p.install(f),
            Pool::Own(p) => p.install(f),
        }
    }
}

fn build_pool(threads: usize) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(256 << 20)
        .build()
        .map_err(|e| e.to_string())
}

/// The passes that run on the worker threads.
fn check_in_pool(
    ctx: &Ctx,
    root: &Antichess,
    sub_root: &Antichess,
    clock0: Option<u32>,
    mut report: Report,
) -> Report {
    let targets = match Targets::collect(ctx.tree) {
        Ok(t) => t,
        Err(bad) => {
            let e = ctx.tree.node(bad).expect_err("found bad above");
            return ctx.finish(report, ctx.located(bad, e.into()));
        }
    };
    let winner = ctx
        .opts
        .winner
        .unwrap_or_else(|| infer_winner(ctx.tree, root, ctx.opts.rule_set.stalemate));
    report.winner = winner;
    let mut walker = Walker::new(ctx, winner, targets);
    let start = match start_at(&walker, &report) {
        Ok(s) => s,
        Err(v) => return ctx.finish(report, v),
    };
    let (split, after) = split_node(ctx, &start.node, sub_root);
    walker.split = split;
    let mut acc = Acc::default();
    walker.visit(start.node, start.end, sub_root, start.place, &mut acc);
    walker.settle_deferred(&mut acc);
    let replies = std::mem::take(&mut *walker.replies.lock().expect("no panics while locked"));
    let first = First {
        region: start.region,
        slot: start.node.index,
        clock: clock0,
    };
    let mut report = assemble(&walker, acc, &first, report);
    if !matches!(report.verdict, Verdict::Rejected(_)) {
        let mut replies = replies;
        replies.sort_unstable_by_key(|&(slot, _)| slot);
        report.replies = replies.into_iter().map(|(_, r)| r).collect();
        report.replies_after = after;
    }
    report
}

/// The node whose moves are reported one by one: the node to certify, or,
/// when it has a single child with children of its own (the winner's
/// move), that child; with the winner's move (SAN, numbered) in the second
/// case.
fn split_node(ctx: &Ctx, node: &Node, pos: &Antichess) -> (Option<u32>, Option<String>) {
    if !node.has_children() {
        return (None, None);
    }
    let Ok(child) = ctx.tree.node(node.index + 1) else {
        return (None, None);
    };
    match (child.next_sibling, child.mv) {
        (None, Some(code)) if child.has_children() => {
            let (san, _) = game::san_line(pos, &[code]);
            (Some(child.index), Some(san))
        }
        _ => (Some(node.index), None),
    }
}

/// Where the walk starts.
struct Start {
    /// The node to certify.
    node: Node,
    /// The end of its range.
    end: u32,
    /// Its place: the root's region, or none when it is a transposition
    /// target (it then starts a region of its own).
    place: Place,
    /// The region the longest line is measured from.
    region: u32,
}

/// The node the line leads to, and where the walk starts there.
fn start_at(walker: &Walker, report: &Report) -> Result<Start, Verdict> {
    let ctx = walker.ctx;
    let (slot, end) = if ctx.opts.line.is_empty() {
        (0, ctx.tree.len())
    } else {
        follow(ctx.tree, &ctx.opts.line).ok_or_else(|| {
            Verdict::Rejected(Box::new(Rejection {
                line: report.root_line.clone(),
                fen: report.root_fen.clone(),
                node: Some(0),
                reason: Reason::BadLine("the line leaves the tree".into()),
            }))
        })?
    };
    let node = ctx
        .tree
        .node(slot)
        .map_err(|e| ctx.located(slot, e.into()))?;
    let root_region = walker.targets.len();
    let (place, region) = if walker.targets.contains(slot) {
        (Place::top(NO_REGION), walker.targets.id(slot))
    } else {
        (Place::top(root_region), root_region)
    };
    Ok(Start {
        node,
        end,
        place,
        region,
    })
}

/// Where the walk began: the region, the slot, and under the fifty-move
/// rule the clock there.
struct First {
    region: u32,
    slot: u32,
    clock: Option<u32>,
}

/// The report from what the walk found: counts, cycles and the longest
/// line on the graph of regions, the clocks, the verdict.
fn assemble(walker: &Walker, mut acc: Acc, first: &First, mut report: Report) -> Report {
    let ctx = walker.ctx;
    report.positions = acc.positions;
    report.positions_with_repeats = acc.positions + acc.pointers;
    let local: Vec<u32> = walker
        .local
        .iter()
        .map(|a| a.load(Ordering::Relaxed))
        .collect();
    let shape = graph::graph(local.len(), &mut acc.edges, &local, first.region);
    report.longest_line = shape.longest;
    let fifty = match first.clock {
        Some(c0) if shape.acyclic => {
            let (largest, fault) = fifty::check(walker, &mut acc, &shape, first, c0);
            report.worst_clock = Some(largest);
            fault
        }
        _ => None,
    };
    report.leaves = acc.leaves;
    if !shape.acyclic {
        let slot = shape
            .cycle_at
            .map(|id| walker.targets.slots[id as usize])
            .unwrap_or(0);
        report.verdict = ctx.located(
            slot,
            Reason::Cycle(format!(
                "the position at node {slot} is reached again below itself through transpositions"
            )),
        );
    } else if let Some((n, r)) = acc.error {
        report.verdict = ctx.located(n, r);
    } else if let Some(v) = fifty {
        report.verdict = v;
    } else if let Err(v) = sizes::check(ctx) {
        report.verdict = v;
    } else {
        super::finish_tables(&mut report, ctx.opts.tables.as_deref());
        if !matches!(report.verdict, Verdict::Rejected(_)) && !acc.open.is_empty() {
            let (count, open) = open_leaves(ctx, std::mem::take(&mut acc.open));
            report.open = open;
            report.open_count = count;
            report.verdict = Verdict::Open { open_leaves: count };
        }
    }
    report.elapsed = ctx.t0.elapsed();
    report
}

/// The open leaves found, `(slot, key)`: how many distinct positions, and
/// the first [`TreeOptions::open_listed`] of them (each once, at its first
/// slot, in file order) with their lines from the start position.
fn open_leaves(ctx: &Ctx, mut found: Vec<(u32, Key)>) -> (u64, Vec<OpenLeaf>) {
    found.sort_unstable_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    found.dedup_by(|a, b| a.1 == b.1);
    let count = found.len() as u64;
    let listed = ctx.opts.open_listed.min(found.len());
    if listed < found.len() {
        found.select_nth_unstable_by_key(listed, |&(slot, _)| slot);
        found.truncate(listed);
    }
    found.sort_unstable_by_key(|&(slot, _)| slot);
    let described = found
        .into_iter()
        .map(|(slot, _)| {
            let path = path_to(ctx.tree, slot).map(|(p, _)| p).unwrap_or_default();
            let mut all = ctx.prolog.clone();
            all.extend_from_slice(&path);
            let (san, pos) = game::san_line(&ctx.start, &all);
            OpenLeaf {
                epd: game::epd(&pos),
                line: game::uci_line(&ctx.start, &all),
                san,
                node: slot,
            }
        })
        .collect();
    (count, described)
}
