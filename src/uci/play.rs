//! What the engine plays at a position, and why: the winner's move where
//! the proof covers the position, else a move toward a proof, an endgame
//! table's best move, or the first legal move.

use super::index::{IndexError, PositionIndex, TreeFile};
use crate::rules::{Color, Move, Outcome, Position};
use crate::tables::{Tables, Value};
use crate::vocab::{MoveCode, RuleSet};
use crate::web::source::{Child, Forest, Lookup, ProofSource, SourceError};
use std::sync::{Arc, OnceLock};

/// Where the proof the engine plays stands at a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Standing {
    /// The game is over (under the rule set's stalemate rule).
    GameOver(Outcome),
    /// A node of the proof.
    InProof {
        /// The proof's winner (`None`: not known).
        winner: Option<Color>,
        /// The file or store that has the node.
        source: String,
        /// Positions below the move played, the child itself included.
        nodes: u64,
        /// The longest line of the proof from here after the move played,
        /// in plies, the move included (`None`: not known, as in a store).
        plies: Option<u32>,
        /// Every move of the node was answered (the loser to move).
        replies: usize,
        /// Found by the position, not by the proof's own line to it: under
        /// the fifty-move rule the proof may not hold at this position's
        /// clock (not checked).
        by_position: bool,
    },
    /// A leaf of the proof that is not game over: the win rests on the
    /// endgame tables.
    TableLeaf {
        /// The proof's winner.
        winner: Option<Color>,
        /// The tables' value for the side to move, when tables are given
        /// and hold the position.
        value: Option<Value>,
    },
    /// Not in the proof yet: the move leads toward a proof's root.
    Before {
        /// Positions of the proof behind the move.
        nodes: u64,
    },
    /// Off the proof: the tables' best move.
    Table {
        /// The tables' value for the side to move.
        value: Value,
    },
    /// Off the proof, no table: the first legal move in UCI order.
    Off,
}

/// The engine's move and where the proof stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The move (`None`: no legal move).
    pub mv: Option<Move>,
    /// Why.
    pub standing: Standing,
}

/// A proof source shared between two forests.
struct Shared(Arc<dyn ProofSource>);

impl ProofSource for Shared {
    fn name(&self) -> String {
        self.0.name()
    }

    fn lookup(&self, line: &[Move], pos: &Position) -> Result<Lookup, SourceError> {
        self.0.lookup(line, pos)
    }

    fn root_line(&self) -> Option<&[MoveCode]> {
        self.0.root_line()
    }
}

/// The proofs the engine plays from: win-tree files and proof stores.
pub struct Proofs {
    /// Every source, asked with the line from the start position.
    all: Forest,
    /// The stores, asked by position alone (they are keyed by position).
    stores: Forest,
    /// The win-tree files again, for nodes by line or by position.
    files: Vec<TreeFile>,
    rules: RuleSet,
    tables: Option<Tables>,
    index: OnceLock<Result<PositionIndex, IndexError>>,
}

impl Proofs {
    /// Proofs from `trees` (each with its file, in the same order) and
    /// `stores`, played under `rules`, with endgame `tables` off the proof.
    pub fn new(
        trees: Vec<(Box<dyn ProofSource>, TreeFile)>,
        stores: Vec<Box<dyn ProofSource>>,
        rules: RuleSet,
        tables: Option<Tables>,
    ) -> Proofs {
        let mut all: Vec<Box<dyn ProofSource>> = Vec::new();
        let mut files = Vec::new();
        for (s, f) in trees {
            all.push(s);
            files.push(f);
        }
        let mut store_only: Vec<Box<dyn ProofSource>> = Vec::new();
        for s in stores {
            let s: Arc<dyn ProofSource> = Arc::from(s);
            all.push(Box::new(Shared(s.clone())));
            store_only.push(Box::new(Shared(s)));
        }
        Proofs {
            all: Forest::new(all),
            stores: Forest::new(store_only),
            files,
            rules,
            tables,
            index: OnceLock::new(),
        }
    }

    /// The rule set played under.
    pub fn rules(&self) -> RuleSet {
        self.rules
    }

    /// The position index, built on first use; its size, or why there is
    /// none.
    pub fn index(&self) -> Result<&PositionIndex, &IndexError> {
        self.index
            .get_or_init(|| PositionIndex::build(&self.files))
            .as_ref()
    }

    /// Whether the position index is built yet.
    pub fn index_built(&self) -> bool {
        self.index.get().is_some()
    }

    /// The engine's move at `pos`, reached from the start position by
    /// `line` when that is known (else `None`: a position set up by FEN).
    pub fn choose(&self, pos: &Position, line: Option<&[Move]>) -> Result<Choice, SourceError> {
        let first = first_legal(pos);
        if let Some(o) = pos.outcome(self.rules.stalemate) {
            // Over (no move, or a draw with moves left): any legal move.
            return Ok(Choice {
                mv: first,
                standing: Standing::GameOver(o),
            });
        }
        let mut before = None;
        if let Some(line) = line {
            match self.all.lookup(line, pos)? {
                Lookup::In {
                    winner, children, ..
                } => return self.in_proof(pos, line, winner, children, None, false),
                Lookup::Before { entries } => before = Some(entries),
                Lookup::Off => {}
            }
        } else if !self.stores.is_empty()
            && let Lookup::In {
                winner, children, ..
            } = self.stores.lookup(&[], pos)?
        {
            return self.in_proof(pos, &[], winner, children, None, true);
        }
        // By position: a FEN, or a move order the files do not follow (a
        // line on its way into a proof has not left it).
        if before.is_none()
            && !self.files.is_empty()
            && let Ok(index) = self.index()
            && let Some((file, node, found)) = index.find(&self.files, pos)?
            && let Lookup::In {
                winner, children, ..
            } = self.all.lookup(&found, pos)?
        {
            return self.in_proof(pos, &found, winner, children, Some((file, node)), true);
        }
        if let Some(best) = before.and_then(|e| largest(&e)) {
            return Ok(Choice {
                mv: Some(best.mv),
                standing: Standing::Before { nodes: best.nodes },
            });
        }
        if let Some((m, value)) = self.table_move(pos) {
            return Ok(Choice {
                mv: Some(m),
                standing: Standing::Table { value },
            });
        }
        Ok(Choice {
            mv: first,
            standing: Standing::Off,
        })
    }

    /// The tables' best move and value, when tables are given and hold
    /// the position and every position after it.
    fn table_move(&self, pos: &Position) -> Option<(Move, Value)> {
        let tables = self.tables.as_ref()?;
        let ranked = crate::tables::ranked_moves(pos, self.rules, pos.halfmoves(), |p| {
            tables.probe(p).ok_or(())
        })
        .ok()?;
        ranked.first().copied()
    }

    /// The answer at a node of the proof: the winner's move; for the loser,
    /// the reply with the largest subtree (the longest resistance the
    /// proof shows); at a table leaf, the tables' move.
    fn in_proof(
        &self,
        pos: &Position,
        line: &[Move],
        winner: Option<Color>,
        children: Vec<Child>,
        found: Option<(usize, u32)>,
        by_position: bool,
    ) -> Result<Choice, SourceError> {
        // No move below a node that is not game over (that was answered
        // before): a leaf resting on the endgame tables.
        if children.is_empty() {
            let table = self.table_move(pos);
            return Ok(Choice {
                mv: table.map(|t| t.0).or_else(|| first_legal(pos)),
                standing: Standing::TableLeaf {
                    winner,
                    value: table.map(|t| t.1),
                },
            });
        }
        let winner_moves = winner == Some(pos.turn()) || winner.is_none();
        let chosen = if winner_moves {
            children[0]
        } else {
            largest(&children).expect("children is not empty")
        };
        // The file holding the node: the one found by position, else the
        // first whose moves the line follows.
        let mut node = found;
        if node.is_none() {
            for (i, f) in self.files.iter().enumerate() {
                if let Some(n) = f.node_at(line)? {
                    node = Some((i, n));
                    break;
                }
            }
        }
        let mut plies = None;
        let mut source = None;
        if let Some((i, n)) = node {
            let f = &self.files[i];
            source = Some(f.name().to_string());
            if let Some(c) = f.child(n, chosen.mv)? {
                plies = f.height(c)?.map(|h| h + 1);
            }
        }
        let source = source.unwrap_or_else(|| {
            if self.stores.len() == 1 {
                self.stores.name()
            } else {
                "a proof store".to_string()
            }
        });
        Ok(Choice {
            mv: Some(chosen.mv),
            standing: Standing::InProof {
                winner,
                source,
                nodes: chosen.nodes,
                plies,
                replies: if winner_moves { 0 } else { children.len() },
                by_position,
            },
        })
    }
}

/// The move with the largest subtree (ties: the first in UCI order).
fn largest(children: &[Child]) -> Option<Child> {
    children.iter().copied().max_by(|a, b| {
        a.nodes
            .cmp(&b.nodes)
            .then_with(|| b.mv.uci().to_string().cmp(&a.mv.uci().to_string()))
    })
}

/// The first legal move in UCI order (the same whatever the generator's
/// order).
fn first_legal(pos: &Position) -> Option<Move> {
    pos.legal_moves()
        .iter()
        .copied()
        .min_by_key(|m| m.uci().to_string())
}
