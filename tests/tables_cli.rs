//! `antiproof tables` on the command line: probe (text and JSON), errors,
//! build and verify of a small material.

use crate::util;
use std::path::PathBuf;
use std::process::Command;

/// A path for a directory a test makes (it does not exist yet).
fn scratch(name: &str) -> PathBuf {
    let d = util::temp_dir(name);
    std::fs::remove_dir(&d).unwrap();
    d
}

fn run(args: &[&str]) -> (i32, String, String) {
    // This module's own state directory (certification records), never
    // the user's.
    let out = util::command()
        .env("ANTIPROOF_STATE_DIR", util::test_state_dir())
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn probe_json_gives_the_value_and_each_move_for_the_mover() {
    let dir = scratch("probe");
    let d = dir.to_str().unwrap();
    // Black to move: both pawn moves force White's capture, after which
    // Black has no men and wins.
    let (code, out, err) = run(&[
        "tables",
        "probe",
        "--dir",
        d,
        "--json",
        "8/3p4/8/4P3/8/8/8/8 b - - 0 1",
    ]);
    assert_eq!(code, 0, "{err}");
    let j: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(j["wdl"], "win");
    assert_eq!(j["dtw"], 2);
    assert_eq!(j["rules"], "international");
    let moves = j["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 2);
    for m in moves {
        assert_eq!(m["wdl"], "win");
        assert_eq!(m["dtw"], 2);
    }
    // The table was built on demand and is reused.
    assert!(dir.join("PvP.international.apt").exists());
    let (code, out, _) = run(&[
        "tables",
        "probe",
        "--dir",
        d,
        "8/3p4/8/4P3/8/8/8/8 b - - 0 1",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("win in 2 for black"), "{out}");
    // A draw has a null distance.
    let (code, out, _) = run(&[
        "tables",
        "probe",
        "--dir",
        d,
        "--json",
        "8/8/8/8/8/8/8/Bb6 w - - 0 1",
    ]);
    assert_eq!(code, 0);
    let j: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(j["wdl"], "draw");
    assert!(j["dtw"].is_null());
}

#[test]
fn too_many_men_and_bad_input_are_errors() {
    let dir = scratch("errors");
    let d = dir.to_str().unwrap();
    let (code, _, err) = run(&[
        "tables",
        "probe",
        "--dir",
        d,
        "8/8/8/8/8/8/8/KKKKk3 w - - 0 1",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("5 men"), "{err}");
    let (code, _, err) = run(&["tables", "probe", "--dir", d, "not a fen"]);
    assert_eq!(code, 2);
    assert!(err.contains("FEN"), "{err}");
    let (code, _, err) = run(&["tables", "build", "--dir", d, "KvX"]);
    assert_eq!(code, 2);
    assert!(err.contains("KvX"), "{err}");
    let (code, _, err) = run(&["tables", "verify", "--dir", d, "KQvK"]);
    assert_eq!(code, 2, "a missing table cannot be verified");
    assert!(err.contains("not built"), "{err}");
}

#[test]
fn build_then_verify_a_small_material_under_fics() {
    let dir = scratch("fics");
    let d = dir.to_str().unwrap();
    let (code, out, err) = run(&["tables", "build", "--dir", d, "--rules", "fics", "KvP"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("built KvP"), "{out}");
    let (code, out, err) = run(&["tables", "verify", "--dir", d, "--rules", "fics", "KvP"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("ok KvP"), "{out}");
    assert!(!out.contains("certification record"), "{out}");
    // Certified once: the record of the same file bytes (kept in the
    // state directory, never in the table directory) is used next time,
    // unless --recertify.
    assert!(!dir.join("certified.tsv").exists());
    let (code, out, err) = run(&["tables", "verify", "--dir", d, "--rules", "fics", "KvP"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("ok KvP")
            && out.contains("certification record of this machine, same file bytes"),
        "{out}"
    );
    let (code, out, err) = run(&[
        "tables",
        "verify",
        "--dir",
        d,
        "--rules",
        "fics",
        "--recertify",
        "KvP",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("certification record"), "{out}");
    // Corrupt one entry: the verifier names the position.
    let path = dir.join("KvP.fics.apt");
    let mut bytes = std::fs::read(&path).unwrap();
    let i = 128
        + bytes[128..]
            .iter()
            .position(|&b| b != 0 && b % 2 == 1)
            .unwrap();
    bytes[i] += 2;
    std::fs::write(&path, &bytes).unwrap();
    let (code, out, err) = run(&["tables", "verify", "--dir", d, "--rules", "fics", "KvP"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("REJECTED") && out.contains("checksum"),
        "{out}"
    );
    // The cache file is not a valid table: build replaces it, saying so.
    let (code, out, err) = run(&["tables", "build", "--dir", d, "--rules", "fics", "KvP"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("built KvP") && out.contains("replaced a file that was not this table"),
        "{out}"
    );
    let (code, out, err) = run(&["tables", "verify", "--dir", d, "--rules", "fics", "KvP"]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn a_finished_game_or_an_empty_board_says_what_it_is() {
    let dir = scratch("finished");
    let d = dir.to_str().unwrap();
    // Not "win in 0": no position at all.
    let (code, out, err) = run(&["tables", "probe", "--dir", d, "8/8/8/8/8/8/8/8 w - -"]);
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("empty board"), "{err}");
    let (code, out, err) = run(&["tables", "probe", "--dir", d, "8/8/8/8/8/8/8/K7 b - -"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("the game is over: black (to move) has no pieces left"),
        "{out}"
    );
    let (code, out, _) = run(&[
        "tables",
        "probe",
        "--dir",
        d,
        "--json",
        "8/8/8/8/8/8/8/K7 w - -",
    ]);
    assert_eq!(code, 0);
    let j: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(j["wdl"], "loss");
    assert!(
        j["game_over"]
            .as_str()
            .is_some_and(|w| w.contains("black has no pieces left")),
        "{j}"
    );
}

#[test]
fn prove_at_a_table_root_answers_from_the_table() {
    let dir = scratch("prove-root");
    let d = dir.to_str().unwrap();
    let db = dir.join("s.redb");
    let db = db.to_str().unwrap();
    // Black must take the pawn and is left with the last piece: lost.
    let fen = "8/8/8/8/8/8/1P6/k7 b - - 0 1";
    let prove = |tables: &str| {
        run(&[
            "prove", "--db", db, "--memory", "16M", "--tables", tables, "--fen", fen, "--winner",
            "white",
        ])
    };
    // Without its table in the directory: said, not searched without it.
    std::fs::create_dir_all(&dir).unwrap();
    let (code, _, err) = prove(d);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("its table KvP must be in --tables"), "{err}");
    assert!(err.contains("antiproof tables build"), "{err}");
    let (code, _, err) = run(&["tables", "build", "--dir", d, "--men", "2"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = prove(d);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("root in table:   loss in 1 for black (to move)"),
        "{out}"
    );
}

/// Runs antiproof with `HOME` set to `home`, no XDG directories, and the
/// state directory `state`: exit code, stdout, stderr.
fn run_home(
    home: &std::path::Path,
    state: &std::path::Path,
    args: &[&str],
) -> (i32, String, String) {
    let out = Command::new(util::EXE)
        .env("HOME", home)
        .env_remove("XDG_CACHE_HOME")
        .env_remove("XDG_STATE_HOME")
        .env("ANTIPROOF_STATE_DIR", state)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn what_is_written_outside_the_given_directories_is_said_once() {
    let home = scratch("home");
    std::fs::create_dir_all(&home).unwrap();
    let state = home.join("state");
    let fen = "8/3p4/8/4P3/8/8/8/8 b - - 0 1";
    // No --dir: the table is built into the cache directory, said first.
    let (code, _, err) = run_home(&home, &state, &["tables", "probe", fen]);
    assert_eq!(code, 0, "{err}");
    let cache = home.join(".cache/antiproof/tables");
    assert!(
        err.contains(&format!(
            "building the endgame table PvP (and the smaller ones it needs) into {}",
            cache.display()
        )),
        "{err}"
    );
    assert!(err.contains("no --dir given"), "{err}");
    assert!(cache.join("PvP.international.apt").exists());
    // Built: nothing to say.
    let (code, _, err) = run_home(&home, &state, &["tables", "probe", fen]);
    assert_eq!(code, 0);
    assert_eq!(err, "");
    // Certifying writes the records into the state directory: said once.
    let (code, _, err) = run_home(&home, &state, &["tables", "verify", "PvP"]);
    assert_eq!(code, 0, "{err}");
    let records = state.join("certified.tsv");
    assert!(records.exists());
    let note = format!("table certifications recorded in {}", records.display());
    assert_eq!(err.matches(&note).count(), 1, "{err}");
    // Reused, not written again: nothing said.
    let (code, _, err) = run_home(&home, &state, &["tables", "verify", "PvP"]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("recorded in"), "{err}");
}
