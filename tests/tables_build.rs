//! Endgame tables: built, certified with shakmaty, and checked against a
//! direct search and known facts (issue 6).

use crate::util;
use antiproof::rules::{Color, Piece, Position, Role, Rules, Square};
use antiproof::tables::certify::{self, CertifyError};
use antiproof::tables::{Layout, Material, Table, TableSet, Tables, Value};
use shakmaty::Position as _;
use shakmaty::variant::Antichess;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// All 2- and 3-man tables of a rule set, built once per test run.
fn small_tables(rules: Rules) -> &'static Tables {
    static BUILT: [OnceLock<Tables>; Rules::ALL.len()] =
        [const { OnceLock::new() }; Rules::ALL.len()];
    let cell = &BUILT[rules.code() as usize];
    cell.get_or_init(|| {
        let t = Tables::open_building(util::temp_dir(&format!("small-{rules}")), rules);
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

fn certify_small(rules: Rules) {
    let tables = small_tables(rules);
    let materials = Material::all_up_to(3);
    assert_eq!(materials.len(), 21 + 126);
    let mut positions = 0;
    for m in &materials {
        let c = certify_one(tables, m).unwrap_or_else(|e| panic!("{rules} {m}: {e}"));
        positions += c.positions;
    }
    // Every table position of 2 and 3 men, both sides to move.
    assert!(positions > 10_000_000, "{positions}");
}

#[test]
fn all_2_and_3_man_tables_build_and_certify_international() {
    certify_small(Rules::International);
}

#[test]
fn all_2_and_3_man_tables_build_and_certify_fics() {
    certify_small(Rules::Fics);
}

#[test]
fn all_2_and_3_man_tables_build_and_certify_joint() {
    certify_small(Rules::Joint);
}

/// A joint win is a win under International and FICS alike, and a joint
/// loss a loss under both (distances may differ): entry by entry over every
/// 2- and 3-man table, whose indices are the same under every rule set.
#[test]
fn joint_tables_win_and_lose_only_where_both_others_do() {
    let [intl, fics, joint] = Rules::ALL.map(small_tables);
    let mut decided = 0u64;
    for m in Material::all_up_to(3) {
        let [i, f, j] = [intl, fics, joint].map(|t| t.table(&m).unwrap());
        let layout = Layout::new(&m);
        for index in 0..layout.size() {
            let [iv, fv, jv] = [&i, &f, &j].map(|t| t.value(index).wdl());
            if jv != Value::Draw.wdl() {
                assert!(iv == jv && fv == jv, "{m} index {index}");
                decided += 1;
            }
        }
    }
    assert!(decided > 1_000_000, "{decided}");
}

fn rules_pos(fen: &str) -> Position {
    Position::from_fen(fen).unwrap()
}

#[test]
fn known_facts_stalemate_and_game_ends() {
    let intl = small_tables(Rules::International);
    let fics = small_tables(Rules::Fics);
    // White's pawn is blocked: no legal move.
    let blocked = rules_pos("8/8/8/8/8/p7/P7/8 w - - 0 1");
    assert_eq!(intl.value(&blocked).unwrap(), Value::Win(0));
    assert_eq!(fics.value(&blocked).unwrap(), Value::Draw); // 1 v 1
    // Stalemated with fewer men: wins under both.
    let fewer = rules_pos("7k/8/8/8/8/p7/P7/8 w - - 0 1");
    assert_eq!(intl.value(&fewer).unwrap(), Value::Win(0));
    assert_eq!(fics.value(&fewer).unwrap(), Value::Win(0));
    // Stalemated with more men: FICS loss.
    let more = rules_pos("8/8/8/8/p7/P7/P7/8 w - - 0 1");
    assert_eq!(intl.value(&more).unwrap(), Value::Win(0));
    assert_eq!(fics.value(&more).unwrap(), Value::Loss(0));
    // The same, Black to move after the colours are swapped: tables of
    // the other orientation answer through the colour flip.
    let more_b = rules_pos("8/p7/p7/P7/8/8/8/8 b - - 0 1");
    assert_eq!(fics.value(&more_b).unwrap(), Value::Loss(0));
    // Joint: the stalemated side wins only with fewer men, else draws.
    let joint = small_tables(Rules::Joint);
    assert_eq!(joint.value(&blocked).unwrap(), Value::Draw);
    assert_eq!(joint.value(&fewer).unwrap(), Value::Win(0));
    assert_eq!(joint.value(&more).unwrap(), Value::Draw);
    assert_eq!(joint.value(&more_b).unwrap(), Value::Draw);
    // A lone king against a lone king: whoever moves must approach?
    // Not forced; but K v K with kings adjacent: the side to move must
    // capture and then has won (the other side has no men left... and
    // then moves with no men: the capturer loses).
    let adjacent = rules_pos("8/8/8/8/8/8/8/Kk6 w - - 0 1");
    // White must take; Black then has no men and, to move, wins.
    assert_eq!(intl.value(&adjacent).unwrap(), Value::Loss(1));
    // Opposite-coloured bishops can never meet: a draw.
    let bishops = rules_pos("8/8/8/8/8/8/8/Bb6 w - - 0 1");
    assert_eq!(intl.value(&bishops).unwrap(), Value::Draw);
}

#[test]
fn en_passant_positions_are_resolved_one_ply_ahead() {
    let intl = small_tables(Rules::International);
    // Black just played d7-d5; White must take en passant and leaves Black
    // without men: Black, to move, wins.
    let ep = rules_pos("8/8/8/3pP3/8/8/8/8 w - d6 0 1");
    assert!(ep.ep_square().is_some());
    assert_eq!(intl.value(&ep).unwrap(), Value::Loss(1));
    // Without the en-passant right the position is a table position and
    // White's only move is e5-e6, not a capture.
    let no_ep = rules_pos("8/8/8/3pP3/8/8/8/8 w - - 0 1");
    assert!(no_ep.ep_square().is_none());
    assert_eq!(
        intl.value(&no_ep).unwrap(),
        search_value(&no_ep, Rules::International, 9)
    );
    // Black to move: both d7-d6 and d7-d5 hand White a compulsory capture
    // that leaves Black without men.
    let before = rules_pos("8/3p4/8/4P3/8/8/8/8 b - - 0 1");
    assert_eq!(intl.value(&before).unwrap(), Value::Win(2));
}

// ---- A direct search with shakmaty, independent of the tables. ----

/// The game end of a position without moves, for the side to move.
fn no_moves(pos: &Antichess, rules: Rules) -> Value {
    let (us, them) = (pos.us().count(), pos.them().count());
    match rules {
        Rules::International => Value::Win(0),
        Rules::Fics if us < them => Value::Win(0),
        Rules::Fics if us > them => Value::Loss(0),
        Rules::Fics => Value::Draw,
        Rules::Joint if us < them => Value::Win(0),
        Rules::Joint => Value::Draw,
    }
}

/// Whether the side to move forces a win within `d` plies.
fn wins_within(pos: &Antichess, d: u16, rules: Rules) -> bool {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return no_moves(pos, rules) == Value::Win(0);
    }
    if d == 0 || pos.is_insufficient_material() {
        return false;
    }
    moves.iter().any(|m| {
        let mut c = pos.clone();
        c.play_unchecked(*m);
        loses_within(&c, d - 1, rules)
    })
}

/// Whether the side to move loses by force within `d` plies.
fn loses_within(pos: &Antichess, d: u16, rules: Rules) -> bool {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return no_moves(pos, rules) == Value::Loss(0);
    }
    if d == 0 || pos.is_insufficient_material() {
        return false;
    }
    moves.iter().all(|m| {
        let mut c = pos.clone();
        c.play_unchecked(*m);
        wins_within(&c, d - 1, rules)
    })
}

/// The value by iterative deepening up to `max` plies, or `Draw` if
/// neither side forces a win that soon.
fn search_value(pos: &Position, rules: Rules, max: u16) -> Value {
    let p = util::shak(pos);
    for d in 0..=max {
        if wins_within(&p, d, rules) {
            return Value::Win(d);
        }
        if loses_within(&p, d, rules) {
            return Value::Loss(d);
        }
    }
    Value::Draw
}

/// Rules positions of a material from its table indices, a few spread out.
fn sample(m: &Material, want: usize) -> Vec<Position> {
    let layout = Layout::new(m);
    let pieces = layout.slot_pieces();
    let mut out = Vec::new();
    let step = (layout.size() / (want as u64 * 4)).max(1) | 1;
    let mut i = 7;
    while i < layout.size() && out.len() < want * 4 {
        let (sq, used) = layout.decode(i);
        if used {
            let list = pieces.iter().enumerate().map(|(k, &(c, r))| {
                (
                    Square::new(sq.sq[k] as u32).unwrap(),
                    Piece {
                        color: Color::ALL[c],
                        role: Role::from_index(r).unwrap(),
                    },
                )
            });
            out.push(Position::from_pieces(list, Color::ALL[sq.stm], None).unwrap());
        }
        i += step;
    }
    out
}

fn agree_with_search(tables: &Tables, materials: &[Material], per: usize, max_depth: u16) -> usize {
    let rules = tables.rules();
    let mut checked = 0;
    for m in materials {
        let mut n = 0;
        for pos in sample(m, per * 8) {
            let v = tables.value(&pos).unwrap();
            // The checker's probe agrees with the prover's.
            let s = certify::probe_shakmaty(&util::shak(&pos), rules, tables).unwrap();
            assert_eq!(v, s, "{rules} {}", pos.to_fen());
            let deep = match v {
                Value::Win(d) | Value::Loss(d) => d,
                Value::Draw => 3,
            };
            if deep > max_depth {
                continue;
            }
            let search = search_value(&pos, rules, deep);
            let expect = if matches!(v, Value::Draw) {
                Value::Draw
            } else {
                v
            };
            assert_eq!(search, expect, "{rules} {m} {}", pos.to_fen());
            n += 1;
            checked += 1;
            if n == per {
                break;
            }
        }
    }
    checked
}

#[test]
fn small_table_values_agree_with_a_direct_search() {
    for rules in Rules::ALL {
        let tables = small_tables(rules);
        let n = agree_with_search(tables, &Material::all_up_to(3), 3, 5);
        assert!(n > 200, "{rules}: only {n} positions searched");
    }
}

#[test]
fn four_man_tables_pawnless_and_with_pawns() {
    // Built next to the shared 3-man tables, which they need.
    let tables = small_tables(Rules::International);
    let dir = tables.dir().to_path_buf();
    let materials: Vec<Material> = ["KBNvK", "KKKvP"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    for m in &materials {
        tables.table(m).unwrap();
    }
    // KBNvK has wins longer than 126 plies: its overflow list is used.
    let kbn = tables.table(&materials[0]).unwrap();
    assert!(kbn.header.stats.longest_win > 126 && kbn.header.overflow > 0);
    for m in [
        "KBNvK", "KKKvP", "KKKvQ", "KKKvR", "KKKvB", "KKKvN", "KKKvK",
    ] {
        let m: Material = m.parse().unwrap();
        certify_one(tables, &m).unwrap_or_else(|e| panic!("{m}: {e}"));
    }
    let n = agree_with_search(tables, &materials, 4, 5);
    assert!(n >= 6, "{n}");
    // Built once, then reused from the files.
    let again = Tables::open(&dir, Rules::International);
    let p = rules_pos("8/8/8/4p3/8/8/8/K1K1K3 w - - 0 1");
    assert_eq!(again.probe(&p), Some(tables.value(&p).unwrap()));
    // More than 4 men is an error, not a guess.
    let five = rules_pos("8/8/8/4p3/8/8/8/K1K1K1K1 w - - 0 1");
    assert!(tables.value(&five).is_err());
    assert_eq!(again.probe(&five), None);
}

#[test]
fn a_wrong_entry_is_rejected_and_named() {
    let tables = small_tables(Rules::International);
    let m: Material = "KvK".parse().unwrap();
    let t = tables.table(&m).unwrap();
    let mut data = t.bytes().to_vec();
    let layout = Layout::new(&m);
    let i = (0..layout.size())
        .find(|&i| {
            layout.decode(i).1 && matches!(Value::from_byte(data[i as usize]), Value::Win(_))
        })
        .unwrap();
    // Claim a longer win than the truth.
    data[i as usize] += 2;
    let bad = Arc::new(Table::from_data(
        layout,
        Rules::International,
        data,
        Vec::new(),
        t.header.stats,
    ));
    let err = certify::certify(&bad, &TableSet(vec![(m, bad.clone())])).unwrap_err();
    match err {
        CertifyError::Wrong { fen, index, .. } => {
            assert_eq!(index, i);
            assert!(fen.contains('K') && fen.contains('k'), "{fen}");
        }
        e => panic!("unexpected {e}"),
    }
}

/// The closure of a material under captures and promotions, the material
/// first.
fn closure(m: Material) -> Vec<Material> {
    let mut all = vec![m];
    let mut i = 0;
    while i < all.len() {
        for d in all[i].successors() {
            if !all.contains(&d) {
                all.push(d);
            }
        }
        i += 1;
    }
    all
}

/// A 4-man table where double steps allow en passant (a pawn on each
/// side): built with every table it leads to (21 of 4 men, about 60 MB),
/// its own entries certified, and the en-passant cases probed both ways.
#[test]
fn four_man_with_en_passant_kpvkp() {
    let tables = small_tables(Rules::International);
    let m: Material = "KPvKP".parse().unwrap();
    tables.table(&m).unwrap();
    let c = certify_one(tables, &m).unwrap_or_else(|e| panic!("{m}: {e}"));
    assert!(c.positions > 1_000_000, "{c:?}");
    // Black's d-pawn may step past White's e-pawn; the king is elsewhere.
    for fen in [
        "k7/3p4/8/4P3/8/8/8/7K b - - 0 1",
        "k7/8/8/3pP3/8/8/8/7K w - d6 0 1",
        "k7/8/8/8/3Pp3/8/8/7K b - d3 0 1",
    ] {
        let p = rules_pos(fen);
        let v = tables.value(&p).unwrap();
        let s = certify::probe_shakmaty(&util::shak(&p), Rules::International, tables).unwrap();
        assert_eq!(v, s, "{fen}");
        if v.dtw().is_some_and(|d| d <= 5) {
            assert_eq!(search_value(&p, Rules::International, 5), v, "{fen}");
        }
    }
    assert!(agree_with_search(tables, &[m], 6, 5) >= 3);
}

/// Every 4-man table below `KPvKP` certified too (minutes):
/// `cargo test --release --test tests tables_build::four_man_with_en_passant -- --ignored`.
#[test]
#[ignore]
fn four_man_with_en_passant_kpvkp_closure_certified() {
    let tables = small_tables(Rules::International);
    let all = closure("KPvKP".parse().unwrap());
    for m in all.iter().filter(|m| m.men() == 4) {
        certify_one(tables, m).unwrap_or_else(|e| panic!("{m}: {e}"));
    }
}

/// Every 4-man table under every rule set: slow (about an hour per rule
/// set on 2 cores), run by hand:
/// `cargo test --release --test tests tables_build:: -- --ignored --nocapture`.
#[test]
#[ignore]
fn all_4_man_tables_build_and_certify() {
    for rules in Rules::ALL {
        let dir = std::env::var_os("ANTIPROOF_TABLES_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| util::temp_dir(&format!("all4-{rules}")))
            .join(rules.name());
        let tables = Tables::open_building(&dir, rules);
        let all = Material::all_up_to(4);
        let start = std::time::Instant::now();
        for m in &all {
            tables.table(m).unwrap();
        }
        println!(
            "{rules}: built {} tables in {:.0}s",
            all.len(),
            start.elapsed().as_secs_f64()
        );
        let start = std::time::Instant::now();
        let (mut positions, mut moves) = (0u64, 0u64);
        for m in &all {
            let t0 = std::time::Instant::now();
            let c = certify_one(&tables, m).unwrap_or_else(|e| panic!("{rules} {m}: {e}"));
            positions += c.positions;
            moves += c.moves;
            if m.men() == 4 {
                println!(
                    "{rules}: certified {m} ({} positions, {} moves) in {:.1}s",
                    c.positions,
                    c.moves,
                    t0.elapsed().as_secs_f64()
                );
            }
        }
        println!(
            "{rules}: certified {} tables, {positions} positions, {moves} moves, in {:.0}s",
            all.len(),
            start.elapsed().as_secs_f64()
        );
        let n = agree_with_search(&tables, &Material::all_with_men(4), 1, 3);
        println!("{rules}: {n} positions agree with the direct search");
    }
}

/// The position behind the 2019 bug in Watkins' tables (reported by
/// Anatoli Shmarlouski, on Watkins' page): White pawns f5 and g2 against
/// Black pawns f4 and h4, White to move, was scored a win, though after
/// g2-g4 Black may take en passant with either pawn and h4xg3 holds. Our
/// table must say draw, and value both captures. Reads
/// `ANTIPROOF_TABLES_DIR` (as the all-4-man run leaves it) or builds the
/// `PPvPP` closure (231 four-man tables, minutes):
/// `cargo test --release --test tests tables_build::watkins_2019_double_en_passant -- --ignored`.
#[test]
#[ignore]
fn watkins_2019_double_en_passant_position_is_a_draw() {
    let dir = std::env::var_os("ANTIPROOF_TABLES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| util::temp_dir("double-ep"))
        .join(Rules::International.name());
    let tables = Tables::open_building(&dir, Rules::International);
    let white = rules_pos("8/8/8/5P2/5p1p/8/6P1/8 w - - 0 1");
    assert_eq!(tables.value(&white).unwrap(), Value::Draw);
    let after_g4 = rules_pos("8/8/8/5P2/5pPp/8/8/8 b - g3 0 1");
    assert_eq!(after_g4.legal_moves().len(), 2, "two en-passant captures");
    assert_eq!(tables.value(&after_g4).unwrap(), Value::Draw);
    let hxg3 = rules_pos("8/8/8/5P2/5p2/6p1/8/8 w - - 0 2");
    let fxg3 = rules_pos("8/8/8/5P2/7p/6p1/8/8 w - - 0 2");
    assert_eq!(tables.value(&hxg3).unwrap(), Value::Draw);
    assert!(matches!(tables.value(&fxg3).unwrap(), Value::Win(_)));
    // The checker's probe agrees.
    for p in [&white, &after_g4] {
        let s = certify::probe_shakmaty(&util::shak(p), Rules::International, &tables).unwrap();
        assert_eq!(s, Value::Draw);
    }
}
