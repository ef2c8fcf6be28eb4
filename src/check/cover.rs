//! Whether certificates prove a line *together*: a proof split into one
//! file a reply (`antiproof export --split-above`), or the replies to a
//! first move proven one by one (the 1.e3 certificates of `proofs/`).
//!
//! Each certificate certifies one position (its root, reached by its
//! line) for one winner. A position is *covered* for a winner when a
//! certificate of that winner is rooted at it (compared by full position,
//! so a line reaching it by another move order counts), or the game is
//! over there and won by the winner, or the winner moves there and some
//! move leads to a covered position, or the loser moves there, has a legal
//! move, and every legal move leads to a covered position. Moves and game
//! ends come from shakmaty, as everywhere in the checker; what each
//! certificate proves must already be certified (this module takes the
//! certificates' verdicts as given and only combines them).
//!
//! Under the fifty-move rule a certificate holds from the half-move clock
//! its own line reaches its root with (the checker counts from there), so
//! a position reached with a higher clock by another line is not covered
//! by it, and a position at clock 100 that is not a finished game is a
//! draw.

use super::game::{self, KEY_LEN};
use crate::vocab::{FIFTY_MOVE_PLIES, RuleSet};
use shakmaty::san::San;
use shakmaty::variant::Antichess;
use shakmaty::{Color, Position};
use std::collections::{HashMap, HashSet};

/// One certified position: the line from the start position to its root
/// (UCI or SAN) and the side it proves a win for.
#[derive(Clone, Debug)]
pub struct Certificate {
    /// The line to the certificate's root.
    pub line: Vec<String>,
    /// The winner it is certified for.
    pub winner: Color,
}

/// How far a set of certificates proves one position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coverage {
    /// The position is proven for the winner.
    pub proven: bool,
    /// Where the loser moves next (at the position, or after the winner's
    /// move with the most replies covered, `winner_move`): each legal
    /// reply in SAN and whether it is covered. Empty when the game is
    /// over there, or no certificate reaches so far.
    pub replies: Vec<(String, bool)>,
    /// The winner's move before `replies`, SAN, when the winner moves at
    /// the position.
    pub winner_move: Option<String>,
}

impl Coverage {
    /// Replies covered and replies in all.
    pub fn counts(&self) -> (usize, usize) {
        let done = self.replies.iter().filter(|r| r.1).count();
        (done, self.replies.len())
    }

    /// The replies not covered, SAN.
    pub fn missing(&self) -> Vec<&str> {
        self.replies
            .iter()
            .filter(|r| !r.1)
            .map(|r| r.0.as_str())
            .collect()
    }
}

type Key = [u8; KEY_LEN];

/// The certificates' roots and the positions on their lines, for one
/// winner.
struct Index {
    /// Each root with the highest clock a certificate holds it from (0
    /// without the fifty-move rule).
    roots: HashMap<Key, u32>,
    /// Every position a certificate's line passes through before its root:
    /// only these can be covered without being a root.
    on_lines: HashSet<Key>,
    winner: Color,
    rules: RuleSet,
    /// Decided positions, by key and clock.
    memo: HashMap<(Key, u32), bool>,
}

impl Index {
    /// The half-move clock that matters: the position's under the
    /// fifty-move rule, else 0.
    fn clock(&self, pos: &Antichess) -> u32 {
        if self.rules.fifty_move {
            pos.halfmoves()
        } else {
            0
        }
    }

    fn root_at(&self, key: &Key, pos: &Antichess) -> bool {
        self.roots.get(key).is_some_and(|&c| self.clock(pos) <= c)
    }

    fn covered(&mut self, pos: &Antichess) -> bool {
        let key = game::pack(pos);
        if self.root_at(&key, pos) {
            return true;
        }
        let legal = pos.legal_moves();
        if let Some(end) = game::game_end(pos, &legal, self.rules.stalemate) {
            return end.winner == Some(self.winner);
        }
        let clock = self.clock(pos);
        if !self.on_lines.contains(&key) || clock >= FIFTY_MOVE_PLIES {
            return false;
        }
        let key = (key, clock);
        if let Some(&c) = self.memo.get(&key) {
            return c;
        }
        // A line that repeats a position could lead back here: the
        // position counts as not covered while it is being decided, which
        // can only leave something unproven, never prove it (a proven
        // position rests on certificates and game ends alone).
        self.memo.insert(key, false);
        let winner_moves = pos.turn() == self.winner;
        let mut result = !winner_moves;
        for m in legal.iter() {
            let mut child = pos.clone();
            child.play_unchecked(*m);
            let c = self.covered(&child);
            if winner_moves && c {
                result = true;
                break;
            }
            if !winner_moves && !c {
                result = false;
                break;
            }
        }
        self.memo.insert(key, result);
        result
    }

    /// Each reply of the loser at `pos` and whether it is covered.
    fn replies(&mut self, pos: &Antichess) -> Vec<(String, bool)> {
        pos.legal_moves()
            .iter()
            .map(|m| {
                let mut child = pos.clone();
                child.play_unchecked(*m);
                (San::from_move(pos, *m).to_string(), self.covered(&child))
            })
            .collect()
    }
}

/// How far `certs` prove the position after `line` (from the standard
/// start position, clock 0) for `winner` under `rules`, each certificate
/// being certified under `rules`. Certificates for the other side are
/// ignored. An unplayable line is an error naming the ply.
pub fn coverage<S: AsRef<str>>(
    certs: &[Certificate],
    line: &[S],
    winner: Color,
    rules: RuleSet,
) -> Result<Coverage, String> {
    coverage_from(&Antichess::default(), certs, line, winner, rules)
}

/// As [`coverage`], with the lines (the certificates' and `line`) from
/// `start` (its half-move clock counting under the fifty-move rule).
pub fn coverage_from<S: AsRef<str>>(
    start: &Antichess,
    certs: &[Certificate],
    line: &[S],
    winner: Color,
    rules: RuleSet,
) -> Result<Coverage, String> {
    let mut index = Index {
        roots: HashMap::new(),
        on_lines: HashSet::new(),
        winner,
        rules,
        memo: HashMap::new(),
    };
    for c in certs.iter().filter(|c| c.winner == winner) {
        let (_, moves) = game::play_line(start, &c.line)?;
        let mut pos = start.clone();
        for m in moves {
            index.on_lines.insert(game::pack(&pos));
            pos.play_unchecked(m);
        }
        let clock = index.clock(&pos);
        let held = index.roots.entry(game::pack(&pos)).or_insert(clock);
        *held = (*held).max(clock);
    }
    let (pos, _) = game::play_line(start, line)?;
    let proven = index.covered(&pos);
    let legal = pos.legal_moves();
    if game::game_end(&pos, &legal, rules.stalemate).is_some() {
        return Ok(Coverage {
            proven,
            replies: Vec::new(),
            winner_move: None,
        });
    }
    if pos.turn() != winner {
        let replies = index.replies(&pos);
        return Ok(Coverage {
            proven,
            replies,
            winner_move: None,
        });
    }
    // The winner moves: the move whose replies are furthest proven (a
    // proven one first), among those a certificate's line goes through.
    let mut best = Coverage {
        proven,
        replies: Vec::new(),
        winner_move: None,
    };
    let mut best_rank = None;
    for m in legal.iter() {
        let mut child = pos.clone();
        child.play_unchecked(*m);
        let key = game::pack(&child);
        if !index.on_lines.contains(&key) && !index.roots.contains_key(&key) {
            continue;
        }
        let done = index.covered(&child);
        let replies = if index.on_lines.contains(&key) {
            index.replies(&child)
        } else {
            Vec::new()
        };
        let rank = (done, replies.iter().filter(|r| r.1).count());
        if best_rank.is_none_or(|b| rank > b) {
            best_rank = Some(rank);
            best.replies = replies;
            best.winner_move = Some(San::from_move(&pos, *m).to_string());
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Rules;

    const INTL: RuleSet = RuleSet::new(Rules::International, false);

    fn cert(line: &str, winner: Color) -> Certificate {
        Certificate {
            line: line.split_whitespace().map(str::to_string).collect(),
            winner,
        }
    }

    #[test]
    fn replies_proven_one_by_one_add_up() {
        let start = Antichess::default();
        let mut after_e3 = start.clone();
        after_e3.play_unchecked(game::play_line(&start, &["e3"]).unwrap().1[0]);
        let replies: Vec<String> = after_e3
            .legal_moves()
            .iter()
            .map(|m| San::from_move(&after_e3, *m).to_string())
            .collect();
        assert_eq!(replies.len(), 20);
        let mut certs: Vec<Certificate> = replies[..19]
            .iter()
            .map(|r| cert(&format!("e3 {r}"), Color::White))
            .collect();
        let c = coverage(&certs, &["e3"], Color::White, INTL).unwrap();
        assert!(!c.proven);
        assert_eq!(c.counts(), (19, 20));
        assert_eq!(c.missing(), [replies[19].as_str()]);
        // A certificate for the other side does not count.
        certs.push(cert(&format!("e3 {}", replies[19]), Color::Black));
        let c = coverage(&certs, &["e3"], Color::White, INTL).unwrap();
        assert!(!c.proven);
        certs.pop();
        // The last reply reached by UCI instead of SAN: the same position.
        let last = game::play_line(&after_e3, &[replies[19].as_str()])
            .unwrap()
            .1[0];
        certs.push(cert(
            &format!("e2e3 {}", last.to_uci(shakmaty::CastlingMode::Standard)),
            Color::White,
        ));
        let c = coverage(&certs, &["e3"], Color::White, INTL).unwrap();
        assert!(c.proven);
        assert_eq!(c.counts(), (20, 20));
        // And so the start position, where White moves.
        let c = coverage(&certs, &[] as &[&str], Color::White, INTL).unwrap();
        assert!(c.proven);
        assert_eq!(c.winner_move.as_deref(), Some("e3"));
    }

    #[test]
    fn a_winner_move_split_by_reply_and_a_transposition() {
        // As if 1.e3 lost to 1...e6 with each White reply a certificate
        // of its own (only the combination is under test here).
        let start = Antichess::default();
        let (pos, _) = game::play_line(&start, &["e3", "e6"]).unwrap();
        let replies: Vec<String> = pos
            .legal_moves()
            .iter()
            .map(|m| San::from_move(&pos, *m).to_string())
            .collect();
        assert!(replies.len() > 20);
        let mut certs: Vec<Certificate> = replies
            .iter()
            .map(|r| cert(&format!("e3 e6 {r}"), Color::Black))
            .collect();
        let c = coverage(&certs, &["e3"], Color::Black, INTL).unwrap();
        assert!(c.proven, "{c:?}");
        assert_eq!(c.winner_move.as_deref(), Some("e6"));
        assert_eq!(c.counts(), (replies.len(), replies.len()));
        // One reply short: not proven, the missing one named.
        let c = coverage(&certs[1..], &["e3"], Color::Black, INTL).unwrap();
        assert!(!c.proven);
        assert_eq!(c.missing(), [replies[0].as_str()]);
        // A reply's certificate reached by another move order (1.Nf3 e6
        // 2.e3 is 1.e3 e6 2.Nf3) counts as the same position.
        let i = replies.iter().position(|r| r == "Nf3").unwrap();
        certs[i] = cert("Nf3 e6 e3", Color::Black);
        assert!(
            coverage(&certs, &["e3"], Color::Black, INTL)
                .unwrap()
                .proven
        );
        // Nothing known: no replies listed.
        let c = coverage(&[], &["e3"], Color::Black, INTL).unwrap();
        assert_eq!(
            c,
            Coverage {
                proven: false,
                replies: Vec::new(),
                winner_move: None
            }
        );
        // A bad line is an error naming the ply.
        let e = coverage(&certs, &["e3", "e3"], Color::Black, INTL).unwrap_err();
        assert!(e.contains("ply 2"), "{e}");
    }

    #[test]
    fn under_the_fifty_move_rule_a_certificate_holds_from_its_own_clock() {
        let fifty = RuleSet::new(Rules::International, true);
        let certs = [cert("Nf3 Nf6", Color::White)];
        // The same position, reached with 6 reversible plies instead of 2.
        let long = ["Nc3", "Nc6", "Nb1", "Nb8", "Nf3", "Nf6"];
        assert!(coverage(&certs, &long, Color::White, INTL).unwrap().proven);
        assert!(!coverage(&certs, &long, Color::White, fifty).unwrap().proven);
        // With a lower clock it still holds.
        let certs = [cert("Nc3 Nc6 Nb1 Nb8 Nf3 Nf6", Color::White)];
        let short = ["Nf3", "Nf6"];
        assert!(
            coverage(&certs, &short, Color::White, fifty)
                .unwrap()
                .proven
        );
    }
}
