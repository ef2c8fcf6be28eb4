//! The checker on win-tree files: ladder proofs certified, round trips.

use crate::util::{self, ladder};
use antiproof::check::{RuleSet, Rules, TreeOptions, Verdict, check_tree};
use antiproof::rules::Color;
use antiproof::wintree::{MoveCode, WinTree};

#[test]
fn ladder_proofs_are_certified() {
    for p in ladder() {
        let bytes = p.file();
        let tree = WinTree::from_vec(bytes).unwrap();
        let r = check_tree(&tree, &TreeOptions::default());
        println!(
            "{} : {} positions, {} slots\n{r}",
            p.line.join(" "),
            p.dag.nodes.len(),
            tree.len()
        );
        assert_eq!(r.verdict, Verdict::Certified, "{}", p.line.join(" "));
        assert_eq!(r.positions as usize, p.dag.nodes.len());
        assert_eq!(r.rule_set, RuleSet::from(Rules::International));
    }
}

fn one_child_file(data: u32, mv: MoveCode) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&(2u32 | antiproof::wintree::FLAG_CHILD).to_le_bytes());
    b.extend_from_slice(&0u16.to_le_bytes());
    b.extend_from_slice(&data.to_le_bytes());
    b.extend_from_slice(&mv.raw().to_le_bytes());
    b
}

/// Unsolved markers and null moves of partial published files are read and
/// reported as such.
#[test]
fn unsolved_and_null_moves_are_reported() {
    use antiproof::check::ReasonKind;
    use antiproof::wintree::{NodeKind, UNSOLVED_INDEX};
    let e2e3 = MoveCode::from_uci("e2e3").unwrap();
    let opts = TreeOptions {
        winner: Some(shakmaty::Color::White),
        ..TreeOptions::default()
    };
    let kind = |b: Vec<u8>| match check_tree(&WinTree::from_vec(b).unwrap(), &opts).verdict {
        Verdict::Rejected(r) => r.reason.kind(),
        v => panic!("{v:?}"),
    };
    // An unsolved node.
    let b = one_child_file(UNSOLVED_INDEX, e2e3);
    let t = WinTree::from_vec(b.clone()).unwrap();
    assert_eq!(t.node(1).unwrap().kind, NodeKind::Unsolved);
    assert_eq!(kind(b), ReasonKind::Unsolved);
    // An unsolved move code.
    let b = one_child_file(0, e2e3.as_unsolved());
    assert!(
        WinTree::from_vec(b.clone())
            .unwrap()
            .node(1)
            .unwrap()
            .is_unsolved()
    );
    assert_eq!(kind(b), ReasonKind::Unsolved);
    // Null moves, both spellings.
    for null in [MoveCode::NULL, MoveCode::NULL_ALT] {
        let b = one_child_file(0, null);
        assert!(
            WinTree::from_vec(b.clone())
                .unwrap()
                .node(1)
                .unwrap()
                .is_null_move()
        );
        assert_eq!(kind(b), ReasonKind::NullMove);
    }
}

#[test]
fn verify_rejects_a_forged_size_table_entry_and_names_the_node() {
    let dir = util::temp_dir("forged-size");
    let (path, size) = util::write_proof(&dir, "e3d5", "e3 d5", Color::White, true);
    let good = std::fs::read(&path).unwrap();
    let tree = WinTree::from_bytes(&good).unwrap();
    assert_eq!(tree.size(0).unwrap(), Some(size as i64));
    let prolog = tree.prolog().len();
    let root_entry = 6 + 2 * prolog + 6 * (tree.len() as usize - 1);
    assert_eq!(&good[root_entry..root_entry + 4], &0u32.to_le_bytes());
    let (code, out, err) = util::antiproof(&["verify", "--json", "--tree", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let mut bad = good.clone();
    bad[root_entry + 4..root_entry + 8].copy_from_slice(&2_000_000_000i32.to_le_bytes());
    std::fs::write(&path, &bad).unwrap();
    let (code, out, err) = util::antiproof(&["verify", "--json", "--tree", path.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["verdict"], "rejected");
    assert_eq!(v["rejection"]["kind"], "WrongSize");
    assert_eq!(v["rejection"]["node"], 0);
    assert_eq!(v["rejection"]["size"]["listed"], 2_000_000_000i64);
    assert_eq!(v["rejection"]["size"]["actual"], size);
    let (code, out, _) = util::antiproof(&["verify", "--tree", path.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(out.contains("lists size 2000000000 for node 0"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}
