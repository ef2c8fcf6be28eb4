//! Proves the small rungs of docs/ladder.md through the library and
//! walks each stored proof with a plain walker.

use crate::util::{temp_db, walk};
use antiproof::rules::{Color, Position};
use antiproof::search::{Config, ProveResult, Prover};
use antiproof::store::Store;
use std::path::Path;

struct Run {
    result: ProveResult,
    best: Option<String>,
    nodes: u64,
    positions: u64,
}

/// Proves `line` for the side to move after it (or `winner`), on a thread
/// with a roomy stack.
fn prove(db: &Path, line: &str, winner: Option<Color>) -> Run {
    let db = db.to_path_buf();
    let line = line.to_string();
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let (pos, _) = Position::startpos().play_line_str(&line).unwrap();
            let store = Store::open(&db).unwrap();
            let config = Config {
                tt_bytes: 1 << 30,
                ..Config::default()
            };
            let winner = winner.unwrap_or(pos.turn());
            let mut p = Prover::new(config, winner, Some(&store)).unwrap();
            let r = p.prove(&pos).unwrap();
            Run {
                result: r.result,
                best: r.best_move.map(|m| pos.san(m)),
                nodes: r.nodes,
                positions: r.proof_positions,
            }
        })
        .unwrap()
        .join()
        .unwrap()
}

fn rung(name: &str, line: &str, winner: Color, first: &str) {
    let db = temp_db(name);
    let r = prove(&db, line, None);
    assert_eq!(r.result, ProveResult::Proven, "{line}");
    assert_eq!(r.best.as_deref(), Some(first), "{line}");
    let walked = walk(&db, line, winner);
    assert_eq!(
        walked as u64, r.positions,
        "{line}: walked vs reported size"
    );
    // A second run finds the root in the store.
    let again = prove(&db, line, None);
    assert_eq!(again.result, ProveResult::Proven);
    assert_eq!(again.nodes, 0);
    assert_eq!(again.best.as_deref(), Some(first));
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

#[test]
fn rung_1_e3_d5() {
    rung("r1", "e3 d5", Color::White, "Qg4");
}

#[test]
fn rung_2_e3_d6() {
    rung("r2", "e3 d6", Color::White, "Qg4");
}

#[test]
fn rung_3_e4() {
    rung("r3", "e4", Color::Black, "b5");
}

#[test]
fn rung_4_d3() {
    rung("r4", "d3", Color::Black, "g5");
}

#[test]
fn rung_5_d4() {
    rung("r5", "d4", Color::Black, "e5");
}

#[test]
fn rung_6_e3_na6() {
    rung("r6", "e3 Na6", Color::White, "Bxa6");
}

#[test]
fn rung_7_e3_g6() {
    rung("r7", "e3 g6", Color::White, "Qh5");
}

#[test]
fn a_stored_deeper_proof_is_reused() {
    let fresh_db = temp_db("reuse-a");
    let fresh = prove(&fresh_db, "e3 d5", None);
    std::fs::remove_dir_all(fresh_db.parent().unwrap()).unwrap();
    let db = temp_db("reuse-b");
    let deeper = prove(&db, "e3 d5 Qg4", Some(Color::White));
    assert_eq!(deeper.result, ProveResult::Proven);
    let r = prove(&db, "e3 d5", None);
    assert_eq!(r.result, ProveResult::Proven);
    assert!(r.nodes < fresh.nodes, "{} !< {}", r.nodes, fresh.nodes);
    walk(&db, "e3 d5", Color::White);
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

#[test]
fn a_side_that_cannot_win_is_disproven() {
    // After 1.e3 d5 2.Qg4 White wins (rung 1), so Black cannot.
    let db = temp_db("disprove");
    let r = prove(&db, "e3 d5 Qg4", Some(Color::Black));
    assert_eq!(r.result, ProveResult::Disproven);
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

/// Rungs 8 to 10: seconds to minutes in the test profile; run with
/// `cargo test --release --test tests prove_ladder:: -- --ignored`.
#[test]
#[ignore]
fn rungs_8_to_10() {
    for (name, line, winner) in [
        ("r8", "e3 e5", Color::White),
        ("r9", "Nc3", Color::Black),
        ("r10", "e3 f5", Color::White),
    ] {
        let db = temp_db(name);
        let r = prove(&db, line, None);
        assert_eq!(r.result, ProveResult::Proven, "{line}");
        assert_eq!(walk(&db, line, winner) as u64, r.positions, "{line}");
        std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
    }
}
