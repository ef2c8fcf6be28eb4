//! The fifty-move rule after the walk: the worst clock at every region's
//! top ([`clock::propagate`]), then each region's deepest node without a
//! capture or pawn move below its top, and the table leaves whose clock
//! was not known during the walk. A fault names the worst line into the
//! node, cut where its clock reaches 100. Also the scoring of a table
//! leaf under the rule ([`table_win_in`]), which the walk calls.

use super::clock::{self, Clocks, Edge};
use super::graph::Shape;
use super::layout::path_to;
use super::walk::{Acc, Walker};
use super::{First, Verdict};
use crate::check::game;
use crate::check::{LeafTables, Leaves, Reason, Rejection};
use crate::vocab::FIFTY_MOVE_PLIES;
use crate::wintree::{MoveCode, WinTree};
use shakmaty::Color;
use shakmaty::variant::Antichess;
use std::sync::atomic::Ordering;

/// Settles the clocks: table leaves whose win does not fit in what the
/// worst clock leaves become unscored (and open, when open leaves are
/// asked for). The largest clock at a position that is not a finished
/// game, and the fault: the first such node (in file order) reached at
/// 100 or more.
pub(super) fn check(
    walker: &Walker,
    acc: &mut Acc,
    shape: &Shape,
    first: &First,
    clock0: u32,
) -> (u32, Option<Verdict>) {
    let clocks = clock::propagate(shape, &acc.edges, first.region, clock0);
    let open = walker.ctx.opts.open_leaves;
    for l in std::mem::take(&mut acc.fifty_leaves) {
        let c = clocks.at(l.region, l.plies).unwrap_or(l.plies);
        if c.saturating_add(l.win_in) > FIFTY_MOVE_PLIES {
            acc.leaves.tables_unscored += 1;
            if open {
                acc.open.push((l.slot, l.key));
            }
        }
    }
    let mut fault: Option<(u32, u32, u32)> = None;
    let mut largest = walker.fifty_since_max.load(Ordering::Relaxed);
    for (region, a) in walker.fifty_deepest.iter().enumerate() {
        let Some((plies, slot)) = clock::unpack_deepest(a.load(Ordering::Relaxed)) else {
            continue;
        };
        let Some(c) = clocks.at(region as u32, plies) else {
            continue;
        };
        largest = largest.max(c);
        if c >= FIFTY_MOVE_PLIES && fault.is_none_or(|(s, _, _)| slot < s) {
            fault = Some((slot, region as u32, c));
        }
    }
    let verdict = fault.map(|(slot, region, clock)| {
        let at = At {
            region,
            slot,
            clock,
        };
        rejection(walker, &acc.edges, &clocks, first, &at)
    });
    (largest, verdict)
}

/// A node reached at 100 or more: its region, slot and worst clock.
#[derive(Clone, Copy)]
struct At {
    region: u32,
    slot: u32,
    clock: u32,
}

/// The rejection of the node `at`: the worst line into it (the line to
/// the node certified, then through each region on the worst path), cut
/// at the first position whose clock reaches 100.
fn rejection(walker: &Walker, edges: &[Edge], clocks: &Clocks, first: &First, at: &At) -> Verdict {
    let At {
        region,
        slot,
        clock,
    } = *at;
    let ctx = walker.ctx;
    let tree = ctx.tree;
    let top = |r: u32| {
        if r == walker.targets.len() {
            first.slot
        } else {
            walker.targets.slots[r as usize]
        }
    };
    // (region's top slot, moves from it) for each region on the path.
    let mut legs: Vec<(u32, Vec<MoveCode>)> = Vec::new();
    let mut hops: Vec<(u32, u32)> = clocks
        .path_into(edges, region)
        .iter()
        .map(|&e| (edges[e as usize].from, edges[e as usize].via))
        .collect();
    hops.push((region, slot));
    for (r, to) in hops {
        let from = top(r);
        let moves = match (path_to(tree, from), path_to(tree, to)) {
            (Some((a, _)), Some((b, _))) if b.starts_with(&a) => b[a.len()..].to_vec(),
            _ => return ctx.located(slot, Reason::FiftyMoveRule { plies: clock }),
        };
        legs.push((from, moves));
    }
    let mut all = ctx.prolog.clone();
    all.extend_from_slice(&ctx.opts.line);
    let before = all.len();
    for (_, m) in &legs {
        all.extend_from_slice(m);
    }
    let clock_start = ctx.opts.start_clock;
    let clocks_along = game::clocks_along(&ctx.start, clock_start, &all);
    let cut = clocks_along
        .iter()
        .position(|&c| c >= FIFTY_MOVE_PLIES)
        .unwrap_or(clocks_along.len() - 1)
        .max(before)
        .min(clocks_along.len() - 1);
    let node = node_at(tree, &legs, cut.saturating_sub(before));
    let (line, pos) = game::san_line(&ctx.start, &all[..cut]);
    Verdict::Rejected(Box::new(Rejection {
        line,
        fen: game::fen(&pos),
        node,
        reason: Reason::FiftyMoveRule {
            plies: clocks_along[cut],
        },
    }))
}

/// The slot `k` moves into the legs (each a region's top and the moves
/// from it), not following transpositions.
fn node_at(tree: &WinTree, legs: &[(u32, Vec<MoveCode>)], mut k: usize) -> Option<u32> {
    for (top, moves) in legs {
        if k < moves.len() || moves.is_empty() {
            return descend(tree, *top, &moves[..k.min(moves.len())]);
        }
        k -= moves.len();
    }
    legs.last().map(|(top, m)| descend(tree, *top, m))?
}

/// The slot reached from `slot` by `moves`, child by child.
fn descend(tree: &WinTree, mut slot: u32, moves: &[MoveCode]) -> Option<u32> {
    for &m in moves {
        slot = tree
            .children(slot)
            .ok()?
            .filter_map(Result::ok)
            .find(|c| c.mv.is_some_and(|c| c.same_move(m)))?
            .index;
    }
    Some(slot)
}

/// A leaf of 4 men or fewer that is not a finished game, under the
/// fifty-move rule: counted, and scored by `tables` (tables built for the
/// rule: [`LeafTables::open`]) when given. `Some(n)`: the tables
/// score it a win for `winner` in `n` plies from a clock of 0 (the caller
/// decides whether it fits in the clock left); `None`: unscored (counted
/// so); a value that is no win for `winner` rejects it, as does any table
/// error but a missing table.
pub(super) fn table_win_in(
    tables: Option<&LeafTables>,
    pos: &Antichess,
    winner: Color,
    leaves: &mut Leaves,
) -> Result<Option<u32>, Reason> {
    use shakmaty::Position;
    leaves.tables += 1;
    let Some(t) = tables.filter(|t| t.fifty_move()) else {
        leaves.tables_unscored += 1;
        return Ok(None);
    };
    match t.score(pos) {
        Ok(crate::tablefile::Value::Win(n)) if pos.turn() == winner => Ok(Some(u32::from(n))),
        Ok(crate::tablefile::Value::Loss(n)) if pos.turn() != winner => Ok(Some(u32::from(n))),
        Ok(v) => Err(Reason::TableLeafNotWon(format!(
            "the endgame tables for the fifty-move rule score it {v} for {} (to move, \
             clock 0), not a win for {}",
            game::color_name(pos.turn()),
            game::color_name(winner),
        ))),
        Err(crate::tablefile::TableError::Missing { .. }) => {
            leaves.tables_unscored += 1;
            Ok(None)
        }
        Err(e) => Err(Reason::TableNotCertified(format!(
            "endgame table for this leaf: {e}"
        ))),
    }
}
