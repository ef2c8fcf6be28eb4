//! Retrograde generation of one table under the fifty-move rule, with the
//! project's own rules.
//!
//! The value stored for a position is its fifty-move value at a half-move
//! clock of 0 (see `docs/tables.md`, "Tables under the fifty-move rule"):
//! `Win(n)` / `Loss(n)` with `n` the plies to the next capture, pawn move
//! or game end under best play within the rule (the winner hurrying, the
//! loser delaying; `1 <= n <= 100`), game ends as in the plain tables
//! (`Win(0)`, `Loss(0)`, `Draw`), and `Draw` for everything else.
//!
//! A capture or a pawn move (a *zeroing* move) resets the clock, so its
//! value depends only on whether the position it leads to is won, lost or
//! drawn under the rule: a win in 1 into a lost position, a loss in 1 into
//! a won one. Captures and promotions lead to smaller tables; other pawn
//! moves stay in this table but strictly increase the pawns' advancement
//! (the sum of the ranks of White's pawns and of the distances to rank 1
//! of Black's), so the table is built in *layers* of equal advancement,
//! the most advanced first. Within a layer only piece moves (quiet, not
//! pawn) keep the clock running, and they never leave the layer:
//!
//! 1. **Forward pass** over the layer (parallel): game ends are decided;
//!    each zeroing move is valued from the smaller tables, a one-ply
//!    look-ahead (a double step allowing en passant) or a more advanced
//!    layer of this table (already final); a zeroing move to a lost
//!    position makes a win in 1 at once; the distinct inside children
//!    (quiet piece moves) are counted.
//! 2. **Backward pass**, level by level from 0 to 99 (nothing beyond 100
//!    plies counts): un-moves of pieces only. A loss at `d` makes each
//!    undecided predecessor a win at `d + 1`; a win at `d` decrements its
//!    counter, and a predecessor whose inside children are all won by the
//!    opponent and whose zeroing moves all lose (none draws) becomes a
//!    loss at `d + 1`.
//! 3. What is left undecided in the layer is a draw (cursed wins and
//!    blessed losses among them).

use super::generate::{
    Gen, Generated, LOSS_BIT, Levels, UNKNOWN, UNUSED, encode_value, finish, position_of,
    push_level,
};
use super::index::{Layout, Squares};
use super::{RuleSet, TableError, TableSource, Value, value_of};
use crate::rules::{MoveList, Piece, Role, Rules};
use crate::vocab::FIFTY_MOVE_PLIES;
use rayon::prelude::*;

/// The code of a draw (final).
const DRAW: u16 = 0;

/// The pawns' advancement of a square list: the sum over White's pawns of
/// their rank (0-based) and over Black's of 7 minus their rank. Every pawn
/// move increases it.
fn advancement(pieces: &[Piece], p: &Squares) -> u8 {
    let mut a = 0u8;
    for (j, pc) in pieces.iter().enumerate() {
        if pc.role == Role::Pawn {
            let rank = p.sq[j] / 8;
            a += if pc.color.index() == 0 {
                rank
            } else {
                7 - rank
            };
        }
    }
    a
}

/// What the forward pass found for one position.
struct Forward {
    index: u32,
    /// The decided value's code, or [`UNKNOWN`].
    code: u16,
    /// Distinct inside children.
    cnt: u8,
    /// Some zeroing move draws.
    draws: bool,
}

/// Generates the table of `layout` under `rules` with the fifty-move
/// rule; every table one capture or promotion leads to must be available
/// from `deps`, built under the fifty-move rule too. The passes of the
/// module docs.
pub fn run<S: TableSource + Sync>(
    layout: &Layout,
    rules: Rules,
    deps: &S,
) -> Result<Generated, TableError> {
    let size = layout.size() as usize;
    assert!(size < u32::MAX as usize);
    let g = Gen::new(layout, rules, deps);
    // The layer of each used index.
    let layer_of: Vec<u8> = (0..size as u64)
        .into_par_iter()
        .map(|i| {
            let (sq, used) = layout.decode(i);
            if used {
                advancement(&g.pieces, &sq)
            } else {
                u8::MAX
            }
        })
        .collect();
    let mut layers: Vec<Vec<u32>> = Vec::new();
    let mut val = vec![UNKNOWN; size];
    for (i, &l) in layer_of.iter().enumerate() {
        if l == u8::MAX {
            val[i] = UNUSED;
            continue;
        }
        if layers.len() <= l as usize {
            layers.resize_with(l as usize + 1, Vec::new);
        }
        layers[l as usize].push(i as u32);
    }
    drop(layer_of);
    let mut cnt = vec![0u8; size];
    let mut draws = vec![false; size];
    for layer in layers.iter().rev() {
        let mut buckets = Levels::new();
        for part in layer
            .par_chunks(1 << 12)
            .map(|cs| g.forward_layer(&val, cs))
            .collect::<Vec<_>>()
        {
            for f in part? {
                let i = f.index as usize;
                val[i] = f.code;
                cnt[i] = f.cnt;
                draws[i] = f.draws;
                if f.code != UNKNOWN
                    && let Some(n) = Value::from_code(f.code as u32).dtw()
                {
                    push_level(&mut buckets, n, f.index);
                }
            }
        }
        g.backward_layer(&mut val, &mut cnt, &draws, &mut buckets)?;
        for &i in layer {
            if val[i as usize] == UNKNOWN {
                val[i as usize] = DRAW;
            }
        }
    }
    Ok(finish(&val))
}

impl<S: TableSource + Sync> Gen<'_, S> {
    /// The forward pass (1.) over some indices of one layer; `val` holds
    /// the final values of the more advanced layers.
    fn forward_layer(&self, val: &[u16], indices: &[u32]) -> Result<Vec<Forward>, TableError> {
        let (layout, rules) = (self.layout, self.rules);
        let rule_set = RuleSet::new(rules, true);
        let mut out = Vec::with_capacity(indices.len());
        let mut moves = MoveList::new();
        let mut kids: Vec<u32> = Vec::with_capacity(128);
        for &index in indices {
            let sq = layout.squares(index as u64);
            let pos = position_of(&self.pieces, &sq);
            if pos.outcome(rules).is_some() {
                let v = value_of(&pos, rule_set, self.deps)?;
                out.push(Forward {
                    index,
                    code: encode_value(v, layout)?,
                    cnt: 0,
                    draws: false,
                });
                continue;
            }
            pos.legal_moves_into(&mut moves);
            kids.clear();
            let (mut win, mut draw) = (false, false);
            for &m in moves.iter() {
                if !m.is_irreversible() {
                    kids.push(layout.encode(&self.moved(&sq, m)) as u32);
                    continue;
                }
                let next = pos.play(m);
                let child =
                    if m.is_capture() || m.promotion().is_some() || next.ep_square().is_some() {
                        value_of(&next, rule_set, self.deps)?
                    } else {
                        // A pawn move in this table: a more advanced layer.
                        let c = val[layout.encode(&self.moved(&sq, m)) as usize];
                        debug_assert!(c != UNKNOWN && c != UNUSED, "layer order");
                        Value::from_code(c as u32)
                    };
                match child.after_move_fifty(true) {
                    Value::Win(_) => win = true,
                    Value::Draw => draw = true,
                    Value::Loss(_) => {}
                }
            }
            kids.sort_unstable();
            kids.dedup();
            let decided = if win {
                Some(Value::Win(1))
            } else if kids.is_empty() {
                Some(if draw { Value::Draw } else { Value::Loss(1) })
            } else {
                None
            };
            out.push(Forward {
                index,
                code: match decided {
                    Some(v) => encode_value(v, layout)?,
                    None => UNKNOWN,
                },
                cnt: kids.len() as u8,
                draws: draw,
            });
        }
        Ok(out)
    }

    /// The backward pass (2.) over one layer, levels 0 to 99.
    fn backward_layer(
        &self,
        val: &mut [u16],
        cnt: &mut [u8],
        draws: &[bool],
        buckets: &mut Levels,
    ) -> Result<(), TableError> {
        let layout = self.layout;
        let last = FIFTY_MOVE_PLIES as usize - 1;
        let mut level = 0;
        while level <= last && level < buckets.len() {
            let current = std::mem::take(&mut buckets[level]);
            let next = (level + 1) as u16;
            for part in current.chunks(1 << 16) {
                // Piece un-moves only: a pawn move zeroes the clock.
                let found = self.unmoves(val, part, false);
                for &f in found.iter().flatten() {
                    let p = (f & !LOSS_BIT) as usize;
                    if val[p] != UNKNOWN {
                        continue;
                    }
                    if f & LOSS_BIT != 0 {
                        val[p] = encode_value(Value::Win(next), layout)?;
                        push_level(buckets, next, p as u32);
                    } else {
                        cnt[p] -= 1;
                        if cnt[p] == 0 && !draws[p] {
                            val[p] = encode_value(Value::Loss(next), layout)?;
                            push_level(buckets, next, p as u32);
                        }
                    }
                }
            }
            level += 1;
        }
        Ok(())
    }
}
