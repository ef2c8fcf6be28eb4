//! Checking a win-tree file.

use super::game::{self, End, EndKind, KEY_LEN};
use super::{LeafTables, Leaves, Reason, Rejection, Report, Rules, Verdict};
use crate::wintree::{MoveCode, Node, NodeKind, WinTree};
use rayon::prelude::*;
use shakmaty::variant::Antichess;
use shakmaty::{Color, Move, Position};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Options of [`check_tree`].
#[derive(Clone, Debug, Default)]
pub struct TreeOptions {
    /// The rule set.
    pub rules: Rules,
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
    /// finished games (see [`super::tables`]); `None`: such leaves make
    /// the proof not certified.
    pub tables: Option<Arc<LeafTables>>,
}

/// No enclosing region (a walk started at a transposition target).
const NO_REGION: u32 = u32::MAX;

/// Subtrees of at least this many slots are split across threads.
const PAR_MIN_SLOTS: u32 = 1 << 12;

type Key = [u8; KEY_LEN];

/// What a part of the walk found.
#[derive(Default)]
struct Acc {
    positions: u64,
    pointers: u64,
    leaves: Leaves,
    /// The first error in file order: (node, reason).
    error: Option<(u32, Reason)>,
    /// Reduced-graph edges (from region, to target region, plies).
    edges: Vec<(u32, u32, u32)>,
}

impl Acc {
    fn fail(&mut self, node: u32, reason: Reason) {
        if self.error.as_ref().is_none_or(|(n, _)| node < *n) {
            self.error = Some((node, reason));
        }
    }

    fn merge(mut self, mut o: Acc) -> Acc {
        self.positions += o.positions;
        self.pointers += o.pointers;
        self.leaves.add(&o.leaves);
        if let Some((n, r)) = o.error.take() {
            self.fail(n, r);
        }
        if self.edges.len() < o.edges.len() {
            std::mem::swap(&mut self.edges, &mut o.edges);
        }
        self.edges.append(&mut o.edges);
        self
    }
}

/// The set of transposition targets, with dense ids (rank in the set).
struct Targets {
    words: Vec<u64>,
    rank: Vec<u32>,
    slots: Vec<u32>,
}

impl Targets {
    fn contains(&self, i: u32) -> bool {
        self.words[(i / 64) as usize] >> (i % 64) & 1 == 1
    }

    fn id(&self, i: u32) -> u32 {
        let w = self.words[(i / 64) as usize];
        self.rank[(i / 64) as usize] + (w & ((1u64 << (i % 64)) - 1)).count_ones()
    }

    fn len(&self) -> u32 {
        self.slots.len() as u32
    }
}

struct Walker<'t, 'a> {
    tree: &'t WinTree<'a>,
    tables: Option<&'t LeafTables>,
    rules: Rules,
    winner: Color,
    targets: Targets,
    keys: Vec<OnceLock<Key>>,
    local: Vec<AtomicU32>,
    deferred: Mutex<Vec<(u32, u32, Key)>>,
}

impl Walker<'_, '_> {
    /// Raises a region's deepest ply; reads first so that threads do not
    /// fight over the cache line when nothing changes.
    #[inline]
    fn raise_local(&self, region: u32, plies: u32) {
        let a = &self.local[region as usize];
        if a.load(Ordering::Relaxed) < plies {
            a.fetch_max(plies, Ordering::Relaxed);
        }
    }

    fn leaf(&self, slot: u32, pos: &Antichess, acc: &mut Acc) {
        let legal = pos.legal_moves();
        match game::game_end(pos, &legal, self.rules) {
            Some(End { winner, kind }) => {
                if winner == Some(self.winner) {
                    match kind {
                        EndKind::NoPieces => acc.leaves.no_pieces += 1,
                        EndKind::Stalemate => acc.leaves.stalemate += 1,
                        EndKind::Other => acc.leaves.other += 1,
                    }
                } else {
                    let what = match winner {
                        Some(c) => {
                            format!("{} wins under {} rules", game::color_name(c), self.rules)
                        }
                        None => format!("a draw under {} rules", self.rules),
                    };
                    acc.fail(slot, Reason::LeafNotWon(what));
                }
            }
            None => {
                let men = game::men(pos);
                if men <= 4 {
                    if let Err(r) =
                        super::table_leaf(self.tables, pos, self.winner, &mut acc.leaves)
                    {
                        acc.fail(slot, r);
                    }
                } else {
                    acc.fail(slot, Reason::NonTerminalLeaf(men));
                }
            }
        }
    }

    /// Checks the node at `slot`, whose subtree must occupy exactly the
    /// slots `slot..end`, in position `pos` at `depth` plies from the root.
    #[allow(clippy::too_many_arguments)]
    fn visit(
        &self,
        node: Node,
        end: u32,
        pos: &Antichess,
        depth: u32,
        mut region: u32,
        mut region_depth: u32,
        acc: &mut Acc,
    ) {
        let slot = node.index;
        if self.targets.contains(slot) {
            let id = self.targets.id(slot);
            let _ = self.keys[id as usize].set(game::pack(pos));
            if region != NO_REGION {
                acc.edges.push((region, id, depth - region_depth));
            }
            region = id;
            region_depth = depth;
        }
        let malformed = |acc: &mut Acc, what: &str| {
            acc.fail(slot, Reason::Malformed(format!("node {slot}: {what}")));
        };
        match node.kind {
            NodeKind::Transposition { target } => {
                acc.pointers += 1;
                self.raise_local(region, depth - region_depth);
                if end != slot + 1 {
                    return malformed(acc, "a transposition where a subtree must be");
                }
                let key = game::pack(pos);
                let tid = self.targets.id(target);
                match self.keys[tid as usize].get() {
                    Some(k) if *k != key => {
                        let fen = game::fen(&position_of_key(k));
                        acc.fail(
                            slot,
                            Reason::TranspositionMismatch {
                                target,
                                target_fen: fen,
                            },
                        )
                    }
                    Some(_) => {}
                    None => self
                        .deferred
                        .lock()
                        .expect("no panics while locked")
                        .push((slot, target, key)),
                }
                acc.edges.push((region, tid, depth - region_depth));
            }
            NodeKind::Unsolved => {
                acc.positions += 1;
                acc.fail(slot, Reason::Unsolved);
            }
            NodeKind::Leaf => {
                acc.positions += 1;
                self.raise_local(region, depth - region_depth);
                if end != slot + 1 {
                    return malformed(acc, "a leaf where a subtree must be");
                }
                self.leaf(slot, pos, acc);
            }
            NodeKind::Inner => {
                acc.positions += 1;
                if depth >= super::MAX_PLIES {
                    return acc.fail(slot, Reason::TooDeep);
                }
                if end < slot + 2 {
                    return malformed(acc, "children outside the parent's subtree");
                }
                self.inner(slot, end, pos, depth, region, region_depth, acc);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn inner(
        &self,
        slot: u32,
        end: u32,
        pos: &Antichess,
        depth: u32,
        region: u32,
        region_depth: u32,
        acc: &mut Acc,
    ) {
        let legal = pos.legal_moves();
        if let Some(e) = game::game_end(pos, &legal, self.rules) {
            let what = match e.winner {
                Some(c) => format!("{} has won", game::color_name(c)),
                None => "drawn".to_string(),
            };
            return acc.fail(slot, Reason::GameOver(what));
        }
        // The legal moves' codes (bit 15 cleared), for matching children.
        let mut codes = [0u16; 256];
        for (i, m) in legal.iter().enumerate() {
            codes[i] = game::move_code(m).cleared().raw();
        }
        let codes = &codes[..legal.len()];
        // Children usually come in move-generation order: scan from the
        // last match on.
        let find = |code: MoveCode, hint: usize| -> Option<usize> {
            let c = code.cleared().raw();
            let k = codes.len();
            (0..k).map(|j| (hint + j) % k).find(|&i| codes[i] == c)
        };
        // Pass 1: every child is a legal move, once; count them.
        let mut n = 0usize;
        let mut seen = [0u64; 4];
        let mut hint = 0;
        let mut c = slot + 1;
        loop {
            if c >= end {
                return acc.fail(
                    slot,
                    Reason::Malformed(format!(
                        "node {slot}: child {c} outside its subtree (ends before {end})"
                    )),
                );
            }
            let child = match self.tree.node(c) {
                Ok(ch) => ch,
                Err(e) => return acc.fail(c, e.into()),
            };
            let Some(code) = child.mv else {
                return acc.fail(c, Reason::Malformed(format!("node {c}: no move")));
            };
            if code.is_null() {
                return acc.fail(slot, Reason::NullMove);
            }
            if child.is_unsolved() {
                return acc.fail(c, Reason::Unsolved);
            }
            if !code.is_move() {
                return acc.fail(slot, Reason::BadMoveCode(code));
            }
            let Some(i) = find(code, hint) else {
                return acc.fail(slot, Reason::IllegalMove(code.uci()));
            };
            if seen[i / 64] >> (i % 64) & 1 == 1 {
                let san = shakmaty::san::San::from_move(pos, legal[i]).to_string();
                return acc.fail(slot, Reason::DuplicateMove(san));
            }
            seen[i / 64] |= 1 << (i % 64);
            hint = i + 1;
            n += 1;
            match child.next_sibling {
                None => break,
                Some(next) => c = next,
            }
        }
        if pos.turn() == self.winner {
            if n != 1 {
                return acc.fail(slot, Reason::WinnerChildren(n));
            }
        } else if n != legal.len() {
            let missing = legal
                .iter()
                .enumerate()
                .filter(|(i, _)| seen[i / 64] >> (i % 64) & 1 == 0)
                .map(|(_, m)| shakmaty::san::San::from_move(pos, *m).to_string())
                .collect();
            return acc.fail(slot, Reason::MissingDefence(missing));
        }
        // Pass 2: walk the children (all checked above) with their ranges.
        let run = |child: Node, i: usize, acc: &mut Acc| {
            let mut p = pos.clone();
            let m: Move = legal[i];
            p.play_unchecked(m);
            let range_end = child.next_sibling.unwrap_or(end);
            self.visit(child, range_end, &p, depth + 1, region, region_depth, acc);
        };
        let kids = || {
            let mut c = Some(slot + 1);
            let mut hint = 0;
            std::iter::from_fn(move || {
                let child = self.tree.node(c?).ok()?;
                let i = find(child.mv?, hint)?;
                hint = i + 1;
                c = child.next_sibling;
                Some((child, i))
            })
        };
        if end - slot >= PAR_MIN_SLOTS && n > 1 {
            let list: Vec<(Node, usize)> = kids().collect();
            let sub = list
                .into_par_iter()
                .map(|(child, i)| {
                    let mut a = Acc::default();
                    run(child, i, &mut a);
                    a
                })
                .reduce(Acc::default, Acc::merge);
            let mine = std::mem::take(acc);
            *acc = mine.merge(sub);
        } else {
            for (child, i) in kids() {
                run(child, i, acc);
            }
        }
    }
}

/// Rebuilds a position from a key, for error messages only.
fn position_of_key(k: &Key) -> Antichess {
    use shakmaty::{Bitboard, Board, CastlingMode, FromSetup, Piece, Setup, Square};
    let occ = u64::from_be_bytes(k[1..9].try_into().expect("8 bytes"));
    let mut board = Board::empty();
    for (i, sq) in Bitboard(occ).into_iter().enumerate() {
        let nib = if i % 2 == 0 {
            k[9 + i / 2] >> 4
        } else {
            k[9 + i / 2] & 15
        };
        let role = shakmaty::Role::ALL[(nib % 6) as usize];
        let color = if nib < 6 { Color::White } else { Color::Black };
        board.set_piece_at(sq, Piece { color, role });
    }
    let mut setup = Setup::empty();
    setup.board = board;
    setup.turn = if k[0] & 0x80 != 0 {
        Color::Black
    } else {
        Color::White
    };
    if k[0] & 15 != 0 {
        let file = (k[0] & 15) as u32 - 1;
        let rank = if setup.turn == Color::White { 5 } else { 2 };
        setup.ep_square = Some(Square::new(rank * 8 + file));
    }
    Antichess::from_setup(setup, CastlingMode::Standard)
        .unwrap_or_else(|e| e.ignore_invalid_ep_square().unwrap_or_default())
}

/// The moves from the root to a slot, found by descending the pre-order
/// layout (a child's subtree is the slot range up to its next sibling),
/// and the end of the slot's range.
fn path_to(tree: &WinTree, slot: u32) -> Option<(Vec<MoveCode>, u32)> {
    let mut n = 0;
    let mut end = tree.len();
    let mut path = Vec::new();
    while n != slot {
        let mut best: Option<(Node, u32)> = None;
        for c in tree.children(n).ok()? {
            let c = c.ok()?;
            if c.index <= slot {
                best = Some((c, c.next_sibling.unwrap_or(end)));
            } else {
                break;
            }
        }
        let (b, e) = best?;
        if e > end || e <= b.index {
            return None;
        }
        path.push(b.mv?);
        n = b.index;
        end = e;
        if path.len() > 100_000 {
            return None;
        }
    }
    Some((path, end))
}

/// Follows moves (after the prolog) from the root: the slot reached
/// (resolved through transpositions) and the end of its range.
fn follow(tree: &WinTree, line: &[MoveCode]) -> Option<(u32, u32)> {
    let mut n = 0;
    for &m in line {
        n = tree.child_by_move(n, m).ok()??;
    }
    if n == 0 {
        return Some((0, tree.len()));
    }
    let (_, end) = path_to(tree, n)?;
    Some((n, end))
}

/// Infers the winner: walks the first-child chain from the root to the
/// first node with more than one legal move; the side to move there wins
/// when the proof gives one move, else the opponent.
fn infer_winner(tree: &WinTree, root: &Antichess, rules: Rules) -> Color {
    let mut pos = root.clone();
    let mut n = 0u32;
    for _ in 0..10_000 {
        let legal = pos.legal_moves();
        let node = match tree.resolve(n).and_then(|r| tree.node(r)) {
            Ok(x) => x,
            Err(_) => break,
        };
        if !node.has_children() {
            if let Some(End {
                winner: Some(w), ..
            }) = game::game_end(&pos, &legal, rules)
            {
                return w;
            }
            break;
        }
        let Ok(kids) = tree.children(node.index) else {
            break;
        };
        let kids: Vec<Node> = kids.take(300).filter_map(Result::ok).collect();
        if legal.len() > 1 {
            return if kids.len() == 1 {
                pos.turn()
            } else {
                !pos.turn()
            };
        }
        let Some(first) = kids.first() else { break };
        let Some((_, m)) = first.mv.and_then(|c| game::find_move(&legal, c)) else {
            break;
        };
        pos.play_unchecked(m);
        n = first.index;
    }
    pos.turn()
}

fn build_pool(threads: usize) -> Result<rayon::ThreadPool, String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(256 << 20)
        .build()
        .map_err(|e| e.to_string())
}

/// Checks a win-tree file: see the module docs of [`crate::check`].
pub fn check_tree(tree: &WinTree, opts: &TreeOptions) -> Report {
    let t0 = Instant::now();
    let start = opts.start.clone().unwrap_or_default();
    let rules = opts.rules;
    let prolog = tree.prolog();
    let (root_line, root) = game::san_line(&start, &prolog);
    let mut report = Report::begin(
        rules,
        &root,
        root_line.clone(),
        opts.winner.unwrap_or(root.turn()),
        t0,
    );
    let reject = |report: &mut Report, node: Option<u32>, line: String, fen: String, reason| {
        report.verdict = Verdict::Rejected(Box::new(Rejection {
            line,
            fen,
            node,
            reason,
        }));
        report.elapsed = t0.elapsed();
    };
    // The prolog.
    for (i, c) in prolog.iter().enumerate() {
        if c.is_null() || !c.is_move() {
            let (line, pos) = game::san_line(&start, &prolog[..i]);
            let fen = game::fen(&pos);
            reject(
                &mut report,
                None,
                line,
                fen,
                Reason::BadLine(format!("prolog move {} ({:#06x}) is not a move", i + 1, c)),
            );
            return report;
        }
    }
    if root_line.ends_with('?') {
        let fen = report.root_fen.clone();
        reject(
            &mut report,
            None,
            root_line,
            fen,
            Reason::BadLine("a prolog move is not legal".into()),
        );
        return report;
    }

    // Deep lines recurse: the workers get large (virtual) stacks. The pool
    // for all cores is built once per process.
    static POOL: OnceLock<Result<rayon::ThreadPool, String>> = OnceLock::new();
    let own;
    let pool = match opts.threads {
        None => POOL.get_or_init(|| build_pool(0)).as_ref(),
        Some(t) => {
            own = build_pool(t);
            own.as_ref()
        }
    };
    let pool = match pool {
        Ok(p) => p,
        Err(e) => {
            let fen = report.root_fen.clone();
            reject(
                &mut report,
                None,
                String::new(),
                fen,
                Reason::Malformed(format!("cannot start threads: {e}")),
            );
            return report;
        }
    };
    // The node to certify, when a line into the tree is given.
    let mut all = prolog.clone();
    all.extend(opts.line.iter().copied());
    let (full_line, sub_root) = game::san_line(&start, &all);
    if full_line.ends_with('?') {
        let fen = report.root_fen.clone();
        reject(
            &mut report,
            None,
            full_line,
            fen,
            Reason::BadLine("a move of the line is not legal".into()),
        );
        return report;
    }
    report.root_line = full_line;
    report.root_fen = game::fen(&sub_root);
    pool.install(|| check_tree_in_pool(tree, opts, &start, &prolog, root, sub_root, report, t0))
}

#[allow(clippy::too_many_arguments)]
fn check_tree_in_pool(
    tree: &WinTree,
    opts: &TreeOptions,
    start: &Antichess,
    prolog: &[MoveCode],
    root: Antichess,
    sub_root: Antichess,
    mut report: Report,
    t0: Instant,
) -> Report {
    let rules = opts.rules;
    let n = tree.len();
    let located = |slot: u32, reason: Reason| -> Verdict {
        let (line, fen) = match path_to(tree, slot) {
            Some((p, _)) => {
                let mut all = prolog.to_vec();
                all.extend(p);
                let (line, pos) = game::san_line(start, &all);
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
    };

    // Pass 1: decode every slot, collect the transposition targets.
    let words_len = (n as usize).div_ceil(64);
    let words: Vec<AtomicU64> = (0..words_len).map(|_| AtomicU64::new(0)).collect();
    let first_bad = AtomicU32::new(u32::MAX);
    const CHUNK: u32 = 1 << 16;
    (0..n.div_ceil(CHUNK)).into_par_iter().for_each(|ch| {
        let lo = (ch * CHUNK).max(1);
        let hi = ((ch + 1) * CHUNK).min(n);
        for i in lo..hi {
            match tree.node(i) {
                Ok(node) => {
                    if let NodeKind::Transposition { target } = node.kind {
                        words[(target / 64) as usize]
                            .fetch_or(1 << (target % 64), Ordering::Relaxed);
                    }
                }
                Err(_) => {
                    first_bad.fetch_min(i, Ordering::Relaxed);
                    return;
                }
            }
        }
    });
    let bad = first_bad.load(Ordering::Relaxed);
    if bad != u32::MAX {
        let e = tree.node(bad).expect_err("found bad above");
        report.verdict = located(bad, e.into());
        report.elapsed = t0.elapsed();
        return report;
    }
    let words: Vec<u64> = words.into_iter().map(AtomicU64::into_inner).collect();
    let mut rank = Vec::with_capacity(words.len());
    let mut slots = Vec::new();
    let mut total = 0u32;
    for (wi, &w) in words.iter().enumerate() {
        rank.push(total);
        total += w.count_ones();
        let mut b = w;
        while b != 0 {
            slots.push(wi as u32 * 64 + b.trailing_zeros());
            b &= b - 1;
        }
    }
    let targets = Targets { words, rank, slots };
    let regions = targets.len() as usize + 1;
    let root_region = targets.len();

    let winner = opts
        .winner
        .unwrap_or_else(|| infer_winner(tree, &root, rules));
    report.winner = winner;

    let walker = Walker {
        tree,
        tables: opts.tables.as_deref(),
        rules,
        winner,
        keys: (0..targets.len()).map(|_| OnceLock::new()).collect(),
        local: (0..regions).map(|_| AtomicU32::new(0)).collect(),
        targets,
        deferred: Mutex::new(Vec::new()),
    };
    // The node to certify.
    let mut acc = Acc::default();
    let (start_slot, start_end) = if opts.line.is_empty() {
        (0, n)
    } else {
        match follow(tree, &opts.line) {
            Some(x) => x,
            None => {
                report.verdict = Verdict::Rejected(Box::new(Rejection {
                    line: report.root_line.clone(),
                    fen: report.root_fen.clone(),
                    node: Some(0),
                    reason: Reason::BadLine("the line leaves the tree".into()),
                }));
                report.elapsed = t0.elapsed();
                return report;
            }
        }
    };
    let start_node = match tree.node(start_slot) {
        Ok(x) => x,
        Err(e) => {
            report.verdict = located(start_slot, e.into());
            return report;
        }
    };
    let region0 = if walker.targets.contains(start_slot) {
        NO_REGION
    } else {
        root_region
    };
    // A line into the tree makes the start a region of its own when it is a
    // target; the longest line then starts from its region.
    let first_region = if region0 == NO_REGION {
        walker.targets.id(start_slot)
    } else {
        root_region
    };
    walker.visit(start_node, start_end, &sub_root, 0, region0, 0, &mut acc);

    // Transpositions whose target was not reached when they were: compare
    // now; targets outside the checked subtree get their position by
    // replaying their path from the root, and their subtree is checked.
    loop {
        let deferred =
            std::mem::take(&mut *walker.deferred.lock().expect("no panics while locked"));
        if deferred.is_empty() {
            break;
        }
        let mut fresh = Vec::new();
        for (slot, target, key) in deferred {
            let tid = walker.targets.id(target);
            let k = match walker.keys[tid as usize].get() {
                Some(k) => *k,
                None => {
                    let Some((path, end)) = path_to(tree, target) else {
                        acc.fail(
                            slot,
                            Reason::Malformed(format!(
                                "node {slot}: transposition target {target} lies in no subtree"
                            )),
                        );
                        continue;
                    };
                    let mut all = prolog.to_vec();
                    all.extend(path);
                    let (line, pos) = game::san_line(start, &all);
                    if line.ends_with('?') {
                        acc.fail(
                            slot,
                            Reason::Malformed(format!(
                                "node {slot}: transposition target {target} is reached by an illegal move"
                            )),
                        );
                        continue;
                    }
                    let k = game::pack(&pos);
                    let _ = walker.keys[tid as usize].set(k);
                    fresh.push((target, end, pos));
                    k
                }
            };
            if k != key {
                acc.fail(
                    slot,
                    Reason::TranspositionMismatch {
                        target,
                        target_fen: game::fen(&position_of_key(&k)),
                    },
                );
            }
        }
        if acc.error.is_some() {
            break;
        }
        for (target, end, pos) in fresh {
            match tree.node(target) {
                Ok(node) => walker.visit(node, end, &pos, 0, NO_REGION, 0, &mut acc),
                Err(e) => acc.fail(target, e.into()),
            }
        }
    }
    report.positions = acc.positions;
    report.positions_with_repeats = acc.positions + acc.pointers;
    report.leaves = acc.leaves;

    // Cycles and the longest line, on the graph of regions.
    let local: Vec<u32> = walker
        .local
        .iter()
        .map(|a| a.load(Ordering::Relaxed))
        .collect();
    let (order_ok, longest, cycle_at) = graph(regions, &mut acc.edges, &local, first_region);
    report.longest_line = longest;
    if !order_ok {
        let slot = cycle_at
            .map(|id| walker.targets.slots[id as usize])
            .unwrap_or(0);
        report.verdict = located(
            slot,
            Reason::Cycle(format!(
                "the position at node {slot} is reached again below itself through transpositions"
            )),
        );
    } else if let Some((n, r)) = acc.error {
        report.verdict = located(n, r);
    } else {
        super::finish_tables(&mut report, opts.tables.as_deref());
    }
    report.elapsed = t0.elapsed();
    report
}

/// Topological order of the region graph: whether it is acyclic, the
/// longest line from the root in plies, and a region on a cycle.
fn graph(
    regions: usize,
    edges: &mut Vec<(u32, u32, u32)>,
    local: &[u32],
    root: u32,
) -> (bool, u64, Option<u32>) {
    // Sorted by (from, to), largest plies first; keep that one per pair.
    edges.par_sort_unstable_by_key(|e| (e.0, e.1, u32::MAX - e.2));
    edges.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
    let mut start = vec![0u32; regions + 1];
    for e in edges.iter() {
        start[e.0 as usize + 1] += 1;
    }
    for i in 0..regions {
        start[i + 1] += start[i];
    }
    let mut indeg = vec![0u32; regions];
    for e in edges.iter() {
        indeg[e.1 as usize] += 1;
    }
    let mut order = Vec::with_capacity(regions);
    let mut queue: Vec<u32> = (0..regions as u32)
        .filter(|&v| indeg[v as usize] == 0)
        .collect();
    while let Some(v) = queue.pop() {
        order.push(v);
        for e in &edges[start[v as usize] as usize..start[v as usize + 1] as usize] {
            indeg[e.1 as usize] -= 1;
            if indeg[e.1 as usize] == 0 {
                queue.push(e.1);
            }
        }
    }
    if order.len() != regions {
        // Strip nodes that lead nowhere else, to land on a cycle.
        let mut left: Vec<bool> = vec![true; regions];
        for &v in &order {
            left[v as usize] = false;
        }
        let mut changed = true;
        while changed {
            changed = false;
            for v in 0..regions {
                if left[v]
                    && !edges[start[v] as usize..start[v + 1] as usize]
                        .iter()
                        .any(|e| left[e.1 as usize])
                {
                    left[v] = false;
                    changed = true;
                }
            }
        }
        let at = (0..regions as u32).find(|&v| left[v as usize] && v != root);
        return (false, 0, at);
    }
    let mut longest = vec![0u64; regions];
    for &v in order.iter().rev() {
        let mut best = local[v as usize] as u64;
        for e in &edges[start[v as usize] as usize..start[v as usize + 1] as usize] {
            best = best.max(e.2 as u64 + longest[e.1 as usize]);
        }
        longest[v as usize] = best;
    }
    (true, longest[root as usize], None)
}
