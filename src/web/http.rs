//! The HTTP/1.1 server of `antiproof serve`: [hyper] 1.x on a [tokio]
//! runtime; this module only converts requests and answers and keeps the
//! limits.
//!
//! Connections are served by tokio's reactor (a few threads, one task per
//! connection), so an idle or slow connection costs a task and a socket,
//! never a thread: no number of idle clients delays anyone else. The
//! handler ([`Handler`], synchronous and CPU-bound: proof lookups) runs on
//! tokio's blocking pool of [`ServeLimits::threads`] threads, never on the
//! reactor.
//!
//! Limits (see [`ServeLimits`]; `docs/web.md` has the table):
//!
//! * at most 1024 open connections; beyond that a new connection is
//!   answered `503` at once and closed (never queued);
//! * request head (request line and headers) 8 KiB: `431` (hyper's
//!   `max_header_size`; a malformed head, or two different
//!   `Content-Length` headers, is `400`, answered by hyper);
//! * body 64 KiB: `413`; `Transfer-Encoding` is refused with `501`;
//! * a request must arrive whole within 10 s of its first byte: a client
//!   trickling its head gets `408` and is closed (slowloris), one trickling
//!   its body too;
//! * a connection idle for 5 s (before its first request, between
//!   requests, or not reading its answer) is closed;
//! * at most 1000 requests per connection, then `Connection: close`.
//!
//! The timeouts are kept by [`Guarded`], a wrapper of the socket that knows
//! whether the connection is idle, receiving a request or handling one.

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderName, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::time::{Instant, Sleep};

/// Limits of the server.
#[derive(Clone, Debug)]
pub struct ServeLimits {
    /// Threads that run the handler (tokio's blocking pool); requests
    /// beyond that wait for a free one.
    pub threads: usize,
    /// Open connections; a connection beyond them is answered `503` and
    /// closed at once.
    pub max_connections: usize,
    /// Largest request head (request line and headers), bytes.
    pub max_head: usize,
    /// Largest body, bytes.
    pub max_body: usize,
    /// Time for a whole request once its first byte arrived.
    pub request_timeout: Duration,
    /// Time a connection may stay idle (before a request, or not reading
    /// its answer).
    pub idle_timeout: Duration,
    /// Requests served on one connection before it is closed.
    pub max_requests: usize,
}

impl Default for ServeLimits {
    fn default() -> ServeLimits {
        ServeLimits {
            threads: 8,
            max_connections: 1024,
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
    /// Headers, names in lower case; the last of a repeated name wins.
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

/// The function that answers requests.
pub type Handler = dyn Fn(&Request) -> Response + Send + Sync;

/// A bound server, ready to run.
pub struct Server {
    listener: std::net::TcpListener,
    limits: ServeLimits,
    handler: Arc<Handler>,
}

/// What a refused connection is told before it is closed.
const BUSY: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n\
Content-Length: 23\r\nConnection: close\r\n\r\nserver busy, try again\n";

/// What a client whose request head did not arrive in time is told.
const TIMED_OUT: &[u8] =
    b"HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain; charset=utf-8\r\n\
Content-Length: 22\r\nConnection: close\r\n\r\nrequest took too long\n";

impl Server {
    /// Binds `addr` (port 0 picks a free port).
    pub fn bind(
        addr: SocketAddr,
        limits: ServeLimits,
        handler: Arc<Handler>,
    ) -> io::Result<Server> {
        let listener = std::net::TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        Ok(Server {
            listener,
            limits,
            handler,
        })
    }

    /// The address bound.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until SIGINT (Ctrl-C) or SIGTERM, then returns `Ok`: open
    /// connections are closed at once (a handler still running gets a
    /// second to end; its answer is not sent).
    pub fn run(self) -> io::Result<()> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_io()
            .enable_time()
            .thread_name("http")
            .max_blocking_threads(self.limits.threads.max(1))
            .build()?;
        let result = rt.block_on(async {
            let stop = stop_signal()?;
            self.serve(stop).await
        });
        rt.shutdown_timeout(Duration::from_secs(1));
        result
    }

    /// Accepts connections until `stop` completes. Needs a tokio runtime
    /// with I/O and time enabled.
    pub async fn serve(self, stop: impl Future<Output = ()>) -> io::Result<()> {
        let listener = TcpListener::from_std(self.listener)?;
        let shared = Arc::new(Shared {
            limits: self.limits,
            handler: self.handler,
        });
        let permits = Arc::new(Semaphore::new(
            shared
                .limits
                .max_connections
                .clamp(1, Semaphore::MAX_PERMITS),
        ));
        let mut stop = std::pin::pin!(stop);
        loop {
            let accepted = tokio::select! {
                a = listener.accept() => a,
                () = &mut stop => return Ok(()),
            };
            let stream = match accepted {
                Ok((s, _)) => s,
                // Out of file descriptors and the like: back off briefly.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            };
            let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
                // A new socket's send buffer is empty: this never blocks.
                let _ = stream.try_write(BUSY);
                continue;
            };
            let shared = Arc::clone(&shared);
            tokio::spawn(async move {
                serve_connection(stream, shared).await;
                drop(permit);
            });
        }
    }
}

/// Completes on SIGINT or SIGTERM.
fn stop_signal() -> io::Result<impl Future<Output = ()>> {
    #[cfg(unix)]
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    Ok(async move {
        #[cfg(unix)]
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    })
}

/// `d` after `t`; a century for a duration too long to add (tokio's timer
/// caps long sleeps anyway).
fn after(t: Instant, d: Duration) -> Instant {
    t.checked_add(d)
        .or_else(|| t.checked_add(Duration::from_secs(100 * 365 * 86400)))
        .unwrap_or(t)
}

/// What every connection shares.
struct Shared {
    limits: ServeLimits,
    handler: Arc<Handler>,
}

/// Where a connection is, for its timeouts.
#[derive(Clone, Copy, Debug)]
enum Phase {
    /// Waiting for a request (or for the client to read an answer) since
    /// then: the idle timeout runs.
    Idle(Instant),
    /// Receiving a request whose first byte came then: the request
    /// timeout runs.
    Head(Instant),
    /// The request's head is in: its body is read (under the request
    /// timeout, kept by [`answer`]) and the handler runs.
    Handling,
}

/// One connection's state, shared by its socket wrapper and its service.
struct Conn {
    phase: Mutex<Phase>,
    served: AtomicUsize,
}

impl Conn {
    fn phase(&self) -> Phase {
        *self.phase.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set(&self, p: Phase) {
        *self.phase.lock().unwrap_or_else(|e| e.into_inner()) = p;
    }

    /// Bytes came in: an idle connection now receives a request.
    fn received(&self) {
        let mut p = self.phase.lock().unwrap_or_else(|e| e.into_inner());
        if let Phase::Idle(_) = *p {
            *p = Phase::Head(Instant::now());
        }
    }

    /// The head is in: when the request began.
    fn handling(&self) -> Instant {
        let mut p = self.phase.lock().unwrap_or_else(|e| e.into_inner());
        let began = match *p {
            Phase::Head(t) => t,
            // A pipelined request already read with the one before.
            Phase::Idle(_) | Phase::Handling => Instant::now(),
        };
        *p = Phase::Handling;
        began
    }
}

async fn serve_connection(stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let conn = Arc::new(Conn {
        phase: Mutex::new(Phase::Idle(Instant::now())),
        served: AtomicUsize::new(0),
    });
    let limits = &shared.limits;
    let io = TokioIo::new(Guarded {
        stream,
        conn: Arc::clone(&conn),
        request_timeout: limits.request_timeout,
        idle_timeout: limits.idle_timeout,
        timer: Box::pin(tokio::time::sleep_until(Instant::now())),
        armed: None,
        write_blocked: false,
    });
    let max_head = limits.max_head.max(1);
    let service = {
        let shared = Arc::clone(&shared);
        service_fn(move |req| answer(req, Arc::clone(&shared), Arc::clone(&conn)))
    };
    // Errors on one connection concern that client only.
    let _ = http1::Builder::new()
        .title_case_headers(true)
        .max_header_size(max_head)
        // hyper's minimum read buffer is 8 KiB.
        .max_buf_size(max_head.max(8 * 1024))
        .serve_connection(io, service)
        .await;
}

/// Answers one request: the limits, then the handler on the blocking pool.
async fn answer(
    req: hyper::Request<Incoming>,
    shared: Arc<Shared>,
    conn: Arc<Conn>,
) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    let began = conn.handling();
    let served = conn.served.fetch_add(1, Ordering::Relaxed) + 1;
    let limits = &shared.limits;
    let deadline = after(began, limits.request_timeout);
    let (resp, close) = match read_request(req, limits, deadline).await {
        Ok(req) => {
            let handler = Arc::clone(&shared.handler);
            // A panic in the handler answers 500; the server goes on.
            let resp = tokio::task::spawn_blocking(move || handler(&req))
                .await
                .unwrap_or_else(|_| Response::text(500, "internal error"));
            (resp, served >= limits.max_requests)
        }
        Err(refused) => (refused, true),
    };
    conn.set(Phase::Idle(Instant::now()));
    Ok(to_hyper(resp, close))
}

/// The request as the handler sees it, or the answer that refuses it.
async fn read_request(
    req: hyper::Request<Incoming>,
    limits: &ServeLimits,
    deadline: Instant,
) -> Result<Request, Response> {
    let (parts, body) = req.into_parts();
    if parts.headers.contains_key(header::TRANSFER_ENCODING) {
        return Err(Response::text(
            501,
            "chunked bodies are not supported; send Content-Length",
        ));
    }
    // hyper has checked Content-Length (a number; repeated only with the
    // same value).
    let len = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok())
        .unwrap_or(0);
    let too_large = || Response::text(413, format!("body over {} bytes", limits.max_body));
    if len > limits.max_body as u64 {
        return Err(too_large());
    }
    let path = percent_decode(parts.uri.path(), false)
        .ok_or_else(|| Response::text(400, "bad percent-encoding in path"))?;
    let query = parse_query(parts.uri.query().unwrap_or(""))
        .ok_or_else(|| Response::text(400, "bad percent-encoding in query"))?;
    let mut headers = HashMap::new();
    for (name, value) in &parts.headers {
        let value = String::from_utf8_lossy(value.as_bytes()).trim().to_string();
        headers.insert(name.as_str().to_string(), value);
    }
    let body = match tokio::time::timeout_at(
        deadline,
        Limited::new(body, limits.max_body).collect(),
    )
    .await
    {
        Err(_) => return Err(Response::text(408, "request took too long")),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => return Err(too_large()),
        Ok(Err(_)) => return Err(Response::text(400, "the body could not be read")),
        Ok(Ok(b)) => b.to_bytes().to_vec(),
    };
    Ok(Request {
        method: parts.method.as_str().to_string(),
        path,
        query,
        headers,
        body,
    })
}

/// The hyper answer (`Connection: close` when `close`).
fn to_hyper(r: Response, close: bool) -> hyper::Response<Full<Bytes>> {
    let mut out = hyper::Response::new(Full::new(Bytes::from(r.body)));
    *out.status_mut() =
        hyper::StatusCode::from_u16(r.status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    let h = out.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(r.content_type),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    for (name, value) in r.headers {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(&value),
        ) {
            h.append(n, v);
        }
    }
    if close {
        h.insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    out
}

/// The socket with the connection's timeouts: idle (no request coming, or
/// an answer not read) and request (a head trickling in). A head that
/// misses its deadline is answered `408` here, since hyper has not seen a
/// request to answer.
struct Guarded {
    stream: TcpStream,
    conn: Arc<Conn>,
    request_timeout: Duration,
    idle_timeout: Duration,
    timer: Pin<Box<Sleep>>,
    armed: Option<Instant>,
    /// The last write did not go through: do not add a `408` to it.
    write_blocked: bool,
}

impl Guarded {
    /// The deadline now, if one runs.
    fn deadline(&self) -> Option<(Instant, Phase)> {
        match self.conn.phase() {
            p @ Phase::Idle(t) => Some((after(t, self.idle_timeout), p)),
            p @ Phase::Head(t) => Some((after(t, self.request_timeout), p)),
            Phase::Handling => None,
        }
    }

    /// Whether `deadline` has passed (else the task is woken when it does).
    fn expired(&mut self, cx: &mut Context<'_>, deadline: Instant) -> bool {
        if self.armed != Some(deadline) {
            self.timer.as_mut().reset(deadline);
            self.armed = Some(deadline);
        }
        self.timer.as_mut().poll(cx).is_ready()
    }

    /// A write that cannot go on: fails once the deadline has passed.
    fn write_pending<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        self.write_blocked = true;
        match self.deadline() {
            Some((d, _)) if self.expired(cx, d) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "client does not read its answer",
            ))),
            _ => Poll::Pending,
        }
    }
}

impl AsyncRead for Guarded {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    this.conn.received();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => match this.deadline() {
                Some((d, phase)) if this.expired(cx, d) => {
                    if matches!(phase, Phase::Head(_)) && !this.write_blocked {
                        let _ = this.stream.try_write(TIMED_OUT);
                    }
                    // End of input: hyper closes the connection.
                    Poll::Ready(Ok(()))
                }
                _ => Poll::Pending,
            },
        }
    }
}

impl AsyncWrite for Guarded {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.stream).poll_write(cx, data) {
            Poll::Pending => this.write_pending(cx),
            done => {
                this.write_blocked = false;
                done
            }
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.stream).poll_write_vectored(cx, bufs) {
            Poll::Pending => this.write_pending(cx),
            done => {
                this.write_blocked = false;
                done
            }
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
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
    fn canned_answers_have_their_lengths() {
        for raw in [BUSY, TIMED_OUT] {
            let text = std::str::from_utf8(raw).unwrap();
            let (head, body) = text.split_once("\r\n\r\n").unwrap();
            assert!(head.contains(&format!("Content-Length: {}\r\n", body.len())));
        }
    }

    /// Pipelined requests are answered in order; the last one a connection
    /// may carry says `Connection: close` and the server closes.
    #[test]
    fn closes_after_max_requests() {
        use std::io::{Read, Write};
        // Timeouts too long to add to an instant are no trouble.
        let limits = ServeLimits {
            max_requests: 2,
            request_timeout: Duration::MAX,
            idle_timeout: Duration::MAX,
            ..ServeLimits::default()
        };
        let handler: Arc<Handler> =
            Arc::new(|req: &Request| Response::text(200, format!("{} {}", req.method, req.path)));
        let server = Server::bind("127.0.0.1:0".parse().unwrap(), limits, handler).unwrap();
        let addr = server.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let t = std::thread::spawn(move || {
            rt.block_on(server.serve(async {
                let _ = stopped.await;
            }))
        });
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        c.write_all(
            b"GET /a%20b HTTP/1.1\r\nHost: x\r\n\r\nPOST /c HTTP/1.1\r\nHost: x\r\n\r\n\
              GET /d HTTP/1.1\r\nHost: x\r\n\r\n",
        )
        .unwrap();
        let mut all = String::new();
        c.read_to_string(&mut all).unwrap();
        assert_eq!(all.matches("HTTP/1.1 200 OK").count(), 2, "{all}");
        let (first, second) = all.split_at(all.rfind("HTTP/1.1").unwrap());
        assert!(first.ends_with("\r\n\r\nGET /a b\n"), "{all}");
        assert!(!first.contains("Connection: close"), "{all}");
        assert!(second.contains("Connection: close"), "{all}");
        assert!(second.ends_with("\r\n\r\nPOST /c\n"), "{all}");
        drop(stop);
        t.join().unwrap().unwrap();
    }

    #[test]
    fn encodes_round_trip() {
        let s = "e2e3,d7d5 Qg4+";
        assert_eq!(percent_decode(&percent_encode(s), true).unwrap(), s);
    }
}
