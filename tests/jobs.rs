//! `prove --jobs N` as processes, with faults: results that are malformed,
//! for another position, for another rule set, or carry a wrong proof are
//! rejected with a named reason and the job is run again, nothing of them
//! merged; a leaf whose jobs come back wrong twice fails (never proven); a
//! killed worker's job is re-queued; a master killed with SIGKILL resumes
//! from the store (its status file, `WORK_DIR/status.json`, saying it was
//! running, then how the resumed run ended). Faults come from a worker
//! script (`--worker`) that misbehaves once and then runs the real `job
//! run`.

use crate::util::{self, EXE};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// `prove --jobs 2 --json` of `line` with small jobs, with `worker` as
/// the worker command when given.
fn prove_jobs(dir: &Path, worker: Option<&Path>, line: &[&str]) -> Output {
    let mut args = vec![
        "--executor",
        "local",
        "--job-nodes",
        "2k",
        "--memory",
        "16M",
    ];
    let w = worker.map(|w| format!("/bin/sh {}", w.display()));
    if let Some(w) = &w {
        args.extend(["--worker", w.as_str()]);
    }
    prove_jobs_with(dir, &args, line)
}

/// `prove --db DIR/t.redb --jobs 2 --json` with `args` (which name the
/// executor: the default runs no jobs), of `line`.
fn prove_jobs_with(dir: &Path, args: &[&str], line: &[&str]) -> Output {
    Command::new(EXE)
        .arg("prove")
        .arg("--db")
        .arg(dir.join("t.redb"))
        .args(["--jobs", "2", "--json"])
        .args(args)
        .args(line)
        .output()
        .unwrap()
}

/// A worker script: the first job it gets (the first call of all, told
/// by an atomic mkdir) runs `fault` with `$job` set; every other job runs
/// the real `job run`.
fn worker(dir: &Path, fault: &str) -> PathBuf {
    let p = dir.join("worker.sh");
    let script = format!(
        "job=\"$1\"\nif mkdir \"{dir}/faulted\" 2>/dev/null; then\n{fault}\nexit 0\nfi\nexec {EXE} job run \"$job\"\n",
        dir = dir.display()
    );
    std::fs::write(&p, script).unwrap();
    p
}

/// Certifies the store's proof of the line with `verify --db`.
fn assert_certified(dir: &Path, line: &[&str]) {
    util::assert_store_certified(&dir.join("t.redb"), line);
}

/// Runs the faulty worker and checks the fault was named, the job run
/// again, and the proof completed and certified.
fn rejected_once(name: &str, fault: &str, named: &str) {
    let dir = util::temp_dir(name);
    let w = worker(&dir, fault);
    let o = prove_jobs(&dir, Some(&w), &["e3", "d5"]);
    let v = util::ok_json(&o);
    assert_eq!(v["result"], "proven");
    let r = &v["report"];
    assert_eq!(r["jobs_rejected"], 1, "{r}");
    assert_eq!(r["leaves_failed"], 0);
    let each = r["each"].as_array().unwrap();
    let bad: Vec<_> = each.iter().filter(|j| j["outcome"] == "rejected").collect();
    assert_eq!(bad.len(), 1);
    let why = bad[0]["rejected"].as_str().unwrap();
    assert!(why.contains(named), "{why}");
    assert_eq!(
        bad[0]["records"], 0,
        "nothing merged from a rejected result"
    );
    // The same node ran again and was accepted.
    let node = &bad[0]["node"];
    assert!(
        each.iter()
            .any(|j| &j["node"] == node && j["outcome"] != "rejected"),
        "{r}"
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("rejected"));
    assert_certified(&dir, &["e3", "d5"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_malformed_result_is_rejected_and_run_again() {
    rejected_once(
        "malformed",
        "echo '{\"format\": \"antiproof-job-result\", \"version\": 1' > \"$job.result.json\"",
        "malformed",
    );
}

#[test]
fn a_result_for_another_position_is_rejected() {
    rejected_once(
        "foreign",
        &format!(
            "{EXE} job run \"$job\" >/dev/null\nsed -i 's#\"root_fen\": \"[^\"]*\"#\"root_fen\": \"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1\"#' \"$job.result.json\""
        ),
        "field `root_fen`",
    );
}

#[test]
fn a_result_under_another_rule_set_is_rejected() {
    rejected_once(
        "rules",
        &format!(
            "{EXE} job run \"$job\" >/dev/null\nsed -i 's#\"rules\": \"international\"#\"rules\": \"fics\"#' \"$job.result.json\""
        ),
        "field `rules`",
    );
}

/// A result that claims a proof and brings a real certificate of another
/// position (1.e3 d6's, rooted at its position: no prolog).
fn wrong_proof_fault(dir: &Path) -> String {
    let other = dir.join("other.redb");
    let o = Command::new(EXE)
        .arg("prove")
        .arg("--db")
        .arg(&other)
        .args(["e3", "d6"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let fen = "rnbqkbnr/ppp1pppp/3p4/8/8/4P3/PPPP1PPP/RNBQKBNR w - - 0 2";
    let tree = dir.join("other.tree");
    let o = Command::new(EXE)
        .arg("export")
        .arg("--db")
        .arg(&other)
        .args(["--fen", fen, "-o"])
        .arg(&tree)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    format!(
        r#"field() {{ sed -n "s/.*\"$1\": \"\(.*\)\",*/\1/p" "$job" | head -1; }}
cp {tree} "$job.tree"
cat > "$job.result.json" <<EOF
{{"format": "antiproof-job-result", "version": 1, "id": "$(field id)",
 "root_fen": "$(field root_fen)", "rules": "$(field rules)", "winner": "$(field winner)",
 "outcome": "proven", "root_pn": 0, "root_dn": 4294967295, "nodes": 1,
 "proof_positions": 33, "time_s": 0.0, "tree": "$(basename "$job").tree", "stopped_by": null}}
EOF"#,
        tree = tree.display()
    )
}

#[test]
fn a_wrong_proof_is_rejected_by_the_checker() {
    let dir = util::temp_dir("wrong-setup");
    let fault = wrong_proof_fault(&dir);
    rejected_once("wrong", &fault, "wrong-proof");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A worker handing back a certificate that decompresses to far more than
/// the disk holds (a zstd frame stating a petabyte) is rejected from the
/// frame's header, nothing written out, and the job run again.
#[test]
fn a_certificate_decompressing_past_the_room_is_rejected_unwritten() {
    let fault = r#"field() { sed -n "s/.*\"$1\": \"\(.*\)\",*/\1/p" "$job" | head -1; }
printf '\050\265\057\375\340\000\000\000\000\000\000\004\000\013\000\000\000' > "$job.tree"
cat > "$job.result.json" <<EOF
{"format": "antiproof-job-result", "version": 1, "id": "$(field id)",
 "root_fen": "$(field root_fen)", "rules": "$(field rules)", "winner": "$(field winner)",
 "outcome": "proven", "root_pn": 0, "root_dn": 4294967295, "nodes": 1,
 "proof_positions": 33, "time_s": 0.0, "tree": "$(basename "$job").tree", "stopped_by": null}
EOF"#;
    rejected_once("bomb", fault, "refused to decompress");
}

#[test]
fn a_leaf_whose_jobs_are_always_wrong_fails_and_is_never_proven() {
    let dir = util::temp_dir("always-wrong");
    let p = dir.join("worker.sh");
    std::fs::write(&p, "echo 'not json' > \"$1.result.json\"\n").unwrap();
    let o = prove_jobs(&dir, Some(&p), &["e3", "d5"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = util::json(&o);
    assert_eq!(v["result"], "failed");
    assert!(v["report"]["leaves_failed"].as_u64().unwrap() > 0);
    assert_eq!(v["report"]["records_merged"], 0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_killed_worker_is_requeued() {
    rejected_once("killed", "kill -9 $$", "no-result");
}

#[test]
fn a_killed_master_resumes_from_the_store() {
    let dir = util::temp_dir("resume");
    let db = dir.join("t.redb");
    // Small jobs over 1.e3 g6: about 2.7 s (1.e4, and since the shared
    // table grows on its fill 1.e3 Na6 too, in 0.5 s, were proven before
    // the kill could come).
    let args = [
        "--jobs",
        "2",
        "--executor",
        "local",
        "--job-nodes",
        "2k",
        "--json",
        "--memory",
        "16M",
        "e3",
        "g6",
    ];
    let mut child = Command::new(EXE)
        .arg("prove")
        .arg("--db")
        .arg(&db)
        .args(args)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once some jobs came back (their records are in the store).
    let t0 = Instant::now();
    let jobs = dir.join("t.redb.jobs");
    while t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
        if matches!(child.try_wait(), Ok(Some(_))) {
            break;
        }
        let n = std::fs::read_dir(&jobs).map(|d| d.count()).unwrap_or(0);
        if t0.elapsed() > Duration::from_millis(700) && n > 0 {
            break;
        }
    }
    let pid = child.id();
    let killed = matches!(child.try_wait(), Ok(None));
    let _ = child.kill();
    let _ = child.wait();
    // Its status file, written once the first jobs were out, says it was
    // running, and which process it was.
    let status = |what: &str| -> serde_json::Value {
        let path = jobs.join("status.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{what}: {}: {e}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what}: {e}: {text}"))
    };
    let s = status("killed");
    assert_eq!(s["format"], "antiproof-status", "{s}");
    assert!(killed, "the first run ended before it could be killed: {s}");
    assert_eq!(s["state"], "running", "{s}");
    assert_eq!(s["pid"], pid, "{s}");
    assert_eq!(s["line"], serde_json::json!(["e3", "g6"]), "{s}");
    assert_eq!(s["winner"], "white", "{s}");
    let gen1 = || -> Vec<String> {
        std::fs::read_dir(&jobs)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("g1-"))
            .collect()
    };
    assert!(!gen1().is_empty(), "the killed run left no job file");
    let o = Command::new(EXE)
        .arg("prove")
        .arg("--db")
        .arg(&db)
        .args(args)
        .output()
        .unwrap();
    let v = util::ok_json(&o);
    assert_eq!(v["result"], "proven");
    assert_eq!(v["report"]["resumed"], true);
    assert_certified(&dir, &["e3", "g6"]);
    // At the end the status file says how the run ended.
    let s = status("resumed");
    assert_eq!(s["state"], "proven", "{s}");
    assert_eq!(s["root_pn"], 0, "{s}");
    assert_eq!(s["top_nodes"], v["report"]["top_nodes"], "{s}");
    assert!(
        s["root_moves"].as_array().is_some_and(|m| !m.is_empty()),
        "{s}"
    );
    assert_eq!(s["principal_line"], serde_json::json!([]), "{s}");
    // The killed run's job files (generation 1) are gone, not piled up.
    assert_eq!(gen1(), Vec::<String>::new());
    assert_eq!(v["report"]["principal_line"], serde_json::json!([]));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A worker fault that claims its job disproven (no certificate: a
/// disproof is the search's word).
const CLAIM_DISPROVEN: &str = r#"field() { sed -n "s/.*\"$1\": \"\(.*\)\",*/\1/p" "$job" | head -1; }
cat > "$job.result.json" <<EOF
{"format": "antiproof-job-result", "version": 1, "id": "$(field id)",
 "root_fen": "$(field root_fen)", "rules": "$(field rules)", "winner": "$(field winner)",
 "outcome": "disproven", "root_pn": 4294967295, "root_dn": 0, "nodes": 1,
 "proof_positions": 0, "time_s": 0.0, "tree": null, "stopped_by": null}
EOF"#;

#[test]
fn leaves_workers_disproved_are_tried_again_by_the_next_run() {
    let dir = util::temp_dir("reopen-disproven");
    // The first job (the root's) runs for real and is expanded; every
    // later one claims a disproof, so the root ends disproven.
    let p = dir.join("worker.sh");
    let script = format!(
        "job=\"$1\"\nif mkdir \"{d}/real\" 2>/dev/null; then exec {EXE} job run \"$job\"; fi\n{CLAIM_DISPROVEN}\n",
        d = dir.display()
    );
    std::fs::write(&p, script).unwrap();
    let o = prove_jobs(&dir, Some(&p), &["e3", "Na6"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = util::json(&o);
    assert_eq!(v["result"], "disproven", "{v}");
    assert!(v["report"]["top_nodes"].as_u64().unwrap() > 1, "{v}");
    // The next run trusts none of it: it searches again and proves it.
    let v = util::ok_json(&prove_jobs(&dir, None, &["e3", "Na6"]));
    assert_eq!(v["result"], "proven", "{v}");
    assert_eq!(v["report"]["resumed"], true);
    assert!(v["report"]["reopened"].as_u64().unwrap() >= 1, "{v}");
    assert_certified(&dir, &["e3", "Na6"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failed_root_is_tried_again_and_a_stored_proof_wins_over_the_tree() {
    let dir = util::temp_dir("reopen-failed");
    let bad = dir.join("bad.sh");
    std::fs::write(&bad, "echo 'not json' > \"$1.result.json\"\n").unwrap();
    let o = prove_jobs(&dir, Some(&bad), &["e3", "d5"]);
    assert_eq!(util::json(&o)["result"], "failed");
    let v = util::ok_json(&prove_jobs(&dir, None, &["e3", "d5"]));
    assert_eq!(v["result"], "proven", "{v}");
    assert_eq!(v["report"]["reopened"], 1, "{v}");
    assert_certified(&dir, &["e3", "d5"]);

    // Disproven by a worker's claim, then proven by a plain `prove`: the
    // job-level run answers from the store's proof, whatever its workers
    // would claim.
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let claim = dir.join("claim.sh");
    std::fs::write(&claim, format!("job=\"$1\"\n{CLAIM_DISPROVEN}\n")).unwrap();
    let o = prove_jobs(&dir, Some(&claim), &["e3", "d5"]);
    assert_eq!(util::json(&o)["result"], "disproven");
    let o = Command::new(EXE)
        .arg("prove")
        .arg("--db")
        .arg(dir.join("t.redb"))
        .args(["--memory", "16M", "e3", "d5"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let v = util::ok_json(&prove_jobs(&dir, Some(&claim), &["e3", "d5"]));
    assert_eq!(v["result"], "proven", "{v}");
    assert_eq!(v["report"]["settled_from_store"], 1, "{v}");
    assert_eq!(v["report"]["jobs_done"], 0, "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_sbatch_is_a_clear_error() {
    let dir = util::temp_dir("no-sbatch");
    let o = Command::new(EXE)
        .env("PATH", dir.join("empty"))
        .arg("prove")
        .arg("--db")
        .arg(dir.join("t.redb"))
        .args(["--jobs", "2", "--executor", "slurm", "e3", "d5"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("`sbatch` (Slurm): not found"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Needs a Slurm cluster whose nodes see this directory (one machine:
/// `sudo scripts/slurm-single-node.sh`). Many small jobs over 1.e4.
#[test]
#[ignore = "needs Slurm: run scripts/slurm-single-node.sh first"]
fn proves_a_rung_through_slurm() {
    let dir = util::temp_dir("slurm");
    let o = Command::new(EXE)
        .arg("prove")
        .arg("--db")
        .arg(dir.join("t.redb"))
        .args(["--jobs", "2", "--executor", "slurm", "--job-nodes", "300"])
        .args([
            "--slurm-args",
            "--time=5",
            "--memory",
            "16M",
            "--json",
            "e4",
        ])
        .output()
        .unwrap();
    let v = util::ok_json(&o);
    assert_eq!(v["result"], "proven");
    assert_eq!(v["executor"], "slurm");
    assert!(v["report"]["jobs_done"].as_u64().unwrap() > 1);
    assert_certified(&dir, &["e4"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `prove --executor srun ARGS` as a batch job of two tasks, its master
/// running each job as a step of that allocation: waits for it
/// (`sbatch --wait`) and returns its exit code and its `--json` output.
fn prove_in_allocation(dir: &std::path::Path, args: &str) -> (Option<i32>, serde_json::Value) {
    let out = dir.join("out.json");
    let o = Command::new("sbatch")
        .args(["--wait", "--ntasks=2", "--mem=2G", "--time=5"])
        .arg(format!("--output={}", dir.join("master.log").display()))
        .arg(format!(
            "--wrap=exec {EXE} prove --db {} --executor srun --json {args} > {}",
            dir.join("t.redb").display(),
            out.display()
        ))
        .output()
        .unwrap();
    let log = std::fs::read_to_string(dir.join("master.log")).unwrap_or_default();
    let v = serde_json::from_slice(&std::fs::read(&out).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {log}"));
    (o.status.code(), v)
}

/// Needs Slurm, as above. 1.e4 in small jobs, each a job step of the
/// master's allocation (`--executor srun`, `--jobs` from its two tasks).
#[test]
#[ignore = "needs Slurm: run scripts/slurm-single-node.sh first"]
fn proves_a_rung_through_slurm_steps() {
    let dir = util::temp_dir("slurm-steps");
    let (code, v) = prove_in_allocation(&dir, "--job-nodes 300 --memory 16M e4");
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["result"], "proven");
    assert_eq!(v["executor"], "srun");
    assert_eq!(v["jobs"], 2);
    assert!(v["report"]["jobs_done"].as_u64().unwrap() > 1);
    assert_eq!(v["report"]["jobs_rejected"], 0);
    assert_certified(&dir, &["e4"]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Needs Slurm, as above; about 10 s. A master stopped by its limit
/// inside its allocation stops its steps (SIGTERM to `srun`, which has
/// Slurm cancel the step) and ends as stopped, not waiting for its jobs'
/// hour.
#[test]
#[ignore = "needs Slurm: run scripts/slurm-single-node.sh first"]
fn a_master_at_its_limit_stops_its_slurm_steps() {
    let dir = util::temp_dir("slurm-steps-stop");
    let (code, v) = prove_in_allocation(
        &dir,
        "--job-nodes 1G --memory 64M --limit 6s --winner black b4",
    );
    assert_eq!(code, Some(3), "{v}");
    assert_eq!(v["result"], "stopped", "{v}");
    // srun's own words go to the job's log: the step was cancelled.
    let logs: String = std::fs::read_dir(dir.join("t.redb.jobs"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert!(logs.contains("CANCELLED"), "{logs}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Needs Slurm, as above; about 90 s. A job at its Slurm time limit
/// (`--time=1`: one minute) is warned with SIGTERM 30 s before it
/// (`--signal=B:TERM@30`), stops, and counts as unresolved, not rejected.
#[test]
#[ignore = "needs Slurm: run scripts/slurm-single-node.sh first"]
fn a_slurm_job_at_its_time_limit_counts_as_unresolved() {
    let dir = util::temp_dir("slurm-limit");
    let o = Command::new(EXE)
        .arg("prove")
        .arg("--db")
        .arg(dir.join("t.redb"))
        .args(["--jobs", "2", "--executor", "slurm", "--job-nodes", "1G"])
        .args(["--slurm-args", "--time=1", "--memory", "64M"])
        .args(["--limit", "80s", "--json", "--winner", "black", "b4"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = util::json(&o);
    let r = &v["report"];
    assert_eq!(r["jobs_rejected"], 0, "{r}");
    let first = &r["each"][0];
    assert_eq!(first["outcome"], "unresolved", "{r}");
    // Warned before the limit (without `B:` the worker heard nothing
    // until the limit itself, at 60 s or later).
    assert!(first["time_s"].as_f64().unwrap() < 58.0, "{r}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `prove --jobs 2` of 1.e3 Na6 on `executor` with `extra` options: proven
/// and certified; returns the JSON summary.
fn prove_on(name: &str, executor: &str, extra: &[&str]) -> serde_json::Value {
    let dir = util::temp_dir(name);
    let mut args = vec![
        "--executor",
        executor,
        "--job-nodes",
        "20k",
        "--memory",
        "32M",
    ];
    args.extend(extra);
    let o = prove_jobs_with(&dir, &args, &["e3", "Na6"]);
    let v = util::ok_json(&o);
    assert_eq!(v["result"], "proven", "{v}");
    assert_certified(&dir, &["e3", "Na6"]);
    let _ = std::fs::remove_dir_all(&dir);
    v
}

#[test]
fn jobs_in_threads_share_one_table_and_their_proof_is_certified() {
    let v = prove_on("threads", "threads", &[]);
    assert_eq!(v["executor"], "threads");
    assert_eq!(v["shared_table"], true);
}

#[test]
fn worker_processes_share_a_table_file_or_not() {
    let v = prove_on("shared", "local", &[]);
    assert_eq!(v["shared_table"], true);
    let v = prove_on("unshared", "local", &["--no-shared-table"]);
    assert_eq!(v["shared_table"], false);
    // Jobs with tables of their own search with two threads each; and
    // on the shared table too (each job's two threads on it), each job
    // taking two of the workers.
    let v = prove_on(
        "jobthreads",
        "local",
        &["--no-shared-table", "--job-threads", "2"],
    );
    assert_eq!(v["shared_table"], false);
    let v = prove_on("sharedthreads", "local", &["--job-threads", "2"]);
    assert_eq!(v["shared_table"], true);
    let each = v["report"]["each"].as_array().unwrap();
    assert!(each.iter().all(|j| j["threads"] == 2), "{v}");
}

#[test]
fn a_job_with_a_bad_thread_count_is_refused_naming_its_budget() {
    let dir = util::temp_dir("threads");
    let job = dir.join("j.json");
    let fen = "rnbqkbnr/ppp1pppp/8/3p4/8/4P3/PPPP1PPP/RNBQKBNR w - - 0 2";
    for (threads, ok) in [(0, false), (2, true), (1025, false)] {
        write_job(&job, fen, r#""e3","d5""#, "white", 100_000, "");
        let text = std::fs::read_to_string(&job).unwrap().replace(
            r#""memory_bytes":16777216}"#,
            &format!(r#""memory_bytes":16777216,"threads":{threads}}}"#),
        );
        std::fs::write(&job, text).unwrap();
        let o = job_run(&job);
        let err = String::from_utf8_lossy(&o.stderr);
        if ok {
            assert_eq!(o.status.code(), Some(0), "{err}");
        } else {
            assert_eq!(o.status.code(), Some(2), "{err}");
            assert!(err.contains("budget") && err.contains("threads"), "{err}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `antiproof job run JOB`.
fn job_run(job: &Path) -> Output {
    Command::new(EXE)
        .args(["job", "run"])
        .arg(job)
        .output()
        .unwrap()
}

/// Writes a job file with the given root, line, winner and node budget,
/// and `extra` (more fields, each `,"name":value`) after the others.
fn write_job(path: &Path, root_fen: &str, line: &str, winner: &str, nodes: u64, extra: &str) {
    std::fs::write(
        path,
        format!(
            r#"{{"format":"antiproof-job","version":1,"id":"t","root_fen":"{root_fen}","line":[{line}],"rules":"international","winner":"{winner}","budget":{{"nodes":{nodes},"time_s":10,"memory_bytes":16777216}},"tables":null{extra}}}"#
        ),
    )
    .unwrap();
}

#[test]
fn a_job_whose_history_does_not_lead_to_its_root_is_refused() {
    let dir = util::temp_dir("history");
    let job = dir.join("j.json");
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w - - 0 1";
    let write = |history: &str| {
        write_job(
            &job,
            "rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b - - 1 1",
            r#""Nf3""#,
            "black",
            1000,
            &format!(r#","history":[{history}]"#),
        );
    };
    // The start leads to the root by 1.Nf3: accepted.
    write(&format!("\"{start}\""));
    let o = job_run(&job);
    assert_ne!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // A position that does not: refused, naming the field.
    write("\"8/8/8/8/8/8/8/K6k w - - 0 1\"");
    let o = job_run(&job);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("history"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_job_naming_another_file_as_its_shared_table_leaves_that_file_alone() {
    let dir = util::temp_dir("sharedname");
    // A file of a shared table's size that is not one.
    let victim = dir.join("victim.bin");
    let bytes = vec![7u8; 4 << 20];
    std::fs::write(&victim, &bytes).unwrap();
    let job = dir.join("j.json");
    write_job(
        &job,
        "rnbqkbnr/ppp1pppp/8/3p4/8/4P3/PPPP1PPP/RNBQKBNR w - - 0 2",
        r#""e3","d5""#,
        "white",
        100_000,
        &format!(r#","shared_tt":"{}""#, victim.display()),
    );
    let o = job_run(&job);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("shared table"), "{err}");
    assert_eq!(
        std::fs::read(&victim).unwrap(),
        bytes,
        "the file is untouched"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_job_with_a_damaged_table_excerpt_runs_without_it_and_leaves_its_own() {
    let dir = util::temp_dir("excerpt");
    // 1.e3 Na6 needs some 430 k nodes: 3,000 leave the job unresolved.
    let fen = "r1bqkbnr/pppppppp/n7/8/8/4P3/PPPP1PPP/RNBQKBNR w - - 1 2";
    let damaged = dir.join("parent.json.tt");
    let mut bytes = b"APTTX001".to_vec();
    bytes.extend([7u8; 100]);
    std::fs::write(&damaged, &bytes).unwrap();
    let first = dir.join("first.json");
    write_job(
        &first,
        fen,
        r#""e3","Na6""#,
        "white",
        3000,
        &format!(
            r#","tt_excerpt":"{}","tt_excerpt_out":2000"#,
            damaged.display()
        ),
    );
    // Unresolved: exit 1.
    let o = job_run(&first);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("table excerpt ignored")
            && err.contains(&damaged.display().to_string())
            && err.contains("checksum"),
        "{err}"
    );
    assert_eq!(std::fs::read(&damaged).unwrap(), bytes, "left as it was");
    // Unresolved, it left its own excerpt, and its result names it.
    let own = dir.join("first.json.tt");
    let written = std::fs::read(&own).unwrap();
    assert!(written.starts_with(b"APTTX001"), "{} bytes", written.len());
    let result: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("first.json.result.json")).unwrap())
            .unwrap();
    assert_eq!(result["outcome"], "unresolved", "{result}");
    assert_eq!(result["tt_excerpt"], "first.json.tt", "{result}");
    // A job below starts from it, silently; its own excerpt's name is a
    // link to a file outside, which stays as it was.
    let victim = dir.join("victim");
    std::fs::write(&victim, b"keep").unwrap();
    let second = dir.join("second.json");
    std::os::unix::fs::symlink(&victim, dir.join("second.json.tt")).unwrap();
    write_job(
        &second,
        fen,
        r#""e3","Na6""#,
        "white",
        3000,
        &format!(r#","tt_excerpt":"{}","tt_excerpt_out":2000"#, own.display()),
    );
    let o = job_run(&second);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("excerpt"), "{err}");
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
    assert_eq!(
        std::fs::read(&own).unwrap(),
        written,
        "an input, not written"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `store check --db DB`: its exit code and stdout.
fn store_check(db: &Path) -> (Option<i32>, String) {
    let o = Command::new(EXE)
        .args(["store", "check", "--db"])
        .arg(db)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

#[test]
fn a_link_in_the_work_directory_never_has_the_store_written_over() {
    // The issue's case: the first job's log name, guessable, a link to
    // the store. The log was created through it, the worker's output
    // went over the store, and `store check` found it damaged.
    let dir = util::temp_dir("loglink");
    let db = dir.join("t.redb");
    let o = Command::new(EXE)
        .arg("prove")
        .arg("--db")
        .arg(&db)
        .args(["e3", "d5"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let (code, before) = store_check(&db);
    assert_eq!(code, Some(0), "{before}");
    let work = dir.join("t.redb.jobs");
    std::fs::create_dir(&work).unwrap();
    let log = work.join("g1-n0-a0.json.log");
    std::os::unix::fs::symlink("../t.redb", &log).unwrap();
    let o = prove_jobs_with(
        &dir,
        &[
            "--executor",
            "local",
            "--job-nodes",
            "3000",
            "--memory",
            "16M",
        ],
        &["e3", "Na6"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("cannot create {}", log.display()))
            && err.contains("is a symbolic link: refusing to write through it"),
        "{err}"
    );
    let (code, after) = store_check(&db);
    assert_eq!(code, Some(0), "{after}");
    assert_eq!(after, before, "every record kept");
    assert!(std::fs::symlink_metadata(&log).unwrap().is_symlink());
    // Links at the other names of a job, and at the status file, to a
    // file outside: each is replaced or removed, its target untouched,
    // and the run goes on.
    let victim = dir.join("victim");
    std::fs::write(&victim, "keep").unwrap();
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir(&work).unwrap();
    for name in [
        "g1-n0-a0.json",
        "g1-n0-a0.json.redb",
        "g1-n0-a0.json.result.json",
        "g1-n0-a0.json.tree",
        "status.json",
    ] {
        std::os::unix::fs::symlink(&victim, work.join(name)).unwrap();
    }
    let o = prove_jobs_with(
        &dir,
        &[
            "--executor",
            "local",
            "--job-nodes",
            "2k",
            "--memory",
            "16M",
        ],
        &["e3", "d5"],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    // A hard link of the store under the log's name: refused too.
    let _ = std::fs::remove_dir_all(&work);
    let db2 = dir.join("u.redb");
    std::fs::copy(&db, &db2).unwrap();
    let (_, before) = store_check(&db2);
    let work2 = dir.join("u.redb.jobs");
    std::fs::create_dir(&work2).unwrap();
    std::fs::hard_link(&db2, work2.join("g1-n0-a0.json.log")).unwrap();
    let o = Command::new(EXE)
        .arg("prove")
        .arg("--db")
        .arg(&db2)
        .args(["--jobs", "1", "--executor", "local", "--memory", "16M"])
        .args(["--job-nodes", "3000", "e3", "Na6"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("other hard links"), "{err}");
    let (code, after) = store_check(&db2);
    assert_eq!(code, Some(0), "{after}");
    assert_eq!(after, before);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_second_master_on_a_work_directory_is_refused_until_the_first_is_gone() {
    let dir = util::temp_dir("twomasters");
    let work = dir.join("w");
    // The first master's jobs never end (its worker sleeps): it holds the
    // work directory until killed.
    let sleeper = dir.join("sleep.sh");
    std::fs::write(&sleeper, "exec sleep 120\n").unwrap();
    let master = |db: &str, worker: Option<&Path>, limit: &str| {
        let mut c = Command::new(EXE);
        c.arg("prove")
            .arg("--db")
            .arg(dir.join(db))
            .arg("--work-dir")
            .arg(&work)
            .args(["--jobs", "1", "--executor", "local", "--memory", "16M"])
            .args(["--job-nodes", "2k", "--limit", limit, "e3", "Na6"]);
        if let Some(w) = worker {
            c.arg("--worker").arg(format!("/bin/sh {}", w.display()));
        }
        c
    };
    let mut first = master("a.redb", Some(&sleeper), "120s")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lock = work.join("master.lock");
    let t0 = Instant::now();
    while !std::fs::read_to_string(&lock).is_ok_and(|t| t.contains("pid")) {
        assert!(t0.elapsed() < Duration::from_secs(60), "no lock taken");
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = master("b.redb", None, "120s").output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let a = dir.join("a.redb").canonicalize().unwrap();
    assert!(
        err.contains(&format!(
            "the work directory {} is in use by another master (pid {}, store {})",
            work.canonicalize().unwrap().display(),
            first.id(),
            a.display()
        )),
        "{err}"
    );
    assert!(!dir.join("b.redb").exists(), "nothing written");
    // Killed, the first master holds nothing: the next one runs.
    first.kill().unwrap();
    first.wait().unwrap();
    let o = master("b.redb", None, "2s").output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(matches!(o.status.code(), Some(0 | 3)), "{err}");
    assert!(!err.contains("in use"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_job_whose_shared_table_is_a_link_leaves_its_target_alone() {
    let dir = util::temp_dir("sharedlink");
    // A file of a shared table's size, reached by a link (and by a hard
    // link) named as a shared table.
    let victim = dir.join("victim.bin");
    let bytes = vec![0u8; 4 << 20];
    std::fs::write(&victim, &bytes).unwrap();
    let soft = dir.join("antiproof-1.tt");
    std::os::unix::fs::symlink(&victim, &soft).unwrap();
    let hard = dir.join("antiproof-2.tt");
    std::fs::hard_link(&victim, &hard).unwrap();
    for (table, why) in [(&soft, "is a symbolic link"), (&hard, "other hard links")] {
        let job = dir.join("j.json");
        write_job(
            &job,
            "rnbqkbnr/ppp1pppp/8/3p4/8/4P3/PPPP1PPP/RNBQKBNR w - - 0 2",
            r#""e3","d5""#,
            "white",
            100_000,
            &format!(r#","shared_tt":"{}""#, table.display()),
        );
        let o = job_run(&job);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{err}");
        assert!(err.contains("shared table") && err.contains(why), "{err}");
        assert!(
            std::fs::read(&victim).unwrap() == bytes,
            "{}: the target is untouched",
            table.display()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_job_executor_named_without_jobs_runs_one_job_a_core() {
    // `--executor local` alone is a master with one worker a core, not
    // the single search with the option ignored.
    let dir = util::temp_dir("cores");
    let o = Command::new(EXE)
        .arg("prove")
        .arg("--db")
        .arg(dir.join("t.redb"))
        .args([
            "--executor",
            "local",
            "--job-nodes",
            "20k",
            "--memory",
            "32M",
        ])
        .args(["--json", "e3", "Na6"])
        .output()
        .unwrap();
    let v = util::ok_json(&o);
    assert_eq!(v["executor"], "local", "{v}");
    let cores = std::thread::available_parallelism().unwrap().get();
    assert_eq!(v["jobs"], cores as u64, "{v}");
    assert_certified(&dir, &["e3", "Na6"]);
    // `--jobs 1` with a job executor: a master with one job at a time.
    let _ = std::fs::remove_dir_all(&dir);
    let dir = util::temp_dir("one-job");
    let o = Command::new(EXE)
        .arg("prove")
        .arg("--db")
        .arg(dir.join("t.redb"))
        .args(["--jobs", "1", "--executor", "threads", "--job-nodes", "20k"])
        .args(["--memory", "32M", "--json", "e3", "Na6"])
        .output()
        .unwrap();
    let v = util::ok_json(&o);
    assert_eq!(
        (v["executor"].as_str(), v["jobs"].as_u64()),
        (Some("threads"), Some(1))
    );
    assert!(v["report"]["jobs_done"].as_u64().unwrap() >= 1, "{v}");
    let _ = std::fs::remove_dir_all(&dir);
    // Slurm has no cores to count: it asks.
    let o = Command::new(EXE)
        .args(["prove", "--executor", "slurm", "e3", "d5"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--executor slurm needs --jobs N"), "{err}");
}

#[test]
fn a_job_asking_for_more_memory_than_the_machine_has_clamps_its_table() {
    // A job file comes from a master elsewhere: 1 PiB is a wish the
    // worker scales down to this machine, saying so in its log; the job
    // runs. (One thread: its table grows as it fills, so the test touches
    // little of it.)
    let dir = util::temp_dir("memory");
    let job = dir.join("j.json");
    let fen = "rnbqkbnr/ppp1pppp/8/3p4/8/4P3/PPPP1PPP/RNBQKBNR w - - 0 2";
    write_job(&job, fen, r#""e3","d5""#, "white", 100_000, "");
    let text = std::fs::read_to_string(&job).unwrap().replace(
        r#""memory_bytes":16777216}"#,
        r#""memory_bytes":1125899906842624}"#,
    );
    std::fs::write(&job, text).unwrap();
    let o = job_run(&job);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("memory_bytes 1125899906842624 is more than this machine has for it"),
        "{err}"
    );
    let result = std::fs::read_to_string(dir.join("j.json.result.json")).unwrap();
    assert!(result.contains(r#""outcome": "proven""#), "{result}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The job-level search's settings given to a plain search (no
/// `--executor`, or `--executor search`) are usage errors naming them,
/// before any file is made (they were ignored), and the --state-*
/// settings without --state are too.
#[test]
fn job_settings_with_a_plain_search_are_refused_naming_them() {
    let dir = util::temp_dir("plain-job-settings");
    let db = dir.join("t.redb");
    let work = dir.join("w").display().to_string();
    for (args, named) in [
        (
            vec!["--job-nodes", "2M"],
            "--job-nodes is a setting of the job-level search",
        ),
        (
            vec!["--work-dir", work.as_str()],
            "--work-dir is a setting of the job-level search",
        ),
        (
            vec!["--no-shared-table"],
            "--no-shared-table is a setting of the job-level search",
        ),
        (
            vec!["--executor", "search", "--jobs", "2", "--job-threads", "2"],
            "--job-threads is a setting of the job-level search",
        ),
        (
            vec!["--job-widen", "2"],
            "--job-widen is a setting of the job-level search",
        ),
        (
            vec!["--state-every", "1m"],
            "--state-every goes with --state FILE",
        ),
        (vec!["--state-tt", "5"], "--state-tt goes with --state FILE"),
    ] {
        let out = Command::new(EXE)
            .args(["prove", "--db"])
            .arg(&db)
            .args(&args)
            .args(["e3", "d5"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(named), "{args:?}: {err}");
        assert!(!db.exists(), "{args:?}: a file was made");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--state FILE`: a run saves its state as it goes; on a fresh machine
/// (its store and work directory deleted) the same command restores it
/// and finishes, the proof certified. A damaged file, a file of another
/// line and a file that is the store are refused (exit 2), naming why.
#[test]
fn a_run_state_file_outlives_the_store() {
    let dir = util::temp_dir("state");
    let db = dir.join("t.redb");
    let state = dir.join("e3-g6.state");
    let run = |extra: &[&str], line: &[&str]| {
        Command::new(EXE)
            .args(["prove", "--db"])
            .arg(&db)
            .args(["--jobs", "2", "--executor", "threads", "--memory", "64M"])
            .args(["--job-nodes", "20k", "--state"])
            .arg(&state)
            .args(["--state-every", "1s", "--json"])
            .args(extra)
            .args(line)
            .output()
            .unwrap()
    };
    let o = run(&["--limit", "2s"], &["e3", "g6"]);
    assert!(
        matches!(o.status.code(), Some(0 | 3)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("run state saved to"));
    assert!(state.is_file());
    // A fresh machine: nothing but the state file.
    std::fs::remove_file(&db).unwrap();
    let _ = std::fs::remove_dir_all(dir.join("t.redb.jobs"));
    let o = run(&[], &["e3", "g6"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(err.contains("run state restored from"), "{err}");
    let v = util::ok_json(&o);
    assert_eq!(v["result"], "proven");
    assert_eq!(v["report"]["resumed"], true);
    assert_certified(&dir, &["e3", "g6"]);
    // The store holds the tree now: the file is read for its table
    // entries only.
    let o = run(&[], &["e3", "g6"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("is read only for its table entries"));
    // Another line, a fresh store: refused, naming the file's line.
    std::fs::remove_file(&db).unwrap();
    let o = run(&[], &["e3", "d5"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(err.contains("not of this one"), "{err}");
    // A damaged file: refused, never half read.
    let mut bytes = std::fs::read(&state).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    std::fs::write(&state, &bytes).unwrap();
    let o = run(&[], &["e3", "g6"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(err.contains("not a valid state file"), "{err}");
    // Cut short.
    std::fs::write(&state, &bytes[..mid]).unwrap();
    let o = run(&[], &["e3", "g6"]);
    assert_eq!(o.status.code(), Some(2));
    // The store as the state file.
    let o = Command::new(EXE)
        .args(["prove", "--db"])
        .arg(&db)
        .args(["--executor", "threads", "--state"])
        .arg(&db)
        .args(["e3", "g6"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}
