//! The page for people: the HTML of a line. The board is lichess's
//! chessground in `#board` (the page's script, `assets/browse.js`, mounts
//! it; without scripts an SVG drawing of the position stands there); the
//! panel beside it (the line, what the proof says, the moves with their
//! sizes and what they lead to, the solved-openings table) is drawn here,
//! for the first answer and for each later one (`/api/line`). Every file
//! the page loads is served by `serve` itself ([`super::assets`]).

use super::http::percent_encode;
use super::state::PageState;
use super::view::group;
use crate::openings::Published;
use crate::rules::{Color, Position, Role, Square};
use std::fmt::Write as _;

/// Escapes text for HTML.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// The link to the page of a line (UCI moves).
pub fn link(line: &[String]) -> String {
    if line.is_empty() {
        "/browse".into()
    } else {
        format!("/browse?line={}", percent_encode(&line.join(",")))
    }
}

/// A link to a line's page that the page's script follows in place
/// (`data-line`), escaped for HTML.
fn line_link(line: &[String], attrs: &str, text: &str) -> String {
    format!(
        "<a{attrs} href=\"{}\" data-line=\"{}\">{}</a>",
        esc(&link(line)),
        esc(&line.join(",")),
        esc(text)
    )
}

const SQ: u32 = 56;
const MARGIN: u32 = 22;

/// Piece shapes drawn as SVG paths (no font needed): a simple outline per
/// role on a 40x40 box.
fn piece_svg(role: Role, color: Color, x: u32, y: u32) -> String {
    let (fill, stroke) = match color {
        Color::White => ("#fafafa", "#222"),
        Color::Black => ("#2b2b2b", "#000"),
    };
    let detail = match color {
        Color::White => "#222",
        Color::Black => "#eee",
    };
    // Each shape is in a 40x40 box; base common to all.
    let base = "M8 36 L32 36 L32 32 L8 32 Z";
    let body = match role {
        Role::Pawn => "M20 8 A5 5 0 1 1 19.99 8 Z M14 32 Q14 22 17 19 L23 19 Q26 22 26 32 Z",
        Role::Knight => "M12 32 L14 22 Q12 18 16 12 L18 7 L21 11 Q30 12 30 22 L28 32 Z",
        Role::Bishop => "M20 5 A3 3 0 1 1 19.99 5 Z M13 32 Q11 22 20 10 Q29 22 27 32 Z",
        Role::Rook => {
            "M11 8 L15 8 L15 11 L18 11 L18 8 L22 8 L22 11 L25 11 L25 8 L29 8 L29 15 L26 17 L26 32 L14 32 L14 17 L11 15 Z"
        }
        Role::Queen => {
            "M8 12 L13 26 L14 10 L18 24 L20 8 L22 24 L26 10 L27 26 L32 12 L29 32 L11 32 Z"
        }
        Role::King => {
            "M18 4 L22 4 L22 7 L25 7 L25 10 L22 10 L22 13 Q31 13 29 22 L27 32 L13 32 L11 22 Q9 13 18 13 L18 10 L15 10 L15 7 L18 7 Z"
        }
    };
    let mark = match role {
        Role::Knight => format!(
            r#"<circle cx="{}" cy="{}" r="1.6" fill="{detail}"/>"#,
            x + 8 + 20,
            y + 8 + 15
        ),
        _ => String::new(),
    };
    format!(
        r#"<g transform="translate({},{})"><path d="{base} {body}" fill="{fill}" stroke="{stroke}" stroke-width="1.5" stroke-linejoin="round"/></g>{mark}"#,
        x + 8,
        y + 8
    )
}

/// The board as an SVG drawing, White at the bottom; the last move's
/// squares (from, to) are tinted.
pub fn board_svg(pos: &Position, last: Option<(Square, Square)>) -> String {
    let size = SQ * 8 + 2 * MARGIN;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" viewBox="0 0 {size} {size}" role="img" aria-label="board">"#
    );
    let _ = write!(
        s,
        r##"<rect x="0" y="0" width="{size}" height="{size}" fill="#5b4a3a"/>"##
    );
    for rank in 0..8u32 {
        for file in 0..8u32 {
            let sq = Square::from_coords(file, rank).expect("on the board");
            let x = MARGIN + file * SQ;
            let y = MARGIN + (7 - rank) * SQ;
            let light = (file + rank) % 2 == 1;
            let mut color = if light { "#f0d9b5" } else { "#b58863" };
            if last.is_some_and(|(f, t)| f == sq || t == sq) {
                color = if light { "#cdd26a" } else { "#aaa23a" };
            }
            let _ = write!(
                s,
                r#"<rect x="{x}" y="{y}" width="{SQ}" height="{SQ}" fill="{color}"/>"#
            );
            if let Some(p) = pos.piece_at(sq) {
                s.push_str(&piece_svg(p.role, p.color, x, y));
            }
        }
    }
    for i in 0..8u32 {
        let fx = MARGIN + i * SQ + SQ / 2;
        let ry = MARGIN + (7 - i) * SQ + SQ / 2 + 5;
        let file = (b'a' + i as u8) as char;
        let _ = write!(
            s,
            r##"<text x="{fx}" y="{}" font-size="14" text-anchor="middle" fill="#f5f0e6" font-family="sans-serif">{file}</text>"##,
            size - 6
        );
        let _ = write!(
            s,
            r##"<text x="11" y="{ry}" font-size="14" text-anchor="middle" fill="#f5f0e6" font-family="sans-serif">{}</text>"##,
            i + 1
        );
    }
    s.push_str("</svg>");
    s
}

/// What the page's header and footer say of the proof served: a count
/// of files, never every name.
#[derive(Clone, Debug, Default)]
pub struct Served {
    /// The proof served, in a few words (`64 win-tree files in proofs/`).
    pub label: String,
    /// The rule set, in words.
    pub rules: String,
    /// How many certificates the solved-openings table was computed over.
    pub certificates: usize,
}

/// JSON for inside a `<script>` element: `<`, `>` and `&` escaped (they
/// only occur inside strings, where `\u003c` means the same).
pub fn script_json(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

fn head(title: &str) -> String {
    let mut h = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title>",
        esc(title)
    );
    for css in super::assets::stylesheets() {
        let _ = write!(h, "<link rel=\"stylesheet\" href=\"/assets/{}\">", css.name);
    }
    h.push_str("</head>");
    h
}

fn header(served: &Served) -> String {
    format!(
        "<header><b>antiproof</b> proof browser &middot; {} &middot; {}</header>",
        esc(&served.label),
        esc(&served.rules)
    )
}

/// The whole page of a line.
pub fn page(st: &PageState, served: &Served) -> String {
    let mut h = head(&st.title);
    h.push_str("<body class=\"nojs\">");
    h.push_str(&header(served));
    h.push_str("<main><div id=\"left\"><div id=\"board\">");
    // The position as drawn without scripts; chessground replaces it.
    h.push_str(&board_svg(&st.pos, st.last.map(|m| (m.from(), m.to()))));
    let _ = write!(
        h,
        "</div><div id=\"tools\"><button type=\"button\" id=\"flip\">flip board</button>\
         <button type=\"button\" id=\"copy-fen\">copy FEN</button>\
         <a id=\"lichess\" href=\"{}\" rel=\"noopener noreferrer\">analyse on lichess</a>\
         <span id=\"note\" role=\"status\"></span></div>\
         <div id=\"promote\" hidden></div><p class=\"fen\" id=\"fen\">{}</p></div>",
        esc(&st.lichess),
        esc(&st.fen)
    );
    let _ = write!(h, "<div id=\"panel\">{}</div></main>", st.panel);
    let _ = write!(
        h,
        "<footer>proof: {} &middot; rules: {} &middot; solved-openings table over {} \
         certificate{} of the files served &middot; keys: &larr; &rarr; Home End &middot; \
         chessground (GPL-3.0-or-later, <a href=\"/assets/chessground.LICENSE.txt\">license</a>)</footer>",
        esc(&served.label),
        esc(&served.rules),
        served.certificates,
        if served.certificates == 1 { "" } else { "s" }
    );
    let embedded = PageState {
        panel: String::new(),
        ..st.clone()
    };
    let json = serde_json::to_string(&embedded).expect("plain data serializes");
    let _ = writeln!(
        h,
        "<script type=\"application/json\" id=\"state\">{}</script>\
         <script type=\"module\" src=\"/assets/browse.js\"></script></body></html>",
        script_json(&json)
    );
    h
}

/// Lines up to this many plies link every move of the line.
const LINKED_PLIES: usize = 100;
/// A longer line links its last this many moves.
const LAST_LINKED: usize = 8;

/// The panel beside the board: the line, back and forward, what the proof
/// says, the moves, the solved-openings table here.
pub fn panel(st: &PageState) -> String {
    let uci = &st.line;
    let mut h = String::new();
    // The line so far, each move a link to the position after it (the
    // script goes by `data-ply`). A link holds its whole line, so a long
    // line links its last plies only, as the page without scripts reaches
    // them: the page stays linear in the line's length.
    h.push_str("<p class=\"line\" id=\"line\">");
    h.push_str(&line_link(&[], " data-ply=\"0\"", "start"));
    let linked = if uci.len() <= LINKED_PLIES {
        0
    } else {
        uci.len() - LAST_LINKED
    };
    for (i, san) in st.san.iter().enumerate() {
        if i % 2 == 0 {
            let _ = write!(h, " {}.", i / 2 + 1);
        }
        let cur = if i + 1 == uci.len() {
            " class=\"cur\""
        } else {
            ""
        };
        if i >= linked {
            let _ = write!(
                h,
                " <a{cur} href=\"{}\" data-ply=\"{}\">{}</a>",
                esc(&link(&uci[..=i])),
                i + 1,
                esc(san)
            );
        } else {
            let _ = write!(h, " <a data-ply=\"{}\">{}</a>", i + 1, esc(san));
        }
    }
    h.push_str("</p><p class=\"nav\">");
    match uci.split_last() {
        Some((_, before)) => h.push_str(&line_link(before, " rel=\"prev\"", "\u{2190} back")),
        None => h.push_str("<span>\u{2190} back</span>"),
    }
    match st.moves.first() {
        Some(m) => {
            let mut next = uci.clone();
            next.push(m.uci.clone());
            h.push_str(&line_link(
                &next,
                " rel=\"next\"",
                &format!("forward ({}) \u{2192}", m.san),
            ));
        }
        None => h.push_str("<span>forward \u{2192}</span>"),
    }
    h.push_str("</p>");
    let turn = if st.turn == "white" { "White" } else { "Black" };
    let _ = write!(
        h,
        "<p class=\"status\" id=\"status\" data-status=\"{}\"><b>{turn} to move.</b> Proof: {}.</p>",
        esc(&st.status),
        esc(&st.status_text)
    );
    let table = st.table.as_ref();
    if st.moves.is_empty() {
        h.push_str("<p id=\"no-moves\">No moves of the proof here.</p>");
    } else {
        h.push_str(
            "<table id=\"moves\"><thead><tr><th>move</th><th>UCI</th><th>positions</th>\
             <th>leads to</th>",
        );
        if table.is_some() {
            h.push_str("<th>solved-openings table: published; certified here</th>");
        }
        h.push_str("</tr></thead><tbody>");
        for m in &st.moves {
            let mut next = uci.clone();
            next.push(m.uci.clone());
            let (cls, mark) = if m.winning {
                (" class=\"win\"", " &#9733;")
            } else {
                ("", "")
            };
            let leads = serde_json::to_value(m.leads).expect("a name");
            let _ = write!(
                h,
                "<tr{cls} data-uci=\"{}\"><td>{}{mark}</td><td class=\"uci\">{}</td>\
                 <td class=\"n\">{}</td><td class=\"leads-{}\">{}</td>",
                esc(&m.uci),
                line_link(&next, "", &m.san),
                esc(&m.uci),
                group(m.nodes),
                leads.as_str().unwrap_or(""),
                m.leads.describe()
            );
            if table.is_some() {
                match &m.table {
                    Some(e) => {
                        let c = serde_json::to_value(e.certified).expect("a name");
                        let _ = write!(
                            h,
                            "<td class=\"cert-{}\">{}</td>",
                            c.as_str().unwrap_or(""),
                            esc(&e.text)
                        );
                    }
                    None => h.push_str("<td></td>"),
                }
            }
            h.push_str("</tr>");
        }
        h.push_str("</tbody></table><p class=\"legend\">");
        if st.moves.iter().any(|m| m.winning) {
            h.push_str("&#9733; the winner's move. ");
        }
        h.push_str(
            "Positions: distinct positions of the proof below the move. Leads to: \
             proven (the proof goes on), open leaf (the proof stops without a win), \
             table leaf (won by endgame tables), game over.</p>",
        );
    }
    if let Some(t) = table {
        let shown = |uci: &str| st.moves.iter().any(|m| m.uci == uci);
        let _ = write!(h, "<section id=\"table\"><h2>{}</h2>", esc(&t.heading));
        if !t.missing.is_empty() {
            let _ = write!(
                h,
                "<p class=\"missing\" id=\"missing\">Replies not certified here yet ({}):",
                t.missing.len()
            );
            for san in &t.missing {
                let Some(e) = t.entries.iter().find(|e| &e.san == san) else {
                    let _ = write!(h, " {}", esc(san));
                    continue;
                };
                let mut next = uci.clone();
                next.push(e.uci.clone());
                h.push(' ');
                h.push_str(&line_link(&next, "", san));
            }
            h.push_str("</p>");
        }
        // At the start, the first moves no file served begins with, by
        // their published status (no file served: nothing certified).
        let others: Vec<_> = t.entries.iter().filter(|e| !shown(&e.uci)).collect();
        if st.line.is_empty() && !others.is_empty() {
            h.push_str("<p id=\"others\">Not in the files served:");
            for p in [Published::Won, Published::Lost, Published::Open] {
                let these: Vec<_> = others.iter().filter(|e| e.published == p).collect();
                if these.is_empty() {
                    continue;
                }
                let _ = write!(h, " <span class=\"{}\">{}:", p.name(), p.name());
                for e in these {
                    h.push(' ');
                    h.push_str(&line_link(std::slice::from_ref(&e.uci), "", &e.san));
                }
                h.push_str("</span>");
            }
            h.push_str("</p>");
        }
        h.push_str(
            "<p class=\"legend\">Published: won (White wins), lost, open \
             (<code>data/openings.tsv</code>). Certified here: by the verified \
             certificates among the files served, as <code>antiproof openings</code> \
             counts them.</p></section>",
        );
    }
    let _ = write!(
        h,
        "<form method=\"get\" action=\"/browse\"><label>Line (UCI or SAN): \
         <input type=\"text\" name=\"line\" value=\"{}\"></label> <button>go</button></form>",
        esc(&uci.join(" "))
    );
    let q = percent_encode(&uci.join(","));
    let _ = write!(
        h,
        "<p class=\"foot\">JSON: <a href=\"/api/line?line={q}\">/api/line?line={}</a> \
         &middot; <a href=\"/?moves={q}\">/?moves={}</a></p>",
        esc(&uci.join(",")),
        esc(&uci.join(","))
    );
    h
}

/// An error page; `retry` is a line to offer instead (the moves before a
/// bad one).
pub fn error_page(message: &str, retry: Option<&[String]>) -> String {
    let mut h = head("antiproof: error");
    h.push_str("<body><header><b>antiproof</b> proof browser</header><main><div>");
    let _ = write!(h, "<p id=\"error\">{}</p><p>", esc(message));
    if let Some(line) = retry.filter(|l| !l.is_empty()) {
        let _ = write!(
            h,
            "<a href=\"{}\">the line before the bad move</a> &middot; ",
            esc(&link(line))
        );
    }
    h.push_str("<a href=\"/browse\">start position</a></p></div></main></body></html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_links() {
        assert_eq!(
            esc(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(link(&[]), "/browse");
        assert_eq!(
            link(&["e2e3".into(), "d7d5".into()]),
            "/browse?line=e2e3,d7d5"
        );
    }
}
