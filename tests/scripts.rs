//! The scripts of `scripts/` fail loudly: a missing binary or output is a
//! non-zero exit saying what is missing, and a script names only files it
//! wrote. The binary is this build's (`ANTIPROOF_BIN`), so nothing is built
//! here; `scripts/release-bin.sh` finds the release build through `cargo
//! metadata` otherwise (CARGO_TARGET_DIR honoured), which is not run here
//! (a release build is minutes).

use crate::util::{self, EXE};
use std::path::Path;
use std::process::{Command, Output};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `scripts/screenshot.sh --tree proofs/e3-d5.tree e2e3` writing to
/// `out`, with `chromium` the shell script `browser` (on PATH first).
fn screenshot(dir: &Path, browser: &str, out: &Path) -> Output {
    let bin = dir.join("fake");
    std::fs::create_dir_all(&bin).unwrap();
    let chromium = bin.join("chromium");
    std::fs::write(&chromium, format!("#!/bin/sh\n{browser}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&chromium, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    Command::new("sh")
        .arg(root().join("scripts/screenshot.sh"))
        .arg("--tree")
        .arg(root().join("proofs/e3-d5.tree"))
        .arg("e2e3")
        .env("PATH", path)
        .env("ANTIPROOF_BIN", EXE)
        .env("OUT_PNG", out)
        .output()
        .unwrap()
}

#[test]
fn screenshot_claims_only_a_file_it_wrote() {
    let dir = util::temp_dir("screenshot");
    let out = dir.join("shot.png");
    // An old screenshot there is not passed off as this run's.
    std::fs::write(&out, "old").unwrap();
    let o = screenshot(&dir, "exit 0", &out);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(!text(&o.stdout).contains("wrote"), "{}", text(&o.stdout));
    assert!(
        text(&o.stderr).contains(&format!(
            "chromium wrote no screenshot to {}",
            out.display()
        )),
        "{}",
        text(&o.stderr)
    );
    assert!(!out.exists());
    let o = screenshot(&dir, "exit 3", &out);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("chromium failed (exit 3)"));
    // A browser that writes it: claimed.
    let writes =
        r#"for a; do case $a in --screenshot=*) printf PNG > "${a#--screenshot=}";; esac; done"#;
    let o = screenshot(&dir, writes, &out);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).starts_with(&format!("wrote {}", out.display())));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "PNG");
    // The proof file as the output: refused, kept.
    let tree = dir.join("t.tree");
    std::fs::copy(root().join("proofs/e3-d5.tree"), &tree).unwrap();
    let o = Command::new("sh")
        .arg(root().join("scripts/screenshot.sh"))
        .arg("--tree")
        .arg(&tree)
        .env("ANTIPROOF_BIN", EXE)
        .env("OUT_PNG", &tree)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("is the input"));
    assert_eq!(
        std::fs::read(&tree).unwrap(),
        std::fs::read(root().join("proofs/e3-d5.tree")).unwrap()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_binary_stops_the_scripts_at_once() {
    let dir = util::temp_dir("nobin");
    let missing = dir.join("no-such-antiproof");
    for script in [
        "make-proofs.sh",
        "screenshot.sh",
        "holds-under.sh",
        "bench-jobs.sh",
        "bench-resume-plain.sh",
        "replies-proven.py",
        "scaling-sim.py",
        "scaling-real.sh",
    ] {
        let o = Command::new(root().join("scripts").join(script))
            .env("ANTIPROOF_BIN", &missing)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{script}: {}", text(&o.stderr));
        assert_eq!(
            text(&o.stderr),
            format!(
                "release-bin.sh: ANTIPROOF_BIN={} is not an executable file\n",
                missing.display()
            ),
            "{script}"
        );
        assert!(o.stdout.is_empty(), "{script}: {}", text(&o.stdout));
    }
    // A relative ANTIPROOF_BIN is made absolute (the scripts change
    // directory).
    std::fs::copy(EXE, dir.join("ap")).unwrap();
    let o = Command::new(root().join("scripts/release-bin.sh"))
        .env("ANTIPROOF_BIN", "ap")
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), dir.join("ap").display().to_string());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `scripts/second-check.py`, the second checker (python-chess, nothing
/// of this crate), agrees with the sidecars of three proofs (one holding
/// under all six rule sets, one made under joint rules, one holding under
/// international rules only for its stalemates with as many pieces) and
/// rejects a copy with one move changed, exit 1. Ignored: it needs
/// python-chess (`pip install chess`); the whole of proofs/ is
/// `scripts/second-check.py` (docs/verify.md, about 3 minutes).
#[test]
#[ignore = "needs python-chess: pip install chess"]
fn the_second_checker_agrees_with_the_sidecars_and_rejects_a_changed_move() {
    let files = [
        "proofs/e3-d5.tree",
        "proofs/Nc3.joint.tree",
        "proofs/e3-c6-Bb5-cxb5-b4-f6.tree",
    ];
    let o = Command::new(root().join("scripts/second-check.py"))
        .args(files)
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );

    let dir = util::temp_dir("second-check");
    let tree = dir.join("a6.tree");
    std::fs::copy(
        root().join("proofs/e3-c6-Bb5-cxb5-b4-a6.json"),
        dir.join("a6.json"),
    )
    .unwrap();
    std::fs::write(&tree, util::first_move_moved("e3-c6-Bb5-cxb5-b4-a6.tree")).unwrap();
    let o = Command::new(root().join("scripts/second-check.py"))
        .arg(&tree)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
