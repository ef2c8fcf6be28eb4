//! What the proof says at a line: the one answer `browse`, the JSON
//! endpoint and the page are all drawn from.

use super::source::{Child, Lookup, ProofSource, SourceError};
use crate::rules::{Color, LineError, Move, Outcome, Position, Rules, line_san};
use crate::vocab::line;
use serde::Serialize;
use std::fmt;
use std::fmt::Write as _;

/// The longest line accepted, in plies.
pub const MAX_PLIES: usize = 1024;

/// A request that cannot be answered.
#[derive(Debug)]
pub enum ViewError {
    /// A move that is malformed or illegal (names the ply and position).
    Line(LineError),
    /// More plies than [`MAX_PLIES`].
    TooLong(usize),
    /// The proof could not be read.
    Source(SourceError),
}

impl ViewError {
    /// Whether the error is the request's fault (HTTP 400) rather than the
    /// proof's (HTTP 500).
    pub fn is_bad_request(&self) -> bool {
        !matches!(self, ViewError::Source(_))
    }
}

impl fmt::Display for ViewError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ViewError::Line(e) => write!(f, "bad move at {e}"),
            ViewError::TooLong(n) => {
                write!(f, "line of {n} moves is longer than {MAX_PLIES}")
            }
            ViewError::Source(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ViewError {}

/// What the proof says of the position.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ProofStatus {
    /// The line is not in the proof.
    Off,
    /// The line leads toward a proof but has not reached its root.
    Before,
    /// In the proof, the winner to move (its move is the marked one).
    WinnerToMove(Color),
    /// In the proof, the loser to move (every legal move is answered).
    LoserToMove(Color),
    /// The game is over here.
    GameOver(Outcome),
    /// A leaf that is not game over: won by an endgame table.
    TableWin(Color),
    /// A leaf that is neither game over nor a position the endgame tables
    /// score (more than [`crate::tablefile::MAX_MEN`] men): the proof
    /// stops here without showing the win.
    OpenLeaf(Color),
    /// In the proof, winner unknown.
    InProof,
}

impl ProofStatus {
    /// A one-line description: "win for White", "not in the proof", ...
    pub fn describe(&self) -> String {
        match self {
            ProofStatus::Off => "not in the proof".into(),
            ProofStatus::Before => "not in the proof yet; the moves below lead into it".into(),
            ProofStatus::WinnerToMove(c) => {
                format!(
                    "win for {} ({} to move; the winning move is marked)",
                    name(*c),
                    name(*c)
                )
            }
            ProofStatus::LoserToMove(c) => format!(
                "win for {} ({} to move; every reply is answered)",
                name(*c),
                name(!*c)
            ),
            ProofStatus::GameOver(Outcome::Win(c)) => format!("game over: {} wins", name(*c)),
            ProofStatus::GameOver(Outcome::Draw) => "game over: draw".into(),
            ProofStatus::TableWin(c) => format!("win for {} (endgame table leaf)", name(*c)),
            ProofStatus::OpenLeaf(c) => format!(
                "open leaf: the proof of a win for {} stops here (not a finished game)",
                name(*c)
            ),
            ProofStatus::InProof => "in the proof (winner unknown)".into(),
        }
    }

    /// A short word for machines: `off`, `before`, `win-white`, ...
    pub fn code(&self) -> String {
        match self {
            ProofStatus::Off => "off".into(),
            ProofStatus::Before => "before".into(),
            ProofStatus::WinnerToMove(c)
            | ProofStatus::LoserToMove(c)
            | ProofStatus::TableWin(c) => {
                format!("win-{c}")
            }
            ProofStatus::GameOver(Outcome::Win(c)) => format!("game-over-{c}"),
            ProofStatus::GameOver(Outcome::Draw) => "game-over-draw".into(),
            ProofStatus::OpenLeaf(c) => format!("open-leaf-{c}"),
            ProofStatus::InProof => "in-proof".into(),
        }
    }
}

/// One move at the node.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct MoveView {
    /// The move.
    pub mv: Move,
    /// UCI.
    pub uci: String,
    /// SAN.
    pub san: String,
    /// Subtree size.
    pub nodes: u64,
    /// The winner's move (marked).
    pub winning: bool,
}

/// Everything shown for a line.
#[derive(Clone, Debug)]
pub struct NodeView {
    /// The stalemate rule.
    pub rules: Rules,
    /// The line played, from the start position.
    pub line: Vec<Move>,
    /// The line in SAN.
    pub line_san: Vec<String>,
    /// The line in UCI.
    pub line_uci: Vec<String>,
    /// The position reached.
    pub pos: Position,
    /// Whether the game is over at `pos`.
    pub game_over: bool,
    /// What the proof says.
    pub status: ProofStatus,
    /// The moves, largest subtree first.
    pub moves: Vec<MoveView>,
}

/// The HTTP endpoint's answer (the shape the lichess Watkins endpoint
/// served).
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct ApiAnswer {
    /// Whether the game is over at the position.
    pub game_over: bool,
    /// The moves of the proof here, largest subtree first.
    pub moves: Vec<ApiMove>,
}

/// One move of [`ApiAnswer`].
#[derive(Serialize, Clone, Debug, PartialEq, Eq)]
pub struct ApiMove {
    /// UCI.
    pub uci: String,
    /// SAN.
    pub san: String,
    /// Subtree size.
    pub nodes: u64,
}

/// Plays `moves` from the start position and asks the source. Each part
/// may hold several moves (UCI or SAN), read as every command reads a
/// line ([`crate::vocab::line`]: white space or commas, move numbers,
/// results and annotations dropped, null moves and bare numbers refused).
pub fn view<S: AsRef<str>>(
    source: &dyn ProofSource,
    rules: Rules,
    moves: &[S],
) -> Result<NodeView, ViewError> {
    let plies = line::each(moves).take_while(Result::is_ok).count();
    if plies > MAX_PLIES {
        return Err(ViewError::TooLong(plies));
    }
    let start = Position::startpos();
    let (pos, line) = start.play_line(moves).map_err(ViewError::Line)?;
    let lookup = source.lookup(&line, &pos).map_err(ViewError::Source)?;
    let outcome = pos.outcome(rules);
    let (status, children) = match lookup {
        Lookup::Off => (ProofStatus::Off, Vec::new()),
        Lookup::Before { entries } => (ProofStatus::Before, entries),
        Lookup::In {
            winner,
            children,
            table_leaf,
        } => {
            let status = match (outcome, winner) {
                (Some(o), _) => ProofStatus::GameOver(o),
                (None, Some(w)) if table_leaf => ProofStatus::TableWin(w),
                (None, Some(w)) if children.is_empty() => ProofStatus::OpenLeaf(w),
                (None, Some(w)) if w == pos.turn() => ProofStatus::WinnerToMove(w),
                (None, Some(w)) => ProofStatus::LoserToMove(w),
                (None, None) => ProofStatus::InProof,
            };
            (status, children)
        }
    };
    let winner_moves = matches!(status, ProofStatus::WinnerToMove(_));
    let legal = pos.legal_moves();
    let mut mv: Vec<MoveView> = children
        .into_iter()
        .map(|Child { mv, nodes }| MoveView {
            mv,
            uci: mv.uci().to_string(),
            san: pos.san_with(mv, &legal),
            nodes,
            winning: winner_moves,
        })
        .collect();
    mv.sort_by(|a, b| b.nodes.cmp(&a.nodes).then_with(|| a.uci.cmp(&b.uci)));
    Ok(NodeView {
        rules,
        line_san: line_san(&start, &line),
        line_uci: line.iter().map(|m| m.uci().to_string()).collect(),
        line,
        game_over: outcome.is_some(),
        pos,
        status,
        moves: mv,
    })
}

impl NodeView {
    /// The endpoint's answer.
    pub fn api(&self) -> ApiAnswer {
        ApiAnswer {
            game_over: self.game_over,
            moves: self
                .moves
                .iter()
                .map(|m| ApiMove {
                    uci: m.uci.clone(),
                    san: m.san.clone(),
                    nodes: m.nodes,
                })
                .collect(),
        }
    }

    /// The endpoint's answer as JSON text.
    pub fn json(&self) -> String {
        serde_json::to_string(&self.api()).expect("plain data serializes")
    }

    /// The line as numbered SAN (`1. e3 d5 2. Qg4`), or `(start)`.
    pub fn numbered(&self) -> String {
        if self.line.is_empty() {
            "(start position)".into()
        } else {
            crate::rules::numbered_san(&Position::startpos(), &self.line)
        }
    }

    /// The terminal text of `antiproof browse`.
    pub fn text(&self) -> String {
        let mut s = String::new();
        s.push_str(&board_text(&self.pos));
        let _ = writeln!(s);
        let _ = writeln!(s, "Line:    {}", self.numbered());
        let _ = writeln!(s, "FEN:     {}", self.pos.to_fen());
        let _ = writeln!(s, "To move: {}", name(self.pos.turn()));
        let _ = writeln!(s, "Rules:   {}", self.rules);
        let _ = writeln!(s, "Proof:   {}", self.status.describe());
        if self.moves.is_empty() {
            let _ = writeln!(s, "Moves:   none");
        } else {
            let _ = writeln!(s, "Moves:   {}", self.moves.len());
            let w = self.moves.iter().map(|m| m.san.len()).max().unwrap_or(0);
            for m in &self.moves {
                let mark = if m.winning { '*' } else { ' ' };
                let _ = writeln!(
                    s,
                    "  {mark} {:<w$}  {:<5}  {:>12}",
                    m.san,
                    m.uci,
                    group(m.nodes),
                    w = w
                );
            }
            if self.moves.iter().any(|m| m.winning) {
                let _ = writeln!(s, "  (* the winner's move; sizes in positions)");
            } else {
                let _ = writeln!(s, "  (sizes in positions)");
            }
        }
        s
    }
}

/// What a move shown at a node leads to: the child's place in the proof.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Leads {
    /// A node of the proof with moves below it.
    Proven,
    /// A leaf of the proof that is neither a finished game nor a position
    /// the endgame tables score: not proven.
    OpenLeaf,
    /// A leaf scored by endgame tables (at most
    /// [`crate::tablefile::MAX_MEN`] men).
    TableLeaf,
    /// A finished game.
    GameOver,
    /// Not in a proof yet, but on the way into one (before its root).
    Toward,
    /// Not in the proof.
    Off,
}

impl Leads {
    /// In words, for the page: `proven`, `open leaf`, ...
    pub fn describe(self) -> &'static str {
        match self {
            Leads::Proven => "proven",
            Leads::OpenLeaf => "open leaf",
            Leads::TableLeaf => "table leaf",
            Leads::GameOver => "game over",
            Leads::Toward => "toward a proof",
            Leads::Off => "not in the proof",
        }
    }
}

/// What each of `view`'s moves leads to (in the order of `view.moves`):
/// one lookup of each child.
pub fn leads(
    source: &dyn ProofSource,
    rules: Rules,
    view: &NodeView,
) -> Result<Vec<Leads>, ViewError> {
    let mut line = view.line.clone();
    view.moves
        .iter()
        .map(|m| {
            let pos = view.pos.play(m.mv);
            line.push(m.mv);
            let found = source.lookup(&line, &pos).map_err(ViewError::Source);
            line.pop();
            Ok(match found? {
                Lookup::Off => Leads::Off,
                Lookup::Before { .. } => Leads::Toward,
                Lookup::In { .. } if pos.outcome(rules).is_some() => Leads::GameOver,
                Lookup::In { children, .. } if !children.is_empty() => Leads::Proven,
                Lookup::In {
                    table_leaf: true, ..
                } => Leads::TableLeaf,
                Lookup::In { .. } => Leads::OpenLeaf,
            })
        })
        .collect()
}

/// `White` or `Black`.
pub fn name(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}

/// Digits grouped by thousands: `97,097,576`.
pub fn group(n: u64) -> String {
    let d = n.to_string();
    let mut out = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The board as text: ranks 8 to 1, files a to h, White upper case.
pub fn board_text(pos: &Position) -> String {
    let mut s = String::new();
    for rank in (0..8).rev() {
        let _ = write!(s, "  {} ", rank + 1);
        for file in 0..8 {
            let sq = crate::rules::Square::from_coords(file, rank).expect("on the board");
            let c = pos.piece_at(sq).map_or('.', |p| p.char());
            let _ = write!(s, " {c}");
        }
        s.push('\n');
    }
    s.push_str("     a b c d e f g h\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Key, Record};
    use crate::web::source::RecordSource;
    use std::collections::HashMap;

    fn empty() -> RecordSource<HashMap<Key, Record>> {
        RecordSource::new("empty".into(), HashMap::new(), Rules::International)
    }

    /// A win-tree leaf that is not a finished game and has more men than
    /// the tables hold is an open leaf, not a table leaf.
    #[test]
    fn a_cut_tree_shows_its_open_leaf() {
        use crate::wintree::{ProofDag, WinTree, WriteOptions, write_tree};
        let e3 = Position::startpos().parse_move("e3").unwrap();
        let mut dag = ProofDag::new();
        let (root, leaf) = (dag.add_node(), dag.add_node());
        dag.add_edge(root, e3.watkins_code(), leaf);
        let opts = WriteOptions {
            size_table: true,
            size_depth: None,
        };
        let bytes = write_tree(&dag, root, &[], &opts).unwrap().bytes;
        let tree = WinTree::from_vec(bytes).unwrap();
        let src = crate::web::source::TreeSource::new(
            "cut".into(),
            tree,
            Rules::International,
            Some(Color::White),
        )
        .unwrap();
        let v = view(&src, Rules::International, &[""]).unwrap();
        assert_eq!(v.status, ProofStatus::WinnerToMove(Color::White));
        assert_eq!(
            leads(&src, Rules::International, &v).unwrap(),
            [Leads::OpenLeaf]
        );
        let v = view(&src, Rules::International, &["e3"]).unwrap();
        assert_eq!(v.status, ProofStatus::OpenLeaf(Color::White));
        assert!(
            v.status.describe().starts_with("open leaf"),
            "{}",
            v.status.describe()
        );
        assert_eq!(v.status.code(), "open-leaf-white");
        // Off the proof, the moves lead nowhere.
        let v = view(&src, Rules::International, &["e4"]).unwrap();
        assert!(leads(&src, Rules::International, &v).unwrap().is_empty());
    }

    #[test]
    fn groups_digits() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(97_097_576), "97,097,576");
    }

    #[test]
    fn board_text_is_rank_8_first() {
        let t = board_text(&Position::startpos());
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "  8  r n b q k b n r");
        assert_eq!(lines[7], "  1  R N B Q K B N R");
        assert_eq!(lines[8], "     a b c d e f g h");
    }

    #[test]
    fn lines_off_every_proof_and_bad_lines() {
        let v = view(&empty(), Rules::International, &["e2e3", "d7d5"]).unwrap();
        assert_eq!(v.status, ProofStatus::Off);
        assert_eq!(v.json(), r#"{"game_over":false,"moves":[]}"#);
        assert_eq!(v.numbered(), "1. e3 d5");
        let e = view(&empty(), Rules::International, &["e2e3", "e2e4"]).unwrap_err();
        assert!(e.is_bad_request());
        assert!(e.to_string().contains("ply 2"), "{e}");
        let long = vec!["g1f3"; MAX_PLIES + 1];
        let e = view(&empty(), Rules::International, &long).unwrap_err();
        assert!(matches!(e, ViewError::TooLong(_)));
        let v = view(&empty(), Rules::International, &["1. e3 d5, 2.Qg4!"]).unwrap();
        assert_eq!(v.numbered(), "1. e3 d5 2. Qg4");
        let e = view(&empty(), Rules::International, &["e3 0000"]).unwrap_err();
        assert!(e.is_bad_request());
        assert!(
            e.to_string().contains("ply 2: \"0000\" is a null move"),
            "{e}"
        );
    }
}
