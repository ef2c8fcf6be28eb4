//! Typed values of command-line options, parsed by clap (`value_parser`),
//! one parser a kind of value, so every command accepts and rejects the
//! same way. Every numeric value is bounded, and the error names the bound
//! (clap then exits with status 2).

use crate::rules::{Color, Rules};
use crate::search::Limits;
use crate::vocab::RuleSet;
use clap::builder::RangedU64ValueParser;
use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

/// The longest time limit: one year.
pub const MAX_LIMIT_SECS: u64 = 365 * 24 * 3600;
/// The largest node limit: 10^15 nodes.
pub const MAX_LIMIT_NODES: u64 = 1_000_000_000_000_000;
/// The smallest memory budget: 64 KiB.
pub const MIN_MEMORY: u64 = 1 << 16;
/// The largest memory budget: 1 TiB.
pub const MAX_MEMORY: u64 = 1 << 40;
/// The most worker threads.
pub const MAX_THREADS: u64 = crate::search::MAX_THREADS as u64;
/// The longest timeout in seconds: one day.
pub const MAX_TIMEOUT_SECS: u64 = 24 * 3600;
/// The deepest perft.
pub const MAX_PERFT_DEPTH: u64 = 20;
/// The most repetitions of a benchmark.
pub const MAX_REPEAT: u64 = 1000;
/// The most random probes of `tables bench`.
pub const MAX_PROBES: u64 = 1_000_000_000_000;

/// When to stop a search: a time such as `30s`, `5m`, `1h`, `500ms`, or a
/// node count such as `10M nodes` (`k`, `M`, `G`/`B` multiply by 10^3,
/// 10^6, 10^9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Stop after this long (at most [`MAX_LIMIT_SECS`]).
    Time(Duration),
    /// Stop after this many nodes (at most [`MAX_LIMIT_NODES`]).
    Nodes(u64),
}

impl Limit {
    /// Sets this limit in `limits`, a time limit counting from now.
    pub fn apply(self, limits: &mut Limits) {
        match self {
            Limit::Time(d) => limits.deadline = Some(Instant::now() + d),
            Limit::Nodes(n) => limits.nodes = Some(n),
        }
    }
}

/// A decimal number with an optional `k`, `M`, `G`/`B` multiplier.
fn parse_count(num: &str) -> Option<f64> {
    let num = num.trim();
    let (digits, mult) = match num.chars().last()? {
        'k' | 'K' => (&num[..num.len() - 1], 1e3),
        'M' | 'm' => (&num[..num.len() - 1], 1e6),
        'G' | 'g' | 'B' | 'b' => (&num[..num.len() - 1], 1e9),
        _ => (num, 1.0),
    };
    let v: f64 = digits.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v * mult)
}

impl FromStr for Limit {
    type Err = String;
    fn from_str(s: &str) -> Result<Limit, String> {
        let t = s.trim();
        let bad = || {
            format!(
                "cannot read {s:?}: give a time such as 30s, 5m, 1h or a node count such as 10M nodes"
            )
        };
        if let Some(n) = t.strip_suffix("nodes").or_else(|| t.strip_suffix("node")) {
            let v = parse_count(n).ok_or_else(bad)?;
            if v > MAX_LIMIT_NODES as f64 {
                return Err(format!(
                    "{s:?} is too many: a node limit is at most 10^15 nodes"
                ));
            }
            return Ok(Limit::Nodes(v as u64));
        }
        let (num, unit) = if let Some(n) = t.strip_suffix("ms") {
            (n, 0.001)
        } else if let Some(n) = t.strip_suffix('s') {
            (n, 1.0)
        } else if let Some(n) = t.strip_suffix('m') {
            (n, 60.0)
        } else if let Some(n) = t.strip_suffix('h') {
            (n, 3600.0)
        } else {
            return Err(bad());
        };
        let v: f64 = num.trim().parse().map_err(|_| bad())?;
        if !(v.is_finite() && v >= 0.0) {
            return Err(bad());
        }
        let secs = v * unit;
        if secs > MAX_LIMIT_SECS as f64 {
            return Err(format!(
                "{s:?} is too long: a time limit is at most 1 year (8760h)"
            ));
        }
        Ok(Limit::Time(Duration::from_secs_f64(secs)))
    }
}

impl fmt::Display for Limit {
    /// A form [`Limit::from_str`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Nodes(n) => write!(f, "{n} nodes"),
            Limit::Time(d) if d.subsec_nanos() == 0 => write!(f, "{}s", d.as_secs()),
            Limit::Time(d) => write!(f, "{}s", d.as_secs_f64()),
        }
    }
}

/// A memory size such as `512M` or `4G` (binary multiples `K`, `M`, `G`,
/// `T`, an optional trailing `B`; a bare number is bytes), from
/// [`MIN_MEMORY`] to [`MAX_MEMORY`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemorySize(pub u64);

impl MemorySize {
    /// The size in bytes.
    pub fn bytes(self) -> usize {
        self.0 as usize
    }
}

impl FromStr for MemorySize {
    type Err = String;
    fn from_str(s: &str) -> Result<MemorySize, String> {
        size_in(s, MIN_MEMORY, MAX_MEMORY).map(MemorySize)
    }
}

/// A size in bytes as [`MemorySize`] reads it, from `min` to `max`.
fn size_in(s: &str, min: u64, max: u64) -> Result<u64, String> {
    let t = s.trim().trim_end_matches(['B', 'b']);
    let bad = || format!("cannot read {s:?}: give a size such as 512M or 4G");
    let (num, mult) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 1 << 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 1 << 30),
        Some('T' | 't') => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    if !(v.is_finite() && v > 0.0) {
        return Err(bad());
    }
    let bytes = v * mult as f64;
    if bytes < min as f64 {
        return Err(format!("{s:?} is too small (at least {})", MemorySize(min)));
    }
    if bytes > max as f64 {
        return Err(format!("{s:?} is too big (at most {})", MemorySize(max)));
    }
    Ok(bytes as u64)
}

/// The smallest file size `export --split-above` takes.
pub const MIN_FILE_SIZE: u64 = 1 << 10;

/// A file size such as `50M` (as [`MemorySize`]), from [`MIN_FILE_SIZE`]
/// to [`MAX_MEMORY`], in bytes.
pub fn file_size(s: &str) -> Result<u64, String> {
    size_in(s, MIN_FILE_SIZE, MAX_MEMORY)
}

impl fmt::Display for MemorySize {
    /// A form [`MemorySize::from_str`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (shift, unit) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
            if self.0.is_multiple_of(1 << shift) {
                return write!(f, "{}{unit}", self.0 >> shift);
            }
        }
        write!(f, "{}", self.0)
    }
}

/// A stalemate rule: `international`, `fics` or `joint`.
pub fn rules(s: &str) -> Result<Rules, String> {
    s.parse()
}

/// A whole rule set: `international`, `fics`, `joint`, each optionally
/// with `+fifty`, or `lichess` (international with the fifty-move rule).
pub fn rule_set(s: &str) -> Result<RuleSet, String> {
    s.parse()
}

/// `--rules` and `--fifty-move-rule`, as every command that takes a rule
/// set reads them.
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct RuleArgs {
    /// Rule set: international, fics or joint (how a stalemate with men
    /// left scores), optionally with +fifty; lichess is international with
    /// the fifty-move rule, as lichess plays.
    #[arg(
        long = "rules",
        default_value = "international",
        value_parser = rule_set,
        value_name = "RULES"
    )]
    set: RuleSet,
    /// The fifty-move rule: a game is drawn after 100 plies without a
    /// capture or pawn move, unless that ply ended it (on with any --rules).
    #[arg(long)]
    fifty_move_rule: bool,
}

impl RuleArgs {
    /// The rule set asked for.
    pub fn rule_set(&self) -> RuleSet {
        RuleSet::new(
            self.set.stalemate,
            self.set.fifty_move || self.fifty_move_rule,
        )
    }

    /// The stalemate rule.
    pub fn stalemate(&self) -> Rules {
        self.set.stalemate
    }

    /// The stalemate rule, for a command that does not model the
    /// fifty-move rule: an error naming the command if it was asked for.
    pub fn without_fifty(&self, command: &str) -> anyhow::Result<Rules> {
        if self.rule_set().fifty_move {
            anyhow::bail!(
                "antiproof {command}: the fifty-move rule is not supported here (drop --fifty-move-rule, or use --rules {})",
                self.set.stalemate
            );
        }
        Ok(self.set.stalemate)
    }
}

/// A side: `white` (`w`) or `black` (`b`).
pub fn color(s: &str) -> Result<Color, String> {
    s.parse()
}

/// A side as [`color`] reads it, in the checker's (shakmaty's) type.
pub fn check_color(s: &str) -> Result<shakmaty::Color, String> {
    Ok(match color(s)? {
        Color::White => shakmaty::Color::White,
        Color::Black => shakmaty::Color::Black,
    })
}

/// A selection of ladder rungs (`1-10`, `1,3,6-8`).
pub fn rungs(s: &str) -> Result<super::ladder::Rungs, String> {
    s.parse()
}

/// A `--limit`.
pub fn limit(s: &str) -> Result<Limit, String> {
    s.parse()
}

/// A `--memory`.
pub fn memory(s: &str) -> Result<MemorySize, String> {
    s.parse()
}

/// A number of worker threads: 1 to [`MAX_THREADS`].
pub fn threads() -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::new().range(1..=MAX_THREADS)
}

/// Open connections of `serve`: 1 to 65536.
pub fn connections() -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::new().range(1..=65536)
}

/// A timeout in whole seconds: 1 to [`MAX_TIMEOUT_SECS`].
pub fn timeout_secs() -> RangedU64ValueParser<u64> {
    RangedU64ValueParser::new().range(1..=MAX_TIMEOUT_SECS)
}

/// A perft depth: 0 to [`MAX_PERFT_DEPTH`] plies.
pub fn perft_depth() -> RangedU64ValueParser<u32> {
    RangedU64ValueParser::new().range(0..=MAX_PERFT_DEPTH)
}

/// A number of repetitions: 1 to [`MAX_REPEAT`].
pub fn repeat() -> RangedU64ValueParser<u32> {
    RangedU64ValueParser::new().range(1..=MAX_REPEAT)
}

/// A number of random probes: 1 to [`MAX_PROBES`].
pub fn probes() -> RangedU64ValueParser<u64> {
    RangedU64ValueParser::new().range(1..=MAX_PROBES)
}

/// The most men of endgame tables to build: 2 to
/// [`crate::tables::MAX_MEN`].
pub fn men() -> RangedU64ValueParser<u32> {
    RangedU64ValueParser::new().range(2..=crate::tables::MAX_MEN as u64)
}

/// A zstd compression level: 1 to
/// [`crate::wintree::compressed::ZSTD_MAX_LEVEL`].
pub fn zstd_level() -> clap::builder::RangedI64ValueParser<i32> {
    clap::builder::RangedI64ValueParser::new()
        .range(1..=crate::wintree::compressed::ZSTD_MAX_LEVEL as i64)
}

/// A proof-size estimate (any `u32`).
pub fn proof_size() -> RangedU64ValueParser<u32> {
    RangedU64ValueParser::new().range(0..=u32::MAX as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_and_are_bounded() {
        let time = |s: u64| Ok(Limit::Time(Duration::from_secs(s)));
        let ok: &[(&str, Result<Limit, ()>)] = &[
            ("30s", time(30)),
            ("5m", time(300)),
            ("1h", time(3600)),
            (" 2 s ", time(2)),
            ("500ms", Ok(Limit::Time(Duration::from_millis(500)))),
            ("8760h", time(MAX_LIMIT_SECS)),
            ("10M nodes", Ok(Limit::Nodes(10_000_000))),
            ("5000nodes", Ok(Limit::Nodes(5000))),
            ("1 node", Ok(Limit::Nodes(1))),
            ("1000000G nodes", Ok(Limit::Nodes(MAX_LIMIT_NODES))),
        ];
        for (s, want) in ok {
            assert_eq!(limit(s).map_err(|_| ()), *want, "{s}");
        }
        let rejected: &[(&str, &str)] = &[
            ("soon", "give a time"),
            ("10x", "give a time"),
            ("-1s", "give a time"),
            ("infs", "give a time"),
            ("NaNs", "give a time"),
            ("8761h", "at most 1 year"),
            ("1e19s", "at most 1 year"),
            ("1e20s", "at most 1 year"),
            ("1e300h", "at most 1 year"),
            ("1000001G nodes", "at most 10^15 nodes"),
            ("1e30 nodes", "at most 10^15 nodes"),
            ("x nodes", "give a time"),
        ];
        for (s, msg) in rejected {
            let e = limit(s).unwrap_err();
            assert!(e.contains(msg), "{s}: {e}");
        }
    }

    #[test]
    fn memory_sizes_parse_and_are_bounded() {
        let ok: &[(&str, u64)] = &[
            ("512M", 512 << 20),
            ("4G", 4 << 30),
            ("4GB", 4 << 30),
            ("64K", MIN_MEMORY),
            ("1T", MAX_MEMORY),
            ("1024G", MAX_MEMORY),
            ("1.5G", 3 << 29),
            ("65536", 65536),
        ];
        for (s, want) in ok {
            assert_eq!(memory(s), Ok(MemorySize(*want)), "{s}");
        }
        let rejected: &[(&str, &str)] = &[
            ("lots", "give a size"),
            ("0", "give a size"),
            ("-1G", "give a size"),
            ("1", "at least 64K"),
            ("63K", "at least 64K"),
            ("1025G", "at most 1T"),
            ("2T", "at most 1T"),
            ("99999999999999999999G", "at most 1T"),
        ];
        for (s, msg) in rejected {
            let e = memory(s).unwrap_err();
            assert!(e.contains(msg), "{s}: {e}");
        }
    }

    #[test]
    fn values_print_as_they_parse() {
        for s in ["1G", "512M", "1536M", "64K", "1T", "65537"] {
            assert_eq!(memory(s).unwrap().to_string(), s);
        }
        for s in ["30s", "0.5s", "10000000 nodes"] {
            assert_eq!(limit(s).unwrap().to_string(), s);
        }
    }

    #[test]
    fn words_parse_the_same_for_every_command() {
        assert_eq!(rules("international"), Ok(Rules::International));
        assert!(rules("Lichess").is_err());
        assert_eq!(rule_set("Lichess"), Ok(RuleSet::LICHESS));
        assert_eq!(rules("fics"), Ok(Rules::Fics));
        assert_eq!(rules("joint"), Ok(Rules::Joint));
        assert!(rules("atomic").unwrap_err().contains("rule set"));
        assert!(rules("atomic").unwrap_err().contains("rule set"));
        assert_eq!(color("W"), Ok(Color::White));
        assert_eq!(color("black"), Ok(Color::Black));
        assert_eq!(check_color("b"), Ok(shakmaty::Color::Black));
        assert!(color("green").unwrap_err().contains("white or black"));
        assert!(check_color("green").unwrap_err().contains("white or black"));
    }

    #[test]
    fn numbers_are_bounded() {
        use clap::builder::TypedValueParser;
        let cmd = clap::Command::new("t");
        let parse = |p: &dyn Fn(&str) -> Result<u64, String>, s: &str| p(s);
        let threads = |s: &str| {
            threads()
                .parse_ref(&cmd, None, std::ffi::OsStr::new(s))
                .map(|v| v as u64)
                .map_err(|e| e.to_string())
        };
        assert_eq!(parse(&threads, "1024"), Ok(1024));
        assert!(parse(&threads, "100000").unwrap_err().contains("1..=1024"));
        assert!(parse(&threads, "0").unwrap_err().contains("1..=1024"));
        let timeout = |s: &str| {
            timeout_secs()
                .parse_ref(&cmd, None, std::ffi::OsStr::new(s))
                .map_err(|e| e.to_string())
        };
        assert_eq!(parse(&timeout, "86400"), Ok(86400));
        assert!(
            parse(&timeout, "18446744073709551615")
                .unwrap_err()
                .contains("1..=86400")
        );
    }
}
