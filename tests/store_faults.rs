//! A proof store that is damaged, or whose writer was killed: every
//! command that reads it gives a clear answer (exit 0, 1 or 2), never a
//! panic (exit 101), and `antiproof store check` tells which it is; of a
//! store it may not write, it says so (and what a read-only pass found),
//! never "damaged".

use crate::util;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Proves 1.e3 d5 into a fresh store in `dir`.
fn proven_store(dir: &Path) -> String {
    let db = dir.join("p.redb");
    let db = db.to_str().unwrap().to_string();
    let (code, _, err) = util::antiproof(&["prove", "--db", &db, "e3", "d5"]);
    assert_eq!(code, 0, "{err}");
    db
}

/// The commands that read a store, each with its exit code and output.
fn readers(db: &str) -> Vec<(String, i32, String)> {
    let out = dir_of(db).join("out.tree");
    let out = out.to_str().unwrap();
    [
        vec!["verify", "--db", db, "e3", "d5"],
        vec!["browse", "--db", db, "e3", "d5"],
        vec!["export", "--db", db, "-o", out, "e3", "d5"],
        vec!["prove", "--db", db, "e3", "d5"],
    ]
    .into_iter()
    .map(|args| {
        let (code, o, e) = util::antiproof(&args);
        (args.join(" "), code, o + &e)
    })
    .collect()
}

fn dir_of(db: &str) -> &Path {
    Path::new(db).parent().unwrap()
}

#[test]
fn a_damaged_store_is_an_error_naming_the_file_never_a_panic() {
    let dir = util::temp_dir("store-faults-damaged");
    let db = proven_store(&dir);
    let good = std::fs::read(&db).unwrap();
    // The second 4 KiB page zeroed (as found by hand), then a few single
    // byte flips across the file.
    let mut damaged = Vec::new();
    let mut z = good.clone();
    z[4096..8192].fill(0);
    damaged.push(z);
    for i in [100, 1000, 5000, good.len() / 2, good.len() - 10] {
        let mut f = good.clone();
        f[i] ^= 0x5a;
        damaged.push(f);
    }
    for bytes in &damaged {
        std::fs::write(&db, bytes).unwrap();
        for (cmd, code, out) in readers(&db) {
            assert!(
                matches!(code, 0..=2),
                "{cmd}: exit {code} (a panic is 101)\n{out}"
            );
            assert!(!out.contains("panicked"), "{cmd}:\n{out}");
            if code == 2 && out.contains(" is damaged (") {
                assert!(out.contains(&db), "{cmd} names the file:\n{out}");
                assert!(out.contains("store check"), "{cmd} says what to do:\n{out}");
            }
        }
    }
    // The zeroed page: readers say "damaged", `store check` exits 1.
    std::fs::write(&db, &damaged[0]).unwrap();
    let (code, out, err) = util::antiproof(&["verify", "--db", &db, "e3", "d5"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("damaged"), "{err}");
    let (code, out, err) = util::antiproof(&["store", "check", "--db", &db]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("DAMAGED"), "{out}");
    // The good store checks out, and compacts.
    std::fs::write(&db, &good).unwrap();
    let (code, out, _) = util::antiproof(&["store", "check", "--db", &db]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("intact"), "{out}");
    let (code, out, _) = util::antiproof(&["store", "compact", "--db", &db]);
    assert_eq!(code, 0, "{out}");
    let (code, _, err) = util::antiproof(&["verify", "--db", &db, "e3", "d5"]);
    assert_eq!(code, 0, "{err}");
    // Not a store at all: exit 2.
    for (code, _, err) in [
        util::antiproof(&["store", "check", "--db", "/nonexistent.redb"]),
        util::antiproof(&["store", "check", "--db", dir.to_str().unwrap()]),
    ] {
        assert_eq!(code, 2, "{err}");
    }
}

#[test]
fn a_store_whose_writer_was_killed_is_read_with_everything_committed() {
    let dir = util::temp_dir("store-faults-killed");
    let db = proven_store(&dir);
    // A long prove on the same store, killed (SIGKILL) while it runs: the
    // store is left needing repair.
    let mut child = Command::new(util::EXE)
        .env("ANTIPROOF_STATE_DIR", util::test_state_dir())
        .args(["prove", "--db", &db, "--limit", "60s", "e3", "a6"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("prove.err")).unwrap())
        .spawn()
        .unwrap();
    // Give it time to open the store and search (it runs for a minute).
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the prove ended early: {}",
        std::fs::read_to_string(dir.join("prove.err")).unwrap_or_default()
    );
    child.kill().unwrap();
    child.wait().unwrap();
    // Readers open it (repairing it) and find the earlier proof.
    let (code, out, err) = util::antiproof(&["verify", "--db", &db, "e3", "d5"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = util::antiproof(&["browse", "--db", &db, "e3", "d5"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = util::antiproof(&["store", "check", "--db", &db]);
    assert_eq!(code, 0, "{out}{err}");
}

/// Runs antiproof as a user who may not write `file` (0444): as root, for
/// whom permissions do not bite, as the user `nobody` (uid 65534); the
/// exit code and standard output.
fn run_unable_to_write(file: &Path, args: &[&str]) -> (i32, String, String) {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o444)).unwrap();
    let mut cmd = Command::new(util::EXE);
    cmd.args(args);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        cmd.uid(65534).gid(65534);
    }
    let o = cmd.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn an_intact_store_it_may_not_write_is_not_called_damaged() {
    let dir = util::temp_dir("store-read-only");
    let db = proven_store(&dir);
    let before = std::fs::read(&db).unwrap();
    let (code, out, err) = run_unable_to_write(Path::new(&db), &["store", "check", "--db", &db]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        !out.contains("DAMAGED") && !out.contains("rebuild"),
        "{out}"
    );
    assert!(out.contains("NOT FULLY CHECKED"), "{out}");
    assert!(out.contains("cannot open it for writing"), "{out}");
    assert!(out.contains("Permission denied"), "{out}");
    assert_eq!(std::fs::read(&db).unwrap(), before, "the file was changed");
    // Readers need no write access.
    let (code, out2, err) =
        run_unable_to_write(Path::new(&db), &["verify", "--db", &db, "e3", "d5"]);
    assert_eq!(code, 0, "{out2}{err}");
    // Writable again, the full check: intact, with as many records as the
    // read-only check read.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (code, intact, _) = util::antiproof(&["store", "check", "--db", &db]);
    assert_eq!(code, 0, "{intact}");
    let n = intact.split_whitespace().rev().nth(1).unwrap().to_string();
    assert!(
        out.contains(&format!("all {n} records read back")),
        "{out}\n{intact}"
    );
    // Damaged and not writable: the read-only check finds it.
    let mut bytes = before.clone();
    bytes[4096..8192].fill(0);
    std::fs::write(&db, &bytes).unwrap();
    let (code, out, err) = run_unable_to_write(Path::new(&db), &["store", "check", "--db", &db]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("DAMAGED"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
