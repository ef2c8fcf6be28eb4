//! The walk from a stored proof's root to the DAG written as a win-tree
//! file: the stored move at the winner's positions, every legal move at the
//! loser's, leaves at finished games and at positions of 4 men or fewer
//! without a record; table leaves expanded from the endgame tables, a
//! win-tree file's open leaves grafted with stored proofs, and under the
//! fifty-move rule every node's headroom need.

use super::{ExportError, Source, Walked};
use crate::rules::{Color, Move, Position};
use crate::store::{Key, StoreReader};
use crate::stored::{StoredNode, StoredProof};
use crate::tables::{Tables, Value};
use crate::vocab::FIFTY_MOVE_PLIES;
use crate::wintree::{MoveCode, NodeKind, ProofDag, WinTree};
use std::collections::HashMap;

/// A stored proof that cannot be exported.
#[derive(Debug)]
pub(super) struct Broken(pub(super) String);

struct Exporter<'r> {
    proof: StoredProof<&'r StoreReader>,
    winner: Color,
    dag: ProofDag,
    ids: HashMap<Key, (usize, bool)>,
    table_leaves: u64,
    path: Vec<Move>,
    /// Tables to expand table leaves with.
    expand: Option<&'r Tables>,
    /// Positions written from the tables.
    expanded: u64,
    /// The nodes of the tables' lines (`--expand-tables`), apart from the
    /// stored proof's: position, node and whether its subtree is written.
    table_ids: HashMap<Key, (usize, bool)>,
    /// Open leaves of a merged win-tree file replaced by stored proofs.
    grafted: u64,
    /// Under the fifty-move rule: the need of each written node.
    need: Option<HashMap<usize, u8>>,
}

impl Exporter<'_> {
    /// Under the fifty-move rule, whether a position at half-move clock
    /// `clock` with a proof needing `need` plies is within the limit, or
    /// why not.
    fn fits(&self, pos: &Position, need: u8) -> Result<(), Broken> {
        if self.need.is_none() || pos.halfmoves() + need as u32 <= FIFTY_MOVE_PLIES {
            return Ok(());
        }
        Err(Broken(format!(
            "the fifty-move rule: the proof here needs {need} plies before a capture or pawn move, but the position is reached at half-move clock {}",
            pos.halfmoves()
        )))
    }

    /// Records the need of node `id` (position `pos`) from its moves and
    /// children, and checks that it fits the clock.
    fn set_need(
        &mut self,
        id: usize,
        pos: &Position,
        kids: &[(Move, usize)],
    ) -> Result<(), Broken> {
        let Some(map) = &self.need else {
            return Ok(());
        };
        let n = kids
            .iter()
            .map(|&(m, c)| {
                if m.is_irreversible() {
                    1
                } else {
                    map.get(&c).copied().unwrap_or(0).saturating_add(1)
                }
            })
            .max()
            .unwrap_or(0);
        self.fits(pos, n)?;
        if let Some(map) = &mut self.need {
            map.insert(id, n);
        }
        Ok(())
    }

    /// A node already written, reached again: its need must fit.
    fn reuse(&self, id: usize, pos: &Position) -> Result<(), Broken> {
        match &self.need {
            Some(map) => self.fits(pos, map.get(&id).copied().unwrap_or(0)),
            None => Ok(()),
        }
    }
}

impl Exporter<'_> {
    /// The winner's move at a table position: the quickest win by the
    /// tables. Under the fifty-move rule (tables giving the distance to the
    /// next capture or pawn move) the move with the least headroom need: a
    /// capture or pawn move to a lost position, else the reversible move
    /// to the loss nearest its next capture or pawn move, if it fits the
    /// clock.
    /// With the move, its order: under the fifty-move rule the headroom
    /// need the move gives the position (0 standing for a capture or pawn
    /// move, whose need is 1), else the distance to the win.
    fn quickest(&self, t: &Tables, pos: &Position) -> Result<(u32, Move), Broken> {
        let fifty = self.need.is_some();
        let mut best: Option<(u32, Move)> = None;
        for &m in pos.legal_moves().iter() {
            let child = pos.play(m);
            let Some(Value::Loss(n)) = t.probe(&child) else {
                continue;
            };
            let key = match (fifty, m.is_irreversible()) {
                (false, _) => n as u32,
                (true, true) => 0,
                (true, false) if child.halfmoves() + n as u32 <= FIFTY_MOVE_PLIES => n as u32 + 1,
                (true, false) => continue,
            };
            if best.is_none_or(|(b, _)| key < b) {
                best = Some((key, m));
            }
        }
        best.ok_or_else(|| {
            Broken(format!(
                "the endgame tables in {} do not score this position ({}) a win for the winner",
                t.dir().display(),
                pos.to_fen()
            ))
        })
    }

    /// The winner's move at a table position into a position the file
    /// already holds whole, if there is one: a move the tables score a win
    /// (the child lost for the loser) whose child is written, by the stored
    /// proof or by a table line, and fits the clock there. Of several, the
    /// one [`Self::quickest`]'s order puts first. Linking to a written
    /// subtree cannot close a cycle (the position being written is not in
    /// it), and the tables' lines converge: sharing them keeps the file
    /// smaller than each table leaf's quickest line on its own.
    ///
    /// Under the fifty-move rule only a move that needs no more plies
    /// before the next capture or pawn move than the quickest line does
    /// (`quick`, [`Self::quickest`]'s order): a position is written once,
    /// with the need of its first writing, and reached again at a later
    /// clock it must still fit. Kept at most the tables' own need, it fits
    /// wherever the tables' line would (without that bound 1.e3 b5 2.Bxb5
    /// e5's export broke: a shared line needing 90 plies reached at clock
    /// 13).
    fn shared_move(&self, t: &Tables, pos: &Position, quick: u32) -> Option<Move> {
        let fifty = self.need.is_some();
        let bound = quick.max(1);
        let mut best: Option<(u32, Move)> = None;
        for &m in pos.legal_moves().iter() {
            let child = pos.play(m);
            let key = child.pack().0;
            let written = [self.ids.get(&key), self.table_ids.get(&key)]
                .into_iter()
                .flatten()
                .find(|&&(_, done)| done);
            let Some(&(id, _)) = written else {
                continue;
            };
            let Some(Value::Loss(n)) = t.probe(&child) else {
                continue;
            };
            if self.reuse(id, &child).is_err() {
                continue;
            }
            if let Some(map) = &self.need {
                let need = if m.is_irreversible() {
                    1
                } else {
                    map.get(&id).copied().unwrap_or(0) as u32 + 1
                };
                if need > bound {
                    continue;
                }
            }
            let order = match (fifty, m.is_irreversible()) {
                (false, _) => n as u32,
                (true, true) => 0,
                (true, false) => n as u32 + 1,
            };
            if best.is_none_or(|(b, _)| order < b) {
                best = Some((order, m));
            }
        }
        best.map(|(_, m)| m)
    }

    /// Under the fifty-move rule, a position reached at clock 100 or more
    /// that is not a finished game.
    fn past_fifty(&self, pos: &Position) -> Result<(), Broken> {
        if self.need.is_some()
            && pos.halfmoves() >= FIFTY_MOVE_PLIES
            && pos.outcome(self.proof.rules()).is_none()
        {
            return Err(Broken(format!(
                "the fifty-move rule: reached at half-move clock {} and the game is not over",
                pos.halfmoves()
            )));
        }
        Ok(())
    }

    fn visit(&mut self, pos: &Position) -> Result<Result<usize, Broken>, ExportError> {
        let key = pos.pack().0;
        if let Some(&(id, done)) = self.ids.get(&key) {
            if !done {
                return Ok(Err(Broken("the stored proof repeats a position".into())));
            }
            return Ok(self.reuse(id, pos).map(|()| id));
        }
        if let Err(b) = self.past_fifty(pos) {
            return Ok(Err(b));
        }
        let loser_to_move = pos.turn() != self.winner;
        let moves: Vec<Move> = match self.proof.node_for(pos, self.winner)? {
            Err(b) => return Ok(Err(Broken(b.to_string()))),
            Ok(n @ (StoredNode::GameEnd(_) | StoredNode::Win { .. } | StoredNode::Loss { .. })) => {
                n.moves(pos)
            }
            // The loser's replies are all legal moves, record or not: the
            // winner's positions below say whether the proof goes on.
            Ok(StoredNode::TableSized | StoredNode::Missing) if loser_to_move => {
                pos.legal_moves().to_vec()
            }
            Ok(StoredNode::TableSized) => match self.expand {
                // The tables' line from here, on its own.
                Some(t) => {
                    let r = self.expand_table(t, pos)?;
                    if let Ok(id) = r {
                        self.ids.insert(key, (id, true));
                    }
                    return Ok(r);
                }
                None => {
                    self.table_leaves += 1;
                    Vec::new()
                }
            },
            Ok(StoredNode::Missing) => {
                return Ok(Err(Broken("no record for the winner's move".into())));
            }
        };
        let id = self.dag.add_node();
        self.ids.insert(key, (id, false));
        let mut kids = Vec::with_capacity(moves.len());
        for m in moves {
            self.path.push(m);
            let child = match self.visit(&pos.play(m))? {
                Ok(c) => c,
                Err(b) => return Ok(Err(b)),
            };
            self.path.pop();
            self.dag.add_edge(id, m.watkins_code(), child);
            kids.push((m, child));
        }
        if let Err(b) = self.set_need(id, pos, &kids) {
            return Ok(Err(b));
        }
        self.ids.insert(key, (id, true));
        Ok(Ok(id))
    }

    /// The subtree the endgame tables give at `pos` (`--expand-tables`):
    /// at the winner's positions the move [`Self::shared_move`] or else [`Self::quickest`] picks, at
    /// the loser's every legal move, down to finished games, with the
    /// store's records left aside. The tables' distances fall along every
    /// line (to the win, or under the fifty-move rule to the next capture
    /// or pawn move, which cannot be undone), so it has no cycle of its
    /// own. A position the stored proof has written in full is linked to
    /// (its subtree holds no position still being written); one the
    /// stored proof is still writing (a table line leading back to the
    /// stored line above it, as `prove --tables` proofs can) is not: it
    /// gets a node of the table line's own, so the file has no cycle.
    fn expand_table(
        &mut self,
        t: &Tables,
        pos: &Position,
    ) -> Result<Result<usize, Broken>, ExportError> {
        let key = pos.pack().0;
        if let Some(&(id, true)) = self.ids.get(&key)
            && self.reuse(id, pos).is_ok()
        {
            return Ok(Ok(id));
        }
        if let Some(&(id, done)) = self.table_ids.get(&key) {
            if !done {
                return Ok(Err(Broken(format!(
                    "the endgame tables in {} lead back to this position",
                    t.dir().display()
                ))));
            }
            return Ok(self.reuse(id, pos).map(|()| id));
        }
        if let Err(b) = self.past_fifty(pos) {
            return Ok(Err(b));
        }
        let moves = match pos.outcome(self.proof.rules()) {
            Some(o) if o == crate::rules::Outcome::Win(self.winner) => Vec::new(),
            Some(o) => {
                return Ok(Err(Broken(format!(
                    "the endgame tables' line ends in a game not won by the winner ({o})"
                ))));
            }
            None if pos.turn() == self.winner => match self
                .quickest(t, pos)
                .map(|(quick, m)| self.shared_move(t, pos, quick).unwrap_or(m))
            {
                Ok(m) => {
                    self.expanded += 1;
                    vec![m]
                }
                Err(b) => return Ok(Err(b)),
            },
            None => pos.legal_moves().to_vec(),
        };
        let id = self.dag.add_node();
        self.table_ids.insert(key, (id, false));
        let mut kids = Vec::with_capacity(moves.len());
        for m in moves {
            self.path.push(m);
            let child = match self.expand_table(t, &pos.play(m))? {
                Ok(c) => c,
                Err(b) => return Ok(Err(b)),
            };
            self.path.pop();
            self.dag.add_edge(id, m.watkins_code(), child);
            kids.push((m, child));
        }
        if let Err(b) = self.set_need(id, pos, &kids) {
            return Ok(Err(b));
        }
        self.table_ids.insert(key, (id, true));
        Ok(Ok(id))
    }

    /// Adds the win-tree file's subtree at `slot` (position `pos`) to the
    /// DAG with its moves as in the file; each leaf that is not a finished
    /// game (an open leaf) gets its proof from the store ([`Self::visit`]).
    /// Positions already added are shared.
    fn graft(
        &mut self,
        tree: &WinTree,
        slot: u32,
        pos: &Position,
    ) -> Result<Result<usize, Broken>, ExportError> {
        let key = pos.pack().0;
        if let Some(&(id, done)) = self.ids.get(&key) {
            if !done {
                return Ok(Err(Broken("the file's proof repeats a position".into())));
            }
            return Ok(self.reuse(id, pos).map(|()| id));
        }
        let slot = tree.resolve(slot)?;
        let node = tree.node(slot)?;
        match node.kind {
            NodeKind::Unsolved => Ok(Err(Broken(format!(
                "node {slot} is unsolved (a partial proof)"
            )))),
            NodeKind::Leaf if pos.outcome(self.proof.rules()).is_some() => {
                let id = self.dag.add_node();
                self.ids.insert(key, (id, true));
                Ok(Ok(id))
            }
            NodeKind::Leaf => {
                let stored = self.proof.winner_at(pos)? == Some(self.winner);
                if pos.men() > 4 && !stored {
                    return Ok(Err(Broken(format!(
                        "the store holds no proof of the open leaf {} (node {slot}) for {}",
                        pos.to_epd(),
                        self.winner.to_string().to_lowercase()
                    ))));
                }
                self.grafted += stored as u64;
                self.visit(pos)
            }
            NodeKind::Inner | NodeKind::Transposition { .. } => {
                let id = self.dag.add_node();
                self.ids.insert(key, (id, false));
                let mut kids = Vec::new();
                for child in tree.children(slot)? {
                    let child = child?;
                    let code = child.mv.unwrap_or(MoveCode::NULL);
                    let Some(m) = crate::rules::move_of_code(pos, code) else {
                        return Ok(Err(Broken(format!(
                            "the file's move {} (node {}) is not legal",
                            code.uci(),
                            child.index
                        ))));
                    };
                    self.path.push(m);
                    let c = match self.graft(tree, child.index, &pos.play(m))? {
                        Ok(c) => c,
                        Err(b) => return Ok(Err(b)),
                    };
                    self.path.pop();
                    self.dag.add_edge(id, m.watkins_code(), c);
                    kids.push((m, c));
                }
                if let Err(b) = self.set_need(id, pos, &kids) {
                    return Ok(Err(b));
                }
                self.ids.insert(key, (id, true));
                Ok(Ok(id))
            }
        }
    }
}

/// Walks the stored proof that `source` names into a DAG, on a thread with
/// a large stack (deep proofs recurse): the walked DAG, or where the proof
/// breaks, the line named from `source.start`.
pub(super) fn walk(reader: &StoreReader, source: &Source<'_>) -> Result<Walked, ExportError> {
    let root = source.root();
    let (r, ex) = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(1 << 30)
            .spawn_scoped(s, || {
                let mut ex = Exporter {
                    proof: StoredProof::new(reader, source.rule_set),
                    winner: source.winner,
                    dag: ProofDag::new(),
                    ids: HashMap::new(),
                    table_leaves: 0,
                    path: Vec::new(),
                    expand: source.expand,
                    expanded: 0,
                    table_ids: HashMap::new(),
                    grafted: 0,
                    need: source.rule_set.fifty_move.then(HashMap::new),
                };
                let r = match source.merge {
                    Some(t) => ex.graft(t, 0, &root),
                    None => ex.visit(&root),
                };
                (r, ex)
            })
            .expect("spawn export thread")
            .join()
            .expect("export thread panicked")
    });
    match r? {
        Ok(root_node) => Ok(Walked {
            dag: ex.dag,
            root: root_node,
            root_pos: root,
            prolog: source.line.iter().map(|m| m.watkins_code()).collect(),
            winner: source.winner,
            table_leaves: ex.table_leaves,
            expanded: ex.expanded,
            grafted: ex.grafted,
        }),
        Err(Broken(why)) => {
            let mut full = source.line.clone();
            full.extend(ex.path.iter().copied());
            Err(ExportError::Broken {
                line: crate::rules::numbered_san(&source.start, &full),
                why,
                merging: source.merge.is_some(),
            })
        }
    }
}
