//! Proof trees for people and programs: the view of a line (`browse`),
//! the HTTP endpoint and page (`serve`).
//!
//! * [`source`]: where proofs are read from (win-tree files, the proof
//!   store, several at once), behind one [`source::ProofSource`] trait.
//! * [`view`]: what the proof says at a line: status, moves with SAN, UCI
//!   and subtree sizes (largest first), the JSON answer.
//! * [`http`]: the HTTP/1.1 server (hyper on tokio) with hard limits:
//!   idle and slow clients never delay others.
//! * [`page`]: the HTML page: chessground's board in `#board` (an SVG
//!   drawing without scripts), the panel beside it.
//! * [`state`]: what the page shows at a line, as one JSON object.
//! * [`solved`]: the solved-openings table at the start and after 1.e3.
//! * [`assets`]: the page's files (chessground, vendored), compiled in.
//!
//! Routes (see `docs/web.md`):
//!
//! * `GET /?moves=e2e3,c7c5` and `POST /` with the moves as the body:
//!   `{"game_over": bool, "moves": [{"uci", "san", "nodes"}, ...]}`,
//!   largest subtree first; a line off the proof gives an empty list; a
//!   malformed or illegal move gives `400` with `{"error": "..."}`.
//! * `GET /browse?line=e2e3,g7g6`: the page (`moves=` is read too). `GET /`
//!   without a `moves` parameter answers the page when the `Accept`
//!   header names `text/html` (what browsers send), else the JSON of the
//!   start position.
//! * `GET /api/line?line=...`: the page's state at the line
//!   ([`state::PageState`]): the legal moves, the proof's moves with what
//!   they lead to, the table, the panel's HTML.
//! * `GET /assets/NAME`: the page's files.

pub mod assets;
pub mod http;
pub mod page;
pub mod solved;
pub mod source;
pub mod state;
pub mod view;

use crate::rules::{Position, Rules};
use http::{Request, Response};
use solved::Solved;
use source::ProofSource;
use std::path::PathBuf;
use std::sync::Arc;

/// The application behind the server: a proof source and a rule set.
pub struct App {
    /// The proof.
    pub source: Box<dyn ProofSource>,
    /// The rules the proof is under.
    pub rules: Rules,
    /// The solved-openings table over the certificates served.
    pub solved: Solved,
    /// What the page's header and footer say of the proof.
    pub served: page::Served,
}

const JSON: &str = "application/json";
const HTML: &str = "text/html; charset=utf-8";

/// The page loads its own files and nothing else (no other host, no
/// inline script).
const PAGE_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; \
frame-ancestors 'none'";

/// The proof served in a few words, counts rather than every name: the
/// path of one file, `64 win-tree files in proofs/`, `2 proof stores`.
pub fn describe_files(trees: &[PathBuf], stores: &[PathBuf]) -> String {
    fn part(paths: &[PathBuf], one: &str, many: &str) -> Option<String> {
        match paths {
            [] => None,
            [p] => Some(p.display().to_string()),
            _ => {
                let dir = paths[0].parent();
                let same = paths.iter().all(|p| p.parent() == dir);
                Some(match dir.filter(|d| same && !d.as_os_str().is_empty()) {
                    Some(d) => format!("{} {many} in {}/", paths.len(), d.display()),
                    None => format!("{} {many}", paths.len()),
                })
            }
        }
        .map(|s| {
            if paths.len() == 1 {
                format!("{one} {s}")
            } else {
                s
            }
        })
    }
    let parts: Vec<String> = [
        part(trees, "win-tree file", "win-tree files"),
        part(stores, "proof store", "proof stores"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if parts.is_empty() {
        "no proof".into()
    } else {
        parts.join(" and ")
    }
}

/// The query's line: `line`, else `moves` (the page's former name), else
/// the start position.
fn line_param(req: &Request) -> &str {
    req.query
        .get("line")
        .or_else(|| req.query.get("moves"))
        .map_or("", String::as_str)
}

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
    /// A new application; the page names the proof by the source's name
    /// and computes its solved-openings table over no certificate (see
    /// [`App::with_files`]).
    pub fn new(source: Box<dyn ProofSource>, rules: Rules) -> App {
        let served = page::Served {
            label: source.name(),
            rules: rules.to_string(),
            certificates: 0,
        };
        App {
            source,
            rules,
            solved: Solved::default(),
            served,
        }
    }

    /// Names the files served in the page's header and footer by count
    /// ([`describe_files`]) and computes the solved-openings table over
    /// the certificates of `trees`; returns the warnings for sidecars that
    /// could not be read (those files count as not certified).
    pub fn with_files(
        mut self,
        trees: &[PathBuf],
        stores: &[PathBuf],
        rules: &str,
    ) -> (App, Vec<String>) {
        let (solved, warnings) = Solved::of_files(trees);
        self.served = page::Served {
            label: describe_files(trees, stores),
            rules: rules.to_string(),
            certificates: solved.files(),
        };
        self.solved = solved;
        (self, warnings)
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
            "/" | "/browse" | "/api/line" if req.method == "OPTIONS" => {
                let mut r = Response::new(204, "text/plain", "");
                r.headers.push(("Access-Control-Allow-Origin", "*".into()));
                r.headers
                    .push(("Access-Control-Allow-Methods", "GET, POST, OPTIONS".into()));
                r.headers
                    .push(("Access-Control-Allow-Headers", "Content-Type".into()));
                r
            }
            "/browse" if get => self.page(line_param(req)),
            "/api/line" if get => self.state(line_param(req)),
            "/" | "/browse" | "/api/line" => method_not_allowed(),
            p if p.starts_with("/assets/") && get => match assets::get(&p["/assets/".len()..]) {
                Some(a) => Response::new(200, a.content_type, a.body),
                None => Response::text(404, format!("no such file: {p}")),
            },
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

    fn state(&self, moves: &str) -> Response {
        match state::state(&*self.source, self.rules, &self.solved, moves) {
            Ok(st) => {
                let body = serde_json::to_string(&st).expect("plain data serializes");
                Response::new(200, JSON, body)
            }
            Err(e) if e.is_bad_request() => json_error(400, &e.to_string()),
            Err(e) => json_error(500, &e.to_string()),
        }
    }

    fn page(&self, moves: &str) -> Response {
        match state::state(&*self.source, self.rules, &self.solved, moves) {
            Ok(st) => {
                let mut r = Response::new(200, HTML, page::page(&st, &self.served));
                r.headers
                    .push(("Content-Security-Policy", PAGE_POLICY.into()));
                r
            }
            Err(e) => {
                let retry = match &e {
                    view::ViewError::Line(l) => before_bad_move(moves, l.ply),
                    _ => None,
                };
                Response::new(
                    if e.is_bad_request() { 400 } else { 500 },
                    HTML,
                    page::error_page(&e.to_string(), retry.as_deref()),
                )
            }
        }
    }
}

/// The moves of `moves` before ply `ply` (1-based), in UCI, when they
/// are legal.
fn before_bad_move(moves: &str, ply: usize) -> Option<Vec<String>> {
    let tokens: Vec<String> = crate::vocab::line::each(&[moves])
        .take(ply.saturating_sub(1))
        .collect::<Result<_, _>>()
        .ok()?;
    let (_, line) = Position::startpos().play_line(&tokens).ok()?;
    Some(line.iter().map(|m| m.uci().to_string()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_counted_not_listed() {
        let p = |s: &str| PathBuf::from(s);
        assert_eq!(
            describe_files(&[p("proofs/e3-g6.tree")], &[]),
            "win-tree file proofs/e3-g6.tree"
        );
        assert_eq!(
            describe_files(&[p("proofs/a.tree"), p("proofs/b.tree")], &[p("s.redb")]),
            "2 win-tree files in proofs/ and proof store s.redb"
        );
        assert_eq!(
            describe_files(&[p("a.tree"), p("x/b.tree")], &[p("s"), p("t")]),
            "2 win-tree files and 2 proof stores"
        );
        assert_eq!(
            describe_files(&[p("a.tree"), p("b.tree")], &[]),
            "2 win-tree files"
        );
        assert_eq!(describe_files(&[], &[]), "no proof");
    }

    #[test]
    fn the_line_before_a_bad_move() {
        assert_eq!(
            before_bad_move("e3 g6 e5", 3),
            Some(vec!["e2e3".to_string(), "g7g6".to_string()])
        );
        assert_eq!(before_bad_move("zz", 1), Some(vec![]));
    }
}
