//! Property tests of the parsers: no input makes the FEN, EPD, UCI, SAN,
//! line or packed-position readers panic, and whatever they accept round
//! trips. Inputs are random bytes, random tokens and mutations of valid
//! FENs and moves (a seeded generator, so failures reproduce).

use crate::util::Rng;
use antiproof::rules::{PACKED_LEN, PackedPosition, Position, UciMove};

const SEEDS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1",
    "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b - e3 0 3",
    "8/P7/8/8/8/8/8/7k w - - 0 1",
    "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1",
    "8/8/8/8/1pPp4/8/8/8 b - c3 0 1",
];

const ALPHABET: &[u8] = b"rnbqkpRNBQKP12345678/ -wbKQkqabcdefgh0x=+#.e\t\n\xc3\xa9";

fn mutate(rng: &mut Rng, s: &str) -> String {
    let mut b = s.as_bytes().to_vec();
    for _ in 0..1 + rng.below(4) {
        match rng.below(4) {
            0 if !b.is_empty() => {
                let i = rng.below(b.len());
                b.remove(i);
            }
            1 => {
                let i = rng.below(b.len() + 1);
                b.insert(i, ALPHABET[rng.below(ALPHABET.len())]);
            }
            2 if !b.is_empty() => {
                let i = rng.below(b.len());
                b[i] = ALPHABET[rng.below(ALPHABET.len())];
            }
            _ => {
                let i = rng.below(b.len() + 1);
                b.truncate(i);
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn random_string(rng: &mut Rng) -> String {
    let len = rng.below(40);
    let b: Vec<u8> = (0..len)
        .map(|_| ALPHABET[rng.below(ALPHABET.len())])
        .collect();
    String::from_utf8_lossy(&b).into_owned()
}

#[test]
fn fen_and_epd_readers_never_panic_and_round_trip() {
    let mut rng = Rng(0xfeed_f00d_1234_5678);
    let mut accepted = 0;
    for i in 0..200_000 {
        let s = if i % 4 == 0 {
            random_string(&mut rng)
        } else {
            let seed = SEEDS[rng.below(SEEDS.len())];
            mutate(&mut rng, seed)
        };
        for parsed in [Position::from_fen(&s), Position::from_epd(&s)] {
            match parsed {
                Ok(pos) => {
                    accepted += 1;
                    let again = Position::from_fen(&pos.to_fen()).expect("own FEN reads back");
                    assert_eq!(again, pos, "{s:?}");
                    assert_eq!(again.to_fen(), pos.to_fen());
                    assert_eq!(Position::unpack(&pos.pack()).unwrap(), pos);
                }
                Err(e) => {
                    assert!(!e.to_string().is_empty());
                }
            }
        }
    }
    assert!(accepted > 1000, "only {accepted} mutated FENs accepted");
}

#[test]
fn move_and_line_readers_never_panic() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    let positions: Vec<Position> = SEEDS
        .iter()
        .map(|f| Position::from_fen(f).unwrap())
        .collect();
    let seeds = [
        "e2e4", "e7e8k", "Nf3", "exd3", "a8=K", "Qxd8", "e.p.", "O-O", "Kd1", "bxc3",
    ];
    for i in 0..200_000 {
        let s = if i % 3 == 0 {
            random_string(&mut rng)
        } else {
            let seed = seeds[rng.below(seeds.len())];
            mutate(&mut rng, seed)
        };
        let pos = &positions[rng.below(positions.len())];
        if let Ok(m) = pos.parse_move(&s) {
            assert!(pos.legal_moves().contains(&m));
            assert_eq!(pos.parse_move(&pos.san(m)).unwrap(), m);
        }
        if let Some(u) = UciMove::parse(&s) {
            assert_eq!(UciMove::parse(&u.to_string()), Some(u));
        }
        let _ = UciMove::from_watkins(antiproof::vocab::MoveCode::from_raw(rng.next() as u16));
        let _ = pos.play_line_str(&s);
        let _ = antiproof::vocab::line::tokens(&[&s]);
    }
}

#[test]
fn packed_reader_never_panics_and_accepts_only_canonical_bytes() {
    let mut rng = Rng(0xdead_beef_0bad_f00d);
    let start = Position::startpos().pack();
    let mut accepted = 0;
    for i in 0..300_000 {
        let mut b = [0u8; PACKED_LEN];
        if i % 2 == 0 {
            b = start.0;
            for _ in 0..1 + rng.below(3) {
                b[rng.below(PACKED_LEN)] ^= 1 << rng.below(8);
            }
        } else {
            for x in b.iter_mut() {
                *x = rng.next() as u8;
            }
            // Sparse occupancies decode more often.
            let occ = rng.next() & rng.next() & rng.next();
            b[1..9].copy_from_slice(&occ.to_be_bytes());
        }
        let p = PackedPosition(b);
        if let Ok(pos) = p.unpack() {
            accepted += 1;
            assert_eq!(pos.pack(), p, "non-canonical bytes accepted: {p:?}");
        }
    }
    assert!(accepted > 100, "{accepted}");
}
