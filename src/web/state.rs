//! What the page shows at a line, as one object: `GET /api/line?line=...`
//! answers it as JSON, the page embeds it, and the page's script only
//! moves the board and swaps in the panel's HTML it carries (the logic is
//! here, server-side, not in the browser).

use super::solved::{Entry, Here, Solved};
use super::source::ProofSource;
use super::view::{self, Leads, NodeView, ViewError};
use crate::rules::{Move, Position, Rules};
use serde::Serialize;

/// One move of the proof at the line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StateMove {
    /// UCI.
    pub uci: String,
    /// SAN.
    pub san: String,
    /// Subtree size (distinct positions).
    pub nodes: u64,
    /// The winner's move.
    pub winning: bool,
    /// What it leads to.
    pub leads: Leads,
    /// Its entry in the solved-openings table, where the table speaks of
    /// the node (the start position, after 1.e3).
    pub table: Option<Entry>,
}

/// Everything the page shows at a line.
#[derive(Clone, Debug, Serialize)]
pub struct PageState {
    /// The line, UCI.
    pub line: Vec<String>,
    /// The line, SAN.
    pub san: Vec<String>,
    /// The position's FEN.
    pub fen: String,
    /// The side to move, `white` or `black`.
    pub turn: &'static str,
    /// The last move's squares (`["e2", "e3"]`).
    pub last_move: Option<[String; 2]>,
    /// Whether the game is over.
    pub game_over: bool,
    /// What the proof says, for machines (`win-white`, `off`, ...).
    pub status: String,
    /// What the proof says, in words.
    pub status_text: String,
    /// The proof's moves here, largest subtree first.
    pub moves: Vec<StateMove>,
    /// Every legal move here, UCI (what the board lets one play).
    pub legal: Vec<String>,
    /// The move "forward" follows: the first of `moves`.
    pub forward: Option<String>,
    /// The solved-openings table at this node, where it speaks of it.
    pub table: Option<Here>,
    /// This position on lichess's analysis board.
    pub lichess: String,
    /// The page's title.
    pub title: String,
    /// The panel beside the board, HTML (left out where the page embeds
    /// the state, since the page holds it already).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub panel: String,
    /// The position (for the page's drawing without scripts).
    #[serde(skip)]
    pub pos: Position,
    /// The last move.
    #[serde(skip)]
    pub last: Option<Move>,
}

/// lichess's analysis board at a position (spaces in the FEN written as
/// `_`, as lichess writes them).
pub fn lichess_url(fen: &str) -> String {
    format!(
        "https://lichess.org/analysis/antichess/{}",
        fen.replace(' ', "_")
    )
}

/// The state at `moves` (one string, moves as every command reads them).
pub fn state(
    source: &dyn ProofSource,
    rules: Rules,
    solved: &Solved,
    moves: &str,
) -> Result<PageState, ViewError> {
    let v = view::view(source, rules, &[moves])?;
    let leads = view::leads(source, rules, &v)?;
    Ok(of_view(&v, &leads, solved.at(&v)))
}

fn of_view(v: &NodeView, leads: &[Leads], table: Option<Here>) -> PageState {
    let moves = v
        .moves
        .iter()
        .zip(leads)
        .map(|(m, &leads)| StateMove {
            uci: m.uci.clone(),
            san: m.san.clone(),
            nodes: m.nodes,
            winning: m.winning,
            leads,
            table: table.as_ref().and_then(|t| t.entry(&m.uci).cloned()),
        })
        .collect();
    let fen = v.pos.to_fen();
    let mut st = PageState {
        line: v.line_uci.clone(),
        san: v.line_san.clone(),
        turn: v.pos.turn().name(),
        last_move: v
            .line
            .last()
            .map(|m| [m.from().to_string(), m.to().to_string()]),
        game_over: v.game_over,
        status: v.status.code(),
        status_text: v.status.describe(),
        moves,
        legal: if v.game_over {
            Vec::new()
        } else {
            v.pos
                .legal_moves()
                .iter()
                .map(|m| m.uci().to_string())
                .collect()
        },
        forward: v.moves.first().map(|m| m.uci.clone()),
        table,
        lichess: lichess_url(&fen),
        fen,
        title: format!("antiproof: {}", v.numbered()),
        panel: String::new(),
        pos: v.pos,
        last: v.line.last().copied(),
    };
    st.panel = super::page::panel(&st);
    st
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Key, Record};
    use crate::web::source::RecordSource;
    use std::collections::HashMap;

    #[test]
    fn off_every_proof_the_board_still_plays() {
        let empty = RecordSource::new(
            "empty".into(),
            HashMap::<Key, Record>::new(),
            Rules::International,
        );
        let s = state(&empty, Rules::International, &Solved::default(), "e3 g6").unwrap();
        assert_eq!(s.line, ["e2e3", "g7g6"]);
        assert_eq!(s.san, ["e3", "g6"]);
        assert_eq!(s.turn, "white");
        assert_eq!(s.last_move, Some(["g7".to_string(), "g6".to_string()]));
        assert_eq!(s.status, "off");
        assert!(s.moves.is_empty() && s.forward.is_none() && s.table.is_none());
        assert!(s.legal.contains(&"d1g4".to_string()));
        assert_eq!(
            s.lichess,
            "https://lichess.org/analysis/antichess/rnbqkbnr/pppppp1p/6p1/8/8/4P3/PPPP1PPP/RNBQKBNR_w_-_-_0_2"
        );
        assert_eq!(s.title, "antiproof: 1. e3 g6");
        assert!(s.panel.contains("not in the proof"), "{}", s.panel);
        // At the start the table lists White's 20 first moves.
        let s = state(&empty, Rules::International, &Solved::default(), "").unwrap();
        assert_eq!(s.table.unwrap().entries.len(), 20);
        assert_eq!(s.legal.len(), 20);
        assert!(s.last_move.is_none());
        let e = state(&empty, Rules::International, &Solved::default(), "e3 e6 e5").unwrap_err();
        assert!(e.is_bad_request() && e.to_string().contains("ply 3"), "{e}");
    }
}
