//! Perft against the cross-checked figures in `shared/testdata`, and the 100
//! real games replayed to their final positions.

use antiproof::rules::{Position, perft::perft};
use std::path::PathBuf;

fn testdata(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/testdata")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

/// `(id, epd, depth, nodes)` for every perft line of the cross-check file.
fn perft_lines() -> Vec<(String, String, u32, u64)> {
    let mut out = Vec::new();
    let (mut id, mut epd) = (String::new(), String::new());
    for line in testdata("antichess_crosscheck.perft").lines() {
        let line = line.split('#').next().unwrap().trim();
        if let Some(rest) = line.strip_prefix("id ") {
            id = rest.trim().to_string();
        } else if let Some(rest) = line.strip_prefix("epd ") {
            epd = rest.trim().to_string();
        } else if let Some(rest) = line.strip_prefix("perft ") {
            let mut it = rest.split_whitespace();
            let depth = it.next().unwrap().parse().unwrap();
            let nodes = it.next().unwrap().parse().unwrap();
            out.push((id.clone(), epd.clone(), depth, nodes));
        }
    }
    out
}

fn check_perft(max_nodes: u64) -> usize {
    let lines = perft_lines();
    assert!(lines.len() >= 200, "only {} perft lines read", lines.len());
    let mut checked = 0;
    for (id, epd, depth, nodes) in &lines {
        if *nodes > max_nodes {
            continue;
        }
        let pos = Position::from_epd(epd).unwrap_or_else(|e| panic!("{id}: {e}"));
        assert_eq!(perft(&pos, *depth), *nodes, "{id} ({epd}) perft {depth}");
        checked += 1;
    }
    checked
}

#[test]
fn crosscheck_perft_up_to_a_few_million_nodes() {
    let n = check_perft(5_000_000);
    eprintln!("{n} perft lines checked");
    assert!(n >= 150);
}

#[test]
#[ignore = "exhaustive: every line of the cross-check file, including perft 6 from the start"]
fn crosscheck_perft_all_lines() {
    let n = check_perft(u64::MAX);
    assert_eq!(n, perft_lines().len());
    eprintln!("all {n} perft lines checked");
}

#[test]
fn startpos_divide_6() {
    let text = testdata("antichess_startpos_divide6.txt");
    let pos = Position::startpos();
    let mut total = 0;
    let mut rows = 0;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((mv, n)) = line.split_once(|c: char| c == ':' || c.is_whitespace()) else {
            continue;
        };
        let Ok(n) = n.trim().parse::<u64>() else {
            continue;
        };
        if mv.trim() == "total" {
            continue;
        }
        let m = pos.parse_move(mv.trim()).unwrap();
        assert_eq!(perft(&pos.play(m), 5), n, "divide {mv}");
        total += n;
        rows += 1;
    }
    assert_eq!(rows, 20);
    assert_eq!(total, 46_264_162);
}

#[test]
fn hundred_games_replay_to_their_final_positions() {
    let text = testdata("antichess_games_final_positions.tsv");
    let mut games = 0;
    for line in text.lines() {
        if line.starts_with('#') || line.starts_with("uci_moves") || line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let moves: Vec<&str> = cols[0].split_whitespace().collect();
        let (pos, _) = Position::startpos()
            .play_line(&moves)
            .unwrap_or_else(|e| panic!("game {games}: {e}"));
        assert_eq!(pos.to_fen(), cols[1], "game {games} final FEN");
        let legal: usize = cols[2].parse().unwrap();
        assert_eq!(pos.legal_moves().len(), legal, "game {games} legal moves");
        assert_eq!(
            pos.count_legal_moves() as usize,
            legal,
            "game {games} count"
        );
        games += 1;
    }
    assert_eq!(games, 100);
}
