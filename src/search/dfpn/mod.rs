//! The df-pn search.
//!
//! Depth-first proof-number search (df-pn, Nagai) with the 1+epsilon trick
//! of Pawlewicz and Lew (a child is searched until its proof number, at an
//! OR node, passes `min(threshold, pn2 * (1 + 1/4))`, where `pn2` is the
//! second-best sibling's; dually at AND nodes), over a fixed-size
//! transposition table ([`super::tt`]) of 16-byte entries sized from the
//! memory budget. Proof and disproof numbers are from the prover's side: OR
//! nodes have the prover to move. New nodes get the mobility
//! initialisation: proof 1 and disproof = number of legal moves at OR
//! nodes, the dual at AND nodes. A game-over position is a proof if the
//! prover won it, else a disproof (a draw is a disproof for both sides).
//!
//! # Soundness with transpositions
//!
//! There is no repetition rule, so a repetition just goes on; a cycle is
//! never a win for the prover. The search keeps the positions of the
//! current path since the last irreversible move (capture or pawn move) and
//! treats a child that repeats one of them as disproven, without storing
//! anything for it. Its parent's value then depends on the path, so tt keys
//! carry the path where it matters:
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
//! tt is sound for every path that reaches that key. (This is the rule
//! "merge transpositions only right after an irreversible move or where
//! the side to move must capture" of Watkins' solver.)
//!
//! # The fifty-move rule
//!
//! Under the fifty-move rule ([`crate::vocab::FIFTY_MOVE_PLIES`]) a child
//! that is not a finished game and has a half-move clock of 100 or more is
//! a draw: disproven, like a repetition, without storing anything. The tt
//! stays sound because its keys determine the clock wherever the clock can
//! matter: a non-shareable node's key names the path back to its last
//! shareable ancestor, which is the root (whose clock is fixed for the
//! search, and is in a saved tt's header) or was reached by a capture or
//! pawn move (clock 0) — a must-capture ancestor has only capture
//! children, which are shareable — so its clock is that ancestor's plus
//! the depth; a node reached by a capture or pawn move has clock 0; and a
//! must-capture node's value does not depend on its clock below 100, since
//! every child is reached by a capture. Stored proofs and endgame-table
//! leaves carry their headroom need and are leaves only where the child's
//! clock plus that need is at most 100.
//!
//! The pieces: `search` (the search's state, and the nodes the threads
//! of a run are in), `budget` (limits, progress reports, the threads'
//! pooled counts), `path` (the current path and its repetitions),
//! `keys` (tt keys, shared or naming the path).

mod budget;
mod keys;
mod lockstep;
mod path;
mod search;

pub(super) use budget::{Every, Pool, Saver};
use keys::mix;
pub(super) use keys::{child_key, line_key};
pub use keys::{tt_key_fingerprint, tt_key_of_line};
pub(super) use lockstep::Lockstep;
pub(super) use search::{BUSY_WEIGHT, Busy, Search};

use super::Prover;
use super::tt::{INF, TtValue};
use crate::rules::{Outcome, Position, Role};
use crate::vocab::FIFTY_MOVE_PLIES;

#[derive(Clone, Copy)]
struct Kid {
    pos: Position,
    key: u64,
    irr: bool,
    pn: u32,
    dn: u32,
    size: u32,
}

/// What `--clock-init D` adds to a new position's proof number: its
/// half-move clock divided by `D` (0: off).
#[inline]
fn clock_raise(halfmoves: u32, clock_init: u32) -> u32 {
    halfmoves.checked_div(clock_init).unwrap_or(0)
}

/// A child's key mixed with a seed ([`select`]'s tie-break).
#[inline(always)]
fn salted(key: u64, seed: u64) -> u64 {
    (key ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}
#[inline(always)]
pub(super) fn sat(x: u64) -> u32 {
    if x >= INF as u64 { INF - 1 } else { x as u32 }
}

#[inline(always)]
pub(super) fn eps(v: u32) -> u32 {
    if v >= INF - 1 {
        INF
    } else {
        sat(v as u64 + (v as u64 / 4).max(1))
    }
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

/// The child to search at a node, by proof number at OR nodes and
/// disproof number at AND nodes, and the second-best number; at AND
/// nodes each child's number counts [`BUSY_WEIGHT`] times more for each
/// other thread in it ([`Busy`]). Ties go, at OR nodes, to the larger
/// disproof number; then, with a `seed` other than 0, to the smaller
/// [`salted`] key; else to the first child.
#[inline]
fn select(kids: &[Kid], or: bool, busy: Option<&Busy>, seed: u64) -> (usize, u32) {
    let mut best = 0usize;
    let mut b1 = INF;
    let mut b2 = INF;
    // Ties at OR nodes go to the child with the larger disproof number
    // (measured: smaller proofs on rungs 5, 6 and 9).
    let mut bo = 0;
    for (i, k) in kids.iter().enumerate() {
        let (mut v, o) = if or { (k.pn, k.dn) } else { (k.dn, k.pn) };
        if let Some(b) = busy
            && !or
        {
            let n = b.count(k.key);
            if n > 0 {
                v = sat(v as u64 * (1 + (BUSY_WEIGHT * n) as u64));
            }
        }
        if v < b1 {
            b2 = b1;
            b1 = v;
            best = i;
            bo = o;
        } else if v == b1 && or && o > bo {
            b2 = v;
            best = i;
            bo = o;
        } else if v == b1
            && seed != 0
            && (!or || o == bo)
            && salted(k.key, seed) < salted(kids[best].key, seed)
        {
            b2 = v;
            best = i;
        } else if v < b2 {
            b2 = v;
        }
    }
    (best, b2)
}

impl Prover<'_> {
    fn check_limits(&mut self) {
        let s = &mut self.search;
        if s.budget.check(s.nodes, s.root_pn, s.root_dn, &s.tt) {
            s.stopped = true;
        }
        if let Some(log) = &self.standing_log
            && !self.search.extracting
            && log.when.due(std::time::Instant::now())
        {
            self.log_standing();
        }
    }

    /// Tells the [`Prover::on_standing`] callback where the search stands.
    #[cold]
    fn log_standing(&mut self) {
        let standing = self.standing();
        let s = &self.search;
        let progress = s.budget.progress_of(s.nodes, s.root_pn, s.root_dn, &s.tt);
        if let Some(log) = self.standing_log.as_mut() {
            (log.f)(&progress, &standing);
            log.when.restart();
        }
    }

    /// The initial (pn, dn, size) of a child not searched yet.
    #[inline]
    pub(in crate::search) fn eval_child(
        &mut self,
        child: &Position,
        key: u64,
        irr: bool,
    ) -> (u32, u32, u32) {
        let z = child.zobrist();
        if !irr && self.search.path.repeats(z) {
            return (INF, 0, 0);
        }
        // A draw by the fifty-move rule, unless the game ended on that ply.
        if self.rule_set.fifty_move && child.halfmoves() >= FIFTY_MOVE_PLIES {
            return if child.outcome(self.rule_set.stalemate) == Some(Outcome::Win(self.prover)) {
                (0, INF, 1)
            } else {
                (INF, 0, 0)
            };
        }
        if let Some(v) = self.search.tt.get(key) {
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
            && let Some(t) = terminal(child.outcome(self.rule_set.stalemate))
        {
            return t;
        }
        let n = child.count_legal_moves();
        if (n == 0 || (child.occupied().0 & !child.by_role(Role::Bishop).0) == 0)
            && let Some(t) = terminal(child.outcome(self.rule_set.stalemate))
        {
            return t;
        }
        if let Some(win) = self.endgame_win(child) {
            return if win { (0, INF, 1) } else { (INF, 0, 0) };
        }
        if !self.writer.filter_is_empty() {
            // Confirmed by the store's full key (cached).
            match self.writer.stored_get(child) {
                Ok(Some((v, need))) if !self.rule_set.fifty_move || self.fits(child, need) => {
                    return if (v & 1 == 1) == or {
                        (0, INF, sat(v >> 1).max(1))
                    } else {
                        (INF, 0, 0)
                    };
                }
                Ok(_) => {}
                Err(e) => {
                    // The search stops; the run reports the error.
                    self.writer.error.get_or_insert(e);
                    self.search.stopped = true;
                }
            }
        }
        let (pn, dn) = if or { (1, n.max(1)) } else { (n.max(1), 1) };
        let raise = clock_raise(child.halfmoves(), self.search.clock_init);
        (pn.saturating_add(raise).min(INF - 1), dn, 0)
    }

    /// The df-pn MID procedure. The path's top is `pos`.
    pub(super) fn mid(
        &mut self,
        pos: &Position,
        key: u64,
        thpn: u32,
        thdn: u32,
    ) -> (u32, u32, u32) {
        self.search.nodes += 1;
        if self.search.nodes >= self.search.budget.next_check {
            self.check_limits();
        }
        let work_start = self.search.nodes;
        if let Some(b) = &self.search.busy {
            b.enter(key);
        }
        let or = pos.turn() == self.prover;
        let is_root = self.search.path.len() == self.search.root_len && !self.search.extracting;
        let base = self.search.kids.len();
        // Filled in place: a list returned by value was copied (2 KB,
        // 7 % of the search's time).
        let mut moves = crate::rules::MoveList::new();
        pos.legal_moves_into(&mut moves);
        self.search.generated += moves.len() as u64;
        // First pass: children, keys, and a prefetch of their tt slots
        // (and, with a store, of their stored-position filter offsets).
        let filter = !self.writer.filter_is_empty();
        for &m in moves.iter() {
            let child = pos.play(m);
            let irr = m.is_irreversible();
            let z = child.zobrist();
            let ckey = if irr || child.has_capture() {
                z
            } else {
                mix(key, z)
            };
            self.search.tt.prefetch(ckey);
            if filter {
                self.writer.prefetch_offsets(z);
            }
            self.search.kids.push(Kid {
                pos: child,
                key: ckey,
                irr,
                pn: 1,
                dn: 1,
                size: 0,
            });
        }
        if filter {
            for k in &self.search.kids[base..] {
                self.writer.prefetch_remainders(k.pos.zobrist());
            }
        }
        // Second pass: their values.
        for i in base..self.search.kids.len() {
            let k = self.search.kids[i];
            let (pn, dn, size) = self.eval_child(&k.pos, k.key, k.irr);
            let slot = &mut self.search.kids[i];
            slot.pn = pn;
            slot.dn = dn;
            slot.size = size;
            if (or && pn == 0) || (!or && dn == 0) {
                self.search.kids.truncate(i + 1);
                break;
            }
        }
        let (mut pn, mut dn);
        loop {
            (pn, dn) = summarize(&self.search.kids[base..], or);
            if is_root {
                self.search.root_pn = pn;
                self.search.root_dn = dn;
            }
            if pn >= thpn || dn >= thdn || pn == 0 || dn == 0 || self.search.stopped {
                break;
            }
            // Best child and the second-best value; with other threads,
            // steering away from the children they are in, unless the
            // child that leaves is already over this node's threshold
            // (it would return at once, and this node pick it again).
            let kids = &self.search.kids[base..];
            let (mut best, mut b2) =
                select(kids, or, self.search.busy.as_deref(), self.search.seed);
            if self.search.busy.is_some() {
                let v = if or { kids[best].pn } else { kids[best].dn };
                if v >= if or { thpn } else { thdn } {
                    (best, b2) = select(kids, or, None, self.search.seed);
                }
            }
            let k = self.search.kids[base + best];
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
            self.search.path.push(k.pos.zobrist(), k.irr);
            let (cpn, cdn, csize) = self.mid(&k.pos, k.key, cthpn, cthdn);
            self.search.path.pop();
            let slot = &mut self.search.kids[base + best];
            slot.pn = cpn;
            slot.dn = cdn;
            slot.size = csize;
        }
        let mut size = 0u32;
        if pn == 0 {
            let kids = &self.search.kids[base..];
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
        self.search.kids.truncate(base);
        if let Some(b) = &self.search.busy {
            b.leave(key);
            // Another thread may have solved this node meanwhile: a
            // solved entry is never replaced by an unsolved one.
            if pn != 0
                && dn != 0
                && let Some(v) = self.search.tt.get(key)
            {
                if v.pn == 0 {
                    return (0, INF, v.dn);
                }
                if v.dn == 0 {
                    return (INF, 0, 0);
                }
            }
        }
        let work = sat(self.search.nodes - work_start + 1);
        let v = if pn == 0 {
            TtValue {
                pn: 0,
                dn: size.max(1),
                work,
            }
        } else {
            TtValue { pn, dn, work }
        };
        self.search.tt.put(key, v);
        if pn == 0
            && !self.search.extracting
            && !is_root
            && (size >= self.search.checkpoint_size
                || self.search.path.len()
                    <= self.search.root_len + self.search.checkpoint_plies as usize)
            && self.writer.store.is_some()
        {
            self.checkpoint(pos, key);
        }
        (pn, dn, size)
    }
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

    /// The seed only decides between equal children: seed 0 keeps the
    /// first (at OR nodes the larger disproof number first); another seed
    /// the smaller salted key, never a worse number.
    #[test]
    fn a_seed_breaks_ties_only() {
        let p = Position::startpos();
        let k = |key, pn, dn| Kid {
            pos: p,
            key,
            irr: false,
            pn,
            dn,
            size: 0,
        };
        let ties = [k(11, 1, 5), k(22, 1, 5), k(33, 1, 5), k(44, 1, 5)];
        assert_eq!(select(&ties, true, None, 0), (0, 1));
        assert_eq!(select(&ties, false, None, 0), (0, 5));
        let mut picked = std::collections::HashSet::new();
        for seed in 1..40 {
            let (i, b2) = select(&ties, true, None, seed);
            let want = (0..4).min_by_key(|&j| salted(ties[j].key, seed)).unwrap();
            assert_eq!((i, b2), (want, 1));
            assert_eq!(select(&ties, false, None, seed), (want, 5));
            picked.insert(i);
        }
        assert!(picked.len() > 1, "{picked:?}");
        // A smaller number wins whatever the seed; at OR nodes, so does a
        // larger disproof number between equal proof numbers.
        let kids = [k(1, 2, 5), k(2, 1, 3), k(3, 1, 7), k(4, 3, 1)];
        for seed in 0..40 {
            assert_eq!(select(&kids, true, None, seed), (2, 1));
            assert_eq!(select(&kids, false, None, seed), (3, 3));
        }
    }
}
