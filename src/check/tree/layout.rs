//! Finding one's way in a win-tree file: the path to a slot, the slot a
//! line leads to, the winner from the tree's shape, and positions back
//! from their keys.

use super::Key;
use crate::check::Rules;
use crate::check::game::{self, End};
use crate::wintree::{MoveCode, Node, WinTree};
use shakmaty::variant::Antichess;
use shakmaty::{Color, Position};

/// Rebuilds a position from a key, for error messages only.
pub(super) fn position_of_key(k: &Key) -> Antichess {
    use shakmaty::{Bitboard, Board, CastlingMode, FromSetup, Piece, Setup, Square};
    let occ = u64::from_be_bytes(k[1..9].try_into().expect("8 bytes"));
    let mut board = Board::empty();
    for (i, sq) in Bitboard(occ).into_iter().enumerate() {
        let nib = if i % 2 == 0 {
            k[9 + i / 2] >> 4
        } else {
            k[9 + i / 2] & 15
        };
        let role = shakmaty::Role::ALL[(nib % 6) as usize];
        let color = if nib < 6 { Color::White } else { Color::Black };
        board.set_piece_at(sq, Piece { color, role });
    }
    let mut setup = Setup::empty();
    setup.board = board;
    setup.turn = if k[0] & 0x80 != 0 {
        Color::Black
    } else {
        Color::White
    };
    if k[0] & 15 != 0 {
        let file = (k[0] & 15) as u32 - 1;
        let rank = if setup.turn == Color::White { 5 } else { 2 };
        setup.ep_square = Some(Square::new(rank * 8 + file));
    }
    Antichess::from_setup(setup, CastlingMode::Standard)
        .unwrap_or_else(|e| e.ignore_invalid_ep_square().unwrap_or_default())
}

/// The moves from the root to a slot, found by descending the pre-order
/// layout (a child's subtree is the slot range up to its next sibling),
/// and the end of the slot's range.
pub(super) fn path_to(tree: &WinTree, slot: u32) -> Option<(Vec<MoveCode>, u32)> {
    let mut n = 0;
    let mut end = tree.len();
    let mut path = Vec::new();
    while n != slot {
        let mut best: Option<(Node, u32)> = None;
        for c in tree.children(n).ok()? {
            let c = c.ok()?;
            if c.index <= slot {
                best = Some((c, c.next_sibling.unwrap_or(end)));
            } else {
                break;
            }
        }
        let (b, e) = best?;
        if e > end || e <= b.index {
            return None;
        }
        path.push(b.mv?);
        n = b.index;
        end = e;
        if path.len() > 100_000 {
            return None;
        }
    }
    Some((path, end))
}

/// Follows moves (after the prolog) from the root: the slot reached
/// (resolved through transpositions) and the end of its range.
pub(super) fn follow(tree: &WinTree, line: &[MoveCode]) -> Option<(u32, u32)> {
    let mut n = 0;
    for &m in line {
        n = tree.child_by_move(n, m).ok()??;
    }
    if n == 0 {
        return Some((0, tree.len()));
    }
    let (_, end) = path_to(tree, n)?;
    Some((n, end))
}

/// Infers the winner: walks the first-child chain from the root to the
/// first node with more than one legal move; the side to move there wins
/// when the proof gives one move, else the opponent.
pub(super) fn infer_winner(tree: &WinTree, root: &Antichess, rules: Rules) -> Color {
    let mut pos = root.clone();
    let mut n = 0u32;
    for _ in 0..10_000 {
        let legal = pos.legal_moves();
        let node = match tree.resolve(n).and_then(|r| tree.node(r)) {
            Ok(x) => x,
            Err(_) => break,
        };
        if !node.has_children() {
            if let Some(End {
                winner: Some(w), ..
            }) = game::game_end(&pos, &legal, rules)
            {
                return w;
            }
            break;
        }
        let Ok(kids) = tree.children(node.index) else {
            break;
        };
        let kids: Vec<Node> = kids.take(300).filter_map(Result::ok).collect();
        if legal.len() > 1 {
            return if kids.len() == 1 {
                pos.turn()
            } else {
                !pos.turn()
            };
        }
        let Some(first) = kids.first() else { break };
        let Some((_, m)) = first.mv.and_then(|c| game::find_move(&legal, c)) else {
            break;
        };
        pos.play_unchecked(m);
        n = first.index;
    }
    pos.turn()
}
