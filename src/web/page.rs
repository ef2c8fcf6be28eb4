//! The page for people: one self-contained HTML document per line (inline
//! CSS and SVG, no script, nothing fetched from anywhere).

use super::http::percent_encode;
use super::view::{NodeView, group, name};
use crate::rules::{Color, Role, Square};
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
        format!("/browse?moves={}", percent_encode(&line.join(",")))
    }
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
/// squares are tinted.
pub fn board_svg(view: &NodeView) -> String {
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
    let last = view.line.last().map(|m| (m.from(), m.to()));
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
            if let Some(p) = view.pos.piece_at(sq) {
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

const STYLE: &str = "body{font-family:sans-serif;margin:1.2em;color:#222;background:#faf8f5}\
main{display:flex;flex-wrap:wrap;gap:1.5em;align-items:flex-start}\
main>div:last-child{flex:1 1 22em;min-width:18em}\
h1{font-size:1.3em;margin:0 0 .6em}\
.line a{text-decoration:none;padding:0 .15em}.line .cur{font-weight:bold;background:#e8e0c8}\
table{border-collapse:collapse;margin-top:.5em}\
td,th{padding:.2em .7em;border-bottom:1px solid #ddd;text-align:left}\
td.n{text-align:right;font-variant-numeric:tabular-nums}\
tr.win td{background:#e4f2dc;font-weight:bold}\
.nav a,.nav span{margin-right:1em}.status{font-size:1.05em;margin:.6em 0}\
.fen{font-family:monospace;font-size:.85em;color:#555;overflow-wrap:anywhere}\
form{margin-top:1em}input[type=text]{width:24em}";

/// The whole page of a line.
pub fn page(view: &NodeView, source_name: &str) -> String {
    let uci = &view.line_uci;
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>antiproof: {}</title><style>{STYLE}</style></head><body>",
        esc(&view.numbered())
    );
    let _ = write!(h, "<h1>antiproof proof browser</h1><main><div>");
    h.push_str(&board_svg(view));
    let _ = write!(
        h,
        "<p class=\"fen\">{}</p></div><div>",
        esc(&view.pos.to_fen())
    );
    // The line so far, each move a link to the position after it.
    let _ = write!(h, "<p class=\"line\"><a href=\"{}\">start</a>", link(&[]));
    for (i, san) in view.line_san.iter().enumerate() {
        if i % 2 == 0 {
            let _ = write!(h, " {}.", i / 2 + 1);
        }
        let cls = if i + 1 == uci.len() {
            " class=\"cur\""
        } else {
            ""
        };
        let _ = write!(
            h,
            " <a{cls} href=\"{}\">{}</a>",
            esc(&link(&uci[..=i])),
            esc(san)
        );
    }
    h.push_str("</p>");
    // Back and forward.
    h.push_str("<p class=\"nav\">");
    if uci.is_empty() {
        h.push_str("<span>&larr; back</span> ");
    } else {
        let _ = write!(
            h,
            "<a href=\"{}\" rel=\"prev\">&larr; back</a>",
            esc(&link(&uci[..uci.len() - 1]))
        );
    }
    if let Some(m) = view.moves.first() {
        let mut next = uci.clone();
        next.push(m.uci.clone());
        let _ = write!(
            h,
            "<a href=\"{}\" rel=\"next\">forward ({}) &rarr;</a>",
            esc(&link(&next)),
            esc(&m.san)
        );
    } else {
        h.push_str("<span>forward &rarr;</span>");
    }
    h.push_str("</p>");
    let _ = write!(
        h,
        "<p class=\"status\"><b>{} to move.</b> Proof: {}.</p>",
        name(view.pos.turn()),
        esc(&view.status.describe())
    );
    if view.moves.is_empty() {
        h.push_str("<p>No moves of the proof here.</p>");
    } else {
        h.push_str(
            "<table><thead><tr><th>move</th><th>UCI</th><th>positions</th></tr></thead><tbody>",
        );
        for m in &view.moves {
            let mut next = uci.clone();
            next.push(m.uci.clone());
            let (cls, mark) = if m.winning {
                (" class=\"win\"", " &#9733;")
            } else {
                ("", "")
            };
            let _ = write!(
                h,
                "<tr{cls}><td><a href=\"{}\">{}</a>{mark}</td><td>{}</td><td class=\"n\">{}</td></tr>",
                esc(&link(&next)),
                esc(&m.san),
                esc(&m.uci),
                group(m.nodes)
            );
        }
        h.push_str("</tbody></table>");
        if view.moves.iter().any(|m| m.winning) {
            h.push_str("<p>&#9733; the winner's move</p>");
        }
    }
    let _ = write!(
        h,
        "<form method=\"get\" action=\"/browse\"><label>Moves (UCI or SAN): \
         <input type=\"text\" name=\"moves\" value=\"{}\"></label> <button>go</button></form>",
        esc(&uci.join(" "))
    );
    let _ = write!(
        h,
        "<p class=\"fen\">rules: {} &middot; proof: {} &middot; JSON: <a href=\"/?moves={}\">/?moves={}</a></p>",
        view.rules,
        esc(source_name),
        esc(&percent_encode(&uci.join(","))),
        esc(&uci.join(","))
    );
    h.push_str("</div></main></body></html>\n");
    h
}

/// An error page.
pub fn error_page(message: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>antiproof: error</title>\
         <style>{STYLE}</style></head><body><h1>antiproof proof browser</h1><p>{}</p>\
         <p><a href=\"/browse\">start position</a></p></body></html>\n",
        esc(message)
    )
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
            "/browse?moves=e2e3,d7d5"
        );
    }
}
