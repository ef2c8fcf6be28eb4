//! Open leaves as obligations: a real proof with subtrees cut out is
//! "open" (`verify --tree --obligations`, exit 4, listing exactly the cut
//! positions), `prove --obligations` proves them, `export --tree --db`
//! merges the proofs into one certificate that `verify --tree` certifies
//! with nothing else, without the fifty-move rule and under it. Plus bad
//! obligations files.

use crate::util::{antiproof, temp_dir};
use antiproof::wintree::{ProofDag, WinTree, WriteOptions, write_tree};
use shakmaty::fen::Epd;
use shakmaty::variant::Antichess;
use shakmaty::{EnPassantMode, Position};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

const PROOF: &str = "proofs/e3-Na6.tree";

/// A win-tree file read into a DAG (one node a slot holding a subtree),
/// with each node's position and depth below the root.
struct Read {
    dag: ProofDag,
    pos: Vec<Antichess>,
    depth: Vec<u32>,
}

fn read_dag(tree: &WinTree) -> Read {
    let mut root = Antichess::default();
    for code in tree.prolog() {
        let m = *root
            .legal_moves()
            .iter()
            .find(|m| code.same_move(antiproof::check::game::move_code(m)))
            .unwrap();
        root.play_unchecked(m);
    }
    let mut r = Read {
        dag: ProofDag::new(),
        pos: Vec::new(),
        depth: Vec::new(),
    };
    let mut ids = HashMap::new();
    add(tree, 0, root, 0, &mut r, &mut ids);
    r
}

fn add(
    tree: &WinTree,
    slot: u32,
    pos: Antichess,
    depth: u32,
    r: &mut Read,
    ids: &mut HashMap<u32, usize>,
) -> usize {
    let slot = tree.resolve(slot).unwrap();
    if let Some(&id) = ids.get(&slot) {
        return id;
    }
    let id = r.dag.add_node();
    ids.insert(slot, id);
    r.pos.push(pos.clone());
    r.depth.push(depth);
    for child in tree.children(slot).unwrap() {
        let child = child.unwrap();
        let code = child.mv.unwrap();
        let m = *pos
            .legal_moves()
            .iter()
            .find(|m| code.same_move(antiproof::check::game::move_code(m)))
            .unwrap();
        let mut p = pos.clone();
        p.play_unchecked(m);
        let c = add(tree, child.index, p, depth + 1, r, ids);
        r.dag.add_edge(id, code, c);
    }
    id
}

fn epd(pos: &Antichess) -> String {
    Epd::from_position(pos, EnPassantMode::Legal).to_string()
}

/// The proof with the subtrees of a few inner nodes deep in it cut out
/// (winner and loser to move, more than 4 men): the file, and the cut
/// positions as EPD.
fn cut(dir: &Path) -> (PathBuf, BTreeSet<String>) {
    let bytes = std::fs::read(PROOF).unwrap();
    let tree = WinTree::from_bytes(&bytes).unwrap();
    let mut r = read_dag(&tree);
    let mut cut = BTreeSet::new();
    let mut picked_all = Vec::new();
    for want in [12, 13] {
        // Depth 12 from the first subtrees, 13 from the last: the cuts do
        // not hide each other.
        let order: Vec<usize> = if want == 12 {
            (0..r.dag.nodes.len()).collect()
        } else {
            (0..r.dag.nodes.len()).rev().collect()
        };
        let picked: Vec<usize> = order
            .into_iter()
            .filter(|&i| {
                r.depth[i] == want
                    && !r.dag.nodes[i].children.is_empty()
                    && r.pos[i].board().occupied().count() > 4
            })
            .take(2)
            .collect();
        assert_eq!(picked.len(), 2, "inner nodes at depth {want}");
        for i in picked {
            r.dag.nodes[i].children.clear();
            picked_all.push(i);
        }
    }
    // The cut nodes still reachable (a cut above may hide one).
    let mut seen = vec![false; r.dag.nodes.len()];
    let mut stack = vec![0];
    seen[0] = true;
    while let Some(v) = stack.pop() {
        let node = &r.dag.nodes[v];
        if picked_all.contains(&v) {
            cut.insert(epd(&r.pos[v]));
        }
        for &(_, c) in &node.children {
            if !seen[c] {
                seen[c] = true;
                stack.push(c);
            }
        }
    }
    let w = write_tree(&r.dag, 0, &tree.prolog(), &WriteOptions::default()).unwrap();
    let path = dir.join("cut.tree");
    std::fs::write(&path, w.bytes).unwrap();
    (path, cut)
}

/// The EPDs listed in an obligations file.
fn listed(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split_once(" ; ").unwrap().0.to_string())
        .collect()
}

/// `antiproof prove --db DB --obligations FILE EXTRA...`: exit code,
/// standard output and standard error.
fn discharge(db: &str, file: &str, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["prove", "--db", db, "--obligations", file];
    args.extend_from_slice(extra);
    antiproof(&args)
}

#[test]
fn open_leaves_are_listed_proven_and_merged_into_one_certificate() {
    let dir = temp_dir("obligations-flow");
    let (cut_file, expected) = cut(&dir);
    let n = expected.len();
    assert_eq!(n, 4, "{expected:?}");
    let cut_s = cut_file.to_str().unwrap();
    let ob = dir.join("owed.epd");
    let ob_s = ob.to_str().unwrap();

    // Without --obligations: open, counted and named, exit 4.
    let (rc, out, err) = antiproof(&["verify", "--tree", cut_s]);
    assert_eq!(rc, 4, "{out}{err}");
    let open = format!("OPEN: sound so far, but {n} distinct leaves are open");
    assert!(out.contains(&open), "{out}");
    let (rc, out, _) = antiproof(&["verify", "--json", "--tree", cut_s]);
    assert_eq!(rc, 4);
    let j: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(j["verdict"], "open");
    assert_eq!(j["open_leaves"], n);

    // With it: exactly the cut positions, each once, with the header.
    let (rc, out, err) = antiproof(&["verify", "--tree", cut_s, "--obligations", ob_s]);
    assert_eq!(rc, 4, "{out}{err}");
    let got = listed(&ob);
    assert_eq!(got.len(), expected.len());
    assert_eq!(got.into_iter().collect::<BTreeSet<_>>(), expected);
    let text = std::fs::read_to_string(&ob).unwrap();
    assert!(text.starts_with("# antiproof obligations\n"), "{text}");
    assert!(text.contains("# rules: international\n"), "{text}");
    assert!(text.contains("# winner: white\n"), "{text}");
    assert!(text.contains(" ; line: e2e3 b8a6 "), "{text}");

    // The store lacks the proofs: no merge, exit 1 naming the leaf.
    let db = dir.join("s.redb");
    let db_s = db.to_str().unwrap();
    let empty = dir.join("none.epd");
    std::fs::write(
        &empty,
        "# antiproof obligations\n# rules: international\n# winner: white\n",
    )
    .unwrap();
    let (rc, out, err) = discharge(db_s, empty.to_str().unwrap(), &[]);
    assert_eq!(rc, 0, "{out}{err}");
    let merged = dir.join("merged.tree");
    let merged_s = merged.to_str().unwrap();
    let (rc, out, err) = antiproof(&["export", "--tree", cut_s, "--db", db_s, "-o", merged_s]);
    assert_eq!(rc, 1, "{out}{err}");
    assert!(err.contains("no proof of the open leaf"), "{err}");
    assert!(!merged.exists());

    // Discharge, then merge: one certificate, nothing else needed.
    let (rc, out, err) = discharge(db_s, ob_s, &["--memory", "64M"]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(
        out.contains(&format!("{n} of {n} obligations proven for white")),
        "{out}"
    );
    // Again: found in the store.
    let (rc, out, err) = discharge(db_s, ob_s, &["--memory", "64M", "--json"]);
    assert_eq!(rc, 0, "{out}{err}");
    let j: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(j["proven"], n);
    let (rc, out, err) = antiproof(&["export", "--tree", cut_s, "--db", db_s, "-o", merged_s]);
    assert_eq!(rc, 0, "{out}{err}");
    let grafted = format!("{n} open leaves replaced by stored proofs");
    assert!(out.contains(&grafted), "{out}");
    let (rc, out, err) = antiproof(&["verify", "--tree", merged_s]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("CERTIFIED"), "{out}");
    // Nothing owed any more: the obligations file says so.
    let (rc, _, _) = antiproof(&["verify", "--tree", merged_s, "--obligations", ob_s]);
    assert_eq!(rc, 0);
    assert!(listed(&ob).is_empty());
}

#[test]
fn fifty_move_obligations_are_proven_and_merged_under_the_rule() {
    let dir = temp_dir("obligations-fifty");
    let (cut_file, expected) = cut(&dir);
    let n = expected.len();
    let cut_s = cut_file.to_str().unwrap();
    let ob = dir.join("owed.epd");
    let ob_s = ob.to_str().unwrap();
    let (rc, out, err) = antiproof(&[
        "verify",
        "--rules",
        "lichess",
        "--tree",
        cut_s,
        "--obligations",
        ob_s,
    ]);
    assert_eq!(rc, 4, "{out}{err}");
    let text = std::fs::read_to_string(&ob).unwrap();
    assert!(text.contains("# fifty-move-rule: yes\n"), "{text}");
    assert_eq!(listed(&ob).into_iter().collect::<BTreeSet<_>>(), expected);
    let db = dir.join("s.redb");
    let db_s = db.to_str().unwrap();
    // Without the rule: refused, a proof without it discharges nothing.
    let (rc, out, err) = discharge(db_s, ob_s, &["--memory", "64M"]);
    assert_eq!(rc, 2, "{out}{err}");
    assert!(err.contains("add --fifty-move-rule"), "{err}");
    // Each spelling of the rule proves them (the later ones find them in
    // the store).
    for rule in [
        &["--rules", "lichess"][..],
        &["--fifty-move-rule"],
        &["--rules", "international+fifty"],
    ] {
        let mut extra = vec!["--memory", "64M"];
        extra.extend_from_slice(rule);
        let (rc, out, err) = discharge(db_s, ob_s, &extra);
        assert_eq!(rc, 0, "{rule:?}: {out}{err}");
        assert!(
            out.contains(&format!("{n} of {n} obligations proven for white")),
            "{rule:?}: {out}"
        );
    }
    // Merged under the rule: one certificate the checker certifies under
    // it, owing nothing.
    let merged = dir.join("merged.tree");
    let merged_s = merged.to_str().unwrap();
    let (rc, out, err) = antiproof(&[
        "export", "--rules", "lichess", "--tree", cut_s, "--db", db_s, "-o", merged_s,
    ]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(
        out.contains(&format!("{n} open leaves replaced by stored proofs")),
        "{out}"
    );
    let (rc, out, err) = antiproof(&[
        "verify",
        "--rules",
        "lichess",
        "--tree",
        merged_s,
        "--obligations",
        ob_s,
    ]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("CERTIFIED"), "{out}");
    assert!(listed(&ob).is_empty());
    // The store's proofs are the fifty-move rule's: without it they are
    // not found.
    let other = dir.join("plain.tree");
    let (rc, _, err) = antiproof(&[
        "export",
        "--tree",
        cut_s,
        "--db",
        db_s,
        "-o",
        other.to_str().unwrap(),
    ]);
    assert_eq!(rc, 1, "{err}");
    assert!(err.contains("no proof of the open leaf"), "{err}");
}

#[test]
fn bad_obligations_files_are_usage_errors_naming_the_line() {
    let dir = temp_dir("obligations-bad");
    let db = dir.join("s.redb");
    let head = "# antiproof obligations\n# rules: international\n# winner: white\n";
    let ok = "rnbqkbnr/pppppppp/8/8/8/4P3/PPPP1PPP/RNBQKBNR b - -";
    let cases: [(&str, String, &str); 8] = [
        (
            "malformed",
            format!("{head}{ok}\nnot a position at all\n"),
            "line 5",
        ),
        ("fields", format!("{head}8/8/8 w\n"), "line 4"),
        (
            "illegal",
            format!("{head}P6k/8/8/8/8/8/8/K7 w - - ; line:\n"),
            "line 4",
        ),
        (
            "finished",
            format!("{head}8/8/8/8/8/8/8/K7 b - -\n"),
            "line 4",
        ),
        (
            "rules",
            format!("# antiproof obligations\n# rules: fics\n# winner: white\n{ok}\n"),
            "line 2",
        ),
        // Owed under the fifty-move rule: not discharged without it.
        (
            "fifty",
            format!("# antiproof obligations\n# fifty-move-rule: yes\n{ok}\n"),
            "line 2",
        ),
        (
            "fifty-name",
            format!("# antiproof obligations\n# rules: international+fifty\n{ok}\n"),
            "line 2",
        ),
        // A second winner would silently override the first.
        (
            "winner-twice",
            format!("{head}# winner: black\n{ok}\n"),
            "line 4: a second `# winner:` header (the first is on line 3)",
        ),
    ];
    for (name, text, line) in cases {
        let f = dir.join(format!("{name}.epd"));
        std::fs::write(&f, text).unwrap();
        let (rc, out, err) = discharge(
            db.to_str().unwrap(),
            f.to_str().unwrap(),
            &["--memory", "16M"],
        );
        assert_eq!(rc, 2, "{name}: {out}{err}");
        assert!(err.contains(line), "{name}: {err}");
    }
}

#[test]
fn obligations_disproven_or_stopped() {
    let dir = temp_dir("obligations-exits");
    let db = dir.join("s.redb");
    let db_s = db.to_str().unwrap();
    let head = "# antiproof obligations\n# rules: international\n# winner: white\n";
    // White must take the last black piece and loses: disproven (exit 1,
    // named by its line); the other position is still proven.
    let lost = dir.join("lost.epd");
    std::fs::write(
        &lost,
        format!("{head}8/8/8/8/8/8/1p6/K7 w - -\n8/8/8/8/8/8/1P6/k7 b - -\n"),
    )
    .unwrap();
    let (rc, out, err) = discharge(db_s, lost.to_str().unwrap(), &["--memory", "16M"]);
    assert_eq!(rc, 1, "{out}{err}");
    assert!(
        out.contains("disproven (not certified): line(s) 4"),
        "{out}"
    );
    assert!(out.contains("proven     line 5"), "{out}");
    // A limit stops the run: exit 3, resumable.
    let big = dir.join("big.epd");
    std::fs::write(
        &big,
        format!("{head}rnbqkbnr/pppppppp/8/8/8/4P3/PPPP1PPP/RNBQKBNR b - -\n"),
    )
    .unwrap();
    let (rc, out, err) = discharge(
        db_s,
        big.to_str().unwrap(),
        &["--memory", "16M", "--limit", "200 nodes", "--json"],
    );
    assert_eq!(rc, 3, "{out}{err}");
    let j: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(j["result"], "stopped");
    assert_eq!(j["stopped_at_line"], 4);
    // --winner against the header: a usage error.
    let (rc, _, err) = discharge(db_s, big.to_str().unwrap(), &["--winner", "black"]);
    assert_eq!(rc, 2, "{err}");
}

#[test]
fn castling_rights_are_accepted_and_dropped_by_verify_and_obligations() {
    // Antichess has no castling; lichess reads `KQkq` and drops it, and so
    // does `prove --fen`: the checker's readers too.
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    let (rc, out, err) = antiproof(&["verify", "--tree", PROOF, "--fen", start, "e3", "Na6"]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("CERTIFIED"), "{out}");
    let dir = temp_dir("obligations-castling");
    let f = dir.join("owed.epd");
    std::fs::write(
        &f,
        "# antiproof obligations\n# rules: international\n# winner: white\n\
         8/8/8/8/8/8/1P6/k7 b KQkq -\n",
    )
    .unwrap();
    let db = dir.join("s.redb");
    let (rc, out, err) = discharge(
        db.to_str().unwrap(),
        f.to_str().unwrap(),
        &["--memory", "16M"],
    );
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains("1 of 1 obligations proven"), "{out}");
}
