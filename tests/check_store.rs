//! The checker on the proof store, the packing it re-implements, and the
//! `verify` / `export` commands end to end.

use crate::data;
use crate::util::{self, Rng, ladder, temp_dir};
use antiproof::check::{
    Reason, ReasonKind, Rules, TreeOptions, Verdict, check_store, check_tree, game,
};
use antiproof::rules::{Color, Position};
use antiproof::store::{self, Store};
use antiproof::wintree::{MoveCode, WinTree};
use shakmaty::Position as _;
use std::path::PathBuf;

/// The checker's own packing agrees with `rules::Position::pack` on the
/// cross-check positions and on random playouts (en passant included).
#[test]
fn packing_agrees_with_rules() {
    let mut positions: Vec<Position> = data::crosscheck_positions()
        .into_iter()
        .map(|(_, fen)| Position::from_fen(fen).unwrap())
        .collect();
    assert!(positions.len() > 30);
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut checked = 0;
    let mut ep = 0;
    for start in positions.clone() {
        for _ in 0..20 {
            let mut p = start;
            for _ in 0..60 {
                let legal = p.legal_moves();
                if legal.is_empty() {
                    break;
                }
                p = p.play(legal[rng.below(legal.len())]);
                positions.push(p);
            }
        }
    }
    for p in &positions {
        let s = util::shak(p);
        assert_eq!(game::pack(&s), p.pack().0, "{}", p.to_fen());
        if p.ep_square().is_some() {
            ep += 1;
        }
        checked += 1;
    }
    assert!(
        checked > 10_000 && ep > 20,
        "{checked} positions, {ep} with en passant"
    );
}

#[test]
fn store_proofs_are_certified_and_faults_found() {
    for p in ladder() {
        let root = util::shak(&p.root());
        let map = p.records_map();
        let r = check_store(&map, Rules::International, &root, "", None);
        assert_eq!(r.verdict, Verdict::Certified, "{}: {r}", p.line.join(" "));
        assert_eq!(r.positions as usize, p.dag.nodes.len());
        // The same proof as a win-tree file: the same figures.
        let t = check_tree(
            &WinTree::from_vec(p.file()).unwrap(),
            &TreeOptions::default(),
        );
        assert_eq!(t.verdict, Verdict::Certified);
        assert_eq!(
            (t.positions, t.positions_with_repeats, t.longest_line),
            (r.positions, r.positions_with_repeats, r.longest_line),
            "{}",
            p.line.join(" ")
        );
        assert_eq!(t.leaves, r.leaves);
        assert_eq!(
            r.winner,
            if p.winner == Color::White {
                shakmaty::Color::White
            } else {
                shakmaty::Color::Black
            }
        );
        // An illegal move in one win record: rejected with BadRecord. (A
        // different legal move may well win too: the store holds a proof
        // for many positions, so that is no fault.)
        let mut rng = Rng(7);
        let wins: Vec<[u8; 25]> = map
            .iter()
            .filter(|(_, r)| r.verdict == store::WinLoss::Win)
            .map(|(k, _)| *k)
            .collect();
        for _ in 0..20 {
            let mut m = map.clone();
            let k = wins[rng.below(wins.len())];
            let pos = Position::unpack(&antiproof::rules::PackedPosition(k)).unwrap();
            let legal: Vec<MoveCode> = pos.legal_moves().iter().map(|x| x.watkins_code()).collect();
            let bad = loop {
                let c = MoveCode::from_raw(rng.next() as u16);
                let c = MoveCode::new(c.from(), c.to(), 0, false);
                if !legal.iter().any(|l| l.same_move(c)) && c.from() != c.to() {
                    break c;
                }
            };
            m.get_mut(&k).unwrap().mv = bad;
            let r = check_store(&m, Rules::International, &root, "", Some(r.winner));
            match r.verdict {
                Verdict::Rejected(rej) => {
                    assert_eq!(rej.reason.kind(), ReasonKind::BadRecord, "{rej}")
                }
                v => panic!("{v:?}"),
            }
        }
        // A missing record: rejected with MissingRecord.
        let mut m = map.clone();
        let k = p
            .records
            .iter()
            .find(|(_, r)| r.verdict == store::WinLoss::Win)
            .unwrap()
            .0;
        m.remove(&k);
        let r = check_store(&m, Rules::International, &root, "", Some(r.winner));
        match r.verdict {
            Verdict::Rejected(rej) => {
                assert_eq!(rej.reason.kind(), ReasonKind::MissingRecord, "{rej}");
            }
            v => panic!("{v:?}"),
        }
    }
}

#[test]
fn store_check_reads_redb_and_cli_round_trip() {
    let dir = temp_dir("check-store-cli");
    let db = dir.join("proofs.redb");
    let store = Store::open(&db).unwrap();
    for p in ladder() {
        store
            .put_batch(store::Rules::International, &p.records)
            .unwrap();
    }
    let root = util::shak(&ladder()[2].root());
    let r = check_store(
        &store.reader().unwrap(),
        Rules::International,
        &root,
        "1. e4",
        None,
    );
    assert_eq!(r.verdict, Verdict::Certified, "{r}");
    drop(store);

    let run = |args: &[&str], rest: &[String]| {
        let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        all.extend_from_slice(rest);
        util::antiproof(&all)
    };
    for p in ladder() {
        let line = p.line.join(" ");
        let db_s = db.to_str().unwrap();
        // verify --db
        let (code, out, _) = run(&["verify", "--db", db_s, "--json"], &p.line);
        assert_eq!(code, 0, "{line}: {out}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["verdict"], "certified");
        assert_eq!(v["rules"], "international");
        assert_eq!(v["positions"].as_u64().unwrap() as usize, p.dag.nodes.len());
        // export, then verify --tree; sizes in the file equal the recount.
        let file = dir.join(format!("{}.tree", p.line.join("-")));
        let file_s = file.to_str().unwrap();
        let (code, _, err) = run(&["export", "--db", db_s, "-o", file_s], &p.line);
        assert_eq!(code, 0, "{err}");
        let bytes = std::fs::read(&file).unwrap();
        let tree = WinTree::from_vec(bytes).unwrap();
        assert_eq!(tree.size(0).unwrap(), Some(p.dag.nodes.len() as i64));
        check_sizes(&tree);
        let (code, text, _) = run(&["verify", "--tree", file_s], &[]);
        assert_eq!(code, 0, "{text}");
        assert!(
            text.contains("CERTIFIED") && text.contains("international"),
            "{text}"
        );
        // A line into the file: the sub-proof is certified too.
        let mut node = 0;
        let mut sub = p.line.clone();
        for _ in 0..3 {
            let mv = tree.moves(node).unwrap()[0];
            sub.push(mv.mv.uci());
            node = mv.node;
        }
        let (code, out, _) = run(&["verify", "--tree", file_s], &sub);
        assert_eq!(code, 0, "{out}");
        // Wrong winner: rejected.
        let other = if p.winner == Color::White {
            "black"
        } else {
            "white"
        };
        let (code, _, _) = run(&["verify", "--tree", file_s, "--winner", other], &[]);
        assert_eq!(code, 1);
    }
    // Usage and I/O errors: exit 2.
    let none_db = dir.join("none.redb");
    let none_tree = dir.join("none.tree");
    for args in [
        &["verify", "--db", none_db.to_str().unwrap()][..],
        &["verify", "--tree", none_tree.to_str().unwrap()],
        &["verify", "--rules", "bogus"],
    ] {
        assert_eq!(run(args, &[]).0, 2, "{args:?}");
    }
    // A malformed file: rejected (exit 1), naming the offset.
    let bad = dir.join("bad.tree");
    std::fs::write(&bad, [9u8, 0, 0, 0x40, 0, 0, 1]).unwrap();
    let (code, out, _) = run(&["verify", "--tree", bad.to_str().unwrap()], &[]);
    assert_eq!(code, 1);
    assert!(out.contains("truncated"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every size in the table equals the distinct non-transposition nodes
/// reachable from the node, recounted by walking the file.
pub fn check_sizes(tree: &WinTree) {
    for i in 0..tree.len() {
        let Some(s) = tree.table_lookup(i) else {
            continue;
        };
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![tree.resolve(i).unwrap()];
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            for c in tree.children(n).unwrap() {
                stack.push(tree.resolve(c.unwrap().index).unwrap());
            }
        }
        assert_eq!(s as usize, seen.len(), "node {i}");
    }
}

#[test]
fn fics_rules_only_win_is_rejected_under_international() {
    // White to move, stalemated with more pieces than Black: under
    // International rules White wins; under FICS Black wins.
    let fen = "8/8/8/8/8/p7/P7/7k w - - 0 1";
    let pos = Position::from_fen(fen).unwrap();
    let s = util::shak(&pos);
    assert!(s.legal_moves().is_empty() || pos.outcome(Rules::Fics).is_some());
    let _ = Reason::NullMove;
}

/// Writes the ladder proofs of rungs 1-5 as `proofs/<line>.tree` with their
/// JSON sidecars into the directory named by `ANTIPROOF_PROOFS_DIR`
/// (`cargo test --release --test tests check_store::write_ladder -- --ignored`).
#[test]
#[ignore]
fn write_ladder_proofs() {
    let dir = PathBuf::from(std::env::var("ANTIPROOF_PROOFS_DIR").expect("ANTIPROOF_PROOFS_DIR"));
    std::fs::create_dir_all(&dir).unwrap();
    for p in ladder() {
        let sans: Vec<String> = {
            let (_, moves) = Position::startpos().play_line(&p.line).unwrap();
            antiproof::rules::line_san(&Position::startpos(), &moves)
        };
        let name = sans.join("-");
        std::fs::write(dir.join(format!("{name}.tree")), p.file()).unwrap();
        let meta = serde_json::json!({
            "line": sans.join(" "),
            "rules": "international",
            "winner": if p.winner == Color::White { "white" } else { "black" },
        });
        std::fs::write(dir.join(format!("{name}.json")), meta.to_string() + "\n").unwrap();
        println!("wrote {name}.tree");
    }
}

#[test]
fn export_never_overwrites_its_input_and_writes_atomically() {
    let dir = temp_dir("export-inputs");
    let db = dir.join("proofs.redb");
    let proofs = ladder();
    let (big, small) = if proofs[0].size() >= proofs[1].size() {
        (&proofs[0], &proofs[1])
    } else {
        (&proofs[1], &proofs[0])
    };
    {
        let store = Store::open(&db).unwrap();
        for p in [big, small] {
            store
                .put_batch(store::Rules::International, &p.records)
                .unwrap();
        }
    }
    let run = |args: &[&str], line: &[String]| {
        let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        all.extend_from_slice(line);
        util::antiproof(&all)
    };
    let db_s = db.to_str().unwrap();
    let before = std::fs::read(&db).unwrap();
    // The store as the output, however it is spelled: refused, exit 2.
    let link = dir.join("link.redb");
    std::os::unix::fs::symlink(&db, &link).unwrap();
    let hard = dir.join("hard.redb");
    std::fs::hard_link(&db, &hard).unwrap();
    let dotted = dir.join(".").join("proofs.redb");
    for out in [&db, &link, &hard, &dotted] {
        let (code, _, err) = run(
            &["export", "--db", db_s, "-o", out.to_str().unwrap()],
            &big.line,
        );
        assert_eq!(code, 2, "-o {}: {err}", out.display());
        assert!(err.contains("refusing to overwrite"), "{err}");
    }
    // Through the link as --db, the store itself as -o.
    let (code, _, err) = run(
        &["export", "--db", link.to_str().unwrap(), "-o", db_s],
        &big.line,
    );
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the store is untouched"
    );
    let (code, out, _) = run(&["verify", "--db", db_s], &big.line);
    assert_eq!(code, 0, "{out}");

    // Export onto a tree file that is open (memory-mapped): the old
    // mapping still reads the old file.
    let file = dir.join("proof.tree");
    let file_s = file.to_str().unwrap();
    let (code, _, err) = run(&["export", "--db", db_s, "-o", file_s], &big.line);
    assert_eq!(code, 0, "{err}");
    let old_bytes = std::fs::read(&file).unwrap();
    let old = WinTree::open(&file).unwrap();
    let (code, _, err) = run(&["export", "--db", db_s, "-o", file_s], &small.line);
    assert_eq!(code, 0, "{err}");
    assert_ne!(std::fs::read(&file).unwrap(), old_bytes, "a new file");
    assert_eq!(
        old.bytes(),
        &old_bytes[..],
        "the old mapping reads the old file"
    );
    assert_eq!(old.size(0).unwrap(), Some(big.size() as i64));
    check_sizes(&old);
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains(".tmp")), "{names:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn verify_and_export_without_a_line_take_the_stores_proven_line() {
    let dir = temp_dir("check-store-no-line");
    let db = dir.join("s.redb");
    let db_s = db.to_str().unwrap();
    let (code, _, err) = util::antiproof(&["prove", "--db", db_s, "--memory", "64M", "e3", "g6"]);
    assert_eq!(code, 0, "{err}");
    // Not the start position (no proof there): the line `prove` proved.
    let (code, out, err) = util::antiproof(&["verify", "--db", db_s]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("CERTIFIED"), "{out}");
    assert!(err.contains("the store's proven line, e3 g6"), "{err}");
    let tree = dir.join("x.tree");
    let (code, out, err) = util::antiproof(&["export", "--db", db_s, "-o", tree.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) =
        util::antiproof(&["verify", "--tree", tree.to_str().unwrap(), "e3", "g6"]);
    assert_eq!(code, 0, "{out}{err}");
    // Under another rule set the store holds nothing: said, exit 2.
    let (code, _, err) = util::antiproof(&["verify", "--db", db_s, "--rules", "fics"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("it holds: e3 g6 (under international)"),
        "{err}"
    );
    // Two lines: both named, one must be given.
    let (code, _, err) = util::antiproof(&["prove", "--db", db_s, "--memory", "64M", "e3", "d5"]);
    assert_eq!(code, 0, "{err}");
    for cmd in [
        vec!["verify", "--db", db_s],
        vec!["export", "--db", db_s, "-o", tree.to_str().unwrap()],
    ] {
        let (code, out, err) = util::antiproof(&cmd);
        assert_eq!(code, 2, "{cmd:?}: {out}{err}");
        assert!(err.contains("proofs of 2 lines"), "{err}");
        assert!(
            err.contains("e3 d5 (white wins); e3 g6 (white wins)"),
            "{err}"
        );
    }
    // A store that notes no lines (as older ones): said, exit 2.
    let old = dir.join("old.redb");
    let store = Store::open(&old).unwrap();
    store
        .put_batch(store::Rules::International, &ladder()[0].records)
        .unwrap();
    drop(store);
    let (code, _, err) = util::antiproof(&["verify", "--db", old.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("notes no proven line"), "{err}");
    assert!(err.contains("give the line"), "{err}");
}
