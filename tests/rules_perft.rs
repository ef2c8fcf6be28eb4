//! Perft against the cross-checked figures in `tests/data/` (origins in
//! its README.md), and the 100 real games replayed to their final positions.

use crate::data;
use antiproof::rules::{Position, perft::perft};

fn check_perft(max_nodes: u64) -> usize {
    let lines = data::perft_lines();
    assert!(lines.len() >= 200, "only {} perft lines read", lines.len());
    let mut checked = 0;
    for l in &lines {
        if l.nodes > max_nodes {
            continue;
        }
        // Read as EPD (the FEN's first four fields: clocks change no perft).
        let pos = Position::from_epd(l.fen).unwrap_or_else(|e| panic!("{}: {e}", l.name));
        assert_eq!(
            perft(&pos, l.depth),
            l.nodes,
            "{} ({}) perft {}",
            l.name,
            l.fen,
            l.depth
        );
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
    assert_eq!(n, data::perft_lines().len());
    eprintln!("all {n} perft lines checked");
}

#[test]
fn startpos_divide_6() {
    let pos = Position::startpos();
    let mut total = 0;
    let mut rows = 0;
    for c in data::rows(data::STARTPOS_DIVIDE6, "move\tnodes") {
        let (mv, n) = (c[0], c[1].parse::<u64>().unwrap());
        let m = pos.parse_move(mv).unwrap();
        assert_eq!(perft(&pos.play(m), 5), n, "divide {mv}");
        total += n;
        rows += 1;
    }
    assert_eq!(rows, 20);
    assert_eq!(total, 46_264_162);
}

#[test]
fn hundred_games_replay_to_their_final_positions() {
    let mut games = 0;
    for cols in data::rows(
        data::GAMES,
        "uci_moves\tfinal_fen\tlegal_moves\tpython_chess_result\tshakmaty_outcome",
    ) {
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
