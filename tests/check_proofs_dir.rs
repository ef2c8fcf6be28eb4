//! Every published proof in `proofs/` is certified by the normal test run.
//!
//! Files: `proofs/<line>.tree` or, zstd-compressed, `proofs/<line>.tree.zst`
//! (a Watkins win-tree file) with a sidecar `proofs/<line>.json`:
//! `{"line": "e3 d5", "rules": "international", "winner": "white"}`. The
//! directory may be empty.

use antiproof::check::{RuleSet, Rules, TreeOptions, Verdict, check_tree, parse_color};
use antiproof::wintree::{WinTree, compressed};
use std::path::{Path, PathBuf};

/// The `*.tree` and `*.tree.zst` files of `proofs/`, in name order, with
/// their sidecars.
fn proof_files() -> Vec<(PathBuf, serde_json::Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("proofs");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!("no proofs/ directory");
        return Vec::new();
    };
    let mut files = Vec::new();
    for e in entries {
        let path = e.unwrap().path();
        if !compressed::is_tree_name(&path) {
            continue;
        }
        let side = compressed::plain_name(&path).with_extension("json");
        let meta: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(&side).unwrap_or_else(|e| panic!("{}: {e}", side.display())),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", side.display()));
        files.push((path, meta));
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
}

/// The rule set a file was made under: the sidecar's `rule_set` (such as
/// `international+fifty`), else its stalemate rule `rules`.
fn made_under(meta: &serde_json::Value) -> RuleSet {
    match meta["rule_set"].as_str() {
        Some(set) => set.parse().unwrap(),
        None => {
            let rules: Rules = meta["rules"].as_str().expect("rules").parse().unwrap();
            rules.into()
        }
    }
}

/// Each file certified under the rule set it was made under (a file made
/// under the fifty-move rule, under it).
#[test]
fn every_file_in_proofs_is_certified() {
    let mut n = 0;
    for (path, meta) in proof_files() {
        let rule_set = made_under(&meta);
        let winner = parse_color(meta["winner"].as_str().expect("winner")).unwrap();
        let tree = WinTree::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let prolog: Vec<String> = tree.prolog().iter().map(|m| m.uci()).collect();
        let line = meta["line"].as_str().expect("line");
        let opts = TreeOptions {
            rule_set,
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

/// Large certificates are kept compressed, none over the ~50 MB a file
/// the repository allows (`export --split-above 50M` splits larger ones
/// by reply), and each line has one form: `x.tree` or `x.tree.zst`.
#[test]
fn files_in_proofs_are_compressed_when_large_and_at_most_50_mb() {
    for (path, _) in proof_files() {
        let len = std::fs::metadata(&path).unwrap().len();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(len <= 50 << 20, "{name}: {len} bytes");
        if name.ends_with(".tree") {
            assert!(len <= 1 << 20, "{name}: {len} bytes, not compressed");
            assert!(
                !path.with_extension("tree.zst").exists(),
                "{name} is there twice"
            );
        }
    }
}

/// Which published proofs hold under joint rules (a stalemate with pieces
/// left counts only where International and FICS agree): a certificate
/// made under joint rules must hold under both others; a file made under
/// another rule set that fails under joint rules fails by a stalemate that
/// joint rules draw, and 1.Nc3 and 1.h4 end lines in a one-pawn-each
/// stalemate, a draw under joint rules.
///
/// The cross-check of files made under another rule set is over the files
/// of at most [`CROSS_CHECK_BYTES`] on disk: the large ones (millions of
/// positions, made under international rules with the fifty-move rule)
/// took most of this test's minutes, and every file is certified under the
/// rule set it was made under by [`every_file_in_proofs_is_certified`];
/// `scripts/second-check.py` reproduces every sidecar's `holds_under`.
#[test]
fn proofs_under_joint_rules_hold_under_both_others() {
    let mut held = Vec::new();
    let mut left = Vec::new();
    for (path, meta) in proof_files() {
        let winner = parse_color(meta["winner"].as_str().expect("winner")).unwrap();
        let made = made_under(&meta).stalemate;
        let name = compressed::plain_name(&path)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let small = std::fs::metadata(&path).unwrap().len() <= CROSS_CHECK_BYTES;
        if made != Rules::Joint && !small {
            left.push(name);
            continue;
        }
        let tree = WinTree::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let under = |rules: Rules| {
            let opts = TreeOptions {
                rule_set: rules.into(),
                winner: Some(winner),
                ..TreeOptions::default()
            };
            check_tree(&tree, &opts).verdict
        };
        // A file made under joint rules is certified under them by the
        // test above.
        let joint = if made == Rules::Joint {
            Verdict::Certified
        } else {
            under(Rules::Joint)
        };
        match joint {
            Verdict::Certified => {
                for rules in [Rules::International, Rules::Fics] {
                    if rules != made {
                        assert_eq!(under(rules), Verdict::Certified, "{name} under {rules}");
                    }
                }
                assert!(
                    name != "Nc3" && name != "h4",
                    "{name} holds under joint rules"
                );
                held.push(name);
            }
            Verdict::Rejected(r) => {
                println!("{name}: rejected under joint rules: {r}");
                assert!(
                    r.reason.to_string().contains("a draw under joint rules"),
                    "{name}: {r}"
                );
            }
            v => panic!("{name}: {v:?}"),
        }
    }
    println!("certified under joint rules: {}", held.join(", "));
    println!(
        "not cross-checked (over {CROSS_CHECK_BYTES} bytes): {}",
        left.join(", ")
    );
}

/// The largest file (bytes on disk) whose made-under rule set is not joint
/// that [`proofs_under_joint_rules_hold_under_both_others`] checks under
/// joint rules too.
const CROSS_CHECK_BYTES: u64 = 2 << 20;
