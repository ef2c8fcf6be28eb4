//! Small typed values: colours, roles, pieces and squares.

use std::fmt;
use std::str::FromStr;

/// A side.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
#[repr(u8)]
pub enum Color {
    /// White, who moves first.
    White = 0,
    /// Black.
    Black = 1,
}

impl Color {
    /// Both colours, White first.
    pub const ALL: [Color; 2] = [Color::White, Color::Black];

    /// 0 for White, 1 for Black.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The other side.
    #[inline(always)]
    pub const fn other(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }

    /// `"white"` or `"black"`.
    pub const fn name(self) -> &'static str {
        match self {
            Color::White => "white",
            Color::Black => "black",
        }
    }

    /// `'w'` or `'b'`, as in FEN.
    pub const fn fen_char(self) -> char {
        match self {
            Color::White => 'w',
            Color::Black => 'b',
        }
    }
}

impl std::ops::Not for Color {
    type Output = Color;
    #[inline(always)]
    fn not(self) -> Color {
        self.other()
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Color {
    type Err = String;
    fn from_str(s: &str) -> Result<Color, String> {
        match s.to_ascii_lowercase().as_str() {
            "white" | "w" => Ok(Color::White),
            "black" | "b" => Ok(Color::Black),
            _ => Err(format!("unknown side {s:?}: expected white or black")),
        }
    }
}

/// A kind of piece. The numbering (pawn 1 .. king 6) is the promotion code of
/// the Watkins move format.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
#[repr(u8)]
pub enum Role {
    /// Pawn.
    Pawn = 1,
    /// Knight.
    Knight = 2,
    /// Bishop.
    Bishop = 3,
    /// Rook.
    Rook = 4,
    /// Queen.
    Queen = 5,
    /// King: in antichess an ordinary piece.
    King = 6,
}

impl Role {
    /// All roles, pawn first.
    pub const ALL: [Role; 6] = [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
        Role::King,
    ];

    /// The roles a pawn may promote to, in generation order. Antichess allows
    /// the king.
    pub const PROMOTIONS: [Role; 5] = [
        Role::Queen,
        Role::Rook,
        Role::Bishop,
        Role::Knight,
        Role::King,
    ];

    /// 0 for pawn .. 5 for king.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize - 1
    }

    /// The role with index 0..5; `None` outside.
    #[inline(always)]
    pub const fn from_index(i: usize) -> Option<Role> {
        match i {
            0 => Some(Role::Pawn),
            1 => Some(Role::Knight),
            2 => Some(Role::Bishop),
            3 => Some(Role::Rook),
            4 => Some(Role::Queen),
            5 => Some(Role::King),
            _ => None,
        }
    }

    /// Lower-case letter: `p n b r q k`.
    pub const fn char(self) -> char {
        match self {
            Role::Pawn => 'p',
            Role::Knight => 'n',
            Role::Bishop => 'b',
            Role::Rook => 'r',
            Role::Queen => 'q',
            Role::King => 'k',
        }
    }

    /// Upper-case letter, as in SAN.
    pub const fn upper_char(self) -> char {
        self.char().to_ascii_uppercase()
    }

    /// The role of a letter, either case.
    pub const fn from_char(c: char) -> Option<Role> {
        match c.to_ascii_lowercase() {
            'p' => Some(Role::Pawn),
            'n' => Some(Role::Knight),
            'b' => Some(Role::Bishop),
            'r' => Some(Role::Rook),
            'q' => Some(Role::Queen),
            'k' => Some(Role::King),
            _ => None,
        }
    }
}

/// A coloured piece.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Piece {
    /// Its side.
    pub color: Color,
    /// Its kind.
    pub role: Role,
}

impl Piece {
    /// FEN letter: upper case for White.
    pub const fn char(self) -> char {
        match self.color {
            Color::White => self.role.upper_char(),
            Color::Black => self.role.char(),
        }
    }

    /// The piece of a FEN letter.
    pub const fn from_char(c: char) -> Option<Piece> {
        match Role::from_char(c) {
            Some(role) => Some(Piece {
                color: if c.is_ascii_uppercase() {
                    Color::White
                } else {
                    Color::Black
                },
                role,
            }),
            None => None,
        }
    }
}

/// A square, a1 = 0, b1 = 1, ..., h8 = 63.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

impl Square {
    /// The square with this index; `None` unless `index < 64`.
    #[inline(always)]
    pub const fn new(index: u32) -> Option<Square> {
        if index < 64 {
            Some(Square(index as u8))
        } else {
            None
        }
    }

    /// The square with this index, which the caller knows is below 64.
    #[inline(always)]
    pub(crate) const fn from_index_unchecked(index: u32) -> Square {
        debug_assert!(index < 64);
        Square((index & 63) as u8)
    }

    /// The square on `file` (0 = a) and `rank` (0 = 1st), both below 8.
    #[inline(always)]
    pub const fn from_coords(file: u32, rank: u32) -> Option<Square> {
        if file < 8 && rank < 8 {
            Some(Square((rank * 8 + file) as u8))
        } else {
            None
        }
    }

    /// 0..63.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// 0 (a) to 7 (h).
    #[inline(always)]
    pub const fn file(self) -> u32 {
        (self.0 & 7) as u32
    }

    /// 0 (1st rank) to 7 (8th rank).
    #[inline(always)]
    pub const fn rank(self) -> u32 {
        (self.0 >> 3) as u32
    }

    /// The one-square bitboard.
    #[inline(always)]
    pub const fn bit(self) -> u64 {
        1u64 << self.0
    }

    /// Whether a1-h8 colouring makes this a light square.
    pub const fn is_light(self) -> bool {
        (self.file() + self.rank()) % 2 == 1
    }

    /// The file letter, `'a'..='h'`.
    pub const fn file_char(self) -> char {
        (b'a' + self.file() as u8) as char
    }

    /// The rank digit, `'1'..='8'`.
    pub const fn rank_char(self) -> char {
        (b'1' + self.rank() as u8) as char
    }

    /// Parses `"e4"`.
    pub fn parse(s: &str) -> Option<Square> {
        let b = s.as_bytes();
        if b.len() != 2 {
            return None;
        }
        let file = b[0].wrapping_sub(b'a') as u32;
        let rank = b[1].wrapping_sub(b'1') as u32;
        Square::from_coords(file, rank)
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.file_char(), self.rank_char())
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_names_round_trip() {
        for i in 0..64 {
            let sq = Square::new(i).unwrap();
            assert_eq!(Square::parse(&sq.to_string()), Some(sq));
        }
        assert_eq!(Square::parse("a1").unwrap().index(), 0);
        assert_eq!(Square::parse("h8").unwrap().index(), 63);
        assert_eq!(Square::parse("i1"), None);
        assert_eq!(Square::parse("a9"), None);
        assert_eq!(Square::parse("a"), None);
    }

    #[test]
    fn piece_letters() {
        for c in "PNBRQKpnbrqk".chars() {
            assert_eq!(Piece::from_char(c).unwrap().char(), c);
        }
        assert!(Piece::from_char('x').is_none());
    }
}
