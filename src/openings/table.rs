//! The openings table: for each of White's first moves, what was
//! published and what this project certified, together.

use super::{Certified, Published, PublishedLine, published, published_lines};
use crate::vocab::RuleSet;
use serde::Serialize;

/// One row of `antiproof openings`.
#[derive(Clone, Debug, Serialize)]
pub struct TableRow {
    /// The move, SAN.
    #[serde(rename = "move")]
    pub san: String,
    /// The move, UCI.
    pub uci: String,
    /// Published status.
    pub published: Published,
    /// Black's published winning reply.
    pub reply: Option<String>,
    /// Year published.
    pub year: Option<u16>,
    /// Source.
    pub source: String,
    /// Note.
    pub note: Option<String>,
    /// This project's proofs whose line starts with this move.
    pub certified: Vec<Certified>,
    /// What those proofs prove of the move as a whole, together.
    pub proven_here: Combined,
    /// The lines published proofs of this move follow, with what is
    /// certified of each (`data/published.tsv`).
    pub published_lines: Vec<PublishedLine>,
}

/// What a first move's certificates prove of it *together* (a proof split
/// into one file a reply, or replies proven one by one), decided by the
/// checker's rules (`crate::check::cover`): the move's result is proven
/// under a rule set when the certificates holding under it cover every
/// defence.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Combined {
    /// The side the move is proven to win for, when it is (under some
    /// rule set); else the side of the furthest partial proof.
    pub winner: Option<String>,
    /// The rule sets under which the result is proven.
    pub proven_under: Vec<String>,
    /// Not proven under any rule set: the winner's move before the
    /// replies counted below (when the winner moves after the first move).
    pub winner_move: Option<String>,
    /// Not proven: the loser's replies there that are proven, under the
    /// rule set where most are.
    pub replies_proven: usize,
    /// Not proven: the loser's replies there.
    pub replies: usize,
    /// Not proven: the rule sets under which `replies_proven` of them are.
    pub replies_under: Vec<String>,
    /// Not proven: the replies not proven yet, SAN.
    pub missing: Vec<String>,
}

/// Whether a certificate counts under `set`: verified, and recorded as
/// holding under it (or made under it, when nothing is recorded).
fn holds(c: &Certified, set: crate::vocab::RuleSet) -> bool {
    let name = set.name();
    c.verified == Some(true)
        && if c.holds_under.is_empty() {
            c.rule_set == name
        } else {
            c.holds_under.contains(&name)
        }
}

/// The certificates of `certified` that count under `set` ([`holds`]),
/// as the checker's cover rules take them: line and winner (one without a
/// recorded winner is left out: it proves nothing for either side).
pub(super) fn certificates_under<'a>(
    certified: impl IntoIterator<Item = &'a Certified>,
    set: RuleSet,
) -> Vec<crate::check::cover::Certificate> {
    certified
        .into_iter()
        .filter(|c| holds(c, set))
        .filter_map(|c| {
            Some(crate::check::cover::Certificate {
                line: c.uci.clone(),
                winner: crate::check::parse_color(c.winner.as_deref()?).ok()?,
            })
        })
        .collect()
}

/// What `certified` prove together of the first move `uci` (see
/// [`Combined`]).
pub fn combine(certified: &[Certified], uci: &str) -> Combined {
    use crate::check::cover::coverage;
    use crate::check::parse_color;
    let mine: Vec<&Certified> = certified.iter().filter(|c| c.first == uci).collect();
    let mut winners: Vec<shakmaty::Color> = mine
        .iter()
        .filter_map(|c| c.winner.as_deref().and_then(|w| parse_color(w).ok()))
        .collect();
    winners.sort_by_key(|w| *w as u8);
    winners.dedup();
    let mut out = Combined::default();
    let mut best: Option<(usize, crate::check::cover::Coverage, shakmaty::Color)> = None;
    let mut best_under = Vec::new();
    for &winner in &winners {
        for set in RuleSet::ALL {
            let certs = certificates_under(mine.iter().copied(), set);
            // The lines were read from this table's own files: playable.
            let Ok(c) = coverage(&certs, &[uci], winner, set) else {
                continue;
            };
            if c.proven {
                out.winner = Some(crate::check::game::color_name(winner).to_string());
                out.proven_under.push(set.name());
            }
            let done = c.counts().0;
            let same = best
                .as_ref()
                .is_some_and(|b| b.0 == done && b.2 == winner && b.1.winner_move == c.winner_move);
            if same {
                best_under.push(set.name());
            } else if best.as_ref().is_none_or(|b| done > b.0) {
                best = Some((done, c, winner));
                best_under = vec![set.name()];
            }
        }
    }
    if out.proven_under.is_empty()
        && let Some((done, c, winner)) = best
    {
        out.winner = Some(crate::check::game::color_name(winner).to_string());
        out.winner_move = c.winner_move.clone();
        out.replies_proven = done;
        out.replies = c.replies.len();
        out.replies_under = best_under;
        out.missing = c.missing().iter().map(|s| s.to_string()).collect();
    }
    out
}

/// The table: published rows next to the certified proofs.
pub fn table(certified: &[Certified]) -> Vec<TableRow> {
    published()
        .into_iter()
        .map(|o| {
            let lines = published_lines(certified, &o.san);
            TableRow {
                reply: o
                    .reply
                    .clone()
                    .or_else(|| defence(&o.san, o.published, &lines)),
                proven_here: combine(certified, &o.uci),
                published_lines: lines,
                certified: certified
                    .iter()
                    .filter(|c| c.first == o.uci)
                    .cloned()
                    .collect(),
                san: o.san,
                uci: o.uci,
                published: o.published,
                year: o.year,
                source: o.source,
                note: o.note,
            }
        })
        .collect()
}

/// Black's defence of a lost first move as the published proof's line
/// names it (`data/published.tsv`: the line is the move alone, the guide
/// starts with Black's reply), for a move whose row in
/// `data/openings.tsv` names none.
fn defence(san: &str, published: Published, lines: &[PublishedLine]) -> Option<String> {
    if published != Published::Lost {
        return None;
    }
    lines
        .iter()
        .find(|l| l.line == san)
        .and_then(|l| l.guide.split_whitespace().next())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_move_without_a_reply_of_its_own_shows_the_published_defence() {
        let rows = table(&[]);
        let reply = |san: &str| {
            rows.iter()
                .find(|r| r.san == san)
                .and_then(|r| r.reply.clone())
        };
        // From data/published.tsv's guides.
        assert_eq!(reply("b4").as_deref(), Some("c5"));
        assert_eq!(reply("c3").as_deref(), Some("e5"));
        assert_eq!(reply("f3").as_deref(), Some("d5"));
        assert_eq!(reply("h3").as_deref(), Some("Nh6"));
        assert_eq!(reply("Na3").as_deref(), Some("e6"));
        // data/openings.tsv's own reply is kept.
        assert_eq!(reply("e4").as_deref(), Some("b5"));
        // 1.e3 is won: its published lines are White's answers, not a
        // defence; the open moves have none.
        assert_eq!(reply("e3"), None);
        assert_eq!(reply("g4"), None);
    }
}
