//! The lines a store holds proofs of (the store's table `lines`,
//! `crate::store::Store::put_line`): `prove` notes each line whose
//! position it proves (or finds proven), and `verify --db` and `export`
//! given no line take the store's one proven line, or say which lines it
//! holds and that one must be given (exit 2), instead of checking the
//! start position, which no opening proof covers.
//!
//! An entry's key is `RULE_SET<TAB>FEN<TAB>UCI MOVES` (FEN empty for the
//! standard start), its value the winner (`white`, `black`).

use crate::rules::{Color, Move, Position};
use crate::store::{Store, StoreReader};
use crate::vocab::RuleSet;
use anyhow::bail;
use std::path::Path;

/// One proven line of a store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ProvenLine {
    /// The rule set it was proven under (its name).
    pub rule_set: String,
    /// The FEN it starts from (`prove --fen`), `None` for the standard
    /// start.
    pub fen: Option<String>,
    /// Its moves, UCI.
    pub moves: Vec<String>,
    /// The side proven to win (`white`, `black`).
    pub winner: String,
}

impl ProvenLine {
    fn key(&self) -> String {
        format!(
            "{}\t{}\t{}",
            self.rule_set,
            self.fen.as_deref().unwrap_or(""),
            self.moves.join(" ")
        )
    }

    fn from_entry(key: &str, value: &[u8]) -> Option<ProvenLine> {
        let mut parts = key.split('\t');
        let (rule_set, fen, moves) = (parts.next()?, parts.next()?, parts.next()?);
        Some(ProvenLine {
            rule_set: rule_set.to_string(),
            fen: (!fen.is_empty()).then(|| fen.to_string()),
            moves: moves.split_whitespace().map(str::to_string).collect(),
            winner: String::from_utf8(value.to_vec()).ok()?,
        })
    }

    /// The line in SAN from its start (UCI where it does not replay).
    fn san(&self) -> String {
        let start = match &self.fen {
            Some(f) => Position::from_fen(f).ok(),
            None => Some(Position::startpos()),
        };
        match start.and_then(|s| s.play_line(&self.moves).ok().map(|(_, m)| (s, m))) {
            Some((_, m)) if m.is_empty() => "(the start position)".into(),
            Some((s, m)) => crate::rules::line_san(&s, &m).join(" "),
            None => self.moves.join(" "),
        }
    }
}

/// Notes in `store` that the position after `moves` from `fen` (or the
/// standard start) is proven for `winner` under `rule_set`.
pub(crate) fn note(
    store: &Store,
    rule_set: RuleSet,
    fen: Option<&str>,
    moves: &[Move],
    winner: Color,
) -> anyhow::Result<()> {
    let line = ProvenLine {
        rule_set: rule_set.name(),
        fen: fen.map(str::to_string),
        moves: moves.iter().map(|m| m.uci().to_string()).collect(),
        winner: winner.name().to_string(),
    };
    store.put_line(&line.key(), line.winner.as_bytes())?;
    Ok(())
}

/// The proven lines `store` notes.
pub(crate) fn read(store: &Store) -> anyhow::Result<Vec<ProvenLine>> {
    Ok(store
        .lines()?
        .iter()
        .filter_map(|(k, v)| ProvenLine::from_entry(k, v))
        .collect())
}

/// The line `command` (`verify`, `export`) works on when given none, for
/// the store `db` under `rule_set` from the standard start: the store's
/// one proven line there (said on stderr), or no moves when the start
/// position itself is proven; else an error (exit 2) saying which lines
/// the store holds and that one must be given.
pub(crate) fn line_for(db: &Path, rule_set: RuleSet, command: &str) -> anyhow::Result<Vec<String>> {
    let store = Store::open_read_only(db).map_err(|e| e.naming(db))?;
    let reader: StoreReader = store.reader().map_err(|e| e.naming(db))?;
    if reader
        .get(rule_set, &Position::startpos().pack().0)?
        .is_some()
    {
        return Ok(Vec::new());
    }
    let all = read(&store)?;
    let here: Vec<&ProvenLine> = all
        .iter()
        .filter(|l| l.rule_set == rule_set.name() && l.fen.is_none())
        .collect();
    let d = db.display();
    match here.as_slice() {
        [one] => {
            errln!(
                "antiproof: no line given: {command} takes the store's proven line, {} ({} wins)",
                one.san(),
                one.winner
            );
            Ok(one.moves.clone())
        }
        [] => {
            let elsewhere: Vec<String> = all
                .iter()
                .map(|l| {
                    let fen = l
                        .fen
                        .as_ref()
                        .map_or(String::new(), |f| format!("--fen {f:?} "));
                    format!("{fen}{} (under {})", l.san(), l.rule_set)
                })
                .collect();
            if elsewhere.is_empty() {
                bail!(
                    "no line given, and {d} notes no proven line (stores of older antiproof \
                     versions note none): give the line, such as `antiproof {command} --db {d} e3 g6`"
                );
            }
            bail!(
                "no line given, and {d} holds no proven line from the start under {}; it \
                 holds: {}. Give the line (with its --rules or --fen)",
                rule_set.describe(),
                elsewhere.join("; ")
            );
        }
        many => bail!(
            "no line given, and {d} holds proofs of {} lines under {}: {}. Give one, such as \
             `antiproof {command} --db {d} {}`",
            many.len(),
            rule_set.describe(),
            many.iter()
                .map(|l| format!("{} ({} wins)", l.san(), l.winner))
                .collect::<Vec<_>>()
                .join("; "),
            many[0].san()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_read_back() {
        let l = ProvenLine {
            rule_set: "international+fifty".into(),
            fen: None,
            moves: vec!["e2e3".into(), "g7g6".into()],
            winner: "white".into(),
        };
        assert_eq!(ProvenLine::from_entry(&l.key(), b"white"), Some(l.clone()));
        assert_eq!(l.san(), "e3 g6");
        let f = ProvenLine {
            fen: Some("8/8/8/8/8/8/1P6/k7 b - - 0 1".into()),
            moves: Vec::new(),
            ..l
        };
        assert_eq!(ProvenLine::from_entry(&f.key(), b"white"), Some(f));
        assert_eq!(ProvenLine::from_entry("no tabs", b"white"), None);
    }
}
