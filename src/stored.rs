//! What a stored proof means: the one reader of proof-store records.
//!
//! The store ([`crate::store`]) keeps a bare [`Record`] per proven
//! position. What that says about the proof at a position (the winner's
//! one move, the loser's every reply, a finished game, a leaf that rests
//! on endgame tables, or nothing) is decided here and only here, for
//! every reader that follows stored proofs with the project's own rules:
//! proof extraction and walks in [`crate::search`], `export`, `browse` and
//! `serve` ([`crate::web::source`]), and the tests.
//!
//! The independent checker (`crate::check`) does **not** use this module:
//! it decides the same questions with shakmaty alone.
//!
//! A stored proof is closed: a `Win` record's move leads to a position
//! with a `Loss` record, a game the winner has won, or (under a record
//! flagged [`crate::store::FLAG_TABLES`]) a position of at most
//! [`MAX_MEN`] men scored by endgame tables; every move of a `Loss`
//! record leads to one of those.

use crate::rules::{Color, Move, Outcome, Position, Rules};
use crate::store::{Key, Need, Record, Store, StoreError, StoreReader, WinLoss};
use crate::tablefile::MAX_MEN;
use crate::vocab::MoveCode;
use crate::vocab::RuleSet;
use std::collections::HashMap;
use std::fmt;

/// Looks up store records by key: a store, a read snapshot of one, or a
/// map in memory (tests, small proofs).
pub trait RecordLookup: Send + Sync {
    /// The record of a packed position under `rules`, if proven.
    fn record(&self, rules: RuleSet, key: &Key) -> Result<Option<Record>, StoreError>;

    /// The record and, under the fifty-move rule, its headroom need
    /// (`None` where the lookup keeps no needs).
    fn entry(
        &self,
        rules: RuleSet,
        key: &Key,
    ) -> Result<Option<(Record, Option<Need>)>, StoreError> {
        Ok(self.record(rules, key)?.map(|r| (r, None)))
    }
}

impl RecordLookup for HashMap<Key, Record> {
    fn record(&self, _rules: RuleSet, key: &Key) -> Result<Option<Record>, StoreError> {
        Ok(self.get(key).copied())
    }
}

impl RecordLookup for Store {
    fn record(&self, rules: RuleSet, key: &Key) -> Result<Option<Record>, StoreError> {
        self.get(rules, key)
    }

    fn entry(
        &self,
        rules: RuleSet,
        key: &Key,
    ) -> Result<Option<(Record, Option<Need>)>, StoreError> {
        self.get_entry(rules, key)
    }
}

impl RecordLookup for StoreReader {
    fn record(&self, rules: RuleSet, key: &Key) -> Result<Option<Record>, StoreError> {
        self.get(rules, key)
    }

    fn entry(
        &self,
        rules: RuleSet,
        key: &Key,
    ) -> Result<Option<(Record, Option<Need>)>, StoreError> {
        self.get_entry(rules, key)
    }
}

impl<R: RecordLookup + ?Sized> RecordLookup for &R {
    fn record(&self, rules: RuleSet, key: &Key) -> Result<Option<Record>, StoreError> {
        (**self).record(rules, key)
    }

    fn entry(
        &self,
        rules: RuleSet,
        key: &Key,
    ) -> Result<Option<(Record, Option<Need>)>, StoreError> {
        (**self).entry(rules, key)
    }
}

/// What the store says at one position.
#[derive(Clone, Debug)]
pub enum StoredNode {
    /// The game is over here (the outcome under the reader's rules).
    GameEnd(Outcome),
    /// A `Win` record: the side to move wins with this (legal) move.
    Win {
        /// The stored winning move.
        mv: Move,
        /// The record.
        record: Record,
    },
    /// A `Loss` record: every legal move of the side to move loses (the
    /// proof covers them all).
    Loss {
        /// The record.
        record: Record,
    },
    /// No record, at most [`MAX_MEN`] men: a leaf when the proof above it
    /// rests on endgame tables (the tables decide it, not the store).
    TableSized,
    /// No record, and not a position the tables could decide.
    Missing,
}

impl StoredNode {
    /// The side this node says wins, when it says one: the mover at a
    /// `Win`, the other side at a `Loss`, the winner of a finished game.
    pub fn winner(&self, pos: &Position) -> Option<Color> {
        match self {
            StoredNode::GameEnd(o) => o.winner(),
            StoredNode::Win { .. } => Some(pos.turn()),
            StoredNode::Loss { .. } => Some(!pos.turn()),
            StoredNode::TableSized | StoredNode::Missing => None,
        }
    }

    /// The proof's moves at `pos` (this node's position): the winner's
    /// one move, every reply of the loser, none at a leaf.
    pub fn moves(&self, pos: &Position) -> Vec<Move> {
        match self {
            StoredNode::Win { mv, .. } => vec![*mv],
            StoredNode::Loss { .. } => pos.legal_moves().to_vec(),
            _ => Vec::new(),
        }
    }

    /// The record, if the store holds one here.
    pub fn record(&self) -> Option<&Record> {
        match self {
            StoredNode::Win { record, .. } | StoredNode::Loss { record, .. } => Some(record),
            _ => None,
        }
    }
}

/// A stored proof that does not hold together at a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Broken {
    /// A `Win` record whose move is not legal in its position.
    IllegalMove(MoveCode),
    /// The record says the other side wins than the proof needs.
    WrongVerdict {
        /// The side the proof is for.
        winner: Color,
        /// The verdict stored.
        found: WinLoss,
    },
    /// A finished game that the winner has not won.
    NotWon(Outcome),
    /// No record where the proof needs one.
    Missing,
}

impl fmt::Display for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Broken::IllegalMove(c) => write!(f, "stored move {c:#06x} is not legal"),
            Broken::WrongVerdict { winner, found } => {
                write!(
                    f,
                    "the record says {found:?} for the side to move, not a win for {winner}"
                )
            }
            Broken::NotWon(o) => write!(f, "the game ends here, and not in a win ({o})"),
            Broken::Missing => f.write_str("the store has no record here"),
        }
    }
}

/// Reads stored proofs under one rule set: the one place that turns
/// records into proof nodes.
pub struct StoredProof<R> {
    records: R,
    rules: Rules,
    rule_set: RuleSet,
}

impl<R: RecordLookup> StoredProof<R> {
    /// A reader over `records` under `rules` (a stalemate rule, or a whole
    /// rule set: with the fifty-move rule, that rule set's records).
    pub fn new(records: R, rules: impl Into<RuleSet>) -> StoredProof<R> {
        let rule_set = rules.into();
        StoredProof {
            records,
            rules: rule_set.stalemate,
            rule_set,
        }
    }

    /// The stalemate rule.
    pub fn rules(&self) -> Rules {
        self.rules
    }

    /// The whole rule set (the records' table).
    pub fn rule_set(&self) -> RuleSet {
        self.rule_set
    }

    /// The headroom need of the stored proof of a position under the
    /// fifty-move rule (`None`: no record, or no rule).
    pub fn need(&self, pos: &Position) -> Result<Option<Need>, StoreError> {
        Ok(self
            .records
            .entry(self.rule_set, &pos.pack().0)?
            .and_then(|(_, n)| n))
    }

    /// The record lookup.
    pub fn records(&self) -> &R {
        &self.records
    }

    /// The record of a position, if proven.
    pub fn record(&self, pos: &Position) -> Result<Option<Record>, StoreError> {
        self.records.record(self.rule_set, &pos.pack().0)
    }

    /// What the store says at `pos`, as it stands (no winner assumed).
    /// `Err(Ok(Broken::IllegalMove))` is a `Win` record whose move is not
    /// legal here.
    pub fn node(&self, pos: &Position) -> Result<Result<StoredNode, Broken>, StoreError> {
        if let Some(o) = pos.outcome(self.rules) {
            return Ok(Ok(StoredNode::GameEnd(o)));
        }
        let Some(record) = self.record(pos)? else {
            return Ok(Ok(if pos.men() <= MAX_MEN {
                StoredNode::TableSized
            } else {
                StoredNode::Missing
            }));
        };
        Ok(match record.verdict {
            WinLoss::Win => {
                match pos
                    .legal_moves()
                    .iter()
                    .copied()
                    .find(|m| m.watkins_code().same_move(record.mv))
                {
                    Some(mv) => Ok(StoredNode::Win { mv, record }),
                    None => Err(Broken::IllegalMove(record.mv)),
                }
            }
            WinLoss::Loss => Ok(StoredNode::Loss { record }),
        })
    }

    /// What the store says at `pos` in a proof that `winner` wins: a
    /// finished game must be the winner's, a record must say the winner
    /// wins (`Win` with the winner to move, `Loss` with the loser to
    /// move). `TableSized` and `Missing` are left to the caller (a table
    /// leaf or a gap, depending on what it accepts).
    pub fn node_for(
        &self,
        pos: &Position,
        winner: Color,
    ) -> Result<Result<StoredNode, Broken>, StoreError> {
        let node = match self.node(pos)? {
            Ok(n) => n,
            Err(b) => return Ok(Err(b)),
        };
        Ok(match &node {
            StoredNode::GameEnd(o) if *o != Outcome::Win(winner) => Err(Broken::NotWon(*o)),
            StoredNode::Win { record, .. } | StoredNode::Loss { record, .. }
                if node.winner(pos) != Some(winner) =>
            {
                Err(Broken::WrongVerdict {
                    winner,
                    found: record.verdict,
                })
            }
            _ => Ok(node),
        })
    }

    /// The side a stored proof at `pos` shows winning: the winner of a
    /// finished game (the side to move for a draw, as `export` always
    /// did), the side a record here says wins, or the side to move's
    /// opponent when a move leads to a position the store says its mover
    /// wins; `None` when the store holds no proof here.
    pub fn winner_at(&self, pos: &Position) -> Result<Option<Color>, StoreError> {
        if let Some(o) = pos.outcome(self.rules) {
            return Ok(Some(o.winner().unwrap_or(pos.turn())));
        }
        if let Some(r) = self.record(pos)? {
            return Ok(Some(match r.verdict {
                WinLoss::Win => pos.turn(),
                WinLoss::Loss => !pos.turn(),
            }));
        }
        for &m in pos.legal_moves().iter() {
            if self
                .record(&pos.play(m))?
                .is_some_and(|r| r.verdict == WinLoss::Win)
            {
                return Ok(Some(!pos.turn()));
            }
        }
        Ok(None)
    }

    /// The size the store gives the proof at a position: the record's
    /// size, 1 for a finished game, `None` without a record.
    pub fn size(&self, pos: &Position) -> Result<Option<u64>, StoreError> {
        if let Some(r) = self.record(pos)? {
            return Ok(Some(r.size));
        }
        Ok(pos.is_game_over(self.rules).then_some(1))
    }

    /// The size of the proof below `child`, a move's result under a node
    /// with record `parent`: its own record's size, 1 for a finished game
    /// or (under a record resting on tables) a table-sized leaf; `None`
    /// when the child is not in the proof.
    pub fn child_size(&self, parent: &Record, child: &Position) -> Result<Option<u64>, StoreError> {
        if let Some(s) = self.size(child)? {
            return Ok(Some(s));
        }
        Ok((parent.rests_on_tables() && child.men() <= MAX_MEN).then_some(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn win(mv: MoveCode) -> Record {
        Record {
            verdict: WinLoss::Win,
            flags: 0,
            mv,
            size: 3,
        }
    }

    #[test]
    fn records_become_nodes_for_the_winner() {
        let start = Position::startpos();
        let e3 = MoveCode::from_uci("e2e3").unwrap();
        let mut m = HashMap::new();
        m.insert(start.pack().0, win(e3));
        let p = StoredProof::new(m, Rules::International);
        match p.node_for(&start, Color::White).unwrap() {
            Ok(StoredNode::Win { mv, .. }) => assert!(mv.watkins_code().same_move(e3)),
            n => panic!("{n:?}"),
        }
        assert!(matches!(
            p.node_for(&start, Color::Black).unwrap(),
            Err(Broken::WrongVerdict { .. })
        ));
        let after = start.play(start.legal_moves()[0]);
        assert!(matches!(p.node(&after).unwrap(), Ok(StoredNode::Missing)));

        let mut bad = HashMap::new();
        bad.insert(start.pack().0, win(MoveCode::from_uci("e2e5").unwrap()));
        let p = StoredProof::new(bad, Rules::International);
        assert!(matches!(
            p.node(&start).unwrap(),
            Err(Broken::IllegalMove(_))
        ));
    }
}
