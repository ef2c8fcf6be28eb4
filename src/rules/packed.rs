//! The canonical packed encoding of a position: 25 bytes, fixed width.
//!
//! ```text
//! byte 0       flags: bit 7 set when Black is to move; bits 0-3 the
//!              en-passant file + 1 (0 = none; kept only when a capture
//!              on it is legal)
//! bytes 1..9   occupancy, a u64 big-endian (bit i = square i, a1 = 0)
//! bytes 9..25  one nibble per occupied square, lowest square first, high
//!              nibble first: colour * 6 + role index (white pawn 0 ..
//!              white king 5, black pawn 6 .. black king 11); unused
//!              nibbles are 0
//! ```
//!
//! Equal positions (same placement, side to move and legal en-passant
//! square) have equal encodings and different ones differ, so the bytes
//! serve as a sorted store key. Clocks are not encoded. Decoding checks
//! everything and returns a typed error for bytes no position encodes to.

use super::bitboard::{RANK_1, RANK_8};
use super::position::Position;
use super::types::{Color, Piece, Role, Square};
use std::fmt;

/// Width of the encoding in bytes.
pub const PACKED_LEN: usize = 25;

// The store's key is a packed position.
const _: () = assert!(PACKED_LEN == crate::store::KEY_LEN);

/// A position in its packed form.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PackedPosition(pub [u8; PACKED_LEN]);

impl fmt::Debug for PackedPosition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// Bytes that do not encode a position.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PackedError {
    /// The slice is not [`PACKED_LEN`] bytes long.
    Length(usize),
    /// Reserved flag bits are set, or the en-passant file is over 8.
    Flags,
    /// A nibble holds a code over 11, or a nibble past the last piece is
    /// not 0.
    PieceCode,
    /// More than 32 squares occupied.
    TooManyPieces,
    /// The decoded placement is impossible (pawn on a back rank, a side
    /// with more than 16 pieces).
    Placement,
    /// The en-passant file does not match a legal en-passant capture.
    EnPassant,
}

impl fmt::Display for PackedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PackedError::Length(n) => {
                write!(f, "packed position has {n} bytes, expected {PACKED_LEN}")
            }
            PackedError::Flags => f.write_str("packed position has invalid flag bits"),
            PackedError::PieceCode => f.write_str("packed position has an invalid piece code"),
            PackedError::TooManyPieces => f.write_str("packed position has more than 32 pieces"),
            PackedError::Placement => f.write_str("packed position has an impossible placement"),
            PackedError::EnPassant => {
                f.write_str("packed position has an en-passant file with no legal capture")
            }
        }
    }
}

impl std::error::Error for PackedError {}

impl Position {
    /// The canonical packed encoding.
    pub fn pack(&self) -> PackedPosition {
        let mut out = [0u8; PACKED_LEN];
        let mut flags = 0u8;
        if self.turn == Color::Black {
            flags |= 0x80;
        }
        if let Some(ep) = self.ep {
            flags |= ep.file() as u8 + 1;
        }
        out[0] = flags;
        let occ = self.by_color[0] | self.by_color[1];
        out[1..9].copy_from_slice(&occ.to_be_bytes());
        let mut bb = occ;
        let mut i = 0;
        while bb != 0 {
            let sq = bb.trailing_zeros() as usize;
            bb &= bb - 1;
            let bit = 1u64 << sq;
            let color = if self.by_color[0] & bit != 0 { 0 } else { 1 };
            let mut role = 0;
            while self.by_role[role] & bit == 0 {
                role += 1;
            }
            let code = (color * 6 + role) as u8;
            out[9 + i / 2] |= if i % 2 == 0 { code << 4 } else { code };
            i += 1;
        }
        PackedPosition(out)
    }

    /// Decodes a packed position (clocks set to 0 and 1).
    pub fn unpack(p: &PackedPosition) -> Result<Position, PackedError> {
        let b = &p.0;
        let flags = b[0];
        if flags & 0x70 != 0 || flags & 0x0f > 8 {
            return Err(PackedError::Flags);
        }
        let turn = if flags & 0x80 != 0 {
            Color::Black
        } else {
            Color::White
        };
        let occ = u64::from_be_bytes(b[1..9].try_into().expect("8 bytes"));
        let n = occ.count_ones() as usize;
        if n > 32 {
            return Err(PackedError::TooManyPieces);
        }
        let mut pos = Position::empty(turn);
        let mut bb = occ;
        for i in 0..32 {
            let nib = if i % 2 == 0 {
                b[9 + i / 2] >> 4
            } else {
                b[9 + i / 2] & 15
            };
            if i >= n {
                if nib != 0 {
                    return Err(PackedError::PieceCode);
                }
                continue;
            }
            if nib > 11 {
                return Err(PackedError::PieceCode);
            }
            let sq = Square::from_index_unchecked(bb.trailing_zeros());
            bb &= bb - 1;
            let color = if nib < 6 { Color::White } else { Color::Black };
            let role = Role::from_index((nib % 6) as usize).expect("below 6");
            pos.put(sq, Piece { color, role });
        }
        if pos.by_role[0] & (RANK_1 | RANK_8) != 0
            || pos.count(Color::White) > 16
            || pos.count(Color::Black) > 16
        {
            return Err(PackedError::Placement);
        }
        let ep = match flags & 0x0f {
            0 => None,
            f => {
                let rank = if turn == Color::White { 5 } else { 2 };
                Some(Square::from_coords(f as u32 - 1, rank).expect("file below 8"))
            }
        };
        pos.finish_setup(turn, ep);
        if pos.ep != ep {
            return Err(PackedError::EnPassant);
        }
        if let Some(sq) = ep
            && !pos.ep_square_plausible(sq)
        {
            return Err(PackedError::EnPassant);
        }
        Ok(pos)
    }
}

impl PackedPosition {
    /// Reads a packed position from a byte slice of exactly [`PACKED_LEN`].
    pub fn from_slice(s: &[u8]) -> Result<PackedPosition, PackedError> {
        let arr: [u8; PACKED_LEN] = s.try_into().map_err(|_| PackedError::Length(s.len()))?;
        Ok(PackedPosition(arr))
    }

    /// Decodes it.
    pub fn unpack(&self) -> Result<Position, PackedError> {
        Position::unpack(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_round_trip_and_bad_bytes() {
        let p = Position::startpos();
        let k = p.pack();
        assert_eq!(Position::unpack(&k).unwrap(), p);
        let mut bad = k;
        bad.0[24] |= 0x0c;
        assert_eq!(Position::unpack(&bad), Err(PackedError::PieceCode));
        let mut bad = k;
        bad.0[0] = 0x40;
        assert_eq!(Position::unpack(&bad), Err(PackedError::Flags));
        let mut bad = k;
        bad.0[0] = 0x05;
        assert_eq!(Position::unpack(&bad), Err(PackedError::EnPassant));
        assert_eq!(
            PackedPosition::from_slice(&[0; 3]),
            Err(PackedError::Length(3))
        );
    }
}
