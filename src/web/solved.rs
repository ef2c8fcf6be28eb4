//! The solved-openings table on the page: at the start position each first
//! move's published status (won, lost, open) and what the served files
//! certify of it; at the node where a first move's defences are counted
//! (after 1.e3, or after the winner's answer to a lost first move), which
//! replies are certified here and which are not yet.
//!
//! The data is [`crate::openings::table`], the rows `antiproof openings
//! --json` prints, computed over the certificates of the files served.

use super::view::NodeView;
use crate::openings::{Certified, Published, TableRow, certified_entry, table};
use crate::vocab::RuleSet;
use serde::Serialize;
use std::path::PathBuf;

/// How far a move is certified by the files served.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Certainty {
    /// Its result is certified (verified certificates cover it).
    Proven,
    /// Some of the defences are certified, not all.
    Partial,
    /// Nothing certified.
    None,
}

/// A move's entry in the table.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct Entry {
    /// The move, SAN.
    pub san: String,
    /// The move, UCI.
    pub uci: String,
    /// The published status of the first move (`won`: White wins).
    pub published: Published,
    /// What the files served certify.
    pub certified: Certainty,
    /// Both in words: `won; certified: 12 of 20 replies` (certified by
    /// the files served).
    pub text: String,
}

/// What the table says at a node.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct Here {
    /// A heading: `Solved openings` or `1.e3 in the solved-openings table`.
    pub heading: String,
    /// Every move the table speaks of here: White's 20 first moves, or
    /// the loser's replies at the node where they are counted.
    pub entries: Vec<Entry>,
    /// The replies not certified here yet (SAN), in the table's order.
    pub missing: Vec<String>,
}

impl Here {
    /// The entry of a move, by UCI.
    pub fn entry(&self, uci: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.uci == uci)
    }
}

/// The table rows, computed once.
#[derive(Clone, Debug)]
pub struct Solved {
    rows: Vec<TableRow>,
    files: usize,
}

impl Default for Solved {
    fn default() -> Solved {
        Solved::new(&[])
    }
}

/// "all 6 rule sets", or their names.
fn rule_sets(list: &[String]) -> String {
    if list.len() == RuleSet::ALL.len() {
        format!("all {} rule sets", list.len())
    } else {
        list.join(", ")
    }
}

/// `White` for `white`.
fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

impl Solved {
    /// The table over these certificates.
    pub fn new(certified: &[Certified]) -> Solved {
        Solved {
            rows: table(certified),
            files: certified.len(),
        }
    }

    /// The table over the certificates of `trees` (their sidecars, read
    /// as `antiproof openings` reads them); a file whose sidecar cannot
    /// be read is left out (so counts as not certified) and named in the
    /// warnings returned.
    pub fn of_files(trees: &[PathBuf]) -> (Solved, Vec<String>) {
        let mut certified = Vec::new();
        let mut warnings = Vec::new();
        for t in trees {
            match certified_entry(t) {
                Ok(c) => certified.push(c),
                Err(e) => warnings.push(format!(
                    "{e} (left out of the solved-openings table of the page)"
                )),
            }
        }
        (Solved::new(&certified), warnings)
    }

    /// How many certificates the table was computed over.
    pub fn files(&self) -> usize {
        self.files
    }

    /// What the table says at `view`'s node, if it speaks of it.
    pub fn at(&self, view: &NodeView) -> Option<Here> {
        let san = &view.line_san;
        if san.is_empty() {
            return Some(self.first_moves());
        }
        let row = self.rows.iter().find(|r| r.san == san[0])?;
        let p = &row.proven_here;
        let proven = !p.proven_under.is_empty();
        // Where the loser's replies are counted: after the first move,
        // or after the winner's move there.
        let replies_here = match (&p.winner_move, san.len()) {
            (None, 1) => p.replies > 0 || (proven && p.winner.as_deref() == Some("white")),
            (Some(w), 2) => !proven && san[1] == *w,
            _ => false,
        };
        if !replies_here {
            return None;
        }
        let mut heading = format!("1.{}", row.san);
        if let Some(w) = &p.winner_move {
            heading.push_str(&format!(" {w}"));
        }
        let entries = view
            .pos
            .legal_moves()
            .iter()
            .map(|&mv| {
                let reply = view.pos.san(mv);
                let certified = if proven || !p.missing.contains(&reply) {
                    Certainty::Proven
                } else {
                    Certainty::None
                };
                let text = format!(
                    "{}; {}",
                    row.published.name(),
                    if certified == Certainty::Proven {
                        "certified"
                    } else {
                        "not certified"
                    }
                );
                Entry {
                    uci: mv.uci().to_string(),
                    san: reply,
                    published: row.published,
                    certified,
                    text,
                }
            })
            .collect();
        Some(Here {
            heading: format!("{heading} in the solved-openings table"),
            entries,
            missing: if proven {
                Vec::new()
            } else {
                p.missing.clone()
            },
        })
    }

    fn first_moves(&self) -> Here {
        let entries = self
            .rows
            .iter()
            .map(|r| {
                let p = &r.proven_here;
                let (certified, what) = if !p.proven_under.is_empty() {
                    (
                        Certainty::Proven,
                        format!(
                            "certified: {} wins ({})",
                            capitalized(p.winner.as_deref().unwrap_or("?")),
                            rule_sets(&p.proven_under)
                        ),
                    )
                } else if p.replies > 0 {
                    let after = p
                        .winner_move
                        .as_ref()
                        .map_or(String::new(), |m| format!(" to {m}"));
                    (
                        if p.replies_proven > 0 {
                            Certainty::Partial
                        } else {
                            Certainty::None
                        },
                        format!(
                            "certified: {} of {} replies{after}",
                            p.replies_proven, p.replies
                        ),
                    )
                } else {
                    (Certainty::None, "not certified".to_string())
                };
                Entry {
                    san: r.san.clone(),
                    uci: r.uci.clone(),
                    published: r.published,
                    certified,
                    text: format!("{}; {what}", r.published.name()),
                }
            })
            .collect();
        Here {
            heading: "Solved openings".into(),
            entries,
            missing: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Rules;
    use crate::store::{Key, Record};
    use crate::web::source::RecordSource;
    use crate::web::view::view;
    use std::collections::HashMap;

    fn cert(line: &str, winner: &str, verified: bool) -> Certified {
        crate::openings::certified::for_test(line, winner, verified)
    }

    fn at(solved: &Solved, line: &[&str]) -> Option<Here> {
        let empty = RecordSource::new(
            "empty".into(),
            HashMap::<Key, Record>::new(),
            Rules::International,
        );
        solved.at(&view(&empty, Rules::International, line).unwrap())
    }

    /// Two of 1.e3's replies certified (one more proven but not
    /// verified): the start says 2 of 20 for e3, open for c4; after 1.e3
    /// the 18 others are listed as missing; deeper, nothing.
    #[test]
    fn first_moves_and_the_replies_to_1_e3() {
        let solved = Solved::new(&[
            cert("e3 d5", "white", true),
            cert("e3 g6", "white", true),
            cert("e3 e5", "white", false),
        ]);
        let start = at(&solved, &[]).unwrap();
        assert_eq!(start.entries.len(), 20);
        let e3 = start.entry("e2e3").unwrap();
        assert_eq!(e3.published, Published::Won);
        assert_eq!(e3.certified, Certainty::Partial);
        assert_eq!(e3.text, "won; certified: 2 of 20 replies");
        let c4 = start.entry("c2c4").unwrap();
        assert_eq!(c4.text, "open; not certified");
        assert_eq!(start.entry("h2h4").unwrap().published, Published::Lost);
        // A move proven whole names its winner.
        let h4 = Solved::new(&[cert("h4", "black", true)]);
        let h4 = at(&h4, &[]).unwrap();
        assert_eq!(
            h4.entry("h2h4").unwrap().text,
            "lost; certified: Black wins (international)"
        );

        let after = at(&solved, &["e3"]).unwrap();
        assert_eq!(after.heading, "1.e3 in the solved-openings table");
        assert_eq!(after.entries.len(), 20);
        assert_eq!(after.missing.len(), 18);
        assert!(after.missing.contains(&"e5".to_string()));
        assert!(!after.missing.contains(&"d5".to_string()));
        assert_eq!(after.entry("d7d5").unwrap().certified, Certainty::Proven);
        assert_eq!(after.entry("e7e5").unwrap().certified, Certainty::None);
        assert_eq!(after.entry("e7e5").unwrap().text, "won; not certified");

        assert!(at(&solved, &["e3", "d5"]).is_none());
        // No certificate of 1.d4: nothing to count after it.
        assert!(at(&solved, &["d4"]).is_none());
        assert_eq!(Solved::default().files(), 0);
    }
}
