//! `antiproof openings`: The table of White's 20 first moves (`table`
//! is a hidden alias, the command's former name).

use super::EXIT_OK;
use crate::openings::{Certified, Combined, TableRow, scan_certified, table, verify_entry};
use crate::vocab::RuleSet;
use clap::Args;
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `antiproof openings`.
#[derive(Args, Debug)]
pub struct OpeningsArgs {
    /// Print a JSON array of 20 objects (move, uci, published, reply, year,
    /// source, note, certified, proven_here).
    #[arg(long, conflicts_with = "long")]
    json: bool,
    /// Every move in full: its source, the rule sets, each certificate
    /// (the table gives counts).
    #[arg(long)]
    long: bool,
    /// Directory of this project's certified proofs (`*.tree`, `*.tree.zst` or
    /// `*.tree.bz2` files with `*.tree`-named `*.json` sidecars), which must exist [default: proofs, read if it
    /// exists].
    #[arg(long)]
    proofs: Option<PathBuf>,
    /// Run the independent checker on every proof file now, under each
    /// rule set its sidecar claims, and show what the file and the checker
    /// say (line, winner, size, rule sets) instead of the sidecar; a
    /// sidecar claiming otherwise is named.
    #[arg(long)]
    verify: bool,
}

/// A certificate's rule set, winner, size and verdict, in words.
fn details(c: &Certified) -> Vec<String> {
    let mut parts = vec![c.rule_set.clone()];
    if let Some(w) = &c.winner {
        parts.push(format!("{w} wins"));
    }
    if let Some(p) = c.positions {
        parts.push(format!("{} positions", crate::web::view::group(p)));
    }
    parts.push(match c.verified {
        Some(true) if c.checked_now => "verified now".into(),
        Some(true) => "verified".into(),
        Some(false) if c.checked_now => "NOT certified by the checker now".into(),
        Some(false) => "NOT verified".into(),
        None => "verification not recorded".into(),
    });
    if !c.sidecar_disagrees.is_empty() {
        parts.push("its sidecar DISAGREES (see below)".into());
    }
    parts
}

fn describe(c: &Certified) -> String {
    format!("{} ({})", c.line, details(c).join(", "))
}

/// The certificates of a row, those of one line split into parts (files
/// whose lines go past the line's first two moves, made under one rule
/// set for one winner) as one entry.
fn describe_all(certs: &[Certified]) -> Vec<String> {
    let key = |c: &Certified| {
        let two: Vec<&str> = c.line.split_whitespace().take(2).collect();
        (
            two.join(" "),
            c.rule_set.clone(),
            c.winner.clone(),
            c.verified,
            c.sidecar_disagrees.is_empty(),
        )
    };
    let mut groups: Vec<(_, Vec<&Certified>)> = Vec::new();
    for c in certs {
        let k = key(c);
        // A certificate of the line itself (two moves or fewer) is never
        // a part.
        let part = c.line.split_whitespace().nth(2).is_some();
        match groups
            .iter_mut()
            .find(|g| part && g.0 == k && g.1[0].line != k.0)
        {
            Some(g) => g.1.push(c),
            None => groups.push((k, vec![c])),
        }
    }
    groups
        .into_iter()
        .map(|(k, group)| {
            if group.len() == 1 {
                return describe(group[0]);
            }
            let mut merged = group[0].clone();
            merged.positions = group.iter().map(|c| c.positions).sum();
            merged.checked_now = group.iter().all(|c| c.checked_now);
            format!(
                "{} ... ({} files, {})",
                k.0,
                group.len(),
                details(&merged).join(", ")
            )
        })
        .collect()
}

/// The "proven here" column: the move's result as the certificates prove
/// it together, under which rule sets; else how many replies they prove.
fn proven_here(p: &Combined) -> String {
    let winner = p.winner.as_deref().unwrap_or("?");
    let sets = |list: &[String]| {
        if list.len() == RuleSet::ALL.len() {
            "all six rule sets".to_string()
        } else {
            list.join(", ")
        }
    };
    if !p.proven_under.is_empty() {
        return format!("{winner} wins: {}", sets(&p.proven_under));
    }
    if p.replies == 0 {
        return "-".to_string();
    }
    let after = p
        .winner_move
        .as_ref()
        .map_or(String::new(), |m| format!(" to {m}"));
    format!(
        "{winner}: {} of {} replies{after} ({})",
        p.replies_proven,
        p.replies,
        sets(&p.replies_under)
    )
}

/// The widest line `openings` prints, table, notes and `--long` alike
/// (a word longer than that, a URL, stands on a line of its own).
pub const WIDTH: usize = 100;

/// A list of rule sets in a table cell: `all six`, else how many.
fn sets_short(list: &[String]) -> String {
    if list.len() == RuleSet::ALL.len() {
        "all six".to_string()
    } else {
        format!("{} of {}", list.len(), RuleSet::ALL.len())
    }
}

/// The table's "proven here" and "rule sets" cells: the move's result
/// and under how many rule sets, else how many replies are proven (the
/// rule sets are named by `--long`).
fn proven_cells(p: &Combined) -> (String, String) {
    let winner = p.winner.as_deref().unwrap_or("?");
    if !p.proven_under.is_empty() {
        return (format!("{winner} wins"), sets_short(&p.proven_under));
    }
    if p.replies == 0 {
        return ("-".into(), "-".into());
    }
    let after = p
        .winner_move
        .as_ref()
        .map_or(String::new(), |m| format!(" to {m}"));
    (
        format!(
            "{winner}: {} of {} replies{after}",
            p.replies_proven, p.replies
        ),
        sets_short(&p.replies_under),
    )
}

/// The table's "certified here" cell: how many files and positions (each
/// file is listed by `--long`), or how many files are not verified.
fn certified_cell(certs: &[Certified]) -> String {
    if certs.is_empty() {
        return "-".into();
    }
    let files = match certs.len() {
        1 => "1 file".to_string(),
        n => format!("{n} files"),
    };
    let unverified = certs.iter().filter(|c| c.verified != Some(true)).count();
    if unverified > 0 {
        return format!("{files}, {unverified} not verified");
    }
    let positions: u64 = certs.iter().filter_map(|c| c.positions).sum();
    if positions == 0 {
        return files;
    }
    format!("{files}, {} positions", crate::web::view::group(positions))
}

/// `text` filled into lines of at most `width` columns at word breaks:
/// the first line starts with `first`, the others with `indent` spaces.
fn wrap(first: &str, indent: usize, text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = first.to_string();
    // Whether the next word starts the line (no space before it).
    let mut empty = first.is_empty() || first.ends_with(' ');
    for word in text.split_whitespace() {
        if !empty && line.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut line));
            line = " ".repeat(indent);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    lines.push(line);
    lines
}

/// A line cut to [`WIDTH`] columns (the last three `...`): the table's
/// last resort, for a cell past what its column is laid out for.
fn fit(line: String) -> String {
    if line.chars().count() <= WIDTH {
        return line;
    }
    let mut s: String = line.chars().take(WIDTH - 3).collect();
    s.push_str("...");
    s
}

/// The table: one row a move, within [`WIDTH`] columns.
fn write_table(out: &mut impl Write, rows: &[TableRow]) -> std::io::Result<()> {
    let header = [
        "move",
        "published",
        "reply",
        "year",
        "proven here",
        "rule sets",
        "certified here",
    ];
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|r| {
            let (proven, sets) = proven_cells(&r.proven_here);
            [
                r.san.clone(),
                r.published.name().to_string(),
                r.reply.clone().unwrap_or_else(|| "-".into()),
                r.year.map_or("-".to_string(), |y| y.to_string()),
                proven,
                sets,
                certified_cell(&r.certified),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.len());
        }
    }
    let line = |row: &[&str]| {
        let mut s = String::new();
        for (i, (c, w)) in row.iter().zip(widths).enumerate() {
            if i + 1 == row.len() {
                s.push_str(c);
            } else {
                let _ = write!(s, "{c:<w$} ");
            }
        }
        fit(s)
    };
    writeln!(out, "{}", line(&header))?;
    for row in &cells {
        let row: Vec<&str> = row.iter().map(String::as_str).collect();
        writeln!(out, "{}", line(&row))?;
    }
    Ok(())
}

/// The replies not proven yet of each move proven in part, one wrapped
/// paragraph a move.
fn write_missing(out: &mut impl Write, rows: &[TableRow]) -> std::io::Result<()> {
    let partial: Vec<&TableRow> = rows
        .iter()
        .filter(|r| r.proven_here.proven_under.is_empty() && r.proven_here.replies > 0)
        .collect();
    if partial.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    for r in partial {
        let p = &r.proven_here;
        let first = format!(
            "1.{}{}: replies not proven here yet:",
            r.san,
            p.winner_move
                .as_ref()
                .map_or(String::new(), |m| format!(" {m}"))
        );
        for l in wrap(&first, 4, &p.missing.join(" "), WIDTH) {
            writeln!(out, "{l}")?;
        }
    }
    Ok(())
}

/// `--long`: every move as a block (published status and source, what
/// is proven here under which rule sets, every certificate), wrapped to
/// [`WIDTH`] columns.
fn write_long(out: &mut impl Write, rows: &[TableRow]) -> std::io::Result<()> {
    const LABEL: usize = 18;
    let field = |out: &mut dyn Write, label: &str, text: &str| -> std::io::Result<()> {
        for l in wrap(&format!("  {label:<w$}", w = LABEL - 2), LABEL, text, WIDTH) {
            writeln!(out, "{}", l.trim_end())?;
        }
        Ok(())
    };
    for (i, r) in rows.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        let mut head = format!("1.{}: published {}", r.san, r.published.name());
        if let Some(y) = r.year {
            let _ = write!(head, " ({y})");
        }
        if let Some(reply) = &r.reply {
            let _ = write!(head, ", Black's reply {reply}");
        }
        writeln!(out, "{head}")?;
        field(out, "proven here:", &proven_here(&r.proven_here))?;
        let p = &r.proven_here;
        if p.proven_under.is_empty() && !p.missing.is_empty() {
            field(out, "not proven yet:", &p.missing.join(" "))?;
        }
        let certs = describe_all(&r.certified);
        if certs.is_empty() {
            field(out, "certified here:", "-")?;
        }
        for (k, c) in certs.iter().enumerate() {
            field(out, if k == 0 { "certified here:" } else { "" }, c)?;
        }
        for (k, l) in r.published_lines.iter().enumerate() {
            let certified = if !l.certified_by.is_empty() {
                format!("certified here ({})", l.certified_by.join(", "))
            } else if !l.proven_under.is_empty() {
                format!(
                    "certified here, by the files of its answers ({})",
                    l.proven_under.join(", ")
                )
            } else if let Some(a) = &l.answers {
                format!(
                    "partly: {} of the {} answers to {} certified here ({}); not yet: {}",
                    a.certified,
                    a.of,
                    a.answering,
                    a.under.join(", "),
                    a.missing.join(" ")
                )
            } else {
                "not certified here".to_string()
            };
            field(
                out,
                if k == 0 { "published lines:" } else { "" },
                &format!("1.{} then {} [{}]: {certified}", l.line, l.guide, l.source),
            )?;
        }
        field(out, "source:", &r.source)?;
        if let Some(n) = &r.note {
            field(out, "note:", n)?;
        }
    }
    Ok(())
}

/// Runs `antiproof openings`.
pub fn run(args: OpeningsArgs) -> anyhow::Result<u8> {
    let mut certified = match &args.proofs {
        Some(dir) => scan_certified(dir)?,
        // The default: none certified when run away from the project.
        None if Path::new("proofs").is_dir() => scan_certified(Path::new("proofs"))?,
        None => Vec::new(),
    };
    if args.verify {
        for c in &mut certified {
            verify_entry(c)?;
        }
    }
    let rows = table(&certified);
    let mut out = crate::cli::out::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&rows)?)?;
        return Ok(EXIT_OK);
    }
    if args.long {
        write_long(&mut out, &rows)?;
    } else {
        write_table(&mut out, &rows)?;
        write_missing(&mut out, &rows)?;
        writeln!(out)?;
        for l in wrap(
            "",
            0,
            "Proven here: what the certificates prove together; rule sets: of the six (international, fics, joint, each with or without +fifty). Each certificate, the rule sets and the sources: --long; every field: --json.",
            WIDTH,
        ) {
            writeln!(out, "{l}")?;
        }
    }
    let disagreeing: Vec<&Certified> = certified
        .iter()
        .filter(|c| !c.sidecar_disagrees.is_empty())
        .collect();
    if !disagreeing.is_empty() {
        writeln!(out)?;
        for c in disagreeing {
            for d in &c.sidecar_disagrees {
                writeln!(out, "{}: the sidecar disagrees with the file: {d}", c.file)?;
            }
        }
    }
    writeln!(out)?;
    writeln!(
        out,
        "Certified proofs read from {}/ ({} files).",
        args.proofs
            .as_deref()
            .unwrap_or(Path::new("proofs"))
            .display(),
        certified.len()
    )?;
    out.flush()?;
    Ok(EXIT_OK)
}
