//! The walk: every branch below the node to certify replayed with
//! shakmaty, each node checked against its position, and transpositions
//! compared with their targets.

use super::clock::{Edge, FiftyLeaf, NO_RESET};
use super::layout::{path_to, position_of_key};
use super::targets::Targets;
use super::{Ctx, Key};
use crate::check::game::{self, End, EndKind};
use crate::check::{Leaves, Reason, Reply};
use crate::wintree::{MoveCode, Node, NodeKind};
use rayon::prelude::*;
use shakmaty::variant::Antichess;
use shakmaty::{Color, Move, MoveList, Position};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// No enclosing region (a walk started at a transposition target).
pub(super) const NO_REGION: u32 = u32::MAX;

/// Subtrees of at least this many slots are split across threads.
const PAR_MIN_SLOTS: u32 = 1 << 12;

/// What a part of the walk found.
#[derive(Default)]
pub(super) struct Acc {
    pub positions: u64,
    pub pointers: u64,
    pub leaves: Leaves,
    /// The first error in file order: (node, reason).
    pub error: Option<(u32, Reason)>,
    /// Reduced-graph edges.
    pub edges: Vec<Edge>,
    /// Open leaves (with [`super::TreeOptions::open_leaves`]): slot, key.
    pub open: Vec<(u32, Key)>,
    /// Under the fifty-move rule: table leaves won in so many plies whose
    /// clock is only known once the region's worst clock is.
    pub fifty_leaves: Vec<FiftyLeaf>,
}

impl Acc {
    pub fn fail(&mut self, node: u32, reason: Reason) {
        if self.error.as_ref().is_none_or(|(n, _)| node < *n) {
            self.error = Some((node, reason));
        }
    }

    /// The figures of a reply's subtree walked into this `Acc` alone.
    fn reply(&self, san: String) -> Reply {
        let mut keys: Vec<&Key> = self.open.iter().map(|(_, k)| k).collect();
        keys.sort_unstable();
        keys.dedup();
        Reply {
            san,
            positions: self.positions,
            positions_with_repeats: self.positions + self.pointers,
            leaves: self.leaves,
            open: keys.len() as u64,
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
        self.open.append(&mut o.open);
        self.fifty_leaves.append(&mut o.fifty_leaves);
        self
    }
}

/// Where a node lies: its depth in plies from where the walk started, its
/// region (the nearest transposition target above it or at it, else the
/// root's region), the depth of that region's top, and (under the
/// fifty-move rule) the depth of the last capture or pawn move below that
/// top ([`NO_RESET`]: none).
#[derive(Clone, Copy)]
pub(super) struct Place {
    depth: u32,
    region: u32,
    region_depth: u32,
    reset_depth: u32,
}

impl Place {
    /// The top of a walk, in `region` (or [`NO_REGION`]).
    pub fn top(region: u32) -> Place {
        Place {
            depth: 0,
            region,
            region_depth: 0,
            reset_depth: NO_RESET,
        }
    }

    /// Plies from the region's top.
    fn plies(self) -> u32 {
        self.depth - self.region_depth
    }

    /// Plies since the last capture or pawn move, when there is one below
    /// the region's top (the half-move clock then does not depend on the
    /// path into the region); else [`NO_RESET`].
    fn since(self) -> u32 {
        if self.reset_depth == NO_RESET {
            NO_RESET
        } else {
            self.depth - self.reset_depth
        }
    }

    /// A child's place; `reset`: its move is a capture or a pawn move.
    fn down(self, reset: bool) -> Place {
        let depth = self.depth + 1;
        Place {
            depth,
            reset_depth: if reset { depth } else { self.reset_depth },
            ..self
        }
    }
}

/// The legal moves' codes (bit 15 cleared), for matching children.
struct Codes {
    codes: [u16; 256],
    len: usize,
}

impl Codes {
    fn new(legal: &MoveList) -> Codes {
        let mut codes = [0u16; 256];
        for (i, m) in legal.iter().enumerate() {
            codes[i] = game::move_code(m).cleared().raw();
        }
        Codes {
            codes,
            len: legal.len(),
        }
    }

    /// The index of the legal move a code stands for. Children usually
    /// come in move-generation order: the scan starts at `hint`, one past
    /// the last match.
    #[inline]
    fn find(&self, code: MoveCode, hint: usize) -> Option<usize> {
        let c = code.cleared().raw();
        let k = self.len;
        (0..k).map(|j| (hint + j) % k).find(|&i| self.codes[i] == c)
    }
}

/// An inner node being checked: its slot, the end of its range, its
/// position, legal moves and their codes.
struct Inner<'p> {
    slot: u32,
    end: u32,
    pos: &'p Antichess,
    legal: MoveList,
    codes: Codes,
}

/// The walk's state shared by all threads: the fixed inputs, the winner,
/// the targets, and what is learnt about each target and region.
pub(super) struct Walker<'c, 't> {
    pub ctx: &'c Ctx<'t>,
    pub winner: Color,
    pub targets: Targets,
    /// The targets' positions, by id, once reached.
    keys: Vec<OnceLock<Key>>,
    /// The deepest ply in each region below its top, by region id.
    pub local: Vec<AtomicU32>,
    /// Transpositions met before their target: (slot, target, key).
    deferred: Mutex<Vec<(u32, u32, Key)>>,
    /// Under the fifty-move rule, by region id: the deepest node that is
    /// not a finished game and has no capture or pawn move between the
    /// region's top and itself, packed by [`super::clock::pack_deepest`]
    /// (0: none). Empty without the rule.
    pub fifty_deepest: Vec<AtomicU64>,
    /// Under the fifty-move rule: the largest clock seen at a node that
    /// is not a finished game with a capture or pawn move below its
    /// region's top.
    pub fifty_since_max: AtomicU32,
    /// The node whose children's subtrees are counted one by one
    /// ([`crate::check::Report::replies`]).
    pub split: Option<u32>,
    /// Their figures, with the child's slot.
    pub replies: Mutex<Vec<(u32, Reply)>>,
}

impl<'c, 't> Walker<'c, 't> {
    pub fn new(ctx: &'c Ctx<'t>, winner: Color, targets: Targets) -> Walker<'c, 't> {
        let regions = targets.len() as usize + 1;
        Walker {
            ctx,
            winner,
            keys: (0..targets.len()).map(|_| OnceLock::new()).collect(),
            local: (0..regions).map(|_| AtomicU32::new(0)).collect(),
            fifty_deepest: if ctx.opts.rule_set.fifty_move {
                (0..regions).map(|_| AtomicU64::new(0)).collect()
            } else {
                Vec::new()
            },
            fifty_since_max: AtomicU32::new(0),
            targets,
            deferred: Mutex::new(Vec::new()),
            split: None,
            replies: Mutex::new(Vec::new()),
        }
    }

    /// Raises a region's deepest ply; reads first so that threads do not
    /// fight over the cache line when nothing changes.
    #[inline]
    fn raise_local(&self, at: Place) {
        let a = &self.local[at.region as usize];
        let plies = at.plies();
        if a.load(Ordering::Relaxed) < plies {
            a.fetch_max(plies, Ordering::Relaxed);
        }
    }

    /// Reports progress: every slot is walked once, so each slot index
    /// that is a multiple of [`super::PROGRESS_STEP`] stands for that many
    /// slots checked (whichever parallel walker reaches it).
    fn tick(&self, slot: u32) {
        if u64::from(slot).is_multiple_of(super::PROGRESS_STEP)
            && let Some(p) = &self.ctx.opts.progress
        {
            p.fetch_add(super::PROGRESS_STEP, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Under the fifty-move rule, notes the clock of a node that is not a
    /// finished game: a clock of 100 or more since a capture or pawn move
    /// in its region is a fault now; otherwise the clock depends on the
    /// worst path into the region, and the region's deepest such node is
    /// kept for [`super::clock`].
    fn clock(&self, slot: u32, at: Place, acc: &mut Acc) {
        if self.fifty_deepest.is_empty() {
            return;
        }
        let since = at.since();
        if since == NO_RESET {
            let a = &self.fifty_deepest[at.region as usize];
            let v = super::clock::pack_deepest(at.plies(), slot);
            if a.load(Ordering::Relaxed) < v {
                a.fetch_max(v, Ordering::Relaxed);
            }
        } else {
            if self.fifty_since_max.load(Ordering::Relaxed) < since {
                self.fifty_since_max.fetch_max(since, Ordering::Relaxed);
            }
            if since >= crate::vocab::FIFTY_MOVE_PLIES {
                acc.fail(slot, Reason::FiftyMoveRule { plies: since });
            }
        }
    }

    fn leaf(&self, slot: u32, pos: &Antichess, at: Place, acc: &mut Acc) {
        let rules = self.ctx.opts.rule_set.stalemate;
        let legal = pos.legal_moves();
        match game::game_end(pos, &legal, rules) {
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
                            format!("{} wins under {} rules", game::color_name(c), rules)
                        }
                        None => format!("a draw under {} rules", rules),
                    };
                    acc.fail(slot, Reason::LeafNotWon(what));
                }
            }
            None => {
                self.clock(slot, at, acc);
                let men = game::men(pos);
                let open = self.ctx.opts.open_leaves;
                if men <= 4 && !self.fifty_deepest.is_empty() {
                    self.fifty_table_leaf(slot, pos, at, acc);
                } else if men <= 4 {
                    let tables = self.ctx.opts.tables.as_deref();
                    let unscored = acc.leaves.tables_unscored;
                    if let Err(r) =
                        crate::check::table_leaf(tables, pos, self.winner, &mut acc.leaves)
                    {
                        acc.fail(slot, r);
                    } else if open && acc.leaves.tables_unscored > unscored {
                        acc.open.push((slot, game::pack(pos)));
                    }
                } else if open {
                    acc.open.push((slot, game::pack(pos)));
                } else {
                    acc.fail(slot, Reason::NonTerminalLeaf(men));
                }
            }
        }
    }

    /// A leaf of 4 men or fewer that is not a finished game, under the
    /// fifty-move rule: a table win in `n` plies counts when the clock `c`
    /// there has `c + n <= 100`; with a clock known only after the walk,
    /// it is kept in [`Acc::fifty_leaves`] and counted as scored until
    /// [`super::clock`] says otherwise.
    fn fifty_table_leaf(&self, slot: u32, pos: &Antichess, at: Place, acc: &mut Acc) {
        let tables = self.ctx.opts.tables.as_deref();
        let open = self.ctx.opts.open_leaves;
        match super::fifty::table_win_in(tables, pos, self.winner, &mut acc.leaves) {
            Err(r) => acc.fail(slot, r),
            Ok(None) => {
                if open {
                    acc.open.push((slot, game::pack(pos)));
                }
            }
            Ok(Some(n)) => {
                let since = at.since();
                if since == NO_RESET {
                    acc.fifty_leaves.push(FiftyLeaf {
                        region: at.region,
                        plies: at.plies(),
                        win_in: n,
                        slot,
                        key: game::pack(pos),
                    });
                } else if since + n > crate::vocab::FIFTY_MOVE_PLIES {
                    acc.leaves.tables_unscored += 1;
                    if open {
                        acc.open.push((slot, game::pack(pos)));
                    }
                }
            }
        }
    }

    /// Checks the node at `slot`, whose subtree must occupy exactly the
    /// slots `slot..end`, in position `pos` at place `at`.
    pub fn visit(&self, node: Node, end: u32, pos: &Antichess, mut at: Place, acc: &mut Acc) {
        let slot = node.index;
        if self.targets.contains(slot) {
            let id = self.targets.id(slot);
            let _ = self.keys[id as usize].set(game::pack(pos));
            if at.region != NO_REGION {
                acc.edges
                    .push(Edge::new(at.region, id, at.plies(), at.since(), slot));
            }
            at.region = id;
            at.region_depth = at.depth;
            at.reset_depth = NO_RESET;
        }
        let malformed = |acc: &mut Acc, what: &str| {
            acc.fail(slot, Reason::Malformed(format!("node {slot}: {what}")));
        };
        match node.kind {
            NodeKind::Transposition { target } => {
                acc.pointers += 1;
                self.raise_local(at);
                if end != slot + 1 {
                    return malformed(acc, "a transposition where a subtree must be");
                }
                self.transposition(slot, target, pos, acc);
                let to = self.targets.id(target);
                acc.edges
                    .push(Edge::new(at.region, to, at.plies(), at.since(), slot));
            }
            NodeKind::Unsolved => {
                acc.positions += 1;
                self.tick(slot);
                acc.fail(slot, Reason::Unsolved);
            }
            NodeKind::Leaf => {
                acc.positions += 1;
                self.tick(slot);
                self.raise_local(at);
                if end != slot + 1 {
                    return malformed(acc, "a leaf where a subtree must be");
                }
                self.leaf(slot, pos, at, acc);
            }
            NodeKind::Inner => {
                acc.positions += 1;
                self.tick(slot);
                if at.depth >= crate::check::MAX_PLIES {
                    return acc.fail(slot, Reason::TooDeep);
                }
                if end < slot + 2 {
                    return malformed(acc, "children outside the parent's subtree");
                }
                self.clock(slot, at, acc);
                self.inner(slot, end, pos, at, acc);
            }
        }
    }

    /// Compares a transposition's position with its target's, or defers
    /// the comparison when the target has not been reached yet.
    fn transposition(&self, slot: u32, target: u32, pos: &Antichess, acc: &mut Acc) {
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
    }

    fn inner(&self, slot: u32, end: u32, pos: &Antichess, at: Place, acc: &mut Acc) {
        let legal = pos.legal_moves();
        if let Some(e) = game::game_end(pos, &legal, self.ctx.opts.rule_set.stalemate) {
            let what = match e.winner {
                Some(c) => format!("{} has won", game::color_name(c)),
                None => "drawn".to_string(),
            };
            return acc.fail(slot, Reason::GameOver(what));
        }
        let node = Inner {
            slot,
            end,
            pos,
            codes: Codes::new(&legal),
            legal,
        };
        match self.match_children(&node) {
            Ok(n) => self.walk_children(&node, n, at, acc),
            Err((at, reason)) => acc.fail(at, reason),
        }
    }

    /// The children's first pass: every child is a legal move, once, the
    /// winner gives one and the loser every one. The number of children,
    /// or the node to blame and why.
    fn match_children(&self, node: &Inner) -> Result<usize, (u32, Reason)> {
        let Inner {
            slot,
            end,
            pos,
            ref legal,
            ref codes,
        } = *node;
        let mut n = 0usize;
        let mut seen = [0u64; 4];
        let mut hint = 0;
        let mut c = slot + 1;
        loop {
            if c >= end {
                return Err((
                    slot,
                    Reason::Malformed(format!(
                        "node {slot}: child {c} outside its subtree (ends before {end})"
                    )),
                ));
            }
            let child = self.ctx.tree.node(c).map_err(|e| (c, Reason::from(e)))?;
            let Some(code) = child.mv else {
                return Err((c, Reason::Malformed(format!("node {c}: no move"))));
            };
            if code.is_null() {
                return Err((slot, Reason::NullMove));
            }
            if child.is_unsolved() {
                return Err((c, Reason::Unsolved));
            }
            if !code.is_move() {
                return Err((slot, Reason::BadMoveCode(code)));
            }
            let Some(i) = codes.find(code, hint) else {
                return Err((slot, Reason::IllegalMove(code.uci())));
            };
            if seen[i / 64] >> (i % 64) & 1 == 1 {
                let san = shakmaty::san::San::from_move(pos, legal[i]).to_string();
                return Err((slot, Reason::DuplicateMove(san)));
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
                return Err((slot, Reason::WinnerChildren(n)));
            }
        } else if n != legal.len() {
            let missing = legal
                .iter()
                .enumerate()
                .filter(|(i, _)| seen[i / 64] >> (i % 64) & 1 == 0)
                .map(|(_, m)| shakmaty::san::San::from_move(pos, *m).to_string())
                .collect();
            return Err((slot, Reason::MissingDefence(missing)));
        }
        Ok(n)
    }

    /// The children's second pass: walks the `n` children (all checked by
    /// [`Walker::match_children`]) with their ranges, in parallel when the
    /// subtree is large.
    fn walk_children(&self, node: &Inner, n: usize, at: Place, acc: &mut Acc) {
        let run = |child: Node, i: usize, acc: &mut Acc| {
            let mut p = node.pos.clone();
            let m: Move = node.legal[i];
            p.play_unchecked(m);
            let range_end = child.next_sibling.unwrap_or(node.end);
            let reset = !self.fifty_deepest.is_empty() && game::resets_clock(&m);
            self.visit(child, range_end, &p, at.down(reset), acc);
        };
        let kids = || {
            let mut c = Some(node.slot + 1);
            let mut hint = 0;
            std::iter::from_fn(move || {
                let child = self.ctx.tree.node(c?).ok()?;
                let i = node.codes.find(child.mv?, hint)?;
                hint = i + 1;
                c = child.next_sibling;
                Some((child, i))
            })
        };
        if self.split == Some(node.slot) {
            // Each child's subtree counted alone, then added up.
            let one = |(child, i): (Node, usize)| {
                let mut a = Acc::default();
                let slot = child.index;
                run(child, i, &mut a);
                let san = shakmaty::san::San::from_move(node.pos, node.legal[i]).to_string();
                let r = a.reply(san);
                self.replies
                    .lock()
                    .expect("no panics while locked")
                    .push((slot, r));
                a
            };
            let list: Vec<(Node, usize)> = kids().collect();
            let sub = list
                .into_par_iter()
                .map(one)
                .reduce(Acc::default, Acc::merge);
            let mine = std::mem::take(acc);
            *acc = mine.merge(sub);
        } else if node.end - node.slot >= PAR_MIN_SLOTS && n > 1 {
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

    /// Transpositions whose target was not reached when they were: compares
    /// them now; targets outside the checked subtree get their position by
    /// replaying their path from the root, and their subtree is checked
    /// (which may defer more).
    pub fn settle_deferred(&self, acc: &mut Acc) {
        loop {
            let deferred =
                std::mem::take(&mut *self.deferred.lock().expect("no panics while locked"));
            if deferred.is_empty() {
                break;
            }
            let mut fresh = Vec::new();
            for (slot, target, key) in deferred {
                let Some(k) = self.target_key(slot, target, acc, &mut fresh) else {
                    continue;
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
                match self.ctx.tree.node(target) {
                    Ok(node) => self.visit(node, end, &pos, Place::top(NO_REGION), acc),
                    Err(e) => acc.fail(target, e.into()),
                }
            }
        }
    }

    /// The key of the target of the transposition at `slot`: known when it
    /// was reached, else found by replaying its path from the root (the
    /// target then goes to `fresh`, to be walked). `None`: no such path,
    /// and the fault is in `acc`.
    fn target_key(
        &self,
        slot: u32,
        target: u32,
        acc: &mut Acc,
        fresh: &mut Vec<(u32, u32, Antichess)>,
    ) -> Option<Key> {
        let tid = self.targets.id(target);
        if let Some(k) = self.keys[tid as usize].get() {
            return Some(*k);
        }
        let Some((path, end)) = path_to(self.ctx.tree, target) else {
            acc.fail(
                slot,
                Reason::Malformed(format!(
                    "node {slot}: transposition target {target} lies in no subtree"
                )),
            );
            return None;
        };
        let (line, pos) = self.ctx.replay(&path);
        if line.ends_with('?') {
            acc.fail(
                slot,
                Reason::Malformed(format!(
                    "node {slot}: transposition target {target} is reached by an illegal move"
                )),
            );
            return None;
        }
        let k = game::pack(&pos);
        let _ = self.keys[tid as usize].set(k);
        fresh.push((target, end, pos));
        Some(k)
    }
}
