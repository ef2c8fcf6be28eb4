//! Records: what the store keeps of a proven position, without and with
//! the fifty-move rule.

use super::{RECORD_LEN, StoreError};
use crate::vocab::MoveCode;

/// Width of a record under the fifty-move rule: a [`Record`] and its
/// [`Need`].
pub const FIFTY_RECORD_LEN: usize = RECORD_LEN + 1;

/// The headroom need of a proof under the fifty-move rule: the most plies
/// from its position to the first capture, pawn move or game end along any
/// line of the stored proof (a table leaf counts its distance to the next
/// capture or pawn move). The proof holds at a half-move clock `c` iff
/// `c + need <= 100` ([`crate::vocab::FIFTY_MOVE_PLIES`]).
pub type Need = u8;

/// The need of a position through one move of its proof to a child of
/// need `child`: 1 when the move is a capture or pawn move (it resets the
/// clock), else one more than the child's.
pub fn need_through(irreversible: bool, child: Need) -> Need {
    if irreversible {
        1
    } else {
        child.saturating_add(1)
    }
}

/// Whether `new` should replace `old` under the fifty-move rule: a smaller
/// need, then a smaller proof.
pub fn fifty_better(new: (&Record, Need), old: (&Record, Need)) -> bool {
    (new.1, new.0.size) < (old.1, old.0.size)
}

/// The bytes of a record under the fifty-move rule: the record's 12, then
/// the need.
pub(super) fn fifty_bytes(r: &Record, need: Need) -> [u8; FIFTY_RECORD_LEN] {
    let mut b = [0u8; FIFTY_RECORD_LEN];
    b[..RECORD_LEN].copy_from_slice(&r.to_bytes());
    b[RECORD_LEN] = need;
    b
}

/// Reads the bytes of a record under the fifty-move rule.
pub(super) fn fifty_from_bytes(b: &[u8; FIFTY_RECORD_LEN]) -> Result<(Record, Need), StoreError> {
    let r = Record::from_bytes(b[..RECORD_LEN].try_into().expect("12 bytes"))?;
    Ok((r, b[RECORD_LEN]))
}

/// What a record says of its position.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum WinLoss {
    /// The side to move wins; the record holds the winning move.
    Win,
    /// The side to move loses: every legal move leads to a position the
    /// opponent wins.
    Loss,
}

/// [`Record::flags`] bit 0: the proof below this position rests on
/// endgame tables (some of its leaves are table positions, not game ends).
pub const FLAG_TABLES: u8 = 1;

/// A stored proven position: 12 bytes.
///
/// ```text
/// byte 0      verdict: 1 win for the side to move, 2 loss
/// byte 1      flags: bit 0 = the proof below rests on endgame tables;
///             other bits 0
/// bytes 2..4  winning move, Watkins move code, u16 LE (0 for a loss)
/// bytes 4..12 proof size: distinct positions in the stored proof below
///             and including this one, u64 LE (as counted when proven)
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Record {
    /// Win or loss for the side to move.
    pub verdict: WinLoss,
    /// Flag bits (bit 0: rests on endgame tables).
    pub flags: u8,
    /// The winning move's code ([`MoveCode::NONE`] for a loss).
    pub mv: MoveCode,
    /// Size of the proof below, in distinct positions.
    pub size: u64,
}

impl Record {
    /// Whether the proof below this record rests on endgame tables (some
    /// of its leaves are table positions, not game ends): [`FLAG_TABLES`].
    pub fn rests_on_tables(&self) -> bool {
        self.flags & FLAG_TABLES != 0
    }

    /// The 12-byte form.
    pub fn to_bytes(&self) -> [u8; RECORD_LEN] {
        let mut b = [0u8; RECORD_LEN];
        b[0] = match self.verdict {
            WinLoss::Win => 1,
            WinLoss::Loss => 2,
        };
        b[1] = self.flags;
        b[2..4].copy_from_slice(&self.mv.raw().to_le_bytes());
        b[4..12].copy_from_slice(&self.size.to_le_bytes());
        b
    }

    /// Reads the 12-byte form.
    pub fn from_bytes(b: &[u8; RECORD_LEN]) -> Result<Record, StoreError> {
        let verdict = match b[0] {
            1 => WinLoss::Win,
            2 => WinLoss::Loss,
            v => return Err(StoreError::Corrupt(format!("record verdict byte {v}"))),
        };
        if b[1] & !1 != 0 {
            return Err(StoreError::Corrupt(format!("record flag byte {:#x}", b[1])));
        }
        Ok(Record {
            verdict,
            flags: b[1],
            mv: MoveCode::from_raw(u16::from_le_bytes([b[2], b[3]])),
            size: u64::from_le_bytes(b[4..12].try_into().expect("8 bytes")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_under_the_fifty_move_rule_is_the_plain_record_and_its_need() {
        let r = Record {
            verdict: WinLoss::Loss,
            flags: FLAG_TABLES,
            mv: MoveCode::NONE,
            size: 1234,
        };
        let b = fifty_bytes(&r, 42);
        assert_eq!(b[..RECORD_LEN], r.to_bytes());
        assert_eq!(b[RECORD_LEN], 42);
        assert_eq!(fifty_from_bytes(&b).unwrap(), (r, 42));
        let smaller = Record { size: 9, ..r };
        assert!(fifty_better((&r, 41), (&smaller, 42)));
        assert!(fifty_better((&smaller, 42), (&r, 42)));
        assert!(!fifty_better((&r, 42), (&r, 42)));
    }
}
