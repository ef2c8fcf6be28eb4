//! What a stopped search knows about its root's children, for a job-level
//! master (`crate::jobs`): each legal move with its child's proof and
//! disproof numbers from the transposition table (the mobility values
//! where the table has none), so the master orders the children it
//! expands by what the search learnt instead of by move counts.

use super::dfpn::child_key;
use super::prover::Prover;
use super::tt::INF;
use crate::rules::{Move, Position};

/// One child of a stopped search's root.
#[derive(Clone, Copy, Debug)]
pub struct ChildNumbers {
    /// The move.
    pub mv: Move,
    /// The child's proof number (0: proven in the tt).
    pub pn: u32,
    /// The child's disproof number (0: disproven in the tt).
    pub dn: u32,
}

impl Prover<'_> {
    /// After [`Prover::prove`] of `root` stopped: every legal move of
    /// `root` with its child's numbers, from the prover's side. A hint
    /// only: the tt may have lost an entry, and a proven child's proof is
    /// not extracted.
    pub fn root_children(&self, root: &Position) -> Vec<ChildNumbers> {
        let key = self.root_key;
        root.legal_moves()
            .iter()
            .map(|&m| {
                let child = root.play(m);
                let (pn, dn) = match self.search.tt.get(child_key(key, m, &child)) {
                    Some(v) if v.pn == 0 => (0, INF),
                    Some(v) if v.dn == 0 => (INF, 0),
                    Some(v) => (v.pn, v.dn),
                    None => {
                        let n = child.legal_moves().len().max(1) as u32;
                        if child.turn() == self.prover {
                            (1, n)
                        } else {
                            (n, 1)
                        }
                    }
                };
                ChildNumbers { mv: m, pn, dn }
            })
            .collect()
    }
}

/// A move and the numbers of the position after it: where a stopped or
/// running search stands (`prove --json`'s `root_moves` and
/// `principal_line`, the `--log-every` line), or a job-level master's top
/// tree (its report and `status.json`). The summaries print both alike.
#[derive(Clone, Debug, serde::Serialize)]
pub struct MoveStanding {
    /// The move (SAN).
    pub san: String,
    /// A plain search's: `proven`, `disproven`, `open` (searched,
    /// unsolved) or `new` (not in the table: unsearched, or its entry
    /// lost). A master's: its top-tree node's state, `frontier`,
    /// `inflight`, `inner`, `proven`, `disproven` or `failed`.
    pub state: &'static str,
    /// The proof number after the move (0: proven; 4294967295: infinite).
    pub pn: u32,
    /// The disproof number after the move.
    pub dn: u32,
    /// The replies to it (a plain search's: its position's legal moves; a
    /// master's: its children in the top tree, 0 until it is expanded);
    /// only in `root_moves`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replies: Option<u32>,
    /// Of those, the ones after which the winner wins (a plain search's:
    /// in the table, the store, a game end or an endgame table; a
    /// master's: proven in the top tree); only in `root_moves`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replies_proven: Option<u32>,
}

/// Where a stopped search stands: its root's moves, in the order the
/// search would take them, and its principal line.
#[derive(Clone, Debug, Default)]
pub struct Standing {
    /// Every legal move of the root with its numbers and its replies
    /// proven, best first (by proof number where the winner moves, by
    /// disproof number where the loser does: the search's order).
    pub root_moves: Vec<MoveStanding>,
    /// The most-proving path through the table from the root: at each
    /// position, of the unsolved children the table holds, the one the
    /// search's order puts first; where it holds none, the first of the
    /// others, and the line ends there (or at 200 plies).
    pub principal_line: Vec<MoveStanding>,
    /// The longest stretch of the principal line without a capture or
    /// pawn move, in plies (the largest half-move clock along it, counted
    /// from the root at most): a search wandering among moves that change
    /// nothing shows here.
    pub line_quiet_plies: u32,
}

/// The longest principal line a [`Standing`] gives.
const STANDING_MAX_PLIES: usize = 200;

/// A child as [`Prover::standing`] sees it.
struct Seen {
    mv: Move,
    pos: Position,
    key: u64,
    pn: u32,
    dn: u32,
    in_table: bool,
}

impl Seen {
    fn state(&self) -> &'static str {
        if self.pn == 0 {
            "proven"
        } else if self.dn == 0 {
            "disproven"
        } else if self.in_table {
            "open"
        } else {
            "new"
        }
    }
}

impl Prover<'_> {
    /// Where the last search ([`Prover::prove`], [`Prover::prove_after`])
    /// stands: its root's moves with their numbers and replies proven,
    /// and the principal line, each child's value as the search would
    /// take it (the table, a repetition, a game end, an endgame table, the
    /// store; else the mobility values). Called when a search stopped, or
    /// during one (the search's path is put back as it was). A report for
    /// the user, not a result: the table may have lost an entry, and
    /// nothing here is certified.
    pub fn standing(&mut self) -> Standing {
        let Some((root, history)) = self.root_line.split_last() else {
            return Standing::default();
        };
        let (root, history) = (*root, history.to_vec());
        let path = self.search.path.entries();
        let or_at = |p: &Position, prover| p.turn() == prover;
        let key = self.start_path(&history, &root);
        let root = &root;
        let mut kids = self.seen(root, key);
        let or = or_at(root, self.prover);
        kids.sort_by_key(|k| search_order(k, or));
        let mut root_moves = Vec::with_capacity(kids.len());
        for k in &kids {
            self.search
                .path
                .push(k.pos.zobrist(), k.mv.is_irreversible());
            let replies = self.seen(&k.pos, k.key);
            self.search.path.pop();
            root_moves.push(MoveStanding {
                san: root.san(k.mv),
                state: k.state(),
                pn: k.pn,
                dn: k.dn,
                replies: Some(replies.len() as u32),
                replies_proven: Some(replies.iter().filter(|r| r.pn == 0).count() as u32),
            });
        }
        let mut principal_line = Vec::new();
        let mut line_quiet_plies = 0;
        let (mut pos, mut key) = (*root, key);
        while principal_line.len() < STANDING_MAX_PLIES {
            let or = or_at(&pos, self.prover);
            let open: Vec<Seen> = self
                .seen(&pos, key)
                .into_iter()
                .filter(|k| k.pn != 0 && k.dn != 0)
                .collect();
            // Through the table: a child it holds no entry for (never
            // searched, or its entry lost) only where it holds none.
            let held = open.iter().any(|k| k.in_table);
            let Some(next) = open
                .into_iter()
                .filter(|k| k.in_table || !held)
                .min_by_key(|k| search_order(k, or))
            else {
                break;
            };
            principal_line.push(MoveStanding {
                san: pos.san(next.mv),
                state: next.state(),
                pn: next.pn,
                dn: next.dn,
                replies: None,
                replies_proven: None,
            });
            let depth = principal_line.len() as u32;
            line_quiet_plies = line_quiet_plies.max(next.pos.halfmoves().min(depth));
            if !next.in_table {
                break;
            }
            self.search
                .path
                .push(next.pos.zobrist(), next.mv.is_irreversible());
            (pos, key) = (next.pos, next.key);
        }
        // The path as the search left it.
        self.search.path.set_entries(&path);
        principal_line.shrink_to_fit();
        Standing {
            root_moves,
            principal_line,
            line_quiet_plies,
        }
    }

    /// The children of `pos` (tt key `key`, on top of the path) with the
    /// values a search would give them.
    fn seen(&mut self, pos: &Position, key: u64) -> Vec<Seen> {
        pos.legal_moves()
            .iter()
            .map(|&m| {
                let child = pos.play(m);
                let ckey = child_key(key, m, &child);
                let in_table = self.search.tt.get(ckey).is_some();
                let (pn, dn, _) = self.eval_child(&child, ckey, m.is_irreversible());
                Seen {
                    mv: m,
                    pos: child,
                    key: ckey,
                    pn,
                    dn,
                    in_table,
                }
            })
            .collect()
    }
}

/// The search's order of children (`dfpn::select` without a seed): by
/// proof number where the winner moves, ties to the larger disproof
/// number; by disproof number where the loser moves; then the move order.
fn search_order(k: &Seen, or: bool) -> (u32, std::cmp::Reverse<u32>) {
    if or {
        (k.pn, std::cmp::Reverse(k.dn))
    } else {
        (k.dn, std::cmp::Reverse(0))
    }
}
