//! White's 20 first moves: what has been published about each
//! (`data/openings.tsv`, compiled in) and what this project has certified
//! itself (win-tree files in `proofs/` with their JSON sidecars).
//!
//! The pieces: this module reads the published-status table; `certified`
//! reads and re-verifies the project's own certificates; `lines` the
//! lines published proofs follow; `table` puts the two together, a row
//! a first move.

pub(crate) mod certified;
mod lines;
mod table;

pub use certified::{Certified, certified_entry, scan_certified, verify_entry};
pub use lines::{PUBLISHED_TSV, PublishedLine, PublishedRow, parse_published, published_lines};
pub use table::{Combined, TableRow, combine, table};

use crate::rules::Position;
use serde::Serialize;
use std::fmt;
use std::path::PathBuf;

/// The published-status data file, compiled in.
pub const OPENINGS_TSV: &str = include_str!("../../data/openings.tsv");

/// What has been published about a first move.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Published {
    /// A forced win for White has been published.
    Won,
    /// A forced win for Black has been published.
    Lost,
    /// Neither.
    Open,
}

impl Published {
    /// `won`, `lost` or `open`.
    pub fn name(self) -> &'static str {
        match self {
            Published::Won => "won",
            Published::Lost => "lost",
            Published::Open => "open",
        }
    }
}

/// One row of the data file.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct Opening {
    /// The move in UCI.
    pub uci: String,
    /// The move in SAN.
    pub san: String,
    /// Published status.
    pub published: Published,
    /// Black's winning reply, when a source names it.
    pub reply: Option<String>,
    /// Year of publication, when dated.
    pub year: Option<u16>,
    /// Where it is published.
    pub source: String,
    /// What was checked.
    pub note: Option<String>,
}

/// A data file or proof directory that cannot be read.
#[derive(Debug)]
pub enum OpeningsError {
    /// A bad row in the data file (1-based line).
    Data {
        /// Line number.
        line: usize,
        /// What is wrong.
        what: String,
    },
    /// A file of the proof directory cannot be read.
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A sidecar that is not the expected JSON.
    Sidecar {
        /// The path.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
}

impl fmt::Display for OpeningsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpeningsError::Data { line, what } => {
                write!(f, "data/openings.tsv line {line}: {what}")
            }
            OpeningsError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            OpeningsError::Sidecar { path, what } => write!(f, "{}: {what}", path.display()),
        }
    }
}

impl std::error::Error for OpeningsError {}

fn opt(s: &str) -> Option<String> {
    (s != "-" && !s.is_empty()).then(|| s.to_string())
}

/// Parses the data file: exactly White's 20 legal first moves, each once,
/// SAN matching UCI.
pub fn parse(text: &str) -> Result<Vec<Opening>, OpeningsError> {
    let start = Position::startpos();
    let mut out: Vec<Opening> = Vec::new();
    let mut last_line = 0;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        last_line = line;
        if raw.trim().is_empty() || raw.starts_with('#') {
            continue;
        }
        let err = |what: String| OpeningsError::Data { line, what };
        let f: Vec<&str> = raw.split('\t').collect();
        if f.len() != 7 {
            return Err(err(format!("{} fields, expected 7", f.len())));
        }
        let mv = start
            .parse_move(f[0])
            .map_err(|e| err(format!("move {}: {e}", f[0])))?;
        if mv.uci().to_string() != f[0] || start.san(mv) != f[1] {
            return Err(err(format!("{} / {} do not name one move", f[0], f[1])));
        }
        let published = match f[2] {
            "won" => Published::Won,
            "lost" => Published::Lost,
            "open" => Published::Open,
            s => return Err(err(format!("status {s:?}: expected won, lost or open"))),
        };
        let year = match opt(f[4]) {
            None => None,
            Some(y) => Some(y.parse().map_err(|_| err(format!("bad year {y:?}")))?),
        };
        if out.iter().any(|o| o.uci == f[0]) {
            return Err(err(format!("{} listed twice", f[0])));
        }
        out.push(Opening {
            uci: f[0].into(),
            san: f[1].into(),
            published,
            reply: opt(f[3]),
            year,
            source: f[5].into(),
            note: opt(f[6]),
        });
    }
    if out.len() != start.legal_moves().len() {
        return Err(OpeningsError::Data {
            line: last_line,
            what: format!("{} moves listed, White has 20", out.len()),
        });
    }
    Ok(out)
}

/// The compiled-in table.
pub fn published() -> Vec<Opening> {
    parse(OPENINGS_TSV).expect("data/openings.tsv is checked by the tests")
}

/// The side a published result gives the game to after White's first
/// move `uci` (international rules): White for a move published as won,
/// Black for one published as lost, none for an open move or a string that
/// is not one of White's first moves.
pub fn published_winner(uci: &str) -> Option<crate::rules::Color> {
    use crate::rules::Color;
    published()
        .into_iter()
        .find(|o| o.uci == uci)
        .and_then(|o| match o.published {
            Published::Won => Some(Color::White),
            Published::Lost => Some(Color::Black),
            Published::Open => None,
        })
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_winner_by_first_move() {
        use crate::rules::Color;
        assert_eq!(published_winner("e2e3"), Some(Color::White));
        assert_eq!(published_winner("h2h3"), Some(Color::Black));
        assert_eq!(published_winner("c2c4"), None);
        assert_eq!(published_winner("e3"), None);
    }

    #[test]
    fn data_file_lists_the_20_moves_with_known_counts() {
        let rows = published();
        assert_eq!(rows.len(), 20);
        let count = |p| rows.iter().filter(|r| r.published == p).count();
        assert_eq!(count(Published::Won), 1);
        assert_eq!(count(Published::Lost), 13);
        assert_eq!(count(Published::Open), 6);
        let status = |san: &str| rows.iter().find(|r| r.san == san).unwrap().published;
        assert_eq!(status("e3"), Published::Won);
        for s in [
            "e4", "d4", "d3", "Nc3", "Nf3", "f4", "h4", "b4", "c3", "f3", "h3", "a3", "Na3",
        ] {
            assert_eq!(status(s), Published::Lost, "{s}");
        }
        for s in ["a4", "b3", "c4", "g3", "g4", "Nh3"] {
            assert_eq!(status(s), Published::Open, "{s}");
        }
        assert!(rows.iter().all(|r| !r.source.is_empty()));
    }

    #[test]
    fn bad_rows_are_rejected_with_their_line() {
        let bad = "e2e3\te4\twon\t-\t2016\tx\t-\n";
        let e = parse(bad).unwrap_err().to_string();
        assert!(e.contains("line 1"), "{e}");
        let bad = "e2e3\te3\twin\t-\t2016\tx\t-\n";
        assert!(
            parse(bad)
                .unwrap_err()
                .to_string()
                .contains("won, lost or open")
        );
        assert!(parse("e2e3\te3\twon\n").is_err());
        let short = "e2e3\te3\twon\t-\t2016\tx\t-\n";
        assert!(
            parse(short)
                .unwrap_err()
                .to_string()
                .contains("White has 20")
        );
    }
}
