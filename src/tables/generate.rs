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
use crate::rules::{Color, MoveList, Piece, Position, Role, Rules, Square};
use rayon::prelude::*;

const UNKNOWN: u16 = u16::MAX;
const UNUSED: u16 = u16::MAX - 1;
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
fn slot_pieces(layout: &Layout) -> Vec<Piece> {
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

fn encode_value(v: Value, layout: &Layout) -> Result<u16, TableError> {
    if v.dtw().unwrap_or(0) > MAX_DTW {
        return Err(TableError::DtwOverflow {
            material: layout.material.to_string(),
        });
    }
    Ok(v.code() as u16)
}

/// Generates the table of `layout` under `rules`; every table one move
/// leads to must be available from `deps`.
pub fn run<S: TableSource + Sync>(
    layout: &Layout,
    rules: Rules,
    deps: &S,
) -> Result<Generated, TableError> {
    let size = layout.size() as usize;
    assert!(size < u32::MAX as usize);
    let pieces = slot_pieces(layout);
    let mut val = vec![UNKNOWN; size];
    let mut cnt = vec![0u8; size];
    let mut out_loss = vec![0u16; size];
    let mut flags = vec![0u8; size];
    const CH: usize = 1 << 14;

    // 1. Forward pass.
    type Queued = Vec<(u32, u16)>;
    let results: Vec<Result<(Queued, Queued), TableError>> = val
        .par_chunks_mut(CH)
        .zip(cnt.par_chunks_mut(CH))
        .zip(out_loss.par_chunks_mut(CH))
        .zip(flags.par_chunks_mut(CH))
        .enumerate()
        .map(|(ci, (((val, cnt), out_loss), flags))| {
            let mut decided: Queued = Vec::new();
            let mut tentative: Queued = Vec::new();
            let mut moves = MoveList::new();
            let mut kids: Vec<u32> = Vec::with_capacity(128);
            for k in 0..val.len() {
                let index = (ci * CH + k) as u64;
                let (sq, used) = layout.decode(index);
                if !used {
                    val[k] = UNUSED;
                    continue;
                }
                let pos = position_of(&pieces, &sq);
                if pos.outcome(rules).is_some() {
                    let v = value_of(&pos, rules, deps)?;
                    val[k] = encode_value(v, layout)?;
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
                        let mut c = sq;
                        c.stm = 1 - sq.stm;
                        let from = m.from().index() as u8;
                        let j = (0..layout.men).find(|&j| c.sq[j] == from).expect("mover");
                        c.sq[j] = m.to().index() as u8;
                        kids.push(layout.encode(&c) as u32);
                    } else {
                        match value_of(&pos.play(m), rules, deps)?.after_move() {
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
                    val[k] = encode_value(v, layout)?;
                    if let Some(n) = v.dtw() {
                        decided.push((index as u32, n));
                    }
                    continue;
                }
                cnt[k] = kids.len() as u8;
                if loss_max > MAX_DTW {
                    return Err(TableError::DtwOverflow {
                        material: layout.material.to_string(),
                    });
                }
                out_loss[k] = loss_max;
                if out_draw {
                    flags[k] |= FLAG_OUT_DRAW;
                }
                if let Some(n) = out_win {
                    flags[k] |= FLAG_OUT_WIN;
                    tentative.push((index as u32, n));
                }
            }
            Ok((decided, tentative))
        })
        .collect();

    let mut buckets: Vec<Vec<u32>> = Vec::new();
    let mut tent: Vec<Vec<u32>> = Vec::new();
    fn push(b: &mut Vec<Vec<u32>>, level: u16, i: u32) {
        let l = level as usize;
        if b.len() <= l {
            b.resize_with(l + 1, Vec::new);
        }
        b[l].push(i);
    }
    for r in results {
        let (decided, tentative) = r?;
        for (i, l) in decided {
            push(&mut buckets, l, i);
        }
        for (i, l) in tentative {
            push(&mut tent, l, i);
        }
    }

    // 2. Backward pass.
    let mut level: usize = 0;
    while level < buckets.len().max(tent.len()) {
        if level > MAX_DTW as usize {
            return Err(TableError::DtwOverflow {
                material: layout.material.to_string(),
            });
        }
        if level < tent.len() {
            for i in std::mem::take(&mut tent[level]) {
                if val[i as usize] == UNKNOWN {
                    val[i as usize] = encode_value(Value::Win(level as u16), layout)?;
                    push(&mut buckets, level as u16, i);
                }
            }
        }
        let current = if level < buckets.len() {
            std::mem::take(&mut buckets[level])
        } else {
            Vec::new()
        };
        let next = (level + 1) as u16;
        // Un-moves in parallel (read-only), then the updates in order.
        const LOSS_BIT: u32 = 1 << 31;
        for part in current.chunks(1 << 16) {
            let found: Vec<Vec<u32>> = part
                .par_chunks(1 << 10)
                .map(|cs| {
                    let mut preds: Vec<u32> = Vec::with_capacity(256);
                    let mut found = Vec::with_capacity(cs.len() * 8);
                    for &c in cs {
                        let loss =
                            matches!(Value::from_code(val[c as usize] as u32), Value::Loss(_));
                        let sq = layout.squares(c as u64);
                        predecessors(layout, &pieces, &sq, &mut preds);
                        for &p in &preds {
                            if val[p as usize] == UNKNOWN {
                                found.push(if loss { p | LOSS_BIT } else { p });
                            }
                        }
                    }
                    found
                })
                .collect();
            for &f in found.iter().flatten() {
                let p = (f & !LOSS_BIT) as usize;
                if val[p] != UNKNOWN {
                    continue;
                }
                if f & LOSS_BIT != 0 {
                    val[p] = encode_value(Value::Win(next), layout)?;
                    push(&mut buckets, next, p as u32);
                } else {
                    cnt[p] -= 1;
                    if cnt[p] == 0 && flags[p] == 0 {
                        let l = next.max(out_loss[p]);
                        val[p] = encode_value(Value::Loss(l), layout)?;
                        push(&mut buckets, l, p as u32);
                    }
                }
            }
        }
        level += 1;
    }

    // 3. Draws, the bytes and the counts.
    let mut stats = Stats::default();
    let mut data = Vec::with_capacity(size);
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
    Ok(Generated {
        data,
        overflow,
        stats,
    })
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
/// non-promoting move leads to `c` and is legal (the mover had no capture).
fn predecessors(layout: &Layout, pieces: &[Piece], c: &Squares, out: &mut Vec<u32>) {
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
        if pieces[j].color.index() != them {
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
