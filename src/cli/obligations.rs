//! Obligations files: the open leaves of a win-tree file, as
//! `verify --tree FILE --obligations OUT` writes them and
//! `prove --obligations` and `export --tree --db` read them.
//!
//! ```text
//! # antiproof obligations
//! # file: proofs/e3.tree
//! # rules: international
//! # fifty-move-rule: no
//! # winner: white
//! # root: <FEN of the file's root>
//! # open: 2
//! 8/8/8/3k4/8/8/PP6/4K3 w - - ; line: e2e3 b7b5 ...
//! ```
//!
//! Comment lines start with `#`; the `rules`, `fifty-move-rule` (`yes` or
//! `no`; absent: no) and `winner` headers are read, others are
//! informative. `rules` may also name a whole rule set
//! (`international+fifty`). Every other non-blank line is an EPD
//! (placement, side to move, castling, en-passant square), optionally
//! followed by ` ; line: <UCI moves>` (informative).

use crate::rules::{Color, Position, Rules};
use crate::vocab::RuleSet;
use anyhow::{Context, bail};
use std::path::Path;

/// An obligations file read and checked.
pub(super) struct Obligations {
    /// The rule set the header names, if any.
    pub rules: Option<Rules>,
    /// Whether the header puts the fifty-move rule on, if it says.
    pub fifty_move: Option<bool>,
    /// The winner the header names, if any.
    pub winner: Option<Color>,
    /// The positions owed: 1-based line number and position.
    pub positions: Vec<(usize, Position)>,
}

/// Reads `path` for the rule set `set`: a header naming another stalemate
/// rule, or the fifty-move rule where `set` has it not (a win without the
/// rule does not discharge one owed under it; the reverse does), a
/// malformed line, a position that is illegal or already a finished game
/// is an error naming the line number.
pub(super) fn read(path: &Path, set: RuleSet) -> anyhow::Result<Obligations> {
    let rules = set.stalemate;
    // Never a FIFO, a device or a directory: refused at once, not waited on.
    let text = crate::fsutil::read_regular_to_string(path)
        .with_context(|| format!("cannot read the obligations file {}", path.display()))?;
    let at = |n: usize| format!("obligations file {} line {n}", path.display());
    let mut out = Obligations {
        rules: None,
        fifty_move: None,
        winner: None,
        positions: Vec::new(),
    };
    // The line of each header read: a header given twice is refused (a
    // later one would silently override the first).
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let Some((key, value)) = comment.split_once(':') else {
                continue;
            };
            let value = value.trim();
            let key = key.trim();
            if let Some(name) = HEADERS.iter().find(|h| **h == key) {
                if let Some(&(_, first)) = seen.iter().find(|(h, _)| h == name) {
                    bail!(
                        "{}: a second `# {key}:` header (the first is on line {first}); \
                         an obligations file names it once",
                        at(n)
                    );
                }
                seen.push((name, n));
            }
            match key {
                "rules" => {
                    let full: RuleSet = value
                        .parse()
                        .map_err(|e| anyhow::anyhow!("{}: {e}", at(n)))?;
                    let r = full.stalemate;
                    if r != rules {
                        bail!(
                            "{}: the obligations are for {r} rules, not {rules} (use --rules {r})",
                            at(n)
                        );
                    }
                    out.rules = Some(r);
                    if full.fifty_move {
                        fifty_header(&mut out, true, set, &at(n))?;
                    }
                }
                "fifty-move-rule" => {
                    let on = match value.to_ascii_lowercase().as_str() {
                        "yes" | "true" | "on" => true,
                        "no" | "false" | "off" => false,
                        _ => bail!("{}: fifty-move-rule is {value:?}, not yes or no", at(n)),
                    };
                    fifty_header(&mut out, on, set, &at(n))?;
                }
                "winner" => {
                    let c: Color = value
                        .parse()
                        .map_err(|e| anyhow::anyhow!("{}: {e}", at(n)))?;
                    out.winner = Some(c);
                }
                _ => {}
            }
            continue;
        }
        let epd = line.split_once(';').map_or(line, |(e, _)| e).trim();
        let fields: Vec<&str> = epd.split_ascii_whitespace().collect();
        if fields.len() != 4 {
            bail!(
                "{}: {:?} is not an EPD (placement, side, castling, en passant): {} fields",
                at(n),
                epd,
                fields.len()
            );
        }
        let pos =
            Position::from_epd(epd).map_err(|e| anyhow::anyhow!("{}: {epd:?}: {e}", at(n)))?;
        // The independent rules library must accept it as legal too.
        let fen: shakmaty::fen::Fen = format!("{epd} 0 1")
            .parse()
            .map_err(|e| anyhow::anyhow!("{}: {epd:?}: {e}", at(n)))?;
        crate::check::game::position_from_fen(fen)
            .map_err(|e| anyhow::anyhow!("{}: {epd:?} is not a legal position: {e}", at(n)))?;
        if let Some(o) = pos.outcome(rules) {
            bail!(
                "{}: {epd:?}: the game is already over ({o}): nothing to prove",
                at(n)
            );
        }
        out.positions.push((n, pos));
    }
    Ok(out)
}

/// The headers read (each at most once).
const HEADERS: [&str; 3] = ["rules", "fifty-move-rule", "winner"];

/// Notes a header's fifty-move rule: on, the reader's must be on too; a
/// `rules` header naming the rule and a `fifty-move-rule: no` contradict.
fn fifty_header(out: &mut Obligations, on: bool, set: RuleSet, at: &str) -> anyhow::Result<()> {
    if out.fifty_move.is_some_and(|was| was != on) {
        bail!("{at}: the headers disagree on the fifty-move rule");
    }
    if on && !set.fifty_move {
        bail!(
            "{at}: the obligations are owed under the fifty-move rule; proving them \
             without it does not discharge them (add --fifty-move-rule)"
        );
    }
    out.fifty_move = Some(on);
    Ok(())
}
