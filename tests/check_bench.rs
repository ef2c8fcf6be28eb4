//! Material for the checker's speed measurement (not a timed test): writes
//! a large synthetic win-tree and the largest ladder proof to the directory
//! named by `ANTIPROOF_BENCH_DIR`, to be checked with
//! `antiproof verify --tree FILE --threads 1|2 --repeat 3`. See
//! docs/verify.md for the figures.

mod check_support;

use antiproof::check::{TreeOptions, check_tree};
use antiproof::wintree::{WinTree, WriteOptions, write_tree};
use std::path::PathBuf;

#[test]
#[ignore]
fn write_bench_trees() {
    let dir = PathBuf::from(std::env::var("ANTIPROOF_BENCH_DIR").expect("ANTIPROOF_BENCH_DIR"));
    std::fs::create_dir_all(&dir).unwrap();
    let plies: u32 = std::env::var("ANTIPROOF_BENCH_PLIES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(9);
    let p = check_support::synthetic("e3", plies);
    let opts = WriteOptions {
        size_table: true,
        size_depth: Some(3),
    };
    let w = write_tree(&p.dag, 0, &p.prolog, &opts).unwrap();
    let path = dir.join(format!("synthetic-e3-{plies}.tree"));
    std::fs::write(&path, &w.bytes).unwrap();
    println!(
        "{}: {} positions, {} slots ({} transpositions), {} bytes",
        path.display(),
        p.dag.nodes.len(),
        w.slots,
        w.transpositions,
        w.bytes.len()
    );
    // Smoke: the checker walks it all.
    let tree = WinTree::open(&path).unwrap();
    let r = check_tree(&tree, &TreeOptions::default());
    assert_eq!(r.positions as usize, p.dag.nodes.len());
    println!("{r}");
}
