//! Differential test of our rules against shakmaty's Antichess (the
//! checker's rules library): over random playouts from the start and from
//! the cross-check positions, at every position compare the legal move sets,
//! the move count, "any capture?", game ends under every rule set, SAN of
//! every move (print and read back), FEN round trip, packed round trip and
//! the incremental Zobrist hash.

use crate::data;
use crate::util::Rng;
use antiproof::rules::{Color, Outcome, Position, Rules};
use shakmaty::fen::Fen;
use shakmaty::san::San;
use shakmaty::variant::Antichess;
use shakmaty::{CastlingMode, EnPassantMode, KnownOutcome, Position as _};

fn shakmaty_pos(fen: &str) -> Antichess {
    Fen::from_ascii(fen.as_bytes())
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap_or_else(|e| panic!("shakmaty rejects {fen}: {e}"))
}

fn start_fens() -> Vec<String> {
    let mut fens: Vec<String> = data::crosscheck_positions()
        .into_iter()
        .map(|(_, fen)| fen.to_string())
        .collect();
    fens.insert(0, Position::startpos().to_fen());
    fens
}

/// The game end shakmaty implies under a rule set (FICS from its stalemate
/// and piece counts, joint from those two).
fn expected_outcome(sh: &Antichess, rules: Rules) -> Option<Outcome> {
    let color = |c: shakmaty::Color| {
        if c.is_white() {
            Color::White
        } else {
            Color::Black
        }
    };
    let turn = sh.turn();
    let ours = sh.board().by_color(turn).count();
    let theirs = sh.board().by_color(!turn).count();
    if ours == 0 {
        return Some(Outcome::Win(color(turn)));
    }
    if sh.legal_moves().is_empty() {
        return Some(match rules {
            Rules::International => Outcome::Win(color(turn)),
            Rules::Fics if ours < theirs => Outcome::Win(color(turn)),
            Rules::Fics if ours > theirs => Outcome::Win(color(!turn)),
            Rules::Fics => Outcome::Draw,
            // Joint: the winner International and FICS agree on, else a
            // draw.
            Rules::Joint => {
                let both = [Rules::International, Rules::Fics].map(|r| expected_outcome(sh, r));
                if both[0] == both[1] {
                    both[0].unwrap()
                } else {
                    Outcome::Draw
                }
            }
        });
    }
    match sh.outcome() {
        shakmaty::Outcome::Known(KnownOutcome::Draw) => Some(Outcome::Draw),
        shakmaty::Outcome::Known(KnownOutcome::Decisive { winner }) => {
            Some(Outcome::Win(color(winner)))
        }
        shakmaty::Outcome::Unknown => None,
    }
}

fn compare(pos: &Position, sh: &Antichess, ctx: &str) {
    let fen = pos.to_fen();
    let sh_fen = Fen::from_position(sh, EnPassantMode::Legal).to_string();
    assert_eq!(fen, sh_fen, "{ctx}: FEN");
    assert_eq!(
        Position::from_fen(&fen).unwrap(),
        *pos,
        "{ctx}: FEN round trip"
    );
    let packed = pos.pack();
    assert_eq!(
        Position::unpack(&packed).unwrap(),
        *pos,
        "{ctx}: packed round trip {fen}"
    );
    assert_eq!(
        pos.zobrist(),
        pos.zobrist_from_scratch(),
        "{ctx}: incremental hash {fen}"
    );

    let legal = pos.legal_moves();
    let mut ours: Vec<String> = legal.iter().map(|m| m.to_string()).collect();
    let sh_legal = sh.legal_moves();
    let mut theirs: Vec<String> = sh_legal
        .iter()
        .map(|m| m.to_uci(CastlingMode::Standard).to_string())
        .collect();
    ours.sort();
    theirs.sort();
    assert_eq!(ours, theirs, "{ctx}: legal moves of {fen}");
    assert_eq!(
        pos.count_legal_moves() as usize,
        theirs.len(),
        "{ctx}: count {fen}"
    );
    let sh_capture = sh_legal.iter().any(|m| m.is_capture());
    assert_eq!(pos.has_capture(), sh_capture, "{ctx}: has_capture {fen}");
    for rules in Rules::ALL {
        assert_eq!(
            pos.outcome(rules),
            expected_outcome(sh, rules),
            "{ctx}: outcome ({rules}) {fen}"
        );
    }
    for &m in legal.iter() {
        let san = pos.san_with(m, &legal);
        let shm = sh_legal
            .iter()
            .find(|x| x.to_uci(CastlingMode::Standard).to_string() == m.to_string())
            .unwrap();
        assert_eq!(
            san,
            San::from_move(sh, *shm).to_string(),
            "{ctx}: SAN of {m} in {fen}"
        );
        assert_eq!(
            pos.parse_move(&san).unwrap(),
            m,
            "{ctx}: reading SAN {san} in {fen}"
        );
    }
}

/// Plays random games; returns the number of positions compared.
fn run(positions: usize, seed: u64) -> usize {
    let mut rng = Rng(seed);
    let fens = start_fens();
    let mut compared = 0;
    let mut game = 0;
    while compared < positions {
        let fen = &fens[game % fens.len()];
        game += 1;
        let mut pos = Position::from_fen(fen).unwrap();
        let mut sh = shakmaty_pos(fen);
        for ply in 0..300 {
            compare(&pos, &sh, &format!("game {game} ply {ply} from {fen}"));
            compared += 1;
            let legal = pos.legal_moves();
            if legal.is_empty() || pos.is_game_over(Rules::International) {
                break;
            }
            let m = legal[rng.below(legal.len())];
            let shm = sh
                .legal_moves()
                .into_iter()
                .find(|x| x.to_uci(CastlingMode::Standard).to_string() == m.to_string())
                .unwrap();
            pos.play_unchecked(m);
            sh.play_unchecked(shm);
        }
    }
    compared
}

#[test]
fn random_playouts_agree_with_shakmaty() {
    let n = run(50_000, 0x1234_5678_9abc_def1);
    eprintln!("{n} positions compared with shakmaty");
}

#[test]
#[ignore = "ten million positions; run by hand and report"]
fn ten_million_positions_agree_with_shakmaty() {
    let n = run(10_000_000, 0x0bad_cafe_f00d_d00d);
    eprintln!("{n} positions compared with shakmaty");
}

#[test]
fn outcome_cases_file() {
    // Rows of tests/data/outcomes.tsv, with our documented choices on the
    // divergence rows.
    let mut rows = 0;
    for cols in data::rows(
        data::OUTCOMES,
        "fen\tlichess_scalachess\tshakmaty_0.30.1\tpython_chess_1.11.2\tdivergence",
    ) {
        let fen = cols[0];
        let pos = Position::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
        let got = pos.outcome(Rules::International);
        let expected = match fen {
            "8/8/8/8/8/6b1/4B3/8 w - - 0 1" | "6B1/8/8/8/1b6/8/8/5B2 b - - 0 1" => {
                Some(Outcome::Draw)
            }
            "8/p7/P7/8/8/8/8/8 b - - 0 1" | "8/8/Q7/8/8/8/6PR/8 b - - 0 1" => {
                Some(Outcome::Win(Color::Black))
            }
            // Unreachable: the side not to move has no pieces. Our choice:
            // that side has won.
            "8/8/8/8/8/8/8/R7 w - - 0 1" => Some(Outcome::Win(Color::Black)),
            // Castling rights dropped; an ordinary start-like position.
            f if f.starts_with("r3k2r/") => {
                assert_eq!(pos.legal_moves().len(), 23);
                None
            }
            // Everything else goes on (including the lichess-only
            // blocked-pawns draw, divergence row 4).
            _ => None,
        };
        assert_eq!(got, expected, "{fen}");
        rows += 1;
    }
    assert!(rows >= 17, "{rows} rows");
    // FICS: stalemate with pieces left by piece count.
    let pos = Position::from_fen("8/p7/P7/8/8/8/8/8 b - - 0 1").unwrap();
    assert_eq!(pos.outcome(Rules::Fics), Some(Outcome::Draw));
    let pos = Position::from_fen("8/p7/P7/8/8/8/8/7R b - - 0 1").unwrap();
    assert_eq!(pos.outcome(Rules::Fics), Some(Outcome::Win(Color::Black)));
    let pos = Position::from_fen("8/p7/P7/8/8/8/8/7r b - - 0 1").unwrap();
    assert!(pos.outcome(Rules::Fics).is_none());
    // Joint: the stalemated side wins with fewer pieces, else a draw.
    for (fen, want) in [
        ("8/p7/P7/8/8/8/8/7R b - - 0 1", Outcome::Win(Color::Black)),
        ("8/p7/P7/8/8/8/8/8 b - - 0 1", Outcome::Draw),
        ("8/p7/p7/P7/8/8/8/8 b - - 0 1", Outcome::Draw),
    ] {
        let pos = Position::from_fen(fen).unwrap();
        assert_eq!(pos.outcome(Rules::Joint), Some(want), "{fen}");
    }
    let pos = Position::from_fen("8/p7/p7/P7/8/8/8/8 b - - 0 1").unwrap();
    assert_eq!(pos.outcome(Rules::Fics), Some(Outcome::Win(Color::White)));
}
