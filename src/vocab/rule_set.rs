//! The rule set: names and stored codes.

use std::fmt;
use std::str::FromStr;

/// A rule set: how a side to move with men left but no legal move scores
/// (international: it wins; FICS: fewer men wins, more loses, equal is a
/// draw; joint: it wins only where both others agree, that is with fewer
/// men, and any other stalemate is a draw). The game outcome itself is
/// decided by the rules code (`crate::rules::outcome`) and, independently,
/// by the checker.
///
/// [`Rules::name`] and [`Rules::code`] are what stored formats hold (store
/// table names, table file names and headers, saved transposition tables):
/// they never change for an existing variant.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub enum Rules {
    /// Lichess / international rules: no legal move wins.
    #[default]
    International,
    /// FICS rules: stalemate with men left is decided by the men count.
    Fics,
    /// Both at once: a stalemate with men left is won only where
    /// International and FICS give the same winner (the side to move has
    /// fewer men), else drawn. A win under joint rules is a win under both.
    Joint,
}

impl Rules {
    /// Every rule set, in code order.
    pub const ALL: [Rules; 3] = [Rules::International, Rules::Fics, Rules::Joint];

    /// `"international"`, `"fics"` or `"joint"`: the name in files, tables and output.
    pub const fn name(self) -> &'static str {
        match self {
            Rules::International => "international",
            Rules::Fics => "fics",
            Rules::Joint => "joint",
        }
    }

    /// The one-byte code used in stored formats: 0 international, 1 FICS,
    /// 2 joint.
    pub const fn code(self) -> u8 {
        match self {
            Rules::International => 0,
            Rules::Fics => 1,
            Rules::Joint => 2,
        }
    }

    /// The rule set of a stored code.
    pub const fn from_code(c: u8) -> Option<Rules> {
        let mut i = 0;
        while i < Rules::ALL.len() {
            if Rules::ALL[i].code() == c {
                return Some(Rules::ALL[i]);
            }
            i += 1;
        }
        None
    }

    /// Other spellings accepted by [`FromStr`] (lower case).
    const fn aliases(self) -> &'static [&'static str] {
        match self {
            Rules::International => &["lichess"],
            Rules::Fics | Rules::Joint => &[],
        }
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Rules {
    type Err = String;

    /// A name (or alias such as `lichess`), in any case.
    fn from_str(s: &str) -> Result<Rules, String> {
        let lower = s.to_ascii_lowercase();
        if let Some(r) = Rules::ALL
            .into_iter()
            .find(|r| r.name() == lower || r.aliases().contains(&lower.as_str()))
        {
            return Ok(r);
        }
        let names: Vec<&str> = Rules::ALL.iter().map(|r| r.name()).collect();
        let expected = match names.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        };
        Err(format!("unknown rule set {s:?}: expected {expected}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_codes_and_spellings() {
        for r in Rules::ALL {
            assert_eq!(Rules::from_code(r.code()), Some(r));
            assert_eq!(r.name().parse::<Rules>(), Ok(r));
            assert_eq!(r.to_string(), r.name());
        }
        assert_eq!(Rules::International.code(), 0);
        assert_eq!(Rules::Fics.code(), 1);
        assert_eq!(Rules::Joint.code(), 2);
        assert_eq!(Rules::from_code(3), None);
        assert_eq!("LiChess".parse::<Rules>(), Ok(Rules::International));
        assert_eq!("FICS".parse::<Rules>(), Ok(Rules::Fics));
        assert_eq!("Joint".parse::<Rules>(), Ok(Rules::Joint));
        assert_eq!(
            "suicide".parse::<Rules>(),
            Err("unknown rule set \"suicide\": expected international, fics or joint".to_string())
        );
        assert_eq!(Rules::default(), Rules::International);
    }
}
