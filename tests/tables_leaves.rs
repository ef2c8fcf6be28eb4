//! Endgame tables as proof leaves for the checker (issue 6): a proof cut at
//! positions of 4 men is not certified without tables, certified with
//! them (the tables used are certified in the same run), and rejected when
//! a table is wrong or of the wrong rule set.

use crate::util::{self, Proof, Rng};
use antiproof::check::{
    LeafTables, ReasonKind, Rules, TreeOptions, Verdict, check_store, check_store_with, check_tree,
};
use antiproof::rules::{Position, Role};
use antiproof::tables::{Layout, Material, Table, Tables, Value};
use antiproof::wintree::{ProofDag, WinTree, WriteOptions, write_tree};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The KKvKK table (and the KKvK, KvKK... below it) built into `dir`.
fn build_kkvkk(dir: &Path) {
    let t = Tables::open_building(dir, Rules::International);
    t.table(&"KKvKK".parse::<Material>().unwrap()).unwrap();
}

/// A White win from a random KKvKK position with White to move whose
/// proof is cut at White's first move: the position after it (4 men, or 3
/// after a capture; not a finished game) is the only leaf.
fn cut_proof() -> (Position, Proof, ProofDag) {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    for _ in 0..10_000 {
        let pieces = rng.pieces(4, &[Role::King]);
        let Some(p) = util::prove_set_up(pieces, 2_000) else {
            continue;
        };
        let pos = p.root();
        let child = p.dag.nodes[0].children[0].1;
        if p.dag.nodes[child].children.is_empty() || p.positions[child].men() < 3 {
            continue;
        }
        let mut dag = p.dag.clone();
        dag.nodes[child].children.clear();
        return (pos, p, dag);
    }
    panic!("no KKvKK position found");
}

fn opts(pos: &Position, tables: Option<Arc<LeafTables>>, rules: Rules) -> TreeOptions {
    TreeOptions {
        rule_set: rules.into(),
        winner: Some(shakmaty::Color::White),
        start: Some(util::shak(pos)),
        threads: Some(1),
        tables,
        ..TreeOptions::default()
    }
}

fn tree_bytes(dag: &ProofDag) -> Vec<u8> {
    write_tree(dag, 0, &[], &WriteOptions::default())
        .unwrap()
        .bytes
}

/// Rewrites a table file with one used entry changed (and a correct
/// checksum): only certification can tell.
fn corrupt(path: &Path) {
    let t = Table::open(path, true).unwrap();
    assert_eq!(t.header.overflow, 0);
    let layout = Layout::new(&t.header.material);
    let mut data = t.bytes()[..t.header.entries as usize].to_vec();
    let i = (0..layout.size())
        .find(|&i| layout.decode(i).1 && matches!(t.value(i), Value::Win(n) if n > 2))
        .unwrap();
    data[i as usize] = Value::Loss(1).to_byte().unwrap();
    let bad = Table::from_data(layout, t.header.rule_set, data, Vec::new(), t.header.stats);
    drop(t);
    std::fs::remove_file(path).unwrap();
    bad.write(path).unwrap();
    assert!(Table::open(path, true).is_ok(), "the checksum is fixed");
}

#[test]
fn cut_proofs_are_certified_with_certified_tables_only() {
    let dir = scratch_built();
    let (pos, p, dag) = cut_proof();
    let bytes = tree_bytes(&dag);
    let tree = WinTree::from_bytes(&bytes).unwrap();

    // Without tables: not certified.
    let r = check_tree(&tree, &opts(&pos, None, Rules::International));
    assert_eq!(r.verdict, Verdict::NotCertified { table_leaves: 1 });
    assert!(r.tables.is_none());

    // With tables: certified, naming the tables used and certified.
    let t = Arc::new(LeafTables::open(&dir, Rules::International).records_in(None));
    let r = check_tree(&tree, &opts(&pos, Some(t.clone()), Rules::International));
    assert_eq!(r.verdict, Verdict::Certified, "{r}");
    assert_eq!(r.leaves.tables, 1);
    let used = r.tables.as_ref().unwrap();
    assert!(!used.used.is_empty());
    assert!(used.certified.contains(&"KKvK".to_string()), "{used:?}");
    assert!(used.positions > 0);
    let json = r.to_json();
    assert_eq!(json["verdict"], "certified");
    assert_eq!(json["tables"]["leaves"], 1);
    assert!(r.to_string().contains("leaves scored by tables"), "{r}");

    // The store: only the root's record; the winner's positions below it
    // (4 men or fewer, no record) are table leaves.
    let root_key = p.root().pack().0;
    let mut map = p.records_map();
    map.retain(|k, _| *k == root_key);
    let root = util::shak(&pos);
    let r = check_store(
        &map,
        Rules::International,
        &root,
        "",
        Some(shakmaty::Color::White),
    );
    assert!(
        matches!(r.verdict, Verdict::NotCertified { table_leaves } if table_leaves >= 1),
        "{r}"
    );
    let r = check_store_with(
        &map,
        Rules::International,
        &root,
        "",
        Some(shakmaty::Color::White),
        Some(&t),
    );
    assert_eq!(r.verdict, Verdict::Certified, "{r}");
    assert!(r.leaves.tables >= 1);

    // A directory without the tables: not certified, not rejected.
    let empty = util::temp_dir("empty");
    let e = Arc::new(LeafTables::open(&empty, Rules::International).records_in(None));
    let r = check_tree(&tree, &opts(&pos, Some(e), Rules::International));
    assert_eq!(r.verdict, Verdict::NotCertified { table_leaves: 1 });
    // The report names the missing table and how to build it.
    let (dir, missing) = r.tables_missing.clone().expect("missing tables named");
    assert_eq!(dir, empty.display().to_string());
    assert_eq!(missing, ["KKvKK"]);
    let text = r.to_string();
    assert!(
        text.contains("tables KKvKK are not in")
            && text.contains("antiproof tables build --dir")
            && text.contains("--rules international KKvKK"),
        "{text}"
    );
    assert_eq!(r.to_json()["tables_missing"]["materials"][0], "KKvKK");
}

#[test]
fn wrong_tables_are_rejected() {
    let (pos, _p, dag) = cut_proof();
    let bytes = tree_bytes(&dag);
    let tree = WinTree::from_bytes(&bytes).unwrap();

    // An entry changed, checksum fixed: the certifier finds it (or the
    // leaf itself reads as not won).
    let (dir, _) = corrupt_copy("corrupt");
    let t = Arc::new(LeafTables::open(&dir, Rules::International).records_in(None));
    let r = check_tree(&tree, &opts(&pos, Some(t), Rules::International));
    match &r.verdict {
        Verdict::Rejected(j) => assert!(
            matches!(
                j.reason.kind(),
                ReasonKind::TableNotCertified | ReasonKind::TableLeafNotWon
            ),
            "{r}"
        ),
        v => panic!("{v:?}"),
    }

    // Tables of another rule set under this rule set's names.
    let fics = util::temp_dir("wrong-rules");
    for e in std::fs::read_dir(scratch_built()).unwrap() {
        let e = e.unwrap().path();
        let name = e.file_name().unwrap().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".international.apt") {
            std::fs::copy(&e, fics.join(format!("{stem}.fics.apt"))).unwrap();
        }
    }
    let t = Arc::new(LeafTables::open(&fics, Rules::Fics).records_in(None));
    let r = check_tree(&tree, &opts(&pos, Some(t), Rules::Fics));
    match &r.verdict {
        Verdict::Rejected(j) => {
            assert_eq!(j.reason.kind(), ReasonKind::TableNotCertified, "{r}");
            assert!(j.reason.to_string().contains("international"), "{r}");
        }
        v => panic!("{v:?}"),
    }
}

/// A copy of the built tables (without certification records).
fn copy_built(name: &str) -> PathBuf {
    let dir = util::temp_dir(name);
    for e in std::fs::read_dir(scratch_built()).unwrap() {
        let e = e.unwrap().path();
        if e.extension().is_some_and(|x| x == "apt") {
            std::fs::copy(&e, dir.join(e.file_name().unwrap())).unwrap();
        }
    }
    dir
}

#[test]
fn certification_records_spare_a_second_certification_of_the_same_bytes() {
    let (pos, _p, dag) = cut_proof();
    let bytes = tree_bytes(&dag);
    let tree = WinTree::from_bytes(&bytes).unwrap();
    let dir = copy_built("records");
    let state = util::temp_dir("records-state");
    let check = |t: LeafTables| {
        let t = t.records_in(Some(state.clone()));
        let r = check_tree(&tree, &opts(&pos, Some(Arc::new(t)), Rules::International));
        (r.verdict.clone(), r.tables.clone(), r.to_string())
    };

    // First run: every table certified now, and recorded.
    let (v, used, _) = check(LeafTables::open(&dir, Rules::International));
    assert_eq!(v, Verdict::Certified);
    let used = used.unwrap();
    assert!(used.recorded.is_empty() && used.positions > 0, "{used:?}");
    assert!(state.join("certified.tsv").exists());
    assert!(
        !dir.join("certified.tsv").exists(),
        "records never go to the table directory"
    );

    // Second run: the same file bytes, taken from the records.
    let (v, again, text) = check(LeafTables::open(&dir, Rules::International));
    assert_eq!(v, Verdict::Certified);
    let again = again.unwrap();
    assert_eq!(again.recorded, again.certified, "{again:?}");
    assert_eq!(again.positions, 0);
    assert!(text.contains("certified now: none"), "{text}");
    assert!(text.contains("by certification record"), "{text}");

    // --recertify: certified now again.
    let (v, fresh, _) = check(LeafTables::open(&dir, Rules::International).recertify(true));
    assert_eq!(v, Verdict::Certified);
    let fresh = fresh.unwrap();
    assert!(fresh.recorded.is_empty(), "{fresh:?}");
    assert_eq!(fresh.positions, used.positions);

    // A table changed after it was recorded (checksum fixed): its bytes no
    // longer match the record, so it is certified again, and rejected.
    let path = antiproof::tables::format::table_path(
        &dir,
        &"KKvKK".parse::<Material>().unwrap(),
        Rules::International,
    );
    corrupt(&path);
    let (v, _, text) = check(LeafTables::open(&dir, Rules::International));
    match &v {
        Verdict::Rejected(j) => assert!(
            matches!(
                j.reason.kind(),
                ReasonKind::TableNotCertified | ReasonKind::TableLeafNotWon
            ),
            "{text}"
        ),
        v => panic!("{v:?}"),
    }
}

#[test]
fn a_record_file_in_the_table_directory_is_never_trusted() {
    // A table with one wrong entry (checksums recomputed), handed over with
    // a record file that claims its exact bytes were certified.
    let (pos, _p, dag) = cut_proof();
    let bytes = tree_bytes(&dag);
    let tree = WinTree::from_bytes(&bytes).unwrap();
    let (dir, path) = corrupt_copy("forged");
    let t = Table::open(&path, true).unwrap();
    let digest = antiproof::tablefile::record::digest(&t).unwrap();
    drop(t);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    let line = format!(
        "international\tKKvKK\t{hex}\t1\t1\tantiproof {}\n",
        env!("CARGO_PKG_VERSION")
    );
    std::fs::write(dir.join("certified.tsv"), &line).unwrap();
    // Even pointed at the table directory as if it were a state directory
    // the forged line would count; the checker never looks there.
    let state = util::temp_dir("forged-state");
    let t = LeafTables::open(&dir, Rules::International).records_in(Some(state));
    let r = check_tree(&tree, &opts(&pos, Some(Arc::new(t)), Rules::International));
    match &r.verdict {
        Verdict::Rejected(j) => assert!(
            matches!(
                j.reason.kind(),
                ReasonKind::TableNotCertified | ReasonKind::TableLeafNotWon
            ),
            "{r}"
        ),
        v => panic!("a forged record was trusted: {v:?}\n{r}"),
    }
}

/// A copy of the built tables whose KKvKK table has one wrong entry
/// (checksums fixed): the directory and that table's path.
fn corrupt_copy(name: &str) -> (PathBuf, PathBuf) {
    let dir = copy_built(name);
    let path = antiproof::tables::format::table_path(
        &dir,
        &"KKvKK".parse::<Material>().unwrap(),
        Rules::International,
    );
    corrupt(&path);
    (dir, path)
}

/// A directory with good International KKvKK tables (built once).
fn scratch_built() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let d = util::temp_dir("built");
        build_kkvkk(&d);
        let t = Tables::open_building(&d, Rules::International);
        t.table(&"KKKvK".parse::<Material>().unwrap()).unwrap();
        d
    })
    .clone()
}

/// Runs the binary: exit code, and standard output then standard error.
fn run(args: &[&str]) -> (i32, String) {
    let (code, out, err) = util::antiproof(args);
    (code, out + &err)
}

/// `export --expand-tables --tables DIR -o OUT` with `rest` appended.
fn export_expanded(dir: &str, out: &Path, rest: &[&str]) -> (i32, String) {
    run(&[
        &[
            "export",
            "--expand-tables",
            "--tables",
            dir,
            "-o",
            out.to_str().unwrap(),
        ][..],
        rest,
    ]
    .concat())
}

/// `prove --tables` from a 5-man position whose only move leads to a
/// 4-man table win; `verify --db` certifies it with `--tables` only;
/// `export --expand-tables` writes a file certified without tables.
#[test]
fn prove_verify_export_with_tables() {
    let dir = scratch_built();
    let dir = dir.to_str().unwrap();
    let work = util::temp_dir("cli");
    let db = work.join("p.redb");
    let db = db.to_str().unwrap();
    // Black must play Kxb3, reaching a KKvKK table win for White.
    let fen = "8/8/8/8/2k5/1K6/8/KK4k1 b - - 0 1";
    let (rc, out) = run(&[
        "prove", "--db", db, "--fen", fen, "--winner", "white", "--tables", dir, "--memory", "16M",
    ]);
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains("proven: white wins"), "{out}");
    // The root's record says its proof rests on tables.
    {
        let store = antiproof::store::Store::open_existing(Path::new(db)).unwrap();
        let key = Position::from_fen(fen).unwrap().pack().0;
        let rec = store
            .get(antiproof::store::Rules::International, &key)
            .unwrap()
            .unwrap();
        assert_eq!(rec.flags & antiproof::store::FLAG_TABLES, 1);
    }
    let common = ["--db", db, "--fen", fen, "--winner", "white"];
    let (rc, out) = run(&[&["verify"][..], &common].concat());
    assert_eq!(rc, 1, "{out}");
    assert!(out.contains("NOT CERTIFIED"), "{out}");
    // stdout alone: stderr may say where a certification record went.
    let (rc, out, err) =
        util::antiproof(&[&["verify", "--json", "--tables", dir][..], &common].concat());
    assert_eq!(rc, 0, "{out}{err}");
    let j: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(j["verdict"], "certified");
    assert_eq!(j["tables"]["used"][0], "KKvKK");
    assert_eq!(j["tables"]["leaves"], 1);

    let plain = work.join("plain.tree");
    let full = work.join("full.tree");
    let (rc, out) = run(&[&["export", "-o", plain.to_str().unwrap()][..], &common].concat());
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains("1 leaves rest on endgame tables"), "{out}");
    let (rc, out) = export_expanded(dir, &full, &common);
    assert_eq!(rc, 0, "{out}");
    let tree = ["--fen", fen, "--winner", "white", "--tree"];
    // Without tables its table leaf is open (exit 4).
    let (rc, out) = run(&[&["verify"][..], &tree, &[plain.to_str().unwrap()]].concat());
    assert_eq!(rc, 4, "{out}");
    let (rc, out) = run(&[
        &["verify"][..],
        &tree,
        &[plain.to_str().unwrap(), "--tables", dir],
    ]
    .concat());
    assert_eq!(rc, 0, "{out}");
    let (rc, out) = run(&[&["verify"][..], &tree, &[full.to_str().unwrap()]].concat());
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains("CERTIFIED"), "{out}");

    // White must play Kxc4, reaching KKKvK (wins up to 80 plies): five
    // table leaves; expanded, a file of thousands of positions certified
    // without tables.
    let fen = "8/8/8/8/2k5/1K6/8/KK4k1 w - - 0 1";
    let db = work.join("q.redb");
    let db = db.to_str().unwrap();
    let (rc, out) = run(&[
        "prove", "--db", db, "--fen", fen, "--winner", "white", "--tables", dir, "--memory", "16M",
    ]);
    assert_eq!(rc, 0, "{out}");
    let common = ["--db", db, "--fen", fen, "--winner", "white"];
    let (rc, out, err) =
        util::antiproof(&[&["verify", "--json", "--tables", dir][..], &common].concat());
    assert_eq!(rc, 0, "{out}{err}");
    let j: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(j["tables"]["used"][0], "KKKvK", "{out}");
    let full = work.join("q.tree");
    let (rc, out) = export_expanded(dir, &full, &common);
    assert_eq!(rc, 0, "{out}");
    let (rc, out) = run(&[
        "verify",
        "--json",
        "--fen",
        fen,
        "--winner",
        "white",
        "--tree",
        full.to_str().unwrap(),
    ]);
    assert_eq!(rc, 0, "{out}");
    let j: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(j["verdict"], "certified");
    assert!(j["positions"].as_u64().unwrap() > 1000, "{out}");
    assert_eq!(j["leaves"]["endgame_tables"], 0);
}

/// Under the fifty-move rule a table leaf is scored only by tables built
/// for the rule: the directory holds none (and tables opened without the
/// rule score nothing under it), so the cut proof is not certified, while
/// the same tables certify it without the rule.
#[test]
fn table_leaves_under_the_fifty_move_rule_need_tables_for_the_rule() {
    let dir = scratch_built();
    let (pos, _, dag) = cut_proof();
    let bytes = tree_bytes(&dag);
    let tree = WinTree::from_bytes(&bytes).unwrap();
    let fifty = |tables: LeafTables| TreeOptions {
        rule_set: antiproof::vocab::RuleSet::LICHESS,
        ..opts(
            &pos,
            Some(Arc::new(tables.records_in(None))),
            Rules::International,
        )
    };
    let lichess = antiproof::vocab::RuleSet::LICHESS;
    for t in [
        LeafTables::open(&dir, lichess),
        LeafTables::open(&dir, Rules::International),
    ] {
        let r = check_tree(&tree, &fifty(t));
        assert_eq!(r.verdict, Verdict::NotCertified { table_leaves: 1 }, "{r}");
        assert_eq!(r.leaves.tables, 1);
        assert!(r.tables.is_none());
        assert_eq!(r.rule_set, lichess);
        assert!(
            r.to_string().contains("rules:       international+fifty"),
            "{r}"
        );
    }
    let t = LeafTables::open(&dir, Rules::International).records_in(None);
    let r = check_tree(&tree, &opts(&pos, Some(Arc::new(t)), Rules::International));
    assert_eq!(r.verdict, Verdict::Certified, "{r}");
}

/// `export --expand-tables` of a sound `prove --tables` proof whose table
/// lines lead back to the stored line: each table line is written on its
/// own, linked to the stored proof only where that closes no cycle, and
/// the file is certified without tables. (Found by trying: from
/// `8/8/8/2K5/7k/8/2N5/7B w - - 0 21` the store holds 1.Be4, `verify --db
/// --tables` certifies it, and the export said "the stored proof is broken
/// at 21. Be4 Kg5 22. Bh1 Kh4: the stored proof repeats a position".)
#[test]
fn expanded_table_lines_do_not_cycle_through_the_stored_proof() {
    let dir = util::temp_dir("knb");
    Tables::open_building(&dir, Rules::International)
        .table(&"KBNvK".parse::<Material>().unwrap())
        .unwrap();
    let dir = dir.to_str().unwrap();
    let work = util::temp_dir("knb-cli");
    let db = work.join("p.redb");
    let db = db.to_str().unwrap();
    let fen = "8/8/8/2K5/7k/8/2N5/7B w - - 0 21";
    let (rc, out) = run(&[
        "prove", "--db", db, "--fen", fen, "--tables", dir, "--memory", "16M",
    ]);
    assert_eq!(rc, 0, "{out}");
    let common = ["--db", db, "--fen", fen, "--winner", "white"];
    let (rc, out) = run(&[&["verify", "--tables", dir][..], &common].concat());
    assert_eq!(rc, 0, "{out}");
    let full = work.join("knb.tree");
    let (rc, out) = export_expanded(dir, &full, &common);
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains("expanded from the endgame tables"), "{out}");
    let (rc, out) = run(&[
        "verify",
        "--json",
        "--fen",
        fen,
        "--tree",
        full.to_str().unwrap(),
    ]);
    assert_eq!(rc, 0, "{out}");
    let j: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(j["verdict"], "certified", "{out}");
    assert_eq!(j["winner"], "white", "{out}");
    assert_eq!(j["leaves"]["endgame_tables"], 0);
    // The winner's table moves go into positions the file already holds
    // where the tables allow: 24,844 positions, against 36,432 when each
    // table position took the tables' quickest line on its own.
    assert_eq!(j["positions"], 24_844, "{out}");
    // From after 21.Be4 Kg5, the position whose table line led back: the
    // root is a table position itself, and the tables' line from it comes
    // back to the stored 21.Be4 position, which is written afresh.
    let part = work.join("knb-kg5.tree");
    let (rc, out) = export_expanded(dir, &part, &[&common[..], &["Be4", "Kg5"]].concat());
    assert_eq!(rc, 0, "{out}");
    let (rc, out) = run(&[
        "verify",
        "--fen",
        fen,
        "--winner",
        "white",
        "--tree",
        part.to_str().unwrap(),
    ]);
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains("CERTIFIED"), "{out}");
}
