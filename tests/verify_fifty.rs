//! `verify --tree` under the fifty-move rule: the worst half-move clock
//! over every path into a node (transpositions included) must stay under
//! 100 at every position that is not a finished game.

use crate::util::{antiproof, temp_dir};
use antiproof::check::game;
use antiproof::wintree::{MoveCode, NodeKind, ProofDag, WinTree, WriteOptions, write_tree};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// KBN against the lone king, White to move: the distance-to-win tables
/// score it a win in 106 plies, and every winning line passes 100 plies
/// without a capture or pawn move.
const KBN_FEN: &str = "8/8/3k4/8/3K4/N7/4B3/8 w - - 0 1";

/// The certificate of [`KBN_FEN`], made once per test process with the
/// project's own tools: tables, prover, export with the table leaves
/// expanded into full lines (so the file needs no tables).
fn kbn_certificate() -> &'static Path {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = temp_dir("verify-fifty-kbn");
        let tables = dir.join("tables");
        let store = dir.join("store.redb");
        let file = dir.join("kbn.tree");
        let run = |args: &[&str]| {
            let (code, out, err) = antiproof(args);
            assert_eq!(code, 0, "{args:?}\n{out}\n{err}");
        };
        run(&[
            "tables",
            "build",
            "--dir",
            tables.to_str().unwrap(),
            "KBNvK",
        ]);
        let (t, s, f) = (
            tables.to_str().unwrap(),
            store.to_str().unwrap(),
            file.to_str().unwrap(),
        );
        run(&["prove", "--fen", KBN_FEN, "--tables", t, "--db", s]);
        run(&[
            "export",
            "--db",
            s,
            "--fen",
            KBN_FEN,
            "--expand-tables",
            "--tables",
            t,
            "--no-sizes",
            "-o",
            f,
        ]);
        file
    })
}

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// (a) A win that needs more than 100 reversible plies: certified without
/// the rule, rejected under it, naming the line (100 plies from the root,
/// no capture) and the ply count.
#[test]
fn a_long_quiet_win_is_rejected_under_the_fifty_move_rule() {
    let file = kbn_certificate().to_str().unwrap();
    let (code, out, err) = antiproof(&["verify", "--tree", file, "--fen", KBN_FEN]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("CERTIFIED"), "{out}");
    assert!(out.contains("rules:       international\n"), "{out}");
    for rules in [
        &["--fifty-move-rule"][..],
        &["--rules", "lichess"],
        &["--rules", "international+fifty"],
    ] {
        let mut args = vec!["verify", "--tree", file, "--fen", KBN_FEN];
        args.extend_from_slice(rules);
        let (code, out, err) = antiproof(&args);
        assert_eq!(code, 1, "{rules:?}: {out}{err}");
        assert!(out.starts_with("REJECTED at 1. "), "{out}");
        assert!(
            out.contains("drawn by the fifty-move rule: 100 plies without a capture or pawn move"),
            "{out}"
        );
        assert!(out.contains("rules:       international+fifty\n"), "{out}");
    }
    let (code, out, _) = antiproof(&[
        "verify",
        "--tree",
        file,
        "--fen",
        KBN_FEN,
        "--fifty-move-rule",
        "--json",
    ]);
    assert_eq!(code, 1);
    let j = json(&out);
    assert_eq!(j["verdict"], "rejected");
    assert_eq!(j["rules"], "international");
    assert_eq!(j["fifty_move_rule"], true);
    assert_eq!(j["rule_set"], "international+fifty");
    let r = &j["rejection"];
    assert_eq!(r["kind"], "FiftyMoveRule");
    // The line: 100 plies from the root, none a capture or a pawn move,
    // ending in the position the rejection names (clock 100).
    let start = start_position(KBN_FEN);
    let line = r["line"].as_str().unwrap();
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let (end, moves) = game::play_line(&start, &tokens).unwrap();
    assert_eq!(moves.len(), 100, "{line}");
    assert!(moves.iter().all(|m| !game::resets_clock(m)), "{line}");
    assert_eq!(game::fen(&end), r["fen"].as_str().unwrap());
    assert!(r["fen"].as_str().unwrap().contains(" 100 "), "{r}");
    // Without the rule the JSON says so too.
    let (_, out, _) = antiproof(&["verify", "--tree", file, "--fen", KBN_FEN, "--json"]);
    let j = json(&out);
    assert_eq!(j["verdict"], "certified");
    assert_eq!(j["fifty_move_rule"], false);
    assert_eq!(j["rule_set"], "international");
}

/// (b) The worst line the rejection names runs through transpositions:
/// the clock at the node it ends in came along a path that the file's
/// tree structure alone does not hold. (The region-graph propagation on
/// its own, short path fine and long path at 100: see the unit tests of
/// `check::tree::clock`.)
#[test]
fn the_worst_line_follows_transpositions() {
    let path = kbn_certificate();
    let (_, out, _) = antiproof(&[
        "verify",
        "--tree",
        path.to_str().unwrap(),
        "--fen",
        KBN_FEN,
        "--fifty-move-rule",
        "--json",
    ]);
    let r = &json(&out)["rejection"];
    let start = start_position(KBN_FEN);
    let tokens: Vec<String> = r["line"]
        .as_str()
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect();
    let (_, moves) = game::play_line(&start, &tokens).unwrap();
    let tree = WinTree::open(path).unwrap();
    let mut slot = 0;
    let mut pointers = 0;
    for m in &moves {
        let code = game::move_code(m);
        let child = tree
            .children(slot)
            .unwrap()
            .map(Result::unwrap)
            .find(|c| c.mv.is_some_and(|c| c.same_move(code)))
            .expect("the line is in the file");
        slot = match child.kind {
            NodeKind::Transposition { target } => {
                pointers += 1;
                target
            }
            _ => child.index,
        };
    }
    assert_eq!(Some(u64::from(slot)), r["node"].as_u64());
    assert!(pointers > 0, "the worst line follows no transposition");
}

fn start_position(fen: &str) -> shakmaty::variant::Antichess {
    let f: shakmaty::fen::Fen = fen.parse().unwrap();
    f.into_position(shakmaty::CastlingMode::Standard).unwrap()
}

/// A file of `dag` from node 0, no prolog, written to `dir/name`.
fn write(dir: &Path, name: &str, dag: &ProofDag) -> String {
    let w = write_tree(dag, 0, &[], &WriteOptions::default()).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, w.bytes).unwrap();
    p.to_str().unwrap().to_string()
}

fn mv(uci: &str) -> MoveCode {
    MoveCode::from_uci(uci).unwrap()
}

/// White's pawn a2 is blocked by Black's a3; Black to move has only king
/// moves, each leaving White to move with no legal move: White wins.
const BLOCKED: &str = "7k/8/8/8/8/p7/P7/8 b - - 99 50";

/// (c) A win delivered on the 100th ply counts: from a clock of 99 every
/// king move ends the game at 100. From 100 the root itself is drawn.
#[test]
fn a_win_on_the_hundredth_ply_is_certified() {
    let dir = temp_dir("verify-fifty-hundredth");
    let mut dag = ProofDag::new();
    let root = dag.add_node();
    for m in ["h8g8", "h8g7", "h8h7"] {
        let leaf = dag.add_node();
        dag.add_edge(root, mv(m), leaf);
    }
    let file = write(&dir, "blocked.tree", &dag);
    let verify = |fen: &str| {
        antiproof(&[
            "verify",
            "--tree",
            &file,
            "--fen",
            fen,
            "--winner",
            "white",
            "--fifty-move-rule",
        ])
    };
    let (code, out, err) = verify(BLOCKED);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("3 stalemate"), "{out}");
    let (code, out, _) = verify(&BLOCKED.replace(" 99 ", " 100 "));
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("REJECTED at (the root)"), "{out}");
    assert!(out.contains("fifty-move rule: 100 plies"), "{out}");
}

/// White to move plays Ng7, Black must take it (Kxg7), and White, its
/// pawn blocked, has no move: a win two plies on, the first quiet.
const KNIGHT: &str = "7k/8/8/5N2/8/p7/P7/8 w - - 0 1";

/// (d) The clock starts from `--fen`'s half-move field: a proof fine from
/// 0 (and 98) fails from 99, where Black's node is reached at 100; a
/// field that is not a number, or over 100, is refused (exit 2).
#[test]
fn the_clock_starts_from_the_fen() {
    let dir = temp_dir("verify-fifty-fen");
    let mut dag = ProofDag::new();
    let root = dag.add_node();
    let black = dag.add_node();
    let leaf = dag.add_node();
    dag.add_edge(root, mv("f5g7"), black);
    dag.add_edge(black, mv("h8g7"), leaf);
    let file = write(&dir, "knight.tree", &dag);
    let verify = |fen: &str, extra: &[&str]| {
        let mut args = vec!["verify", "--tree", &file, "--fen", fen];
        args.extend_from_slice(extra);
        antiproof(&args)
    };
    let at = |clock: &str| KNIGHT.replace(" 0 1", &format!(" {clock} 1"));
    for (clock, worst) in [("0", 1), ("98", 99)] {
        let (code, out, err) = verify(&at(clock), &["--fifty-move-rule", "--json"]);
        assert_eq!(code, 0, "clock {clock}: {out}{err}");
        assert_eq!(json(&out)["worst_clock"], worst, "{out}");
    }
    // The obligations header names the rule.
    let owed = dir.join("owed.epd");
    let (code, out, _) = verify(
        &at("0"),
        &["--fifty-move-rule", "--obligations", owed.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{out}");
    let text = std::fs::read_to_string(&owed).unwrap();
    assert!(
        text.contains("\n# rules: international\n# fifty-move-rule: yes\n"),
        "{text}"
    );
    let (code, out, _) = verify(&at("99"), &["--fifty-move-rule", "--json"]);
    assert_eq!(code, 1, "{out}");
    let r = &json(&out)["rejection"];
    assert_eq!(r["kind"], "FiftyMoveRule");
    assert_eq!(r["line"], "1. Ng7");
    assert_eq!(r["node"], 1);
    // Without the rule the clock does not matter.
    let (code, out, _) = verify(&at("99"), &["--json"]);
    assert_eq!(code, 0, "{out}");
    assert!(json(&out)["worst_clock"].is_null(), "{out}");
    for (bad, what) in [("x", "\"x\""), ("101", "101"), ("-1", "\"-1\"")] {
        let (code, out, err) = verify(&at(bad), &["--fifty-move-rule"]);
        assert_eq!(code, 2, "{bad}: {out}{err}");
        assert!(
            err.contains("half-move clock field") && err.contains(what),
            "{bad}: {err}"
        );
    }
}

/// The store is checked under the rule as the win-tree file `export`
/// writes of it (`tests/prove_fifty.rs` certifies one): a store with no
/// proof under the rule set is a rejection naming it (exit 1), a store
/// that is not there is exit 2 naming it.
#[test]
fn the_store_under_the_rule_needs_a_proof_under_the_rule() {
    let dir = temp_dir("verify-fifty-store");
    let db = dir.join("s.redb");
    let d = db.to_str().unwrap();
    let (code, _, err) = antiproof(&["verify", "--db", d, "--rules", "joint+fifty"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("s.redb"), "{err}");
    // Proven under plain international rules only.
    let (code, _, err) = antiproof(&["prove", "--db", d, "e3", "d5"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = antiproof(&["verify", "--db", d, "--rules", "joint+fifty", "e3", "d5"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("no proof") && out.contains("fifty-move rule"),
        "{out}"
    );
    let (code, out, err) = antiproof(&["verify", "--db", d, "e3", "d5"]);
    assert_eq!(code, 0, "{out}{err}");
}
