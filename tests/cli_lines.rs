//! One move-line reader for every command: the same lines are accepted,
//! and the same ones refused with the same words (exit 2 naming the ply
//! and the token), by `prove`, `export`, `verify --db`, `verify --tree`,
//! `browse --tree` and `serve`'s JSON endpoint (400).

use crate::util;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

/// A small certified proof of 1.e3 d5 (its prolog is the line).
fn tree() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("proofs/e3-d5.tree")
}

/// Lines that reach 1.e3 d5, however written.
const ACCEPTED: &[&[&str]] = &[
    &["e3", "d5"],
    &["1. e3 d5"],
    &["1.e3", "1...d5"],
    &["e3!? d5?? 0-1"],
    &["e2e3,d7d5"],
    &["1.", "e2e3", "d5", "*"],
];

/// Lines refused, with what the message must name.
const REFUSED: &[(&[&str], &[&str])] = &[
    (&["e3 0000 g6"], &["ply 2", "\"0000\"", "null move"]),
    (&["e3", "Z0"], &["ply 2", "\"Z0\"", "null move"]),
    (&["e3 12 g6"], &["ply 2", "\"12\"", "not a move"]),
    (&["e3 zz"], &["ply 2", "\"zz\"", "not a move"]),
    (
        &["1. e3 e5e4"],
        &["ply 2", "\"e5e4\"", "not legal here", "legal moves: "],
    ),
    (&["e3 d5 Qg4 Kd7"], &["ply 4", "\"Kd7\"", "not legal here"]),
];

/// Every command reading a line, as (name, arguments before the line,
/// arguments after it).
fn commands(db: &Path, out: &Path) -> Vec<(&'static str, Vec<String>, Vec<String>)> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let db = db.display().to_string();
    let tree = tree().display().to_string();
    vec![
        ("prove", s(&["prove", "--db", &db]), vec![]),
        (
            "export",
            s(&["export", "--db", &db]),
            s(&["-o", &out.display().to_string()]),
        ),
        ("verify --db", s(&["verify", "--db", &db]), vec![]),
        ("verify --tree", s(&["verify", "--tree", &tree]), vec![]),
        ("browse --tree", s(&["browse", "--tree", &tree]), vec![]),
    ]
}

fn run(before: &[String], line: &[&str], after: &[String]) -> Output {
    let o = util::command()
        .args(before)
        .args(after)
        .arg("--")
        .args(line)
        .output()
        .unwrap();
    // `export -o` writes a new file each time.
    if let Some(out) = after.last() {
        let _ = std::fs::remove_file(out);
    }
    o
}

/// Percent-encodes a query value.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// `serve`'s JSON endpoint: the status and the body.
fn http_get(addr: &str, target: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text[9..12].parse().unwrap();
    let body = text.split_once("\r\n\r\n").unwrap().1.to_string();
    (status, body)
}

#[test]
fn every_command_reads_lines_alike() {
    let dir = util::temp_dir("every-command");
    let db = dir.join("lines.redb");
    let out = dir.join("out.tree");
    let _ = std::fs::remove_file(&db);
    let cmds = commands(&db, &out);
    for line in ACCEPTED {
        for (name, before, after) in &cmds {
            let o = run(before, line, after);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{name} {line:?}: {}",
                util::stderr(&o)
            );
        }
    }
    let mut server = util::command()
        .arg("serve")
        .arg("--tree")
        .arg(tree())
        .args(["--addr", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let addr = lines
        .by_ref()
        .take(4)
        .find_map(|l| {
            l.unwrap()
                .strip_prefix("listening on http://")
                .map(|r| r.split('/').next().unwrap().to_string())
        })
        .expect("serve printed its address");
    for line in ACCEPTED {
        let (status, body) = http_get(&addr, &format!("/?moves={}", encode(&line.join(" "))));
        assert_eq!(status, 200, "serve {line:?}: {body}");
        assert!(body.contains("Qg4"), "serve {line:?}: {body}");
    }
    for (line, words) in REFUSED {
        let mut messages = Vec::new();
        for (name, before, after) in &cmds {
            let o = run(before, line, after);
            assert_eq!(
                o.status.code(),
                Some(2),
                "{name} {line:?}: {}",
                util::stderr(&o)
            );
            let e = util::stderr(&o);
            for w in *words {
                assert!(e.contains(w), "{name} {line:?}: {e}");
            }
            messages.push((name.to_string(), e.trim_end().to_string()));
        }
        let (status, body) = http_get(&addr, &format!("/?moves={}", encode(&line.join(" "))));
        assert_eq!(status, 400, "serve {line:?}: {body}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        messages.push((
            "serve".into(),
            format!("antiproof: error: {}", v["error"].as_str().unwrap()),
        ));
        for (name, m) in &messages {
            assert_eq!(m, &messages[0].1, "{name} and {} differ", messages[0].0);
        }
    }
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
