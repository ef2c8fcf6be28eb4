//! Every published proof in `proofs/` is certified by the normal test run.
//!
//! Files: `proofs/<line>.tree` (a Watkins win-tree file) with a sidecar
//! `proofs/<line>.json`: `{"line": "e3 d5", "rules": "international",
//! "winner": "white"}`. The directory may be empty.

use antiproof::check::{Rules, TreeOptions, Verdict, check_tree, parse_color};
use antiproof::wintree::WinTree;
use std::path::Path;

#[test]
fn every_file_in_proofs_is_certified() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("proofs");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!("no proofs/ directory");
        return;
    };
    let mut n = 0;
    for e in entries {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "tree") {
            continue;
        }
        let side = path.with_extension("json");
        let meta: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(&side).unwrap_or_else(|e| panic!("{}: {e}", side.display())),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", side.display()));
        let rules: Rules = meta["rules"].as_str().expect("rules").parse().unwrap();
        let winner = parse_color(meta["winner"].as_str().expect("winner")).unwrap();
        let tree = WinTree::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let prolog: Vec<String> = tree.prolog().iter().map(|m| m.uci()).collect();
        let line = meta["line"].as_str().expect("line");
        let opts = TreeOptions {
            rules,
            winner: Some(winner),
            ..TreeOptions::default()
        };
        let r = check_tree(&tree, &opts);
        println!(
            "{} ({line}; prolog {}):\n{r}",
            path.display(),
            prolog.join(" ")
        );
        assert_eq!(r.verdict, Verdict::Certified, "{}", path.display());
        n += 1;
    }
    println!("{n} proof files certified");
}
