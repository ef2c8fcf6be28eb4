//! `prove --jobs N --executor slurm` against a fake Slurm: `sbatch`,
//! `squeue` and `scancel` as shell scripts first on PATH, which run each
//! job in the background on this machine and list the ones still running.
//! So the Slurm executor is tested in every run, with the bad moments of
//! a real cluster it must live through: a submit limit (`sbatch` refusing
//! while jobs are queued), a controller that does not answer one `squeue`
//! in two, results that show in the work directory only seconds after
//! their job left the queue (a shared file system's caches), `sbatch`
//! refusing the very first job (a wrong `--slurm-args`: an error at once,
//! the status file saying so), and `squeue` down for longer than
//! `--slurm-patience` (the master stops). The real thing, on a one-node
//! cluster, is the ignored `proves_a_rung_through_slurm` in tests/jobs.rs.

use crate::util::{self, EXE};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fresh directory with the fake Slurm's `bin/` and its state.
fn fake_slurm(name: &str) -> PathBuf {
    let d = util::temp_dir(&format!("slurm-{name}"));
    for sub in ["bin", "state/queue", "state/pids"] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
    }
    let script = |name: &str, body: &str| {
        let p = d.join("bin").join(name);
        std::fs::write(&p, format!("#!/bin/sh\nS=\"$FAKE_SLURM\"\n{body}")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    // sbatch: runs --wrap's command (without its `exec`) in a session of
    // its own; `queue/ID` exists while it runs. With FAKE_LATE=S the
    // result file is hidden from the moment the job leaves the queue
    // until S seconds later; with FAKE_TIME_LIMIT=S the worker gets
    // SIGTERM S seconds after it started, as Slurm's `--signal=B:TERM`
    // warns it before the time limit; with FAKE_HOLD=S a job stays in
    // the queue S seconds after its worker ended (Slurm's completing
    // state), so a submit limit is met whenever two jobs go out at once.
    script(
        "sbatch",
        r#"out=/dev/null; wrap=
for a in "$@"; do
  case "$a" in
    --version) echo "slurm 23.11.4 (fake)"; exit 0 ;;
    --output=*) out="${a#--output=}" ;;
    --wrap=*) wrap="${a#--wrap=}" ;;
  esac
done
echo "$*" >> "$S/sbatch.args"
if [ -e "$S/refuse-all" ]; then
  echo "sbatch: error: invalid partition specified: nosuch" >&2; exit 1
fi
if [ -n "$FAKE_SUBMIT_LIMIT" ] && [ "$(ls "$S/queue" | wc -l)" -ge "$FAKE_SUBMIT_LIMIT" ]; then
  echo "sbatch: error: QOSMaxSubmitJobPerUserLimit" >&2; echo x >> "$S/refused"; exit 1
fi
n=$(( $(cat "$S/next" 2>/dev/null || echo 1000) + 1 )); echo "$n" > "$S/next"
job="${out%.log}"
cat > "$S/job-$n.sh" <<EOS
${wrap#exec } &
w=\$!
if [ -n "$FAKE_TIME_LIMIT" ]; then (sleep $FAKE_TIME_LIMIT; kill -TERM \$w 2>/dev/null) & fi
wait \$w
if [ -n "$FAKE_HOLD" ]; then sleep $FAKE_HOLD; fi
r='$job.result.json'
if [ -n "$FAKE_LATE" ] && [ -e "\$r" ]; then
  mv "\$r" "\$r.hidden"; rm -f '$S/queue/$n'; sleep $FAKE_LATE; mv "\$r.hidden" "\$r"
else
  rm -f '$S/queue/$n'
fi
EOS
touch "$S/queue/$n"
setsid sh "$S/job-$n.sh" > "$out" 2>&1 < /dev/null &
echo $! > "$S/pids/$n"
echo "$n"
"#,
    );
    // squeue: the jobs still queued. FAKE_SQUEUE_FLAKY: every second
    // call fails; FAKE_SQUEUE_DIES_AFTER=N: every call after the N-th.
    script(
        "squeue",
        r#"case "$1" in --version) echo "slurm 23.11.4 (fake)"; exit 0 ;; esac
calls=$(( $(cat "$S/squeue.calls" 2>/dev/null || echo 0) + 1 )); echo "$calls" > "$S/squeue.calls"
if [ -n "$FAKE_SQUEUE_DIES_AFTER" ] && [ "$calls" -gt "$FAKE_SQUEUE_DIES_AFTER" ]; then
  echo "squeue: error: Unable to contact slurm controller (connect failure)" >&2; exit 1
fi
if [ -n "$FAKE_SQUEUE_FLAKY" ] && [ $((calls % 2)) -eq 0 ]; then
  echo "slurm_load_jobs error: Socket timed out on send/recv operation" >&2; exit 1
fi
ls "$S/queue"
"#,
    );
    script(
        "scancel",
        r#"for id in "$@"; do
  pid=$(cat "$S/pids/$id" 2>/dev/null) && kill -TERM -- "-$pid" 2>/dev/null
  rm -f "$S/queue/$id"
done
"#,
    );
    d
}

/// PATH with the fake's `bin/` in `dir` first.
fn fake_first_on_path(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// `prove --jobs 2 --executor slurm --json` of `line` with small jobs on
/// the fake Slurm in `dir`, with `env` and `extra` options.
fn prove(dir: &Path, env: &[(&str, &str)], extra: &[&str], line: &[&str]) -> Output {
    Command::new(EXE)
        .env("PATH", fake_first_on_path(dir))
        .env("FAKE_SLURM", dir.join("state"))
        .envs(env.iter().copied())
        .arg("prove")
        .arg("--db")
        .arg(dir.join("t.redb"))
        .args(["--jobs", "2", "--executor", "slurm", "--json"])
        .args(["--memory", "16M"])
        // Small jobs unless `extra` says otherwise.
        .args(if extra.contains(&"--job-nodes") {
            &[][..]
        } else {
            &["--job-nodes", "300"][..]
        })
        .args(["--slurm-args", "--partition=debug --time=5"])
        .args(extra)
        .args(line)
        .output()
        .unwrap()
}

/// The JSON summary of a run that proved its line; the store's proof is
/// certified with `verify --db`.
fn proven(dir: &Path, o: &Output, line: &[&str]) -> serde_json::Value {
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["result"], "proven", "{v}");
    assert_eq!(v["executor"], "slurm");
    util::assert_store_certified(&dir.join("t.redb"), line);
    v
}

/// The work directory's status file.
fn status_file(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("t.redb.jobs/status.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The names in the work directory other than the status file and the
/// master's lock file: what the jobs left.
fn left_in_work_dir(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir.join("t.redb.jobs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "status.json" && n != "master.lock")
        .collect()
}

/// Nothing of the fake's jobs is left running (the master cancelled what
/// it no longer needed, and every job it waited for ended).
fn nothing_left_queued(dir: &Path) {
    let left = std::fs::read_dir(dir.join("state/queue")).unwrap().count();
    assert_eq!(left, 0, "jobs left in the fake queue");
}

#[test]
fn proves_a_line_through_sbatch_and_squeue() {
    let dir = fake_slurm("plain");
    let o = prove(&dir, &[], &[], &["e4"]);
    let v = proven(&dir, &o, &["e4"]);
    let r = &v["report"];
    assert!(r["jobs_done"].as_u64().unwrap() > 1, "{r}");
    assert_eq!(r["jobs_rejected"], 0, "{r}");
    // Every sbatch carried the user's arguments and the time-limit signal.
    let args = std::fs::read_to_string(dir.join("state/sbatch.args")).unwrap();
    for line in args.lines() {
        for want in [
            "--parsable",
            "--signal=B:TERM@30",
            "--partition=debug",
            "--time=5",
        ] {
            assert!(line.contains(want), "{want} missing from: {line}");
        }
    }
    assert_eq!(status_file(&dir)["state"], "proven");
    nothing_left_queued(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A widened job (`--job-widen`) of T threads asks Slurm for T CPUs
/// (`--cpus-per-task`), a job of one thread for none beyond the default;
/// batch jobs and job steps alike.
#[test]
fn a_job_of_several_threads_asks_for_a_cpu_a_thread() {
    let widen = ["--job-widen", "2"];
    let dir = fake_slurm("cpus");
    let o = prove(&dir, &[], &widen, &["e4"]);
    let v = proven(&dir, &o, &["e4"]);
    let threads = |v: &serde_json::Value| -> Vec<u64> {
        let each = v["report"]["each"].as_array().unwrap();
        each.iter()
            .map(|j| j["threads"].as_u64().unwrap_or(1))
            .collect()
    };
    let t = threads(&v);
    assert!(t.contains(&2), "no job of two threads: {v}");
    let args = std::fs::read_to_string(dir.join("state/sbatch.args")).unwrap();
    let asked = args
        .lines()
        .filter(|l| l.contains("--cpus-per-task=2"))
        .count();
    assert!(asked > 0, "{args}");
    assert!(!args.contains("--cpus-per-task=1"), "{args}");
    nothing_left_queued(&dir);
    let _ = std::fs::remove_dir_all(&dir);

    let dir = fake_srun("cpus");
    let o = prove_steps(
        &dir,
        &[("SLURM_JOB_ID", "4242")],
        &["--jobs", "2", "--job-widen", "2"],
        &["e4"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["result"], "proven", "{v}");
    util::assert_store_certified(&dir.join("t.redb"), &["e4"]);
    let args = std::fs::read_to_string(dir.join("state/srun.args")).unwrap();
    let two = args
        .lines()
        .filter(|l| l.contains("--cpus-per-task=2 "))
        .count();
    let one = args
        .lines()
        .filter(|l| l.contains("--cpus-per-task=1 "))
        .count();
    let t = threads(&v);
    assert_eq!(two, t.iter().filter(|&&n| n == 2).count(), "{args}");
    assert_eq!(one, t.iter().filter(|&&n| n == 1).count(), "{args}");
    assert!(two > 0, "{args}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_submit_limit_holds_submissions_and_the_line_is_still_proven() {
    let dir = fake_slurm("limit");
    // One job queued at a time: the second of each round is refused.
    // Jobs held in the queue a moment after they end: a job of 300 nodes
    // could otherwise leave it before the round's next sbatch on a
    // loaded machine, and nothing would be refused.
    let o = prove(
        &dir,
        &[("FAKE_SUBMIT_LIMIT", "1"), ("FAKE_HOLD", "0.3")],
        &[],
        &["e4"],
    );
    let v = proven(&dir, &o, &["e4"]);
    assert!(dir.join("state/refused").exists(), "no sbatch was refused");
    let err = util::stderr(&o);
    assert!(err.contains("QOSMaxSubmitJobPerUserLimit"), "{err}");
    assert!(err.contains("holding submissions"), "{err}");
    // A refused job is handed back, not counted as a failure.
    assert_eq!(v["report"]["jobs_rejected"], 0);
    assert_eq!(v["report"]["leaves_failed"], 0);
    nothing_left_queued(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_controller_missing_every_other_squeue_is_asked_again() {
    let dir = fake_slurm("flaky");
    let o = prove(&dir, &[("FAKE_SQUEUE_FLAKY", "1")], &[], &["e4"]);
    proven(&dir, &o, &["e4"]);
    let err = util::stderr(&o);
    assert!(err.contains("Socket timed out"), "{err}");
    assert!(err.contains("trying again"), "{err}");
    nothing_left_queued(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn results_that_show_late_are_waited_for_not_run_again() {
    // Each result shows 2 s after its job left the queue.
    let dir = fake_slurm("late");
    let o = prove(
        &dir,
        &[("FAKE_LATE", "2")],
        &["--slurm-grace", "60"],
        &["e3", "d5"],
    );
    let v = proven(&dir, &o, &["e3", "d5"]);
    assert_eq!(v["report"]["jobs_rejected"], 0, "{}", v["report"]);
    let _ = std::fs::remove_dir_all(&dir);

    // Without the grace each such job is taken as lost and run again.
    let dir = fake_slurm("late-nograce");
    let o = prove(
        &dir,
        &[("FAKE_LATE", "2")],
        &["--slurm-grace", "0", "--limit", "8s"],
        &["e3", "d5"],
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let each = v["report"]["each"].as_array().unwrap();
    assert!(
        each.iter().any(|j| j["rejected"]
            .as_str()
            .is_some_and(|w| w.starts_with("no-result"))),
        "{v}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_job_stopped_before_its_time_limit_counts_as_unresolved() {
    // Jobs with a budget far beyond a second, each sent SIGTERM after one.
    let dir = fake_slurm("timelimit");
    let o = prove(
        &dir,
        &[("FAKE_TIME_LIMIT", "1")],
        &["--job-nodes", "1G", "--limit", "5s"],
        &["e3", "e5"],
    );
    assert_eq!(o.status.code(), Some(3), "{}", util::stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &v["report"];
    assert_eq!(r["jobs_rejected"], 0, "{r}");
    let each = r["each"].as_array().unwrap();
    // The root's job was stopped by the signal, its leaf expanded (its
    // children's jobs ran next), nothing counted against it.
    assert_eq!(each[0]["depth"], 0, "{r}");
    assert_eq!(each[0]["outcome"], "unresolved", "{r}");
    assert!(each[0]["time_s"].as_f64().unwrap() < 10.0, "{r}");
    assert!(r["top_nodes"].as_u64().unwrap() > 1, "{r}");
    // Where it stopped: the principal line starts with the best of the
    // root's moves not yet settled, in the report and the status file.
    let open = r["root_moves"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| !["proven", "disproven", "failed"].contains(&m["state"].as_str().unwrap()))
        .unwrap_or_else(|| panic!("no open root move: {r}"));
    assert_eq!(r["principal_line"][0]["san"], open["san"], "{r}");
    let s = status_file(&dir);
    assert_eq!(s["state"], "stopped", "{s}");
    assert_eq!(s["principal_line"], r["principal_line"], "{s}");
    nothing_left_queued(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sbatch_refusing_the_first_job_is_an_error_at_once() {
    let dir = fake_slurm("refused");
    std::fs::write(dir.join("state/refuse-all"), "").unwrap();
    let o = prove(&dir, &[], &[], &["e4"]);
    assert_eq!(o.status.code(), Some(2), "{}", util::stderr(&o));
    let err = util::stderr(&o);
    assert!(err.contains("sbatch failed"), "{err}");
    assert!(err.contains("invalid partition specified: nosuch"), "{err}");
    // The status file says the run is over, and why.
    let s = status_file(&dir);
    assert_eq!(s["state"], "error", "{s}");
    assert!(
        s["error"]
            .as_str()
            .is_some_and(|e| e.contains("invalid partition")),
        "{s}"
    );
    // No job file is left behind for a job that never ran (the status
    // file and the master's lock file stay).
    let left = left_in_work_dir(&dir);
    assert!(left.is_empty(), "{left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn squeue_down_past_the_patience_stops_the_master_cleanly() {
    let dir = fake_slurm("down");
    let o = prove(
        &dir,
        &[("FAKE_SQUEUE_DIES_AFTER", "2")],
        &["--slurm-patience", "2"],
        // A line that outlives two squeue calls (1.e4 no longer does,
        // its jobs passing their table excerpts down).
        &["e3", "Na6"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", util::stderr(&o));
    let err = util::stderr(&o);
    assert!(err.contains("Unable to contact slurm controller"), "{err}");
    assert_eq!(status_file(&dir)["state"], "error");
    // Its jobs were cancelled on the way out.
    nothing_left_queued(&dir);
    // The store is whole: the same command, with the controller back,
    // resumes and proves the line.
    std::fs::remove_file(dir.join("state/squeue.calls")).unwrap();
    let o = prove(&dir, &[], &[], &["e4"]);
    proven(&dir, &o, &["e4"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_link_at_a_job_log_name_is_refused_before_sbatch() {
    // Slurm opens `--output` following links: the master makes the log
    // itself first, and a link under its name stops the run.
    let dir = fake_slurm("loglink");
    let victim = dir.join("victim");
    std::fs::write(&victim, "keep").unwrap();
    let work = dir.join("t.redb.jobs");
    std::fs::create_dir_all(&work).unwrap();
    let log = work.join("g1-n0-a0.json.log");
    std::os::unix::fs::symlink(&victim, &log).unwrap();
    let o = prove(&dir, &[], &[], &["e4"]);
    let err = util::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("cannot create {}", log.display())) && err.contains("symbolic link"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    nothing_left_queued(&dir);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fake `srun` in `dir/bin` for `--executor srun`: it records its
/// arguments (one line a step in `state/srun.args`), skips its options
/// and runs the worker, forwarding SIGTERM to it as the real one does.
fn fake_srun(name: &str) -> PathBuf {
    let d = util::temp_dir(&format!("srun-{name}"));
    std::fs::create_dir_all(d.join("bin")).unwrap();
    std::fs::create_dir_all(d.join("state")).unwrap();
    let p = d.join("bin/srun");
    std::fs::write(
        &p,
        r#"#!/bin/sh
case "$1" in --version) echo "slurm 22.05.8 (fake)"; exit 0 ;; esac
echo "$*" >> "$FAKE_SLURM/srun.args"
while [ $# -gt 0 ]; do case "$1" in --*) shift ;; *) break ;; esac; done
"$@" &
w=$!
trap 'kill -TERM $w 2>/dev/null' TERM
wait $w
wait $w
"#,
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    d
}

/// `prove --executor srun --json` of `line` in small jobs, on the fake
/// `srun` in `dir`, in an allocation described by `env` (none of the
/// caller's Slurm variables leak in).
fn prove_steps(dir: &Path, env: &[(&str, &str)], extra: &[&str], line: &[&str]) -> Output {
    Command::new(EXE)
        .env("PATH", fake_first_on_path(dir))
        .env("FAKE_SLURM", dir.join("state"))
        .env_remove("SLURM_JOB_ID")
        .env_remove("SLURM_NTASKS")
        .envs(env.iter().copied())
        .arg("prove")
        .arg("--db")
        .arg(dir.join("t.redb"))
        .args(["--executor", "srun", "--json", "--memory", "16M"])
        .args(["--job-nodes", "300"])
        .args(extra)
        .args(line)
        .output()
        .unwrap()
}

#[test]
fn proves_a_line_through_srun_steps_of_its_allocation() {
    let dir = fake_srun("plain");
    // No --jobs: the allocation's tasks.
    let o = prove_steps(
        &dir,
        &[("SLURM_JOB_ID", "4242"), ("SLURM_NTASKS", "3")],
        &["--slurm-args", "--partition=debug"],
        &["e4"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["result"], "proven", "{v}");
    assert_eq!(v["executor"], "srun");
    assert_eq!(v["report"]["jobs_rejected"], 0, "{}", v["report"]);
    util::assert_store_certified(&dir.join("t.redb"), &["e4"]);
    // Every step: one task on one node, CPUs of its own, the job's table
    // and a margin of memory (16M + 512M), the user's arguments, then
    // this program's `job run` and the job file.
    let args = std::fs::read_to_string(dir.join("state/srun.args")).unwrap();
    assert!(args.lines().count() > 1, "{args}");
    for line in args.lines() {
        assert!(
            line.starts_with(
                "--exclusive --nodes=1 --ntasks=1 --cpus-per-task=1 --mem=528M --partition=debug "
            ),
            "{line}"
        );
        assert!(line.contains(" job run "), "{line}");
        assert!(line.ends_with(".json"), "{line}");
    }
    // The work directory keeps no job files once the line is proven.
    let left = left_in_work_dir(&dir);
    assert!(left.is_empty(), "{left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_step_memory_the_user_names_is_theirs() {
    let dir = fake_srun("mem");
    let o = prove_steps(
        &dir,
        &[("SLURM_JOB_ID", "4242")],
        &["--jobs", "2", "--slurm-args", "--mem-per-cpu=2G"],
        &["e4"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", util::stderr(&o));
    let args = std::fs::read_to_string(dir.join("state/srun.args")).unwrap();
    for line in args.lines() {
        assert!(line.contains("--mem-per-cpu=2G"), "{line}");
        assert!(!line.contains("--mem="), "{line}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn srun_steps_outside_an_allocation_are_refused_naming_why() {
    let dir = fake_srun("refused");
    // Not in an allocation.
    let o = prove_steps(&dir, &[], &["--jobs", "2"], &["e4"]);
    assert_eq!(o.status.code(), Some(2));
    let err = util::stderr(&o);
    assert!(err.contains("SLURM_JOB_ID is not set"), "{err}");
    assert!(err.contains("sbatch or salloc"), "{err}");
    // In one, with no --jobs and no task count to take it from.
    let o = prove_steps(&dir, &[("SLURM_JOB_ID", "1")], &[], &["e4"]);
    assert_eq!(o.status.code(), Some(2));
    let err = util::stderr(&o);
    assert!(err.contains("SLURM_NTASKS"), "{err}");
    // More tasks than --jobs takes.
    let o = prove_steps(
        &dir,
        &[("SLURM_JOB_ID", "1"), ("SLURM_NTASKS", "100000")],
        &[],
        &["e4"],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = util::stderr(&o);
    assert!(err.contains("100000 tasks"), "{err}");
    // No srun on PATH.
    let o = Command::new(EXE)
        .env("PATH", "/nonexistent")
        .env("SLURM_JOB_ID", "1")
        .arg("prove")
        .arg("--db")
        .arg(dir.join("u.redb"))
        .args(["--executor", "srun", "--jobs", "2", "e4"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = util::stderr(&o);
    assert!(err.contains("srun"), "{err}");
    assert!(err.contains("not found"), "{err}");
    assert!(!dir.join("state/srun.args").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
