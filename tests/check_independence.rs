//! The checker must not share code with the prover: `src/check/`, the
//! win-tree module it reads files with, and the rules-free half of the
//! endgame tables it reads and certifies tables with (`src/tablefile/`)
//! import nothing from the project's rules, search or tables modules.

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

#[test]
fn checker_imports_no_prover_code() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root.join("check"), &mut files);
    rust_files(&root.join("wintree"), &mut files);
    rust_files(&root.join("tablefile"), &mut files);
    assert!(files.len() >= 10, "{files:?}");
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
