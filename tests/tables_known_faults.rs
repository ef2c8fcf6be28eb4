//! A certificate resting on a known fault of Watkins' published endgame
//! tables (the 2019 double en passant, docs/tables.md) is rejected by
//! `verify --tables`, naming the position.
//!
//! Ignored: the leaf is a `PPvPP` position, whose closure is 231 four-man
//! tables (18 minutes to build and certify in the test profile on 2 busy
//! cores, passed 2026-11-30). It reads
//! `ANTIPROOF_TABLES_DIR/international` when set (as the all-4-man run of
//! `tests/tables_build.rs` leaves it), else builds the closure:
//! `cargo test --release --test tests tables_known_faults:: -- --ignored`.

use crate::util;
use antiproof::check::Rules;
use antiproof::tables::{Material, Tables};
use antiproof::vocab::MoveCode;
use antiproof::wintree::{ProofDag, WriteOptions, write_tree};
use std::path::PathBuf;
use std::process::Command;

/// White pawns f5, g2 against Black pawns f4, h4, White to move: Watkins'
/// tables score it a win for White; after g2-g4 Black holds by hxg3 e.p.
const BEFORE_G4: &str = "8/8/8/5P2/5p1p/8/6P1/8 w - - 0 1";
/// The position after g2-g4, as the message names it.
const AFTER_G4: &str = "8/8/8/5P2/5pPp/8/8/8 b - g3";

#[test]
#[ignore]
fn a_leaf_on_the_2019_double_en_passant_is_rejected_naming_it() {
    let dir = match std::env::var_os("ANTIPROOF_TABLES_DIR") {
        Some(d) => PathBuf::from(d).join(Rules::International.name()),
        None => {
            let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("known-faults-tables");
            std::fs::create_dir_all(&d).unwrap();
            d
        }
    };
    let tables = Tables::open_building(&dir, Rules::International);
    tables.table(&"PPvPP".parse::<Material>().unwrap()).unwrap();
    drop(tables);

    // A proof as Watkins' tables would allow it: White plays g2-g4 and the
    // position after it is a leaf "won for White" by the tables.
    let mut dag = ProofDag::new();
    let root = dag.add_node();
    let leaf = dag.add_node();
    dag.add_edge(root, MoveCode::from_uci("g2g4").unwrap(), leaf);
    let bytes = write_tree(&dag, root, &[], &WriteOptions::default())
        .unwrap()
        .bytes;
    let work = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("known-faults-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let file = work.join("double-ep.tree");
    std::fs::write(&file, bytes).unwrap();

    let state = work.join("state");
    let o = Command::new(util::EXE)
        .env("ANTIPROOF_STATE_DIR", &state)
        .args([
            "verify", "--fen", BEFORE_G4, "--winner", "white", "--tables",
        ])
        .arg(&dir)
        .arg("--tree")
        .arg(&file)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.starts_with("REJECTED"), "{out}");
    assert!(out.contains(AFTER_G4), "the position is named: {out}");
    assert!(out.contains("draw"), "{out}");
    assert!(out.contains("2019 double en passant"), "{out}");
    std::fs::remove_dir_all(&work).unwrap();
}
