//! Endgame tables under the fifty-move rule (issue 14): built, certified
//! with shakmaty, and checked position by position against a direct
//! brute-force search over (position, half-move clock) written here with
//! shakmaty alone.

use crate::util;
use antiproof::rules::{Position, Rules};
use antiproof::tables::certify::{self, CertifyError};
use antiproof::tables::{Material, TableSet, Tables, Value};
use antiproof::vocab::RuleSet;
use shakmaty::variant::Antichess;
use shakmaty::{Board, CastlingMode, Color, FromSetup, Piece, Role, Setup};
use std::sync::{Arc, OnceLock};

/// All 2- and 3-man tables under international rules with the fifty-move
/// rule, built once per test run.
fn small_fifty() -> &'static Tables {
    static BUILT: OnceLock<Tables> = OnceLock::new();
    BUILT.get_or_init(|| {
        let t = Tables::open_building(util::temp_dir("small"), RuleSet::LICHESS);
        for m in Material::all_up_to(3) {
            t.table(&m).unwrap();
        }
        t
    })
}

/// The plain (no fifty-move rule) 2- and 3-man tables.
fn small_plain() -> &'static Tables {
    static BUILT: OnceLock<Tables> = OnceLock::new();
    BUILT.get_or_init(|| {
        let t = Tables::open_building(util::temp_dir("plain"), Rules::International);
        for m in Material::all_up_to(3) {
            t.table(&m).unwrap();
        }
        t
    })
}

/// Certifies a table against itself and its successors.
fn certify_one(tables: &Tables, m: &Material) -> Result<certify::Certified, CertifyError> {
    let t = tables.table(m).unwrap();
    let mut set = vec![(*m, t.clone())];
    for d in m.successors() {
        set.push((d, tables.table(&d).unwrap()));
    }
    certify::certify(&t, &TableSet(set))
}

#[test]
fn all_2_and_3_man_fifty_tables_build_and_certify() {
    let tables = small_fifty();
    let mut positions = 0;
    for m in Material::all_up_to(3) {
        let t = tables.table(&m).unwrap();
        assert!(t.header.rule_set.fifty_move, "{m}");
        assert!(
            tables
                .path(&m)
                .to_string_lossy()
                .ends_with(".international_fifty.apt")
        );
        // No distance beyond the rule.
        assert!(t.header.stats.longest_win <= 100 && t.header.stats.longest_loss <= 100);
        let c = certify_one(tables, &m).unwrap_or_else(|e| panic!("{m}: {e}"));
        positions += c.positions;
    }
    assert!(positions > 10_000_000, "{positions}");
}

/// Every fifty-move decision is a plain decision of the same side (the
/// rule only takes wins away), and a table of one rule set is never read
/// as the other's.
#[test]
fn fifty_move_wins_are_plain_wins_and_files_do_not_mix() {
    let (fifty, plain) = (small_fifty(), small_plain());
    let (mut wins, mut cursed) = (0u64, 0u64);
    for m in Material::all_up_to(3) {
        let (f, p) = (fifty.table(&m).unwrap(), plain.table(&m).unwrap());
        for i in 0..f.layout.size() {
            match (f.value(i), p.value(i)) {
                // The next capture or pawn move comes no later than the end.
                (Value::Win(a), Value::Win(b)) if a <= b => wins += 1,
                (Value::Loss(a), Value::Loss(b)) if a <= b => {}
                (Value::Draw, Value::Draw) => {}
                (Value::Draw, Value::Win(_) | Value::Loss(_)) => cursed += 1,
                (a, b) => panic!("{m} index {i}: fifty {a}, plain {b}"),
            }
        }
    }
    assert!(wins > 1_000_000, "{wins}");
    // A win or loss within 100 plies is one under the rule (its game end
    // comes by then, whatever the clock does), and no 2- or 3-man
    // distance exceeds 68 plies: no cursed wins or blessed losses here.
    assert_eq!(cursed, 0);
    // A plain table in the fifty directory's place is refused.
    let m: Material = "KvK".parse().unwrap();
    let dir = util::temp_dir("mixed");
    std::fs::copy(plain.path(&m), dir.join("KvK.international_fifty.apt")).unwrap();
    let t = Tables::open(&dir, RuleSet::LICHESS);
    let e = t
        .table(&m)
        .err()
        .expect("a plain table is refused")
        .to_string();
    assert!(e.contains("international rules"), "{e}");
}

mod brute;
use brute::{Brute, Counts, Search, position, sign, slots};

/// Checks every position of `materials` (and of every material their
/// captures and promotions lead to that the brute force solved) against
/// the tables; the number of positions compared.
fn brute_force_agrees(materials: &[&str]) -> u64 {
    let tables = small_fifty();
    let mut brute = Brute::default();
    for name in materials {
        let m: Material = name.parse().unwrap();
        let mut c = [[0u8; 6]; 2];
        for (ci, side) in m.counts.iter().enumerate() {
            for (ri, &n) in side.iter().enumerate() {
                // Material's role order is the rules' (P N B R Q K), as shakmaty's.
                c[ci][ri] = n;
            }
        }
        brute.solve(c);
    }
    let mut compared = 0u64;
    let solved: Vec<(Counts, Arc<Vec<Option<Value>>>)> =
        brute.memo.iter().map(|(k, v)| (*k, v.clone())).collect();
    for (m, vals) in solved {
        let s = slots(&m);
        for (idx, v) in vals.iter().enumerate() {
            let Some(v) = v else { continue };
            let pos = position(idx, &s).unwrap();
            let t = certify::probe_shakmaty(&pos, RuleSet::LICHESS, tables).unwrap();
            assert_eq!(
                t,
                *v,
                "{}",
                shakmaty::fen::Fen::from_position(&pos, shakmaty::EnPassantMode::Legal)
            );
            compared += 1;
        }
    }
    compared
}

#[test]
fn brute_force_over_the_clock_agrees_pawnless() {
    let n = brute_force_agrees(&["KNvK", "RvKQ"]);
    eprintln!("brute force, KNvK RvKQ and what they lead to: {n} positions agree");
    assert!(n > 100_000, "{n}");
}

#[test]
fn brute_force_over_the_clock_agrees_with_pawns() {
    let n = brute_force_agrees(&["KvKP", "PvP"]);
    eprintln!("brute force, KvKP PvP and what they lead to: {n} positions agree");
    assert!(n > 100_000, "{n}");
}

/// The fifty-move value of a FEN, from the tables.
fn fifty_value(tables: &Tables, fen: &str) -> Value {
    tables.value(&Position::from_fen(fen).unwrap()).unwrap()
}

#[test]
fn game_ends_and_en_passant_under_the_rule() {
    let t = small_fifty();
    // No men left for White to move: White has won, at any clock.
    assert_eq!(fifty_value(t, "8/8/8/8/8/8/8/k7 w - - 0 1"), Value::Win(0));
    // Black to move: both pawn moves force White's capture, after which
    // Black has no men: each pawn move wins at once under the rule.
    assert_eq!(
        fifty_value(t, "8/3p4/8/4P3/8/8/8/8 b - - 0 1"),
        Value::Win(1)
    );
    assert!(Value::Win(1).decisive_at(99) && !Value::Win(1).decisive_at(100));
    assert!(Value::Win(0).decisive_at(100));
}

// ---------------------------------------------------------------------
// The command line.

fn run(args: &[&str]) -> (i32, String, String) {
    let out = util::command()
        .env("ANTIPROOF_STATE_DIR", util::test_state_dir())
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn probe_json_under_the_rule_honours_the_clock() {
    let dir = util::temp_dir("cli-probe");
    let d = dir.to_str().unwrap();
    let probe = |fen: &str| {
        let (code, out, err) = run(&[
            "tables",
            "probe",
            "--dir",
            d,
            "--fifty-move-rule",
            "--json",
            fen,
        ]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<serde_json::Value>(out.trim()).unwrap()
    };
    // Black to move: either pawn move forces White's capture, after which
    // Black has no men: a win, the pawn move itself resetting the clock.
    let j = probe("8/3p4/8/4P3/8/8/8/8 b - - 0 1");
    assert_eq!(j["rules"], "international+fifty");
    assert_eq!(
        (j["wdl"].clone(), j["dtz"].clone(), j["clock"].clone()),
        ("win".into(), 1.into(), 0.into())
    );
    for m in j["moves"].as_array().unwrap() {
        assert_eq!(
            (m["wdl"].clone(), m["dtz"].clone()),
            ("win".into(), 1.into())
        );
    }
    assert!(dir.join("PvP.international_fifty.apt").exists());
    // The 100th ply still counts; at 100 the game is drawn already.
    let j = probe("8/3p4/8/4P3/8/8/8/8 b - - 99 80");
    assert_eq!(
        (j["wdl"].clone(), j["dtz"].clone()),
        ("win".into(), 1.into())
    );
    let j = probe("8/3p4/8/4P3/8/8/8/8 b - - 100 80");
    assert_eq!(
        (j["wdl"].clone(), j["clock"].clone()),
        ("draw".into(), 100.into())
    );
    assert!(j["dtz"].is_null());
    assert!(
        j["moves"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["wdl"] == "draw")
    );
    // A game end counts at any clock: White has no men and has won.
    let j = probe("8/8/8/8/8/8/8/k7 w - - 100 80");
    assert_eq!(
        (j["wdl"].clone(), j["dtz"].clone()),
        ("win".into(), 0.into())
    );
    // `--rules lichess` is the same rule set; text output names the clock.
    let (code, out, err) = run(&[
        "tables",
        "probe",
        "--dir",
        d,
        "--rules",
        "lichess",
        "8/3p4/8/4P3/8/8/8/8 b - - 7 80",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("rules international+fifty, halfmove clock 7: win, 1 plies"),
        "{out}"
    );
}

#[test]
fn probe_refuses_a_bad_halfmove_clock_under_the_rule() {
    let dir = util::temp_dir("cli-bad");
    let d = dir.to_str().unwrap();
    for (fen, says) in [
        ("8/3p4/8/4P3/8/8/8/8 b - - x 1", "halfmove clock"),
        ("8/3p4/8/4P3/8/8/8/8 b - - 101 1", "halfmove clock 101"),
    ] {
        let (code, _, err) = run(&["tables", "probe", "--dir", d, "--fifty-move-rule", fen]);
        assert_eq!(code, 2, "{fen}: {err}");
        assert!(err.contains(says), "{fen}: {err}");
    }
}

#[test]
fn build_and_verify_on_the_command_line() {
    let dir = util::temp_dir("cli-build");
    let d = dir.to_str().unwrap();
    let (code, out, err) = run(&["tables", "build", "--dir", d, "--fifty-move-rule", "KNvK"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("rules international+fifty"), "{out}");
    assert!(dir.join("KNvK.international_fifty.apt").exists());
    assert!(!dir.join("KNvK.international.apt").exists());
    let (code, out, err) = run(&[
        "tables",
        "verify",
        "--dir",
        d,
        "--rules",
        "international+fifty",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("verified") && out.contains("international+fifty"),
        "{out}"
    );
    // The plain rule set finds no tables of its own there.
    let (code, _, err) = run(&["tables", "verify", "--dir", d]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no tables of rules international"), "{err}");
}

/// The FEN of a table index.
fn fen_of(t: &antiproof::tables::Table, i: u64) -> String {
    let sq = t.layout.squares(i);
    let mut board = Board::empty();
    for (j, (c, r)) in t.layout.slot_pieces().into_iter().enumerate() {
        let color = if c == 0 { Color::White } else { Color::Black };
        board.set_piece_at(
            shakmaty::Square::new(sq.sq[j] as u32),
            Piece {
                color,
                role: Role::ALL[r],
            },
        );
    }
    let mut setup = Setup::empty();
    setup.board = board;
    setup.turn = if sq.stm == 0 {
        Color::White
    } else {
        Color::Black
    };
    let pos = Antichess::from_setup(setup, CastlingMode::Standard).unwrap();
    shakmaty::fen::Fen::from_position(&pos, shakmaty::EnPassantMode::Legal).to_string()
}

/// `KKNvK` has wins of 106 plies without the rule: a handful are longer
/// than the rule allows between captures (cursed wins, and blessed losses
/// on the other side), drawn under it.
#[test]
fn cursed_wins_in_kknvk() {
    let m: Material = "KKNvK".parse().unwrap();
    let (fifty, plain) = (small_fifty(), small_plain());
    let (f, p) = (fifty.table(&m).unwrap(), plain.table(&m).unwrap());
    let (mut cursed, mut blessed) = (Vec::new(), 0);
    for i in 0..f.layout.size() {
        match (f.value(i), p.value(i)) {
            (Value::Draw, Value::Win(n)) if n > 100 => cursed.push(i),
            (Value::Draw, Value::Loss(n)) if n > 100 => blessed += 1,
            (Value::Draw, Value::Win(_) | Value::Loss(_)) => panic!("{}", fen_of(&f, i)),
            _ => {}
        }
    }
    let fens: Vec<String> = cursed.iter().map(|&i| fen_of(&f, i)).collect();
    assert_eq!((cursed.len(), blessed), (5, 8), "{fens:?}");
    // One of them, pinned: White wins in 106 plies without the rule, and
    // every line needs more than 100 plies before the next capture.
    let fen = "8/N7/8/8/8/8/K2K4/5k2 w - - 0 1";
    assert!(fens.iter().any(|f| f == fen), "{fens:?}");
    assert_eq!(fifty_value(plain, fen), Value::Win(106));
    assert_eq!(fifty_value(fifty, fen), Value::Draw);
    let pos: Antichess = shakmaty::fen::Fen::from_ascii(fen.as_bytes())
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap();
    assert_eq!(
        certify::probe_shakmaty(&pos, RuleSet::LICHESS, fifty).unwrap(),
        Value::Draw
    );
    certify_one(fifty, &m).unwrap();
}

/// The checker's view: fifty-move tables score leaves and are certified
/// under the rule; plain files are not read for it.
#[test]
fn leaf_tables_read_and_certify_the_fifty_move_tables() {
    use antiproof::check::leaf_tables::LeafTables;
    let fifty = small_fifty();
    let leaves = LeafTables::open(fifty.dir(), RuleSet::LICHESS).records_in(None);
    assert!(leaves.fifty_move());
    let pos: Antichess = shakmaty::fen::Fen::from_ascii(b"8/3p4/8/4P3/8/8/8/8 b - - 0 1")
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap();
    assert_eq!(leaves.score(&pos).unwrap(), Value::Win(1));
    let used = leaves.certify_used().unwrap();
    assert_eq!(used.used, vec!["PvP".to_string()]);
    assert!(used.positions > 0);
    // The plain tables' directory has no fifty-move files.
    let plain = LeafTables::open(small_plain().dir(), RuleSet::LICHESS).records_in(None);
    assert!(plain.score(&pos).is_err());
    assert_eq!(plain.missing(), vec!["PvP".to_string()]);
}

/// `KBNvK` (wins up to 148 plies without the rule), sampled: every
/// 4,999th index whose entry is decided within 6 plies is searched at the
/// last clock it claims (decided the same way) and the next (drawn), and
/// sampled draws find no decision within 6 plies of the end.
#[test]
fn sampled_kbnvk_agrees_with_a_search_over_the_clock() {
    let m: Material = "KBNvK".parse().unwrap();
    let t = small_fifty().table(&m).unwrap();
    let mut brute = Brute::default();
    let mut search = Search::new(&mut brute);
    let (mut decided, mut draws) = ([0u32; 7], 0u32);
    for i in (0..t.layout.size()).step_by(4999) {
        if !t.layout.decode(i).1 {
            continue;
        }
        let v = t.value(i);
        let pos: Antichess = shakmaty::fen::Fen::from_ascii(fen_of(&t, i).as_bytes())
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        match v {
            Value::Win(n) | Value::Loss(n) if n <= 6 => {
                let c = 100 - n as u32;
                assert_eq!(search.value(&pos, c), sign(v), "{} at {c}", fen_of(&t, i));
                if n > 0 {
                    assert_eq!(
                        search.value(&pos, c + 1),
                        0,
                        "{} at {}",
                        fen_of(&t, i),
                        c + 1
                    );
                }
                decided[n as usize] += 1;
            }
            Value::Draw if draws < 200 => {
                assert_eq!(search.value(&pos, 94), 0, "{}", fen_of(&t, i));
                draws += 1;
            }
            _ => {}
        }
    }
    eprintln!(
        "KBNvK sampled: decided by distance 0..=6 {decided:?}, draws {draws}, {} searched (position, clock) pairs",
        search.nodes()
    );
    let total: u32 = decided.iter().sum();
    assert!(
        total > 400 && decided[1] > 0 && decided[2] > 0 && draws == 200,
        "{decided:?} {draws}"
    );
}
