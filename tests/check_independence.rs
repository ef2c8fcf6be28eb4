//! The checker must not share code with the prover: `src/check/`, the
//! win-tree module it reads files with, the rules-free half of the
//! endgame tables it reads and certifies tables with (`src/tablefile/`),
//! the proof store it reads proofs from (`src/store/`) and the shared
//! vocabulary (`src/vocab/`) import nothing from the project's rules,
//! search or tables modules; the vocabulary does not use shakmaty either
//! (names and codes only, no rules logic).

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn files_under(dirs: &[&str]) -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for d in dirs {
        let before = files.len();
        rust_files(&root.join(d), &mut files);
        assert!(files.len() > before, "no Rust files under src/{d}");
    }
    files
}

#[test]
fn checker_imports_no_prover_code() {
    let files = files_under(&["check", "wintree", "tablefile", "store", "vocab"]);
    assert!(files.len() >= 14, "{files:?}");
    let banned = ["rules", "search", "tables"];
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap();
            for b in banned {
                for pat in [
                    format!("crate::{b}"),
                    format!("antiproof::{b}"),
                    format!("super::super::{b}"),
                    format!("crate::{{{b}"),
                ] {
                    assert!(
                        !code.contains(&pat),
                        "{}:{}: the checker must not use `{pat}`: {line}",
                        f.display(),
                        n + 1
                    );
                }
                // `use crate::{a, rules}` style groups.
                if code.contains("crate::{") {
                    let group = &code[code.find("crate::{").unwrap()..];
                    assert!(
                        !group
                            .split(|c: char| !c.is_alphanumeric() && c != '_')
                            .any(|w| w == b),
                        "{}:{}: the checker must not use `{b}`: {line}",
                        f.display(),
                        n + 1
                    );
                }
            }
        }
    }
}

#[test]
fn vocabulary_holds_no_rules_logic() {
    for f in files_under(&["vocab"]) {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap();
            for pat in ["shakmaty", "crate::", "super::super"] {
                assert!(
                    !code.contains(pat),
                    "{}:{}: the vocabulary must not use `{pat}`: {line}",
                    f.display(),
                    n + 1
                );
            }
        }
    }
}
