//! Shared by the prove tests: a plain walker of stored proofs.

use antiproof::rules::{Color, Position, Rules};
use antiproof::store::{Key, Store};
use antiproof::stored::{StoredNode, StoredProof};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A fresh store path in a directory of its own.
pub fn temp_db(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("antiproof-prove-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("t.redb");
    let _ = std::fs::remove_file(&p);
    p
}

/// Walks the stored proof from the position after `line`: the winner's
/// stored move is legal, every reply of the loser is covered, every leaf is
/// a game won by the winner, and there is no cycle. Returns the number of
/// distinct positions walked (game ends included).
pub fn walk(db: &Path, line: &str, winner: Color) -> usize {
    let (root, _) = Position::startpos().play_line_str(line).unwrap();
    let store = Store::open_existing(db).unwrap();
    let reader = store.reader().unwrap();
    let proof = StoredProof::new(&reader, Rules::International);
    // false: on the path; true: done.
    let mut seen: HashMap<Key, bool> = HashMap::new();
    let mut stack: Vec<(Position, Vec<Position>)> = Vec::new();
    let expand = |pos: &Position, seen: &mut HashMap<Key, bool>| -> Option<Vec<Position>> {
        let node = proof
            .node_for(pos, winner)
            .unwrap()
            .unwrap_or_else(|b| panic!("{b} at {}", pos.to_fen()));
        let key = pos.pack().0;
        match node {
            StoredNode::GameEnd(_) => {
                seen.insert(key, true);
                None
            }
            StoredNode::Win { .. } | StoredNode::Loss { .. } => {
                seen.insert(key, false);
                Some(node.moves(pos).iter().map(|&m| pos.play(m)).collect())
            }
            StoredNode::TableSized | StoredNode::Missing => {
                panic!("no record for {}", pos.to_fen())
            }
        }
    };
    if let Some(kids) = expand(&root, &mut seen) {
        stack.push((root, kids));
    }
    while let Some((pos, kids)) = stack.last_mut() {
        match kids.pop() {
            Some(c) => match seen.get(&c.pack().0) {
                Some(true) => {}
                Some(false) => panic!("cycle through {}", c.to_fen()),
                None => {
                    if let Some(k) = expand(&c, &mut seen) {
                        stack.push((c, k));
                    }
                }
            },
            None => {
                seen.insert(pos.pack().0, true);
                stack.pop();
            }
        }
    }
    seen.len()
}
