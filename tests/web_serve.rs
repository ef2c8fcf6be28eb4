//! `antiproof serve` as a process: the JSON endpoint on known lines, 400 on
//! bad input, the limits (idle and trickling clients delay no one, the
//! connection cap, timeouts, sizes, option bounds), the HTML page, a clean
//! stop on SIGTERM, and a load test that prints the request rate. All
//! traffic goes to 127.0.0.1, bounded in count and time.

use crate::util;
use antiproof::rules::Color;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The proof served: 1.e3 d5, White wins.
fn tree() -> &'static std::path::Path {
    static TREE: OnceLock<std::path::PathBuf> = OnceLock::new();
    TREE.get_or_init(|| {
        let dir = util::temp_dir("web-serve");
        util::write_proof(&dir, "e3d5", "e2e3 d7d5", Color::White, true).0
    })
}

fn start(extra: &[&str]) -> Server {
    let tree = tree();
    let mut child = Command::new(util::EXE)
        .arg("serve")
        .arg("--tree")
        .arg(tree)
        .args(["--addr", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut addr = None;
    for _ in 0..4 {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        if let Some(rest) = line.strip_prefix("listening on http://") {
            addr = Some(rest.split('/').next().unwrap().parse().unwrap());
            break;
        }
    }
    Server {
        child,
        addr: addr.expect("serve printed its address"),
    }
}

struct Answer {
    status: u16,
    headers: String,
    body: String,
}

/// Reads one response (Content-Length framed) from a stream.
fn read_answer(r: &mut impl Read) -> Answer {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = r.read(&mut b).unwrap();
        assert_eq!(n, 1, "connection closed inside a response head");
        head.push(b[0]);
    }
    let head = String::from_utf8(head).unwrap();
    let status = head[9..12].parse().unwrap();
    let len: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap())
        })
        .unwrap();
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).unwrap();
    Answer {
        status,
        headers: head,
        body: String::from_utf8(body).unwrap(),
    }
}

/// One request on a new connection.
fn send(addr: SocketAddr, raw: &str) -> Answer {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(raw.as_bytes()).unwrap();
    read_answer(&mut s)
}

fn get(addr: SocketAddr, target: &str) -> Answer {
    send(
        addr,
        &format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
    )
}

fn post(addr: SocketAddr, body: &str) -> Answer {
    send(
        addr,
        &format!(
            "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
}

const ROOT: &str = r#"{"game_over":false,"moves":[{"uci":"d1g4","san":"Qg4","nodes":32}]}"#;
const EMPTY: &str = r#"{"game_over":false,"moves":[]}"#;

#[test]
fn json_for_known_lines() {
    let s = start(&[]);
    let a = get(s.addr, "/?moves=e2e3,d7d5");
    assert_eq!(a.status, 200);
    assert!(
        a.headers.contains("Content-Type: application/json"),
        "{}",
        a.headers
    );
    assert_eq!(a.body, ROOT);
    // Spaces (encoded either way) and POST give the same.
    assert_eq!(get(s.addr, "/?moves=e2e3%20d7d5").body, ROOT);
    assert_eq!(get(s.addr, "/?moves=e2e3+d7d5").body, ROOT);
    assert_eq!(get(s.addr, "/?moves=e2e3%2Cd7d5").body, ROOT);
    assert_eq!(post(s.addr, "e2e3 d7d5").body, ROOT);
    assert_eq!(post(s.addr, "e2e3,d7d5\n").body, ROOT);
    // Before the proof's root: the move into it, with the whole size.
    assert_eq!(
        get(s.addr, "/?moves=e2e3").body,
        r#"{"game_over":false,"moves":[{"uci":"d7d5","san":"d5","nodes":33}]}"#
    );
    // The loser's node: every reply, largest first.
    let a = get(s.addr, "/?moves=e2e3,d7d5,d1g4");
    let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    assert_eq!(v["moves"][0]["san"], "Bxg4");
    // Leaving the proof: an empty list, not an error.
    assert_eq!(get(s.addr, "/?moves=e2e3,d7d5,a2a3").body, EMPTY);
    assert_eq!(get(s.addr, "/?moves=e2e4").body, EMPTY);
    // No moves and no HTML wanted: the start position's JSON.
    assert_eq!(
        get(s.addr, "/").body,
        r#"{"game_over":false,"moves":[{"uci":"e2e3","san":"e3","nodes":33}]}"#
    );
    assert_eq!(get(s.addr, "/?moves=").body, get(s.addr, "/").body);
    // HEAD: the headers only.
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.write_all(b"HEAD /?moves=e2e3,d7d5 HTTP/1.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut all = String::new();
    c.read_to_string(&mut all).unwrap();
    assert!(all.starts_with("HTTP/1.1 200"), "{all}");
    assert!(all.ends_with("\r\n\r\n"), "{all}");
}

#[test]
fn bad_input_gets_400_and_limits_hold() {
    let s = start(&["--request-timeout", "1"]);
    for target in [
        "/?moves=e2e5",
        "/?moves=e2e3,zz",
        "/?moves=e2e3,d7d5,d1g5",
        "/?moves=%ZZ",
    ] {
        let a = get(s.addr, target);
        assert_eq!(a.status, 400, "{target}: {}", a.body);
    }
    let a = get(s.addr, "/?moves=e2e3,d7d4");
    assert!(a.headers.contains("application/json"));
    let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    let msg = v["error"].as_str().unwrap();
    assert!(msg.contains("ply 2") && msg.contains("d7d4"), "{msg}");
    assert_eq!(post(s.addr, "e2e3 Ke9").status, 400);
    // A line over the ply limit.
    let long = vec!["g1f3,f3g1,g8f6,f6g8"; 300].join(",");
    let a = post(s.addr, &long);
    assert_eq!(a.status, 400);
    assert!(a.body.contains("longer than"), "{}", a.body);
    // Head, body and method limits.
    let big = "x".repeat(10_000);
    let a = send(
        s.addr,
        &format!("GET /?moves={big} HTTP/1.1\r\nConnection: close\r\n\r\n"),
    );
    assert_eq!(a.status, 431);
    let a = send(
        s.addr,
        "POST / HTTP/1.1\r\nContent-Length: 100000000\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(a.status, 413);
    let a = send(s.addr, "PUT / HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert_eq!(a.status, 405);
    assert_eq!(get(s.addr, "/nothing").status, 404);
    // A method no page takes is 405 on any path, and CONNECT (whose
    // target has no path) too, as docs/web.md says.
    for req in [
        "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nConnection: close\r\n\r\n",
        "DELETE /nothing HTTP/1.1\r\nConnection: close\r\n\r\n",
        "TRACE /browse HTTP/1.1\r\nConnection: close\r\n\r\n",
    ] {
        assert_eq!(send(s.addr, req).status, 405, "{req}");
    }
    assert_eq!(send(s.addr, "garbage\r\n\r\n").status, 400);
    let a = send(
        s.addr,
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(a.status, 501);
    // A slow client (half a head, then silence) is cut off with 408.
    let t = Instant::now();
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c.write_all(b"GET /?moves=e2e3 HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    let a = read_answer(&mut c);
    assert_eq!(a.status, 408);
    assert!(t.elapsed() < Duration::from_secs(5));
    // The server still answers.
    assert_eq!(get(s.addr, "/?moves=e2e3,d7d5").body, ROOT);
}

#[test]
fn the_page_for_people() {
    let s = start(&[]);
    let a = get(s.addr, "/browse?line=e2e3,d7d5");
    assert_eq!(a.status, 200);
    assert!(a.headers.contains("text/html"), "{}", a.headers);
    // Nothing but the server's own files may load.
    assert!(
        a.headers
            .contains("Content-Security-Policy: default-src 'none'; script-src 'self';"),
        "{}",
        a.headers
    );
    let h = &a.body;
    assert!(h.starts_with("<!DOCTYPE html>"));
    // The board: chessground mounts on #board; without scripts an SVG
    // drawing stands there.
    assert!(h.contains(r#"<div id="board"><svg"#), "{h}");
    assert_eq!(h.matches("<rect x=").count(), 65, "64 squares and a frame");
    // The line so far, each move a link the script follows in place.
    assert!(
        h.contains(r#"<a href="/browse?line=e2e3" data-ply="1">e3</a>"#),
        "{h}"
    );
    assert!(
        h.contains(r#"<a class="cur" href="/browse?line=e2e3,d7d5" data-ply="2">d5</a>"#),
        "{h}"
    );
    // The move table: a link one ply deeper with its size, marked, and
    // what it leads to.
    assert!(
        h.contains(r#"<tr class="win" data-uci="d1g4"><td><a href="/browse?line=e2e3,d7d5,d1g4" data-line="e2e3,d7d5,d1g4">Qg4</a> &#9733;</td>"#),
        "{h}"
    );
    assert!(h.contains("<td class=\"n\">32</td>"), "{h}");
    assert!(h.contains("<td class=\"leads-proven\">proven</td>"), "{h}");
    assert!(h.contains("win for White"), "{h}");
    // Back and forward.
    assert!(
        h.contains(r#"<a rel="prev" href="/browse?line=e2e3" data-line="e2e3">"#),
        "{h}"
    );
    assert!(
        h.contains(
            r#"<a rel="next" href="/browse?line=e2e3,d7d5,d1g4" data-line="e2e3,d7d5,d1g4">"#
        ),
        "{h}"
    );
    // The tools and the lichess link at this position.
    assert!(h.contains(r#"<button type="button" id="flip">"#), "{h}");
    assert!(h.contains(r#"<button type="button" id="copy-fen">"#), "{h}");
    assert!(
        h.contains(r#"href="https://lichess.org/analysis/antichess/rnbqkbnr/ppp1pppp/8/3p4/8/4P3/PPPP1PPP/RNBQKBNR_w_-_-_0_2""#),
        "{h}"
    );
    // Every file it loads is the server's own (/assets/), and every one
    // of them is served.
    let mut loads = Vec::new();
    for attr in ["src=\"", "<link rel=\"stylesheet\" href=\""] {
        for part in h.split(attr).skip(1) {
            loads.push(part.split('"').next().unwrap().to_string());
        }
    }
    // (browse.js imports /assets/chessground.min.js itself.)
    assert_eq!(loads.len(), 5, "{loads:?}");
    for l in &loads {
        assert!(l.starts_with("/assets/"), "{l}");
        assert_eq!(get(s.addr, l).status, 200, "{l}");
    }
    for bad in ["@import", "url(", "<img", "<iframe"] {
        assert!(!h.contains(bad), "{bad}");
    }
    // The only absolute URLs: the lichess link and the SVG namespace name
    // (the page names the proof file, whose path may say "http").
    let h_no_path = h.replace(&tree().display().to_string(), "");
    for (i, _) in h_no_path.match_indices("http") {
        let at = &h_no_path[i..];
        assert!(
            at.starts_with("http://www.w3.org/2000/svg\"")
                || at.starts_with("https://lichess.org/analysis/antichess/"),
            "{}",
            &at[..at.len().min(80)]
        );
    }
    // The state the script starts from is embedded, and parses.
    let json = h
        .split(r#"<script type="application/json" id="state">"#)
        .nth(1)
        .and_then(|r| r.split("</script>").next())
        .unwrap();
    let st: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(st["line"], serde_json::json!(["e2e3", "d7d5"]));
    assert_eq!(st["forward"], "d1g4");
    // The header and footer name the one file served.
    assert!(h.contains(&format!("win-tree file {}", tree().display())));
    // The former parameter name still works; `/` for a browser is the
    // page; for a program, JSON.
    let a = get(s.addr, "/browse?moves=e2e3,d7d5");
    assert!(a.body.contains("<td class=\"n\">32</td>"));
    let a = send(
        s.addr,
        "GET / HTTP/1.1\r\nAccept: text/html,application/xhtml+xml,*/*;q=0.8\r\nConnection: close\r\n\r\n",
    );
    assert!(a.headers.contains("text/html") && a.body.contains(r#"<div id="board">"#));
    // Off the proof and a bad move.
    let a = get(s.addr, "/browse?line=e2e4");
    assert!(a.body.contains("not in the proof"));
    let a = get(s.addr, "/browse?line=e2e3,e7e4,d1g4");
    assert_eq!(a.status, 400);
    assert!(a.body.contains("ply 2"), "{}", a.body);
    // ... with a way back to the moves before it.
    assert!(
        a.body
            .contains(r#"<a href="/browse?line=e2e3">the line before the bad move</a>"#)
    );
    // Text is escaped.
    let a = get(s.addr, "/browse?line=%3Cb%3E");
    assert_eq!(a.status, 400);
    assert!(!a.body.contains("\"<b>") && a.body.contains("&quot;&lt;b&gt;"));
    let a = get(s.addr, "/browse?line=e3,%22%3E%3Cscript%3E");
    assert_eq!(a.status, 400);
    assert!(!a.body.contains("\"><script>"), "{}", a.body);
}

/// `/api/line`: the page's state at a line, as JSON.
#[test]
fn the_page_state_endpoint() {
    let s = start(&[]);
    let a = get(s.addr, "/api/line?line=e2e3,d7d5");
    assert_eq!(a.status, 200);
    assert!(a.headers.contains("application/json"), "{}", a.headers);
    let st: serde_json::Value = serde_json::from_str(&a.body).unwrap();
    assert_eq!(st["line"], serde_json::json!(["e2e3", "d7d5"]));
    assert_eq!(st["san"], serde_json::json!(["e3", "d5"]));
    assert_eq!(st["turn"], "white");
    assert_eq!(st["last_move"], serde_json::json!(["d7", "d5"]));
    assert_eq!(st["status"], "win-white");
    assert_eq!(
        st["moves"],
        serde_json::json!([{"uci": "d1g4", "san": "Qg4", "nodes": 32,
            "winning": true, "leads": "proven", "table": null}])
    );
    assert_eq!(st["forward"], "d1g4");
    // The legal moves, not only the proof's: the board plays them all.
    let legal = st["legal"].as_array().unwrap();
    assert_eq!(legal.len(), 30, "{legal:?}");
    assert!(legal.contains(&"e3e4".into()));
    assert!(st["panel"].as_str().unwrap().contains(r#"id="status""#));
    // Agrees with the lichess-shape endpoint.
    assert_eq!(get(s.addr, "/?moves=e2e3,d7d5").body, ROOT);
    // The start: White's 20 first moves in the table, 1.e3 toward the proof.
    let st: serde_json::Value = serde_json::from_str(&get(s.addr, "/api/line").body).unwrap();
    assert_eq!(st["moves"][0]["leads"], "toward");
    assert_eq!(st["moves"][0]["table"]["published"], "won");
    assert_eq!(st["table"]["entries"].as_array().unwrap().len(), 20);
    // The last moves of the proof lead to finished games.
    let st: serde_json::Value =
        serde_json::from_str(&get(s.addr, "/api/line?moves=e2e3,d7d5,d1g4").body).unwrap();
    let leads: Vec<&str> = st["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["leads"].as_str().unwrap())
        .collect();
    assert!(
        !leads.is_empty() && leads.iter().all(|l| *l == "proven"),
        "{leads:?}"
    );
    // Off the proof: the board still plays.
    let st: serde_json::Value =
        serde_json::from_str(&get(s.addr, "/api/line?line=e2e4").body).unwrap();
    assert_eq!(st["status"], "off");
    assert_eq!(st["legal"].as_array().unwrap().len(), 20);
    // Bad lines: 400 with the error named, as JSON.
    for (q, says) in [
        ("e2e5", "ply 1"),
        ("e2e3,e7e4", "ply 2"),
        ("e2e3,0000", "null move"),
        ("%FF", "percent-encoding"),
    ] {
        let a = get(s.addr, &format!("/api/line?line={q}"));
        assert_eq!(a.status, 400, "{q}");
        assert!(a.body.contains(says), "{q}: {}", a.body);
    }
    let long = vec!["g1f3,f3g1"; 513].join(",");
    let a = get(s.addr, &format!("/api/line?line={long}"));
    assert_eq!(a.status, 400);
    assert!(a.body.contains("longer than 1024"), "{}", a.body);
    // 1024 plies are answered, and the page stays linear in the line's
    // length: a long line links its last 8 moves (each link holds its
    // whole line), the others are followed by the script (data-ply).
    let long = vec!["g1f3,g8f6,f3g1,f6g8"; 256].join(",");
    let a = get(s.addr, &format!("/api/line?line={long}"));
    assert_eq!(a.status, 200, "{}", a.body);
    let a = get(s.addr, &format!("/browse?line={long}"));
    assert_eq!(a.status, 200);
    assert!(a.body.len() < 200_000, "{} bytes", a.body.len());
    let line = a
        .body
        .split(r#"<p class="line" id="line">"#)
        .nth(1)
        .unwrap();
    let line = line.split("</p>").next().unwrap();
    assert_eq!(line.matches("data-ply=").count(), 1025);
    assert_eq!(line.matches("href=").count(), 1 + 8);
    let a = send(
        s.addr,
        "POST /api/line HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nConnection: close\r\n\r\ne2e3",
    );
    assert_eq!(a.status, 405);
}

/// The page's files, compiled in: the same bytes as in the repository.
#[test]
fn the_assets_are_served() {
    let s = start(&[]);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/web/assets");
    for (name, file, kind) in [
        (
            "chessground.min.js",
            "chessground/chessground.min.js",
            "text/javascript",
        ),
        (
            "chessground.base.css",
            "chessground/chessground.base.css",
            "text/css",
        ),
        (
            "chessground.brown.css",
            "chessground/chessground.brown.css",
            "text/css",
        ),
        (
            "chessground.cburnett.css",
            "chessground/chessground.cburnett.css",
            "text/css",
        ),
        (
            "chessground.LICENSE.txt",
            "chessground/LICENSE",
            "text/plain",
        ),
        ("browse.js", "browse.js", "text/javascript"),
        ("browse.css", "browse.css", "text/css"),
    ] {
        let a = get(s.addr, &format!("/assets/{name}"));
        assert_eq!(a.status, 200, "{name}");
        assert!(
            a.headers.contains(&format!("Content-Type: {kind}")),
            "{}",
            a.headers
        );
        assert_eq!(
            a.body,
            std::fs::read_to_string(dir.join(file)).unwrap(),
            "{name}"
        );
    }
    for bad in [
        "/assets/",
        "/assets/nope.js",
        "/assets/../Cargo.toml",
        "/assets/%2e%2e/Cargo.toml",
    ] {
        assert_eq!(get(s.addr, bad).status, 404, "{bad}");
    }
}

/// With a verified certificate among the files served, the table counts
/// it: at the start 1.e3 has 1 of its 20 replies certified; after 1.e3
/// the 19 others are listed. The header counts the two files served.
#[test]
fn the_solved_openings_table_counts_the_files_served() {
    let dir = util::temp_dir("web-serve-table");
    std::fs::copy(tree(), dir.join("e3-d5.tree")).unwrap();
    std::fs::copy(tree(), dir.join("e3-d5-copy.tree")).unwrap();
    std::fs::write(
        dir.join("e3-d5.json"),
        r#"{"line": "e3 d5", "winner": "white", "verified": true}"#,
    )
    .unwrap();
    // A sidecar that is not JSON: that file counts as not certified.
    std::fs::write(dir.join("e3-d5-copy.json"), "{ not json").unwrap();
    let mut child = Command::new(util::EXE)
        .arg("serve")
        .arg("--proofs")
        .arg(&dir)
        .args(["--addr", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut addr = None;
    for _ in 0..4 {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        if let Some(rest) = line.strip_prefix("listening on http://") {
            addr = Some(rest.split('/').next().unwrap().parse().unwrap());
            break;
        }
    }
    let s = Server {
        child,
        addr: addr.expect("serve printed its address"),
    };
    let st: serde_json::Value = serde_json::from_str(&get(s.addr, "/api/line").body).unwrap();
    assert_eq!(
        st["moves"][0]["table"]["text"],
        "won; certified: 1 of 20 replies"
    );
    assert_eq!(st["moves"][0]["table"]["certified"], "partial");
    let st: serde_json::Value =
        serde_json::from_str(&get(s.addr, "/api/line?line=e2e3").body).unwrap();
    let missing = st["table"]["missing"].as_array().unwrap();
    assert_eq!(missing.len(), 19);
    assert!(!missing.contains(&"d5".into()));
    assert_eq!(st["moves"][0]["table"]["text"], "won; certified");
    let panel = st["panel"].as_str().unwrap();
    assert!(
        panel.contains("Replies not certified here yet (19):"),
        "{panel}"
    );
    let page = get(s.addr, "/browse").body;
    let label = format!("2 win-tree files in {}/", dir.display());
    assert!(
        page.contains(&format!(
            "<header><b>antiproof</b> proof browser &middot; {label}"
        )),
        "{page}"
    );
    assert!(
        page.contains("solved-openings table over 1 certificate of the files served"),
        "{page}"
    );
    assert!(
        !page.contains("e3-d5-copy.tree"),
        "names counted, not listed"
    );
    drop(s);
}

/// 50 idle connections and 20 that trickle a header byte a second are held
/// open while 20 normal requests are answered, each within 2 s (the old
/// server's 8 workers were all held by 8 idle connections).
#[test]
fn idle_and_trickling_clients_delay_no_one() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let s = start(&[]);
    let addr = s.addr;
    let idle: Vec<TcpStream> = (0..50).map(|_| TcpStream::connect(addr).unwrap()).collect();
    let mut trickling: Vec<TcpStream> =
        (0..20).map(|_| TcpStream::connect(addr).unwrap()).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let trickler = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let head = b"GET /?moves=e2e3 HTTP/1.1\r\nHost: x\r\n";
            // At most 8 bytes each, one a second; errors ignored (a
            // connection may be cut off).
            for &b in head.iter().take(8) {
                for c in &mut trickling {
                    let _ = c.write_all(&[b]);
                }
                for _ in 0..10 {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let mut slowest = Duration::ZERO;
    for i in 0..20 {
        let t = Instant::now();
        let a = if i % 2 == 0 {
            get(addr, "/?moves=e2e3,d7d5")
        } else {
            post(addr, "e2e3 d7d5")
        };
        let took = t.elapsed();
        assert_eq!(a.status, 200);
        assert_eq!(a.body, ROOT);
        assert!(took < Duration::from_secs(2), "request {i} took {took:?}");
        slowest = slowest.max(took);
        std::thread::sleep(Duration::from_millis(150));
    }
    stop.store(true, Ordering::Relaxed);
    trickler.join().unwrap();
    println!("slowest of 20 requests beside 70 idle or trickling connections: {slowest:?}");
    drop(idle);
}

/// Beyond `--max-connections`, a new connection is answered 503 at once,
/// not queued; once one closes, requests are answered again.
#[test]
fn connections_over_the_cap_get_503_at_once() {
    let s = start(&["--max-connections", "4", "--idle-timeout", "30"]);
    let mut idle: Vec<TcpStream> = (0..4)
        .map(|_| TcpStream::connect(s.addr).unwrap())
        .collect();
    let t = Instant::now();
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let a = read_answer(&mut c);
    assert_eq!(a.status, 503);
    assert!(t.elapsed() < Duration::from_secs(2));
    idle.pop();
    // The server sees the close and frees the slot.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let a = get(s.addr, "/?moves=e2e3,d7d5");
        if a.status == 200 {
            assert_eq!(a.body, ROOT);
            break;
        }
        assert_eq!(a.status, 503);
        assert!(Instant::now() < deadline, "slot never freed");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Two `Content-Length` headers that differ are refused (hyper's check,
/// pinned here: it is what keeps request smuggling out); the same value
/// twice is accepted.
#[test]
fn differing_content_lengths_get_400() {
    let s = start(&[]);
    for lengths in [
        "Content-Length: 9\r\nContent-Length: 4\r\n",
        "Content-Length: 4\r\nContent-Length: 9\r\n",
        "Content-Length: 9, 4\r\n",
    ] {
        let a = send(
            s.addr,
            &format!("POST / HTTP/1.1\r\nHost: x\r\n{lengths}Connection: close\r\n\r\ne2e3 d7d5"),
        );
        assert_eq!(a.status, 400, "{lengths}");
    }
    let a = send(
        s.addr,
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\nContent-Length: 9\r\n\
         Connection: close\r\n\r\ne2e3 d7d5",
    );
    assert_eq!(a.status, 200);
    assert_eq!(a.body, ROOT);
}

/// Head and body sizes: a head under 8 KiB is answered, one over it (long
/// target, or many headers) gets 431, a body over 64 KiB 413.
#[test]
fn oversized_heads_and_bodies_are_refused() {
    let s = start(&[]);
    let a = send(
        s.addr,
        &format!(
            "GET /?moves=e2e3,d7d5 HTTP/1.1\r\nX-Pad: {}\r\nConnection: close\r\n\r\n",
            "p".repeat(7000)
        ),
    );
    assert_eq!(a.status, 200);
    let a = send(
        s.addr,
        &format!(
            "GET / HTTP/1.1\r\nX-Pad: {}\r\nConnection: close\r\n\r\n",
            "p".repeat(9000)
        ),
    );
    assert_eq!(a.status, 431);
    let many: String = (0..300).map(|i| format!("X-H{i}: {i}\r\n")).collect();
    let a = send(
        s.addr,
        &format!("GET / HTTP/1.1\r\n{many}Connection: close\r\n\r\n"),
    );
    assert_eq!(a.status, 431);
    let a = send(
        s.addr,
        "POST / HTTP/1.1\r\nContent-Length: 65537\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(a.status, 413);
    // A body of exactly 64 KiB is read (and is not a line of moves).
    let body = " ".repeat(65536 - 9) + "e2e3 d7d5";
    assert_eq!(post(s.addr, &body).body, ROOT);
    assert_eq!(get(s.addr, "/?moves=e2e3,d7d5").body, ROOT);
}

/// Slow clients are cut off after the request timeout: one trickling its
/// head byte by byte, one that sends half a body; an idle connection is
/// closed after the idle timeout.
#[test]
fn slow_clients_are_cut_off() {
    let s = start(&["--request-timeout", "2", "--idle-timeout", "1"]);
    // Trickling a head, a byte every 200 ms: 408 after 2 s.
    let t = Instant::now();
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let head = b"GET /?moves=e2e3 HTTP/1.1\r\nHost: x\r\nX-Slow: abcdefghijklmnopqrstuvwxyz\r\n";
    let mut got = Vec::new();
    for &b in head {
        if c.write_all(&[b]).is_err() {
            break;
        }
        let mut buf = [0u8; 512];
        match c.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => break,
        }
        if !got.is_empty() {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "never cut off");
    }
    let took = t.elapsed();
    let got = String::from_utf8_lossy(&got);
    assert!(got.starts_with("HTTP/1.1 408"), "{got}");
    assert!(
        took >= Duration::from_millis(1800) && took < Duration::from_secs(4),
        "{took:?}"
    );
    // Half a body, then silence: 408.
    let t = Instant::now();
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c.write_all(b"POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\ne2e3")
        .unwrap();
    let a = read_answer(&mut c);
    assert_eq!(a.status, 408);
    assert!(t.elapsed() < Duration::from_secs(4));
    // Idle: closed without an answer.
    let t = Instant::now();
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = [0u8; 16];
    assert_eq!(c.read(&mut buf).unwrap_or(0), 0);
    let took = t.elapsed();
    assert!(
        took >= Duration::from_millis(800) && took < Duration::from_secs(3),
        "{took:?}"
    );
    assert_eq!(get(s.addr, "/?moves=e2e3,d7d5").body, ROOT);
}

/// Numeric options are bounded, the bound in the message (a huge timeout
/// used to make every worker panic).
#[test]
fn options_out_of_range_are_refused() {
    for (opt, value, bound) in [
        ("--request-timeout", "18446744073709551615", "1..=86400"),
        ("--idle-timeout", "0", "1..=86400"),
        ("--threads", "0", "1..=1024"),
        ("--threads", "1025", "1..=1024"),
        ("--max-connections", "65537", "1..=65536"),
    ] {
        let (code, _, err) = util::antiproof(&["serve", opt, value]);
        assert_eq!(code, 2, "{opt} {value}");
        assert!(err.contains(bound), "{opt} {value}: {err}");
    }
}

/// SIGTERM stops the server cleanly: exit status 0.
#[cfg(unix)]
#[test]
fn sigterm_stops_cleanly() {
    let mut s = start(&[]);
    assert_eq!(get(s.addr, "/?moves=e2e3,d7d5").body, ROOT);
    let killed = Command::new("kill")
        .args(["-TERM", &s.child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(st) = s.child.try_wait().unwrap() {
            break st;
        }
        assert!(Instant::now() < deadline, "still running");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
}

/// A few thousand requests from several threads on kept-alive
/// connections: no error, every answer right; prints the rate.
#[test]
fn load_test() {
    let s = start(&[]);
    let addr = s.addr;
    const THREADS: usize = 8;
    const PER_THREAD: usize = 500;
    let lines = [
        ("e2e3,d7d5", ROOT.to_string()),
        ("e2e3,d7d5,a2a3", EMPTY.to_string()),
    ];
    let t = Instant::now();
    let handles: Vec<_> = (0..THREADS)
        .map(|i| {
            let lines = lines.clone();
            std::thread::spawn(move || {
                let mut conn: Option<TcpStream> = None;
                let mut reconnects = 0;
                for k in 0..PER_THREAD {
                    let (moves, want) = &lines[(i + k) % lines.len()];
                    let c = conn.get_or_insert_with(|| {
                        reconnects += 1;
                        let c = TcpStream::connect(addr).unwrap();
                        c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
                        c.set_nodelay(true).unwrap();
                        c
                    });
                    let req = format!("GET /?moves={moves} HTTP/1.1\r\nHost: x\r\n\r\n");
                    c.write_all(req.as_bytes()).unwrap();
                    let a = read_answer(c);
                    assert_eq!(a.status, 200);
                    assert_eq!(&a.body, want);
                    if a.headers.contains("Connection: close") {
                        conn = None;
                    }
                }
                reconnects
            })
        })
        .collect();
    let reconnects: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    let n = THREADS * PER_THREAD;
    let secs = t.elapsed().as_secs_f64();
    println!(
        "load test: {n} requests from {THREADS} threads in {secs:.2} s = {:.0} requests/s ({reconnects} connections)",
        n as f64 / secs
    );
    // And the same with a new connection per request.
    let t = Instant::now();
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            std::thread::spawn(move || {
                for _ in 0..100 {
                    assert_eq!(get(addr, "/?moves=e2e3,d7d5").body, ROOT);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "load test: {} requests, one connection each, in {secs:.2} s = {:.0} requests/s",
        THREADS * 100,
        (THREADS * 100) as f64 / secs
    );
}
