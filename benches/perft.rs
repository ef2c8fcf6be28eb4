//! Move-generator benchmark: perft 6 from the start and perft 5 from three
//! busy middlegame positions (quiet, from real games), with our generator and with shakmaty's, in
//! the same run, printing the speed ratio. Both count moves at the last ply
//! without making them. Run with `cargo bench --bench perft`.

use antiproof::rules::{Position, perft::perft};
use shakmaty::CastlingMode;
use shakmaty::fen::Fen;
use shakmaty::variant::Antichess;
use std::time::Instant;

const CASES: &[(&str, &str, u32)] = &[
    (
        "start",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1",
        6,
    ),
    // Quiet middlegames (no capture pending) reached in real antichess games.
    (
        "middle-1",
        "rnb4r/p1pknppp/4p3/8/2P5/NP2P3/P2P1KPP/R1BQ2NR w - - 1 8",
        5,
    ),
    (
        "middle-2",
        "r1b3nr/p1pn1kpp/4p3/8/8/P1N1P3/P1PK1PPP/R1B3NR b - - 0 8",
        5,
    ),
    (
        "middle-3",
        "r1b2q1r/pp1knp1p/4p3/6p1/8/4P3/P1PPNPPP/2R1K2R b - - 3 11",
        5,
    ),
];

fn best_of<F: FnMut() -> u64>(runs: usize, mut f: F) -> (u64, f64) {
    let mut best = f64::MAX;
    let mut n = 0;
    for _ in 0..runs {
        let t = Instant::now();
        n = std::hint::black_box(f());
        best = best.min(t.elapsed().as_secs_f64());
    }
    (n, best)
}

fn main() {
    let runs = std::env::var("PERFT_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    println!("perft, best of {runs} runs each (leaves counted at the last ply)");
    println!(
        "{:<10} {:>5} {:>12} {:>10} {:>10} {:>12} {:>12} {:>7}",
        "position", "depth", "leaves", "ours s", "shakm. s", "ours M/s", "shakm. M/s", "ratio"
    );
    let (mut total_ours, mut total_theirs) = (0.0, 0.0);
    for &(name, fen, depth) in CASES {
        let ours = Position::from_fen(fen).expect("valid FEN");
        let theirs: Antichess = Fen::from_ascii(fen.as_bytes())
            .expect("valid FEN")
            .into_position(CastlingMode::Standard)
            .expect("valid position");
        let (n1, t1) = best_of(runs, || perft(&ours, depth));
        let (n2, t2) = best_of(runs, || shakmaty::perft(&theirs, depth));
        assert_eq!(n1, n2, "{name}: leaf counts differ");
        total_ours += t1;
        total_theirs += t2;
        println!(
            "{:<10} {:>5} {:>12} {:>10.3} {:>10.3} {:>12.1} {:>12.1} {:>6.1}x",
            name,
            depth,
            n1,
            t1,
            t2,
            n1 as f64 / t1 / 1e6,
            n2 as f64 / t2 / 1e6,
            t2 / t1
        );
    }
    println!(
        "total: ours {total_ours:.3} s, shakmaty {total_theirs:.3} s, ratio {:.1}x (target >= 6x)",
        total_theirs / total_ours
    );
}
