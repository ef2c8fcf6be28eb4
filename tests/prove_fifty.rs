//! `prove` under the fifty-move rule: the root's clock from `--fen`, wins
//! that need more headroom than the clock leaves, a win delivered on the
//! 100th ply, the separate store table, and stored proofs whose every path
//! stays under the limit.

use crate::util::{self, antiproof, temp_dir};
use antiproof::rules::{Color, Position};
use antiproof::store::{Key, Record, Store, WinLoss};
use antiproof::stored::{StoredNode, StoredProof};
use antiproof::vocab::{FIFTY_MOVE_PLIES, MoveCode, RuleSet, Rules};
use std::collections::HashMap;
use std::path::Path;

/// White's rook against Black's pawn: White gives the rook away in 4
/// plies, the first one a rook move (reversible).
const ROOK_V_PAWN: &str = "8/7p/8/8/8/8/8/R7 w - -";

/// Black to move with only king moves (reversible), after each of which
/// White, its pawn blocked, has no legal move and wins.
const BLOCKED: &str = "7k/8/8/8/8/p7/P7/8 b - -";

/// `prove --json` of a FEN (with its clock) in a fresh store under `rules`
/// (extra arguments); the exit status and the JSON.
fn prove_fen(db: &Path, fen: &str, extra: &[&str]) -> (i32, serde_json::Value) {
    let _ = std::fs::remove_file(db);
    let mut args = vec![
        "prove",
        "--json",
        "--db",
        db.to_str().unwrap(),
        "--fen",
        fen,
    ];
    args.extend(extra);
    let (code, out, err) = antiproof(&args);
    let v = serde_json::from_str(&out).unwrap_or_else(|_| panic!("no JSON: {out} {err}"));
    (code, v)
}

/// The largest half-move clock at which each non-terminal position of the
/// stored proof from `root` is reached, over every path; panics where one
/// is reached at 100 or more, or where the proof does not close.
fn worst_clock(db: &Path, rules: RuleSet, root: &Position, winner: Color) -> u32 {
    let store = Store::open_read_only(db).unwrap();
    let reader = store.reader().unwrap();
    let proof = StoredProof::new(&reader, rules);
    let mut best: HashMap<Key, u32> = HashMap::new();
    let mut stack = vec![(*root, Vec::<String>::new())];
    let mut worst = 0;
    while let Some((pos, line)) = stack.pop() {
        let key = pos.pack().0;
        let clock = pos.halfmoves();
        if best.get(&key).is_some_and(|&c| c >= clock) {
            continue;
        }
        best.insert(key, clock);
        let node = proof.node_for(&pos, winner).unwrap().unwrap();
        let moves = match node {
            StoredNode::GameEnd(_) => continue,
            n => n.moves(&pos),
        };
        assert!(
            clock < FIFTY_MOVE_PLIES,
            "reached at clock {clock} after {line:?}"
        );
        worst = worst.max(clock);
        for m in moves {
            let mut l = line.clone();
            l.push(m.uci().to_string());
            stack.push((pos.play(m), l));
        }
    }
    worst
}

#[test]
fn a_reversible_win_at_clock_99_is_a_draw_under_the_rule() {
    let dir = temp_dir("fifty-clock99");
    let db = dir.join("a.redb");
    let at = |c: u32| format!("{ROOK_V_PAWN} {c} 60");
    let (code, v) = prove_fen(&db, &at(99), &[]);
    assert_eq!((code, v["result"].as_str()), (0, Some("proven")));
    assert_eq!(v["fifty_move_rule"], false);
    assert!(v["proof_need"].is_null());
    let (code, v) = prove_fen(&db, &at(99), &["--fifty-move-rule"]);
    assert_eq!((code, v["result"].as_str()), (1, Some("disproven")), "{v}");
    assert_eq!(v["fifty_move_rule"], true);
    assert_eq!(v["rule_set"], "international+fifty");
    assert_eq!(v["rules"], "international");
    for c in [0, 90, 96] {
        let (code, v) = prove_fen(&db, &at(c), &["--rules", "lichess"]);
        assert_eq!(
            (code, v["result"].as_str()),
            (0, Some("proven")),
            "clock {c}"
        );
        let root = Position::from_fen(&at(c)).unwrap();
        assert!(worst_clock(&db, RuleSet::LICHESS, &root, Color::White) < FIFTY_MOVE_PLIES);
    }
}

#[test]
fn a_win_on_the_hundredth_ply_counts() {
    let dir = temp_dir("fifty-ply100");
    let db = dir.join("a.redb");
    let at = |c: u32| format!("{BLOCKED} {c} 60");
    let w = ["--winner", "white", "--fifty-move-rule"];
    let (code, v) = prove_fen(&db, &at(99), &w);
    assert_eq!((code, v["result"].as_str()), (0, Some("proven")), "{v}");
    // At 100 the game is drawn before Black moves.
    let (code, v) = prove_fen(&db, &at(100), &w);
    assert_eq!((code, v["result"].as_str()), (1, Some("disproven")), "{v}");
    let (code, v) = prove_fen(&db, &at(100), &w[..2]);
    assert_eq!((code, v["result"].as_str()), (0, Some("proven")), "{v}");
}

#[test]
fn a_bad_half_move_field_is_refused_under_the_rule() {
    let dir = temp_dir("fifty-fen");
    let db = dir.join("a.redb");
    for h in ["abc", "101"] {
        let fen = format!("{ROOK_V_PAWN} {h} 60");
        let (code, _, err) = antiproof(&[
            "prove",
            "--fifty-move-rule",
            "--db",
            db.to_str().unwrap(),
            "--fen",
            &fen,
        ]);
        assert_eq!(code, 2, "{h}: {err}");
        assert!(err.contains("half-move") && err.contains(h), "{h}: {err}");
    }
}

#[test]
fn the_rule_has_its_own_table_and_a_rung_keeps_its_verdict() {
    let dir = temp_dir("fifty-table");
    let db = dir.join("a.redb");
    let d = db.to_str().unwrap();
    let (code, out, err) = antiproof(&[
        "prove",
        "--json",
        "--db",
        d,
        "--fifty-move-rule",
        "e3",
        "d5",
    ]);
    assert_eq!(code, 0, "{out} {err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["result"], "proven");
    let fifty_records = v["store_records"].as_u64().unwrap();
    assert!(fifty_records > 0);
    {
        let s = Store::open_read_only(&db).unwrap();
        assert_eq!(s.len(RuleSet::LICHESS).unwrap(), fifty_records);
        assert_eq!(s.len(Rules::International).unwrap(), 0);
    }
    let (code, out, _) = antiproof(&["store", "check", "--db", d]);
    assert_eq!(code, 0);
    assert!(out.contains(&format!("{fifty_records} records")), "{out}");
    let (root, _) = Position::startpos().play_line(&["e3", "d5"]).unwrap();
    assert!(worst_clock(&db, RuleSet::LICHESS, &root, Color::White) < FIFTY_MOVE_PLIES);
    // The plain rule set does not see the fifty-move records (and the
    // other way round): it proves and writes its own.
    let (code, out, _) = antiproof(&["prove", "--json", "--db", d, "e3", "d5"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["records_written"].as_u64().unwrap() > 0);
    // The ladder's rung under the rule: the same verdict, and the same
    // search as without the rule (the baseline row's ratios).
    let (code, out, err) = antiproof(&[
        "prove",
        "--ladder",
        "--rungs",
        "1",
        "--rules",
        "joint+fifty",
        "--baseline",
    ]);
    assert_eq!(code, 0, "{out} {err}");
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(rows.len(), 2, "{out}");
    assert!(rows[0].contains("proven"), "{out}");
    assert!(rows[1].contains("proven"), "{out}");
    assert!(
        rows[1].contains("baseline international; cost: nodes x1.000"),
        "{out}"
    );
}

#[test]
fn the_fifty_table_keeps_the_proof_with_the_smaller_need() {
    let dir = temp_dir("fifty-need");
    let db = dir.join("a.redb");
    let s = Store::open(&db).unwrap();
    let rec = |size| Record {
        verdict: WinLoss::Win,
        flags: 0,
        mv: MoveCode::from_raw(0x0123),
        size,
    };
    let k = [5u8; 25];
    let set = RuleSet::LICHESS;
    s.put_batch_fifty(set, &[(k, rec(10), 30)]).unwrap();
    s.put_batch_fifty(set, &[(k, rec(5), 40)]).unwrap();
    assert_eq!(s.get_entry(set, &k).unwrap(), Some((rec(10), Some(30))));
    s.put_batch_fifty(set, &[(k, rec(50), 12), (k, rec(60), 12)])
        .unwrap();
    assert_eq!(s.get_entry(set, &k).unwrap(), Some((rec(50), Some(12))));
    assert_eq!(s.get(Rules::International, &k).unwrap(), None);
    assert_eq!(s.len(set).unwrap(), 1);
    assert_eq!(s.len(RuleSet::new(Rules::Fics, true)).unwrap(), 0);
}

/// `verify --db` under the fifty-move rule checks the store's proof as
/// the win-tree file `export` writes of it: certified at the clock it was
/// proven from, rejected (named) at a clock it does not fit, or where the
/// store has no proof under the rule set.
#[test]
fn verify_db_under_the_fifty_move_rule_checks_the_stored_proof() {
    let dir = temp_dir("fifty-verify-db");
    let db = dir.join("a.redb");
    let d = db.to_str().unwrap();
    let fen = format!("{ROOK_V_PAWN} 88 60");
    let (code, v) = prove_fen(&db, &fen, &["--rules", "lichess"]);
    assert_eq!((code, v["result"].as_str()), (0, Some("proven")), "{v}");
    let verify = |fen: &str, rules: &str| {
        antiproof(&[
            "verify", "--db", d, "--json", "--rules", rules, "--fen", fen,
        ])
    };
    let (code, out, err) = verify(&fen, "lichess");
    assert_eq!(code, 0, "{out} {err}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["verdict"], "certified", "{r}");
    assert_eq!(r["rule_set"], "international+fifty", "{r}");
    // The worst clock of the proof's paths stays under 100.
    let worst = r["worst_clock"].as_u64().unwrap();
    assert!((88..100).contains(&worst), "{r}");
    // At clock 99 the stored proof does not fit.
    let (code, out, _) = verify(&format!("{ROOK_V_PAWN} 99 60"), "lichess");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("fifty-move rule"), "{out}");
    // No proof under joint+fifty in this store.
    let (code, out, _) = verify(&fen, "joint+fifty");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("no proof"), "{out}");
}

#[test]
fn export_follows_the_rule_sets_records_and_refuses_a_clock_without_headroom() {
    let dir = temp_dir("fifty-export");
    let db = dir.join("a.redb");
    let d = db.to_str().unwrap();
    let out = dir.join("r.tree");
    let o = out.to_str().unwrap();
    let fen = format!("{ROOK_V_PAWN} 90 60");
    let (code, v) = prove_fen(&db, &fen, &["--rules", "lichess"]);
    assert_eq!((code, v["result"].as_str()), (0, Some("proven")), "{v}");
    let export = |fen: &str, rules: &str| {
        antiproof(&["export", "--db", d, "--rules", rules, "--fen", fen, "-o", o])
    };
    let (code, stdout, err) = export(&fen, "lichess");
    assert_eq!(code, 0, "{stdout} {err}");
    assert!(stdout.contains("international+fifty"), "{stdout}");
    // The file is a proof (checked here without the rule).
    let (code, stdout, err) = antiproof(&["verify", "--tree", o, "--fen", &fen]);
    assert_eq!(code, 0, "{stdout} {err}");
    // No record under the plain rule set.
    let (code, _, _) = export(&fen, "international");
    assert_eq!(code, 1);
    // The same position at clock 99: the stored proof needs more.
    let (code, _, err) = export(&format!("{ROOK_V_PAWN} 99 60"), "lichess");
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("fifty-move rule"), "{err}");
}

#[test]
fn openings_names_the_rule_sets_of_each_lines_certificates() {
    let dir = temp_dir("fifty-openings");
    let db = dir.join("a.redb");
    let d = db.to_str().unwrap();
    let proofs = dir.join("proofs");
    std::fs::create_dir_all(&proofs).unwrap();
    for (rules, name) in [("international", "e3-d5"), ("lichess", "e3-d5.fifty")] {
        let (code, _, err) = antiproof(&["prove", "--db", d, "--rules", rules, "e3", "d5"]);
        assert_eq!(code, 0, "{err}");
        let tree = proofs.join(format!("{name}.tree"));
        let (code, _, err) = antiproof(&[
            "export",
            "--db",
            d,
            "--rules",
            rules,
            "-o",
            tree.to_str().unwrap(),
            "e3",
            "d5",
        ]);
        assert_eq!(code, 0, "{err}");
    }
    std::fs::write(
        proofs.join("e3-d5.json"),
        r#"{"line": "e3 d5", "rules": "international", "winner": "white", "verified": true}"#,
    )
    .unwrap();
    std::fs::write(
        proofs.join("e3-d5.fifty.json"),
        r#"{"line": "e3 d5", "rules": "international", "fifty_move_rule": true, "rule_set": "international+fifty", "winner": "white", "verified": true}"#,
    )
    .unwrap();
    let p = proofs.to_str().unwrap();
    let (code, out, _) = antiproof(&["openings", "--json", "--proofs", p]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let e3 = v
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["move"] == "e3")
        .unwrap();
    let mut sets: Vec<&str> = e3["certified"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["rule_set"].as_str().unwrap())
        .collect();
    sets.sort();
    assert_eq!(sets, ["international", "international+fifty"], "{e3}");
    let (_, text, _) = antiproof(&["openings", "--proofs", p]);
    let row = text.lines().find(|l| l.starts_with("e3 ")).unwrap();
    // Together: one reply of 20 proven, under two rule sets of six.
    assert!(row.contains("white: 1 of 20 replies 2 of 6"), "{row}");
    let (_, long, _) = antiproof(&["openings", "--long", "--proofs", p]);
    let e3 = util::openings_block(&long, "1.e3:");
    assert!(
        e3.contains("white: 1 of 20 replies (international, international+fifty)"),
        "{e3}"
    );
    assert!(
        e3.contains("e3 d5 (international+fifty, white wins"),
        "{e3}"
    );
}

#[test]
fn near_the_limit_the_stored_proof_stays_under_100_on_every_path() {
    let dir = temp_dir("fifty-near");
    let db = dir.join("a.redb");
    let tree = dir.join("t.tree");
    let (root, _) = Position::startpos().play_line(&["e3", "d5"]).unwrap();
    let epd = root.to_epd();
    for c in [98, 99] {
        let fen = format!("{epd} {c} 2");
        let (code, v) = prove_fen(&db, &fen, &["--rules", "lichess"]);
        assert_eq!((code, v["result"].as_str()), (0, Some("proven")), "{v}");
        let root = Position::from_fen(&fen).unwrap();
        assert!(worst_clock(&db, RuleSet::LICHESS, &root, Color::White) < FIFTY_MOVE_PLIES);
        let t = tree.to_str().unwrap();
        let d = db.to_str().unwrap();
        let (code, out, err) = antiproof(&[
            "export", "--db", d, "--rules", "lichess", "--fen", &fen, "-o", t,
        ]);
        assert_eq!(code, 0, "{out} {err}");
        let (code, out, err) = antiproof(&["verify", "--tree", t, "--fen", &fen]);
        assert_eq!(code, 0, "{out} {err}");
    }
}

#[test]
fn rungs_3_to_6_near_the_limit_stay_under_100_and_export() {
    let dir = temp_dir("fifty-rungs");
    let db = dir.join("a.redb");
    let d = db.to_str().unwrap();
    let tree = dir.join("t.tree");
    let t = tree.to_str().unwrap();
    let lines: [(&[&str], Color, u32); 4] = [
        (&["e4"], Color::Black, 94),
        (&["d3"], Color::Black, 94),
        (&["d4"], Color::Black, 94),
        (&["e3", "Na6"], Color::White, 98),
    ];
    for (line, winner, from) in lines {
        let (root, _) = Position::startpos().play_line(line).unwrap();
        let epd = root.to_epd();
        for c in from..=99 {
            let fen = format!("{epd} {c} 1");
            let (code, v) = prove_fen(&db, &fen, &["--rules", "lichess"]);
            assert_eq!(
                (code, v["result"].as_str()),
                (0, Some("proven")),
                "{line:?} {c}: {v}"
            );
            let root = Position::from_fen(&fen).unwrap();
            assert!(worst_clock(&db, RuleSet::LICHESS, &root, winner) < FIFTY_MOVE_PLIES);
            let (code, out, err) = antiproof(&[
                "export", "--db", d, "--rules", "lichess", "--fen", &fen, "-o", t,
            ]);
            assert_eq!(code, 0, "{line:?} {c}: {out} {err}");
        }
    }
}

/// Black's rook against White's king (from the certificate of 1.h4): Black
/// gives the rook away, which takes 12 plies without a capture or pawn move.
const ROOK_V_KING: &str = "3K4/8/8/8/1r6/8/8/8 b - -";

#[test]
fn a_pawnless_win_needing_12_reversible_plies_fits_from_clock_88_only() {
    let dir = temp_dir("fifty-rook");
    let db = dir.join("a.redb");
    let at = |c: u32| format!("{ROOK_V_KING} {c} 1");
    let w = ["--winner", "black", "--rules", "lichess"];
    let (code, v) = prove_fen(&db, &at(88), &w);
    assert_eq!((code, v["result"].as_str()), (0, Some("proven")), "{v}");
    // Exactly to the limit: the last ply of the longest line is the 100th.
    assert_eq!(v["proof_need"], 12, "{v}");
    let root = Position::from_fen(&at(88)).unwrap();
    assert_eq!(
        worst_clock(&db, RuleSet::LICHESS, &root, Color::Black),
        FIFTY_MOVE_PLIES - 1
    );
    let (code, v) = prove_fen(&db, &at(91), &w);
    assert_eq!((code, v["result"].as_str()), (1, Some("disproven")), "{v}");
    let (code, v) = prove_fen(&db, &at(91), &w[..2]);
    assert_eq!((code, v["result"].as_str()), (0, Some("proven")), "{v}");
}

#[test]
fn a_saved_table_is_resumed_only_under_its_rule_set_and_clock() {
    let dir = temp_dir("fifty-tt");
    let db = dir.join("a.redb");
    let d = db.to_str().unwrap();
    let (root, _) = Position::startpos().play_line(&["e3", "Na6"]).unwrap();
    let fen = |c: u32| format!("{} {c} 2", root.to_epd());
    let run = |rules: &str, c: u32| {
        antiproof(&[
            "prove",
            "--db",
            d,
            "--rules",
            rules,
            "--limit",
            "3000 nodes",
            "--fen",
            &fen(c),
        ])
    };
    let (code, _, err) = run("lichess", 0);
    assert_eq!(code, 3, "{err}");
    assert!(!err.contains("ignoring"), "{err}");
    // The same search resumes.
    let (code, out, err) = run("lichess", 0);
    assert_eq!(code, 3, "{err}");
    assert!(out.contains("resumed"), "{out}");
    // Another clock, or no fifty-move rule: not resumed (each run saves
    // its own table for the next).
    for (rules, c, resumed) in [
        ("lichess", 7, false),
        ("international", 7, false),
        ("international", 7, true),
        ("lichess", 0, false),
    ] {
        let (code, out, err) = run(rules, c);
        assert_eq!(code, 3, "{err}");
        assert_eq!(out.contains("resumed"), resumed, "{rules} {c}: {out} {err}");
        assert_eq!(
            err.contains("saved for another search"),
            !resumed,
            "{rules} {c}: {err}"
        );
    }
}
