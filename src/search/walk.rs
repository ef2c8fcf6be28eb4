//! Walking a stored proof: its exact size and depth, and a check that it
//! closes.

use crate::rules::{Color, Position};
use crate::store::{Key, Store, StoreError};
use crate::stored::{StoredNode, StoredProof};
use crate::vocab::RuleSet;
use std::collections::HashMap;

/// Proofs up to this many positions (by the records' estimate) are walked
/// in the store after proving, for exact size and depth figures.
pub const WALK_LIMIT: u64 = 20_000_000;

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
        Err(()) => return Ok(None),
        Ok(None) => return Ok(Some((1, 0))),
        Ok(Some(f)) => stack.push(f),
    }
    let mut root_depth = 0;
    while let Some(top) = stack.last_mut() {
        match top.kids.pop() {
            Some(c) => {
                let ck = c.pack().0;
                match seen.get(&ck) {
                    Some(Some(d)) => top.depth = top.depth.max(d + 1),
                    Some(None) => return Ok(None),
                    None => match open(&c, &mut seen)? {
                        Err(()) => return Ok(None),
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
    Ok(Some((seen.len() as u64, root_depth)))
}
