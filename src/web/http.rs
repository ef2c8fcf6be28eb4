//! A small HTTP/1.1 server on `std::net`: a fixed pool of worker threads,
//! hard limits on every request, no framework.
//!
//! Limits (see [`Limits`]): request head (request line and headers)
//! 8 KiB, body 64 KiB, the head and body of a request must arrive within
//! 10 s of its first byte (a client trickling bytes is cut off: slowloris),
//! an idle kept-alive connection is closed after 5 s, at most 1000 requests
//! per connection, and a kept-alive connection is closed after its answer
//! whenever other connections are waiting for a worker. When the queue of
//! accepted connections is full, new ones get `503` at once.

use std::collections::HashMap;
use std::io::{self, BufWriter, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Limits of the server.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Worker threads.
    pub threads: usize,
    /// Accepted connections that may wait for a worker.
    pub queue: usize,
    /// Largest request head (request line and headers), bytes.
    pub max_head: usize,
    /// Largest body, bytes.
    pub max_body: usize,
    /// Time for a whole request once its first byte arrived.
    pub request_timeout: Duration,
    /// Time a kept-alive connection may stay idle.
    pub idle_timeout: Duration,
    /// Requests served on one connection before it is closed.
    pub max_requests: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            threads: 8,
            queue: 256,
            max_head: 8 * 1024,
            max_body: 64 * 1024,
            request_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(5),
            max_requests: 1000,
        }
    }
}

/// A parsed request.
#[derive(Clone, Debug)]
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The path, percent-decoded (`/browse`).
    pub path: String,
    /// Query parameters, percent-decoded (`+` is a space); the last of a
    /// repeated name wins.
    pub query: HashMap<String, String>,
    /// Headers, names in lower case.
    pub headers: HashMap<String, String>,
    /// The body.
    pub body: Vec<u8>,
}

impl Request {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// An answer.
#[derive(Clone, Debug)]
pub struct Response {
    /// Status code.
    pub status: u16,
    /// Content type.
    pub content_type: &'static str,
    /// Body.
    pub body: Vec<u8>,
    /// More headers.
    pub headers: Vec<(&'static str, String)>,
}

impl Response {
    /// An answer with a body.
    pub fn new(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            content_type,
            body: body.into(),
            headers: Vec::new(),
        }
    }

    /// A plain-text answer.
    pub fn text(status: u16, body: impl Into<String>) -> Response {
        let mut b = body.into();
        if !b.ends_with('\n') {
            b.push('\n');
        }
        Response::new(status, "text/plain; charset=utf-8", b)
    }
}

/// The reason phrase of a status code.
pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Content Too Large",
        414 => "URI Too Long",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

/// The function that answers requests.
pub type Handler = dyn Fn(&Request) -> Response + Send + Sync;

/// A bound server, ready to run.
pub struct Server {
    listener: TcpListener,
    limits: Limits,
    handler: Arc<Handler>,
}

impl Server {
    /// Binds `addr` (port 0 picks a free port).
    pub fn bind(addr: SocketAddr, limits: Limits, handler: Arc<Handler>) -> io::Result<Server> {
        Ok(Server {
            listener: TcpListener::bind(addr)?,
            limits,
            handler,
        })
    }

    /// The address bound.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Accepts connections until the listener fails; never returns `Ok`
    /// in practice.
    pub fn run(self) -> io::Result<()> {
        let (tx, rx): (SyncSender<TcpStream>, Receiver<TcpStream>) =
            sync_channel(self.limits.queue.max(1));
        let rx = Arc::new(Mutex::new(rx));
        let waiting = Arc::new(AtomicUsize::new(0));
        for i in 0..self.limits.threads.max(1) {
            let rx = Arc::clone(&rx);
            let waiting = Arc::clone(&waiting);
            let handler = Arc::clone(&self.handler);
            let limits = self.limits.clone();
            std::thread::Builder::new()
                .name(format!("http-{i}"))
                .spawn(move || {
                    loop {
                        let next = rx.lock().expect("queue lock").recv();
                        let Ok(stream) = next else { return };
                        waiting.fetch_sub(1, Ordering::SeqCst);
                        // Errors on one connection concern that client only.
                        let _ = serve_connection(stream, &limits, &*handler, &waiting);
                    }
                })?;
        }
        for stream in self.listener.incoming() {
            let stream = match stream {
                Ok(s) => s,
                // Out of file descriptors and the like: back off briefly.
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
            };
            waiting.fetch_add(1, Ordering::SeqCst);
            match tx.try_send(stream) {
                Ok(()) => {}
                Err(TrySendError::Full(mut s)) | Err(TrySendError::Disconnected(mut s)) => {
                    waiting.fetch_sub(1, Ordering::SeqCst);
                    let _ = s.set_write_timeout(Some(Duration::from_secs(1)));
                    let r = Response::text(503, "server busy, try again");
                    let _ = write_response(&mut s, &r, false, false);
                }
            }
        }
        Ok(())
    }
}

/// Why reading a request stopped.
enum ReadError {
    /// The client closed or went idle between requests: close quietly.
    Closed,
    /// A request the server refuses: answer with this status and close.
    Refuse(u16, String),
    /// The connection failed.
    Io,
}

fn serve_connection(
    mut stream: TcpStream,
    limits: &Limits,
    handler: &Handler,
    waiting: &AtomicUsize,
) -> io::Result<()> {
    stream.set_nodelay(true)?;
    stream.set_write_timeout(Some(limits.request_timeout))?;
    let mut buf: Vec<u8> = Vec::with_capacity(1024);
    for served in 1..=limits.max_requests {
        match read_request(&mut stream, &mut buf, limits) {
            Ok((req, client_keep_alive)) => {
                let head_only = req.method == "HEAD";
                // A panic in the handler answers 500 and keeps the worker.
                let resp = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(&req)))
                    .unwrap_or_else(|_| Response::text(500, "internal error"));
                let keep = client_keep_alive
                    && served < limits.max_requests
                    && waiting.load(Ordering::SeqCst) == 0;
                write_response(&mut stream, &resp, keep, head_only)?;
                if !keep {
                    break;
                }
            }
            Err(ReadError::Closed) | Err(ReadError::Io) => break,
            Err(ReadError::Refuse(status, msg)) => {
                write_response(&mut stream, &Response::text(status, msg), false, false)?;
                break;
            }
        }
    }
    let _ = stream.shutdown(std::net::Shutdown::Both);
    Ok(())
}

/// Reads one request. `buf` carries bytes already read past the previous
/// request (pipelining).
fn read_request(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    limits: &Limits,
) -> Result<(Request, bool), ReadError> {
    let mut chunk = [0u8; 4096];
    // Wait for the first byte with the idle timeout.
    if buf.is_empty() {
        stream
            .set_read_timeout(Some(limits.idle_timeout))
            .map_err(|_| ReadError::Io)?;
        match stream.read(&mut chunk) {
            Ok(0) => return Err(ReadError::Closed),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(_) => return Err(ReadError::Closed),
        }
    }
    let deadline = Instant::now() + limits.request_timeout;
    let mut read_more = |stream: &mut TcpStream, buf: &mut Vec<u8>| -> Result<(), ReadError> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ReadError::Refuse(408, "request took too long".into()));
        }
        stream
            .set_read_timeout(Some(left))
            .map_err(|_| ReadError::Io)?;
        match stream.read(&mut chunk) {
            Ok(0) => Err(ReadError::Closed),
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                Ok(())
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                Err(ReadError::Refuse(408, "request took too long".into()))
            }
            Err(_) => Err(ReadError::Io),
        }
    };
    let head_end = loop {
        if let Some(i) = find(buf, b"\r\n\r\n") {
            break i;
        }
        if buf.len() > limits.max_head {
            return Err(ReadError::Refuse(
                431,
                format!("request head over {} bytes", limits.max_head),
            ));
        }
        read_more(stream, buf)?;
    };
    if head_end > limits.max_head {
        return Err(ReadError::Refuse(
            431,
            format!("request head over {} bytes", limits.max_head),
        ));
    }
    let head = std::str::from_utf8(&buf[..head_end])
        .map_err(|_| ReadError::Refuse(400, "request head is not UTF-8".into()))?
        .to_string();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or("");
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ReadError::Refuse(400, "malformed request line".into()));
    };
    let http11 = match version {
        "HTTP/1.1" => true,
        "HTTP/1.0" => false,
        _ => return Err(ReadError::Refuse(505, "only HTTP/1.0 and 1.1".into())),
    };
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(ReadError::Refuse(400, "malformed method".into()));
    }
    let mut headers = HashMap::new();
    for l in lines {
        let Some((name, value)) = l.split_once(':') else {
            return Err(ReadError::Refuse(400, "malformed header line".into()));
        };
        if name.is_empty() || name.contains(' ') {
            return Err(ReadError::Refuse(400, "malformed header name".into()));
        }
        headers.insert(name.to_ascii_lowercase(), value.trim().to_string());
    }
    if headers.contains_key("transfer-encoding") {
        return Err(ReadError::Refuse(
            501,
            "chunked bodies are not supported; send Content-Length".into(),
        ));
    }
    let len = match headers.get("content-length") {
        None => 0,
        Some(v) => v
            .parse::<usize>()
            .map_err(|_| ReadError::Refuse(400, "bad Content-Length".into()))?,
    };
    if len > limits.max_body {
        return Err(ReadError::Refuse(
            413,
            format!("body over {} bytes", limits.max_body),
        ));
    }
    let body_start = head_end + 4;
    while buf.len() < body_start + len {
        read_more(stream, buf)?;
    }
    let body = buf[body_start..body_start + len].to_vec();
    buf.drain(..body_start + len);
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, q),
        None => (target, ""),
    };
    let path = percent_decode(path, false)
        .ok_or_else(|| ReadError::Refuse(400, "bad percent-encoding in path".into()))?;
    let query = parse_query(query)
        .ok_or_else(|| ReadError::Refuse(400, "bad percent-encoding in query".into()))?;
    let connection = headers
        .get("connection")
        .map(|c| c.to_ascii_lowercase())
        .unwrap_or_default();
    let keep_alive = if http11 {
        !connection.contains("close")
    } else {
        connection.contains("keep-alive")
    };
    Ok((
        Request {
            method: method.to_string(),
            path,
            query,
            headers,
            body,
        },
        keep_alive,
    ))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Decodes `%XX` escapes (and `+` as a space when `plus` is set). `None`
/// for a bad escape or bytes that are not UTF-8.
pub fn percent_decode(s: &str, plus: bool) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' if plus => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// Parses `a=1&b=2` (percent-decoded).
pub fn parse_query(q: &str) -> Option<HashMap<String, String>> {
    let mut out = HashMap::new();
    for pair in q.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        out.insert(percent_decode(k, true)?, percent_decode(v, true)?);
    }
    Some(out)
}

/// Percent-encodes a query value (unreserved characters and `,` kept).
pub fn percent_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~,".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn write_response(
    stream: &mut TcpStream,
    r: &Response,
    keep_alive: bool,
    head_only: bool,
) -> io::Result<()> {
    let mut w = BufWriter::new(stream);
    write!(
        w,
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: {}\r\n\
         X-Content-Type-Options: nosniff\r\n",
        r.status,
        reason(r.status),
        r.content_type,
        r.body.len(),
        if keep_alive { "keep-alive" } else { "close" },
    )?;
    for (k, v) in &r.headers {
        write!(w, "{k}: {v}\r\n")?;
    }
    w.write_all(b"\r\n")?;
    if !head_only {
        w.write_all(&r.body)?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_percent_and_plus() {
        assert_eq!(percent_decode("e2e3%2Cc7c5", true).unwrap(), "e2e3,c7c5");
        assert_eq!(percent_decode("e2e3+c7c5", true).unwrap(), "e2e3 c7c5");
        assert_eq!(percent_decode("a+b", false).unwrap(), "a+b");
        assert!(percent_decode("%zz", true).is_none());
        assert!(percent_decode("%4", true).is_none());
        assert!(percent_decode("%ff", true).is_none());
    }

    #[test]
    fn parses_queries() {
        let q = parse_query("moves=e2e3%20c7c5&x&y=1").unwrap();
        assert_eq!(q["moves"], "e2e3 c7c5");
        assert_eq!(q["x"], "");
        assert_eq!(q["y"], "1");
    }

    #[test]
    fn encodes_round_trip() {
        let s = "e2e3,d7d5 Qg4+";
        assert_eq!(percent_decode(&percent_encode(s), true).unwrap(), s);
    }
}
