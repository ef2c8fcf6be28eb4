//! The rule set: names and stored codes.

use std::fmt;
use std::str::FromStr;

/// The stalemate rule, the part of a [`RuleSet`] beside the fifty-move
/// rule: how a side to move with men left but no legal move scores
/// (international: it wins; FICS: fewer men wins, more loses, equal is a
/// draw; joint: it wins only where both others agree, that is with fewer
/// men, and any other stalemate is a draw). The game outcome itself is
/// decided by the rules code (`crate::rules::outcome`) and, independently,
/// by the checker. Code that needs the whole rule set carries a
/// [`RuleSet`]; a `Rules` alone is a rule set without the fifty-move rule
/// (`RuleSet::from`).
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
    /// Every stalemate rule, in code order.
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

    /// The stalemate rule of a stored code.
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
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Rules {
    type Err = String;

    /// A name, in any case (`lichess` is a [`RuleSet`], not a stalemate rule).
    fn from_str(s: &str) -> Result<Rules, String> {
        let lower = s.to_ascii_lowercase();
        if let Some(r) = Rules::ALL.into_iter().find(|r| r.name() == lower) {
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

/// Plies without a capture or pawn move after which the fifty-move rule
/// draws the game. As on lichess, where the draw is automatic: a position
/// reached on that ply that ends the game (the side to move has no legal
/// move) is scored first, so a win delivered on the 100th ply counts; any
/// other position at 100 or more plies is a draw.
pub const FIFTY_MOVE_PLIES: u32 = 100;

/// A whole rule set: the stalemate rule ([`Rules`]) and whether the
/// fifty-move rule is on. A repetition is never a win under any of them.
///
/// Named `international`, `fics`, `joint` without the fifty-move rule and
/// `international+fifty` (also `lichess`, the rules lichess plays),
/// `fics+fifty`, `joint+fifty` with it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct RuleSet {
    /// How a stalemate with men left scores.
    pub stalemate: Rules,
    /// The fifty-move rule ([`FIFTY_MOVE_PLIES`]) is on.
    pub fifty_move: bool,
}

impl RuleSet {
    /// The rules lichess plays: international with the fifty-move rule.
    pub const LICHESS: RuleSet = RuleSet {
        stalemate: Rules::International,
        fifty_move: true,
    };

    /// A rule set.
    pub const fn new(stalemate: Rules, fifty_move: bool) -> RuleSet {
        RuleSet {
            stalemate,
            fifty_move,
        }
    }

    /// Every rule set: each stalemate rule without, then with, the
    /// fifty-move rule.
    pub const ALL: [RuleSet; 6] = [
        RuleSet::new(Rules::International, false),
        RuleSet::new(Rules::Fics, false),
        RuleSet::new(Rules::Joint, false),
        RuleSet::new(Rules::International, true),
        RuleSet::new(Rules::Fics, true),
        RuleSet::new(Rules::Joint, true),
    ];

    /// The name in files and output: the stalemate rule's name, with
    /// `+fifty` when the fifty-move rule is on (`international+fifty`).
    pub fn name(self) -> String {
        if self.fifty_move {
            format!("{}+fifty", self.stalemate.name())
        } else {
            self.stalemate.name().to_string()
        }
    }

    /// A name safe in file and table names: the stalemate rule's name,
    /// with `_fifty` when the fifty-move rule is on.
    pub fn file_name(self) -> String {
        if self.fifty_move {
            format!("{}_fifty", self.stalemate.name())
        } else {
            self.stalemate.name().to_string()
        }
    }

    /// Words for reports: `international rules`, `international rules
    /// with the fifty-move rule`.
    pub fn describe(self) -> String {
        if self.fifty_move {
            format!("{} rules with the fifty-move rule", self.stalemate.name())
        } else {
            format!("{} rules", self.stalemate.name())
        }
    }
}

impl From<Rules> for RuleSet {
    /// The stalemate rule without the fifty-move rule.
    fn from(stalemate: Rules) -> RuleSet {
        RuleSet::new(stalemate, false)
    }
}

impl fmt::Display for RuleSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for RuleSet {
    type Err = String;

    /// `international`, `fics`, `joint` (no fifty-move rule), the same
    /// with `+fifty` (or `+50`, `_fifty`), or `lichess`; in any case.
    fn from_str(s: &str) -> Result<RuleSet, String> {
        let lower = s.to_ascii_lowercase();
        if lower == "lichess" {
            return Ok(RuleSet::LICHESS);
        }
        let (base, fifty) = match lower
            .strip_suffix("+fifty")
            .or_else(|| lower.strip_suffix("+50"))
            .or_else(|| lower.strip_suffix("_fifty"))
        {
            Some(b) => (b, true),
            None => (lower.as_str(), false),
        };
        match base.parse::<Rules>() {
            Ok(r) => Ok(RuleSet::new(r, fifty)),
            Err(_) => Err(format!(
                "unknown rule set {s:?}: expected international, fics, joint (each optionally with +fifty) or lichess"
            )),
        }
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
        assert!("LiChess".parse::<Rules>().is_err());
        assert_eq!("FICS".parse::<Rules>(), Ok(Rules::Fics));
        assert_eq!("Joint".parse::<Rules>(), Ok(Rules::Joint));
        assert_eq!(
            "suicide".parse::<Rules>(),
            Err("unknown rule set \"suicide\": expected international, fics or joint".to_string())
        );
        assert_eq!(Rules::default(), Rules::International);
    }

    #[test]
    fn rule_sets_with_the_fifty_move_rule() {
        for r in RuleSet::ALL {
            assert_eq!(r.name().parse::<RuleSet>(), Ok(r));
            assert_eq!(r.file_name().parse::<RuleSet>(), Ok(r));
        }
        assert_eq!("lichess".parse::<RuleSet>(), Ok(RuleSet::LICHESS));
        assert_eq!(
            "FICS+50".parse::<RuleSet>(),
            Ok(RuleSet::new(Rules::Fics, true))
        );
        assert_eq!("joint".parse::<RuleSet>(), Ok(RuleSet::from(Rules::Joint)));
        assert_eq!(RuleSet::LICHESS.name(), "international+fifty");
        assert_eq!(RuleSet::LICHESS.file_name(), "international_fifty");
        assert!("suicide+fifty".parse::<RuleSet>().is_err());
        assert_eq!(RuleSet::default(), RuleSet::from(Rules::International));
    }
}
