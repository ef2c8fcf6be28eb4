//! Game ends under a rule set.
//!
//! # The rules, and the choices made where implementations differ
//!
//! * **International** (lichess): the side to move with no legal move wins,
//!   including when it has no pieces left.
//! * **FICS**: a side to move with no pieces left wins; a side to move with
//!   pieces but no legal move (stalemate) wins if it has fewer pieces than
//!   its opponent, loses if it has more, and draws on equal counts.
//! * **Joint**: a proof that holds under International and FICS at once. A
//!   stalemate with pieces left is won by the side to move only where both
//!   give it the win (it has fewer pieces); equal or more pieces is a draw.
//!   No pieces left and the dead draw below are as under the other two.
//!
//! | side to move stalemated, with pieces | international | FICS | joint |
//! |---|---|---|---|
//! | fewer pieces than the opponent       | wins          | wins  | wins  |
//! | as many pieces                       | wins          | draw  | draw  |
//! | more pieces                          | wins          | loses | draw  |
//!
//! * Under all three, a position where neither side can ever win is a draw. As in
//!   shakmaty 0.30.1 (lichess's rules library, and our checker's), that is
//!   the position with only bishops left where each side's bishops stand on
//!   squares of one colour the other side's bishops never reach.
//!   Lichess's server also adjudicates some positions with opposite-coloured
//!   bishops and mutually blocked pawns as draws; we do not (shakmaty does
//!   not either): such a game goes on. This is the divergence row 4 of
//!   `tests/data/outcomes.tsv`.
//! * A position where the side *not* to move has no pieces cannot arise in
//!   play (the last mover kept its pieces). Read from a FEN, we call it a
//!   finished game won by the side without pieces, under every rule set.
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
                Rules::Joint => {
                    if ours < theirs {
                        Outcome::Win(us)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// White to move with no legal move (blocked pawns) and fewer, as many
    /// or more pieces than Black; then White with no pieces left.
    const FEWER: &str = "8/8/8/4p2p/4P3/8/8/8 w - - 0 1";
    const EQUAL: &str = "8/8/8/4p3/4P3/8/8/8 w - - 0 1";
    const MORE: &str = "8/8/8/4p3/4P3/4P3/8/8 w - - 0 1";
    const NO_PIECES: &str = "8/8/8/4p3/8/8/8/8 w - - 0 1";

    fn outcome(fen: &str, rules: Rules) -> Option<Outcome> {
        Position::from_fen(fen).unwrap().outcome(rules)
    }

    #[test]
    fn stalemate_and_no_pieces_under_each_rule_set() {
        use Outcome::{Draw, Win};
        use Rules::{Fics, International, Joint};
        let w = Win(Color::White);
        let b = Win(Color::Black);
        let table = [
            (FEWER, [(International, w), (Fics, w), (Joint, w)]),
            (EQUAL, [(International, w), (Fics, Draw), (Joint, Draw)]),
            (MORE, [(International, w), (Fics, b), (Joint, Draw)]),
            (NO_PIECES, [(International, w), (Fics, w), (Joint, w)]),
        ];
        for (fen, row) in table {
            for (rules, want) in row {
                assert_eq!(outcome(fen, rules), Some(want), "{fen} under {rules}");
            }
        }
    }

    #[test]
    fn joint_wins_only_where_both_others_agree() {
        for fen in [FEWER, EQUAL, MORE, NO_PIECES] {
            let i = outcome(fen, Rules::International);
            let f = outcome(fen, Rules::Fics);
            let want = if i == f { i } else { Some(Outcome::Draw) };
            assert_eq!(outcome(fen, Rules::Joint), want, "{fen}");
        }
    }
}
