//! Damaged inputs never crash a command or change a verdict: random byte
//! flips, truncations and zeroed pages of a win-tree certificate, of a
//! proof store, of a saved search table (tt) and of an endgame table. Each
//! run must exit 0, 1 or 2 (never a panic's 101 or a signal), and:
//! * a certificate that still verifies is reported CERTIFIED;
//! * a damaged tt is ignored (a warning), so `prove` gives the same verdict;
//! * a damaged endgame table is rejected (its checksums catch any flip).
//!
//! Bigger counts: `cargo test --release --test tests corruption:: -- --ignored`.

use crate::util::{self, Rng, temp_dir};
use antiproof::rules::{Color, Rules};
use antiproof::store::{self, Store};

/// Runs the binary; panics unless it exits 0, 1, 2 or 4 (a damaged leaf
/// can be an open one).
fn run_ok(what: &str, args: &[&str]) -> (i32, String, String) {
    let (code, out, err) = util::antiproof(args);
    assert!(
        matches!(code, 0..=2 | 4),
        "{what}: `antiproof {}` exited {code} (a panic is 101, a signal -1): {out}{err}",
        args.join(" ")
    );
    (code, out, err)
}

fn flip(rng: &mut Rng, bytes: &[u8]) -> (usize, Vec<u8>) {
    let mut b = bytes.to_vec();
    let i = rng.below(b.len());
    b[i] ^= 1 << rng.below(8);
    (i, b)
}

fn truncate(rng: &mut Rng, bytes: &[u8]) -> (usize, Vec<u8>) {
    let n = rng.below(bytes.len());
    (n, bytes[..n].to_vec())
}

fn certificate_cases(flips: usize, truncations: usize) {
    let dir = temp_dir("corrupt-tree");
    let proof = util::prove("e3 d5", Rules::International, Color::White, util::MAX_NODES);
    let good = proof.file();
    let path = dir.join("p.tree");
    let p = path.to_str().unwrap();
    std::fs::write(&path, &good).unwrap();
    let (code, out, _) = run_ok("original", &["verify", "--tree", p]);
    assert_eq!(code, 0, "{out}");
    let mut rng = Rng(0xc0ff_ee00_1234_5678);
    let mut certified = 0;
    let mut cases = Vec::new();
    for _ in 0..flips {
        cases.push(("flip", flip(&mut rng, &good)));
    }
    for _ in 0..truncations {
        cases.push(("truncation", truncate(&mut rng, &good)));
    }
    for (kind, (at, bytes)) in cases {
        std::fs::write(&path, &bytes).unwrap();
        let what = format!("certificate {kind} at {at}");
        let (code, out, _) = run_ok(&what, &["verify", "--tree", p]);
        if code == 0 {
            // The checker is the trusted part: a file it certifies is a
            // correct proof (a flip of an ignored bit, such as the
            // en-passant flag of a move that is no capture).
            assert!(out.contains("CERTIFIED"), "{what}: {out}");
            certified += 1;
        }
        run_ok(&what, &["browse", "--tree", p, "--json"]);
    }
    println!("{certified} damaged certificates still certified");
    let _ = std::fs::remove_dir_all(&dir);
}

fn store_cases(flips: usize, truncations: usize, pages: usize) {
    let dir = temp_dir("corrupt-store");
    let proof = util::prove("e3 d5", Rules::International, Color::White, util::MAX_NODES);
    let db = dir.join("good.redb");
    {
        let s = Store::open(&db).unwrap();
        s.put_batch(store::Rules::International, &proof.records)
            .unwrap();
    }
    let good = std::fs::read(&db).unwrap();
    let line = proof.line.clone();
    let mut rng = Rng(0x5705_e000_dead_0001);
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    for _ in 0..flips {
        let (i, b) = flip(&mut rng, &good);
        cases.push((format!("flip at {i}"), b));
    }
    for _ in 0..truncations {
        let (n, b) = truncate(&mut rng, &good);
        cases.push((format!("truncated to {n}"), b));
    }
    for _ in 0..pages {
        let page = rng.below(good.len().div_ceil(4096));
        let mut b = good.clone();
        let end = ((page + 1) * 4096).min(b.len());
        b[page * 4096..end].fill(0);
        cases.push((format!("page {page} zeroed"), b));
    }
    let damaged = dir.join("damaged.redb");
    let d = damaged.to_str().unwrap();
    for (what, bytes) in cases {
        for cmd in ["verify", "browse"] {
            // Fresh bytes for each command: a reader may repair the file.
            std::fs::write(&damaged, &bytes).unwrap();
            let mut args = vec![cmd, "--db", d];
            args.extend(line.iter().map(String::as_str));
            run_ok(&format!("store {what}, {cmd}"), &args);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn tt_cases(flips: usize) {
    let dir = temp_dir("corrupt-tt");
    let db = dir.join("s.redb");
    let d = db.to_str().unwrap();
    let tt = dir.join("s.redb.table");
    let (code, _, err) = util::antiproof(&[
        "prove",
        "--db",
        d,
        "--json",
        "--limit",
        "20000 nodes",
        "e3",
        "g6",
    ]);
    assert_eq!(code, 3, "stopped by the limit: {err}");
    assert!(tt.exists(), "a stopped search saves its tt");
    let good_tt = std::fs::read(&tt).unwrap();
    let good_db = std::fs::read(&db).unwrap();
    let mut rng = Rng(0x7711_0000_beef_0002);
    for _ in 0..flips {
        let (i, bytes) = flip(&mut rng, &good_tt);
        std::fs::write(&db, &good_db).unwrap();
        std::fs::write(&tt, &bytes).unwrap();
        let what = format!("tt flip at {i}");
        let (code, out, err) = run_ok(&what, &["prove", "--db", d, "--json", "e3", "g6"]);
        assert_eq!(code, 0, "{what}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["result"], "proven", "{what}");
        assert_eq!(v["winning_move"], "Qh5", "{what}");
        assert_eq!(v["resumed_table"], false, "{what}");
        assert!(
            err.contains("ignoring the saved transposition table"),
            "{what}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn endgame_table_cases(flips: usize) {
    let dir = temp_dir("corrupt-egtb");
    let d = dir.to_str().unwrap();
    let (code, _, err) = run_ok("build", &["tables", "build", "--dir", d, "KvP"]);
    assert_eq!(code, 0, "{err}");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "apt"))
        .expect("a table file");
    let good = std::fs::read(&file).unwrap();
    let (code, out, err) = run_ok("original", &["tables", "verify", "--dir", d, "KvP"]);
    assert_eq!(code, 0, "{out}{err}");
    let mut rng = Rng(0xe9d_0000_5555_0003);
    for k in 0..flips {
        let (i, bytes) = if k % 5 == 4 {
            truncate(&mut rng, &good)
        } else {
            flip(&mut rng, &good)
        };
        std::fs::write(&file, &bytes).unwrap();
        let what = format!("table {} at {i}", if k % 5 == 4 { "cut" } else { "flip" });
        let (code, out, err) = run_ok(&what, &["tables", "verify", "--dir", d, "KvP"]);
        assert_ne!(code, 0, "{what}: a damaged table certified: {out}{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_damaged_certificate_never_crashes_verify_or_browse() {
    certificate_cases(200, 20);
}

#[test]
fn a_damaged_store_never_crashes_verify_or_browse() {
    store_cases(30, 10, 10);
}

#[test]
fn a_damaged_saved_tt_never_changes_the_verdict() {
    tt_cases(8);
}

#[test]
fn a_damaged_endgame_table_is_never_certified() {
    endgame_table_cases(40);
}

#[test]
#[ignore]
fn many_more_corruptions() {
    certificate_cases(5000, 500);
    store_cases(1000, 200, 200);
    tt_cases(100);
    endgame_table_cases(1000);
}
