//! `antiproof prove` as a process: exit codes, bad input, JSON, a SIGKILL in
//! the middle of a run and a Ctrl-C (SIGINT) stop, SIGTERM and SIGHUP
//! stopping alike.

use crate::util::{self, temp_db, walk};
use antiproof::rules::Color;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// `prove` with `args` on 1.e3 d5 is refused: exit 2, the message naming
/// `word`.
#[track_caller]
fn refused(db: &Path, args: &[&str], word: &str) {
    let o = prove(db, &[args, &["e3", "d5"]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", util::stderr(&o));
    assert!(util::stderr(&o).contains(word), "{}", util::stderr(&o));
}

fn prove(db: &Path, extra: &[&str]) -> Output {
    util::command()
        .arg("prove")
        .arg("--db")
        .arg(db)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn proves_a_rung_with_a_json_summary() {
    let db = temp_db("cli-json");
    let o = prove(&db, &["--json", "e3", "d5"]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let v = util::json(&o);
    assert_eq!(v["result"], "proven");
    assert_eq!(v["winner"], "white");
    assert_eq!(v["winning_move"], "Qg4");
    assert_eq!(v["rules"], "international");
    assert!(v["proof_positions"].as_u64().unwrap() > 0);
    assert!(v["peak_memory_bytes"].as_u64().unwrap() > 0);
    assert!(
        v["root_fen"]
            .as_str()
            .unwrap()
            .starts_with("rnbqkbnr/ppp1pppp/8/3p4/8/4P3/")
    );
    // The text summary, from the store this time.
    let o = prove(&db, &["e2e3", "d7d5"]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("proven: white wins"), "{out}");
    assert!(out.contains("winning move:    Qg4"), "{out}");
    assert!(out.contains("rules:           international"), "{out}");
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

/// Rung 6 (1.e3 Na6) with `--smaller-proof`: the winner's other moves are
/// proven where they could replace bigger parts of the proof; the stored
/// proof ends smaller than the greedy passes leave it (3,074 positions),
/// closes, and its certificate is certified with exactly those positions.
/// Asked again on a store that holds the greedy proof, the flag shrinks
/// that proof.
#[test]
fn smaller_proof_proves_alternatives_and_the_proof_stays_certified() {
    let db = temp_db("cli-smaller");
    let o = prove(&db, &["--json", "--smaller-proof", "e3", "Na6"]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let v = util::json(&o);
    assert_eq!(v["result"], "proven");
    let positions = v["proof_positions"].as_u64().unwrap();
    let alt = &v["alternatives"];
    assert!(alt["proven"].as_u64().unwrap() > 0, "{v}");
    assert!(alt["rewritten"].as_u64().unwrap() > 0, "{v}");
    assert!(positions < 3_000, "{positions}");
    // The nodes of those searches are reported apart.
    assert_eq!(v["nodes"].as_u64(), Some(BASE_NODES_E3_NA6), "{v}");
    assert_eq!(walk(&db, "e3 Na6", Color::White) as u64, positions);
    let out = export_and_certify(&db, &["e3", "Na6"]);
    assert!(
        out.contains(&format!("positions:   {positions} distinct")),
        "{out}"
    );
    // Without the flag, no such pass.
    let db2 = temp_db("cli-smaller-off");
    let o = prove(&db2, &["--json", "e3", "Na6"]);
    let v = util::json(&o);
    assert!(v["alternatives"].is_null(), "{v}");
    let greedy = v["proof_positions"].as_u64().unwrap();
    assert!(greedy > positions, "{v}");
    // Asked with the flag on a line the store has proven: the passes run
    // over the stored proof (a run stopped in them goes on this way).
    let o = prove(&db2, &["--json", "--smaller-proof", "e3", "Na6"]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let v = util::json(&o);
    assert_eq!(v["result"], "proven");
    assert_eq!(v["alternatives"]["stopped"], false, "{v}");
    assert!(v["alternatives"]["rewritten"].as_u64().unwrap() > 0, "{v}");
    let again = v["proof_positions"].as_u64().unwrap();
    assert!(again < greedy, "{v}");
    assert_eq!(walk(&db2, "e3 Na6", Color::White) as u64, again);
    let out = export_and_certify(&db2, &["e3", "Na6"]);
    assert!(
        out.contains(&format!("positions:   {again} distinct")),
        "{out}"
    );
    // Not with the job executors, nor under the fifty-move rule: refused.
    for extra in [
        &["--rules", "lichess"][..],
        &["--jobs", "2", "--executor", "local"],
    ] {
        refused(
            &db2,
            &[&["--smaller-proof"][..], extra].concat(),
            "--smaller-proof",
        );
    }
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
    std::fs::remove_dir_all(db2.parent().unwrap()).unwrap();
}

/// `--seed`: ties broken in another order, another search and another
/// proof, certified like any; the seed is in the summary; 0 is the
/// default order. Not with the job executors.
#[test]
fn a_seed_searches_in_another_order_and_its_proof_is_certified() {
    let db = temp_db("cli-seed");
    let o = prove(&db, &["--json", "--seed", "4", "e3", "Na6"]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let v = util::json(&o);
    assert_eq!(v["result"], "proven");
    assert_eq!(v["seed"], 4);
    assert_ne!(v["nodes"].as_u64(), Some(BASE_NODES_E3_NA6), "{v}");
    let positions = v["proof_positions"].as_u64().unwrap();
    assert_eq!(walk(&db, "e3 Na6", Color::White) as u64, positions);
    let out = export_and_certify(&db, &["e3", "Na6"]);
    assert!(
        out.contains(&format!("positions:   {positions} distinct")),
        "{out}"
    );
    let o = prove(&db, &["e3", "d5", "--seed", "9"]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("seed:            9"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let db2 = temp_db("cli-seed-0");
    let v = util::json(&prove(&db2, &["--json", "--seed", "0", "e3", "Na6"]));
    assert_eq!(v["seed"], 0);
    assert_eq!(v["nodes"].as_u64(), Some(BASE_NODES_E3_NA6), "{v}");
    for bad in [
        &["--seed=-1"][..],
        &["--seed", "x"],
        &["--seed", "3", "--jobs", "2", "--executor", "local"],
    ] {
        refused(&db2, bad, "seed");
    }
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
    std::fs::remove_dir_all(db2.parent().unwrap()).unwrap();
}

/// Nodes of rung 6 (1.e3 Na6) in the default order, one thread.
const BASE_NODES_E3_NA6: u64 = 427_338;

/// Rung 6 (1.e3 Na6): the pass over the stored proof takes moves into
/// positions the proof holds anyway (3,090 positions as extracted, fewer
/// after); the exported certificate has exactly the reported positions
/// and is certified; asked again, the store answers with the same proof.
#[test]
fn the_stored_proof_is_shrunk_and_still_certified() {
    let db = temp_db("cli-shrink");
    let o = prove(&db, &["--json", "e3", "Na6"]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let v = util::json(&o);
    assert_eq!(v["result"], "proven");
    let positions = v["proof_positions"].as_u64().unwrap();
    let before = v["shrink_before"].as_u64().unwrap();
    assert!(v["shrink_rewritten"].as_u64().unwrap() > 0, "{v}");
    assert!(positions < before, "{positions} >= {before}");
    assert!(v["shrink_s"].as_f64().unwrap() <= v["time_s"].as_f64().unwrap());
    assert!(v["extract_s"].as_f64().unwrap() <= v["time_s"].as_f64().unwrap());
    assert_eq!(walk(&db, "e3 Na6", Color::White) as u64, positions);
    let out = export_and_certify(&db, &["e3", "Na6"]);
    assert!(
        out.contains(&format!("positions:   {positions} distinct")),
        "{out}"
    );
    let o = prove(&db, &["--json", "e3", "Na6"]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    assert_eq!(util::json(&o)["proof_positions"].as_u64(), Some(positions));
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

#[test]
fn a_side_that_cannot_win_exits_1_and_a_limit_exits_3() {
    let db = temp_db("cli-codes");
    let o = prove(&db, &["--winner", "black", "e3", "d5", "Qg4"]);
    assert_eq!(o.status.code(), Some(1), "{}", util::stderr(&o));
    let o = prove(&db, &["--limit", "2000 nodes", "e3", "g6"]);
    assert_eq!(o.status.code(), Some(3), "{}", util::stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("stopped"));
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

/// The default winner is the side to move; where that goes against the
/// published result of the first move, a note names `--winner` for the
/// other side, and the search still runs for the default.
#[test]
fn a_default_winner_against_the_published_result_gets_a_note() {
    let db = temp_db("cli-note");
    let o = prove(&db, &["--json", "--limit", "2000 nodes", "h3", "Nh6"]);
    assert_eq!(o.status.code(), Some(3), "{}", util::stderr(&o));
    assert_eq!(util::json(&o)["winner"], "white");
    let e = util::stderr(&o);
    assert!(e.contains("1.h3 is published as a win for Black"), "{e}");
    assert!(e.contains("--winner black"), "{e}");
    // Not when the side is given, nor when the default agrees.
    for args in [
        &["--winner", "white", "--limit", "2000 nodes", "h3", "Nh6"][..],
        &["--limit", "2000 nodes", "h3"][..],
        &["e3", "d5"][..],
    ] {
        let o = prove(&db, args);
        assert!(
            !util::stderr(&o).contains("note:"),
            "{args:?}: {}",
            util::stderr(&o)
        );
    }
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

fn bad(db: &Path, extra: &[&str], expect: &[&str]) {
    let o = prove(db, extra);
    assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", util::stderr(&o));
    let e = util::stderr(&o);
    for x in expect {
        assert!(e.contains(x), "{extra:?}: {e:?} lacks {x:?}");
    }
}

#[test]
fn bad_input_exits_2_with_a_clear_message() {
    let db = temp_db("cli-bad");
    bad(&db, &["e3", "zz9"], &["ply 2", "\"zz9\" is not a move"]);
    bad(&db, &["e3", "e5", "e5"], &["ply 3", "legal moves"]);
    bad(
        &db,
        &["--fen", "8/8/8/8/8/8/8/K7 b - - 0 1"],
        &["already over"],
    );
    bad(&db, &["--limit", "soon", "e4"], &["--limit"]);
    bad(&db, &["--memory", "lots", "e4"], &["--memory"]);
    bad(&db, &["--rules", "atomic", "e4"], &["rule set"]);
    bad(&db, &["--winner", "green", "e4"], &["--winner"]);
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

#[test]
fn a_store_of_another_schema_version_is_refused() {
    let db = temp_db("cli-schema");
    {
        let d = redb::Database::create(&db).unwrap();
        let tx = d.begin_write().unwrap();
        {
            let meta: redb::TableDefinition<&str, &[u8]> = redb::TableDefinition::new("meta");
            let mut t = tx.open_table(meta).unwrap();
            t.insert("schema", 99u32.to_le_bytes().as_slice()).unwrap();
        }
        tx.commit().unwrap();
    }
    bad(&db, &["e3", "d5"], &["schema version 99"]);
    std::fs::write(&db, b"not a database at all, just text").unwrap();
    bad(&db, &["e3", "d5"], &["proof store"]);
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

/// Starts a run with frequent checkpoints and returns it after `after`.
fn start_slow_run(db: &Path, after: Duration) -> std::process::Child {
    let child = util::command()
        .args(["prove", "--checkpoint-size", "300", "--db"])
        .arg(db)
        .args(["e3", "g6"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    child
}

#[test]
fn a_killed_run_leaves_a_store_that_opens_and_the_next_run_finishes() {
    let db = temp_db("cli-kill");
    let t = Instant::now();
    let mut child = start_slow_run(&db, Duration::from_millis(700));
    let finished_early = child.try_wait().unwrap().is_some();
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    if !finished_early {
        let s = antiproof::store::Store::open_existing(&db).unwrap();
        let _ = s.len(antiproof::store::Rules::International).unwrap();
    }
    let o = prove(&db, &["--json", "e3", "g6"]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let v = util::json(&o);
    assert_eq!(v["winning_move"], "Qh5");
    walk(&db, "e3 g6", Color::White);
    eprintln!("kill test took {:?}", t.elapsed());
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

#[test]
fn ctrl_c_stops_with_exit_3_and_the_next_run_continues() {
    let db = temp_db("cli-int");
    let child = start_slow_run(&db, Duration::from_millis(500));
    // SAFETY: signals our own child process by its id.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let o = child.wait_with_output().unwrap();
    // Exit 3 when stopped; 0 if it had already finished.
    assert!(
        matches!(o.status.code(), Some(0) | Some(3)),
        "{}",
        util::stderr(&o)
    );
    let o = prove(&db, &["--json", "e3", "g6"]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    walk(&db, "e3 g6", Color::White);
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

#[test]
fn sigterm_and_sighup_stop_like_ctrl_c_and_save_the_tt() {
    for (name, signal) in [("term", libc::SIGTERM), ("hup", libc::SIGHUP)] {
        let db = temp_db(&format!("cli-sig{name}"));
        let child = start_slow_run(&db, Duration::from_millis(500));
        // SAFETY: signals our own child process by its id.
        unsafe {
            libc::kill(child.id() as i32, signal);
        }
        let o = child.wait_with_output().unwrap();
        // Exit 3 when stopped (the tt saved); 0 if it had already finished.
        let mut tt = db.as_os_str().to_os_string();
        tt.push(".table");
        match o.status.code() {
            Some(3) => assert!(std::path::Path::new(&tt).exists(), "SIG{name}: tt saved"),
            Some(0) => {}
            c => panic!("SIG{name}: exit {c:?}: {}", util::stderr(&o)),
        }
        std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
    }
}

#[test]
fn a_stopped_search_saves_its_table_and_the_next_run_resumes_from_it() {
    let db = temp_db("cli-resume");
    let mut table = db.as_os_str().to_os_string();
    table.push(".table");
    let table = std::path::PathBuf::from(table);
    let o = prove(&db, &["--json", "--limit", "300000 nodes", "e3", "g6"]);
    assert_eq!(o.status.code(), Some(3), "{}", util::stderr(&o));
    assert!(table.exists(), "the table is saved");
    // The summary says where, and how large; the budget is called one.
    let bytes = std::fs::metadata(&table).unwrap().len();
    let v = util::json(&o);
    assert_eq!(v["saved_tt"], table.display().to_string());
    assert_eq!(v["saved_tt_bytes"], bytes);
    let o = prove(&db, &["--limit", "1000 nodes", "e3", "g6"]);
    assert_eq!(o.status.code(), Some(3), "{}", util::stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let bytes = std::fs::metadata(&table).unwrap().len();
    let saved = format!(
        "saved table:     {} ({:.1} MB)",
        table.display(),
        bytes as f64 / 1e6
    );
    assert!(text.contains(&saved), "{text}");
    assert!(
        text.contains("table budget:    1073.7 MB (--memory"),
        "{text}"
    );
    assert!(!text.contains("(tt "), "{text}");
    let o = prove(&db, &["--json", "e3", "g6"]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let v = util::json(&o);
    assert_eq!(v["resumed_table"], true);
    assert!(v["saved_tt"].is_null(), "{v}");
    assert_eq!(v["winning_move"], "Qh5");
    assert!(!table.exists(), "a finished search removes its table");
    walk(&db, "e3 g6", Color::White);
    // A table saved for another root is not loaded.
    let o = prove(&db, &["--limit", "1000 nodes", "e3", "Na6"]);
    assert_eq!(o.status.code(), Some(3), "{}", util::stderr(&o));
    let o = prove(&db, &["--json", "e3", "d6"]);
    assert_eq!(util::json(&o)["resumed_table"], false);
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

/// A stopped search says where it stands: every root move with its
/// numbers and replies proven, in the search's order, and the principal
/// line from the first of them: a legal line of open nodes, of which only
/// the last may be one the table holds no entry for. A finished search
/// gives neither.
#[test]
fn a_stopped_search_gives_its_root_moves_and_principal_line() {
    use antiproof::rules::Position;
    let db = temp_db("cli-standing");
    let o = prove(&db, &["--json", "--limit", "200000 nodes", "e3", "g6"]);
    assert_eq!(o.status.code(), Some(3), "{}", util::stderr(&o));
    let v = util::json(&o);
    let (root, _) = Position::startpos().play_line_str("e3 g6").unwrap();
    let moves = v["root_moves"].as_array().expect("root_moves");
    assert_eq!(moves.len(), root.legal_moves().len(), "{v}");
    // White moves at the root: best first by proof number.
    let pns: Vec<u64> = moves.iter().map(|m| m["pn"].as_u64().unwrap()).collect();
    assert!(pns.windows(2).all(|w| w[0] <= w[1]), "{pns:?}");
    assert_eq!(pns[0], v["root_pn"].as_u64().unwrap(), "{v}");
    for m in moves {
        let mv = root.parse_move(m["san"].as_str().unwrap()).unwrap();
        let child = root.play(mv);
        assert_eq!(m["replies"], child.legal_moves().len(), "{m}");
        assert!(m["replies_proven"].as_u64() <= m["replies"].as_u64(), "{m}");
        assert!(["open", "new", "proven", "disproven"].contains(&m["state"].as_str().unwrap()));
    }
    let line = v["principal_line"].as_array().expect("principal_line");
    assert!(!line.is_empty(), "{v}");
    assert_eq!(line[0]["san"], moves[0]["san"], "{v}");
    let mut pos = root;
    for (i, step) in line.iter().enumerate() {
        let state = step["state"].as_str().unwrap();
        assert!(
            state == "open" || (state == "new" && i == line.len() - 1),
            "{v}"
        );
        assert!(step.get("replies").is_none(), "{step}");
        pos = pos.play(pos.parse_move(step["san"].as_str().unwrap()).unwrap());
    }
    // The same in words, as the job-level summary gives its top tree's.
    let o = prove(&db, &["--limit", "1000 nodes", "e3", "g6"]);
    assert_eq!(o.status.code(), Some(3), "{}", util::stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("\nbest moves:      "), "{text}");
    assert!(text.contains("\nprincipal line:  "), "{text}");
    let o = prove(&db, &["--json", "e3", "g6"]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let v = util::json(&o);
    assert!(
        v["root_moves"].is_null() && v["principal_line"].is_null(),
        "{v}"
    );
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

/// A stopped search whose principal line wanders among moves that change
/// nothing says so, with what to try: rooks shuffled round a lone king
/// from 1.e3 Nc6 2.Ba6 bxa6 3.a4 Na5 4.b3 ... (international rules:
/// root proof number 5 for 845 M nodes). A line that keeps capturing gets
/// no hint.
#[test]
fn a_wandering_search_says_what_to_try() {
    let db = temp_db("cli-wander");
    let fen = "3R1R2/8/8/1P6/2P5/8/k2K4/8 b - - 0 36";
    let limit = ["--limit", "300000 nodes", "--winner", "white", "--fen", fen];
    let o = prove(&db, &[&["--json"][..], &limit].concat());
    assert_eq!(o.status.code(), Some(3), "{}", util::stderr(&o));
    let v = util::json(&o);
    let quiet = v["principal_line_quiet_plies"]
        .as_u64()
        .expect("quiet plies");
    assert!(quiet >= 40, "{v}");
    let o = prove(&db, &limit);
    let text = String::from_utf8_lossy(&o.stdout);
    let hint = text
        .lines()
        .find(|l| l.starts_with("hint:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        hint.contains("plies without a capture or pawn move"),
        "{hint}"
    );
    assert!(
        hint.contains("--tables DIR") && hint.contains("--fifty-move-rule"),
        "{hint}"
    );
    // Under the rule the hint names only the tables.
    let o = prove(&db, &[&["--fifty-move-rule"][..], &limit].concat());
    let text = String::from_utf8_lossy(&o.stdout);
    if let Some(hint) = text.lines().find(|l| l.starts_with("hint:")) {
        assert!(
            hint.contains("--tables DIR") && !hint.contains("--fifty-move-rule"),
            "{hint}"
        );
    }
    // The stretch is counted from the root: a root at half-move clock 60
    // does not lend the line its plies.
    let late = fen.replace(" 0 36", " 60 36");
    let o = prove(
        &db,
        &[
            "--json", "--limit", "50 nodes", "--winner", "white", "--fen", &late,
        ],
    );
    let v = util::json(&o);
    let plies = v["principal_line"]
        .as_array()
        .expect("principal_line")
        .len() as u64;
    assert!(
        v["principal_line_quiet_plies"].as_u64().unwrap() <= plies,
        "{v}"
    );
    // A line of captures: no hint.
    let o = prove(&db, &["--json", "--limit", "20000 nodes", "e3", "g6"]);
    let v = util::json(&o);
    assert!(
        v["principal_line_quiet_plies"].as_u64().unwrap() < 40,
        "{v}"
    );
    let o = prove(&db, &["--limit", "20000 nodes", "e3", "g6"]);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("hint:"));
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

/// What a stopped run proved is in the store: each root move it reports
/// proven is certified from the store. The root's moves and the answers
/// to them are written as they are proven; and when the run stops, the
/// walk of its table writes the rest, searching again (within a bound)
/// where an entry was lost. Before both, with a table too small to keep
/// their proofs (here 4 MB, 2 M nodes), none of the replies was stored,
/// and the next run had to prove them again. The hidden
/// `--checkpoint-plies 0` leaves them all to the stop's walk.
#[test]
fn a_stopped_search_keeps_the_replies_it_proved() {
    let line = ["e3", "b5", "Bxb5"];
    for plies in ["2", "0"] {
        let db = temp_db(&format!("cli-replies-kept-{plies}"));
        let mut args = vec!["--json", "--winner", "white", "--memory", "4M"];
        args.extend(["--limit", "2M nodes", "--checkpoint-plies", plies]);
        args.extend(line);
        let o = prove(&db, &args);
        assert_eq!(o.status.code(), Some(3), "{}", util::stderr(&o));
        let v = util::json(&o);
        let proven: Vec<&str> = v["root_moves"]
            .as_array()
            .expect("root_moves")
            .iter()
            .filter(|m| m["state"] == "proven")
            .map(|m| m["san"].as_str().unwrap())
            .collect();
        assert!(!proven.is_empty(), "{v}");
        for reply in proven {
            let mut after = line.to_vec();
            after.push(reply);
            util::assert_store_certified(&db, &after);
        }
        std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
    }
}

/// With standard error not a terminal, a running search writes a line
/// there every `--log-every` on where it stands; `--log-every` is a time,
/// and only for one line's search.
#[test]
fn a_search_in_the_background_logs_where_it_stands() {
    let db = temp_db("cli-log-every");
    let o = prove(&db, &["--limit", "2s", "--log-every", "300ms", "e3", "f5"]);
    assert_eq!(o.status.code(), Some(3), "{}", util::stderr(&o));
    let err = util::stderr(&o);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("antiproof: after "))
        .collect();
    assert!(!lines.is_empty(), "{err}");
    for l in &lines {
        assert!(l.contains(" nodes (") && l.contains(", root pn "), "{l}");
        // The principal line starts with the first of the best moves.
        let best = l.split("; best moves: ").nth(1).expect(l);
        let line = l.split("; principal line: ").nth(1).expect(l);
        let first = best.split(' ').next().unwrap();
        assert!(line.starts_with(&format!("{first} ")), "{l}");
    }
    let o = prove(
        &db,
        &["--limit", "1000 nodes", "--log-every", "0s", "e3", "f5"],
    );
    assert_eq!(o.status.code(), Some(3), "{}", util::stderr(&o));
    assert!(!util::stderr(&o).contains("antiproof: after "));
    for (args, says) in [
        (&["--log-every", "5M nodes"][..], "takes a time"),
        (
            &["--log-every", "1m", "--jobs", "2", "--executor", "threads"][..],
            "job executors",
        ),
        (
            &["--log-every", "1m", "--ladder", "--rungs", "1"][..],
            "--ladder",
        ),
    ] {
        let o = prove(&db, &[args, &["e3", "f5"]].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = util::stderr(&o);
        assert!(err.contains("--log-every") && err.contains(says), "{err}");
    }
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

/// A standard error closed under a running search (`2>&1 | head -1`, a
/// log reader that died) drops its lines: the run goes on to its limit,
/// saves its table and exits 3, where a message used to kill it.
#[test]
fn a_closed_standard_error_does_not_end_a_run() {
    let db = temp_db("cli-closed-stderr");
    let mut cmd = util::command();
    cmd.args(["prove", "--db"]).arg(&db).args([
        "--limit",
        "2s",
        "--log-every",
        "100ms",
        "e3",
        "f5",
    ]);
    let (code, out) = util::run_with_closed(cmd, util::Stream::Stderr);
    assert_eq!(code, Some(3), "{out}");
    assert!(out.contains("saved table:"), "{out}");
    assert!(tt_path(&db).exists());
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

/// `--jobs 2` (the search executor): two threads of one search on one
/// table; a node limit counts both threads' nodes, the stopped search
/// saves the table, the next run resumes from it and proves the line,
/// and the proof is certified.
#[test]
fn two_search_threads_stop_resume_and_prove_a_certified_line() {
    let db = temp_db("cli-threads");
    let args = ["--json", "--jobs", "2", "--memory", "32M"];
    let o = prove(
        &db,
        &[&args[..], &["--limit", "300000 nodes", "e3", "g6"]].concat(),
    );
    assert_eq!(o.status.code(), Some(3), "{}", util::stderr(&o));
    let v = util::json(&o);
    assert_eq!(v["threads"], 2);
    let nodes = v["nodes"].as_u64().unwrap();
    assert!((300_000..400_000).contains(&nodes), "{nodes} nodes");
    assert!(tt_path(&db).exists(), "the table is saved");
    let o = prove(&db, &[&args[..], &["e3", "g6"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let v = util::json(&o);
    assert_eq!(v["resumed_table"], true);
    assert_eq!(v["result"], "proven");
    assert!(v["other_threads_nodes"].as_u64().unwrap() > 0, "{v}");
    assert!(
        !tt_path(&db).exists(),
        "a finished search removes its table"
    );
    let positions = v["proof_positions"].as_u64().unwrap();
    assert_eq!(walk(&db, "e3 g6", Color::White) as u64, positions);
    export_and_certify(&db, &["e3", "g6"]);
    // Under the fifty-move rule too (the job executors refuse it).
    let o = prove(
        &db,
        &[&args[..], &["--rules", "lichess", "e3", "Na6"]].concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let v = util::json(&o);
    assert_eq!(v["rule_set"], "international+fifty");
    assert_eq!(v["result"], "proven");
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

/// `PATH.table` of a store.
fn tt_path(db: &Path) -> std::path::PathBuf {
    let mut t = db.as_os_str().to_os_string();
    t.push(".table");
    t.into()
}

/// Bytes of a saved tt before its first entry: the 32-byte header, then
/// the bucket count and the entries in use.
const TT_ENTRIES: usize = 48;

/// Sets every entry's disproof number (bytes 12..16 of each 16-byte entry)
/// to 0: a tt that, if believed, disproves everything.
fn zero_disproof_numbers(tt: &mut [u8]) {
    for e in tt[TT_ENTRIES..].chunks_exact_mut(16) {
        if e[0] & 1 != 0 {
            e[12..16].fill(0);
        }
    }
}

fn assert_ignored_with_warning(o: &Output, tt: &Path, what: &str) {
    let err = util::stderr(o);
    assert!(
        err.contains("ignoring the saved transposition table")
            && err.contains(&*tt.to_string_lossy()),
        "{what}: {err}"
    );
}

#[test]
fn a_damaged_saved_tt_is_ignored_with_a_warning_and_the_search_starts_fresh() {
    let db = temp_db("cli-tt-damaged");
    let tt = tt_path(&db);
    let o = prove(&db, &["--json", "--limit", "20000 nodes", "e3", "g6"]);
    assert_eq!(o.status.code(), Some(3), "{}", util::stderr(&o));
    let saved = std::fs::read(&tt).unwrap();
    let saved_db = std::fs::read(&db).unwrap();
    assert!(saved.len() > TT_ENTRIES && saved.starts_with(b"APTT0002"));
    let mut zeroed = saved.clone();
    zero_disproof_numbers(&mut zeroed);
    assert_ne!(zeroed, saved, "the table has entries");
    let mut flipped = saved.clone();
    for i in [TT_ENTRIES + 3, saved.len() / 2, saved.len() - 1] {
        flipped[i] ^= 0x5a;
    }
    let mut header = saved.clone();
    header[30] ^= 1; // the checksum itself
    let mut old_version = saved.clone();
    old_version[..8].copy_from_slice(b"APTT0001");
    let mut trailing = saved.clone();
    trailing.extend_from_slice(&[0; 16]);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("zeroed disproof numbers", zeroed),
        ("flipped bytes", flipped),
        ("flipped checksum", header),
        ("old version", old_version),
        ("trailing bytes", trailing),
        (
            "truncated in the entries",
            saved[..saved.len() - 100].to_vec(),
        ),
        ("truncated in the header", saved[..20].to_vec()),
        ("empty", Vec::new()),
    ];
    for (what, bytes) in cases {
        std::fs::write(&db, &saved_db).unwrap();
        std::fs::write(&tt, &bytes).unwrap();
        let o = prove(&db, &["--json", "e3", "g6"]);
        assert_eq!(o.status.code(), Some(0), "{what}: {}", util::stderr(&o));
        assert_ignored_with_warning(&o, &tt, what);
        let v = util::json(&o);
        assert_eq!(v["resumed_table"], false, "{what}");
        assert_eq!(v["result"], "proven", "{what}");
        assert_eq!(v["winning_move"], "Qh5", "{what}");
    }
    walk(&db, "e3 g6", Color::White);
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

#[test]
fn a_saved_tt_with_zeroed_disproof_numbers_gives_no_false_disproof() {
    // Black wins after 1.Nc3 (rung 9): a "disproven" would be false.
    let db = temp_db("cli-tt-nc3");
    let tt = tt_path(&db);
    let o = prove(&db, &["--json", "--limit", "5000 nodes", "Nc3"]);
    assert_eq!(o.status.code(), Some(3), "{}", util::stderr(&o));
    let mut bytes = std::fs::read(&tt).unwrap();
    zero_disproof_numbers(&mut bytes);
    std::fs::write(&tt, &bytes).unwrap();
    let o = prove(&db, &["--json", "--limit", "5000 nodes", "Nc3"]);
    assert_eq!(o.status.code(), Some(3), "{}", util::stderr(&o));
    assert_ignored_with_warning(&o, &tt, "zeroed disproof numbers");
    assert_eq!(util::json(&o)["result"], "stopped");
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

#[test]
fn a_disproof_says_it_is_not_certified() {
    // After 1.e3 d5 2.Qg4 White wins (rung 1), so Black cannot.
    let db = temp_db("cli-disproof");
    let o = prove(&db, &["--winner", "black", "e3", "d5", "Qg4"]);
    assert_eq!(o.status.code(), Some(1), "{}", util::stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("disproven: black cannot force a win"), "{out}");
    assert!(
        out.contains("disproofs are not certified by the checker"),
        "{out}"
    );
    let o = prove(&db, &["--json", "--winner", "black", "e3", "d5", "Qg4"]);
    assert_eq!(o.status.code(), Some(1), "{}", util::stderr(&o));
    assert_eq!(util::json(&o)["certifiable"], false);
    let o = prove(&db, &["--json", "e3", "d5"]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    assert_eq!(util::json(&o)["certifiable"], true);
    assert!(!String::from_utf8_lossy(&o.stdout).contains("not certified"));
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

/// Exports the stored proof of `moves` to a win-tree file beside the
/// store and certifies it; the checker's report.
fn export_and_certify(db: &Path, moves: &[&str]) -> String {
    let tree = db.with_file_name(format!("{}.tree", moves.join("-").to_lowercase()));
    let tree_s = tree.to_str().unwrap();
    let mut args = vec!["export", "--db", db.to_str().unwrap()];
    args.extend(moves);
    args.extend(["-o", tree_s]);
    let o = run_cli(&args);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let o = run_cli(&["verify", "--tree", tree_s]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{out}{}", util::stderr(&o));
    assert!(out.contains("CERTIFIED"), "{out}");
    out
}

fn run_cli(args: &[&str]) -> Output {
    util::command().args(args).output().unwrap()
}

/// Joint rules: 1.e3 d5 is proven, exported and certified under joint
/// rules, and the same certificate holds under International and FICS.
#[test]
fn joint_rules_prove_export_and_verify_under_all_three() {
    let db = temp_db("cli-joint");
    let db_s = db.to_str().unwrap();
    let o = prove(&db, &["--rules", "joint", "--json", "e3", "d5"]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let v = util::json(&o);
    assert_eq!(v["result"], "proven");
    assert_eq!(v["winner"], "white");
    assert_eq!(v["rules"], "joint");
    let tree = db.with_file_name("e3-d5.joint.tree");
    let tree_s = tree.to_str().unwrap();
    let o = run_cli(&[
        "export", "--rules", "joint", "--db", db_s, "e3", "d5", "-o", tree_s,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    for rules in ["joint", "international", "fics"] {
        let o = run_cli(&["verify", "--rules", rules, "--tree", tree_s]);
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{rules}: {out}{}",
            util::stderr(&o)
        );
        assert!(out.contains("CERTIFIED"), "{rules}: {out}");
    }
    // The store proves nothing under the other rule sets.
    let o = run_cli(&["verify", "--rules", "fics", "--db", db_s, "e3", "d5"]);
    assert_eq!(o.status.code(), Some(1), "{}", util::stderr(&o));
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

/// White's only move stalemates Black, 2 men against 1: International
/// scores it a Black win, FICS a White win, joint rules a draw. So each
/// of the first two proves its winner, joint proves neither, and both
/// exported proofs are rejected under joint rules.
#[test]
fn joint_rules_draw_where_international_and_fics_disagree() {
    const FEN: &str = "8/8/4p3/4p3/8/4P3/8/8 w - - 0 1";
    let db = temp_db("cli-joint-stalemate");
    for (rules, winner, code) in [
        ("international", "black", 0),
        ("international", "white", 1),
        ("fics", "white", 0),
        ("fics", "black", 1),
        ("joint", "white", 1),
        ("joint", "black", 1),
    ] {
        let o = prove(&db, &["--rules", rules, "--fen", FEN, "--winner", winner]);
        assert_eq!(
            o.status.code(),
            Some(code),
            "{rules} {winner}: {}",
            util::stderr(&o)
        );
    }
    let db_s = db.to_str().unwrap();
    for (rules, winner) in [("international", "black"), ("fics", "white")] {
        let tree = db.with_file_name(format!("{rules}.tree"));
        let tree_s = tree.to_str().unwrap();
        let o = run_cli(&[
            "export", "--rules", rules, "--db", db_s, "--fen", FEN, "--winner", winner, "-o",
            tree_s,
        ]);
        assert_eq!(o.status.code(), Some(0), "{rules}: {}", util::stderr(&o));
        let check = |under: &str| {
            run_cli(&[
                "verify", "--rules", under, "--tree", tree_s, "--fen", FEN, "--winner", winner,
            ])
        };
        assert_eq!(check(rules).status.code(), Some(0), "{rules}");
        let o = check("joint");
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(1), "{rules} under joint: {out}");
        assert!(out.contains("a draw under joint rules"), "{out}");
    }
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
}

/// `store load` and `prove --known`: a certified file becomes the store's
/// proof (verify certifies it, prove answers from it, also deeper in the
/// line); one the checker does not certify under the rule set loads
/// nothing (exit 1), and a file that is not a win tree is an error (2).
#[test]
fn known_wins_load_certified_files_only() {
    let db = temp_db("known");
    let proofs = Path::new(env!("CARGO_MANIFEST_DIR")).join("proofs");
    let load = |extra: &[&str], files: &[&Path]| {
        util::command()
            .args(["store", "load", "--db"])
            .arg(&db)
            .args(extra)
            .args(files)
            .output()
            .unwrap()
    };
    let o = load(&[], &[&proofs.join("e3-g6.tree")]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("1. e3 g6, white wins, 3031 positions, 3031 new records"),
        "{out}"
    );
    assert_store_verifies(&db, &["e3", "g6"]);
    let o = prove(&db, &["--json", "e3", "g6"]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let j = util::json(&o);
    assert_eq!(j["nodes"], 0);
    let first = j["winning_move_uci"].as_str().unwrap().to_string();
    // Two plies deeper, every reply is in the loaded proof too.
    let o = prove(&db, &["--json", "--winner", "white", "e3", "g6", &first]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    assert_eq!(util::json(&o)["nodes"], 0);
    // Certified under international rules, not under FICS (README's
    // table): loaded in part, the positions above the stalemates FICS
    // scores otherwise left out.
    let o = load(&["--rules", "fics"], &[&proofs.join("Nc3.tree")]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("(in part: certified under international rules; ")
            && out.contains("1 of 1 files loaded under fics"),
        "{out}"
    );
    // A file certified under no rule set: nothing loaded, exit 1.
    let bad = db.with_extension("bad.tree");
    std::fs::write(&bad, util::first_move_moved("e3-g6.tree")).unwrap();
    let o = load(&["--rules", "fics"], &[&bad]);
    assert_eq!(o.status.code(), Some(1), "{}", util::stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("not loaded") && out.contains("0 of 1 files loaded under fics"),
        "{out}"
    );
    // Not a win tree: exit 2 naming the file; the store is untouched.
    let junk = db.with_extension("junk.tree");
    std::fs::write(&junk, b"not a win tree at all").unwrap();
    let o = load(&[], &[&junk]);
    assert_eq!(o.status.code(), Some(2), "{}", util::stderr(&o));
    assert!(
        util::stderr(&o).contains("junk.tree"),
        "{}",
        util::stderr(&o)
    );
    // The store as one of the files: refused before anything is written.
    let o = load(&[], &[&db]);
    assert_eq!(o.status.code(), Some(2), "{}", util::stderr(&o));
    // prove --known under FICS names the file it skips and proves anyway.
    let db2 = temp_db("known-prove");
    let o = util::command()
        .args(["prove", "--db"])
        .arg(&db2)
        .args(["--rules", "fics", "--known"])
        .arg(&bad)
        .args(["--known"])
        .arg(proofs.join("e3-d5.tree"))
        .args(["--json", "e3", "d5"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    assert!(
        util::stderr(&o).contains("bad.tree: not loaded"),
        "{}",
        util::stderr(&o)
    );
    assert!(
        util::stderr(&o).contains("1 of 2 files certified and loaded"),
        "{}",
        util::stderr(&o)
    );
    assert_eq!(util::json(&o)["nodes"], 0);
}

/// A proof under international rules, loaded in part under joint rules,
/// leaves the search only the lines into the stalemates joint rules draw:
/// 1.Nc3 under joint rules in 53,527 nodes with `proofs/Nc3.tree` known
/// (10,452,978 without, 2026-12-06), and the proof it stores certifies
/// under joint rules.
#[test]
fn a_proof_loaded_in_part_is_finished_under_its_rule_set() {
    let db = temp_db("known-in-part");
    let proofs = Path::new(env!("CARGO_MANIFEST_DIR")).join("proofs");
    let o = util::command()
        .args(["prove", "--db"])
        .arg(&db)
        .args(["--rules", "joint", "--memory", "256M", "--known"])
        .arg(proofs.join("Nc3.tree"))
        .args(["--json", "Nc3"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let err = util::stderr(&o);
    assert!(
        err.contains("Nc3.tree: loaded in part under joint")
            && err.contains("1 of 1 files certified and loaded under joint (1 of them in part)"),
        "{err}"
    );
    let j = util::json(&o);
    assert_eq!(j["result"], "proven");
    let nodes = j["nodes"].as_u64().unwrap();
    assert!(nodes > 0 && nodes < 1_000_000, "{nodes}");
    assert_store_verifies(&db, &["--rules", "joint", "Nc3"]);
}

/// `verify --db DB ARGS...` certifies (exit 0), its report shown if not.
fn assert_store_verifies(db: &Path, args: &[&str]) {
    let v = util::command()
        .args(["verify", "--db"])
        .arg(db)
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        v.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&v.stdout)
    );
}

/// A proof along a guide (`prove e3 d5 Qg4`) is carried back along the
/// line's own moves: the store then proves 1.e3 d5 (White's move Qg4
/// there), which verify certifies and export writes rooted after 1...d5;
/// not further back (Black's other first replies are not proven).
#[test]
fn a_proof_along_a_guide_proves_the_line_before_it() {
    let db = temp_db("guide");
    let o = prove(&db, &["--winner", "white", "e3", "d5", "Qg4"]);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    assert!(
        util::stderr(&o).contains("white wins after e3 d5"),
        "{}",
        util::stderr(&o)
    );
    assert_store_verifies(&db, &["e3", "d5"]);
    // 1.e3 alone is not proven (only one of Black's replies is).
    let o = prove(
        &db,
        &["--json", "--winner", "white", "--limit", "1 nodes", "e3"],
    );
    assert_ne!(util::json(&o)["result"], "proven");
    let tree = db.with_extension("tree");
    let e = util::command()
        .args(["export", "--db"])
        .arg(&db)
        .arg("-o")
        .arg(&tree)
        .args(["e3", "d5"])
        .output()
        .unwrap();
    assert_eq!(e.status.code(), Some(0), "{}", util::stderr(&e));
    let v = util::command()
        .args(["verify", "--tree"])
        .arg(&tree)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&v.stdout);
    assert_eq!(v.status.code(), Some(0), "{out}");
    assert!(out.contains("root line:   1. e3 d5\n"), "{out}");
}

#[test]
fn a_threaded_search_in_lockstep_repeats_to_the_node() {
    // Three threads taking turns (as a simulated job of three threads
    // runs): two runs search the same nodes, the busiest thread's share
    // is the report's span, and the proof certifies.
    let dir = util::temp_dir("lockstep");
    let run = |name: &str| {
        let db = dir.join(name);
        let out = util::command()
            .args(["prove", "--db"])
            .arg(&db)
            .args([
                "--jobs",
                "3",
                "--lockstep",
                "--memory",
                "16M",
                "--json",
                "d4",
            ])
            .output()
            .unwrap();
        (util::ok_json(&out), db)
    };
    let (a, db) = run("a.redb");
    let (b, _) = run("b.redb");
    assert_eq!(a["result"], "proven", "{a}");
    for k in [
        "nodes",
        "other_threads_nodes",
        "span_nodes",
        "proof_positions",
    ] {
        assert_eq!(a[k], b[k], "{k}: {a} against {b}");
    }
    let (nodes, span) = (
        a["nodes"].as_u64().unwrap(),
        a["span_nodes"].as_u64().unwrap(),
    );
    assert!(a["other_threads_nodes"].as_u64().unwrap() > 0, "{a}");
    assert!(span < nodes, "{a}");
    util::assert_store_certified(&db, &["d4"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `prove --state FILE` with a plain search: the state (the table's
/// entries of most work, the records the search wrote) is saved every
/// `--state-every` and when the search stops, so a run killed with
/// SIGKILL keeps its last save; on a fresh machine (store and saved table
/// deleted) the same command restores it and finishes, the proof
/// certified. Another line's state, a damaged file and a plain state
/// given to a job-level search are refused (exit 2), naming why.
#[test]
fn a_plain_run_state_outlives_a_killed_machine() {
    let dir = util::temp_dir("plain-state");
    let db = dir.join("t.redb");
    let state = dir.join("g6.state.zst");
    let with_state = |extra: &[&str]| {
        let mut a = vec![
            "--memory",
            "64M",
            "--checkpoint-size",
            "300",
            "--state-tt",
            "20000",
            "--state",
        ];
        a.push(state.to_str().unwrap());
        a.extend(["--state-every", "0.2s"]);
        a.extend(extra);
        a.extend(["e3", "g6"]);
        a.iter().map(|s| s.to_string()).collect::<Vec<String>>()
    };
    let mut child = util::command()
        .arg("prove")
        .arg("--db")
        .arg(&db)
        .args(with_state(&[]))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    // The first save (before the search) holds no table entries yet:
    // killed after a later one.
    let saved = || std::fs::metadata(&state).is_ok_and(|m| m.len() > 20_000);
    while !saved() && child.try_wait().unwrap().is_none() && t.elapsed().as_secs() < 120 {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill(); // SIGKILL, once a state is saved
    child.wait().unwrap();
    if !saved() {
        // Proven before its first save: a stopped run saves one too.
        let a = with_state(&["--limit", "20000"]);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let o = prove(&db, &a);
        assert_eq!(o.status.code(), Some(3), "{}", util::stderr(&o));
    }
    assert!(state.is_file());
    // A fresh machine: nothing but the state file.
    for f in [db.clone(), dir.join("t.redb.table")] {
        let _ = std::fs::remove_file(f);
    }
    let a = with_state(&["--json"]);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let o = prove(&db, &a);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    assert!(
        util::stderr(&o).contains("run state read from"),
        "{}",
        util::stderr(&o)
    );
    let v = util::json(&o);
    assert_eq!(v["result"], "proven");
    assert_eq!(v["state"], state.to_str().unwrap());
    assert!(v["state_restored_tt_entries"].as_u64().unwrap() > 0, "{v}");
    util::assert_store_certified(&db, &["e3", "g6"]);
    // A state that cannot be written stops the run before its search.
    let o = prove(
        &dir.join("nowhere.redb"),
        &["--state", "/proc/antiproof/s.zst", "e3", "g6"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        util::stderr(&o).contains("saving the run state"),
        "{}",
        util::stderr(&o)
    );
    // Refused: another line's search, a damaged file, a job-level search.
    let other = dir.join("other.redb");
    let s = state.to_str().unwrap();
    let o = prove(&other, &["--state", s, "e3", "e6"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        util::stderr(&o).contains("not of this one"),
        "{}",
        util::stderr(&o)
    );
    let damaged = dir.join("damaged.zst");
    let bytes = std::fs::read(&state).unwrap();
    std::fs::write(&damaged, &bytes[..bytes.len() / 2]).unwrap();
    let o = prove(&other, &["--state", damaged.to_str().unwrap(), "e3", "g6"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        util::stderr(&o).contains("not a valid state file"),
        "{}",
        util::stderr(&o)
    );
    let o = prove(
        &other,
        &[
            "--executor",
            "threads",
            "--jobs",
            "1",
            "--state",
            s,
            "e3",
            "g6",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        util::stderr(&o).contains("a plain search's state"),
        "{}",
        util::stderr(&o)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two rooks and a pawn against king and pawn, 30 plies into a quiet
/// stretch: the ending 1.e3 Nc6 2.Ba6 bxa6 3.a4 Nb8's search shuffled in
/// for hours. Under the fifty-move rule without tables, the plain search
/// is not done in a million nodes; `--clock-init 4`, which makes every new
/// position's proof number its half-move clock over 4 higher, proves it
/// in exactly 64,863, and the store's proof is certified. The flag is
/// named in the summary and JSON, bounded (0-100), and refused with the
/// job executors, whose job files do not carry it.
#[test]
fn clock_init_turns_a_shuffling_search_to_progress() {
    const FEN: &str = "4R3/8/8/2R5/8/p7/2P5/6k1 w - - 0 30";
    let base = [
        "--fen", FEN, "--winner", "white", "--rules", "lichess", "--memory", "64M", "--json",
    ];
    let plain = temp_db("cli-clock-init");
    let mut args = base.to_vec();
    args.extend(["--limit", "1M nodes"]);
    let o = prove(&plain, &args);
    assert_eq!(o.status.code(), Some(3), "{}", util::stderr(&o));
    assert_eq!(util::json(&o)["clock_init"], 0);
    // A store of its own: the stopped run's saved table would be resumed.
    let db = temp_db("cli-clock-init-4");
    let mut args = base.to_vec();
    args.extend(["--clock-init", "4"]);
    let o = prove(&db, &args);
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let v = util::json(&o);
    assert_eq!(v["result"], "proven");
    assert_eq!(v["clock_init"], 4);
    assert_eq!(v["nodes"].as_u64(), Some(64_863), "{v}");
    let (code, out, err) = util::antiproof(&[
        "verify",
        "--db",
        db.to_str().unwrap(),
        "--fen",
        FEN,
        "--rules",
        "lichess",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("CERTIFIED"), "{out}{err}");
    for bad in [
        &["--clock-init", "101"][..],
        &["--clock-init=-1"],
        &["--clock-init", "4", "--jobs", "2", "--executor", "threads"],
    ] {
        refused(&db, bad, "clock-init");
    }
    std::fs::remove_dir_all(db.parent().unwrap()).unwrap();
    std::fs::remove_dir_all(plain.parent().unwrap()).unwrap();
}
