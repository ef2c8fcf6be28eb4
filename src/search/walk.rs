//! Walking a stored proof: its exact size and depth, and a check that it
//! closes.

use crate::rules::{Color, Position};
use crate::store::{Key, Store, StoreError};
use crate::stored::{StoredNode, StoredProof};
use crate::vocab::RuleSet;
use std::collections::HashMap;

/// The walk after proving, for exact size and depth figures, stops at this
/// many distinct positions (the proof is then reported as at most the
/// records' estimate). The records' estimate itself is no guide: it counts
/// a position once for every path into it (3...Na5's proof of 537,266
/// positions was estimated at 10.7 G).
pub const WALK_LIMIT: u64 = 20_000_000;

/// What a walk of a stored proof found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walked {
    /// The proof closes: its distinct positions (game ends included) and
    /// its depth in plies.
    Closed {
        /// Distinct positions.
        positions: u64,
        /// Longest line, in plies.
        depth: u32,
    },
    /// The store does not hold a closed proof (a record missing or saying
    /// otherwise, an illegal move, a leaf not won, a cycle).
    Broken,
    /// The walk met its limit of distinct positions before it ended.
    TooBig,
}

/// Walks the stored proof of `root` (the winner to win) and returns its
/// exact number of distinct positions (game ends included) and its depth in
/// plies. `Ok(None)` if the store does not hold a closed proof (a record
/// missing or saying otherwise, an illegal move, a leaf not won, a cycle).
pub fn walk_proof(
    store: &Store,
    rules: impl Into<RuleSet>,
    root: &Position,
    winner: Color,
) -> Result<Option<(u64, u32)>, StoreError> {
    walk_proof_with(store, rules, root, winner, &|_| false)
}

/// As [`walk_proof`], a position without a record for which `endgame_leaf`
/// says true being a leaf (an endgame-table win for the winner).
pub fn walk_proof_with(
    store: &Store,
    rules: impl Into<RuleSet>,
    root: &Position,
    winner: Color,
    endgame_leaf: &dyn Fn(&Position) -> bool,
) -> Result<Option<(u64, u32)>, StoreError> {
    Ok(
        match walk_proof_within(store, rules, root, winner, endgame_leaf, u64::MAX)? {
            Walked::Closed { positions, depth } => Some((positions, depth)),
            Walked::Broken | Walked::TooBig => None,
        },
    )
}

/// As [`walk_proof_with`], stopping with [`Walked::TooBig`] once `limit`
/// distinct positions are reached and the walk is not over.
pub fn walk_proof_within(
    store: &Store,
    rules: impl Into<RuleSet>,
    root: &Position,
    winner: Color,
    endgame_leaf: &dyn Fn(&Position) -> bool,
    limit: u64,
) -> Result<Walked, StoreError> {
    let reader = store.reader()?;
    let proof = StoredProof::new(&reader, rules);
    // Key -> None while on the path, Some(depth) when done.
    let mut seen: HashMap<Key, Option<u32>> = HashMap::new();
    struct Frame {
        key: Key,
        kids: Vec<Position>,
        depth: u32,
    }
    // Returns Err(()) on a broken proof, Ok(Some(frame)) to descend, Ok(None)
    // for a leaf (recorded done).
    let open = |pos: &Position,
                seen: &mut HashMap<Key, Option<u32>>|
     -> Result<Result<Option<Frame>, ()>, StoreError> {
        let key = pos.pack().0;
        let kids = match proof.node_for(pos, winner)? {
            Err(_) => return Ok(Err(())),
            Ok(StoredNode::GameEnd(_)) => {
                seen.insert(key, Some(0));
                return Ok(Ok(None));
            }
            Ok(StoredNode::TableSized) if endgame_leaf(pos) => {
                seen.insert(key, Some(0));
                return Ok(Ok(None));
            }
            Ok(StoredNode::TableSized | StoredNode::Missing) => return Ok(Err(())),
            Ok(n) => n.moves(pos).iter().map(|&m| pos.play(m)).collect(),
        };
        seen.insert(key, None);
        Ok(Ok(Some(Frame {
            key,
            kids,
            depth: 0,
        })))
    };
    let mut stack: Vec<Frame> = Vec::new();
    match open(root, &mut seen)? {
        Err(()) => return Ok(Walked::Broken),
        Ok(None) => {
            return Ok(Walked::Closed {
                positions: 1,
                depth: 0,
            });
        }
        Ok(Some(f)) => stack.push(f),
    }
    let mut root_depth = 0;
    while let Some(top) = stack.last_mut() {
        match top.kids.pop() {
            Some(c) => {
                let ck = c.pack().0;
                match seen.get(&ck) {
                    Some(Some(d)) => top.depth = top.depth.max(d + 1),
                    Some(None) => return Ok(Walked::Broken),
                    None if seen.len() as u64 >= limit => return Ok(Walked::TooBig),
                    None => match open(&c, &mut seen)? {
                        Err(()) => return Ok(Walked::Broken),
                        Ok(None) => top.depth = top.depth.max(1),
                        Ok(Some(f)) => stack.push(f),
                    },
                }
            }
            None => {
                let f = stack.pop().expect("non-empty");
                seen.insert(f.key, Some(f.depth));
                match stack.last_mut() {
                    Some(p) => p.depth = p.depth.max(f.depth + 1),
                    None => root_depth = f.depth,
                }
            }
        }
    }
    Ok(Walked::Closed {
        positions: seen.len() as u64,
        depth: root_depth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::{Config, Prover};
    use crate::vocab::Rules;

    #[test]
    fn a_walk_stops_at_its_limit_and_says_so() {
        let dir = std::env::temp_dir().join(format!("antiproof-walk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.redb");
        let _ = std::fs::remove_file(&path);
        let store = Store::open(&path).unwrap();
        let (pos, _) = Position::startpos().play_line(&["e3", "d5"]).unwrap();
        let mut p = Prover::new(Config::default(), Color::White, Some(&store)).unwrap();
        let r = p.prove(&pos).unwrap();
        assert!(r.proof_positions_exact);
        let n = r.proof_positions;
        let rules = RuleSet::from(Rules::International);
        let leaf = |_: &Position| false;
        let walk = |limit| walk_proof_within(&store, rules, &pos, Color::White, &leaf, limit);
        let closed = Walked::Closed {
            positions: n,
            depth: r.proof_depth,
        };
        assert_eq!(walk(u64::MAX).unwrap(), closed);
        assert_eq!(walk(n).unwrap(), closed);
        assert_eq!(walk(n - 1).unwrap(), Walked::TooBig);
        assert_eq!(walk(1).unwrap(), Walked::TooBig);
        // The other side has no win here: the proof is not one for Black.
        let black = walk_proof_within(&store, rules, &pos, Color::Black, &leaf, u64::MAX);
        assert_eq!(black.unwrap(), Walked::Broken);
        drop(p);
        drop(store);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
