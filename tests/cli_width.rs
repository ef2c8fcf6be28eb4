//! Text that fits: `openings` (the table, the notes below it and
//! `--long`) within 100 columns on this repository's `proofs/`, and the
//! start-up lines of `browse` and `serve` count the proof files instead of
//! naming every one (issue 31, item 4).

use crate::util;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

/// The widest line allowed.
const WIDTH: usize = 100;

fn proofs() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("proofs")
        .display()
        .to_string()
}

fn assert_fits(what: &str, text: &str) {
    for (i, l) in text.lines().enumerate() {
        assert!(
            l.chars().count() <= WIDTH,
            "{what}: line {} has {} columns:\n{l}",
            i + 1,
            l.chars().count()
        );
    }
}

/// How many win-tree files `proofs/` holds (it grows as lines are proven).
fn files() -> usize {
    antiproof::wintree::compressed::tree_files(std::path::Path::new(&proofs()))
        .unwrap()
        .len()
}

#[test]
fn every_line_of_openings_fits_100_columns() {
    let p = proofs();
    let (code, table, err) = util::antiproof(&["openings", "--proofs", &p]);
    assert_eq!(code, 0, "{err}");
    assert_fits("openings", &table);
    // One row a move, each with its counts.
    let e3 = table.lines().find(|l| l.starts_with("e3 ")).unwrap();
    assert!(e3.contains("white: 13 of 20 replies"), "{e3}");
    // 1.e3 c6 holds under international with and without the fifty-move
    // rule only (its stalemate leaves are International ones).
    assert!(e3.contains("2 of 6"), "{e3}");
    let e3_files = antiproof::wintree::compressed::tree_files(std::path::Path::new(&p))
        .unwrap()
        .iter()
        .filter(|f| {
            f.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("e3"))
        })
        .count();
    assert!(e3.contains(&format!("{e3_files} files, ")), "{e3}");
    let h4 = table.lines().find(|l| l.starts_with("h4 ")).unwrap();
    assert!(h4.contains("black wins"), "{h4}");
    assert!(
        table.contains("1.e3: replies not proven here yet: b6 e6 b5 c5 g5 Nc6 Nh6"),
        "{table}"
    );
    let n = files();
    assert!(table.contains(&format!("({n} files)")), "{table}");
    assert!(!table.contains("..."), "no cell cut:\n{table}");

    let (code, long, err) = util::antiproof(&["openings", "--long", "--proofs", &p]);
    assert_eq!(code, 0, "{err}");
    assert_fits("openings --long", &long);
    let e3 = util::openings_block(&long, "1.e3:");
    assert!(
        e3.contains("e3 g6 (international, white wins, 4,422 positions, verified)"),
        "{e3}"
    );
    assert!(
        e3.contains("white: 13 of 20 replies (international, international+fifty)"),
        "{e3}"
    );
    assert!(e3.contains("ICGA2016.pdf"), "the source: {e3}");

    // --json is for scripts and keeps its shape.
    let (code, json, _) = util::antiproof(&["openings", "--json", "--proofs", &p]);
    assert_eq!(code, 0);
    let rows: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(rows.as_array().unwrap().len(), 20);
    assert_eq!(rows[0]["certified"].as_array().unwrap().len(), e3_files);
    let (code, _, err) = util::antiproof(&["openings", "--json", "--long"]);
    assert_eq!(code, 2, "--json and --long together: {err}");
}

#[test]
fn browse_and_serve_count_the_proof_files() {
    let p = proofs();
    let (code, out, err) = util::antiproof(&["browse", "--proofs", &p, "e3", "g6"]);
    assert_eq!(code, 0, "{err}");
    let head = out.lines().next().unwrap();
    assert_eq!(head, format!("Proof:   {} win-tree files in {p}/", files()));
    assert_fits("browse", &out);
    // One file, or a few, are named.
    let tree = format!("{p}/e3-g6.tree");
    let (code, out, _) = util::antiproof(&["browse", "--tree", &tree]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().next().unwrap(), format!("Proof:   {tree}"));

    let mut child = Command::new(util::EXE)
        .args(["serve", "--addr", "127.0.0.1:0", "--proofs", &p])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        first.starts_with(&format!(
            "antiproof serve: {} win-tree files in {p}/ (",
            files()
        )),
        "{first}"
    );
    assert!(first.len() <= WIDTH + 1, "{first}");
}
