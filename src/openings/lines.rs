//! The lines published proofs follow (`data/published.tsv`), and which
//! of them a certificate of this project covers.

use super::Certified;
use serde::Serialize;

/// The lines published proofs follow (`data/published.tsv`).
pub const PUBLISHED_TSV: &str = include_str!("../../data/published.tsv");

/// A line a published proof follows, and what is certified of it here.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PublishedLine {
    /// The moves (SAN) to the position the proof is of (`e3 c6`; `b4`).
    pub line: String,
    /// The winner's line from there as the published file shows it
    /// (`Bb5 cxb5 b4`; `c5`).
    pub guide: String,
    /// Where it is stated.
    pub source: String,
    /// What was seen.
    pub note: Option<String>,
    /// The certificates here of the line or of a position along its
    /// guide (after the guide's first move: what the winner plays), each
    /// file once: a certified one proves the line.
    pub certified_by: Vec<String>,
}

/// One row of `data/published.tsv`: line, guide, source, note.
pub type PublishedRow = (String, String, String, Option<String>);

/// Parses `data/published.tsv`: `line  guide  source  note` rows, `#`
/// comments; a row with fewer than three fields is an error naming it.
pub fn parse_published(text: &str) -> Result<Vec<PublishedRow>, String> {
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.starts_with('#') || l.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = l.split('\t').collect();
        if f.len() < 3 || f[0].trim().is_empty() || f[1].trim().is_empty() {
            return Err(format!(
                "data/published.tsv line {}: want line, guide, source, note",
                i + 1
            ));
        }
        let note = f
            .get(3)
            .map(|n| n.trim())
            .filter(|n| !n.is_empty())
            .map(String::from);
        out.push((
            f[0].trim().into(),
            f[1].trim().into(),
            f[2].trim().into(),
            note,
        ));
    }
    Ok(out)
}

/// The published lines of first move `san` (SAN), with the certificates
/// of each: a verified certificate whose line is the published line, or
/// the line followed by the guide's first move (the winner's; the
/// position after it is then won, and so the line).
pub fn published_lines(certified: &[Certified], san: &str) -> Vec<PublishedLine> {
    let rows = parse_published(PUBLISHED_TSV).expect("data/published.tsv is well formed (tested)");
    rows.into_iter()
        .filter(|(line, ..)| line.split_whitespace().next() == Some(san))
        .map(|(line, guide, source, note)| {
            let first = guide.split_whitespace().next().unwrap_or("");
            let along = format!("{line} {first}");
            let certified_by = certified
                .iter()
                .filter(|c| c.verified == Some(true) && (c.line == line || c.line == along))
                .map(|c| c.file.clone())
                .collect();
            PublishedLine {
                line,
                guide,
                source,
                note,
                certified_by,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openings::published;

    #[test]
    fn the_published_lines_are_well_formed_legal_and_of_known_first_moves() {
        let rows = parse_published(PUBLISHED_TSV).unwrap();
        assert_eq!(rows.len(), 14);
        let firsts: Vec<String> = published().into_iter().map(|o| o.san).collect();
        for (line, guide, ..) in &rows {
            assert!(
                firsts.contains(&line.split_whitespace().next().unwrap().to_string()),
                "{line}"
            );
            let moves: Vec<String> = format!("{line} {guide}")
                .split_whitespace()
                .map(String::from)
                .collect();
            assert!(
                crate::rules::Position::startpos().play_line(&moves).is_ok(),
                "{line} {guide} is not a legal line"
            );
        }
        assert!(parse_published("e3 c6\n").is_err());
    }
}
