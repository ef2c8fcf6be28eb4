//! The project's own certificates: win-tree files in `proofs/` with
//! their JSON sidecars, read and re-verified.

use super::OpeningsError;
use crate::rules::{Position, Rules};
use crate::vocab::RuleSet;
use crate::wintree::WinTree;
use serde::Serialize;
use std::path::{Path, PathBuf};

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

/// A verified (or not) certificate of `line` (SAN) for `winner`, made
/// under international rules with nothing recorded of other rule sets:
/// for tests of what certificates prove together.
#[cfg(test)]
pub(crate) fn for_test(line: &str, winner: &str, verified: bool) -> Certified {
    let start = crate::rules::Position::startpos();
    let (_, moves) = start.play_line_str(line).unwrap();
    Certified {
        file: format!("{line}.tree"),
        line: line.into(),
        first: moves[0].uci().to_string(),
        uci: moves.iter().map(|m| m.uci().to_string()).collect(),
        rules: "international".into(),
        rule_set: "international".into(),
        holds_under: Vec::new(),
        winner: Some(winner.into()),
        positions: Some(10),
        verified: Some(verified),
        checked_now: false,
        sidecar_disagrees: Vec::new(),
    }
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
                rule_set: set,
                winner: None,
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

#[cfg(test)]
mod tests {
    use super::*;

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
