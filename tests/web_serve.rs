//! `antiproof serve` as a process: the JSON endpoint on known lines, 400 on
//! bad input, the limits (idle and trickling clients delay no one, the
//! connection cap, timeouts, sizes, option bounds), the HTML page, a clean
//! stop on SIGTERM, and a load test that prints the request rate. All
//! traffic goes to 127.0.0.1, bounded in count and time.

mod common;

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
        let dir = common::temp_dir("web-serve");
        common::write_proof(&dir, "e3d5", "e2e3 d7d5", Color::White, true).0
    })
}

fn start(extra: &[&str]) -> Server {
    let tree = tree();
    let mut child = Command::new(env!("CARGO_BIN_EXE_antiproof"))
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
    let a = get(s.addr, "/browse?moves=e2e3,d7d5");
    assert_eq!(a.status, 200);
    assert!(a.headers.contains("text/html"), "{}", a.headers);
    let h = &a.body;
    assert!(h.starts_with("<!DOCTYPE html>"));
    assert!(h.contains("<svg"), "board drawn in SVG");
    assert_eq!(h.matches("<rect x=").count(), 65, "64 squares and a frame");
    // The line so far, each move a link.
    assert!(h.contains(r#"<a href="/browse?moves=e2e3">e3</a>"#), "{h}");
    assert!(
        h.contains(r#"<a class="cur" href="/browse?moves=e2e3,d7d5">d5</a>"#),
        "{h}"
    );
    // The move table: a link one ply deeper with its size, marked.
    assert!(
        h.contains(r#"<a href="/browse?moves=e2e3,d7d5,d1g4">Qg4</a>"#),
        "{h}"
    );
    assert!(h.contains("<td class=\"n\">32</td>"), "{h}");
    assert!(h.contains("win for White"), "{h}");
    // Back and forward.
    assert!(
        h.contains(r#"<a href="/browse?moves=e2e3" rel="prev">"#),
        "{h}"
    );
    assert!(
        h.contains(r#"<a href="/browse?moves=e2e3,d7d5,d1g4" rel="next">"#),
        "{h}"
    );
    // Nothing from anywhere else: no scripts, no links, no images, no
    // fonts; the only URL is the SVG namespace name.
    for bad in ["<script", "<link", "<img", "@import", "url(", "src="] {
        assert!(!h.contains(bad), "{bad}");
    }
    // (The page names the proof file, whose path may say "http".)
    let h_no_path = h.replace(&tree().display().to_string(), "");
    assert_eq!(h_no_path.matches("http").count(), 1, "{h}");
    // `/` for a browser is the page; for a program, JSON.
    let a = send(
        s.addr,
        "GET / HTTP/1.1\r\nAccept: text/html,application/xhtml+xml,*/*;q=0.8\r\nConnection: close\r\n\r\n",
    );
    assert!(a.headers.contains("text/html") && a.body.contains("<svg"));
    // Off the proof and a bad move.
    let a = get(s.addr, "/browse?moves=e2e4");
    assert!(a.body.contains("not in the proof"));
    let a = get(s.addr, "/browse?moves=e2e5");
    assert_eq!(a.status, 400);
    assert!(a.body.contains("ply 1"), "{}", a.body);
    // Text is escaped.
    let a = get(s.addr, "/browse?moves=%3Cb%3E");
    assert_eq!(a.status, 400);
    assert!(!a.body.contains("<b>") && a.body.contains("&lt;b&gt;"));
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
        let (code, _, err) = common::antiproof(&["serve", opt, value]);
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
