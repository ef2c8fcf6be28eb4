//! Moves in UCI and SAN, and lines of moves.
//!
//! SAN here is antichess SAN: `K` for king moves, `=K` for promotion to
//! king, no check or mate marks (there is no check). When reading, a
//! trailing `+`, `#`, `!` or `?` is tolerated and ignored, and so is `e.p.`.

use super::moves::{Move, MoveList, UciMove};
use super::position::Position;
use super::types::{Role, Square};
use crate::vocab::line::{self, TokenError};
use std::fmt;

/// A move that could not be read or is not legal.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum MoveError {
    /// Not a move in UCI or SAN syntax.
    Syntax(String),
    /// A null move (`0000`, `--`): antichess has no passing.
    NullMove(String),
    /// Well formed, but not a legal move here; the legal moves in SAN.
    Illegal {
        /// The move as given.
        given: String,
        /// The legal moves of the position, in SAN.
        legal: Vec<String>,
    },
    /// SAN that fits more than one legal move.
    Ambiguous(String),
}

impl fmt::Display for MoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoveError::Syntax(s) => write!(f, "{s:?} is not a move in UCI or SAN"),
            MoveError::NullMove(s) => {
                write!(f, "{s:?} is a null move; antichess has no passing")
            }
            MoveError::Illegal { given, legal } => {
                if legal.is_empty() {
                    write!(
                        f,
                        "{given:?} is not legal: the game is over (no legal moves)"
                    )
                } else {
                    write!(
                        f,
                        "{given:?} is not legal here; legal moves: {}",
                        legal.join(" ")
                    )
                }
            }
            MoveError::Ambiguous(s) => write!(f, "{s:?} is ambiguous"),
        }
    }
}

impl std::error::Error for MoveError {}

/// A line of moves with a move that could not be played.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct LineError {
    /// 1-based ply of the bad move in the line.
    pub ply: usize,
    /// The FEN before it.
    pub fen: String,
    /// What went wrong.
    pub error: MoveError,
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ply {}: {} (position {})",
            self.ply, self.error, self.fen
        )
    }
}

impl std::error::Error for LineError {}

/// A parsed SAN move, before it is matched against a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SanMove {
    role: Role,
    from_file: Option<u32>,
    from_rank: Option<u32>,
    capture: bool,
    to: Square,
    promotion: Option<Role>,
}

fn parse_san(s: &str) -> Option<SanMove> {
    let mut s = s.trim_end_matches(['+', '#', '!', '?']);
    s = s.strip_suffix("e.p.").unwrap_or(s).trim_end();
    if !s.is_ascii() || s.len() < 2 {
        return None;
    }
    let b = s.as_bytes();
    let (role, mut rest) = match b[0] {
        c @ (b'N' | b'B' | b'R' | b'Q' | b'K') => (Role::from_char(c as char)?, &b[1..]),
        _ => (Role::Pawn, b),
    };
    let mut promotion = None;
    if role == Role::Pawn {
        // Promotion suffix: =Q or Q.
        let n = rest.len();
        if n >= 2 && rest[n - 2] == b'=' {
            promotion = Some(Role::from_char(rest[n - 1] as char)?);
            rest = &rest[..n - 2];
        } else if n >= 1 && matches!(rest[n - 1], b'N' | b'B' | b'R' | b'Q' | b'K') {
            promotion = Some(Role::from_char(rest[n - 1] as char)?);
            rest = &rest[..n - 1];
        }
        if promotion == Some(Role::Pawn) {
            return None;
        }
    }
    if rest.len() < 2 {
        return None;
    }
    let to = Square::parse(std::str::from_utf8(&rest[rest.len() - 2..]).ok()?)?;
    let mut pre = &rest[..rest.len() - 2];
    let mut capture = false;
    if let Some((&b'x', head)) = pre.split_last() {
        capture = true;
        pre = head;
    }
    let (mut from_file, mut from_rank) = (None, None);
    for &c in pre {
        match c {
            b'a'..=b'h' if from_file.is_none() && from_rank.is_none() => {
                from_file = Some((c - b'a') as u32)
            }
            b'1'..=b'8' if from_rank.is_none() => from_rank = Some((c - b'1') as u32),
            _ => return None,
        }
    }
    if role == Role::Pawn && (from_rank.is_some() || capture != from_file.is_some()) {
        // A pawn capture names its file and nothing else; a push names none.
        return None;
    }
    Some(SanMove {
        role,
        from_file,
        from_rank,
        capture,
        to,
        promotion,
    })
}

impl Position {
    /// The SAN of a legal move of this position.
    pub fn san(&self, m: Move) -> String {
        self.san_with(m, &self.legal_moves())
    }

    /// The SAN of a legal move, given this position's legal moves (to avoid
    /// generating them again).
    pub fn san_with(&self, m: Move, legal: &MoveList) -> String {
        let mut s = String::with_capacity(8);
        let role = m.role();
        if role == Role::Pawn {
            if m.is_capture() {
                s.push(m.from().file_char());
                s.push('x');
            }
            s.push_str(&m.to().to_string());
            if let Some(p) = m.promotion() {
                s.push('=');
                s.push(p.upper_char());
            }
            return s;
        }
        s.push(role.upper_char());
        let rivals: Vec<Move> = legal
            .iter()
            .copied()
            .filter(|o| o.role() == role && o.to() == m.to() && o.from() != m.from())
            .collect();
        if !rivals.is_empty() {
            let same_file = rivals.iter().any(|o| o.from().file() == m.from().file());
            let same_rank = rivals.iter().any(|o| o.from().rank() == m.from().rank());
            if !same_file {
                s.push(m.from().file_char());
            } else if !same_rank {
                s.push(m.from().rank_char());
            } else {
                s.push(m.from().file_char());
                s.push(m.from().rank_char());
            }
        }
        if m.is_capture() {
            s.push('x');
        }
        s.push_str(&m.to().to_string());
        s
    }

    /// Finds the legal move matching a UCI move.
    pub fn find_uci(&self, uci: &UciMove) -> Option<Move> {
        self.legal_moves().iter().copied().find(|m| m.uci() == *uci)
    }

    /// Reads one move in UCI (`e2e4`, `e7e8k`) or SAN (`e4`, `Nf3`, `exd5`,
    /// `e8=K`) and matches it against the legal moves.
    pub fn parse_move(&self, s: &str) -> Result<Move, MoveError> {
        let s = s.trim();
        let legal = self.legal_moves();
        let illegal = || {
            let mut sans: Vec<String> = legal.iter().map(|m| self.san_with(*m, &legal)).collect();
            sans.sort();
            MoveError::Illegal {
                given: s.to_string(),
                legal: sans,
            }
        };
        if let Some(u) = UciMove::parse(s) {
            return legal
                .iter()
                .copied()
                .find(|m| m.uci() == u)
                .ok_or_else(illegal);
        }
        let san = parse_san(s).ok_or_else(|| MoveError::Syntax(s.to_string()))?;
        let mut found = None;
        for &m in legal.iter() {
            let ok = m.role() == san.role
                && m.to() == san.to
                && m.promotion() == san.promotion
                && san.from_file.is_none_or(|f| m.from().file() == f)
                && san.from_rank.is_none_or(|r| m.from().rank() == r)
                && (!san.capture || m.is_capture());
            if ok {
                if found.is_some() {
                    return Err(MoveError::Ambiguous(s.to_string()));
                }
                found = Some(m);
            }
        }
        found.ok_or_else(illegal)
    }

    /// Plays a line of moves (UCI or SAN, mixed) from this position, read
    /// by [`crate::vocab::line`]: each part may hold several moves
    /// (white space or commas), move numbers, result marks and annotations
    /// are dropped, a null move or a bare number is an error. The error
    /// names the 1-based ply, the move and the legal moves there (sorted).
    pub fn play_line<S: AsRef<str>>(
        &self,
        moves: &[S],
    ) -> Result<(Position, Vec<Move>), LineError> {
        let mut pos = *self;
        let mut played = Vec::with_capacity(moves.len());
        for token in line::each(moves) {
            let parsed = match token {
                Ok(t) => pos.parse_move(&t),
                Err(TokenError::NullMove { token, .. }) => Err(MoveError::NullMove(token)),
                Err(TokenError::NotAMove { token, .. }) => Err(MoveError::Syntax(token)),
            };
            match parsed {
                Ok(m) => {
                    pos.play_unchecked(m);
                    played.push(m);
                }
                Err(error) => {
                    return Err(LineError {
                        ply: played.len() + 1,
                        fen: pos.to_fen(),
                        error,
                    });
                }
            }
        }
        Ok((pos, played))
    }

    /// Plays a line given as one string (see [`Position::play_line`]).
    pub fn play_line_str(&self, line: &str) -> Result<(Position, Vec<Move>), LineError> {
        self.play_line(&[line])
    }
}

/// The SAN of each move of a line played from `start`.
pub fn line_san(start: &Position, moves: &[Move]) -> Vec<String> {
    let mut pos = *start;
    moves
        .iter()
        .map(|&m| {
            let s = pos.san(m);
            pos.play_unchecked(m);
            s
        })
        .collect()
}

/// Formats a line as numbered SAN from `start`: `1. e3 d5 2. Qg4`.
pub fn numbered_san(start: &Position, moves: &[Move]) -> String {
    let sans = line_san(start, moves);
    let mut out = String::new();
    let mut number = start.fullmoves();
    let mut white = start.turn() == super::types::Color::White;
    for (i, s) in sans.iter().enumerate() {
        if white {
            out.push_str(&format!("{number}. "));
        } else if i == 0 {
            out.push_str(&format!("{number}... "));
        }
        out.push_str(s);
        out.push(' ');
        if !white {
            number += 1;
        }
        white = !white;
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn san_and_uci_read_the_same_move() {
        let p = Position::startpos();
        assert_eq!(p.parse_move("e3").unwrap(), p.parse_move("e2e3").unwrap());
        assert_eq!(p.parse_move("Nf3").unwrap().to_string(), "g1f3");
        let (p2, _) = p.play_line(&["e3", "d5", "Qg4"]).unwrap();
        // Black must capture the queen.
        assert_eq!(p2.legal_moves().len(), 1);
        assert_eq!(p2.san(p2.legal_moves()[0]), "Bxg4");
    }

    #[test]
    fn illegal_line_names_the_ply_and_legal_moves() {
        let e = Position::startpos()
            .play_line(&["e3", "d5", "Nd2"])
            .unwrap_err();
        assert_eq!(e.ply, 3);
        let MoveError::Illegal { legal, .. } = &e.error else {
            panic!("{e}")
        };
        assert!(legal.contains(&"Qg4".to_string()));
        let e = Position::startpos().play_line(&["e9"]).unwrap_err();
        assert!(matches!(e.error, MoveError::Syntax(_)));
    }

    #[test]
    fn promotion_to_king() {
        let p = Position::from_fen("8/P7/8/8/8/8/8/7k w - - 0 1").unwrap();
        let m = p.parse_move("a8=K").unwrap();
        assert_eq!(m.to_string(), "a7a8k");
        assert_eq!(p.san(m), "a8=K");
        assert_eq!(p.parse_move("a7a8k").unwrap(), m);
        assert_eq!(p.legal_moves().len(), 5);
    }

    #[test]
    fn disambiguation() {
        let p = Position::from_fen("8/8/8/8/8/8/8/N3N3 w - - 0 1").unwrap();
        let m = p.parse_move("Nac2").unwrap();
        assert_eq!(p.san(m), "Nac2");
        assert!(matches!(p.parse_move("Nc2"), Err(MoveError::Ambiguous(_))));
    }

    #[test]
    fn lines_are_read_by_the_shared_tokenizer() {
        let p = Position::startpos();
        let (_, m) = p.play_line(&["1. e3!? d5??", "2.Qg4 0-1"]).unwrap();
        assert_eq!(m.len(), 3);
        let e = p.play_line_str("e2e3,d7d5 2.x").unwrap_err();
        assert_eq!((e.ply, e.error), (3, MoveError::Syntax("x".into())));
        let e = p.play_line_str("e3 0000 g6").unwrap_err();
        assert_eq!(
            (e.ply, e.error.clone()),
            (2, MoveError::NullMove("0000".into()))
        );
        assert!(
            e.to_string().starts_with("ply 2: \"0000\" is a null move"),
            "{e}"
        );
        let e = p.play_line_str("1. e3 12 g6").unwrap_err();
        assert_eq!((e.ply, e.error), (2, MoveError::Syntax("12".into())));
        // The first error wins, a rules error before a text error.
        let e = p.play_line_str("e3 e5e4 0000").unwrap_err();
        assert!(matches!(e.error, MoveError::Illegal { .. }), "{e}");
    }
}
