//! The independent checker: certifies a proof, from a win-tree file or from
//! the proof store, or names the exact line where it fails.
//!
//! # Independence
//!
//! This module trusts nothing the prover computed. It enumerates moves and
//! decides game ends with shakmaty's `Antichess` (lichess's rules library)
//! only, and imports nothing from `crate::rules`, `crate::search` or
//! `crate::tables` (a test greps these sources to keep it so). A bug in the
//! prover's own move generator (a missed en-passant defence, a wrong
//! promotion, a stalemate scored the wrong way) could make the prover "prove"
//! a false win; the same bug in a checker built on the same generator would
//! pass it. A second, independent implementation of the rules catches it.
//! Positions are compared by their full encoding (placement, side to move,
//! legal en-passant square), never by a hash.
//!
//! # What is checked
//!
//! * At each node of the winner: exactly one child, whose move is legal.
//! * At each node of the loser: every legal move present exactly once,
//!   nothing else.
//! * Every leaf: a finished game won by the winner under the declared rules
//!   ([`game::game_end`]). A leaf of 4 men or fewer that is not finished
//!   "rests on endgame tables": counted, and the proof is then not
//!   certified ([`Verdict::NotCertified`]), unless endgame tables are
//!   given ([`LeafTables`]): then the leaf must be scored a win for the
//!   winner by a table that is certified in the same run ([`tables`]).
//! * Transpositions: the target holds the same full position as the
//!   pointer; no cycle through transpositions.
//! * Under the fifty-move rule ([`TreeOptions::fifty_move`], win-tree
//!   files): every position that is not a finished game is reached with a
//!   half-move clock under 100 by every path into it, transpositions
//!   included (the worst clock over all paths, in time linear in the
//!   file: see `tree/clock.rs`); a finished game reached at 100 still
//!   counts.
//! * Files: every index in range, flag combinations valid, the slots tile
//!   the file in depth-first pre-order (each slot reached exactly once).
//!
//! [`check_tree`] checks a win-tree file in parallel (rayon) in memory
//! bounded by a bitset over the slots plus the positions of transposition
//! targets; [`check_store`] walks the store from a position.

pub mod cover;
pub mod game;
pub mod leaf_tables;
mod reason;
mod store;
mod tree;

pub use leaf_tables::{LeafTables, TablesUsed};
pub use reason::{MAX_PLIES, Reason, ReasonKind, Rejection};
pub use store::{StoreSource, check_store, check_store_with};
pub use tree::{TreeOptions, check_tree};

use shakmaty::Color;
use shakmaty::variant::Antichess;
use std::fmt;
use std::time::{Duration, Instant};

/// The stalemate rule a proof is checked under, the part of its
/// [`RuleSet`] beside the fifty-move rule (both from the rules-free
/// `crate::vocab`).
pub use crate::vocab::{RuleSet, Rules};

/// The verdict of a check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every branch ends in a finished game won by the winner.
    Certified,
    /// Sound as far as checked, but this many leaves rest on endgame
    /// tables (not certified by this project yet).
    NotCertified {
        /// Leaves of 4 men or fewer that are not finished games.
        table_leaves: u64,
    },
    /// Sound as far as it goes, but leaves are *open* (only when
    /// [`TreeOptions::open_leaves`] is set): not finished games and not
    /// scored by a certified endgame table. They are listed in
    /// [`Report::open`]; proving them discharges the proof.
    Open {
        /// Distinct open positions.
        open_leaves: u64,
    },
    /// The proof is wrong.
    Rejected(Box<Rejection>),
}

/// An open leaf (see [`Verdict::Open`]): a position the proof still owes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenLeaf {
    /// The position as EPD: placement, side to move, castling (always
    /// `-`), en-passant square only when an en-passant capture is legal.
    pub epd: String,
    /// The moves from the start position (the file's prolog included), UCI.
    pub line: Vec<String>,
    /// The same line in numbered SAN.
    pub san: String,
    /// The leaf's node (the first one in file order holding the position).
    pub node: u32,
}

/// The figures of one subtree of the node whose moves are reported one by
/// one (see [`Report::replies`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The move, SAN.
    pub san: String,
    /// Distinct positions of the subtree (its nodes that are not
    /// transpositions; a transposition into another reply's subtree is
    /// counted there, once).
    pub positions: u64,
    /// Positions counting repeats (each transposition pointer of the
    /// subtree counts its position again).
    pub positions_with_repeats: u64,
    /// Leaves of the subtree by kind.
    pub leaves: Leaves,
    /// Open leaves of the subtree, each distinct position once (a position
    /// open in two replies is counted in both).
    pub open: u64,
}

/// Leaves by how the game ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Leaves {
    /// The side to move has no pieces left.
    pub no_pieces: u64,
    /// The side to move has pieces and no legal move.
    pub stalemate: u64,
    /// Other finished games (the side not to move has no pieces).
    pub other: u64,
    /// Leaves resting on endgame tables (4 men or fewer, not finished).
    pub tables: u64,
    /// Of those, leaves no table scored (no tables given, or a table
    /// missing from the directory): the proof is not certified.
    pub tables_unscored: u64,
}

impl Leaves {
    /// Adds another count.
    pub fn add(&mut self, o: &Leaves) {
        self.no_pieces += o.no_pieces;
        self.stalemate += o.stalemate;
        self.other += o.other;
        self.tables += o.tables;
        self.tables_unscored += o.tables_unscored;
    }
}

/// Positions that Watkins' published endgame tables are known to score
/// wrongly (EPD: placement, side to move, castling, legal en-passant
/// square), with what is known. See docs/tables.md.
const KNOWN_TABLE_FAULTS: &[(&str, &str)] = &[
    (
        "8/8/8/5P2/5p1p/8/6P1/8 w - -",
        "a known fault of Watkins' published tables (the 2019 double en passant: \
         they score it a win for White, but after g4 Black takes hxg3 e.p. and holds)",
    ),
    (
        "8/8/8/5P2/5pPp/8/8/8 b - g3",
        "a known fault of Watkins' published tables (the 2019 double en passant: \
         they score it a win for White, but hxg3 e.p. holds)",
    ),
];

/// What is known of a position the published tables score wrongly.
fn known_fault(pos: &Antichess) -> Option<&'static str> {
    let epd = game::epd(pos);
    KNOWN_TABLE_FAULTS
        .iter()
        .find(|(e, _)| *e == epd)
        .map(|(_, what)| *what)
}

/// Counts a leaf of 4 men or fewer that is not a finished game: scored by
/// `tables` when given (its value must be a win for `winner`; a missing
/// table leaves it unscored, any other table error rejects it), else
/// unscored.
pub(crate) fn table_leaf(
    tables: Option<&LeafTables>,
    pos: &Antichess,
    winner: Color,
    leaves: &mut Leaves,
) -> Result<(), Reason> {
    use shakmaty::Position;
    leaves.tables += 1;
    let Some(t) = tables else {
        leaves.tables_unscored += 1;
        return Ok(());
    };
    match t.score(pos) {
        Ok(v) => {
            let won = match v {
                crate::tablefile::Value::Win(_) => pos.turn() == winner,
                crate::tablefile::Value::Loss(_) => pos.turn() != winner,
                crate::tablefile::Value::Draw => false,
            };
            if won {
                Ok(())
            } else {
                Err(Reason::TableLeafNotWon(format!(
                    "the endgame tables score it {v} for {} (to move), not a win for {}{}",
                    game::color_name(pos.turn()),
                    game::color_name(winner),
                    known_fault(pos).map_or(String::new(), |f| format!("; {f}"))
                )))
            }
        }
        Err(crate::tablefile::TableError::Missing { .. }) => {
            leaves.tables_unscored += 1;
            Ok(())
        }
        Err(e) => Err(Reason::TableNotCertified(format!(
            "endgame table for this leaf: {e}"
        ))),
    }
}

/// Sets the verdict of a walk that found no fault: certified, unless
/// leaves rest on tables. With tables, the tables that scored leaves (and
/// those below them) are certified now; a failure rejects the proof.
pub(crate) fn finish_tables(report: &mut Report, tables: Option<&LeafTables>) {
    if matches!(report.verdict, Verdict::Rejected(_)) {
        return;
    }
    if let Some(t) = tables
        && report.leaves.tables > report.leaves.tables_unscored
    {
        match t.certify_used() {
            Ok(u) => report.tables = Some(u),
            Err(e) => {
                report.verdict = Verdict::Rejected(Box::new(Rejection {
                    line: report.root_line.clone(),
                    fen: report.root_fen.clone(),
                    node: None,
                    reason: Reason::TableNotCertified(e),
                }));
                return;
            }
        }
    }
    if let Some(t) = tables
        && report.leaves.tables_unscored > 0
    {
        let missing = t.missing();
        if !missing.is_empty() {
            report.tables_missing = Some((t.dir().display().to_string(), missing));
        }
    }
    report.verdict = if report.leaves.tables_unscored > 0 {
        Verdict::NotCertified {
            table_leaves: report.leaves.tables_unscored,
        }
    } else {
        Verdict::Certified
    };
}

/// The report of a check.
#[derive(Clone, Debug)]
pub struct Report {
    /// The rule set checked under: its stalemate rule, and whether the
    /// fifty-move rule too.
    pub rule_set: RuleSet,
    /// The root position.
    pub root_fen: String,
    /// The line from the start position to the root, SAN.
    pub root_line: String,
    /// The winner.
    pub winner: Color,
    /// Distinct positions checked (each non-transposition node once).
    pub positions: u64,
    /// Positions reached counting repeats (each transposition pointer
    /// counts its position again).
    pub positions_with_repeats: u64,
    /// Leaves by kind.
    pub leaves: Leaves,
    /// Plies of the longest line of the proof (through transpositions).
    pub longest_line: u64,
    /// Under the fifty-move rule (win-tree files): the largest half-move
    /// clock, over every path, at a position that is not a finished game
    /// (under 100 in a sound proof). `None` without the rule.
    pub worst_clock: Option<u32>,
    /// Wall time.
    pub elapsed: Duration,
    /// The verdict.
    pub verdict: Verdict,
    /// The endgame tables that scored leaves, all certified in this run
    /// (`None`: no leaf was scored by tables).
    pub tables: Option<TablesUsed>,
    /// Tables that leaves needed but the table directory lacks (the
    /// directory and the canonical materials); those leaves are unscored.
    pub tables_missing: Option<(String, Vec<String>)>,
    /// The open leaves described, each distinct position once, in file
    /// order (see [`Verdict::Open`]): the first
    /// [`TreeOptions::open_listed`] of them.
    pub open: Vec<OpenLeaf>,
    /// How many distinct open leaves there are (all counted, whether
    /// described in [`Report::open`] or not).
    pub open_count: u64,
    /// Per move of the root (`verify --tree`), or, when the root has one
    /// child (the winner's move), per reply of the loser after it: each
    /// subtree's figures, in file order. Empty for the store, a rejected
    /// file or a root that is a leaf.
    pub replies: Vec<Reply>,
    /// The winner's move (SAN) the replies follow, when they are one level
    /// below the root.
    pub replies_after: Option<String>,
}

/// Open leaves named in a report's text and JSON.
pub const OPEN_NAMED: usize = 5;

impl Report {
    /// The report of a check under `rule_set` begun at `t0` of the proof
    /// below `root` (reached by `root_line`, SAN) for `winner`: nothing
    /// counted yet, certified until a fault is found.
    fn begin(
        rule_set: RuleSet,
        root: &Antichess,
        root_line: String,
        winner: Color,
        t0: Instant,
    ) -> Report {
        Report {
            rule_set,
            root_fen: game::fen(root),
            root_line,
            winner,
            positions: 0,
            positions_with_repeats: 0,
            leaves: Leaves::default(),
            longest_line: 0,
            worst_clock: None,
            elapsed: t0.elapsed(),
            verdict: Verdict::Certified,
            tables: None,
            tables_missing: None,
            open: Vec::new(),
            open_count: 0,
            replies: Vec::new(),
            replies_after: None,
        }
    }

    /// Positions checked per second (distinct).
    pub fn positions_per_second(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            self.positions as f64 / s
        } else {
            0.0
        }
    }

    /// The report as one JSON object.
    pub fn to_json(&self) -> serde_json::Value {
        let (verdict, rejection, tables) = match &self.verdict {
            Verdict::Certified => ("certified", None, 0),
            Verdict::NotCertified { table_leaves } => ("not certified", None, *table_leaves),
            Verdict::Open { .. } => ("open", None, self.leaves.tables_unscored),
            Verdict::Rejected(r) => ("rejected", Some(r), 0),
        };
        serde_json::json!({
            "verdict": verdict,
            "rules": self.rule_set.stalemate.name(),
            "fifty_move_rule": self.rule_set.fifty_move,
            "rule_set": self.rule_set.name(),
            "root_line": self.root_line,
            "root_fen": self.root_fen,
            "winner": game::color_name(self.winner),
            "positions": self.positions,
            "positions_with_repeats": self.positions_with_repeats,
            "leaves": {
                "no_pieces": self.leaves.no_pieces,
                "stalemate": self.leaves.stalemate,
                "other": self.leaves.other,
                "endgame_tables": self.leaves.tables,
            },
            "table_leaves": tables,
            "open_leaves": self.open_count,
            "open": self.open.iter().take(OPEN_NAMED).map(|o| serde_json::json!({
                "epd": o.epd,
                "line": o.line.join(" "),
                "node": o.node,
            })).collect::<Vec<_>>(),
            "tables_missing": self.tables_missing.as_ref().map(|(dir, m)| serde_json::json!({
                "dir": dir,
                "materials": m,
            })),
            "tables": self.tables.as_ref().map(|t| serde_json::json!({
                "dir": t.dir,
                "leaves": self.leaves.tables - self.leaves.tables_unscored,
                "used": t.used,
                "certified": t.certified,
                "recorded": t.recorded,
                "certified_positions": t.positions,
            })),
            "replies_after": self.replies_after,
            "replies": self.replies.iter().map(|r| serde_json::json!({
                "move": r.san,
                "positions": r.positions,
                "positions_with_repeats": r.positions_with_repeats,
                "leaves": {
                    "no_pieces": r.leaves.no_pieces,
                    "stalemate": r.leaves.stalemate,
                    "other": r.leaves.other,
                    "endgame_tables": r.leaves.tables,
                },
                "open_leaves": r.open,
            })).collect::<Vec<_>>(),
            "longest_line": self.longest_line,
            "worst_clock": self.worst_clock,
            "seconds": self.elapsed.as_secs_f64(),
            "positions_per_second": self.positions_per_second(),
            "rejection": rejection.map(|r| serde_json::json!({
                "kind": format!("{:?}", r.reason.kind()),
                "line": r.line,
                "fen": r.fen,
                "node": r.node,
                "reason": r.reason.to_string(),
                "size": match r.reason {
                    Reason::WrongSize { listed, actual, .. } => Some(serde_json::json!({
                        "listed": listed,
                        "actual": actual,
                    })),
                    _ => None,
                },
            })),
        })
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.verdict {
            Verdict::Certified => writeln!(f, "CERTIFIED: a forced win, every branch checked")?,
            Verdict::NotCertified { table_leaves } => {
                writeln!(
                    f,
                    "NOT CERTIFIED: {table_leaves} leaves rest on endgame tables (4 men or fewer, not game over)"
                )?;
                if let Some((dir, m)) = &self.tables_missing {
                    writeln!(
                        f,
                        "missing:     tables {} are not in {dir}; build them with: \
                         antiproof tables build --dir {dir} --rules {} {}",
                        m.join(", "),
                        self.rule_set,
                        m.join(" ")
                    )?;
                }
            }
            Verdict::Open { open_leaves } => {
                writeln!(
                    f,
                    "OPEN: sound so far, but {open_leaves} distinct leaves are open \
                     (not finished games, not scored by endgame tables)"
                )?;
                for o in self.open.iter().take(OPEN_NAMED) {
                    writeln!(f, "open:        {} (line: {})", o.epd, o.line.join(" "))?;
                }
                if self.open_count > OPEN_NAMED as u64 {
                    writeln!(
                        f,
                        "open:        ... and {} more (all of them: verify --obligations FILE)",
                        self.open_count - OPEN_NAMED as u64
                    )?;
                }
                if let Some((dir, m)) = &self.tables_missing {
                    writeln!(
                        f,
                        "missing:     tables {} are not in {dir} (leaves of 4 men or fewer are \
                         open without them)",
                        m.join(", ")
                    )?;
                }
            }
            Verdict::Rejected(r) => writeln!(f, "REJECTED {r}")?,
        }
        writeln!(f, "rules:       {}", self.rule_set)?;
        if !self.root_line.is_empty() {
            writeln!(f, "root line:   {}", self.root_line)?;
        }
        writeln!(f, "root FEN:    {}", self.root_fen)?;
        writeln!(f, "winner:      {}", game::color_name(self.winner))?;
        writeln!(
            f,
            "positions:   {} distinct, {} with repeats",
            self.positions, self.positions_with_repeats
        )?;
        writeln!(
            f,
            "leaves:      {} no pieces left, {} stalemate, {} other, {} endgame tables",
            self.leaves.no_pieces, self.leaves.stalemate, self.leaves.other, self.leaves.tables
        )?;
        if let Some(t) = &self.tables {
            let now: Vec<&str> = t
                .certified
                .iter()
                .filter(|m| !t.recorded.contains(m))
                .map(String::as_str)
                .collect();
            write!(
                f,
                "tables:      {} leaves scored by tables {} (in {}); certified now: {} ({} positions)",
                self.leaves.tables - self.leaves.tables_unscored,
                t.used.join(", "),
                t.dir,
                if now.is_empty() {
                    "none".to_string()
                } else {
                    now.join(", ")
                },
                t.positions
            )?;
            if !t.recorded.is_empty() {
                write!(
                    f,
                    "; by certification record of this machine (same file bytes): {}",
                    t.recorded.join(", ")
                )?;
            }
            writeln!(f)?;
        }
        writeln!(f, "longest line: {} plies", self.longest_line)?;
        if let Some(c) = self.worst_clock {
            writeln!(
                f,
                "worst clock: {c} plies without a capture or pawn move (the fifty-move rule \
                 draws at {})",
                crate::vocab::FIFTY_MOVE_PLIES
            )?;
        }
        if !self.replies.is_empty() {
            match &self.replies_after {
                Some(m) => writeln!(f, "per reply after {m}:")?,
                None => writeln!(f, "per move of the root:")?,
            }
            writeln!(
                f,
                "  {:<8} {:>12} {:>10} {:>10} {:>10} {:>10}",
                "move", "positions", "no pieces", "stalemate", "tables", "open"
            )?;
            for r in &self.replies {
                writeln!(
                    f,
                    "  {:<8} {:>12} {:>10} {:>10} {:>10} {:>10}",
                    r.san,
                    r.positions,
                    r.leaves.no_pieces + r.leaves.other,
                    r.leaves.stalemate,
                    r.leaves.tables,
                    r.open
                )?;
            }
        }
        write!(
            f,
            "time:        {:.3} s, {:.0} positions/s",
            self.elapsed.as_secs_f64(),
            self.positions_per_second()
        )
    }
}

/// Parses `white` / `black`.
pub fn parse_color(s: &str) -> Result<Color, String> {
    match s.to_ascii_lowercase().as_str() {
        "white" | "w" => Ok(Color::White),
        "black" | "b" => Ok(Color::Black),
        _ => Err(format!("unknown side {s:?}: expected white or black")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(fen: &str) -> Antichess {
        let f: shakmaty::fen::Fen = fen.parse().unwrap();
        f.into_position(shakmaty::CastlingMode::Standard).unwrap()
    }

    #[test]
    fn the_2019_double_en_passant_positions_are_known_faults() {
        for fen in [
            "8/8/8/5P2/5p1p/8/6P1/8 w - - 0 1",
            "8/8/8/5P2/5pPp/8/8/8 b - g3 0 1",
        ] {
            assert!(known_fault(&pos(fen)).is_some(), "{fen}");
        }
        // Not the same position without the en-passant right.
        assert!(known_fault(&pos("8/8/8/5P2/5pPp/8/8/8 b - - 0 1")).is_none());
    }
}
