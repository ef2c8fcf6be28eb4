//! `verify --tree` reports each reply of the loser (or each move of the
//! root) with its own figures, which add up to the whole.

use crate::util;
use serde_json::Value;
use std::process::Command;

fn verify_json(tree: &str, line: &[String]) -> Value {
    let path = format!("{}/proofs/{tree}", env!("CARGO_MANIFEST_DIR"));
    let o = Command::new(util::EXE)
        .args(["verify", "--json", "--tree", &path])
        .args(line)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn sum(replies: &[Value], f: impl Fn(&Value) -> u64) -> u64 {
    replies.iter().map(f).sum()
}

#[test]
fn replies_add_up_at_the_root() {
    for tree in ["Nf3.tree.zst", "e3-g6.tree", "h4.tree.zst"] {
        let v = verify_json(tree, &[]);
        let r = v["replies"].as_array().unwrap();
        assert!(!r.is_empty(), "{tree}: {v}");
        // The root has one child (the winner's move): the replies follow it.
        assert!(v["replies_after"].is_string(), "{tree}: {v}");
        let total = v["positions"].as_u64().unwrap();
        assert_eq!(
            sum(r, |x| x["positions"].as_u64().unwrap()) + 2,
            total,
            "{tree}"
        );
        for k in ["no_pieces", "stalemate", "other", "endgame_tables"] {
            assert_eq!(
                sum(r, |x| x["leaves"][k].as_u64().unwrap()),
                v["leaves"][k].as_u64().unwrap(),
                "{tree}: {k}"
            );
        }
        assert_eq!(
            sum(r, |x| x["positions_with_repeats"].as_u64().unwrap()) + 2,
            v["positions_with_repeats"].as_u64().unwrap(),
            "{tree}"
        );
    }
}

#[test]
fn several_replies_are_listed_in_file_order() {
    // Follow the proof of 1.e3 g6 down its forced captures to a node where
    // the loser has a choice.
    let mut line: Vec<String> = vec!["e3".into(), "g6".into()];
    for _ in 0..30 {
        let v = verify_json("e3-g6.tree", &line);
        let r = v["replies"].as_array().unwrap();
        let after = v["replies_after"].as_str().unwrap();
        let winner_move = after.rsplit(' ').next().unwrap().to_string();
        if r.len() > 1 {
            let total = v["positions"].as_u64().unwrap();
            let parts = sum(r, |x| x["positions"].as_u64().unwrap());
            // Targets outside the selected subtree are counted in the
            // whole only.
            assert!(parts + 2 <= total, "{parts} {total}");
            assert!(parts > 0);
            let names: Vec<&str> = r.iter().map(|x| x["move"].as_str().unwrap()).collect();
            let mut dedup = names.clone();
            dedup.sort();
            dedup.dedup();
            assert_eq!(dedup.len(), names.len(), "{names:?}");
            // The text table lists the same moves.
            let path = format!("{}/proofs/e3-g6.tree", env!("CARGO_MANIFEST_DIR"));
            let o = Command::new(util::EXE)
                .args(["verify", "--tree", &path])
                .args(&line)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&o.stdout);
            assert!(
                text.contains(&format!("per reply after {after}:")),
                "{text}"
            );
            for n in names {
                assert!(text.contains(&format!("\n  {n} ")), "{n}: {text}");
            }
            return;
        }
        line.push(winner_move);
        line.push(r[0]["move"].as_str().unwrap().to_string());
    }
    panic!("no choice for the loser within 30 moves: {line:?}");
}
