//! The checker on win-tree files: ladder proofs certified, round trips.

mod common;

use antiproof::check::{Rules, TreeOptions, Verdict, check_tree};
use antiproof::wintree::{MoveCode, WinTree};
use common::ladder;

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
        assert_eq!(r.rules, Rules::International);
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
