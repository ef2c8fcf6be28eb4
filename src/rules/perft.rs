//! Perft: counting leaf positions of the move tree, for testing and timing.

use super::moves::MoveList;
use super::position::Position;

/// Number of leaf positions `depth` plies below `pos` (a position with no
/// legal move contributes 0 below it). Moves at the last ply are counted,
/// not made.
pub fn perft(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count_legal_moves() as u64,
        2 => {
            let mut list = MoveList::new();
            pos.legal_moves_into(&mut list);
            list.iter()
                .map(|&m| pos.play_unhashed(m).count_legal_moves() as u64)
                .sum()
        }
        _ => {
            let mut list = MoveList::new();
            pos.legal_moves_into(&mut list);
            let mut n = 0;
            for &m in list.iter() {
                n += perft(&pos.play(m), depth - 1);
            }
            n
        }
    }
}

/// Perft split by first move: `(uci, count)` in generation order.
pub fn divide(pos: &Position, depth: u32) -> Vec<(String, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .iter()
        .map(|&m| (m.to_string(), perft(&pos.play(m), depth - 1)))
        .collect()
}
