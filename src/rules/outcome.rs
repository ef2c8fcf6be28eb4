//! Game ends under a rule set.
//!
//! # The rules, and the choices made where implementations differ
//!
//! * **International** (lichess): the side to move with no legal move wins,
//!   including when it has no pieces left.
//! * **FICS**: a side to move with no pieces left wins; a side to move with
//!   pieces but no legal move (stalemate) wins if it has fewer pieces than
//!   its opponent, loses if it has more, and draws on equal counts.
//! * Under both, a position where neither side can ever win is a draw. As in
//!   shakmaty 0.30.1 (lichess's rules library, and our checker's), that is
//!   the position with only bishops left where each side's bishops stand on
//!   squares of one colour the other side's bishops never reach.
//!   Lichess's server also adjudicates some positions with opposite-coloured
//!   bishops and mutually blocked pawns as draws; we do not (shakmaty does
//!   not either): such a game goes on. This is the DIVERGENCE row 4 of
//!   `shared/testdata/antichess_outcome_cases.tsv`.
//! * A position where the side *not* to move has no pieces cannot arise in
//!   play (the last mover kept its pieces). Read from a FEN, we call it a
//!   finished game won by the side without pieces, under both rule sets.
//!   Move generation still lists the mover's moves (as shakmaty does; the
//!   perft of such a position is that move count), but the prover, checker
//!   and tables treat it as game over. (Fairy-Stockfish gives perft 0 there;
//!   shakmaty reports moves and no outcome.)
//! * Castling rights in a FEN are accepted and dropped (lichess does the
//!   same): there is no castling in antichess.
//!
//! There is no 50-move rule and no repetition draw in these outcomes: the
//! prover never counts a repetition as a win, which is all soundness needs.

use super::position::Position;
use super::types::Color;
use crate::vocab::Rules;
use std::fmt;

/// How a finished game ended.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Outcome {
    /// This side won.
    Win(Color),
    /// Nobody won.
    Draw,
}

impl Outcome {
    /// The winner, if any.
    pub fn winner(self) -> Option<Color> {
        match self {
            Outcome::Win(c) => Some(c),
            Outcome::Draw => None,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Win(c) => write!(f, "{c} wins"),
            Outcome::Draw => f.write_str("draw"),
        }
    }
}

impl Position {
    /// The outcome if the game is over under `rules`, else `None`. See the
    /// module docs for the exact rules.
    #[inline]
    pub fn outcome(&self, rules: Rules) -> Option<Outcome> {
        let us = self.turn;
        let ours = self.count(us);
        let theirs = self.count(!us);
        if ours == 0 {
            return Some(Outcome::Win(us));
        }
        if theirs == 0 {
            return Some(Outcome::Win(!us));
        }
        if self.is_stalemate() {
            return Some(match rules {
                Rules::International => Outcome::Win(us),
                Rules::Fics => {
                    if ours < theirs {
                        Outcome::Win(us)
                    } else if ours > theirs {
                        Outcome::Win(!us)
                    } else {
                        Outcome::Draw
                    }
                }
            });
        }
        if self.only_bishops_opposite_colours() {
            return Some(Outcome::Draw);
        }
        None
    }

    /// Whether the game is over under `rules`.
    #[inline]
    pub fn is_game_over(&self, rules: Rules) -> bool {
        self.outcome(rules).is_some()
    }
}
