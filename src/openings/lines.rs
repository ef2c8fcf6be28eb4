//! The lines published proofs follow (`data/published.tsv`), and which
//! of them a certificate of this project covers.

use super::Certified;
use crate::check::cover::coverage;
use crate::vocab::RuleSet;
use serde::Serialize;
use shakmaty::Color;

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
    /// The rule sets under which the certificates *together* prove the
    /// line (one file a reply counts: `crate::check::cover`), compared
    /// by position, so a file rooted deeper along the guide counts.
    pub proven_under: Vec<String>,
    /// Not proven: the loser's answers at the deepest position along the
    /// guide where any is certified, when one is.
    pub answers: Option<GuideAnswers>,
}

/// The loser's answers at one position along a published line's guide,
/// and how many of them certificates prove.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GuideAnswers {
    /// The moves (SAN) from the start to the position
    /// (`e3 c6 Bb5 cxb5 b4`).
    pub after: String,
    /// The move answered, numbered (`3.b4`, `1...Nh6`).
    pub answering: String,
    /// The answers certified, under each rule set of `under`.
    pub certified: usize,
    /// The loser's legal answers there.
    pub of: usize,
    /// The answers not certified, SAN.
    pub missing: Vec<String>,
    /// The rule sets under which `certified` of them are.
    pub under: Vec<String>,
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
/// position after it is then won, and so the line). With them, what the
/// certificates prove of each line together ([`PublishedLine::proven_under`],
/// [`PublishedLine::answers`]), for the side the first move is published
/// to win for.
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
            let (proven_under, answers) = along_guide(certified, &line, &guide);
            PublishedLine {
                line,
                guide,
                source,
                note,
                certified_by,
                proven_under,
                answers,
            }
        })
        .collect()
}

/// The winner of a published line: the side whose move the guide starts
/// with (the line ends with the loser's move).
fn guide_winner(line: &[&str]) -> Color {
    if line.len().is_multiple_of(2) {
        Color::White
    } else {
        Color::Black
    }
}

/// The move `m` played at ply `ply` (0 = White's first), numbered.
fn numbered(ply: usize, m: &str) -> String {
    if ply.is_multiple_of(2) {
        format!("{}.{m}", ply / 2 + 1)
    } else {
        format!("{}...{m}", ply / 2 + 1)
    }
}

/// What the verified certificates prove of `line` together, by rule
/// set, and, where they prove it under none, the loser's answers at the
/// deepest position along `guide` (after one of the winner's moves)
/// where most rule sets see any certified.
fn along_guide(
    certified: &[Certified],
    line: &str,
    guide: &str,
) -> (Vec<String>, Option<GuideAnswers>) {
    let line: Vec<&str> = line.split_whitespace().collect();
    let guide: Vec<&str> = guide.split_whitespace().collect();
    let winner = guide_winner(&line);
    let mut proven_under = Vec::new();
    // (depth along the guide, answers certified) -> the best so far.
    let mut best: Option<(usize, usize, GuideAnswers)> = None;
    for set in RuleSet::ALL {
        let certs = super::table::certificates_under(certified, set);
        if certs.is_empty() {
            continue;
        }
        let Ok(whole) = coverage(&certs, &line, winner, set) else {
            continue;
        };
        if whole.proven {
            proven_under.push(set.name());
            continue;
        }
        // The positions after each of the winner's moves along the guide,
        // deepest first.
        for k in (1..=guide.len()).rev().filter(|k| (k - 1) % 2 == 0) {
            let at: Vec<&str> = line.iter().chain(&guide[..k]).copied().collect();
            let Ok(c) = coverage(&certs, &at, winner, set) else {
                continue;
            };
            let (done, of) = c.counts();
            if done == 0 || c.winner_move.is_some() {
                continue;
            }
            let here = GuideAnswers {
                after: at.join(" "),
                answering: numbered(at.len() - 1, at[at.len() - 1]),
                certified: done,
                of,
                missing: c.missing().iter().map(|s| s.to_string()).collect(),
                under: vec![set.name()],
            };
            match &mut best {
                Some((bk, bd, b)) if *bk == k && *bd == done => b.under.push(set.name()),
                Some((bk, bd, _)) if (*bk, *bd) >= (k, done) => {}
                _ => best = Some((k, done, here)),
            }
            break;
        }
    }
    let answers = if proven_under.is_empty() {
        best.map(|b| b.2)
    } else {
        None
    };
    (proven_under, answers)
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

    fn cert(line: &str, verified: bool) -> Certified {
        let mut c = crate::openings::certified::for_test(line, "white", verified);
        c.holds_under = vec!["international".into(), "fics".into()];
        c
    }

    /// Black's answers to 1.e3 c6 2.Bb5 cxb5 3.b4, SAN.
    fn answers_to_3_b4() -> Vec<String> {
        use shakmaty::Position;
        let (pos, _) = crate::check::game::play_line(
            &shakmaty::variant::Antichess::default(),
            &["e3", "c6", "Bb5", "cxb5", "b4"],
        )
        .unwrap();
        pos.legal_moves()
            .iter()
            .map(|m| shakmaty::san::San::from_move(&pos, *m).to_string())
            .collect()
    }

    /// One file an answer along 1.e3 c6's guide (2.Bb5 cxb5 3.b4): the
    /// deepest answers are counted (and named by move number), all of them
    /// prove the line, and so does one file deeper along the guide than
    /// the guide's first move; unverified files never count.
    #[test]
    fn answers_along_a_guide_are_counted_and_prove_the_line_together() {
        let c6 = |certs: &[Certified]| {
            published_lines(certs, "e3")
                .into_iter()
                .find(|l| l.line == "e3 c6")
                .unwrap()
        };
        let all = answers_to_3_b4();
        assert_eq!(all.len(), 20);
        let mut certs: Vec<Certified> = all
            .iter()
            .filter(|a| *a != "b6")
            .map(|a| cert(&format!("e3 c6 Bb5 cxb5 b4 {a}"), true))
            .collect();
        certs.push(cert("e3 c6 Bb5 cxb5 b4 b6", false));
        let l = c6(&certs);
        assert!(l.certified_by.is_empty() && l.proven_under.is_empty());
        let a = l.answers.unwrap();
        assert_eq!(a.after, "e3 c6 Bb5 cxb5 b4");
        assert_eq!(a.answering, "3.b4");
        assert_eq!((a.certified, a.of), (19, 20));
        assert_eq!(a.missing, ["b6"]);
        assert_eq!(a.under, ["international", "fics"]);

        certs.pop();
        certs.push(cert("e3 c6 Bb5 cxb5 b4 b6", true));
        let l = c6(&certs);
        assert_eq!(l.proven_under, ["international", "fics"]);
        assert_eq!(l.answers, None);

        let l = c6(&[cert("e3 c6 Bb5 cxb5 b4", true)]);
        assert!(l.certified_by.is_empty());
        assert_eq!(l.proven_under, ["international", "fics"]);

        // Answers to 1...Nh6 are White's: numbered as Black's move.
        let mut h3: Vec<Certified> = ["a3", "a4"]
            .iter()
            .map(|a| {
                let mut c = cert(&format!("h3 Nh6 {a}"), true);
                c.winner = Some("black".into());
                c
            })
            .collect();
        h3.push(cert("h3 Nh6 b3", true)); // White's win: not Black's proof.
        let l = published_lines(&h3, "h3").pop().unwrap();
        let a = l.answers.unwrap();
        assert_eq!(
            (a.answering.as_str(), a.certified, a.of),
            ("1...Nh6", 2, 19)
        );
    }
}
