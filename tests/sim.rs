//! `prove --executor sim --jobs P`: the master against P simulated
//! workers. Exact counts, never timings: two identical commands give the
//! same jobs, virtual time and job nodes whatever the load; the proof
//! certifies; bad settings are usage errors naming the option.

use crate::util::{self, EXE};
use std::path::Path;
use std::process::{Command, Output};

/// `prove --executor sim --json` on the store `db` with `args`, of 1.d4
/// (rung 5) in jobs of 1,000 nodes (unless `args` give `--job-nodes`):
/// some twenty jobs.
fn sim(db: &Path, args: &[&str]) -> Output {
    let budget: &[&str] = if args.contains(&"--job-nodes") {
        &[]
    } else {
        &["--job-nodes", "1k"]
    };
    Command::new(EXE)
        .arg("prove")
        .arg("--db")
        .arg(db)
        .args(["--executor", "sim", "--memory", "16M", "--json"])
        .args(budget)
        .args(args)
        .arg("d4")
        .output()
        .unwrap()
}

/// What must be the same in two runs of one command: the sim figures
/// (all exact counts, or sums of them at the given rate) and every job
/// with its line and nodes, in the order the master took them.
fn fingerprint(v: &serde_json::Value) -> serde_json::Value {
    let jobs: Vec<serde_json::Value> = v["report"]["each"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| serde_json::json!([j["id"], j["line"], j["nodes"], j["outcome"]]))
        .collect();
    serde_json::json!({"sim": v["sim"], "jobs": jobs, "result": v["result"]})
}

#[test]
fn two_identical_commands_give_the_same_run_and_its_proof_certifies() {
    let dir = util::temp_dir("same");
    let args = ["--jobs", "4", "--sim-rate", "1M", "--sim-latency", "0.5"];
    let a = util::ok_json(&sim(&dir.join("a.redb"), &args));
    let b = util::ok_json(&sim(&dir.join("b.redb"), &args));
    assert_eq!(a["result"], "proven", "{a}");
    assert_eq!(fingerprint(&a), fingerprint(&b));
    let s = &a["sim"];
    assert_eq!(s["workers"], 4, "{s}");
    assert_eq!(s["rate_nodes_per_s"], 1e6, "{s}");
    assert_eq!(s["latency_s"], 0.5, "{s}");
    assert_eq!(s["rate_measured"], false, "{s}");
    let jobs = s["jobs"].as_u64().unwrap();
    assert!(jobs >= 4, "{s}");
    // Every job took its latency; four workers at most at a time.
    let virtual_s = s["virtual_s"].as_f64().unwrap();
    assert!(virtual_s >= 0.5 * jobs as f64 / 4.0, "{s}");
    let busy = s["busy_fraction"].as_f64().unwrap();
    assert!(busy > 0.0 && busy <= 1.0, "{s}");
    // The job nodes are the jobs' own counts (none cancelled part-way
    // here, or fewer).
    let each: u64 = a["report"]["each"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["nodes"].as_u64().unwrap())
        .sum();
    assert!(s["job_nodes"].as_u64().unwrap() >= each, "{s}");
    // Each job says when it was sent and when it ended in virtual time:
    // at least its latency and its search apart, and the last to end
    // ends the run (what scripts/sim-chain.py reads the chain from).
    let mut last = 0.0f64;
    for j in a["report"]["each"].as_array().unwrap() {
        let (sent, ended) = (
            j["sent_s"].as_f64().unwrap(),
            j["ended_s"].as_f64().unwrap(),
        );
        let search = j["nodes"].as_f64().unwrap() / 1e6;
        assert!((ended - sent - 0.5 - search).abs() < 1e-6, "{j}");
        last = last.max(ended);
    }
    assert!((last - virtual_s).abs() < 1e-9, "{s}");
    // The proof in the store certifies.
    let v = Command::new(EXE)
        .arg("verify")
        .arg("--db")
        .arg(dir.join("a.redb"))
        .arg("d4")
        .output()
        .unwrap();
    assert_eq!(
        v.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&v.stdout),
        String::from_utf8_lossy(&v.stderr)
    );
    // With a baseline, the speedup is one process's time at the rate
    // over the virtual time.
    let c = util::ok_json(&sim(
        &dir.join("c.redb"),
        &[&args[..], &["--sim-baseline", "10k"]].concat(),
    ));
    let sc = &c["sim"];
    let speedup = sc["speedup"].as_f64().unwrap();
    assert!(
        (speedup - 0.01 / sc["virtual_s"].as_f64().unwrap()).abs() < 1e-9,
        "{sc}"
    );
    assert_eq!(sc["baseline_nodes"], 10_000, "{sc}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn more_workers_take_less_virtual_time_on_the_same_jobs_budget() {
    let dir = util::temp_dir("more");
    let one = util::ok_json(&sim(
        &dir.join("one.redb"),
        &["--jobs", "1", "--sim-rate", "1M", "--sim-latency", "1"],
    ));
    let eight = util::ok_json(&sim(
        &dir.join("eight.redb"),
        &["--jobs", "8", "--sim-rate", "1M", "--sim-latency", "1"],
    ));
    // One worker: every job one after the other, each its latency and
    // its nodes at the rate.
    let s1 = &one["sim"];
    let expect = s1["jobs"].as_f64().unwrap() * 1.0 + s1["job_nodes"].as_f64().unwrap() / 1e6;
    assert!(
        (s1["virtual_s"].as_f64().unwrap() - expect).abs() < 1e-6,
        "{s1}"
    );
    assert!(
        eight["sim"]["virtual_s"].as_f64().unwrap() < s1["virtual_s"].as_f64().unwrap(),
        "{} against {s1}",
        eight["sim"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn jobs_of_several_threads_take_their_workers_in_lockstep_and_repeat_to_the_node() {
    // Jobs of 3 threads on 6 workers, and jobs widened over the workers a
    // selection leaves idle: each twice, the same to the node; a job of T
    // threads ends after its latency and its busiest thread's nodes.
    let dir = util::temp_dir("threads");
    for (name, extra) in [
        ("t3", &["--job-threads", "3"][..]),
        ("w6", &["--job-widen", "6"][..]),
    ] {
        let args = [
            &["--jobs", "6", "--sim-rate", "1M", "--sim-latency", "0.5"][..],
            &["--job-nodes", "8k"],
            extra,
        ]
        .concat();
        let a = util::ok_json(&sim(&dir.join(format!("{name}a.redb")), &args));
        let b = util::ok_json(&sim(&dir.join(format!("{name}b.redb")), &args));
        assert_eq!(a["result"], "proven", "{a}");
        assert_eq!(fingerprint(&a), fingerprint(&b), "{name}");
        let each = a["report"]["each"].as_array().unwrap();
        let mut several = 0;
        for j in each {
            let threads = j["threads"].as_u64().unwrap_or(1);
            assert!((1..=6).contains(&threads), "{j}");
            let nodes = j["nodes"].as_u64().unwrap();
            let span = j["span_nodes"].as_u64().unwrap_or(nodes);
            assert!(span <= nodes, "{j}");
            if threads > 1 {
                several += 1;
                assert!(j["span_nodes"].is_u64(), "{j}");
            }
            let (sent, ended) = (
                j["sent_s"].as_f64().unwrap(),
                j["ended_s"].as_f64().unwrap(),
            );
            assert!((ended - sent - 0.5 - span as f64 / 1e6).abs() < 1e-6, "{j}");
        }
        assert!(several > 0, "{name}: no job had several threads");
        let v = Command::new(EXE)
            .arg("verify")
            .arg("--db")
            .arg(dir.join(format!("{name}a.redb")))
            .arg("d4")
            .output()
            .unwrap();
        assert_eq!(v.status.code(), Some(0), "{name}: {v:?}");
    }
    // Widened jobs run on a real executor too (threads on the machine's
    // shared table), and the proof certifies.
    let real = dir.join("real.redb");
    let out = Command::new(EXE)
        .args(["prove", "--json", "--memory", "64M", "--db"])
        .arg(&real)
        .args(["--executor", "threads", "--jobs", "2", "--job-nodes", "8k"])
        .args(["--job-widen", "2", "d4"])
        .output()
        .unwrap();
    let v = util::ok_json(&out);
    assert_eq!(v["result"], "proven", "{v}");
    let each = v["report"]["each"].as_array().unwrap();
    assert!(
        each.iter().any(|j| j["threads"] == 2),
        "no job had two threads: {v}"
    );
    util::assert_store_certified(&real, &["d4"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_job_budget_per_thread_gives_a_wide_job_its_threads_times_the_nodes() {
    // The root's job takes the 4 idle workers: 2,000 nodes in all without
    // the flag, 2,000 a thread (8,000) with it; every job's budget is its
    // threads times a budget of one thread (2,000 x 2^k), and the proof
    // certifies.
    let dir = util::temp_dir("per-thread");
    let base = [
        "--jobs",
        "4",
        "--sim-rate",
        "1M",
        "--job-nodes",
        "2k",
        "--job-widen",
        "4",
    ];
    let plain = util::ok_json(&sim(&dir.join("plain.redb"), &base));
    let first = &plain["report"]["each"][0];
    assert_eq!(
        (first["threads"].as_u64(), first["budget_nodes"].as_u64()),
        (Some(4), Some(2000)),
        "{first}"
    );
    let db = dir.join("per.redb");
    let per = util::ok_json(&sim(
        &db,
        &[&base[..], &["--job-budget-per-thread"]].concat(),
    ));
    assert_eq!(per["result"], "proven", "{per}");
    let each = per["report"]["each"].as_array().unwrap();
    assert_eq!(
        (
            each[0]["threads"].as_u64(),
            each[0]["budget_nodes"].as_u64()
        ),
        (Some(4), Some(8000)),
        "{per}"
    );
    for j in each {
        let (t, b) = (
            j["threads"].as_u64().unwrap_or(1),
            j["budget_nodes"].as_u64().unwrap(),
        );
        assert!(
            b % t == 0 && (b / t) % 2000 == 0 && (b / t / 2000).is_power_of_two(),
            "{j}"
        );
    }
    util::assert_store_certified(&db, &["d4"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_simulation_settings_are_usage_errors_naming_the_option() {
    let dir = util::temp_dir("bad");
    let db = dir.join("t.redb");
    for (args, named) in [
        (&["--jobs", "4", "--sim-rate", "0"][..], "--sim-rate"),
        (&["--jobs", "4", "--sim-rate=-5"][..], "--sim-rate"),
        (&["--jobs", "4", "--sim-rate", "fast"][..], "--sim-rate"),
        (
            &["--jobs", "4", "--sim-rate", "1M", "--sim-latency=-1"][..],
            "--sim-latency",
        ),
        (&["--jobs", "1000000", "--sim-rate", "1M"][..], "--jobs"),
        (&["--jobs", "0", "--sim-rate", "1M"][..], "--jobs"),
        (
            &["--jobs", "2", "--sim-rate", "1M", "--job-threads", "4"][..],
            "--job-threads",
        ),
        (
            &[
                "--jobs",
                "2",
                "--sim-rate",
                "1M",
                "--job-widen-per-budget",
                "2",
            ][..],
            "--job-widen-per-budget",
        ),
        (
            &["--jobs", "2", "--sim-rate", "1M", "--job-widen", "5000"][..],
            "--job-widen 5000",
        ),
        (
            &[
                "--jobs",
                "2",
                "--sim-rate",
                "1M",
                "--job-widen",
                "2",
                "--job-widen-per-budget",
                "0",
            ][..],
            "--job-widen-per-budget",
        ),
        (&["--sim-rate", "1M"][..], "--jobs"),
        (
            &["--jobs", "4", "--sim-rate", "1M", "--job-max-nodes", "500"][..],
            "--job-max-nodes",
        ),
        (
            &[
                "--jobs",
                "4",
                "--sim-rate",
                "1M",
                "--job-threshold-margin",
                "0.5",
            ][..],
            "--job-threshold-margin",
        ),
        (
            &[
                "--jobs",
                "4",
                "--sim-rate",
                "1M",
                "--job-threshold-margin",
                "NaN",
            ][..],
            "--job-threshold-margin",
        ),
        (
            &["--jobs", "4", "--sim-rate", "1M", "--job-spread=-1"][..],
            "--job-spread",
        ),
        (
            &["--jobs", "4", "--sim-rate", "1M", "--job-spread", "inf"][..],
            "--job-spread",
        ),
        (
            &[
                "--jobs",
                "4",
                "--sim-rate",
                "1M",
                "--job-speculation",
                "0.5",
            ][..],
            "--job-speculation",
        ),
    ] {
        let o = sim(&db, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(named), "{args:?}: {err}");
    }
    // A --sim-* option with another executor would be ignored: refused.
    let o = Command::new(EXE)
        .arg("prove")
        .arg("--db")
        .arg(&db)
        .args([
            "--jobs",
            "2",
            "--executor",
            "threads",
            "--sim-rate",
            "1M",
            "d4",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--sim-rate") && err.contains("--executor sim"),
        "{err}"
    );
    assert!(
        !db.exists() && !dir.join("t.redb.jobs").exists(),
        "nothing made for a refused command"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// [`sim`] on 4 workers (rate 1M, latency 0.5 s) in `dir`, into
/// `with.redb` as given and into `without.redb` with `flag` added; each
/// must prove the line with no leaf failed and no job rejected.
fn with_and_without(dir: &Path, flag: &str) -> (serde_json::Value, serde_json::Value) {
    let args = ["--jobs", "4", "--sim-rate", "1M", "--sim-latency", "0.5"];
    let with = util::ok_json(&sim(&dir.join("with.redb"), &args));
    let without = util::ok_json(&sim(
        &dir.join("without.redb"),
        &[&args[..], &[flag]].concat(),
    ));
    for v in [&with, &without] {
        assert_eq!(v["result"], "proven", "{v}");
        assert_eq!(v["report"]["leaves_failed"], 0, "{v}");
        assert_eq!(v["report"]["jobs_rejected"], 0, "{v}");
    }
    (with, without)
}

#[test]
fn table_excerpts_save_the_jobs_work_and_leave_nothing_behind() {
    let dir = util::temp_dir("excerpts");
    let (with, without) = with_and_without(&dir, "--no-table-excerpts");
    // A job below an unresolved one starts from its table's excerpt
    // instead of an empty table (1.d4 in 1,000-node jobs: about a fifth
    // of the nodes).
    let nodes = |v: &serde_json::Value| v["sim"]["job_nodes"].as_u64().unwrap();
    assert!(
        2 * nodes(&with) < nodes(&without),
        "{} against {}",
        with["sim"],
        without["sim"]
    );
    // The excerpts went with the run.
    for work in ["with.redb.jobs", "without.redb.jobs"] {
        let mut left: Vec<String> = std::fs::read_dir(dir.join(work))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["master.lock", "status.json"], "{work}");
    }
    util::assert_store_certified(&dir.join("with.redb"), &["d4"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_leaf_where_the_loser_moves_goes_out_as_one_job_not_a_job_a_reply() {
    let dir = util::temp_dir("loser-jobs");
    let (one, each) = with_and_without(&dir, "--job-expand-loser-nodes");
    // Each reply a job of its own costs a latency a reply, most of them
    // proven in a fraction of it (exact counts: the same on any machine).
    let fig = |v: &serde_json::Value, k: &str| v["sim"][k].as_f64().unwrap();
    assert!(
        fig(&one, "jobs") < fig(&each, "jobs") && fig(&one, "virtual_s") < fig(&each, "virtual_s"),
        "{} against {}",
        one["sim"],
        each["sim"]
    );
    util::assert_store_certified(&dir.join("with.redb"), &["d4"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn no_job_gets_more_than_the_cap_and_the_line_is_still_proven() {
    let dir = util::temp_dir("cap");
    let (default, high) = with_and_without(&dir, "--job-max-nodes=1G");
    let budgets = |v: &serde_json::Value| -> Vec<u64> {
        v["report"]["each"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["budget_nodes"].as_u64().unwrap())
            .collect()
    };
    // The default cap, 256 times --job-nodes, is not reached on 1.d4;
    // a cap of twice the first budget is, and holds.
    assert_eq!(budgets(&default), budgets(&high));
    let low = util::ok_json(&sim(
        &dir.join("low.redb"),
        &[
            "--jobs",
            "4",
            "--sim-rate",
            "1M",
            "--sim-latency",
            "0.5",
            "--job-max-nodes",
            "2k",
        ],
    ));
    assert_eq!(low["result"], "proven", "{low}");
    assert!(budgets(&high).iter().any(|&b| b > 2_000), "{high}");
    assert!(budgets(&low).iter().all(|&b| b <= 2_000), "{low}");
    util::assert_store_certified(&dir.join("low.redb"), &["d4"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_job_out_of_budget_grows_the_top_tree_along_its_own_search() {
    let dir = util::temp_dir("deep");
    let (plain, deep) = with_and_without(&dir, "--job-deep-expand=64");
    // The root's job runs out of its 1,000 nodes: plainly its leaf is
    // expanded one ply, so the next jobs are the root's children; with
    // the hidden --job-deep-expand the children where that job spent a
    // 64th of its budget or more are expanded too, down its own search,
    // and the next jobs start plies below (exact: 3 on 1.d4).
    let second = |v: &serde_json::Value| v["report"]["each"][1]["depth"].as_u64().unwrap();
    assert_eq!(second(&plain), 1, "{}", plain["report"]["each"]);
    assert!(second(&deep) >= 2, "{}", deep["report"]["each"]);
    util::assert_store_certified(&dir.join("without.redb"), &["d4"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn spread_selection_is_repeatable_and_its_proof_certifies() {
    let dir = util::temp_dir("spread");
    // Leaves picked one at a time, a child weighed by its jobs out
    // (hidden --job-spread): a run is still a function of its command.
    let args = [
        "--jobs",
        "4",
        "--sim-rate",
        "1M",
        "--sim-latency",
        "0.5",
        "--job-spread",
        "1",
    ];
    let a = util::ok_json(&sim(&dir.join("a.redb"), &args));
    let b = util::ok_json(&sim(&dir.join("b.redb"), &args));
    assert_eq!(a["result"], "proven", "{a}");
    assert_eq!(a["report"]["leaves_failed"], 0, "{a}");
    assert_eq!(fingerprint(&a), fingerprint(&b));
    util::assert_store_certified(&dir.join("a.redb"), &["d4"]);
    let _ = std::fs::remove_dir_all(&dir);
}
