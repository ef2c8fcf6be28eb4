//! Material for the checker's speed measurement (not a timed test): writes
//! a large synthetic win-tree and the largest ladder proof to the directory
//! named by `ANTIPROOF_BENCH_DIR`, to be checked with
//! `antiproof verify --tree FILE --threads 1|2 --repeat 3`
//! (`ANTIPROOF_BENCH_PLIES`, default 9; `ANTIPROOF_BENCH_LINE`, default
//! `e3`). See
//! docs/verify.md for the figures.

use crate::util;
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
    // The line to start from (default 1.e3; "" is the start position,
    // White the winner: about 10^7 positions at 11 plies).
    let line = std::env::var("ANTIPROOF_BENCH_LINE").unwrap_or_else(|_| "e3".into());
    let p = util::synthetic(&line, plies);
    let opts = WriteOptions {
        size_table: true,
        size_depth: Some(3),
    };
    let w = write_tree(&p.dag, 0, &p.prolog, &opts).unwrap();
    let name = if line.is_empty() { "start" } else { &line };
    let path = dir.join(format!("synthetic-{}-{plies}.tree", name.replace(' ', "-")));
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

/// Checks the file `ANTIPROOF_BENCH_FILE` in this process alone, with the
/// library's defaults (no open leaves: the synthetic trees' unfinished
/// leaves are faults, not obligations to list), on
/// `ANTIPROOF_BENCH_THREADS` threads: run under `/usr/bin/time -v` for the
/// checker's own peak memory (see docs/verify.md).
#[test]
#[ignore]
fn check_bench_file() {
    let path = PathBuf::from(std::env::var("ANTIPROOF_BENCH_FILE").expect("ANTIPROOF_BENCH_FILE"));
    let threads = std::env::var("ANTIPROOF_BENCH_THREADS")
        .ok()
        .and_then(|s| s.parse().ok());
    let tree = WinTree::open(&path).unwrap();
    let r = check_tree(
        &tree,
        &TreeOptions {
            threads,
            ..TreeOptions::default()
        },
    );
    println!("{r}");
}
