//! White's 20 first moves: what has been published about each
//! (`data/openings.tsv`, compiled in) and what this project has certified
//! itself (win-tree files in `proofs/` with their JSON sidecars).

use crate::rules::{Position, Rules};
use crate::vocab::RuleSet;
use crate::wintree::WinTree;
use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// The published-status data file, compiled in.
pub const OPENINGS_TSV: &str = include_str!("../data/openings.tsv");

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

/// A proof this project holds: a win-tree file in the proof directory and
/// what its sidecar (`<name>.json`) says.
///
/// Sidecar fields read (all optional): `line` or `root_line` (moves from the
/// start to the proof's root, SAN or UCI, spaces or commas, move numbers
/// allowed), `rules` (a stalemate rule, or a whole rule set such as
/// `international+fifty` or `lichess`), `rule_set` and `fifty_move_rule`
/// (bool; the fifty-move rule, as `prove --json` writes them), `winner`,
/// `positions` (distinct positions; `size` or
/// `nodes` also accepted), `verified` (bool: `antiproof verify` accepted the
/// file) or `verdict` (as `antiproof verify --json` writes it: `certified`
/// counts as verified, anything else as not), `holds_under` (the rule sets
/// the checker certified the file under, as `scripts/make-proofs.sh`
/// records them: a certificate made under international rules may hold
/// under the fifty-move rule or joint rules too). The output of
/// `antiproof verify --json FILE` is thus a valid sidecar.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Certified {
    /// The win-tree file.
    pub file: String,
    /// The line to the proof's root, in SAN (`e3 d5`).
    pub line: String,
    /// First move of the line, UCI.
    #[serde(skip)]
    pub first: String,
    /// The whole line, UCI.
    #[serde(skip)]
    pub uci: Vec<String>,
    /// Stalemate rule (`international`, `fics` or `joint`).
    pub rules: String,
    /// The whole rule set the proof holds under (`international`, or
    /// `international+fifty` for a certificate under the fifty-move rule).
    pub rule_set: String,
    /// Every rule set the checker certified the file under, as recorded
    /// in the sidecar's `holds_under` (empty: not recorded; the file is
    /// then known to hold under `rule_set` only, if verified).
    pub holds_under: Vec<String>,
    /// The winner, if recorded.
    pub winner: Option<String>,
    /// Proof size in positions, if recorded.
    pub positions: Option<u64>,
    /// Whether the checker accepted it (None: no record).
    pub verified: Option<bool>,
    /// Whether `verified` was decided by running the checker now
    /// (`openings --verify`) rather than read from the sidecar.
    pub checked_now: bool,
    /// With `openings --verify`: what the sidecar claims that the file or
    /// the checker contradicts (its line, its winner, a rule set it lists
    /// under `holds_under`), in words; empty when it agrees or was not
    /// checked.
    pub sidecar_disagrees: Vec<String>,
}

fn sidecar_of(tree: &Path) -> PathBuf {
    crate::wintree::compressed::plain_name(tree).with_extension("json")
}

/// Reads one proof file's entry: the sidecar if present, else the tree's
/// prolog for the line.
pub fn certified_entry(tree: &Path) -> Result<Certified, OpeningsError> {
    let side = sidecar_of(tree);
    let mut line_text: Option<String> = None;
    let mut rule_set = RuleSet::from(Rules::International);
    let mut winner = None;
    let mut positions = None;
    let mut verified = None;
    let mut holds_under = Vec::new();
    if side.exists() {
        let text =
            crate::fsutil::read_regular_to_string(&side).map_err(|source| OpeningsError::Io {
                path: side.clone(),
                source,
            })?;
        let v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| OpeningsError::Sidecar {
                path: side.clone(),
                what: e.to_string(),
            })?;
        let Some(obj) = v.as_object() else {
            return Err(OpeningsError::Sidecar {
                path: side,
                what: "not a JSON object".into(),
            });
        };
        let text_of = |k: &str| obj.get(k).and_then(|x| x.as_str()).map(str::to_string);
        line_text = text_of("line").or_else(|| text_of("root_line"));
        for k in ["rules", "rule_set"] {
            if let Some(r) = text_of(k) {
                let set: RuleSet = r.parse().map_err(|e| OpeningsError::Sidecar {
                    path: side.clone(),
                    what: format!("{k}: {e}"),
                })?;
                rule_set.stalemate = set.stalemate;
                rule_set.fifty_move |= set.fifty_move;
            }
        }
        if obj.get("fifty_move_rule").and_then(|x| x.as_bool()) == Some(true) {
            rule_set.fifty_move = true;
        }
        if let Some(list) = obj.get("holds_under") {
            let bad = |what: String| OpeningsError::Sidecar {
                path: side.clone(),
                what,
            };
            let Some(items) = list.as_array() else {
                return Err(bad("holds_under: not a list of rule sets".into()));
            };
            for item in items {
                let Some(name) = item.as_str() else {
                    return Err(bad(format!("holds_under: {item} is not a rule set name")));
                };
                let set: RuleSet = name.parse().map_err(|e| bad(format!("holds_under: {e}")))?;
                holds_under.push(set.name());
            }
            holds_under.sort_unstable();
            holds_under.dedup();
        }
        winner = text_of("winner");
        positions = ["positions", "size", "nodes"]
            .iter()
            .find_map(|k| obj.get(*k).and_then(|x| x.as_u64()));
        verified = obj.get("verified").and_then(|x| x.as_bool()).or_else(|| {
            // `antiproof verify --json` writes a verdict.
            text_of("verdict").map(|v| v == "certified")
        });
    }
    let start = Position::startpos();
    let moves = match line_text {
        Some(t) => {
            start
                .play_line_str(&t)
                .map_err(|e| OpeningsError::Sidecar {
                    path: side.clone(),
                    what: format!("line {t:?}: {e}"),
                })?
                .1
        }
        None => {
            // No sidecar line: the tree's prolog.
            let t = WinTree::open(tree).map_err(|e| OpeningsError::Sidecar {
                path: tree.to_path_buf(),
                what: e.to_string(),
            })?;
            let mut pos = start;
            let mut ms = Vec::new();
            for c in t.prolog() {
                let Some(m) = crate::rules::move_of_code(&pos, c) else {
                    break;
                };
                pos.play_unchecked(m);
                ms.push(m);
            }
            ms
        }
    };
    if positions.is_none() {
        // The root's entry of the size table, when the file has one.
        positions = WinTree::open(tree)
            .ok()
            .and_then(|t| t.size(0).ok().flatten())
            .filter(|&s| s > 0)
            .map(|s| s as u64);
    }
    Ok(Certified {
        checked_now: false,
        sidecar_disagrees: Vec::new(),
        file: tree.display().to_string(),
        line: crate::rules::line_san(&start, &moves).join(" "),
        first: moves
            .first()
            .map(|m| m.uci().to_string())
            .unwrap_or_default(),
        uci: moves.iter().map(|m| m.uci().to_string()).collect(),
        rules: rule_set.stalemate.name().to_string(),
        rule_set: rule_set.name(),
        holds_under,
        winner,
        positions,
        verified,
    })
}

/// Runs the independent checker (`crate::check`) on a proof file and
/// replaces what the entry took from the sidecar by what the file and the
/// checker say: the line (the file's prolog, as the checker replays it),
/// the winner (inferred by the checker from the root), the positions, and
/// the rule sets it holds under. The file is checked under each rule set
/// the sidecar claims (the one it was made under and every one of its
/// `holds_under`; a rule set with the fifty-move rule from clock 0 at the
/// start position); verified only when certified under the one it was made
/// under (every leaf a finished game won by the winner), and it counts
/// under those of the claimed rule sets the checker certifies it under.
/// Each claim the file or the checker contradicts is recorded in
/// [`Certified::sidecar_disagrees`].
pub fn verify_entry(c: &mut Certified) -> Result<(), OpeningsError> {
    use crate::check::{TreeOptions, Verdict, check_tree, game::color_name};
    let bad = |what: String| OpeningsError::Sidecar {
        path: PathBuf::from(&c.file),
        what,
    };
    let made_under: RuleSet = c
        .rule_set
        .parse()
        .map_err(|e| bad(format!("rule_set: {e}")))?;
    let mut claimed = vec![made_under];
    for name in &c.holds_under {
        let set: RuleSet = name.parse().map_err(|e| bad(format!("holds_under: {e}")))?;
        if !claimed.contains(&set) {
            claimed.push(set);
        }
    }
    let tree = WinTree::open(Path::new(&c.file)).map_err(|e| bad(e.to_string()))?;
    let mut disagrees = Vec::new();
    let mut holds_under = Vec::new();
    let mut first = None;
    for set in claimed {
        let report = check_tree(
            &tree,
            &TreeOptions {
                rules: set.stalemate,
                winner: None,
                fifty_move: set.fifty_move.then_some(0),
                ..TreeOptions::default()
            },
        );
        match &report.verdict {
            Verdict::Certified => holds_under.push(set.name()),
            v if set != made_under => disagrees.push(format!(
                "it lists {} under holds_under, but the checker does not certify the file under it: {}",
                set.name(),
                verdict_words(v)
            )),
            _ => {}
        }
        first.get_or_insert(report);
    }
    let report = first.expect("at least the rule set it was made under");
    let certified = holds_under.contains(&made_under.name());
    if !certified && c.verified == Some(true) {
        disagrees.insert(
            0,
            format!(
                "it says the file is verified under {}, but the checker does not certify it: {}",
                made_under.name(),
                verdict_words(&report.verdict)
            ),
        );
    }
    // The line: the file's prolog, replayed by the checker.
    let start = Position::startpos();
    if let Ok((_, moves)) = start.play_line_str(&report.root_line) {
        let uci: Vec<String> = moves.iter().map(|m| m.uci().to_string()).collect();
        if uci != c.uci {
            disagrees.push(format!(
                "its line is {}, but the file's prolog leads to {}",
                if c.line.is_empty() { "empty" } else { &c.line },
                if report.root_line.is_empty() {
                    "the start position"
                } else {
                    &report.root_line
                }
            ));
            c.line = crate::rules::line_san(&start, &moves).join(" ");
            c.first = uci.first().cloned().unwrap_or_default();
            c.uci = uci;
        }
    }
    let winner = color_name(report.winner).to_string();
    if certified
        && let Some(w) = &c.winner
        && !w.eq_ignore_ascii_case(&winner)
    {
        disagrees.push(format!(
            "its winner is {w}, but the file proves a win for {winner}"
        ));
    }
    c.verified = Some(certified);
    c.positions = Some(report.positions);
    c.winner = Some(winner);
    c.holds_under = if certified { holds_under } else { Vec::new() };
    c.holds_under.sort_unstable();
    c.sidecar_disagrees = disagrees;
    c.checked_now = true;
    Ok(())
}

/// A verdict that is not "certified", in words.
fn verdict_words(v: &crate::check::Verdict) -> String {
    use crate::check::Verdict;
    match v {
        Verdict::Certified => "certified".into(),
        Verdict::NotCertified { table_leaves } => {
            format!("{table_leaves} leaves rest on endgame tables")
        }
        Verdict::Open { open_leaves } => format!("{open_leaves} leaves are not finished games"),
        Verdict::Rejected(r) => format!("rejected {r}"),
    }
}

/// Every `*.tree` (or `*.tree.zst`, `*.tree.bz2`) file of a directory,
/// which must exist.
pub fn scan_certified(dir: &Path) -> Result<Vec<Certified>, OpeningsError> {
    crate::fsutil::existing_dir(dir).map_err(|source| OpeningsError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let files =
        crate::wintree::compressed::tree_files(dir).map_err(|source| OpeningsError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    files.iter().map(|f| certified_entry(f)).collect()
}

/// The lines published proofs follow (`data/published.tsv`).
pub const PUBLISHED_TSV: &str = include_str!("../data/published.tsv");

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

/// What `certified` prove together of the first move `uci` (see
/// [`Combined`]).
pub fn combine(certified: &[Certified], uci: &str) -> Combined {
    use crate::check::cover::{Certificate, coverage};
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
            let certs: Vec<Certificate> = mine
                .iter()
                .filter(|c| holds(c, set))
                .map(|c| Certificate {
                    line: c.uci.clone(),
                    winner: c
                        .winner
                        .as_deref()
                        .and_then(|w| parse_color(w).ok())
                        .unwrap_or(!winner),
                })
                .collect();
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
        .map(|o| TableRow {
            proven_here: combine(certified, &o.uci),
            published_lines: published_lines(certified, &o.san),
            certified: certified
                .iter()
                .filter(|c| c.first == o.uci)
                .cloned()
                .collect(),
            san: o.san,
            uci: o.uci,
            published: o.published,
            reply: o.reply,
            year: o.year,
            source: o.source,
            note: o.note,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn sidecars_list_the_rule_sets_a_file_holds_under() {
        let dir = std::env::temp_dir().join(format!("antiproof-holds-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let tree = dir.join("e3-d5.tree");
        let side = dir.join("e3-d5.json");
        std::fs::write(
            &side,
            r#"{"line": "e3 d5", "rules": "international", "verified": true,
                "holds_under": ["joint+fifty", "lichess", "international", "joint"]}"#,
        )
        .unwrap();
        let c = certified_entry(&tree).unwrap();
        assert_eq!(c.rule_set, "international");
        assert_eq!(
            c.holds_under,
            [
                "international",
                "international+fifty",
                "joint",
                "joint+fifty"
            ]
        );
        std::fs::write(&side, r#"{"line": "e3 d5", "holds_under": ["suicide"]}"#).unwrap();
        let e = certified_entry(&tree).unwrap_err().to_string();
        assert!(e.contains("holds_under") && e.contains("suicide"), "{e}");
        std::fs::write(&side, r#"{"line": "e3 d5", "holds_under": "joint"}"#).unwrap();
        let e = certified_entry(&tree).unwrap_err().to_string();
        assert!(e.contains("holds_under"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
