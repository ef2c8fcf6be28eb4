//! `antiproof perft` from the command line.

use crate::util;

#[test]
fn last_line_is_the_leaf_count() {
    let (code, out, _) = util::antiproof(&["perft", "4"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().last(), Some("153299"));
    let (code, out, _) = util::antiproof(&["perft", "--divide", "3"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 21);
    assert!(lines.contains(&"e2e3: 434") || lines.iter().any(|l| l.starts_with("e2e3: ")));
    assert_eq!(lines.last(), Some(&"8067"));
    let (code, out, _) = util::antiproof(&["perft", "--fen", "8/P7/8/8/8/8/8/7k w - - 0 1", "1"]);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), "5");
}

#[test]
fn bad_fen_is_a_usage_error_naming_the_field() {
    let (code, _, err) = util::antiproof(&["perft", "--fen", "8/8/8/8/8/8/8/8 x - - 0 1", "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("side to move"), "{err}");
    let (code, _, _) = util::antiproof(&["perft"]);
    assert_eq!(code, 2);
}
