//! Checking a proof held in the proof store.
//!
//! From a position, the walk asks the store for the winner's move at each
//! winner-to-move position and enumerates every legal move (with shakmaty)
//! at each loser-to-move position. The store's keys are computed here with
//! [`game::pack`], an independent re-implementation of the documented
//! packing. The walk is sequential and keeps one entry per distinct
//! position of the proof (a store proof is at most the store's size).

use super::game::{self, End, EndKind};
use super::{LeafTables, Leaves, Reason, Rejection, Report, Rules, Verdict};
use crate::store::{self, Record};
use crate::wintree::MoveCode;
use shakmaty::variant::Antichess;
use shakmaty::{Color, Move, Position};
use std::collections::HashMap;
use std::time::Instant;

/// Where proven positions are looked up.
pub trait StoreSource: Sync {
    /// The record of a position under the rule set, if any.
    fn record(&self, rules: Rules, key: &[u8; game::KEY_LEN]) -> Result<Option<Record>, String>;
}

fn store_rules(r: Rules) -> store::Rules {
    match r {
        Rules::International => store::Rules::International,
        Rules::Fics => store::Rules::Fics,
    }
}

impl StoreSource for store::StoreReader {
    fn record(&self, rules: Rules, key: &[u8; game::KEY_LEN]) -> Result<Option<Record>, String> {
        self.get(store_rules(rules), key).map_err(|e| e.to_string())
    }
}

impl StoreSource for store::Store {
    fn record(&self, rules: Rules, key: &[u8; game::KEY_LEN]) -> Result<Option<Record>, String> {
        self.get(store_rules(rules), key).map_err(|e| e.to_string())
    }
}

impl StoreSource for HashMap<[u8; game::KEY_LEN], Record> {
    fn record(&self, _rules: Rules, key: &[u8; game::KEY_LEN]) -> Result<Option<Record>, String> {
        Ok(self.get(key).copied())
    }
}

#[derive(Clone, Copy)]
enum State {
    Open,
    Done(u32),
}

struct Walk<'s, S: StoreSource + ?Sized> {
    src: &'s S,
    rules: Rules,
    winner: Color,
    seen: HashMap<[u8; game::KEY_LEN], State>,
    positions: u64,
    repeats: u64,
    leaves: Leaves,
    path: Vec<Move>,
    error: Option<(Reason, Antichess)>,
    tables: Option<&'s LeafTables>,
}

impl<S: StoreSource + ?Sized> Walk<'_, S> {
    fn fail(&mut self, r: Reason, pos: &Antichess) -> Result<u32, ()> {
        self.error = Some((r, pos.clone()));
        Err(())
    }

    fn visit(&mut self, pos: &Antichess) -> Result<u32, ()> {
        let key = game::pack(pos);
        match self.seen.get(&key) {
            Some(State::Done(h)) => {
                self.repeats += 1;
                return Ok(*h);
            }
            Some(State::Open) => {
                return self.fail(
                    Reason::Cycle("this position repeats a position on the line above it".into()),
                    pos,
                );
            }
            None => {}
        }
        self.positions += 1;
        let legal = pos.legal_moves();
        if let Some(End { winner, kind }) = game::game_end(pos, &legal, self.rules) {
            if winner != Some(self.winner) {
                let what = match winner {
                    Some(c) => format!("{} wins under {} rules", game::color_name(c), self.rules),
                    None => format!("a draw under {} rules", self.rules),
                };
                return self.fail(Reason::LeafNotWon(what), pos);
            }
            match kind {
                EndKind::NoPieces => self.leaves.no_pieces += 1,
                EndKind::Stalemate => self.leaves.stalemate += 1,
                EndKind::Other => self.leaves.other += 1,
            }
            self.seen.insert(key, State::Done(0));
            return Ok(0);
        }
        let moves: Vec<Move> = if pos.turn() == self.winner {
            let rec = match self.src.record(self.rules, &key) {
                Ok(r) => r,
                Err(e) => {
                    return self.fail(Reason::BadRecord(format!("store read failed: {e}")), pos);
                }
            };
            match rec {
                None => {
                    if game::men(pos) <= 4 {
                        if let Err(r) =
                            super::table_leaf(self.tables, pos, self.winner, &mut self.leaves)
                        {
                            return self.fail(r, pos);
                        }
                        self.seen.insert(key, State::Done(0));
                        return Ok(0);
                    }
                    return self.fail(Reason::MissingRecord, pos);
                }
                Some(r) => {
                    if r.verdict != store::Verdict::Win {
                        return self.fail(
                            Reason::BadRecord("a loss record for the winner to move".into()),
                            pos,
                        );
                    }
                    match game::find_move(&legal, MoveCode(r.mv)) {
                        Some((_, m)) => vec![m],
                        None => {
                            return self.fail(
                                Reason::BadRecord(format!(
                                    "its move {} is not legal",
                                    MoveCode(r.mv).uci()
                                )),
                                pos,
                            );
                        }
                    }
                }
            }
        } else {
            legal.iter().copied().collect()
        };
        if self.path.len() as u32 >= super::MAX_PLIES {
            return self.fail(Reason::TooDeep, pos);
        }
        self.seen.insert(key, State::Open);
        let mut h = 0;
        for m in moves {
            let mut child = pos.clone();
            child.play_unchecked(m);
            self.path.push(m);
            h = h.max(self.visit(&child)? + 1);
            self.path.pop();
        }
        self.seen.insert(key, State::Done(h));
        Ok(h)
    }
}

/// Checks the proof in the store below `root` (reached from the start
/// position by `root_line`, given in SAN for the report). The winner is
/// given or inferred: the side to move if the root has a win record, else
/// the opponent if a reply has one.
pub fn check_store<S: StoreSource + ?Sized>(
    src: &S,
    rules: Rules,
    root: &Antichess,
    root_line: &str,
    winner: Option<Color>,
) -> Report {
    check_store_with(src, rules, root, root_line, winner, None)
}

/// As [`check_store`], scoring leaves of 4 men or fewer (winner to move,
/// no record) with `tables` when given (see [`super::tables`]).
pub fn check_store_with<S: StoreSource + ?Sized>(
    src: &S,
    rules: Rules,
    root: &Antichess,
    root_line: &str,
    winner: Option<Color>,
    tables: Option<&LeafTables>,
) -> Report {
    let t0 = Instant::now();
    let mut report = Report::begin(
        rules,
        root,
        root_line.to_string(),
        winner.unwrap_or(root.turn()),
        t0,
    );
    let winner = match winner.or_else(|| infer(src, rules, root)) {
        Some(w) => w,
        None => {
            report.verdict = Verdict::Rejected(Box::new(Rejection {
                line: root_line.to_string(),
                fen: report.root_fen.clone(),
                node: None,
                reason: Reason::NoProof(format!(
                    "the store holds no proven win here under {rules} rules"
                )),
            }));
            return report;
        }
    };
    report.winner = winner;
    // Deep lines recurse: run on a thread with a large stack.
    let result = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(1 << 30)
            .spawn_scoped(s, || {
                let mut w = Walk {
                    src,
                    rules,
                    winner,
                    seen: HashMap::new(),
                    positions: 0,
                    repeats: 0,
                    leaves: Leaves::default(),
                    path: Vec::new(),
                    error: None,
                    tables,
                };
                let h = w.visit(root);
                (h, w.positions, w.repeats, w.leaves, w.path, w.error)
            })
            .expect("spawn checker thread")
            .join()
            .expect("checker thread panicked")
    });
    let (h, positions, repeats, leaves, path, error) = result;
    report.positions = positions;
    report.positions_with_repeats = positions + repeats;
    report.leaves = leaves;
    match (h, error) {
        (Ok(h), _) => {
            report.longest_line = h as u64;
            super::finish_tables(&mut report, tables);
        }
        (Err(()), Some((reason, pos))) => {
            let codes: Vec<MoveCode> = path.iter().map(game::move_code).collect();
            let (line, _) = game::san_line(root, &codes);
            let line = match (root_line.is_empty(), line.is_empty()) {
                (true, _) => line,
                (false, true) => root_line.to_string(),
                (false, false) => format!("{root_line} {line}"),
            };
            report.verdict = Verdict::Rejected(Box::new(Rejection {
                line,
                fen: game::fen(&pos),
                node: None,
                reason,
            }));
        }
        (Err(()), None) => unreachable!("errors carry a reason"),
    }
    report.elapsed = t0.elapsed();
    report
}

fn infer<S: StoreSource + ?Sized>(src: &S, rules: Rules, root: &Antichess) -> Option<Color> {
    let legal = root.legal_moves();
    if let Some(End { winner, .. }) = game::game_end(root, &legal, rules) {
        return winner;
    }
    let key = game::pack(root);
    if let Ok(Some(r)) = src.record(rules, &key)
        && r.verdict == store::Verdict::Win
    {
        return Some(root.turn());
    }
    for m in &legal {
        let mut c = root.clone();
        c.play_unchecked(*m);
        if let Ok(Some(r)) = src.record(rules, &game::pack(&c))
            && r.verdict == store::Verdict::Win
        {
            return Some(!root.turn());
        }
    }
    None
}
