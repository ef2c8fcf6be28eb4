//! Move lines as people write them: the one tokenizer every command uses.
//!
//! A line is split on white space and commas. Then, token by token:
//!
//! * move numbers are dropped: `1.`, `12...`, and the number in front of a
//!   move (`1.e3`, `2...Nf6`);
//! * result marks are dropped: `1-0`, `0-1`, `1/2-1/2`, `½-½`, `*`;
//! * annotations at the end of a move are dropped: `!`, `?`, `!!`, `??`,
//!   `!?`, `?!`, and check marks `+`, `#`; so is `e.p.` after an en-passant
//!   capture (joined to it or on its own);
//! * a null move (`0000`, `--`, `Z0`, `@@@@`) is an error: antichess has no
//!   passing, and a proof line never holds one;
//! * anything left must look like a move (UCI or SAN); whether it is one,
//!   and a legal one, is for the rules that play it (the prover's own, or
//!   shakmaty in the checker). A token of digits alone is an error.
//!
//! Only text is handled here, no rules, so the checker may use it.

use std::fmt;

/// A token of a move line that is not a move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenError {
    /// A null move (`0000`, `--`): antichess has no passing.
    NullMove {
        /// The token as given.
        token: String,
        /// Its 1-based place among the moves.
        ply: usize,
    },
    /// A token that is no move, move number, result or annotation.
    NotAMove {
        /// The token as given.
        token: String,
        /// Its 1-based place among the moves.
        ply: usize,
    },
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenError::NullMove { token, ply } => write!(
                f,
                "move {ply} ({token:?}) is a null move; antichess has no passing"
            ),
            TokenError::NotAMove { token, ply } => {
                write!(f, "move {ply} ({token:?}) is not a move (UCI or SAN)")
            }
        }
    }
}

impl std::error::Error for TokenError {}

const RESULTS: [&str; 5] = ["1-0", "0-1", "1/2-1/2", "½-½", "*"];
const NULLS: [&str; 4] = ["0000", "--", "Z0", "@@@@"];

/// The moves of a line, in order, as text (see the module docs for what is
/// dropped and what is an error).
pub fn tokens<S: AsRef<str>>(parts: &[S]) -> Result<Vec<String>, TokenError> {
    each(parts).collect()
}

/// The moves of a line one at a time, as [`tokens`] reads them: a caller
/// that plays the moves as they come (the prover's rules, the checker's)
/// stops at the first error, text or rules, whichever comes first.
pub fn each<S: AsRef<str>>(parts: &[S]) -> impl Iterator<Item = Result<String, TokenError>> + '_ {
    let mut ply = 0;
    parts
        .iter()
        .flat_map(|s| s.as_ref().split(|c: char| c.is_whitespace() || c == ','))
        .filter(|t| !t.is_empty())
        .filter_map(move |raw| match token(raw, ply + 1) {
            Ok(Some(t)) => {
                ply += 1;
                Some(Ok(t))
            }
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        })
}

/// One token: `Some` move, `None` for one that is dropped.
fn token(raw: &str, ply: usize) -> Result<Option<String>, TokenError> {
    if RESULTS.contains(&raw) || raw == "e.p." {
        return Ok(None);
    }
    if NULLS.contains(&raw) {
        return Err(TokenError::NullMove {
            token: raw.to_string(),
            ply,
        });
    }
    // A move number, alone or in front of the move.
    let digits = raw.trim_start_matches(|c: char| c.is_ascii_digit());
    let t = if digits.len() < raw.len() && digits.starts_with('.') {
        digits.trim_start_matches('.')
    } else {
        raw
    };
    let t = t.trim_end_matches(['!', '?', '+', '#']);
    let t = t.strip_suffix("e.p.").unwrap_or(t);
    if t.is_empty() {
        if raw.starts_with(|c: char| c.is_ascii_digit()) || raw.starts_with(['!', '?']) {
            return Ok(None); // `1.`, `12...`, or an annotation on its own
        }
        return Err(TokenError::NotAMove {
            token: raw.to_string(),
            ply,
        });
    }
    if NULLS.contains(&t) {
        return Err(TokenError::NullMove {
            token: raw.to_string(),
            ply,
        });
    }
    if t.chars().all(|c| c.is_ascii_digit()) || !t.is_ascii() {
        return Err(TokenError::NotAMove {
            token: raw.to_string(),
            ply,
        });
    }
    Ok(Some(t.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> Vec<String> {
        tokens(&[s]).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn numbers_results_and_annotations_are_dropped() {
        for (line, want) in [
            ("e3 d5", "e3 d5"),
            ("1. e3 d5 2. Qg4", "e3 d5 Qg4"),
            ("1.e3 1...d5", "e3 d5"),
            ("e2e3,d7d5", "e2e3 d7d5"),
            ("1. e3!? d5?? 0-1", "e3 d5"),
            ("e4?! b5 ! Bxb5+ 1/2-1/2 *", "e4 b5 Bxb5"),
            ("  ", ""),
            ("e7e8k", "e7e8k"),
            ("O-O", "O-O"),
            ("exd6e.p. e.p.", "exd6"),
        ] {
            assert_eq!(ok(line).join(" "), want, "{line}");
        }
        assert_eq!(tokens(&["e3", "d5 Qg4"]).unwrap(), ["e3", "d5", "Qg4"]);
    }

    #[test]
    fn each_goes_on_after_an_error_and_counts_plies() {
        let got: Vec<_> = each(&["1. e3 0000", "2. Qg4"]).collect();
        assert_eq!(got[0], Ok("e3".to_string()));
        assert!(matches!(&got[1], Err(TokenError::NullMove { ply: 2, .. })));
        assert_eq!(got[2], Ok("Qg4".to_string()));
    }

    #[test]
    fn null_moves_and_bare_numbers_are_errors() {
        for (line, ply) in [
            ("e3 0000 g6", 2),
            ("--", 1),
            ("e3 Z0", 2),
            ("1. e3 @@@@", 2),
        ] {
            match tokens(&[line]) {
                Err(TokenError::NullMove { ply: p, .. }) => assert_eq!(p, ply, "{line}"),
                r => panic!("{line}: {r:?}"),
            }
        }
        for line in ["e3 12 g6", "e3 ++", "e3 é4"] {
            assert!(
                matches!(tokens(&[line]), Err(TokenError::NotAMove { .. })),
                "{line}"
            );
        }
    }
}
