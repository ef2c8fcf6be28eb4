//! Bitboards: a set of squares in a `u64`, bit `i` for square `i`.

use super::types::Square;

/// A set of squares.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub struct Bitboard(pub u64);

/// The a-file.
pub const FILE_A: u64 = 0x0101_0101_0101_0101;
/// The h-file.
pub const FILE_H: u64 = FILE_A << 7;
/// The first rank.
pub const RANK_1: u64 = 0xff;
/// The second rank.
pub const RANK_2: u64 = RANK_1 << 8;
/// The third rank.
pub const RANK_3: u64 = RANK_1 << 16;
/// The fourth rank.
pub const RANK_4: u64 = RANK_1 << 24;
/// The fifth rank.
pub const RANK_5: u64 = RANK_1 << 32;
/// The sixth rank.
pub const RANK_6: u64 = RANK_1 << 40;
/// The seventh rank.
pub const RANK_7: u64 = RANK_1 << 48;
/// The eighth rank.
pub const RANK_8: u64 = RANK_1 << 56;
/// The light squares (h1 is light).
pub const LIGHT_SQUARES: u64 = 0x55aa_55aa_55aa_55aa;
/// The dark squares (a1 is dark).
pub const DARK_SQUARES: u64 = !LIGHT_SQUARES;

impl Bitboard {
    /// No squares.
    pub const EMPTY: Bitboard = Bitboard(0);

    /// Number of squares in the set.
    #[inline(always)]
    pub const fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether the set is empty.
    #[inline(always)]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether `sq` is in the set.
    #[inline(always)]
    pub const fn contains(self, sq: Square) -> bool {
        self.0 & sq.bit() != 0
    }

    /// The lowest square, if any.
    #[inline(always)]
    pub const fn first(self) -> Option<Square> {
        if self.0 == 0 {
            None
        } else {
            Some(Square::from_index_unchecked(self.0.trailing_zeros()))
        }
    }
}

impl Iterator for Bitboard {
    type Item = Square;

    #[inline(always)]
    fn next(&mut self) -> Option<Square> {
        let sq = self.first()?;
        self.0 &= self.0 - 1;
        Some(sq)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.count() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Bitboard {}

/// Iterates the squares of a raw `u64` set, lowest first.
#[inline(always)]
pub(crate) fn squares(bb: u64) -> Bitboard {
    Bitboard(bb)
}
