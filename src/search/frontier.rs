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
