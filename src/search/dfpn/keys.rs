//! Transposition-table keys: a node's Zobrist hash where its value is
//! shared by every transposition, else a hash naming its path (see the
//! module doc of [`super`]).

use crate::rules::{Move, Position};

#[inline(always)]
pub(super) fn mix(parent: u64, z: u64) -> u64 {
    let mut x = parent.rotate_left(17) ^ z;
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The tt key of the last of `line`, a sequence of positions each reached
/// from the one before by a legal move and starting at a shareable one
/// (the search's root, or one reached by a capture or pawn move): the key
/// a search from `line[0]` gives it, [`child_key`] told from the positions
/// alone (a capture or pawn move resets the half-move clock).
pub(in crate::search) fn line_key(line: &[Position]) -> u64 {
    let mut key = line.first().map_or(0, |p| p.zobrist());
    for p in line.iter().skip(1) {
        let z = p.zobrist();
        key = if p.halfmoves() == 0 || p.has_capture() {
            z
        } else {
            mix(key, z)
        };
    }
    key
}

/// The tt key a search gives the last of `line` ([`line_key`]), for a
/// reader of its table outside the search (a master reading a job's
/// table excerpt, `crate::jobs::excerpt`).
pub fn tt_key_of_line(line: &[Position]) -> u64 {
    line_key(line)
}

/// A fingerprint of how tt keys are made (the Zobrist numbers and the
/// way keys of reversible moves are mixed): the keys of a fixed line, one
/// of them reached by a reversible move, hashed. Tt entries kept in a
/// file ([`crate::jobs::state`]) are used only by a build that gives the
/// same fingerprint.
pub fn tt_key_fingerprint() -> u64 {
    let start = Position::startpos();
    let mut line = vec![start];
    let mut pos = start;
    for m in ["e3", "e6", "Nf3", "Nc6", "Ng1"] {
        let (next, _) = pos.play_line_str(m).expect("a legal move of a fixed line");
        line.push(next);
        pos = next;
    }
    (1..=line.len()).fold(0u64, |h, n| mix(h, line_key(&line[..n])))
}

/// The tt key of `child`, reached by `m` from a node with key `key`.
pub(in crate::search) fn child_key(key: u64, m: Move, child: &Position) -> u64 {
    let z = child.zobrist();
    if m.is_irreversible() || child.has_capture() {
        z
    } else {
        mix(key, z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Position;

    #[test]
    fn path_keys_only_where_the_value_can_depend_on_the_path() {
        let start = Position::startpos();
        let nf3 = start.parse_move("Nf3").unwrap();
        let e4 = start.parse_move("e4").unwrap();
        // A reversible move to a position without captures: path key.
        let a = child_key(1, nf3, &start.play(nf3));
        let b = child_key(2, nf3, &start.play(nf3));
        assert_ne!(a, b);
        // An irreversible move: the position's own hash, shared.
        let c = child_key(1, e4, &start.play(e4));
        assert_eq!(c, start.play(e4).zobrist());
    }
}
