//! Checking a proof held in the proof store.
//!
//! From a position, the walk asks the store for the winner's move at each
//! winner-to-move position and enumerates every legal move (with shakmaty)
//! at each loser-to-move position. The store's keys are computed here with
//! [`game::pack`], an independent re-implementation of the documented
//! packing.
//!
//! The walk goes breadth first: each level's positions are expanded in
//! parallel (rayon; store lookups, move generation and game ends), then
//! merged in a fixed order, each distinct position (by its full packed
//! key) once. A second, sequential pass over the resulting graph (no move
//! generation) finds repetitions on a line and the longest line. Memory:
//! one map entry, one node and its edges per distinct position of the
//! proof, plus the positions of the widest level.

use super::game::{self, End, EndKind};
use super::{LeafTables, Leaves, Reason, Rejection, Report, RuleSet, Rules, Verdict};
use crate::store::{self, Record};
use crate::wintree::MoveCode;
use rayon::prelude::*;
use shakmaty::variant::Antichess;
use shakmaty::{Color, Move, Position};
use std::collections::HashMap;
use std::time::Instant;

/// Where proven positions are looked up.
pub trait StoreSource: Sync {
    /// The record of a position under the rule set, if any.
    fn record(&self, rules: Rules, key: &[u8; game::KEY_LEN]) -> Result<Option<Record>, String>;
}

impl StoreSource for store::StoreReader {
    fn record(&self, rules: Rules, key: &[u8; game::KEY_LEN]) -> Result<Option<Record>, String> {
        self.get(rules, key).map_err(|e| e.to_string())
    }
}

impl StoreSource for store::Store {
    fn record(&self, rules: Rules, key: &[u8; game::KEY_LEN]) -> Result<Option<Record>, String> {
        self.get(rules, key).map_err(|e| e.to_string())
    }
}

impl StoreSource for HashMap<[u8; game::KEY_LEN], Record> {
    fn record(&self, _rules: Rules, key: &[u8; game::KEY_LEN]) -> Result<Option<Record>, String> {
        Ok(self.get(key).copied())
    }
}

/// A distinct position of the proof, as the walk found it.
struct Node {
    /// The node it was first reached from (the root: itself), and by which
    /// move: the line to any node is rebuilt from these.
    parent: u32,
    mv: MoveCode,
    /// Its children: `edges[first..first + count]`.
    first: u32,
    count: u32,
}

/// What expanding one position found.
enum Expanded {
    /// A game end won by the winner, or a table leaf.
    Leaf,
    /// The keys of the positions to visit next, with the moves to them.
    Inner(Vec<([u8; game::KEY_LEN], Move)>),
    /// A fault at this position.
    Fault(Reason),
}

/// What a walk checks against: the store, the rule set, the winner and
/// the tables for leaves.
struct Ctx<'a, S: ?Sized> {
    src: &'a S,
    rules: Rules,
    winner: Color,
    tables: Option<&'a LeafTables>,
}

/// Expands one position: a winner's game end or table leaf, the stored
/// move at a winner-to-move position, every legal move at a loser's.
fn expand<S: StoreSource + ?Sized>(
    ctx: &Ctx<'_, S>,
    pos: &Antichess,
    leaves: &mut Leaves,
) -> Expanded {
    let Ctx {
        src,
        rules,
        winner,
        tables,
    } = *ctx;
    let legal = pos.legal_moves();
    if let Some(End { winner: w, kind }) = game::game_end(pos, &legal, rules) {
        if w != Some(winner) {
            let what = match w {
                Some(c) => format!("{} wins under {rules} rules", game::color_name(c)),
                None => format!("a draw under {rules} rules"),
            };
            return Expanded::Fault(Reason::LeafNotWon(what));
        }
        match kind {
            EndKind::NoPieces => leaves.no_pieces += 1,
            EndKind::Stalemate => leaves.stalemate += 1,
            EndKind::Other => leaves.other += 1,
        }
        return Expanded::Leaf;
    }
    let moves: Vec<Move> = if pos.turn() == winner {
        let rec = match src.record(rules, &game::pack(pos)) {
            Ok(r) => r,
            Err(e) => return Expanded::Fault(Reason::BadRecord(format!("store read failed: {e}"))),
        };
        match rec {
            None if game::men(pos) <= 4 => {
                return match super::table_leaf(tables, pos, winner, leaves) {
                    Ok(()) => Expanded::Leaf,
                    Err(r) => Expanded::Fault(r),
                };
            }
            None => return Expanded::Fault(Reason::MissingRecord),
            Some(r) if r.verdict != store::WinLoss::Win => {
                return Expanded::Fault(Reason::BadRecord(
                    "a loss record for the winner to move".into(),
                ));
            }
            Some(r) => match game::find_move(&legal, r.mv) {
                Some((_, m)) => vec![m],
                None => {
                    return Expanded::Fault(Reason::BadRecord(format!(
                        "its move {} is not legal",
                        r.mv.uci()
                    )));
                }
            },
        }
    } else {
        legal.iter().copied().collect()
    };
    Expanded::Inner(
        moves
            .into_iter()
            .map(|m| {
                let mut child = pos.clone();
                child.play_unchecked(m);
                (game::pack(&child), m)
            })
            .collect(),
    )
}

/// Positions expanded at once (their children are held until merged).
const CHUNK: usize = 1 << 14;

/// The proof's graph, built level by level from the root.
struct Walk {
    nodes: Vec<Node>,
    /// Children with the moves to them.
    edges: Vec<(u32, MoveCode)>,
    leaves: Leaves,
}

/// Where a walk stopped short: the line from the root to the position
/// at fault, and why.
struct Fault {
    line: Vec<MoveCode>,
    reason: Reason,
}

impl Walk {
    /// The moves from the root to a node.
    fn line_to(&self, mut n: u32) -> Vec<MoveCode> {
        let mut codes = Vec::new();
        while n != 0 {
            codes.push(self.nodes[n as usize].mv);
            n = self.nodes[n as usize].parent;
        }
        codes.reverse();
        codes
    }

    /// Every distinct position below the root, expanded in parallel a
    /// level at a time (breadth first, so a fault found is one of the
    /// nearest to the root, and the first in a fixed order).
    fn build<S: StoreSource + ?Sized>(ctx: &Ctx<'_, S>, root: &Antichess) -> (Walk, Option<Fault>) {
        let mut w = Walk {
            nodes: vec![Node {
                parent: 0,
                mv: MoveCode::NONE,
                first: 0,
                count: 0,
            }],
            edges: Vec::new(),
            leaves: Leaves::default(),
        };
        let mut ids: HashMap<[u8; game::KEY_LEN], u32, crate::fasthash::FastBuild> =
            HashMap::default();
        ids.insert(game::pack(root), 0);
        let mut level: Vec<(u32, Antichess)> = vec![(0, root.clone())];
        let mut depth = 0u32;
        while !level.is_empty() {
            // New positions: (id, index of the parent in `level`, move).
            let mut next: Vec<(u32, u32, Move)> = Vec::new();
            // In chunks, so that the children held at once stay few.
            for (ci, chunk) in level.chunks(CHUNK).enumerate() {
                let expanded: Vec<(Expanded, Leaves)> = chunk
                    .par_iter()
                    .map(|(_, pos)| {
                        let mut leaves = Leaves::default();
                        let e = expand(ctx, pos, &mut leaves);
                        (e, leaves)
                    })
                    .collect();
                for (j, ((id, _), (e, leaves))) in chunk.iter().zip(expanded).enumerate() {
                    w.leaves.add(&leaves);
                    let children = match e {
                        Expanded::Leaf => continue,
                        Expanded::Fault(reason) => {
                            let line = w.line_to(*id);
                            return (w, Some(Fault { line, reason }));
                        }
                        Expanded::Inner(c) => c,
                    };
                    if depth >= super::MAX_PLIES {
                        let line = w.line_to(*id);
                        let f = Fault {
                            line,
                            reason: Reason::TooDeep,
                        };
                        return (w, Some(f));
                    }
                    let first = w.edges.len() as u32;
                    let parent = (ci * CHUNK + j) as u32;
                    for (key, m) in children {
                        let mv = game::move_code(&m);
                        let next_id = w.nodes.len() as u32;
                        let c = *ids.entry(key).or_insert(next_id);
                        if c == next_id {
                            w.nodes.push(Node {
                                parent: *id,
                                mv,
                                first: 0,
                                count: 0,
                            });
                            next.push((c, parent, m));
                        }
                        w.edges.push((c, mv));
                    }
                    let n = &mut w.nodes[*id as usize];
                    n.first = first;
                    n.count = w.edges.len() as u32 - first;
                }
            }
            // The new positions, made in parallel from their parents.
            level = next
                .par_iter()
                .map(|&(c, parent, m)| {
                    let mut p = level[parent as usize].1.clone();
                    p.play_unchecked(m);
                    (c, p)
                })
                .collect();
            depth += 1;
        }
        (w, None)
    }

    /// The longest line from the root (plies), or the first repetition on
    /// a line: a depth-first pass over the graph, no moves generated.
    fn longest_line(&self) -> Result<u32, Fault> {
        const NEW: u8 = 0;
        const OPEN: u8 = 1;
        const DONE: u8 = 2;
        let mut state = vec![NEW; self.nodes.len()];
        let mut height = vec![0u32; self.nodes.len()];
        // (node, next child slot)
        let mut stack: Vec<(u32, u32)> = vec![(0, 0)];
        state[0] = OPEN;
        while let Some(&mut (n, ref mut i)) = stack.last_mut() {
            let node = &self.nodes[n as usize];
            if *i == node.count {
                let h = (node.first..node.first + node.count)
                    .map(|e| height[self.edges[e as usize].0 as usize] + 1)
                    .max()
                    .unwrap_or(0);
                height[n as usize] = h;
                state[n as usize] = DONE;
                stack.pop();
                continue;
            }
            let (c, _) = self.edges[(node.first + *i) as usize];
            *i += 1;
            match state[c as usize] {
                DONE => {}
                OPEN => {
                    return Err(Fault {
                        line: self.stack_line(&stack),
                        reason: Reason::Cycle(
                            "this position repeats a position on the line above it".into(),
                        ),
                    });
                }
                _ => {
                    if stack.len() as u32 > super::MAX_PLIES {
                        return Err(Fault {
                            line: self.stack_line(&stack),
                            reason: Reason::TooDeep,
                        });
                    }
                    state[c as usize] = OPEN;
                    stack.push((c, 0));
                }
            }
        }
        Ok(height[0])
    }

    /// The moves of a depth-first path: each stack entry's last child
    /// taken.
    fn stack_line(&self, stack: &[(u32, u32)]) -> Vec<MoveCode> {
        stack
            .iter()
            .map(|&(n, i)| self.edges[(self.nodes[n as usize].first + i - 1) as usize].1)
            .collect()
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
/// no record) with `tables` when given (see [`super::leaf_tables`]).
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
        RuleSet::from(rules),
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
    let ctx = Ctx {
        src,
        rules,
        winner,
        tables,
    };
    let (w, mut fault) = Walk::build(&ctx, root);
    let mut height = 0;
    if fault.is_none() {
        match w.longest_line() {
            Ok(h) => height = h,
            Err(f) => fault = Some(f),
        }
    }
    let (positions, edges, leaves) = (w.nodes.len(), w.edges.len(), w.leaves);
    drop(w);
    report.positions = positions as u64;
    // Each edge reaches its child once more: the root plus every edge.
    report.positions_with_repeats = 1 + edges as u64;
    report.leaves = leaves;
    match fault {
        None => {
            report.longest_line = height as u64;
            super::finish_tables(&mut report, tables);
        }
        Some(Fault {
            line: codes,
            reason,
        }) => {
            let (line, pos) = game::san_line(root, &codes);
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
        && r.verdict == store::WinLoss::Win
    {
        return Some(root.turn());
    }
    for m in &legal {
        let mut c = root.clone();
        c.play_unchecked(*m);
        if let Ok(Some(r)) = src.record(rules, &game::pack(&c))
            && r.verdict == store::WinLoss::Win
        {
            return Some(!root.turn());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A walk over a hand-made graph: `edges[n]` lists node n's children
    /// with the move codes to them.
    fn graph(edges: &[&[(u32, u16)]]) -> Walk {
        let mut w = Walk {
            nodes: Vec::new(),
            edges: Vec::new(),
            leaves: Leaves::default(),
        };
        for out in edges {
            w.nodes.push(Node {
                parent: 0,
                mv: MoveCode::NONE,
                first: w.edges.len() as u32,
                count: out.len() as u32,
            });
            for &(c, m) in out.iter() {
                w.edges.push((c, MoveCode::from_raw(m)));
            }
        }
        w
    }

    #[test]
    fn the_longest_line_counts_plies_through_transpositions() {
        // 0 -> 1 -> 3 -> 4 and 0 -> 2 -> 3: three plies.
        let w = graph(&[&[(1, 1), (2, 2)], &[(3, 3)], &[(3, 4)], &[(4, 5)], &[]]);
        assert_eq!(w.longest_line().ok(), Some(3));
    }

    #[test]
    fn a_repetition_is_reported_on_the_line_that_repeats() {
        // 0 -> 1 -> 2 -> 1: the line 10, 20, 30 ends where its first move
        // ended. A transposition (0 -> 3 -> 2, then 2 -> 1) is no cycle by
        // itself; the cycle is found either way.
        let w = graph(&[&[(1, 10), (3, 40)], &[(2, 20)], &[(1, 30)], &[(2, 50)]]);
        let f = w.longest_line().expect_err("a cycle");
        assert!(matches!(f.reason, Reason::Cycle(_)));
        let codes: Vec<u16> = f.line.iter().map(|m| m.raw()).collect();
        assert_eq!(codes, [10, 20, 30]);
        // No cycle: 2 -> 4 instead.
        let w = graph(&[&[(1, 10), (3, 40)], &[(2, 20)], &[(4, 30)], &[(2, 50)], &[]]);
        assert_eq!(w.longest_line().ok(), Some(3));
    }
}
