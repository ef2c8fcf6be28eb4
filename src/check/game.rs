//! Chess facts the checker needs, all from shakmaty's Antichess: game ends
//! under a rule set, move codes, the 25-byte store key, SAN lines.

use super::Rules;
use crate::vocab::MoveCode;
use crate::vocab::line::{self, TokenError};
use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::variant::Antichess;
use shakmaty::{Color, EnPassantMode, Move, MoveList, Position};

/// Width of the store key.
pub const KEY_LEN: usize = 25;

/// The antichess position of a FEN, read as lichess reads one: a
/// castling field other than `-` (`KQkq`, as in the standard start's FEN)
/// is accepted and dropped, since antichess has no castling (shakmaty's
/// `Antichess` refuses any castling rights as invalid); every other fault
/// of the position is an error (shakmaty's words).
pub fn position_from_fen(fen: Fen) -> Result<Antichess, String> {
    match fen.into_position::<Antichess>(shakmaty::CastlingMode::Standard) {
        Ok(pos) => Ok(pos),
        Err(e) => e
            .ignore_invalid_castling_rights()
            .map_err(|e| e.to_string()),
    }
}

/// How a finished game ended, for the leaf statistics.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EndKind {
    /// The side to move has no pieces left.
    NoPieces,
    /// The side to move has pieces but no legal move.
    Stalemate,
    /// Anything else (the side not to move has no pieces; a dead draw).
    Other,
}

/// A finished game: the winner (`None` for a draw) and how it ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct End {
    /// The winner, `None` for a draw.
    pub winner: Option<Color>,
    /// How.
    pub kind: EndKind,
}

/// The game end of `pos` under `rules`, given its legal moves, or `None`
/// when play goes on. The rules, as documented in `src/rules/outcome.rs`:
/// a side to move with no pieces wins; a side to move whose opponent has no
/// pieces loses (a finished game won by the side without pieces); a side to
/// move with pieces and no legal move wins under International rules and,
/// under FICS, wins with fewer pieces, loses with more, draws on equal
/// counts; under joint rules it wins only where International and FICS
/// both say so, and any other stalemate is a draw; only bishops that can
/// never meet is a draw (shakmaty's insufficient material).
pub fn game_end(pos: &Antichess, legal: &MoveList, rules: Rules) -> Option<End> {
    let us = pos.turn();
    let board = pos.board();
    let ours = board.by_color(us).count();
    let theirs = board.by_color(!us).count();
    if ours == 0 {
        return Some(End {
            winner: Some(us),
            kind: EndKind::NoPieces,
        });
    }
    if theirs == 0 {
        return Some(End {
            winner: Some(!us),
            kind: EndKind::Other,
        });
    }
    if legal.is_empty() {
        let international = Some(us);
        let fics = match ours.cmp(&theirs) {
            std::cmp::Ordering::Less => Some(us),
            std::cmp::Ordering::Greater => Some(!us),
            std::cmp::Ordering::Equal => None,
        };
        let winner = match rules {
            Rules::International => international,
            Rules::Fics => fics,
            // By its definition: the winner both others agree on, if any.
            Rules::Joint => {
                if international == fics {
                    fics
                } else {
                    None
                }
            }
        };
        return Some(End {
            winner,
            kind: EndKind::Stalemate,
        });
    }
    if pos.is_insufficient_material() {
        return Some(End {
            winner: None,
            kind: EndKind::Other,
        });
    }
    None
}

/// The win-tree move code of a shakmaty move (en-passant bit set on en
/// passant).
pub fn move_code(m: &Move) -> MoveCode {
    match *m {
        Move::Normal {
            from,
            to,
            promotion,
            ..
        } => MoveCode::new(
            u32::from(from) as u8,
            u32::from(to) as u8,
            promotion.map_or(0, |r| r as u8),
            false,
        ),
        Move::EnPassant { from, to } => {
            MoveCode::new(u32::from(from) as u8, u32::from(to) as u8, 0, true)
        }
        // Not legal in antichess; a code no file can match.
        Move::Castle { .. } | Move::Put { .. } => MoveCode::INVALID,
    }
}

/// Finds the legal move a code names (bit 15 ignored), with its index.
pub fn find_move(legal: &MoveList, code: MoveCode) -> Option<(usize, Move)> {
    legal
        .iter()
        .enumerate()
        .find(|(_, m)| move_code(m).same_move(code))
        .map(|(i, m)| (i, *m))
}

/// The 25-byte store key of a position, packed as documented in
/// `src/rules/packed.rs` (re-implemented here from that description):
/// byte 0 flags (bit 7 Black to move, bits 0-3 en-passant file + 1 when an
/// en-passant capture is legal), bytes 1..9 the occupancy as a big-endian
/// u64 (bit i = square i, a1 = 0), bytes 9..25 one nibble per occupied
/// square from the lowest, high nibble first: colour * 6 + role index
/// (pawn 0 .. king 5, white 0, black 1).
pub fn pack(pos: &Antichess) -> [u8; KEY_LEN] {
    let mut out = [0u8; KEY_LEN];
    let board = pos.board();
    let mut flags = 0u8;
    if pos.turn() == Color::Black {
        flags |= 0x80;
    }
    if let Some(ep) = pos.ep_square(EnPassantMode::Legal) {
        flags |= ep.file() as u8 + 1;
    }
    out[0] = flags;
    let occ = board.occupied();
    out[1..9].copy_from_slice(&occ.0.to_be_bytes());
    for (i, sq) in occ.into_iter().enumerate() {
        let piece = board.piece_at(sq).expect("occupied square");
        let colour = if piece.color == Color::White { 0 } else { 1 };
        let code = colour * 6 + (piece.role as u8 - 1);
        out[9 + i / 2] |= if i % 2 == 0 { code << 4 } else { code };
    }
    out
}

/// Number of pieces on the board.
pub fn men(pos: &Antichess) -> u32 {
    pos.board().occupied().count() as u32
}

/// The FEN of a position.
pub fn fen(pos: &Antichess) -> String {
    Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

/// The EPD of a position: placement, side to move, castling (`-` in
/// antichess), en-passant square only when an en-passant capture is legal.
pub fn epd(pos: &Antichess) -> String {
    shakmaty::fen::Epd::from_position(pos, EnPassantMode::Legal).to_string()
}

/// Plays move codes from `root` and writes them in UCI, one string a move;
/// stops at the first code that is not a legal move.
pub fn uci_line(root: &Antichess, codes: &[MoveCode]) -> Vec<String> {
    let mut pos = root.clone();
    let mut out = Vec::with_capacity(codes.len());
    for &code in codes {
        let legal = pos.legal_moves();
        let Some((_, m)) = find_move(&legal, code) else {
            break;
        };
        out.push(m.to_uci(shakmaty::CastlingMode::Standard).to_string());
        pos.play_unchecked(m);
    }
    out
}

/// Plays move codes from `root` and writes them in numbered SAN
/// (`1. e3 d5 2. Qg4`); stops at the first code that is not a legal move
/// and writes it in UCI with a `?`. Returns the line and the position
/// reached.
pub fn san_line(root: &Antichess, codes: &[MoveCode]) -> (String, Antichess) {
    let mut pos = root.clone();
    let mut out = String::new();
    let start = pos.fullmoves().get();
    for (i, &code) in codes.iter().enumerate() {
        if !out.is_empty() {
            out.push(' ');
        }
        if pos.turn() == Color::White {
            out.push_str(&format!("{}. ", pos.fullmoves()));
        } else if i == 0 {
            out.push_str(&format!("{start}... "));
        }
        let legal = pos.legal_moves();
        match find_move(&legal, code) {
            Some((_, m)) => {
                out.push_str(&San::from_move(&pos, m).to_string());
                pos.play_unchecked(m);
            }
            None => {
                out.push_str(&format!("{}?", code.uci()));
                break;
            }
        }
    }
    (out, pos)
}

/// Whether a move resets the half-move clock of the fifty-move rule: a
/// capture (en passant included) or a pawn move (promotions included).
pub fn resets_clock(m: &Move) -> bool {
    m.is_capture() || m.role() == shakmaty::Role::Pawn
}

/// The half-move clock at each position of a line from `start`, whose
/// clock is `clock`: index `i` after `i` moves (index 0 is `clock`); stops
/// at the first code that is not a legal move.
pub fn clocks_along(start: &Antichess, clock: u32, codes: &[MoveCode]) -> Vec<u32> {
    let mut pos = start.clone();
    let mut out = Vec::with_capacity(codes.len() + 1);
    out.push(clock);
    let mut c = clock;
    for &code in codes {
        let legal = pos.legal_moves();
        let Some((_, m)) = find_move(&legal, code) else {
            break;
        };
        c = if resets_clock(&m) {
            0
        } else {
            c.saturating_add(1)
        };
        out.push(c);
        pos.play_unchecked(m);
    }
    out
}

/// The side's name.
pub fn color_name(c: Color) -> &'static str {
    match c {
        Color::White => "white",
        Color::Black => "black",
    }
}

/// Plays a line of moves (UCI or SAN, mixed) from `start` with shakmaty,
/// read by [`crate::vocab::line`] as every command reads lines (move
/// numbers, results and annotations dropped; a null move or a bare number
/// is an error). The error names the 1-based ply, the move and the
/// position, in the same words as the prover's `rules::LineError`:
/// `ply 2: "0000" is a null move; antichess has no passing (position FEN)`.
pub fn play_line<S: AsRef<str>>(
    start: &Antichess,
    moves: &[S],
) -> Result<(Antichess, Vec<Move>), String> {
    let mut pos = start.clone();
    let mut played = Vec::new();
    for token in line::each(moves) {
        let found = match token {
            Ok(t) => read_move(&pos, &t),
            Err(TokenError::NullMove { token, .. }) => Err(format!(
                "{token:?} is a null move; antichess has no passing"
            )),
            Err(TokenError::NotAMove { token, .. }) => {
                Err(format!("{token:?} is not a move in UCI or SAN"))
            }
        };
        match found {
            Ok(m) => {
                pos.play_unchecked(m);
                played.push(m);
            }
            Err(what) => {
                return Err(format!(
                    "ply {}: {what} (position {})",
                    played.len() + 1,
                    fen(&pos)
                ));
            }
        }
    }
    Ok((pos, played))
}

/// One move in UCI or SAN, matched against the legal moves of `pos`; the
/// error says why not (not a move, not legal with the legal moves sorted,
/// ambiguous).
fn read_move(pos: &Antichess, t: &str) -> Result<Move, String> {
    let illegal = || {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            return format!("{t:?} is not legal: the game is over (no legal moves)");
        }
        let mut sans: Vec<String> = legal
            .iter()
            .map(|m| San::from_move(pos, *m).to_string())
            .collect();
        sans.sort();
        format!("{t:?} is not legal here; legal moves: {}", sans.join(" "))
    };
    if let Ok(u @ shakmaty::uci::UciMove::Normal { .. }) = t.parse::<shakmaty::uci::UciMove>() {
        return u.to_move(pos).map_err(|_| illegal());
    }
    match t.parse::<San>() {
        Ok(san @ San::Normal { .. }) => match san.to_move(pos) {
            Ok(m) => Ok(m),
            Err(shakmaty::san::SanError::AmbiguousSan) => Err(format!("{t:?} is ambiguous")),
            Err(_) => Err(illegal()),
        },
        // Castling, drops and null moves are no antichess moves.
        _ => Err(format!("{t:?} is not a move in UCI or SAN")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::CastlingMode;

    fn end(fen: &str, rules: Rules) -> Option<End> {
        let pos: Antichess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        game_end(&pos, &pos.legal_moves(), rules)
    }

    #[test]
    fn castling_rights_are_dropped_other_faults_kept() {
        let read = |f: &str| position_from_fen(f.parse::<Fen>().unwrap());
        let start = read("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").unwrap();
        assert_eq!(start, Antichess::default());
        assert!(read("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w Kq - 0 1").is_ok());
        // A pawn on the back rank stays an error, castling or not.
        assert!(read("P6k/8/8/8/8/8/8/K7 w KQkq - 0 1").is_err());
        assert!(read("P6k/8/8/8/8/8/8/K7 w - - 0 1").is_err());
    }

    #[test]
    fn stalemate_and_no_pieces_under_each_rule_set() {
        use Rules::{Fics, International, Joint};
        let (w, b) = (Some(Color::White), Some(Color::Black));
        // White to move with no legal move and fewer, as many or more pieces
        // than Black; then White with no pieces left.
        let table = [
            (
                "8/8/8/4p2p/4P3/8/8/8 w - - 0 1",
                EndKind::Stalemate,
                [(International, w), (Fics, w), (Joint, w)],
            ),
            (
                "8/8/8/4p3/4P3/8/8/8 w - - 0 1",
                EndKind::Stalemate,
                [(International, w), (Fics, None), (Joint, None)],
            ),
            (
                "8/8/8/4p3/4P3/4P3/8/8 w - - 0 1",
                EndKind::Stalemate,
                [(International, w), (Fics, b), (Joint, None)],
            ),
            (
                "8/8/8/4p3/8/8/8/8 w - - 0 1",
                EndKind::NoPieces,
                [(International, w), (Fics, w), (Joint, w)],
            ),
        ];
        for (fen, kind, row) in table {
            for (rules, winner) in row {
                assert_eq!(
                    end(fen, rules),
                    Some(End { winner, kind }),
                    "{fen} under {rules}"
                );
            }
        }
    }
}
