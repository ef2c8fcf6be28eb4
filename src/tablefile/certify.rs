//! Certification of tables with shakmaty, independent of the generator.
//!
//! Nothing here uses `crate::rules` move generation or game ends: every
//! index is turned into a shakmaty [`Antichess`] position, its moves are
//! generated and played by shakmaty, game ends are decided from shakmaty's
//! move lists and piece counts, and the successors' values are read from
//! the tables (which are certified the same way). Only the indexing
//! arithmetic ([`super::index`]) and the file reader are shared with the
//! generator.
//!
//! An entry is accepted when it equals the best value over its moves (a
//! move's value being the successor's value seen from the mover, one ply
//! longer): a win in `n` has a move to a loss in `n - 1` and none quicker; a
//! loss in `n` has every move to a win in at most `n - 1`, one exactly; a
//! draw has no move to a loss and one to a draw. A position without legal
//! moves must hold its game end with distance 0 (international: the side to
//! move wins; FICS: fewer men wins, equal draws, more loses; joint: fewer
//! men wins, else a draw), and a position with only bishops that can never
//! meet (shakmaty's insufficient material) a draw.
//! With distances strictly decreasing along the winning lines, these local
//! checks over all tables involved prove every value exact.
//!
//! Positions where an en-passant capture is legal are not table positions;
//! they are valued one ply ahead here too.
//!
//! A table under the fifty-move rule (header flag) is certified the same
//! way with move values taken by [`Value::after_move_fifty`]: a capture or
//! pawn move (shakmaty's `is_zeroing`) is worth a win in 1 into a lost
//! position and a loss in 1 into a won one, whatever their distances; any
//! other move adds a ply, and nothing beyond 100 plies counts. The
//! distances of wins and losses then strictly decrease along the moves
//! that keep the clock running, and every capture or pawn move leads to a
//! smaller table or a position with pawns further advanced, so the local
//! checks again prove every value.

#![allow(clippy::needless_range_loop)] // square lists are indexed by slot

use super::index::{Layout, MAX_MEN, Squares};
use super::material::Material;
use super::{RuleSet, Rules};
use super::{Table, TableError, TableSource, Value, format};
use rayon::prelude::*;
use shakmaty::variant::Antichess;
use shakmaty::{
    Bitboard, Board, CastlingMode, Color, EnPassantMode, FromSetup, Piece, Position, Role, Setup,
    Square,
};
use std::fmt;
use std::path::Path;

/// Why a table was not certified.
#[derive(Debug)]
pub enum CertifyError {
    /// An entry disagrees with its successors.
    Wrong {
        /// The table.
        material: String,
        /// Its index.
        index: u64,
        /// The position, as FEN.
        fen: String,
        /// What the table says.
        stored: Value,
        /// What the successors say.
        expected: Value,
    },
    /// An unused index holds something other than 0, or the header's
    /// counts or checksum are wrong.
    Malformed {
        /// The table.
        material: String,
        /// What is wrong.
        reason: String,
    },
    /// A table could not be read.
    Table(TableError),
}

impl fmt::Display for CertifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CertifyError::Wrong {
                material,
                index,
                fen,
                stored,
                expected,
            } => write!(
                f,
                "table {material}, index {index}: position {fen} is stored as {stored} \
                 but its moves give {expected}"
            ),
            CertifyError::Malformed { material, reason } => {
                write!(f, "table {material}: {reason}")
            }
            CertifyError::Table(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for CertifyError {}

impl From<TableError> for CertifyError {
    fn from(e: TableError) -> Self {
        CertifyError::Table(e)
    }
}

/// What a certification checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Certified {
    /// Positions (used entries) checked.
    pub positions: u64,
    /// Unused indices checked to hold 0.
    pub unused: u64,
    /// Successors valued.
    pub moves: u64,
}

fn color(c: usize) -> Color {
    if c == 0 { Color::White } else { Color::Black }
}

/// The shakmaty position of a square list.
fn position(pieces: &[(usize, usize)], p: &Squares) -> Result<Antichess, String> {
    let mut board = Board::empty();
    for (i, &(c, r)) in pieces.iter().enumerate() {
        board.set_piece_at(
            Square::new(p.sq[i] as u32),
            Piece {
                color: color(c),
                role: Role::ALL[r],
            },
        );
    }
    let mut setup = Setup::empty();
    setup.board = board;
    setup.turn = color(p.stm);
    Antichess::from_setup(setup, CastlingMode::Standard).map_err(|e| e.to_string())
}

/// The material of a shakmaty board.
fn material(board: &Board) -> Material {
    let mut m = Material::default();
    for c in 0..2 {
        for r in 0..6 {
            m.counts[c][r] = board
                .by_piece(Piece {
                    color: color(c),
                    role: Role::ALL[r],
                })
                .count() as u8;
        }
    }
    m
}

/// The table square list of a shakmaty position without en passant whose
/// material is `m` (canonical or not; colours are swapped and ranks
/// mirrored for the other orientation).
fn squares(pos: &Antichess, m: &Material, layout: &Layout) -> Squares {
    let flip = !m.is_canonical();
    let board = pos.board();
    let turn = if pos.turn() == Color::White { 0 } else { 1 };
    let mut p = Squares {
        sq: [0; MAX_MEN],
        stm: if flip { 1 - turn } else { turn },
    };
    for g in &layout.groups {
        let c = if flip { 1 - g.color } else { g.color };
        let bb: Bitboard = board.by_piece(Piece {
            color: color(c),
            role: Role::ALL[g.role],
        });
        let mut sqs = [0u8; MAX_MEN];
        for (i, s) in bb.into_iter().enumerate().take(g.count) {
            sqs[i] = if flip {
                u32::from(s) as u8 ^ 56
            } else {
                u32::from(s) as u8
            };
        }
        p.sq[g.start..g.start + g.count].copy_from_slice(&sqs[..g.count]);
    }
    p
}

/// The game end of a position without legal moves, for the side to move.
fn no_move_value(pos: &Antichess, rules: Rules) -> Value {
    match rules {
        Rules::International => Value::Win(0),
        Rules::Fics => {
            let us = pos.us().count();
            let them = pos.them().count();
            if us == 0 || us < them {
                Value::Win(0)
            } else if us > them {
                Value::Loss(0)
            } else {
                Value::Draw
            }
        }
        // Won only where International (a win) and FICS agree.
        Rules::Joint => {
            let us = pos.us().count();
            let them = pos.them().count();
            if us == 0 || us < them {
                Value::Win(0)
            } else {
                Value::Draw
            }
        }
    }
}

/// The value of a successor for its side to move. A position whose side to
/// move has no men has won; one with a legal en-passant capture is valued
/// one ply ahead; any other is read from its table (whose own entry is
/// certified separately, game ends included).
fn successor_value<S: TableSource>(
    pos: &Antichess,
    rules: RuleSet,
    src: &S,
) -> Result<Value, TableError> {
    if pos.us().is_empty() {
        return Ok(Value::Win(0));
    }
    if pos.legal_ep_square().is_some() {
        return best_over_moves(pos, rules, src).map(|(v, _)| v);
    }
    lookup(pos, rules, src)
}

/// The value of a table position, from its table, which must be of the
/// rule set `rules` (a table of another rule set is an error, never read).
fn lookup<S: TableSource>(pos: &Antichess, rules: RuleSet, src: &S) -> Result<Value, TableError> {
    let m = material(pos.board());
    if m.men() > MAX_MEN as u32 {
        return Err(TableError::TooManyMen {
            fen: shakmaty::fen::Fen::from_position(pos, EnPassantMode::Legal).to_string(),
            men: m.men(),
        });
    }
    src.with_table(&m.canonical(), |t| {
        if t.header.rule_set != rules {
            return Err(TableError::WrongRules {
                path: format::table_path(Path::new(""), &t.header.material, rules),
                found: t.header.rule_set,
            });
        }
        let sq = squares(pos, &m, &t.layout);
        Ok(t.value(t.layout.encode(&sq)))
    })?
}

/// The best move value of a position that has legal moves, and how many
/// moves were valued.
fn best_over_moves<S: TableSource>(
    pos: &Antichess,
    rules: RuleSet,
    src: &S,
) -> Result<(Value, u64), TableError> {
    best_of(pos, &pos.legal_moves(), rules, src)
}

/// The best value over the given moves of a position.
fn best_of<S: TableSource>(
    pos: &Antichess,
    moves: &shakmaty::MoveList,
    rules: RuleSet,
    src: &S,
) -> Result<(Value, u64), TableError> {
    let mut best: Option<Value> = None;
    for m in moves {
        let mut child = pos.clone();
        child.play_unchecked(*m);
        let s = successor_value(&child, rules, src)?;
        let v = if rules.fifty_move {
            s.after_move_fifty(m.is_zeroing())
        } else {
            s.after_move()
        };
        if best.is_none_or(|b| v.score() > b.score()) {
            best = Some(v);
        }
    }
    Ok((best.expect("a position with moves"), moves.len() as u64))
}

/// The value a position must have given its successors: its game end, or
/// the best over its moves.
fn expected_value<S: TableSource>(
    pos: &Antichess,
    rules: RuleSet,
    src: &S,
) -> Result<(Value, u64), TableError> {
    if pos.us().is_empty() {
        return Ok((Value::Win(0), 0));
    }
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return Ok((no_move_value(pos, rules.stalemate), 0));
    }
    if pos.is_insufficient_material() {
        return Ok((Value::Draw, 0));
    }
    best_of(pos, &moves, rules, src)
}

/// The checker's probe: the value of a shakmaty antichess position for the
/// side to move under `rules` (a whole rule set, or a stalemate rule alone:
/// without the fifty-move rule) from tables in `src` (game ends and en
/// passant handled here, with shakmaty). `Err` when a table is missing or
/// the position has more than 4 men.
///
/// Under the fifty-move rule `src` must hold tables built for it, and the
/// value is the fifty-move value of the position at a half-move clock of 0
/// (`Win(n)` / `Loss(n)`, `n` the plies to the next capture, pawn move or
/// game end; a position at clock `c` is decided iff
/// [`Value::decisive_at`]`(c)`). A position with a legal en-passant capture
/// is valued over its moves (all captures): a win or loss in 1, or a draw.
pub fn probe_shakmaty<S: TableSource>(
    pos: &Antichess,
    rules: impl Into<RuleSet>,
    src: &S,
) -> Result<Value, TableError> {
    let rules: RuleSet = rules.into();
    if pos.us().is_empty() {
        return Ok(Value::Win(0));
    }
    if pos.them().is_empty() {
        // The side that just moved has no men: it has won (as in
        // `rules::outcome`; cannot arise in play).
        return Ok(Value::Loss(0));
    }
    if pos.legal_moves().is_empty() {
        return Ok(no_move_value(pos, rules.stalemate));
    }
    if pos.is_insufficient_material() {
        return Ok(Value::Draw);
    }
    if pos.legal_ep_square().is_some() {
        return best_over_moves(pos, rules, src).map(|(v, _)| v);
    }
    lookup(pos, rules, src)
}

/// Certifies every entry of `table` (see the module docs). `src` must give
/// the tables its moves lead to, and the table itself.
pub fn certify<S: TableSource + Sync>(table: &Table, src: &S) -> Result<Certified, CertifyError> {
    let layout = &table.layout;
    let rules = table.header.rule_set;
    let name = layout.material.to_string();
    if !table.checksum_ok() || !table.overflow_ok() {
        return Err(CertifyError::Malformed {
            material: name,
            reason: "data checksum mismatch, or a malformed overflow list".into(),
        });
    }
    let pieces = layout.slot_pieces();
    const CH: u64 = 1 << 12;
    let chunks = layout.size().div_ceil(CH);
    let parts: Vec<Result<(Certified, super::Stats), CertifyError>> = (0..chunks)
        .into_par_iter()
        .map(|ci| {
            let mut done = Certified::default();
            let mut stats = super::Stats::default();
            for index in ci * CH..((ci + 1) * CH).min(layout.size()) {
                let stored = table.value(index);
                let (sq, used) = layout.decode(index);
                if !used {
                    if table.get(index) != 0 {
                        return Err(CertifyError::Malformed {
                            material: name.clone(),
                            reason: format!("unused index {index} holds {}", table.get(index)),
                        });
                    }
                    done.unused += 1;
                    stats.unused += 1;
                    continue;
                }
                let pos = position(&pieces, &sq).map_err(|e| CertifyError::Malformed {
                    material: name.clone(),
                    reason: format!("index {index} is not a valid position: {e}"),
                })?;
                let (expected, moves) = expected_value(&pos, rules, src)?;
                if expected != stored {
                    return Err(CertifyError::Wrong {
                        material: name.clone(),
                        index,
                        fen: shakmaty::fen::Fen::from_position(&pos, EnPassantMode::Legal)
                            .to_string(),
                        stored,
                        expected,
                    });
                }
                done.positions += 1;
                done.moves += moves;
                stats.tally(stored);
            }
            Ok((done, stats))
        })
        .collect();
    let mut total = Certified::default();
    let mut stats = super::Stats::default();
    for p in parts {
        let (d, s) = p?;
        total.positions += d.positions;
        total.unused += d.unused;
        total.moves += d.moves;
        stats.wins += s.wins;
        stats.losses += s.losses;
        stats.draws += s.draws;
        stats.unused += s.unused;
        stats.longest_win = stats.longest_win.max(s.longest_win);
        stats.longest_loss = stats.longest_loss.max(s.longest_loss);
    }
    if stats != table.header.stats {
        return Err(CertifyError::Malformed {
            material: name,
            reason: format!(
                "header counts {:?} differ from the entries {:?}",
                table.header.stats, stats
            ),
        });
    }
    Ok(total)
}
