//! `antiproof browse` on a small real proof (1.e3 d5, White wins: 33
//! positions, found by the test's own search and written with the
//! win-tree writer), read from a win-tree file and from a proof store.

use crate::util;
use antiproof::rules::{Color, Position, Rules};
use antiproof::store::{Key, Record, Store};
use antiproof::web::source::{ProofSource, RecordSource, TreeSource};
use antiproof::web::view::{self, ProofStatus};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

struct Fixture {
    dir: PathBuf,
    tree: PathBuf,
    bare: PathBuf,
    db: PathBuf,
    size: u64,
    records: HashMap<Key, Record>,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = util::temp_dir("web-browse");
        let (tree, size) = util::write_proof(&dir, "e3d5", "e2e3 d7d5", Color::White, true);
        let (bare, _) = util::write_proof(&dir, "e3d5-bare", "e2e3 d7d5", Color::White, false);
        let records = util::prove(
            "e2e3 d7d5",
            Rules::International,
            Color::White,
            util::MAX_NODES,
        )
        .records_map();
        let db = dir.join("proof.redb");
        let store = Store::open(&db).unwrap();
        let items: Vec<(Key, Record)> = records.iter().map(|(k, r)| (*k, *r)).collect();
        store.put_batch(Rules::International, &items).unwrap();
        drop(store);
        Fixture {
            dir,
            tree,
            bare,
            db,
            size,
            records,
        }
    })
}

fn browse(args: &[&str]) -> (i32, String, String) {
    util::antiproof(&[&["browse"][..], args].concat())
}

fn tree_arg() -> String {
    fixture().tree.display().to_string()
}

/// Follows the largest move from the proof's root until a leaf; the line.
fn line_to_leaf(src: &dyn ProofSource) -> Vec<String> {
    let mut line: Vec<String> = vec!["e2e3".into(), "d7d5".into()];
    loop {
        let v = view::view(src, Rules::International, &line).unwrap();
        match v.moves.first() {
            Some(m) => line.push(m.uci.clone()),
            None => return line,
        }
    }
}

#[test]
fn proof_fixture_has_the_ladder_size() {
    // docs/ladder.md: 1.e3 d5 has a 33-position proof.
    assert_eq!(fixture().size, 33);
    let root = Position::startpos().play_line_str("e2e3 d7d5").unwrap().0;
    assert_eq!(fixture().records[&root.pack().0].size, 33);
}

#[test]
fn browse_root_of_the_proof_is_a_winner_node() {
    let (code, out, err) = browse(&["--tree", &tree_arg(), "e2e3", "d7d5"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("win for White (White to move"), "{out}");
    assert!(out.contains("Line:    1. e3 d5"), "{out}");
    // The one winning move, marked, with its subtree size (33 minus the root).
    assert!(out.contains("* Qg4  d1g4"), "{out}");
    assert!(out.contains("32"), "{out}");
    // The board: rank 8 first, files a..h, the d-pawn on d5.
    assert!(out.contains("  8  r n b q k b n r"), "{out}");
    assert!(out.contains("  5  . . . p . . . ."), "{out}");
    assert!(out.contains("     a b c d e f g h"), "{out}");
    let (_, json, _) = browse(&["--tree", &tree_arg(), "--json", "e2e3,d7d5"]);
    assert_eq!(
        json.trim(),
        r#"{"game_over":false,"moves":[{"uci":"d1g4","san":"Qg4","nodes":32}]}"#
    );
}

#[test]
fn browse_start_position_leads_into_the_proof() {
    let (code, out, _) = browse(&["--tree", &tree_arg()]);
    assert_eq!(code, 0);
    assert!(out.contains("not in the proof yet"), "{out}");
    let (_, json, _) = browse(&["--tree", &tree_arg(), "--json", "e3"]);
    assert_eq!(
        json.trim(),
        r#"{"game_over":false,"moves":[{"uci":"d7d5","san":"d5","nodes":33}]}"#
    );
}

#[test]
fn browse_loser_node_lists_every_legal_move() {
    let (code, out, _) = browse(&["--tree", &tree_arg(), "e3", "d5", "Qg4"]);
    assert_eq!(code, 0);
    assert!(out.contains("win for White (Black to move"), "{out}");
    assert!(
        !out.contains("  * "),
        "no move is marked at a loser node: {out}"
    );
    let (_, json, _) = browse(&["--tree", &tree_arg(), "--json", "e3 d5 Qg4"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let moves = v["moves"].as_array().unwrap();
    let pos = Position::startpos().play_line_str("e3 d5 Qg4").unwrap().0;
    assert_eq!(moves.len(), pos.legal_moves().len());
    // Here Black's one legal move is the capture Bxg4.
    assert_eq!(moves.len(), 1);
    assert_eq!(moves[0]["san"], "Bxg4");

    // A loser node with choices in the 1.e4 proof (Black wins): the first
    // one met walking the largest moves.
    let (e4p, _) = util::write_proof(&fixture().dir, "e4", "e2e4", Color::Black, true);
    let e4 = e4p.display().to_string();
    let src = TreeSource::open(&e4p, Rules::International, None).unwrap();
    let mut line = vec!["e2e4".to_string()];
    let choice = loop {
        let v = view::view(&src, Rules::International, &line).unwrap();
        if v.status == ProofStatus::LoserToMove(Color::Black) && v.moves.len() > 1 {
            break v;
        }
        line.push(
            v.moves
                .first()
                .expect("a loser choice before the end")
                .uci
                .clone(),
        );
    };
    let (code, out, _) = browse(&["--tree", &e4, &line.join(",")]);
    assert_eq!(code, 0);
    assert!(
        out.contains("win for Black (White to move; every reply is answered)"),
        "{out}"
    );
    assert!(!out.contains("  * "), "{out}");
    let (_, json, _) = browse(&["--tree", &e4, "--json", &line.join(",")]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let moves = v["moves"].as_array().unwrap();
    assert_eq!(moves.len(), choice.pos.legal_moves().len());
    let sizes: Vec<u64> = moves.iter().map(|m| m["nodes"].as_u64().unwrap()).collect();
    assert!(
        sizes.windows(2).all(|w| w[0] >= w[1]),
        "largest first: {sizes:?}"
    );
    // The winner's node after 1.e4: one move, marked.
    let (_, out, _) = browse(&["--tree", &e4, "e4"]);
    assert!(out.contains("* b5  b7b5"), "{out}");
}

#[test]
fn browse_game_over_leaf_and_off_the_proof() {
    let f = fixture();
    let src = TreeSource::open(&f.tree, Rules::International, None).unwrap();
    assert_eq!(src.winner(), Some(Color::White));
    let leaf = line_to_leaf(&src);
    let (code, out, _) = browse(&["--tree", &tree_arg(), &leaf.join(",")]);
    assert_eq!(code, 0);
    assert!(out.contains("game over: White wins"), "{out}");
    assert!(out.contains("Moves:   none"), "{out}");
    let (_, json, _) = browse(&["--tree", &tree_arg(), "--json", &leaf.join(" ")]);
    assert_eq!(json.trim(), r#"{"game_over":true,"moves":[]}"#);

    // White leaves the proof with 2.a3.
    let (code, out, _) = browse(&["--tree", &tree_arg(), "e2e3", "d7d5", "a2a3"]);
    assert_eq!(code, 0);
    assert!(out.contains("Proof:   not in the proof"), "{out}");
    let (_, json, _) = browse(&["--tree", &tree_arg(), "--json", "e2e3", "d7d5", "a2a3"]);
    assert_eq!(json.trim(), r#"{"game_over":false,"moves":[]}"#);
    // Another first move is not in this proof either.
    let (_, json, _) = browse(&["--tree", &tree_arg(), "--json", "e2e4"]);
    assert_eq!(json.trim(), r#"{"game_over":false,"moves":[]}"#);
}

#[test]
fn browse_rejects_bad_moves_with_the_ply() {
    let (code, _, err) = browse(&["--tree", &tree_arg(), "e2e3", "d7d4"]);
    assert_eq!(code, 2);
    assert!(err.contains("ply 2"), "{err}");
    assert!(err.contains("d7d4"), "{err}");
    let (code, _, err) = browse(&["--tree", &tree_arg(), "e2e3", "zz"]);
    assert_eq!(code, 2);
    assert!(err.contains("not a move"), "{err}");
    let (code, _, err) = browse(&["--tree", "/nonexistent/x.tree"]);
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent/x.tree"), "{err}");
}

/// The same answers from the tree with a size table, the tree without one
/// (sizes walked) and the proof store, at every node of the proof.
#[test]
fn tree_bare_tree_and_store_agree_everywhere() {
    let f = fixture();
    let a = TreeSource::open(&f.tree, Rules::International, None).unwrap();
    let b = TreeSource::open(&f.bare, Rules::International, None).unwrap();
    let c = RecordSource::new("mem".into(), f.records.clone(), Rules::International);
    // A copy: the store file is locked while open, and other tests run
    // `browse --db` on the original at the same time.
    let db = f.dir.join("proof-copy.redb");
    std::fs::copy(&f.db, &db).unwrap();
    let d = RecordSource::open_store(&db, Rules::International).unwrap();
    let mut todo = vec![vec!["e2e3".to_string(), "d7d5".to_string()]];
    let mut nodes = 0;
    while let Some(line) = todo.pop() {
        nodes += 1;
        let va = view::view(&a, Rules::International, &line).unwrap();
        for s in [&b as &dyn ProofSource, &c, &d] {
            let vs = view::view(s, Rules::International, &line).unwrap();
            assert_eq!(va.api(), vs.api(), "{line:?} {}", s.name());
            assert_eq!(va.status, vs.status, "{line:?}");
        }
        assert!(
            !matches!(va.status, ProofStatus::Off | ProofStatus::Before),
            "{line:?}"
        );
        for m in &va.moves {
            let mut l = line.clone();
            l.push(m.uci.clone());
            todo.push(l);
        }
    }
    assert!(nodes >= 33, "{nodes}");
}

/// Tree and records agree on proofs with transpositions (1.d3 and 1.e4,
/// Black wins), following every path.
#[test]
fn tree_and_records_agree_with_transpositions() {
    let dir = util::temp_dir("web-transpositions");
    for line in ["d2d3", "e2e4"] {
        let (path, size) = util::write_proof(&dir, line, line, Color::Black, true);
        let bytes = std::fs::read(&path).unwrap();
        let recs =
            util::prove(line, Rules::International, Color::Black, util::MAX_NODES).records_map();
        let t = TreeSource::open(&path, Rules::International, None).unwrap();
        assert_eq!(t.winner(), Some(Color::Black));
        let r = RecordSource::new("mem".into(), recs, Rules::International);
        let mut todo = vec![vec![line.to_string()]];
        let mut paths = 0;
        while let Some(l) = todo.pop() {
            paths += 1;
            let vt = view::view(&t, Rules::International, &l).unwrap();
            let vr = view::view(&r, Rules::International, &l).unwrap();
            assert_eq!(vt.api(), vr.api(), "{l:?}");
            assert_eq!(vt.status, vr.status, "{l:?}");
            for m in &vt.moves {
                let mut next = l.clone();
                next.push(m.uci.clone());
                todo.push(next);
            }
        }
        // Paths outnumber positions where the proof transposes.
        let slots = u32::from_le_bytes(bytes[0..4].try_into().unwrap()) & 0x3fff_ffff;
        assert!(
            paths as u64 >= size,
            "{line}: {paths} paths, {size} positions"
        );
        println!("{line}: {size} positions, {slots} slots, {paths} paths");
    }
}

/// A tree rooted at the start position (an empty prolog, as Watkins'
/// 1.e3 files are): the root is in the proof, the winner read from it.
#[test]
fn tree_rooted_at_the_start_position() {
    use antiproof::wintree::{MoveCode, WinTree, WriteOptions, write_tree};
    let proof = util::prove(
        "e2e3 d7d5",
        Rules::International,
        Color::White,
        util::MAX_NODES,
    );
    let (mut dag, root) = (proof.dag, 0);
    // Start -> e3 -> d5 -> the proof (only d5 under e3: a presentation
    // test, not a proof).
    let start = dag.add_node();
    let mid = dag.add_node();
    dag.add_edge(start, MoveCode::from_uci("e2e3").unwrap(), mid);
    dag.add_edge(mid, MoveCode::from_uci("d7d5").unwrap(), root);
    let bytes = write_tree(&dag, start, &[], &WriteOptions::default())
        .unwrap()
        .bytes;
    let tree = WinTree::from_vec(bytes).unwrap();
    let t = TreeSource::new("start".into(), tree, Rules::International, None).unwrap();
    assert_eq!(t.winner(), Some(Color::White));
    let v = view::view(&t, Rules::International, &[] as &[&str]).unwrap();
    assert_eq!(v.status, ProofStatus::WinnerToMove(Color::White));
    assert_eq!(
        v.json(),
        r#"{"game_over":false,"moves":[{"uci":"e2e3","san":"e3","nodes":34}]}"#
    );
    let v = view::view(&t, Rules::International, &["e3", "d5"]).unwrap();
    assert_eq!(v.moves[0].san, "Qg4");
    let v = view::view(&t, Rules::International, &["e4"]).unwrap();
    assert_eq!(v.status, ProofStatus::Off);
}

#[test]
fn browse_reads_a_store_and_several_trees() {
    let f = fixture();
    let db = f.db.display().to_string();
    let (code, out, err) = browse(&["--db", &db, "e2e3", "d7d5"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("* Qg4  d1g4"), "{out}");
    // From the start, the store offers the moves that lead into proofs.
    let (_, json, _) = browse(&["--db", &db, "--json", "e2e3"]);
    assert_eq!(
        json.trim(),
        r#"{"game_over":false,"moves":[{"uci":"d7d5","san":"d5","nodes":33}]}"#
    );
    // Two trees: 1.e3 d5 (White) and 1.e3 d6 (White), served together.
    let (d6, _) = util::write_proof(&f.dir, "e3d6", "e2e3 d7d6", Color::White, true);
    let (_, json, _) = browse(&[
        "--tree",
        &tree_arg(),
        "--tree",
        &d6.display().to_string(),
        "--json",
        "e2e3",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let ucis: Vec<&str> = v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["uci"].as_str().unwrap())
        .collect();
    assert_eq!(ucis.len(), 2, "{json}");
    assert!(ucis.contains(&"d7d5") && ucis.contains(&"d7d6"), "{json}");
}

#[test]
fn table_lists_certified_proofs_from_sidecars() {
    let f = fixture();
    let proofs = f.dir.join("proofs");
    std::fs::create_dir_all(&proofs).unwrap();
    std::fs::copy(&f.tree, proofs.join("e3d5.tree")).unwrap();
    // The shape `antiproof verify --json` writes serves as a sidecar too.
    std::fs::copy(&f.tree, proofs.join("again.tree")).unwrap();
    std::fs::write(
        proofs.join("again.json"),
        r#"{"verdict": "certified", "root_line": "1. e3 d5", "rules": "international", "winner": "white", "positions": 33, "leaves": {"no_pieces": 3}}"#,
    )
    .unwrap();
    std::fs::write(
        proofs.join("e3d5.json"),
        r#"{"line": "e3 d5", "rules": "international", "winner": "white", "positions": 33, "verified": true}"#,
    )
    .unwrap();
    // A tree without a sidecar: the line comes from its prolog.
    std::fs::copy(&f.bare, proofs.join("bare.tree")).unwrap();
    let proofs_s = proofs.display().to_string();
    let (code, out, _) = util::antiproof(&["openings", "--json", "--proofs", &proofs_s]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 20);
    let e3 = rows.iter().find(|r| r["move"] == "e3").unwrap();
    assert_eq!(e3["published"], "won");
    assert!(e3["source"].as_str().unwrap().contains("Watkins"));
    let certs = e3["certified"].as_array().unwrap();
    assert_eq!(certs.len(), 3, "{e3}");
    let verified: Vec<_> = certs.iter().filter(|c| c["verified"] == true).collect();
    assert_eq!(verified.len(), 2, "{e3}");
    let c = verified[0];
    assert_eq!(c["line"], "e3 d5");
    assert_eq!(verified[1]["line"], "e3 d5");
    assert_eq!(c["positions"], 33);
    assert_eq!(c["winner"], "white");
    let bare = certs.iter().find(|c| c["verified"].is_null()).unwrap();
    assert_eq!(bare["line"], "e3 d5");
    for r in rows.iter().filter(|r| r["move"] != "e3") {
        assert!(r["certified"].as_array().unwrap().is_empty(), "{r}");
    }
    let (_, text, _) = util::antiproof(&["openings", "--proofs", &proofs_s]);
    // `table`, the command's former name, is a hidden alias.
    let (code, alias, _) = util::antiproof(&["table", "--proofs", &proofs_s]);
    assert_eq!(code, 0);
    assert_eq!(alias, text);
    let (_, help, _) = util::antiproof(&["--help"]);
    assert!(help.contains("openings"), "{help}");
    assert!(
        !help.lines().any(|l| l.trim_start().starts_with("table ")),
        "{help}"
    );
    let (_, long, _) = util::antiproof(&["openings", "--long", "--proofs", &proofs_s]);
    assert!(
        long.contains("e3 d5 (international, white wins, 33 positions, verified)"),
        "{long}"
    );
    assert!(Path::new(&proofs).exists());

    // `--verify` runs the checker: a proof missing one of the loser's
    // replies is not certified, whatever its sidecar says.
    use antiproof::wintree::{MoveCode, WriteOptions, write_tree};
    // (1.e3 d5 has no choice for the loser anywhere: use 1.e4, Black wins.)
    let proof = util::prove("e2e4", Rules::International, Color::Black, util::MAX_NODES);
    let (mut dag, root) = (proof.dag, 0);
    let good = write_tree(
        &dag,
        root,
        &[MoveCode::from_uci("e2e4").unwrap()],
        &WriteOptions::default(),
    )
    .unwrap()
    .bytes;
    std::fs::write(proofs.join("e4.tree"), good).unwrap();
    let loser = dag
        .nodes
        .iter()
        .position(|n| n.children.len() >= 2)
        .expect("a loser node with choices");
    dag.nodes[loser].children.pop();
    let prolog = [
        MoveCode::from_uci("e2e3").unwrap(),
        MoveCode::from_uci("d7d5").unwrap(),
    ];
    let bytes = write_tree(&dag, root, &prolog, &WriteOptions::default())
        .unwrap()
        .bytes;
    std::fs::write(proofs.join("broken.tree"), bytes).unwrap();
    std::fs::write(
        proofs.join("broken.json"),
        r#"{"line": "e4", "rules": "international", "winner": "black", "verified": true}"#,
    )
    .unwrap();
    let (code, out, _) = util::antiproof(&[
        "openings",
        "--json",
        "--verify",
        "--proofs",
        &proofs.display().to_string(),
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let e3 = v
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["move"] == "e3")
        .unwrap();
    for c in e3["certified"].as_array().unwrap() {
        assert_eq!(c["checked_now"], true, "{c}");
        let broken = c["file"].as_str().unwrap().ends_with("broken.tree");
        assert_eq!(c["verified"], !broken, "{c}");
    }
}

#[test]
fn a_store_is_read_by_others_while_one_process_writes_it() {
    let f = fixture();
    let path = f.dir.join("shared.redb");
    let _ = std::fs::remove_file(&path);
    let db = path.display().to_string();
    // This process writes (as a prove run would); other processes read.
    let writer = Store::open(&path).unwrap();
    let (code, json, err) = browse(&["--db", &db, "--json", "e2e3"]);
    assert_eq!(code, 0, "{err}");
    assert!(!json.contains("d7d5"), "{json}");
    let items: Vec<(Key, Record)> = f.records.iter().map(|(k, r)| (*k, *r)).collect();
    writer.put_batch(Rules::International, &items).unwrap();
    // A reader sees the writer's last commit.
    let (code, json, err) = browse(&["--db", &db, "--json", "e2e3"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        json.contains(r#""uci":"d7d5","san":"d5","nodes":33"#),
        "{json}"
    );
    let (code, _, err) = util::antiproof(&["verify", "--db", &db, "e2e3", "d7d5"]);
    assert_eq!(code, 0, "{err}");
    // A second writer is refused with a clear error, and nothing is lost.
    let (code, _, err) = util::antiproof(&["prove", "--db", &db, "e2e3", "d7d6"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("being written by another process"), "{err}");
    assert_eq!(
        writer.len(Rules::International).unwrap(),
        items.len() as u64
    );
    drop(writer);
    // Read-only opens never create or change a file.
    let missing = f.dir.join("missing.redb");
    let (code, _, err) = browse(&["--db", &missing.display().to_string(), "e2e3"]);
    assert_eq!(code, 2, "{err}");
    assert!(!missing.exists());
}

/// `openings --verify` takes nothing from a sidecar on trust: the line
/// comes from the file's prolog, and a rule set the sidecar lists under
/// `holds_under` counts only when the checker certifies the file under it;
/// a sidecar claiming otherwise is named. (Found by trying: `proofs/e4.tree`
/// copied to `h3.tree` with `"line": "h3"` was shown as 1.h3 verified under
/// all six rule sets, and `Nc3.tree` with `fics` added to `holds_under` as
/// holding under FICS, which the checker rejects.)
#[test]
fn openings_verify_reports_what_the_file_says_not_its_sidecar() {
    let dir = util::temp_dir("openings-sidecar-lies");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let proofs = Path::new(env!("CARGO_MANIFEST_DIR")).join("proofs");
    let sidecar = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(proofs.join(name)).unwrap()).unwrap()
    };
    std::fs::copy(proofs.join("e4.tree"), dir.join("h3.tree")).unwrap();
    let mut h3 = sidecar("e4.json");
    h3["line"] = "h3".into();
    std::fs::write(dir.join("h3.json"), h3.to_string()).unwrap();
    std::fs::copy(proofs.join("Nc3.tree"), dir.join("Nc3.tree")).unwrap();
    let mut nc3 = sidecar("Nc3.json");
    nc3["holds_under"] = serde_json::json!(["international", "international+fifty", "fics"]);
    std::fs::write(dir.join("Nc3.json"), nc3.to_string()).unwrap();
    let d = dir.display().to_string();

    let (code, out, err) = util::antiproof(&["openings", "--json", "--verify", "--proofs", &d]);
    assert_eq!(code, 0, "{err}");
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    let row = |san: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["move"] == san)
            .unwrap()
            .clone()
    };
    // The copy of e4.tree proves 1.e4, whatever its sidecar says.
    assert!(
        row("h3")["certified"].as_array().unwrap().is_empty(),
        "{}",
        row("h3")
    );
    assert_eq!(
        row("h3")["proven_here"]["proven_under"],
        serde_json::json!([])
    );
    let e4 = row("e4");
    let c = &e4["certified"][0];
    assert_eq!(c["line"], "e4", "{c}");
    assert_eq!(c["verified"], true, "{c}");
    let why = c["sidecar_disagrees"].as_array().unwrap();
    assert_eq!(why.len(), 1, "{c}");
    assert!(why[0].as_str().unwrap().contains("its line is h3"), "{c}");
    assert_eq!(e4["proven_here"]["winner"], "black");
    // Nc3 holds under the two rule sets it was certified under, not FICS.
    let nc3 = row("Nc3");
    let c = &nc3["certified"][0];
    assert_eq!(c["verified"], true, "{c}");
    assert_eq!(
        c["holds_under"],
        serde_json::json!(["international", "international+fifty"]),
        "{c}"
    );
    let why = c["sidecar_disagrees"].as_array().unwrap();
    assert_eq!(why.len(), 1, "{c}");
    assert!(why[0].as_str().unwrap().contains("fics"), "{c}");
    let under = nc3["proven_here"]["proven_under"].as_array().unwrap();
    assert!(!under.iter().any(|s| s == "fics"), "{nc3}");
    assert!(under.iter().any(|s| s == "international"), "{nc3}");

    // The text names the disagreeing sidecars.
    let (code, text, _) = util::antiproof(&["openings", "--verify", "--proofs", &d]);
    assert_eq!(code, 0);
    let line = |san: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{san} ")))
            .unwrap()
            .to_string()
    };
    assert!(line("h3").ends_with(" -"), "{text}");
    // The table gives counts (international and lichess: 2 of the six);
    // --long names the disagreeing certificate in its move's block.
    assert!(line("Nc3").contains("2 of 6"), "{text}");
    let (_, long, _) = util::antiproof(&["openings", "--verify", "--long", "--proofs", &d]);
    assert!(
        util::openings_block(&long, "1.e4:").contains("DISAGREES"),
        "{long}"
    );
    assert!(!line("Nc3").contains("fics"), "{text}");
    assert!(
        text.contains("h3.tree: the sidecar disagrees with the file: its line is h3"),
        "{text}"
    );
    assert!(
        text.contains("Nc3.tree: the sidecar disagrees with the file: it lists fics"),
        "{text}"
    );
    // Without --verify the sidecars are shown as they are (not checked).
    let (_, text, _) = util::antiproof(&["openings", "--proofs", &d]);
    assert!(!text.contains("disagrees"), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}
