//! Moves and fixed-capacity move lists.

use super::types::{Role, Square};
use crate::vocab::MoveCode;
use std::fmt;
use std::mem::MaybeUninit;

/// A legal move of some position, packed in 32 bits.
///
/// The low 16 bits are exactly the move code of the Watkins win-tree format:
/// bits 0-5 destination, 6-11 origin, 12-14 promotion (0 none, 2 knight,
/// 3 bishop, 4 rook, 5 queen, 6 king), bit 15 en passant. Above them: bits
/// 16-18 the moving role, bit 19 capture.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Move(u32);

const EP_BIT: u32 = MoveCode::EP_BIT as u32;
const CAPTURE_BIT: u32 = 1 << 19;

impl Move {
    #[inline(always)]
    pub(crate) const fn new(role: Role, from: u32, to: u32, capture: bool) -> Move {
        Move(to | (from << 6) | ((role as u32) << 16) | if capture { CAPTURE_BIT } else { 0 })
    }

    #[inline(always)]
    pub(crate) const fn promotion_to(self, promo: Role) -> Move {
        Move(self.0 | ((promo as u32) << 12))
    }

    #[inline(always)]
    pub(crate) const fn en_passant(from: u32, to: u32) -> Move {
        Move(to | (from << 6) | ((Role::Pawn as u32) << 16) | CAPTURE_BIT | EP_BIT)
    }

    /// Origin square.
    #[inline(always)]
    pub const fn from(self) -> Square {
        Square::from_index_unchecked(self.watkins_code().from() as u32)
    }

    /// Destination square.
    #[inline(always)]
    pub const fn to(self) -> Square {
        Square::from_index_unchecked(self.watkins_code().to() as u32)
    }

    /// The role of the moving piece.
    #[inline(always)]
    pub const fn role(self) -> Role {
        match Role::from_index(((self.0 >> 16) & 7) as usize - 1) {
            Some(r) => r,
            None => Role::Pawn,
        }
    }

    /// The promotion role, if a promotion.
    #[inline(always)]
    pub const fn promotion(self) -> Option<Role> {
        let p = self.watkins_code().promotion();
        if p == 0 {
            None
        } else {
            Role::from_index(p as usize - 1)
        }
    }

    /// Whether the move captures (en passant included).
    #[inline(always)]
    pub const fn is_capture(self) -> bool {
        self.0 & CAPTURE_BIT != 0
    }

    /// Whether the move is an en-passant capture.
    #[inline(always)]
    pub const fn is_en_passant(self) -> bool {
        self.0 & EP_BIT != 0
    }

    /// Whether the move resets the halfmove clock (capture or pawn move): no
    /// earlier position can repeat after it.
    #[inline(always)]
    pub const fn is_irreversible(self) -> bool {
        self.is_capture() || matches!(self.role(), Role::Pawn)
    }

    /// The 16-bit Watkins win-tree move code (en-passant bit included).
    #[inline(always)]
    pub const fn watkins_code(self) -> MoveCode {
        MoveCode::from_raw(self.0 as u16)
    }

    /// The UCI form, for example `e2e4` or `e7e8k`.
    pub fn uci(self) -> UciMove {
        UciMove {
            from: self.from(),
            to: self.to(),
            promotion: self.promotion(),
        }
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.uci())
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.uci())
    }
}

/// A move in UCI notation, not yet checked against a position.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct UciMove {
    /// Origin.
    pub from: Square,
    /// Destination.
    pub to: Square,
    /// Promotion role, if any.
    pub promotion: Option<Role>,
}

impl UciMove {
    /// Parses `e2e4`, `e7e8q`, `e7e8k`. Null moves (`0000`) are not moves here.
    pub fn parse(s: &str) -> Option<UciMove> {
        if !s.is_ascii() || !(s.len() == 4 || s.len() == 5) {
            return None;
        }
        let from = Square::parse(&s[0..2])?;
        let to = Square::parse(&s[2..4])?;
        let promotion = match s.as_bytes().get(4) {
            None => None,
            Some(&c) => match Role::from_char(c as char) {
                Some(Role::Pawn) | None => return None,
                Some(r) if (c as char).is_ascii_lowercase() => Some(r),
                Some(_) => return None,
            },
        };
        Some(UciMove {
            from,
            to,
            promotion,
        })
    }

    /// Decodes a Watkins move code (the en-passant bit is ignored). `None` for
    /// a null move, a promotion code of 1 or 7, or a move that stays put.
    pub fn from_watkins(code: MoveCode) -> Option<UciMove> {
        let to = Square::new(code.to() as u32)?;
        let from = Square::new(code.from() as u32)?;
        let promotion = match code.promotion() {
            0 => None,
            p @ 2..=6 => Role::from_index(p as usize - 1),
            _ => return None,
        };
        if from == to {
            return None;
        }
        Some(UciMove {
            from,
            to,
            promotion,
        })
    }
}

impl fmt::Display for UciMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.from, self.to)?;
        if let Some(p) = self.promotion {
            write!(f, "{}", p.char())?;
        }
        Ok(())
    }
}

/// Capacity of a [`MoveList`]. A side has at most 16 pieces (positions with
/// more are rejected when read), and no piece has more than 27 moves (a
/// promoting pawn has at most 3 destinations x 5 roles = 15), so 432 moves is
/// a bound.
pub const MAX_MOVES: usize = 512;

/// A fixed-capacity list of moves: no heap allocation in move generation,
/// and no initialisation of the unused slots.
#[derive(Clone)]
pub struct MoveList {
    len: usize,
    moves: [MaybeUninit<Move>; MAX_MOVES],
}

impl Default for MoveList {
    fn default() -> Self {
        MoveList::new()
    }
}

impl MoveList {
    /// An empty list.
    #[inline(always)]
    pub fn new() -> MoveList {
        MoveList {
            len: 0,
            moves: [const { MaybeUninit::uninit() }; MAX_MOVES],
        }
    }

    #[inline(always)]
    pub(crate) fn push(&mut self, m: Move) {
        // The capacity argument is in the doc of MAX_MOVES; a bad bound
        // panics here rather than writing out of bounds.
        self.moves[self.len].write(m);
        self.len += 1;
    }

    /// Number of moves.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The moves as a slice.
    #[inline(always)]
    pub fn as_slice(&self) -> &[Move] {
        // Safety: the first `len` slots were written by `push` (the only way
        // `len` grows), and `MaybeUninit<Move>` has the layout of `Move`.
        unsafe { std::slice::from_raw_parts(self.moves.as_ptr().cast::<Move>(), self.len) }
    }

    /// Mutable slice, for sorting.
    pub fn as_mut_slice(&mut self) -> &mut [Move] {
        // Safety: as in `as_slice`.
        unsafe { std::slice::from_raw_parts_mut(self.moves.as_mut_ptr().cast::<Move>(), self.len) }
    }

    /// Removes all moves.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Keeps the moves for which `f` holds.
    pub fn retain(&mut self, mut f: impl FnMut(&Move) -> bool) {
        let mut j = 0;
        for i in 0..self.len {
            let m = self.as_slice()[i];
            if f(&m) {
                self.moves[j].write(m);
                j += 1;
            }
        }
        self.len = j;
    }
}

impl std::ops::Deref for MoveList {
    type Target = [Move];
    fn deref(&self) -> &[Move] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl fmt::Debug for MoveList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uci_parse() {
        let m = UciMove::parse("e7e8k").unwrap();
        assert_eq!(m.promotion, Some(Role::King));
        assert_eq!(m.to_string(), "e7e8k");
        assert!(UciMove::parse("e7e8p").is_none());
        assert!(UciMove::parse("e7e8Q").is_none());
        assert!(UciMove::parse("e7e9").is_none());
        assert!(UciMove::parse("0000").is_none());
        assert!(UciMove::parse("é7e8").is_none());
    }

    #[test]
    fn watkins_code_round_trip() {
        let m = Move::new(Role::Pawn, 52, 60, false).promotion_to(Role::King);
        assert_eq!(m.promotion(), Some(Role::King));
        assert_eq!(m.role(), Role::Pawn);
        let u = UciMove::from_watkins(m.watkins_code()).unwrap();
        assert_eq!(u.to_string(), "e7e8k");
        assert_eq!(m.watkins_code().promotion(), 6);
        assert!(UciMove::from_watkins(MoveCode::NULL).is_none());
    }
}
