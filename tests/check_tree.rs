//! The checker on win-tree files: ladder proofs certified, round trips.

mod check_support;

use antiproof::check::{Rules, TreeOptions, Verdict, check_tree};
use antiproof::wintree::WinTree;
use check_support::ladder;

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
