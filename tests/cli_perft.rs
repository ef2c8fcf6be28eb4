//! `antiproof perft` from the command line.

use std::process::Command;

fn antiproof(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_antiproof"))
        .args(args)
        .output()
        .expect("run antiproof");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn last_line_is_the_leaf_count() {
    let (code, out, _) = antiproof(&["perft", "4"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().last(), Some("153299"));
    let (code, out, _) = antiproof(&["perft", "--divide", "3"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 21);
    assert!(lines.contains(&"e2e3: 434") || lines.iter().any(|l| l.starts_with("e2e3: ")));
    assert_eq!(lines.last(), Some(&"8067"));
    let (code, out, _) = antiproof(&["perft", "--fen", "8/P7/8/8/8/8/8/7k w - - 0 1", "1"]);
    assert_eq!(code, 0);
    assert_eq!(out.trim(), "5");
}

#[test]
fn bad_fen_is_a_usage_error_naming_the_field() {
    let (code, _, err) = antiproof(&["perft", "--fen", "8/8/8/8/8/8/8/8 x - - 0 1", "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("side to move"), "{err}");
    let (code, _, _) = antiproof(&["perft"]);
    assert_eq!(code, 2);
}
