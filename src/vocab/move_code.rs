//! The 16-bit Watkins move code.

use std::fmt;

/// A 16-bit move code of the Watkins win-tree format, also the winning
/// move of a store record.
///
/// ```text
/// bits 0-5    destination square (a1 = 0, b1 = 1, .., h8 = 63)
/// bits 6-11   origin square, same numbering
/// bits 12-14  promotion: 0 none, 2 knight, 3 bishop, 4 rook, 5 queen, 6 king
/// bit 15      set on an en-passant capture
/// ```
///
/// Moves are compared without bit 15 ([`MoveCode::same_move`]). `0xfedc`
/// and `0x0edc` are null moves; in partial proofs an unsolved move is
/// XOR-ed with `0xf000` ([`MoveCode::as_unsolved`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct MoveCode(u16);

/// Bit 15: en passant.
const EP_BIT: u16 = 0x8000;
/// What an unsolved marker XORs a move with.
const UNSOLVED_XOR: u16 = 0xf000;

impl MoveCode {
    /// The null move as usually written.
    pub const NULL: MoveCode = MoveCode(0xfedc);
    /// The other spelling of the null move.
    pub const NULL_ALT: MoveCode = MoveCode(0x0edc);
    /// The zero code: no move (a1a1), as a loss record holds.
    pub const NONE: MoveCode = MoveCode(0);
    /// A code that names no move and matches none, even with bit 15
    /// ignored (h8h8 with promotion code 7).
    pub const INVALID: MoveCode = MoveCode(!EP_BIT);
    /// Bit 15 of a code, the en-passant flag, as a mask (for code that
    /// packs more around a move code, such as `rules::Move`).
    pub const EP_BIT: u16 = EP_BIT;

    /// Builds a code from squares (0..64) and a promotion role code
    /// (0 none, 2..=6 knight..king).
    pub const fn new(from: u8, to: u8, promotion: u8, en_passant: bool) -> MoveCode {
        let mut c = (to as u16 & 63) | ((from as u16 & 63) << 6) | ((promotion as u16 & 7) << 12);
        if en_passant {
            c |= EP_BIT;
        }
        MoveCode(c)
    }

    /// The code of raw bits (as stored).
    pub const fn from_raw(raw: u16) -> MoveCode {
        MoveCode(raw)
    }

    /// The raw bits (as stored).
    pub const fn raw(self) -> u16 {
        self.0
    }

    /// Whether this is a null move (`0xfedc` or `0x0edc`).
    pub const fn is_null(self) -> bool {
        self.0 == Self::NULL.0 || self.0 == Self::NULL_ALT.0
    }

    /// The top nibble: promotion code and en-passant bit.
    const fn top(self) -> u16 {
        self.0 >> 12
    }

    /// Whether this is an unsolved marker of a partial proof (top nibble 7 or
    /// above 8, and not a null move).
    pub const fn is_unsolved(self) -> bool {
        let top = self.top();
        !self.is_null() && (top == 7 || top > 8)
    }

    /// Whether this is a plain move code: not null, not unsolved, top nibble
    /// 0, 2..=6 (promotions) or 8 (en passant), origin and destination
    /// different. (Whether it is legal is for the rules to say.)
    pub const fn is_move(self) -> bool {
        !self.is_null() && matches!(self.top(), 0 | 2..=6 | 8) && self.from() != self.to()
    }

    /// The move an unsolved marker stands for (the code XOR `0xf000`).
    pub const fn unsolved_move(self) -> MoveCode {
        MoveCode(self.0 ^ UNSOLVED_XOR)
    }

    /// The unsolved marker of this move (the code XOR `0xf000`), as partial
    /// proofs write it.
    pub const fn as_unsolved(self) -> MoveCode {
        MoveCode(self.0 ^ UNSOLVED_XOR)
    }

    /// Destination square, a1 = 0 .. h8 = 63.
    pub const fn to(self) -> u8 {
        (self.0 & 63) as u8
    }

    /// Origin square, a1 = 0 .. h8 = 63.
    pub const fn from(self) -> u8 {
        ((self.0 >> 6) & 63) as u8
    }

    /// Promotion role code: 0 none, 2 knight, 3 bishop, 4 rook, 5 queen,
    /// 6 king (1 and 7 are invalid).
    pub const fn promotion(self) -> u8 {
        (self.top() & 7) as u8
    }

    /// Whether the en-passant bit is set.
    pub const fn is_en_passant(self) -> bool {
        self.0 & EP_BIT != 0
    }

    /// The code with bit 15 cleared: the form moves are compared in.
    pub const fn cleared(self) -> MoveCode {
        MoveCode(self.0 & !EP_BIT)
    }

    /// Whether two codes name the same move (bit 15 ignored).
    pub const fn same_move(self, other: MoveCode) -> bool {
        self.cleared().0 == other.cleared().0
    }

    /// Parses a UCI move (`e2e3`, `e7e8k`; promotion letters n b r q k).
    /// The en-passant bit is not set (it is ignored in comparisons).
    pub fn from_uci(s: &str) -> Option<MoveCode> {
        let b = s.as_bytes();
        if b.len() != 4 && b.len() != 5 {
            return None;
        }
        let sq = |f: u8, r: u8| -> Option<u8> {
            if (b'a'..=b'h').contains(&f) && (b'1'..=b'8').contains(&r) {
                Some((r - b'1') * 8 + (f - b'a'))
            } else {
                None
            }
        };
        let from = sq(b[0], b[1])?;
        let to = sq(b[2], b[3])?;
        let promo = match b.get(4).map(|c| c.to_ascii_lowercase()) {
            None => 0,
            Some(b'n') => 2,
            Some(b'b') => 3,
            Some(b'r') => 4,
            Some(b'q') => 5,
            Some(b'k') => 6,
            Some(_) => return None,
        };
        Some(MoveCode::new(from, to, promo, false))
    }

    /// The move in UCI notation (`e2e3`, `e7e8k`); `0000` for a null move.
    /// An unsolved marker prints as the move it stands for.
    pub fn uci(self) -> String {
        if self.is_null() {
            return "0000".to_string();
        }
        let m = if self.is_unsolved() {
            self.unsolved_move()
        } else {
            self
        };
        let name = |s: u8| [(b'a' + s % 8) as char, (b'1' + s / 8) as char];
        let mut out = String::with_capacity(5);
        out.extend(name(m.from()));
        out.extend(name(m.to()));
        match m.promotion() {
            2 => out.push('n'),
            3 => out.push('b'),
            4 => out.push('r'),
            5 => out.push('q'),
            6 => out.push('k'),
            _ => {}
        }
        out
    }
}

/// UCI (see [`MoveCode::uci`]), with ` (unsolved)` after an unsolved marker.
impl fmt::Display for MoveCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_unsolved() {
            write!(f, "{} (unsolved)", self.uci())
        } else {
            f.write_str(&self.uci())
        }
    }
}

/// The raw bits in hex (`{:#06x}`).
impl fmt::LowerHex for MoveCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::LowerHex::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_comparison() {
        let m = MoveCode::from_uci("e7e8k").unwrap();
        assert_eq!((m.from(), m.to(), m.promotion()), (52, 60, 6));
        assert_eq!(m.raw(), 60 | (52 << 6) | (6 << 12));
        assert_eq!(m.to_string(), "e7e8k");
        let ep = MoveCode::new(36, 43, 0, true);
        assert!(ep.is_en_passant() && ep.is_move());
        assert_eq!(ep.raw(), 0x8000 | 43 | (36 << 6));
        assert!(ep.same_move(MoveCode::from_uci("e5d6").unwrap()));
        assert_ne!(ep, MoveCode::from_uci("e5d6").unwrap());
        assert_eq!(ep.cleared(), MoveCode::from_uci("e5d6").unwrap());
        assert!(MoveCode::NULL.is_null() && MoveCode::NULL_ALT.is_null());
        assert_eq!(MoveCode::NULL.uci(), "0000");
        let u = MoveCode::from_uci("e2e3").unwrap().as_unsolved();
        assert!(u.is_unsolved() && !u.is_move());
        assert_eq!(u.unsolved_move().uci(), "e2e3");
        assert_eq!(u.to_string(), "e2e3 (unsolved)");
        assert!(!MoveCode::INVALID.is_move());
        assert!(!MoveCode::NONE.is_move());
        assert_eq!(format!("{:#06x}", MoveCode::NULL), "0xfedc");
        assert_eq!(MoveCode::from_raw(0x1234).raw(), 0x1234);
    }
}
