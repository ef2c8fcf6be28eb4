//! The position: bitboards, side to move, en-passant square, clocks.

use super::attacks;
use super::bitboard::{self, Bitboard, squares};
use super::moves::Move;
use super::types::{Color, Piece, Role, Square};
use super::zobrist;
use crate::vocab::MoveCode;
use std::hash::{Hash, Hasher};

/// An antichess position.
///
/// Identity (`==`, `Hash`, [`Position::zobrist`], the packed encoding) is the
/// placement, the side to move and the en-passant square; the halfmove clock
/// and move number are carried but not part of it. The en-passant square is
/// kept only when an en-passant capture is actually legal, so equal positions
/// compare equal.
#[derive(Clone, Copy, Debug)]
pub struct Position {
    pub(crate) by_color: [u64; 2],
    pub(crate) by_role: [u64; 6],
    pub(crate) turn: Color,
    pub(crate) ep: Option<Square>,
    pub(crate) halfmoves: u32,
    pub(crate) fullmoves: u32,
    pub(crate) hash: u64,
}

impl PartialEq for Position {
    fn eq(&self, other: &Position) -> bool {
        self.by_color == other.by_color
            && self.by_role == other.by_role
            && self.turn == other.turn
            && self.ep == other.ep
    }
}

impl Eq for Position {}

impl Hash for Position {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

impl Default for Position {
    fn default() -> Self {
        Position::startpos()
    }
}

impl Position {
    /// The standard start position.
    pub fn startpos() -> Position {
        Position::from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1")
            .expect("start position FEN is valid")
    }

    /// An empty board with White to move (for building positions square by
    /// square; see [`Position::from_parts`]).
    pub(crate) fn empty(turn: Color) -> Position {
        Position {
            by_color: [0; 2],
            by_role: [0; 6],
            turn,
            ep: None,
            halfmoves: 0,
            fullmoves: 1,
            hash: 0,
        }
    }

    /// Side to move.
    #[inline(always)]
    pub fn turn(&self) -> Color {
        self.turn
    }

    /// The en-passant target square, present only when an en-passant capture
    /// is legal.
    #[inline(always)]
    pub fn ep_square(&self) -> Option<Square> {
        self.ep
    }

    /// Halfmove clock (plies since the last capture or pawn move).
    pub fn halfmoves(&self) -> u32 {
        self.halfmoves
    }

    /// Move number, starting at 1.
    pub fn fullmoves(&self) -> u32 {
        self.fullmoves
    }

    /// Zobrist hash of the identity, kept incrementally.
    #[inline(always)]
    pub fn zobrist(&self) -> u64 {
        self.hash
    }

    /// All occupied squares.
    #[inline(always)]
    pub fn occupied(&self) -> Bitboard {
        Bitboard(self.by_color[0] | self.by_color[1])
    }

    /// The pieces of one side.
    #[inline(always)]
    pub fn by_color(&self, c: Color) -> Bitboard {
        Bitboard(self.by_color[c.index()])
    }

    /// The pieces of one role, both sides.
    #[inline(always)]
    pub fn by_role(&self, r: Role) -> Bitboard {
        Bitboard(self.by_role[r.index()])
    }

    /// The pieces of one colour and role.
    #[inline(always)]
    pub fn pieces(&self, c: Color, r: Role) -> Bitboard {
        Bitboard(self.by_color[c.index()] & self.by_role[r.index()])
    }

    /// The number of pieces of side `c`.
    #[inline(always)]
    pub fn count(&self, c: Color) -> u32 {
        self.by_color[c.index()].count_ones()
    }

    /// The number of men on the board.
    #[inline(always)]
    pub fn men(&self) -> u32 {
        (self.by_color[0] | self.by_color[1]).count_ones()
    }

    /// The role on a square, if any.
    #[inline(always)]
    pub fn role_at(&self, sq: Square) -> Option<Role> {
        let b = sq.bit();
        if (self.by_color[0] | self.by_color[1]) & b == 0 {
            return None;
        }
        for (i, bb) in self.by_role.iter().enumerate() {
            if bb & b != 0 {
                return Role::from_index(i);
            }
        }
        None
    }

    /// The piece on a square, if any.
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        let role = self.role_at(sq)?;
        let color = if self.by_color[0] & sq.bit() != 0 {
            Color::White
        } else {
            Color::Black
        };
        Some(Piece { color, role })
    }

    /// Puts a piece on an empty square (hash kept up to date).
    pub(crate) fn put(&mut self, sq: Square, p: Piece) {
        debug_assert!(self.role_at(sq).is_none());
        self.by_color[p.color.index()] |= sq.bit();
        self.by_role[p.role.index()] |= sq.bit();
        self.hash ^= zobrist::piece(p.color.index(), p.role.index(), sq.index());
    }

    /// Recomputes the Zobrist hash from scratch.
    pub fn zobrist_from_scratch(&self) -> u64 {
        let mut h = 0;
        for c in 0..2 {
            for r in 0..6 {
                for sq in squares(self.by_color[c] & self.by_role[r]) {
                    h ^= zobrist::piece(c, r, sq.index());
                }
            }
        }
        if self.turn == Color::Black {
            h ^= zobrist::BLACK_TO_MOVE;
        }
        if let Some(ep) = self.ep {
            h ^= zobrist::ep_file(ep.file());
        }
        h
    }

    /// Sets the side to move and the en-passant square (if a capture on it
    /// is legal), then the hash from scratch. Used after building a board.
    pub(crate) fn finish_setup(&mut self, turn: Color, ep: Option<Square>) {
        self.turn = turn;
        self.ep = None;
        if let Some(ep) = ep
            && self.ep_capturers(ep) != 0
        {
            self.ep = Some(ep);
        }
        self.hash = self.zobrist_from_scratch();
    }

    /// Whether `sq` can be the en-passant square of this position: on the
    /// right rank for the side to move, an enemy pawn just past it, and it
    /// and the square the pawn came from empty.
    pub(crate) fn ep_square_plausible(&self, sq: Square) -> bool {
        let (rank, pushed, origin) = match self.turn {
            Color::White => (5, sq.index().wrapping_sub(8), sq.index() + 8),
            Color::Black => (2, sq.index() + 8, sq.index().wrapping_sub(8)),
        };
        if sq.rank() != rank {
            return false;
        }
        let their_pawns = self.by_color[1 - self.turn.index()] & self.by_role[0];
        let occ = self.by_color[0] | self.by_color[1];
        their_pawns & (1u64 << pushed) != 0 && occ & (sq.bit() | (1u64 << origin)) == 0
    }

    /// Pawns of the side to move that could capture en passant on `ep`,
    /// assuming an enemy pawn just double-pushed past it.
    #[inline(always)]
    fn ep_capturers(&self, ep: Square) -> u64 {
        let us = self.turn;
        attacks::pawn(!us, ep.index()) & self.by_color[us.index()] & self.by_role[0]
    }

    /// Plays a legal move of this position in place.
    ///
    /// The move must come from this position's move generator (or be
    /// matched against it, as the notation parsers do); anything else leaves
    /// the position in an unspecified but memory-safe state.
    #[inline]
    pub fn play_unchecked(&mut self, m: Move) {
        self.apply::<true>(m);
    }

    /// Plays a move without updating the Zobrist hash, for counting
    /// (perft's last ply) where the child's identity is never asked for.
    /// The hash of the result is stale.
    #[inline(always)]
    pub(crate) fn play_unhashed(&self, m: Move) -> Position {
        let mut p = *self;
        p.apply::<false>(m);
        p
    }

    #[inline(always)]
    fn apply<const HASH: bool>(&mut self, m: Move) {
        let us = self.turn.index();
        let them = 1 - us;
        let from = m.from().index();
        let to = m.to().index();
        let role = m.role().index();
        let from_bit = 1u64 << from;
        let to_bit = 1u64 << to;
        let mut h = self.hash;
        if let Some(ep) = self.ep.take()
            && HASH
        {
            h ^= zobrist::ep_file(ep.file());
        }
        self.halfmoves += 1;
        if m.is_capture() {
            self.halfmoves = 0;
            if m.is_en_passant() {
                let cap = if us == 0 { to - 8 } else { to + 8 };
                let cap_bit = 1u64 << cap;
                self.by_color[them] ^= cap_bit;
                self.by_role[0] ^= cap_bit;
                if HASH {
                    h ^= zobrist::piece(them, 0, cap);
                }
            } else {
                // Find the captured role.
                let mut r = 0;
                while self.by_role[r] & to_bit == 0 {
                    r += 1;
                }
                self.by_color[them] ^= to_bit;
                self.by_role[r] ^= to_bit;
                if HASH {
                    h ^= zobrist::piece(them, r, to);
                }
            }
        }
        self.by_color[us] ^= from_bit | to_bit;
        self.by_role[role] ^= from_bit;
        if HASH {
            h ^= zobrist::piece(us, role, from);
        }
        let new_role = match m.promotion() {
            Some(p) => p.index(),
            None => role,
        };
        self.by_role[new_role] ^= to_bit;
        if HASH {
            h ^= zobrist::piece(us, new_role, to);
        }
        if role == 0 {
            self.halfmoves = 0;
            if to ^ from == 16 {
                // Double push: keep the en-passant square only if an enemy
                // pawn can take.
                let ep = (to + from) / 2;
                let their_pawns = self.by_color[them] & self.by_role[0];
                if attacks::PAWN[us][ep] & their_pawns != 0 {
                    self.ep = Some(Square::from_index_unchecked(ep as u32));
                    if HASH {
                        h ^= zobrist::ep_file((ep & 7) as u32);
                    }
                }
            }
        }
        if us == 1 {
            self.fullmoves += 1;
        }
        self.turn = !self.turn;
        if HASH {
            h ^= zobrist::BLACK_TO_MOVE;
        }
        if HASH {
            self.hash = h;
        }
    }

    /// The position after a legal move.
    #[inline]
    pub fn play(&self, m: Move) -> Position {
        let mut p = *self;
        p.play_unchecked(m);
        p
    }

    /// The colour-flipped mirror: ranks reversed, colours swapped, the other
    /// side to move. Antichess is symmetric under it.
    pub fn flip_colors(&self) -> Position {
        let mut p = Position::empty(!self.turn);
        p.by_color = [self.by_color[1].swap_bytes(), self.by_color[0].swap_bytes()];
        for r in 0..6 {
            p.by_role[r] = self.by_role[r].swap_bytes();
        }
        p.halfmoves = self.halfmoves;
        p.fullmoves = self.fullmoves;
        let ep = self
            .ep
            .map(|s| Square::from_index_unchecked(s.index() as u32 ^ 56));
        p.finish_setup(!self.turn, ep);
        p
    }

    /// Whether the light/dark colouring of `bitboard` squares: internal helper
    /// for the dead-position rule.
    pub(crate) fn only_bishops_opposite_colours(&self) -> bool {
        let occ = self.by_color[0] | self.by_color[1];
        if occ != self.by_role[Role::Bishop.index()] {
            return false;
        }
        let cannot_win = |c: usize| {
            // Mirrors shakmaty's has_insufficient_material for bishops only:
            // side c cannot win when none of its bishops can ever be taken.
            let ours = self.by_color[c];
            let theirs = self.by_color[1 - c];
            if ours == 0 {
                return false;
            }
            if theirs == 0 {
                return true;
            }
            let we_light = ours & bitboard::LIGHT_SQUARES != 0;
            let we_dark = ours & bitboard::DARK_SQUARES != 0;
            let they_all_dark = theirs & bitboard::LIGHT_SQUARES == 0;
            let they_all_light = theirs & bitboard::DARK_SQUARES == 0;
            (we_light && they_all_dark) || (we_dark && they_all_light)
        };
        cannot_win(0) && cannot_win(1)
    }
}

/// The legal move of `pos` that a win-tree or store move code stands for
/// (compared without the en-passant bit).
pub fn move_of_code(pos: &Position, code: MoveCode) -> Option<Move> {
    pos.legal_moves()
        .iter()
        .copied()
        .find(|m| m.watkins_code().same_move(code))
}
