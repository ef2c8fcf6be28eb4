//! FEN and EPD, read and written.
//!
//! Reading accepts six FEN fields, or the first four (an EPD line, whose
//! operations after the fourth field are ignored by [`Position::from_epd`]).
//! A castling field other than `-` is accepted and dropped, as lichess does:
//! antichess has no castling. An en-passant square is kept only when an
//! en-passant capture is legal; one on the wrong rank, or with no pawn that
//! could just have made a double step past it, is an error.

use super::bitboard::{RANK_1, RANK_8};
use super::position::Position;
use super::types::{Color, Piece, Square};
use std::fmt;

/// A FEN field.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FenField {
    /// The whole string (empty, or the wrong number of fields).
    Structure,
    /// Piece placement.
    Board,
    /// Side to move.
    Turn,
    /// Castling rights.
    Castling,
    /// En-passant square.
    EnPassant,
    /// Halfmove clock.
    Halfmoves,
    /// Move number.
    Fullmoves,
}

impl fmt::Display for FenField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FenField::Structure => "structure",
            FenField::Board => "piece placement",
            FenField::Turn => "side to move",
            FenField::Castling => "castling",
            FenField::EnPassant => "en passant",
            FenField::Halfmoves => "halfmove clock",
            FenField::Fullmoves => "move number",
        })
    }
}

/// A FEN that could not be read: which field, and what is wrong with it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct FenError {
    /// The field at fault.
    pub field: FenField,
    /// The problem, in words.
    pub problem: String,
}

impl FenError {
    fn new(field: FenField, problem: impl Into<String>) -> FenError {
        FenError {
            field,
            problem: problem.into(),
        }
    }
}

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid FEN ({} field): {}", self.field, self.problem)
    }
}

impl std::error::Error for FenError {}

fn parse_board(s: &str) -> Result<Position, FenError> {
    let err = |p: String| FenError::new(FenField::Board, p);
    let mut pos = Position::empty(Color::White);
    let ranks: Vec<&str> = s.split('/').collect();
    if ranks.len() != 8 {
        return Err(err(format!("{} ranks, expected 8", ranks.len())));
    }
    for (i, rank_str) in ranks.iter().enumerate() {
        let rank = 7 - i as u32;
        let mut file = 0u32;
        for c in rank_str.chars() {
            if let Some(d) = c.to_digit(10) {
                if !(1..=8).contains(&d) {
                    return Err(err(format!(
                        "bad empty-square count '{c}' on rank {}",
                        rank + 1
                    )));
                }
                file += d;
            } else if let Some(p) = Piece::from_char(c) {
                let sq = Square::from_coords(file, rank)
                    .ok_or_else(|| err(format!("rank {} has more than 8 squares", rank + 1)))?;
                pos.put(sq, p);
                file += 1;
            } else {
                return Err(err(format!("unexpected character {c:?}")));
            }
            if file > 8 {
                return Err(err(format!("rank {} has more than 8 squares", rank + 1)));
            }
        }
        if file != 8 {
            return Err(err(format!(
                "rank {} has {file} squares, expected 8",
                rank + 1
            )));
        }
    }
    if pos.by_role[0] & (RANK_1 | RANK_8) != 0 {
        return Err(err("a pawn stands on the first or last rank".into()));
    }
    for c in Color::ALL {
        if pos.count(c) > 16 {
            return Err(err(format!(
                "{c} has {} pieces, at most 16 are possible",
                pos.count(c)
            )));
        }
    }
    Ok(pos)
}

fn parse_number(s: &str, field: FenField) -> Result<u32, FenError> {
    s.parse::<u32>()
        .map_err(|_| FenError::new(field, format!("{s:?} is not a number")))
}

impl Position {
    /// Builds a position from pieces on squares, the side to move and an
    /// en-passant square (dropped unless a capture on it is legal). Checks
    /// what a FEN read checks: no two pieces on a square, no pawn on a back
    /// rank, at most 16 pieces a side.
    pub fn from_pieces(
        pieces: impl IntoIterator<Item = (Square, Piece)>,
        turn: Color,
        ep: Option<Square>,
    ) -> Result<Position, FenError> {
        let mut pos = Position::empty(turn);
        for (sq, p) in pieces {
            if pos.role_at(sq).is_some() {
                return Err(FenError::new(
                    FenField::Board,
                    format!("two pieces on {sq}"),
                ));
            }
            pos.put(sq, p);
        }
        if pos.by_role[0] & (RANK_1 | RANK_8) != 0 {
            return Err(FenError::new(
                FenField::Board,
                "a pawn stands on the first or last rank",
            ));
        }
        for c in Color::ALL {
            if pos.count(c) > 16 {
                return Err(FenError::new(
                    FenField::Board,
                    format!("{c} has more than 16 pieces"),
                ));
            }
        }
        pos.finish_setup(turn, ep);
        Ok(pos)
    }

    /// Reads a FEN (six fields) or the four fields of an EPD position.
    pub fn from_fen(fen: &str) -> Result<Position, FenError> {
        let fields: Vec<&str> = fen.split_ascii_whitespace().collect();
        if fields.is_empty() {
            return Err(FenError::new(FenField::Structure, "empty string"));
        }
        if !(fields.len() == 4 || fields.len() == 6) {
            return Err(FenError::new(
                FenField::Structure,
                format!("{} fields, expected 6 (or 4 for EPD)", fields.len()),
            ));
        }
        Self::from_fields(&fields)
    }

    /// Reads an EPD line: the four position fields, then operations, which
    /// are ignored.
    pub fn from_epd(epd: &str) -> Result<Position, FenError> {
        let fields: Vec<&str> = epd.split_ascii_whitespace().take(4).collect();
        if fields.len() < 4 {
            return Err(FenError::new(
                FenField::Structure,
                format!("{} fields, an EPD needs 4", fields.len()),
            ));
        }
        Self::from_fields(&fields)
    }

    fn from_fields(fields: &[&str]) -> Result<Position, FenError> {
        let mut pos = parse_board(fields[0])?;
        let turn = match fields.get(1).copied().unwrap_or("w") {
            "w" => Color::White,
            "b" => Color::Black,
            other => {
                return Err(FenError::new(
                    FenField::Turn,
                    format!("{other:?}, expected w or b"),
                ));
            }
        };
        let castling = fields.get(2).copied().unwrap_or("-");
        if castling != "-"
            && !castling
                .chars()
                .all(|c| matches!(c, 'K' | 'Q' | 'k' | 'q' | 'A'..='H' | 'a'..='h'))
        {
            return Err(FenError::new(
                FenField::Castling,
                format!("{castling:?}, expected '-' or castling letters (which are dropped)"),
            ));
        }
        let ep = match fields.get(3).copied().unwrap_or("-") {
            "-" => None,
            s => {
                let sq = Square::parse(s).ok_or_else(|| {
                    FenError::new(FenField::EnPassant, format!("{s:?} is not a square"))
                })?;
                let ep_rank = if turn == Color::White { 5 } else { 2 };
                if sq.rank() != ep_rank {
                    return Err(FenError::new(
                        FenField::EnPassant,
                        format!("{s} is not on rank {} for {turn} to move", ep_rank + 1),
                    ));
                }
                pos.turn = turn;
                if !pos.ep_square_plausible(sq) {
                    return Err(FenError::new(
                        FenField::EnPassant,
                        format!(
                            "{s}: no {} pawn can just have moved two squares past it",
                            !turn
                        ),
                    ));
                }
                Some(sq)
            }
        };
        if let Some(h) = fields.get(4) {
            pos.halfmoves = parse_number(h, FenField::Halfmoves)?;
        }
        if let Some(f) = fields.get(5) {
            pos.fullmoves = parse_number(f, FenField::Fullmoves)?.max(1);
        }
        pos.finish_setup(turn, ep);
        Ok(pos)
    }

    /// The piece-placement field.
    pub fn board_fen(&self) -> String {
        let mut s = String::with_capacity(64);
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                let sq = Square::from_coords(file, rank).expect("on board");
                match self.piece_at(sq) {
                    Some(p) => {
                        if empty > 0 {
                            s.push(char::from(b'0' + empty));
                            empty = 0;
                        }
                        s.push(p.char());
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                s.push(char::from(b'0' + empty));
            }
            if rank > 0 {
                s.push('/');
            }
        }
        s
    }

    /// The four EPD fields: placement, side, castling (`-`), en passant
    /// (only when a capture is legal).
    pub fn to_epd(&self) -> String {
        let ep = match self.ep {
            Some(sq) => sq.to_string(),
            None => "-".to_string(),
        };
        format!("{} {} - {}", self.board_fen(), self.turn.fen_char(), ep)
    }

    /// The full six-field FEN.
    pub fn to_fen(&self) -> String {
        format!("{} {} {}", self.to_epd(), self.halfmoves, self.fullmoves)
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_fen())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_start() {
        let p = Position::startpos();
        assert_eq!(
            p.to_fen(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1"
        );
        assert_eq!(Position::from_fen(&p.to_fen()).unwrap(), p);
    }

    #[test]
    fn castling_dropped_and_ep_kept_only_when_legal() {
        let p = Position::from_fen("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1").unwrap();
        assert_eq!(p.to_epd(), "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w - -");
        let no_capturer =
            Position::from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b - e3 0 1").unwrap();
        assert_eq!(no_capturer.ep_square(), None);
        let capturer =
            Position::from_fen("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b - e3 0 3")
                .unwrap();
        assert_eq!(capturer.ep_square(), Square::parse("e3"));
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            ("", FenField::Structure),
            ("8/8/8/8/8/8/8/8 w - - 0", FenField::Structure),
            ("8/8/8/8/8/8/8 w - - 0 1", FenField::Board),
            ("9/8/8/8/8/8/8/8 w - - 0 1", FenField::Board),
            ("8/8/8/8/8/8/8/7x w - - 0 1", FenField::Board),
            ("8/8/8/8/8/8/8/P7 w - - 0 1", FenField::Board),
            ("ppppppppp/8/8/8/8/8/8/8 w - - 0 1", FenField::Board),
            ("8/8/8/8/8/8/8/8 x - - 0 1", FenField::Turn),
            ("8/8/8/8/8/8/8/8 w X - 0 1", FenField::Castling),
            ("8/8/8/8/8/8/8/8 w - e9 0 1", FenField::EnPassant),
            ("8/8/8/8/4P3/8/8/8 b - e4 0 1", FenField::EnPassant),
            ("8/8/8/8/8/8/8/8 b - e3 0 1", FenField::EnPassant),
            ("8/8/8/8/8/8/8/8 w - - x 1", FenField::Halfmoves),
            ("8/8/8/8/8/8/8/8 w - - 0 -1", FenField::Fullmoves),
        ];
        for (fen, field) in cases {
            let e = Position::from_fen(fen).expect_err(fen);
            assert_eq!(e.field, field, "{fen}: {e}");
        }
    }

    #[test]
    fn epd_ignores_operations() {
        let p = Position::from_epd("8/8/8/8/8/8/8/R6r w - - bm Ra2; id \"x\";").unwrap();
        assert_eq!(p.to_epd(), "8/8/8/8/8/8/8/R6r w - -");
    }
}
