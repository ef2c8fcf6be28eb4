//! The proof page in a real browser: `scripts/browser-test.py` drives
//! Debian's chromium headless through Playwright for Python on `serve
//! --tree proofs/e3-g6.tree` (1.e3 g6 played on `#board` by click and
//! drag, the URL, the winner's move with the JSON endpoint's size, the keys,
//! the back button, the table, flip, copy FEN, offline). Ignored: it needs
//! `apt-get install -y chromium` and `pip install playwright` (no browser
//! download). Run with
//!
//! ```sh
//! cargo test --test tests web_browser:: -- --ignored --nocapture
//! ```
//!
//! and look at the screenshots it names (under the target directory's
//! `tmp/browser/`).

use crate::util;
use std::path::Path;
use std::process::Command;

#[test]
#[ignore = "needs chromium and Playwright for Python; see the module docs"]
fn the_page_in_headless_chromium() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser");
    let status = Command::new("python3")
        .arg(root.join("scripts/browser-test.py"))
        .arg("--antiproof")
        .arg(util::EXE)
        .arg("--tree")
        .arg(root.join("proofs/e3-g6.tree"))
        .arg("--out")
        .arg(&out)
        .status()
        .expect("python3 runs");
    assert!(
        status.success(),
        "scripts/browser-test.py failed ({status}); its output says which check"
    );
}
