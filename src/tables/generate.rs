//! Retrograde generation of one table with the project's own rules.
//!
//! 1. **Forward pass** (parallel) over every used index: the position's
//!    game end if it has one; otherwise each legal move is either *inside*
//!    the table (a quiet move that is not a promotion and does not leave an
//!    en-passant capture) or *outside* it (captures, promotions, a double
//!    step that allows en passant: their values come from smaller tables,
//!    game ends, or a one-ply look-ahead). The distinct table indices of the
//!    inside children are counted; the best outside result is kept.
//! 2. **Backward pass**, level by level in plies: a position decided at
//!    level `d` is taken back by un-moves of the side that just moved
//!    (quiet, non-promotion; a double step only if no enemy pawn could then
//!    take en passant; the predecessor must have no capture, since captures
//!    are compulsory). A loss at `d` makes each undecided predecessor a win
//!    at `d + 1`; a win at `d` decrements its counter, and a predecessor
//!    whose inside children are all wins (and whose outside moves are all
//!    losing) becomes a loss at `1 + max(d, longest outside)`. Outside wins
//!    are queued at their own level, so every win is found at its shortest
//!    distance and every loss at its longest.
//! 3. What is left undecided is a draw.
//!
//! Identical and symmetric children are counted once per table index on
//! both passes, so the counters match.

#![allow(clippy::needless_range_loop)] // square lists are indexed by slot

use super::format::{ESCAPE, Stats};
use super::index::{Layout, MAX_MEN, Squares};
use super::{TableError, TableSource, Value, value_of};
use crate::rules::attacks;
use crate::rules::{Color, Move, MoveList, Piece, Position, Role, Rules, Square};
use rayon::prelude::*;

pub(super) const UNKNOWN: u16 = u16::MAX;
pub(super) const UNUSED: u16 = u16::MAX - 1;
const FLAG_OUT_DRAW: u8 = 1;
const FLAG_OUT_WIN: u8 = 2;
/// Longest distance a table holds (entries beyond 126 plies go to the
/// overflow list).
pub const MAX_DTW: u16 = 30_000;

/// The result of a generation.
pub struct Generated {
    /// Entry bytes.
    pub data: Vec<u8>,
    /// Codes of the entries beyond a byte, by index.
    pub overflow: Vec<(u32, u16)>,
    /// Counts.
    pub stats: Stats,
}

/// The rules piece of each slot.
pub(super) fn slot_pieces(layout: &Layout) -> Vec<Piece> {
    layout
        .slot_pieces()
        .into_iter()
        .map(|(c, r)| Piece {
            color: Color::ALL[c],
            role: Role::from_index(r).expect("role index"),
        })
        .collect()
}

/// The rules position of a square list (no en passant). Its Zobrist hash
/// lacks the side-to-move key: these positions are only generated from
/// and never hashed.
#[inline]
pub(crate) fn position_of(pieces: &[Piece], p: &Squares) -> Position {
    let mut pos = Position::empty(Color::ALL[p.stm]);
    for (i, &pc) in pieces.iter().enumerate() {
        pos.put(Square::from_index_unchecked(p.sq[i] as u32), pc);
    }
    pos
}

/// The square list of a position of the layout's material (canonical
/// orientation).
pub(crate) fn squares_of(pos: &Position, layout: &Layout) -> Squares {
    let mut p = Squares {
        sq: [0; MAX_MEN],
        stm: pos.turn().index(),
    };
    for g in &layout.groups {
        let bb = pos.pieces(Color::ALL[g.color], Role::from_index(g.role).unwrap());
        for (i, s) in bb.enumerate().take(g.count) {
            p.sq[g.start + i] = s.index() as u8;
        }
    }
    p
}

pub(super) fn encode_value(v: Value, layout: &Layout) -> Result<u16, TableError> {
    if v.dtw().unwrap_or(0) > MAX_DTW {
        return Err(TableError::DtwOverflow {
            material: layout.material.to_string(),
        });
    }
    Ok(v.code() as u16)
}

/// Positions of a pass, by level (plies): `levels[d]` holds the indices
/// decided (or tentatively won) at distance `d`.
pub(super) type Levels = Vec<Vec<u32>>;

pub(super) fn push_level(b: &mut Levels, level: u16, i: u32) {
    let l = level as usize;
    if b.len() <= l {
        b.resize_with(l + 1, Vec::new);
    }
    b[l].push(i);
}

/// The working arrays of a generation, one entry per table index.
struct Work {
    /// Encoded value so far ([`UNKNOWN`] until decided, [`UNUSED`]).
    val: Vec<u16>,
    /// Distinct inside children not yet known to be won by the opponent.
    cnt: Vec<u8>,
    /// Longest loss among the outside moves.
    out_loss: Vec<u16>,
    /// [`FLAG_OUT_DRAW`], [`FLAG_OUT_WIN`].
    flags: Vec<u8>,
}

/// The fixed inputs of a generation (this module's and the fifty-move
/// generator's, which adds its own passes in `fifty.rs`).
pub(super) struct Gen<'a, S> {
    pub(super) layout: &'a Layout,
    pub(super) rules: Rules,
    pub(super) deps: &'a S,
    /// The man of each square slot of the layout.
    pub(super) pieces: Vec<Piece>,
}

impl<'a, S> Gen<'a, S> {
    /// The inputs of the generation of `layout` under `rules`, the tables
    /// its captures and promotions lead to in `deps`.
    pub(super) fn new(layout: &'a Layout, rules: Rules, deps: &'a S) -> Self {
        Gen {
            layout,
            rules,
            deps,
            pieces: slot_pieces(layout),
        }
    }

    /// The squares after the quiet, non-promoting move `m` from `sq`.
    pub(super) fn moved(&self, sq: &Squares, m: Move) -> Squares {
        let mut child = *sq;
        child.stm = 1 - sq.stm;
        let from = m.from().index() as u8;
        let j = (0..self.layout.men)
            .find(|&j| child.sq[j] == from)
            .expect("mover");
        child.sq[j] = m.to().index() as u8;
        child
    }

    /// The undecided predecessors of decided positions (read-only, in
    /// parallel), each marked with [`LOSS_BIT`] when the position is a
    /// loss for its mover; through pawn un-moves too if `pawns`.
    pub(super) fn unmoves(&self, val: &[u16], part: &[u32], pawns: bool) -> Vec<Vec<u32>>
    where
        S: Sync,
    {
        part.par_chunks(1 << 10)
            .map(|cs| {
                let mut preds: Vec<u32> = Vec::with_capacity(256);
                let mut found = Vec::with_capacity(cs.len() * 8);
                for &c in cs {
                    let loss = matches!(Value::from_code(val[c as usize] as u32), Value::Loss(_));
                    let sq = self.layout.squares(c as u64);
                    predecessors(self.layout, &self.pieces, &sq, pawns, &mut preds);
                    for &p in &preds {
                        if val[p as usize] == UNKNOWN {
                            found.push(if loss { p | LOSS_BIT } else { p });
                        }
                    }
                }
                found
            })
            .collect()
    }
}

/// Indices found by the forward pass: decided at a level, and tentative
/// (outside) wins at a level.
type Queued = Vec<(u32, u16)>;

/// One chunk of the working arrays, for the parallel forward pass.
struct Chunk<'w> {
    /// Index of the chunk's first entry.
    first: u64,
    val: &'w mut [u16],
    cnt: &'w mut [u8],
    out_loss: &'w mut [u16],
    flags: &'w mut [u8],
}

/// Entries of a forward-pass chunk.
const CHUNK: usize = 1 << 14;

/// Generates the table of `layout` under `rules`; every table one move
/// leads to must be available from `deps`. The three passes of the
/// module docs.
pub fn run<S: TableSource + Sync>(
    layout: &Layout,
    rules: Rules,
    deps: &S,
) -> Result<Generated, TableError> {
    let size = layout.size() as usize;
    assert!(size < u32::MAX as usize);
    let g = Gen::new(layout, rules, deps);
    let mut w = Work {
        val: vec![UNKNOWN; size],
        cnt: vec![0u8; size],
        out_loss: vec![0u16; size],
        flags: vec![0u8; size],
    };
    let (mut buckets, mut tent) = g.forward(&mut w)?;
    g.backward(&mut w, &mut buckets, &mut tent)?;
    Ok(finish(&w.val))
}

impl<S: TableSource + Sync> Gen<'_, S> {
    /// 1. The forward pass, in parallel chunks.
    fn forward(&self, w: &mut Work) -> Result<(Levels, Levels), TableError> {
        let results: Vec<Result<(Queued, Queued), TableError>> = w
            .val
            .par_chunks_mut(CHUNK)
            .zip(w.cnt.par_chunks_mut(CHUNK))
            .zip(w.out_loss.par_chunks_mut(CHUNK))
            .zip(w.flags.par_chunks_mut(CHUNK))
            .enumerate()
            .map(|(ci, (((val, cnt), out_loss), flags))| {
                self.forward_chunk(Chunk {
                    first: (ci * CHUNK) as u64,
                    val,
                    cnt,
                    out_loss,
                    flags,
                })
            })
            .collect();
        let mut buckets = Levels::new();
        let mut tent = Levels::new();
        for r in results {
            let (decided, tentative) = r?;
            for (i, l) in decided {
                push_level(&mut buckets, l, i);
            }
            for (i, l) in tentative {
                push_level(&mut tent, l, i);
            }
        }
        Ok((buckets, tent))
    }

    /// The forward pass over one chunk: game ends and positions whose moves
    /// all leave the table are decided; the others get their counter of
    /// inside children and their best outside result.
    fn forward_chunk(&self, c: Chunk<'_>) -> Result<(Queued, Queued), TableError> {
        let (layout, rules) = (self.layout, self.rules);
        let mut decided: Queued = Vec::new();
        let mut tentative: Queued = Vec::new();
        let mut moves = MoveList::new();
        let mut kids: Vec<u32> = Vec::with_capacity(128);
        for k in 0..c.val.len() {
            let index = c.first + k as u64;
            let (sq, used) = layout.decode(index);
            if !used {
                c.val[k] = UNUSED;
                continue;
            }
            let pos = position_of(&self.pieces, &sq);
            if pos.outcome(rules).is_some() {
                let v = value_of(&pos, rules, self.deps)?;
                c.val[k] = encode_value(v, layout)?;
                if v != Value::Draw {
                    decided.push((index as u32, 0));
                }
                continue;
            }
            pos.legal_moves_into(&mut moves);
            kids.clear();
            let mut out_win: Option<u16> = None;
            let mut out_draw = false;
            let mut loss_max: u16 = 0;
            for &m in moves.iter() {
                let inside = !m.is_capture()
                    && m.promotion().is_none()
                    && (m.role() != Role::Pawn
                        || m.from().index().abs_diff(m.to().index()) != 16
                        || pos.play(m).ep_square().is_none());
                if inside {
                    kids.push(layout.encode(&self.moved(&sq, m)) as u32);
                } else {
                    match value_of(&pos.play(m), rules, self.deps)?.after_move() {
                        Value::Win(n) => out_win = Some(out_win.map_or(n, |w| w.min(n))),
                        Value::Draw => out_draw = true,
                        Value::Loss(n) => loss_max = loss_max.max(n),
                    }
                }
            }
            kids.sort_unstable();
            kids.dedup();
            if kids.is_empty() {
                let v = if let Some(n) = out_win {
                    Value::Win(n)
                } else if out_draw {
                    Value::Draw
                } else {
                    Value::Loss(loss_max)
                };
                c.val[k] = encode_value(v, layout)?;
                if let Some(n) = v.dtw() {
                    decided.push((index as u32, n));
                }
                continue;
            }
            c.cnt[k] = kids.len() as u8;
            if loss_max > MAX_DTW {
                return Err(TableError::DtwOverflow {
                    material: layout.material.to_string(),
                });
            }
            c.out_loss[k] = loss_max;
            if out_draw {
                c.flags[k] |= FLAG_OUT_DRAW;
            }
            if let Some(n) = out_win {
                c.flags[k] |= FLAG_OUT_WIN;
                tentative.push((index as u32, n));
            }
        }
        Ok((decided, tentative))
    }

    /// 2. The backward pass, level by level.
    fn backward(
        &self,
        w: &mut Work,
        buckets: &mut Levels,
        tent: &mut Levels,
    ) -> Result<(), TableError> {
        let layout = self.layout;
        let mut level: usize = 0;
        while level < buckets.len().max(tent.len()) {
            if level > MAX_DTW as usize {
                return Err(TableError::DtwOverflow {
                    material: layout.material.to_string(),
                });
            }
            if level < tent.len() {
                for i in std::mem::take(&mut tent[level]) {
                    if w.val[i as usize] == UNKNOWN {
                        w.val[i as usize] = encode_value(Value::Win(level as u16), layout)?;
                        push_level(buckets, level as u16, i);
                    }
                }
            }
            let current = if level < buckets.len() {
                std::mem::take(&mut buckets[level])
            } else {
                Vec::new()
            };
            let next = (level + 1) as u16;
            for part in current.chunks(1 << 16) {
                let found = self.unmoves(&w.val, part, true);
                for &f in found.iter().flatten() {
                    let p = (f & !LOSS_BIT) as usize;
                    if w.val[p] != UNKNOWN {
                        continue;
                    }
                    if f & LOSS_BIT != 0 {
                        w.val[p] = encode_value(Value::Win(next), layout)?;
                        push_level(buckets, next, p as u32);
                    } else {
                        w.cnt[p] -= 1;
                        if w.cnt[p] == 0 && w.flags[p] == 0 {
                            let l = next.max(w.out_loss[p]);
                            w.val[p] = encode_value(Value::Loss(l), layout)?;
                            push_level(buckets, l, p as u32);
                        }
                    }
                }
            }
            level += 1;
        }
        Ok(())
    }
}

/// Marks a predecessor found from a lost position (see `Gen::unmoves`).
pub(super) const LOSS_BIT: u32 = 1 << 31;

/// 3. Draws (what is left undecided), the bytes and the counts.
pub(super) fn finish(val: &[u16]) -> Generated {
    let mut stats = Stats::default();
    let mut data = Vec::with_capacity(val.len());
    let mut overflow = Vec::new();
    for (i, &v) in val.iter().enumerate() {
        if v == UNUSED {
            data.push(0);
            stats.unused += 1;
            continue;
        }
        let value = if v == UNKNOWN {
            Value::Draw
        } else {
            Value::from_code(v as u32)
        };
        match value.to_byte() {
            Some(b) => data.push(b),
            None => {
                data.push(ESCAPE);
                overflow.push((i as u32, value.code() as u16));
            }
        }
        stats.tally(value);
    }
    Generated {
        data,
        overflow,
        stats,
    }
}

/// The squares a man attacks (captures onto, if an enemy stands there).
#[inline(always)]
fn attacks_of(p: Piece, sq: usize, occ: u64) -> u64 {
    match p.role {
        Role::Pawn => attacks::PAWN[p.color.index()][sq],
        Role::Knight => attacks::KNIGHT[sq],
        Role::Bishop => attacks::bishop(sq, occ),
        Role::Rook => attacks::rook(sq, occ),
        Role::Queen => attacks::queen(sq, occ),
        Role::King => attacks::KING[sq],
    }
}

/// The distinct table indices of the positions from which a quiet,
/// non-promoting move leads to `c` and is legal (the mover had no capture);
/// pawn moves only if `pawns` (the fifty-move generator takes back piece
/// moves only).
pub(super) fn predecessors(
    layout: &Layout,
    pieces: &[Piece],
    c: &Squares,
    pawns: bool,
    out: &mut Vec<u32>,
) {
    out.clear();
    let them = 1 - c.stm;
    let mut occ = 0u64;
    let mut stm_pawns = 0u64;
    let mut stm_men = 0u64;
    for j in 0..layout.men {
        occ |= 1 << c.sq[j];
        if pieces[j].color.index() == c.stm {
            stm_men |= 1 << c.sq[j];
        }
        if pieces[j].role == Role::Pawn && pieces[j].color.index() == c.stm {
            stm_pawns |= 1 << c.sq[j];
        }
    }
    let empty = !occ;
    for j in 0..layout.men {
        if pieces[j].color.index() != them || (!pawns && pieces[j].role == Role::Pawn) {
            continue;
        }
        let t = c.sq[j] as usize;
        let froms = match pieces[j].role {
            Role::Knight => attacks::KNIGHT[t] & empty,
            Role::King => attacks::KING[t] & empty,
            Role::Bishop => attacks::bishop(t, occ) & empty,
            Role::Rook => attacks::rook(t, occ) & empty,
            Role::Queen => attacks::queen(t, occ) & empty,
            Role::Pawn => {
                let mut f = 0u64;
                if them == 0 {
                    if t >= 16 && empty & (1 << (t - 8)) != 0 {
                        f |= 1 << (t - 8);
                        if t / 8 == 3
                            && empty & (1 << (t - 16)) != 0
                            && attacks::PAWN[0][t - 8] & stm_pawns == 0
                        {
                            f |= 1 << (t - 16);
                        }
                    }
                } else if t <= 47 && empty & (1 << (t + 8)) != 0 {
                    f |= 1 << (t + 8);
                    if t / 8 == 4
                        && empty & (1 << (t + 16)) != 0
                        && attacks::PAWN[1][t + 8] & stm_pawns == 0
                    {
                        f |= 1 << (t + 16);
                    }
                }
                f
            }
        };
        let mut b = froms;
        while b != 0 {
            let from = b.trailing_zeros() as u8;
            b &= b - 1;
            // The mover must have had no capture (captures are compulsory).
            let occ_p = (occ & !(1u64 << t)) | (1u64 << from);
            let captures = (0..layout.men).any(|k| {
                pieces[k].color.index() == them && {
                    let s = if k == j { from } else { c.sq[k] } as usize;
                    attacks_of(pieces[k], s, occ_p) & stm_men != 0
                }
            });
            if captures {
                continue;
            }
            let mut p = *c;
            p.stm = them;
            p.sq[j] = from;
            out.push(layout.encode(&p) as u32);
        }
    }
    out.sort_unstable();
    out.dedup();
}
