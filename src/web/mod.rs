//! Proof trees for people and programs: the view of a line (`browse`),
//! the HTTP endpoint and page (`serve`).
//!
//! * [`source`]: where proofs are read from (win-tree files, the proof
//!   store, several at once), behind one [`source::ProofSource`] trait.
//! * [`view`]: what the proof says at a line: status, moves with SAN, UCI
//!   and subtree sizes (largest first), the JSON answer.
//! * [`http`]: the HTTP/1.1 server (hyper on tokio) with hard limits:
//!   idle and slow clients never delay others.
//! * [`page`]: the HTML page with the board in inline SVG.
//!
//! Routes (see `docs/web.md`):
//!
//! * `GET /?moves=e2e3,c7c5` and `POST /` with the moves as the body:
//!   `{"game_over": bool, "moves": [{"uci", "san", "nodes"}, ...]}`,
//!   largest subtree first; a line off the proof gives an empty list; a
//!   malformed or illegal move gives `400` with `{"error": "..."}`.
//! * `GET /browse?moves=...`: the page. `GET /` without a `moves`
//!   parameter answers the page when the `Accept` header names
//!   `text/html` (what browsers send), else the JSON of the start position.

pub mod http;
pub mod page;
pub mod source;
pub mod view;

use crate::rules::Rules;
use http::{Request, Response};
use source::ProofSource;
use std::sync::Arc;

/// The application behind the server: a proof source and a rule set.
pub struct App {
    /// The proof.
    pub source: Box<dyn ProofSource>,
    /// The rules the proof is under.
    pub rules: Rules,
}

const JSON: &str = "application/json";
const HTML: &str = "text/html; charset=utf-8";

/// `405`, naming the methods the pages take.
fn method_not_allowed() -> Response {
    let mut r = Response::text(405, "method not allowed: use GET (or POST on /)");
    r.headers.push(("Allow", "GET, HEAD, POST, OPTIONS".into()));
    r
}

fn json_error(status: u16, message: &str) -> Response {
    let body = serde_json::json!({ "error": message }).to_string();
    let mut r = Response::new(status, JSON, body);
    r.headers.push(("Access-Control-Allow-Origin", "*".into()));
    r
}

impl App {
    /// A new application.
    pub fn new(source: Box<dyn ProofSource>, rules: Rules) -> App {
        App { source, rules }
    }

    /// The request handler for [`http::Server`].
    pub fn handler(self: Arc<Self>) -> Arc<http::Handler> {
        Arc::new(move |req: &Request| self.handle(req))
    }

    /// Answers one request.
    pub fn handle(&self, req: &Request) -> Response {
        let get = matches!(req.method.as_str(), "GET" | "HEAD");
        if !get && !matches!(req.method.as_str(), "POST" | "OPTIONS") {
            // A method no page takes (PUT, DELETE, CONNECT, whose
            // authority-form target has no path at all): 405 on any path.
            return method_not_allowed();
        }
        match req.path.as_str() {
            "/" if get => {
                let wants_html = req
                    .header("accept")
                    .is_some_and(|a| a.contains("text/html"));
                match req.query.get("moves") {
                    None if wants_html => self.page(""),
                    None => self.api(""),
                    Some(m) => self.api(m),
                }
            }
            "/" if req.method == "POST" => match std::str::from_utf8(&req.body) {
                Ok(body) => self.api(body),
                Err(_) => json_error(400, "the body is not UTF-8 text"),
            },
            "/" | "/browse" if req.method == "OPTIONS" => {
                let mut r = Response::new(204, "text/plain", "");
                r.headers.push(("Access-Control-Allow-Origin", "*".into()));
                r.headers
                    .push(("Access-Control-Allow-Methods", "GET, POST, OPTIONS".into()));
                r.headers
                    .push(("Access-Control-Allow-Headers", "Content-Type".into()));
                r
            }
            "/browse" if get => self.page(req.query.get("moves").map(String::as_str).unwrap_or("")),
            "/" | "/browse" => method_not_allowed(),
            "/favicon.ico" => Response::new(204, "image/x-icon", ""),
            _ => Response::text(404, format!("no such page: {}", req.path)),
        }
    }

    fn api(&self, moves: &str) -> Response {
        match view::view(&*self.source, self.rules, &[moves]) {
            Ok(v) => {
                let mut r = Response::new(200, JSON, v.json());
                r.headers.push(("Access-Control-Allow-Origin", "*".into()));
                r
            }
            Err(e) if e.is_bad_request() => json_error(400, &e.to_string()),
            Err(e) => json_error(500, &e.to_string()),
        }
    }

    fn page(&self, moves: &str) -> Response {
        match view::view(&*self.source, self.rules, &[moves]) {
            Ok(v) => Response::new(200, HTML, page::page(&v, &self.source.name())),
            Err(e) => Response::new(
                if e.is_bad_request() { 400 } else { 500 },
                HTML,
                page::error_page(&e.to_string()),
            ),
        }
    }
}
