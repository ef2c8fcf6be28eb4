//! Paths that are not what a command expects: FIFOs, directories and
//! devices where a file is read (refused at once, never waited on),
//! missing or empty directories, a missing `TMPDIR` for `demo`; the
//! messages of I/O errors, which say the path and the cause once; and a
//! closed standard output, which stops the output and changes no exit code.

use crate::util;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs antiproof with `env` set; the exit code and stderr. Fails the test
/// (after killing the process) if it runs 60 s: a FIFO read would block.
fn run_env(args: &[&str], env: &[(&str, &Path)]) -> (Option<i32>, String) {
    let mut cmd = Command::new(util::EXE);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("antiproof {args:?} did not finish in 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn run(args: &[&str]) -> (Option<i32>, String) {
    run_env(args, &[])
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn fifos_directories_and_devices_are_refused_at_once() {
    let d = util::temp_dir("fifo");
    let fifo = d.join("proof.tree");
    mkfifo(&fifo);
    let f = fifo.to_str().unwrap();
    let dir = d.to_str().unwrap();
    for args in [
        vec!["verify", "--tree", f],
        vec!["browse", "--tree", f],
        vec!["verify", "--tree", "/dev/null"],
        vec!["verify", "--tree", dir],
        vec!["browse", "--tree", dir],
        vec!["verify", "--db", f],
        vec!["browse", "--db", f],
        vec!["export", "--db", f, "-o", "/nonexistent-dir/x.tree"],
        vec!["prove", "--obligations", f],
        vec!["prove", "--obligations", dir],
        vec!["job", "run", f],
    ] {
        let (code, err) = run(&args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        let path = args[2];
        assert!(
            err.contains(path) && err.contains("not a regular file"),
            "{args:?}: {err}"
        );
    }
    let (_, err) = run(&["verify", "--tree", f]);
    assert_eq!(
        err,
        format!("antiproof: error: cannot read win-tree file {f}: not a regular file (a FIFO)\n")
    );
    let (_, err) = run(&["verify", "--tree", dir]);
    assert!(err.contains("(a directory)"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn missing_and_empty_directories_are_errors() {
    let d = util::temp_dir("dirs");
    let missing = d.join("missing");
    let m = missing.to_str().unwrap();
    let (code, err) = run(&["openings", "--proofs", m]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(err, format!("antiproof: error: {m}: no such directory\n"));
    let (code, err) = run(&["tables", "verify", "--dir", m]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err,
        format!("antiproof: error: table directory {m}: no such directory\n")
    );
    let (code, err) = run(&["tables", "verify", "--dir", m, "KvK"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not built"), "{err}");
    let empty = d.to_str().unwrap();
    for rules in ["international", "fics"] {
        let (code, err) = run(&["tables", "verify", "--dir", empty, "--rules", rules]);
        assert_eq!(code, Some(2), "{err}");
        assert_eq!(
            err,
            format!(
                "antiproof: error: no tables of rules {rules} in {empty}; \
                 build them with `antiproof tables build --dir {empty}`\n"
            )
        );
    }
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn io_errors_say_the_path_and_the_cause_once() {
    let d = util::temp_dir("messages");
    let missing = d.join("missing.redb");
    let m = missing.to_str().unwrap();
    for cmd in ["verify", "browse", "export"] {
        let (code, err) =
            run(&[cmd, "--db", m, "-o", "/dev/null"][..if cmd == "export" { 5 } else { 3 }]);
        assert_eq!(code, Some(2), "{cmd}: {err}");
        assert_eq!(
            err,
            format!("antiproof: error: cannot open proof store {m}: no such file\n"),
            "{cmd}"
        );
    }
    let tree = d.join("missing.tree");
    let t = tree.to_str().unwrap();
    for cmd in ["verify", "browse"] {
        let (code, err) = run(&[cmd, "--tree", t]);
        assert_eq!(code, Some(2), "{cmd}: {err}");
        assert!(
            err.starts_with(&format!(
                "antiproof: error: cannot read win-tree file {t}: "
            )),
            "{cmd}: {err}"
        );
        assert_eq!(err.matches("os error 2").count(), 1, "{cmd}: {err}");
    }
    // Not a store at all: the path once, the engine's words once.
    let junk = d.join("junk.redb");
    std::fs::write(&junk, vec![0x5a; 4096]).unwrap();
    let j = junk.to_str().unwrap();
    for cmd in ["verify", "browse"] {
        let (code, err) = run(&[cmd, "--db", j]);
        assert_eq!(code, Some(2), "{cmd}: {err}");
        assert_eq!(err.matches(j).count(), 1, "{cmd}: {err}");
        assert_eq!(err.matches("proof store").count(), 1, "{cmd}: {err}");
    }
    // A file too short to be a win-tree: the path once, "win-tree" once.
    let short = d.join("short.tree");
    std::fs::write(&short, b"x").unwrap();
    let s = short.to_str().unwrap();
    let (code, err) = run(&["browse", "--tree", s]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(
        err,
        format!(
            "antiproof: error: {s}: win-tree file has 1 bytes, less than the 6-byte root record\n"
        )
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn demo_never_creates_tmpdir_and_removes_its_own_directory() {
    let d = util::temp_dir("demo");
    let missing = d.join("no-such-tmp");
    let (code, err) = run_env(&["demo"], &[("TMPDIR", &missing)]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!("{} (TMPDIR)", missing.display())),
        "{err}"
    );
    assert!(!missing.exists(), "demo created TMPDIR");
    let tmp = d.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let (code, err) = run_env(&["demo"], &[("TMPDIR", &tmp)]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "demo left files"
    );
    // A failing demo (a bad line) removes its directory too.
    let (code, err) = run_env(&["demo", "e3", "0000"], &[("TMPDIR", &tmp)]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("null move"), "{err}");
    assert_eq!(
        std::fs::read_dir(&tmp).unwrap().count(),
        0,
        "demo left files"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

/// Runs antiproof with its standard output a pipe whose reading end is
/// closed before the program writes (`antiproof ... | true`); the exit
/// code and stderr.
fn run_stdout_closed(args: &[&str]) -> (Option<i32>, String) {
    let mut cmd = util::command();
    cmd.args(args);
    util::run_with_closed(cmd, util::Stream::Stdout)
}

/// Runs antiproof; the exit code, stdout and stderr.
fn run_out(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(util::EXE)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_closed_stdout_changes_no_exit_code() {
    let d = util::temp_dir("closed-stdout");
    let garbage = d.join("garbage.tree");
    std::fs::write(&garbage, b"not a win tree").unwrap();
    let db = d.join("s.redb");
    let owed = d.join("owed.epd");
    let (g, db_s, owed_s) = (
        garbage.to_str().unwrap(),
        db.to_str().unwrap(),
        owed.to_str().unwrap(),
    );
    let cases: [(&[&str], i32); 8] = [
        // Rejected by the checker (1.Nc3's proof does not hold under FICS
        // rules), or malformed: 1, as with the output read.
        (
            &["verify", "--tree", "proofs/Nc3.tree", "--rules", "fics"],
            1,
        ),
        (&["verify", "--json", "--tree", g], 1),
        (&["verify", "--tree", g], 1),
        // Certified, and the obligations file still written.
        (
            &[
                "verify",
                "--tree",
                "proofs/e3-Na6.tree",
                "--obligations",
                owed_s,
            ],
            0,
        ),
        // Stopped by its limit: 3, text or JSON.
        (
            &[
                "prove",
                "--db",
                db_s,
                "--memory",
                "16M",
                "--limit",
                "2000nodes",
                "e3",
                "c5",
            ],
            3,
        ),
        (
            &[
                "prove",
                "--json",
                "--db",
                db_s,
                "--memory",
                "16M",
                "--limit",
                "2000nodes",
                "e3",
                "c5",
            ],
            3,
        ),
        // No verdict: done.
        (&["perft", "3"], 0),
        (&["browse", "--tree", "proofs/e3-Na6.tree"], 0),
    ];
    for (args, want) in cases {
        let (code, err) = run_stdout_closed(args);
        assert_eq!(code, Some(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    assert!(
        std::fs::read_to_string(&owed)
            .unwrap()
            .starts_with("# antiproof obligations")
    );
    // The stopped search went on to save its table for the next run.
    assert!(d.join("s.redb.table").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn no_output_overwrites_an_input_or_a_file_of_another_kind() {
    let d = util::temp_dir("outputs");
    let proofs = Path::new(env!("CARGO_MANIFEST_DIR")).join("proofs");
    let full = d.join("full.tree");
    std::fs::copy(proofs.join("e3-d5.tree"), &full).unwrap();
    let tree = std::fs::read(&full).unwrap();
    let f = full.to_str().unwrap();
    let db = d.join("s.redb");
    let s = db.to_str().unwrap();
    let (code, _, err) = run_out(&["prove", "--db", s, "e3", "d5"]);
    assert_eq!(code, Some(0), "{err}");
    let store = std::fs::read(&db).unwrap();
    // The certificate as its own obligations output, however spelled:
    // it was replaced by a 178-byte obligations file, exit 0.
    let link = d.join("link.tree");
    std::os::unix::fs::symlink("full.tree", &link).unwrap();
    let hard = d.join("hard.tree");
    std::fs::hard_link(&full, &hard).unwrap();
    let dotted = d.join(".").join("full.tree");
    for out in [&full, &link, &hard, &dotted] {
        let o = out.to_str().unwrap();
        let (code, _, err) = run_out(&["verify", "--tree", f, "--obligations", o]);
        assert_eq!(code, Some(2), "{o}: {err}");
        assert_eq!(
            err,
            format!(
                "antiproof: error: the output {o} is the input {f}: refusing to overwrite it (choose another output file)\n"
            )
        );
    }
    // A store, another certificate, a FIFO, a device, a directory: not
    // obligations files, never replaced by one.
    let other = d.join("other.tree");
    std::fs::write(&other, &tree).unwrap();
    let fifo = d.join("fifo");
    mkfifo(&fifo);
    for (out, what) in [
        (s, "is a proof store"),
        (
            other.to_str().unwrap(),
            "exists and is not an obligations file",
        ),
        (fifo.to_str().unwrap(), "is a FIFO"),
        ("/dev/null", "is a device"),
        (d.to_str().unwrap(), "is a directory"),
    ] {
        let (code, _, err) = run_out(&["verify", "--tree", f, "--obligations", out]);
        assert_eq!(code, Some(2), "{out}: {err}");
        assert_eq!(
            err,
            format!(
                "antiproof: error: the output {out} {what}: refusing to overwrite it with an obligations file (choose another output file)\n"
            )
        );
    }
    assert_eq!(std::fs::read(&db).unwrap(), store, "the store is untouched");
    assert_eq!(std::fs::read(&other).unwrap(), tree);
    // An obligations file (or an empty file) is replaced by a new one.
    let ob = d.join("o.epd");
    std::fs::write(&ob, "").unwrap();
    let o = ob.to_str().unwrap();
    for _ in 0..2 {
        let (code, _, err) = run_out(&["verify", "--tree", f, "--obligations", o]);
        assert_eq!(code, Some(0), "{err}");
    }
    assert!(
        std::fs::read_to_string(&ob)
            .unwrap()
            .starts_with("# antiproof obligations")
    );
    // export: another store as the output.
    let (code, _, err) = run_out(&["export", "--db", s, "-o", s, "e3", "d5"]);
    assert_eq!(code, Some(2), "{err}");
    let (code, _, err) = run_out(&["export", "--db", s, "-o", o, "e3", "d5"]);
    assert_eq!(code, Some(0), "an obligations file is no store: {err}");
    let db2 = d.join("t.redb");
    std::fs::copy(&db, &db2).unwrap();
    let t = db2.to_str().unwrap();
    let (code, _, err) = run_out(&["export", "--db", s, "-o", t, "e3", "d5"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is a proof store"), "{err}");
    assert_eq!(std::fs::read(&db2).unwrap(), store);
    // export --split-above: a part named as the --tree input.
    let part = d.join("x-Bxa6-bxa6-Qe2-Rb8-Qxa6-Rxb2.tree");
    std::fs::copy(proofs.join("e3-Na6.tree"), &part).unwrap();
    let before = std::fs::read(&part).unwrap();
    let x = d.join("x.tree");
    let (code, _, err) = run_out(&[
        "export",
        "--db",
        s,
        "--tree",
        part.to_str().unwrap(),
        "-o",
        x.to_str().unwrap(),
        "--split-above",
        "1K",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is the input"), "{err}");
    assert_eq!(std::fs::read(&part).unwrap(), before);
    // prove: its store (or the table saved beside it) is an input.
    let (code, _, err) = run_out(&["prove", "--db", o, "--obligations", o]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is the input"), "{err}");
    let table = d.join("o.epd.table");
    std::fs::copy(&ob, &table).unwrap();
    let (code, _, err) = run_out(&["prove", "--db", o, "--obligations", table.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is the input"), "{err}");
    // job run: its certificate a hard link of the job file.
    let job = d.join("j.json");
    std::fs::write(
        &job,
        r#"{"format":"antiproof-job","version":1,"id":"t","root_fen":"rnbqkbnr/ppp1pppp/8/3p4/8/4P3/PPPP1PPP/RNBQKBNR w - - 0 2","line":["e3","d5"],"rules":"international","winner":"white","budget":{"nodes":100000,"time_s":10,"memory_bytes":16777216},"tables":null}"#,
    )
    .unwrap();
    let job_text = std::fs::read(&job).unwrap();
    std::fs::hard_link(&job, d.join("j.json.tree")).unwrap();
    let (code, _, err) = run_out(&["job", "run", job.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is the input"), "{err}");
    assert_eq!(std::fs::read(&job).unwrap(), job_text);
    std::fs::remove_dir_all(&d).unwrap();
}
