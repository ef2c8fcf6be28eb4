//! Legal move generation for antichess.
//!
//! There is no check, so every pseudo-legal move is legal, and captures are
//! compulsory: when any capture exists (en passant included) the legal moves
//! are exactly the captures, otherwise exactly the quiet moves. Generation
//! writes into a fixed-capacity [`MoveList`]; counting and "is there any
//! capture?" use popcounts and early exit, without building moves.

use super::attacks::{self, KING, KNIGHT};
use super::bitboard::{FILE_A, FILE_H, RANK_1, RANK_3, RANK_6, RANK_8, squares};
use super::moves::{Move, MoveList};
use super::position::Position;
use super::types::{Color, Role};

const PROMO_RANKS: u64 = RANK_1 | RANK_8;

impl Position {
    #[inline(always)]
    fn us_them(&self) -> (u64, u64, u64) {
        let us = self.by_color[self.turn.index()];
        let them = self.by_color[1 - self.turn.index()];
        (us, them, us | them)
    }

    /// Pawn capture destinations to the a-side and the h-side, and the
    /// origin offsets (destination minus origin) of each.
    #[inline(always)]
    fn pawn_capture_sets(&self, pawns: u64, them: u64) -> [(u64, i32); 2] {
        match self.turn {
            Color::White => [
                (((pawns & !FILE_A) << 7) & them, 7),
                (((pawns & !FILE_H) << 9) & them, 9),
            ],
            Color::Black => [
                (((pawns & !FILE_A) >> 9) & them, -9),
                (((pawns & !FILE_H) >> 7) & them, -7),
            ],
        }
    }

    /// Pawn single- and double-push destinations.
    #[inline(always)]
    fn pawn_push_sets(&self, pawns: u64, empty: u64) -> (u64, u64, i32) {
        match self.turn {
            Color::White => {
                let single = (pawns << 8) & empty;
                let double = ((single & RANK_3) << 8) & empty;
                (single, double, 8)
            }
            Color::Black => {
                let single = (pawns >> 8) & empty;
                let double = ((single & RANK_6) >> 8) & empty;
                (single, double, -8)
            }
        }
    }

    /// Whether the side to move has any capture, en passant included.
    #[inline]
    pub fn has_capture(&self) -> bool {
        if self.ep.is_some() {
            return true;
        }
        let (us, them, occ) = self.us_them();
        let pawns = us & self.by_role[0];
        let [(a, _), (b, _)] = self.pawn_capture_sets(pawns, them);
        if a | b != 0 {
            return true;
        }
        for sq in squares(us & self.by_role[1]) {
            if KNIGHT[sq.index()] & them != 0 {
                return true;
            }
        }
        for sq in squares(us & self.by_role[5]) {
            if KING[sq.index()] & them != 0 {
                return true;
            }
        }
        let queens = self.by_role[4];
        for sq in squares(us & (self.by_role[2] | queens)) {
            if attacks::bishop(sq.index(), occ) & them != 0 {
                return true;
            }
        }
        for sq in squares(us & (self.by_role[3] | queens)) {
            if attacks::rook(sq.index(), occ) & them != 0 {
                return true;
            }
        }
        false
    }

    /// Number of legal moves, without generating them: one pass over the
    /// pieces counts captures and quiet moves together.
    #[inline]
    pub fn count_legal_moves(&self) -> u32 {
        let (us, them, occ) = self.us_them();
        let empty = !occ;
        let pawns = us & self.by_role[0];
        let promo_count =
            |bb: u64| (bb & !PROMO_RANKS).count_ones() + 5 * (bb & PROMO_RANKS).count_ones();
        let [(a, _), (b, _)] = self.pawn_capture_sets(pawns, them);
        let mut captures = promo_count(a) + promo_count(b);
        if let Some(ep) = self.ep {
            captures += (attacks::pawn(!self.turn, ep.index()) & pawns).count_ones();
        }
        let mut quiets = 0;
        let mut add = |att: u64| {
            captures += (att & them).count_ones();
            quiets += (att & empty).count_ones();
        };
        for sq in squares(us & self.by_role[1]) {
            add(KNIGHT[sq.index()]);
        }
        for sq in squares(us & self.by_role[5]) {
            add(KING[sq.index()]);
        }
        let queens = self.by_role[4];
        for sq in squares(us & (self.by_role[2] | queens)) {
            add(attacks::bishop(sq.index(), occ));
        }
        for sq in squares(us & (self.by_role[3] | queens)) {
            add(attacks::rook(sq.index(), occ));
        }
        if captures > 0 {
            return captures;
        }
        let (single, double, _) = self.pawn_push_sets(pawns, empty);
        quiets + promo_count(single) + double.count_ones()
    }

    #[inline(always)]
    fn push_pawn_moves(list: &mut MoveList, dests: u64, offset: i32, capture: bool) {
        for to in squares(dests & !PROMO_RANKS) {
            let to = to.index() as i32;
            list.push(Move::new(
                Role::Pawn,
                (to - offset) as u32,
                to as u32,
                capture,
            ));
        }
        for to in squares(dests & PROMO_RANKS) {
            let to = to.index() as i32;
            let m = Move::new(Role::Pawn, (to - offset) as u32, to as u32, capture);
            for p in Role::PROMOTIONS {
                list.push(m.promotion_to(p));
            }
        }
    }

    #[inline(always)]
    fn push_piece_moves(
        &self,
        list: &mut MoveList,
        us: u64,
        occ: u64,
        targets: u64,
        capture: bool,
    ) {
        for from in squares(us & self.by_role[1]) {
            for to in squares(KNIGHT[from.index()] & targets) {
                list.push(Move::new(
                    Role::Knight,
                    from.index() as u32,
                    to.index() as u32,
                    capture,
                ));
            }
        }
        for from in squares(us & self.by_role[2]) {
            for to in squares(attacks::bishop(from.index(), occ) & targets) {
                list.push(Move::new(
                    Role::Bishop,
                    from.index() as u32,
                    to.index() as u32,
                    capture,
                ));
            }
        }
        for from in squares(us & self.by_role[3]) {
            for to in squares(attacks::rook(from.index(), occ) & targets) {
                list.push(Move::new(
                    Role::Rook,
                    from.index() as u32,
                    to.index() as u32,
                    capture,
                ));
            }
        }
        for from in squares(us & self.by_role[4]) {
            for to in squares(attacks::queen(from.index(), occ) & targets) {
                list.push(Move::new(
                    Role::Queen,
                    from.index() as u32,
                    to.index() as u32,
                    capture,
                ));
            }
        }
        for from in squares(us & self.by_role[5]) {
            for to in squares(KING[from.index()] & targets) {
                list.push(Move::new(
                    Role::King,
                    from.index() as u32,
                    to.index() as u32,
                    capture,
                ));
            }
        }
    }

    /// Appends the captures of the side to move (en passant included).
    pub fn gen_captures(&self, list: &mut MoveList) {
        let (us, them, occ) = self.us_them();
        let pawns = us & self.by_role[0];
        for (dests, offset) in self.pawn_capture_sets(pawns, them) {
            Self::push_pawn_moves(list, dests, offset, true);
        }
        if let Some(ep) = self.ep {
            for from in squares(attacks::pawn(!self.turn, ep.index()) & pawns) {
                list.push(Move::en_passant(from.index() as u32, ep.index() as u32));
            }
        }
        self.push_piece_moves(list, us, occ, them, true);
    }

    /// Appends the non-captures of the side to move. They are legal only
    /// when there is no capture.
    pub fn gen_quiets(&self, list: &mut MoveList) {
        let (us, _, occ) = self.us_them();
        let pawns = us & self.by_role[0];
        let (single, double, offset) = self.pawn_push_sets(pawns, !occ);
        Self::push_pawn_moves(list, single, offset, false);
        Self::push_pawn_moves(list, double, 2 * offset, false);
        self.push_piece_moves(list, us, occ, !occ, false);
    }

    /// Fills `list` (cleared first) with the legal moves.
    #[inline]
    pub fn legal_moves_into(&self, list: &mut MoveList) {
        list.clear();
        self.gen_captures(list);
        if list.is_empty() {
            self.gen_quiets(list);
        }
    }

    /// The legal moves. Inlined, so the list is built where the caller
    /// keeps it: returned from a call, its 2 KB were copied each time (7 %
    /// of the prover's time).
    #[inline]
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.legal_moves_into(&mut list);
        list
    }

    /// Whether the side to move has no legal move.
    #[inline]
    pub fn is_stalemate(&self) -> bool {
        !self.has_capture() && self.count_legal_moves() == 0
    }
}
