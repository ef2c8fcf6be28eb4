//! What `prove` reports when a run ends: the JSON summary (`--json`) and
//! the text one, with the process's CPU time, peak memory and revision.

use crate::search::{MoveStanding, Progress, ProveReport, ProveResult, Standing};
use serde::Serialize;
use std::io::{self, Write};

/// The JSON summary of a run.
#[derive(Serialize)]
pub(super) struct Summary {
    pub(super) result: &'static str,
    /// Whether the independent checker can certify the result: a proof
    /// can (`antiproof verify`); a disproof cannot (it rests on the
    /// search alone), nor can a stop.
    pub(super) certifiable: bool,
    pub(super) winner: String,
    pub(super) winning_move: Option<String>,
    pub(super) winning_move_uci: Option<String>,
    pub(super) nodes: u64,
    pub(super) generated: u64,
    pub(super) nodes_per_second: f64,
    /// Search threads on the one transposition table (`--jobs N`).
    pub(super) threads: usize,
    /// Of `nodes`, those of the threads other than the first.
    pub(super) other_threads_nodes: u64,
    /// Of `nodes`, the busiest thread's (all of them with one thread).
    pub(super) span_nodes: u64,
    /// The root's proof and disproof numbers when the run ended
    /// (4294967295 is infinite: 0 and that for a proof).
    pub(super) root_pn: u32,
    pub(super) root_dn: u32,
    /// A stopped search: the root's moves with their numbers and replies
    /// proven, in the search's order, and its principal line (the
    /// most-proving path through the table).
    pub(super) root_moves: Option<Vec<MoveStanding>>,
    pub(super) principal_line: Option<Vec<MoveStanding>>,
    /// A stopped search: the principal line's longest stretch without a
    /// capture or pawn move, in plies ([`Standing::line_quiet_plies`]).
    pub(super) principal_line_quiet_plies: Option<u32>,
    pub(super) proof_positions: u64,
    /// Whether `proof_positions` is exact (a walk of the stored proof to
    /// its end); false past the walk's limit: an upper bound.
    pub(super) proof_positions_exact: bool,
    pub(super) proof_depth: u32,
    pub(super) records_written: u64,
    pub(super) resumed_table: bool,
    pub(super) store_records: u64,
    pub(super) store_bytes: u64,
    /// The transposition table's budget (`--memory`): the most it may
    /// take, allocated as it fills, not memory used.
    pub(super) tt_bytes: u64,
    /// A stopped search: where it saved its transposition table for the
    /// next run (`DB.table`), and the file's size.
    pub(super) saved_tt: Option<String>,
    pub(super) saved_tt_bytes: Option<u64>,
    /// With `--state`: the state file, what its last save held, and the
    /// table entries the search started from (0 unless restored on a
    /// machine without the saved table).
    pub(super) state: Option<String>,
    pub(super) state_bytes: Option<u64>,
    pub(super) state_records: Option<u64>,
    pub(super) state_tt_entries: Option<u64>,
    pub(super) state_restored_tt_entries: u64,
    /// Bytes of the in-memory filter of the store's positions (about 2.4
    /// a record).
    pub(super) filter_bytes: u64,
    pub(super) peak_memory_bytes: Option<u64>,
    pub(super) time_s: f64,
    /// Seconds of the pass that takes smaller proofs (part of `time_s`).
    pub(super) shrink_s: f64,
    /// Proof positions before that pass, and records it rewrote.
    pub(super) shrink_before: Option<u64>,
    pub(super) shrink_rewritten: Option<u64>,
    /// The pass that proves the winner's other moves: searches run,
    /// alternatives proven, nodes expanded (not in `nodes`), records
    /// rewritten.
    pub(super) alternatives: Option<crate::search::AlternativeFigures>,
    /// Seconds of the final extraction of the root's proof (with its
    /// writes; part of `time_s`).
    pub(super) extract_s: f64,
    pub(super) cpu_s: Option<f64>,
    /// The stalemate rule (`international`, `fics`, `joint`).
    pub(super) rules: String,
    /// Whether the fifty-move rule was on.
    pub(super) fifty_move_rule: bool,
    /// The whole rule set (`international+fifty`).
    pub(super) rule_set: String,
    /// Under the fifty-move rule: the most plies from the root to the first
    /// capture, pawn move or game end along any line of the stored proof.
    pub(super) proof_need: Option<u32>,
    pub(super) root_fen: String,
    pub(super) line: Vec<String>,
    pub(super) db: String,
    pub(super) revision: String,
    /// The tie-break seed (`--seed`; 0: the default order).
    pub(super) seed: u64,
    /// `--clock-init D` (0: off).
    pub(super) clock_init: u32,
    /// The endgame-table directory (`--tables`), if any.
    pub(super) tables: Option<String>,
    /// With `--tables` at a root of 4 men or fewer: its value in the
    /// table (`win in 66 for white (to move)`), which the search's one
    /// ply to the table positions below confirms.
    pub(super) root_table: Option<String>,
}

/// A proof or disproof number, `inf` for infinity.
pub(super) fn fmt_pn(v: u32) -> String {
    if v == u32::MAX {
        "inf".into()
    } else {
        v.to_string()
    }
}

/// The text summary of a run (without `--json`).
pub(super) fn print_summary(out: &mut impl Write, s: &Summary, r: &ProveReport) -> io::Result<()> {
    let what = match r.result {
        ProveResult::Proven => format!("proven: {} wins", s.winner),
        ProveResult::Disproven => format!("disproven: {} cannot force a win", s.winner),
        ProveResult::Stopped => {
            "stopped by a limit or a signal (run the same command again to continue)".to_string()
        }
    };
    writeln!(out, "result:          {what}")?;
    if r.result == ProveResult::Disproven {
        writeln!(
            out,
            "note:            disproofs are not certified by the checker (only proofs are)"
        )?;
    }
    let line = if s.line.is_empty() {
        "(start)".to_string()
    } else {
        s.line.join(" ")
    };
    writeln!(out, "line:            {line}")?;
    if let Some(m) = &s.winning_move {
        writeln!(out, "winning move:    {m}")?;
    }
    writeln!(
        out,
        "nodes:           {}{}",
        s.nodes,
        if s.resumed_table {
            " (resumed from the saved transposition table)"
        } else {
            ""
        }
    )?;
    if s.threads > 1 {
        writeln!(
            out,
            "nodes/s:         {:.0} ({} search threads)",
            s.nodes_per_second, s.threads
        )?;
    } else {
        writeln!(out, "nodes/s:         {:.0}", s.nodes_per_second)?;
    }
    if r.result == ProveResult::Stopped {
        writeln!(
            out,
            "root pn / dn:    {} / {}",
            fmt_pn(s.root_pn),
            fmt_pn(s.root_dn)
        )?;
        print_standing(out, s)?;
    }
    if r.result == ProveResult::Proven {
        if s.proof_positions_exact {
            writeln!(out, "proof positions: {}", s.proof_positions)?;
        } else {
            writeln!(
                out,
                "proof positions: at most {} (more than {} distinct: not walked to the end)",
                s.proof_positions,
                crate::search::WALK_LIMIT
            )?;
        }
        writeln!(out, "proof depth:     {} plies", s.proof_depth)?;
        if let Some(a) = &s.alternatives {
            writeln!(
                out,
                "smaller proof:   {} searches, {} proven, {} nodes; {} moves changed{}",
                a.searches,
                a.proven,
                a.nodes,
                a.rewritten,
                if a.stopped {
                    " (stopped early: the proof is whole, run again to go on)"
                } else {
                    ""
                }
            )?;
        }
    }
    writeln!(
        out,
        "store:           {} ({} records, {} written now, {} bytes)",
        s.db, s.store_records, s.records_written, s.store_bytes
    )?;
    if let (Some(path), Some(bytes)) = (&s.saved_tt, s.saved_tt_bytes) {
        writeln!(
            out,
            "saved table:     {path} ({:.1} MB): the transposition table, for the next run of \
             this line on this store to resume from; removed once the line is settled, \
             replaced by a stopped run of another line (delete it to start afresh)",
            bytes as f64 / 1e6
        )?;
    }
    if let Some(path) = &s.state {
        let last = match (s.state_records, s.state_tt_entries, s.state_bytes) {
            (Some(r), Some(t), Some(b)) => format!(
                "last saved with {r} records and {t} table entries, {:.1} MB",
                b as f64 / 1e6
            ),
            _ => "not saved during this run".into(),
        };
        writeln!(
            out,
            "run state:       {path} ({last}; the search started from {} of its entries): \
             what a fresh machine resumes from",
            s.state_restored_tt_entries
        )?;
    }
    if let Some(p) = s.peak_memory_bytes {
        writeln!(
            out,
            "peak memory:     {:.1} MB resident at most (stored-position filter {:.2} MB)",
            p as f64 / 1e6,
            s.filter_bytes as f64 / 1e6
        )?;
    }
    writeln!(
        out,
        "table budget:    {:.1} MB (--memory: the most the transposition table may take, \
         allocated as it fills)",
        s.tt_bytes as f64 / 1e6
    )?;
    match s.cpu_s {
        Some(c) => writeln!(out, "time:            {:.3} s ({c:.3} s CPU)", s.time_s)?,
        None => writeln!(out, "time:            {:.3} s", s.time_s)?,
    }
    let rules = if s.fifty_move_rule {
        format!("{} (with the fifty-move rule)", s.rule_set)
    } else {
        s.rules.clone()
    };
    writeln!(out, "rules:           {rules}")?;
    if let Some(n) = s.proof_need {
        writeln!(
            out,
            "fifty-move need: {n} plies to the first capture or pawn move on the longest line"
        )?;
    }
    writeln!(out, "root FEN:        {}", s.root_fen)?;
    if s.seed != 0 {
        writeln!(out, "seed:            {} (tie-break order)", s.seed)?;
    }
    if s.clock_init != 0 {
        writeln!(
            out,
            "clock init:      {} (a new position's proof number + its half-move clock / {})",
            s.clock_init, s.clock_init
        )?;
    }
    if let Some(t) = &s.tables {
        writeln!(out, "endgame tables:  {t} (positions of 4 men or fewer)")?;
    }
    if let Some(v) = &s.root_table {
        writeln!(out, "root in table:   {v}")?;
    }
    writeln!(out, "revision:        {}", s.revision)?;
    Ok(())
}

/// A stopped run's best three root moves and principal line, as the
/// job-level summary gives its top tree's.
fn print_standing(out: &mut impl Write, s: &Summary) -> io::Result<()> {
    if let Some(moves) = &s.root_moves
        && !moves.is_empty()
    {
        writeln!(out, "best moves:      {}", best_moves(moves))?;
    }
    if let Some(line) = &s.principal_line
        && !line.is_empty()
    {
        writeln!(out, "principal line:  {}", principal_line(line))?;
    }
    if let Some(hint) = wander_hint(s) {
        writeln!(out, "hint:            {hint}")?;
    }
    Ok(())
}

/// A principal line with at least this many plies without a capture or
/// pawn move gets [`wander_hint`]: more than most proofs need (the
/// certificates in `proofs/` checked for it stay within 11, though the
/// one of 1.e3 Nc6 ... Na5, with its table endings expanded, reaches 72),
/// and fewer than the 100 of the fifty-move rule.
const WANDER_HINT_PLIES: u32 = 40;

/// What to try when a stopped search's principal line wanders among moves
/// that change nothing (1.e3 Nc6 2.Ba6 bxa6 3.a4 Na5 under international
/// rules: root proof number 5 for 845 M nodes, its line shuffling rooks
/// round a lone king; proven in 18.6 M nodes with endgame tables under the
/// fifty-move rule): the tables and the rule, whichever the run lacks, and
/// with both, `--clock-init` (3...Nb8: two rooks and a pawn against king
/// and pawn, beyond the tables, proven with it from where the plain search
/// had stood for hours).
fn wander_hint(s: &Summary) -> Option<String> {
    let quiet = s.principal_line_quiet_plies?;
    let both = s.tables.is_some() && s.fifty_move_rule;
    if quiet < WANDER_HINT_PLIES || (both && s.clock_init != 0) {
        return None;
    }
    let mut tries = Vec::new();
    if both {
        tries.push(
            "--clock-init 4 makes a new position's proof number its half-move clock over 4 \
             higher, so the search prefers captures and pawn moves (a heuristic: it helps some \
             endings and slows others)",
        );
    }
    if s.tables.is_none() {
        tries.push(
            "--tables DIR (`antiproof tables build --dir DIR`, of the same rule set) scores every \
             position of 4 men or fewer",
        );
    }
    if !s.fifty_move_rule {
        tries.push(
            "under --fifty-move-rule 100 such plies end a line as a draw, and a proof under the \
             rule holds without it too (`verify` checks it under either)",
        );
    }
    Some(format!(
        "the principal line goes {quiet} plies without a capture or pawn move; a search can \
         wander among such moves for ever: {}",
        tries.join("; ")
    ))
}

/// The first three of `moves`, each with its state, numbers and replies
/// proven (left out where it has none), `; ` between them: a plain
/// search's root moves and the job-level master's alike, `Ba6 (open, pn
/// 533 dn 33162, 1 of 2 replies proven)`.
pub(super) fn best_moves(moves: &[MoveStanding]) -> String {
    let best: Vec<String> = moves
        .iter()
        .take(3)
        .map(|m| {
            let replies = match m.replies.zip(m.replies_proven) {
                Some((n, p)) if n > 0 => format!(", {p} of {n} replies proven"),
                _ => String::new(),
            };
            format!(
                "{} ({}, pn {} dn {}{replies})",
                m.san,
                m.state,
                fmt_pn(m.pn),
                fmt_pn(m.dn)
            )
        })
        .collect();
    best.join("; ")
}

/// A principal line's moves, then its last node's state and numbers: a
/// plain search's and the job-level master's alike, `b6 Ke2 a5 (its last
/// node open, pn 80 dn 2911)`.
pub(super) fn principal_line(line: &[MoveStanding]) -> String {
    let Some(last) = line.last() else {
        return String::new();
    };
    let moves: Vec<&str> = line.iter().map(|m| m.san.as_str()).collect();
    format!(
        "{} (its last node {}, pn {} dn {})",
        moves.join(" "),
        last.state,
        fmt_pn(last.pn),
        fmt_pn(last.dn)
    )
}

/// One line on where a running search stands (`--log-every`): time,
/// nodes and rate, the root's numbers, the table's fill, the best moves
/// and the principal line.
pub(super) fn standing_line(p: &Progress, st: &Standing) -> String {
    let secs = p.elapsed.as_secs();
    let mut s = format!(
        "after {}h{:02}m{:02}s: {} nodes ({:.2} M nodes/s), root pn {} dn {}, table {} of {} entries",
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        p.nodes,
        p.nodes as f64 / p.elapsed.as_secs_f64().max(1e-9) / 1e6,
        fmt_pn(p.root_pn),
        fmt_pn(p.root_dn),
        p.tt_used,
        p.tt_capacity
    );
    if !st.root_moves.is_empty() {
        s.push_str(&format!("; best moves: {}", best_moves(&st.root_moves)));
    }
    if !st.principal_line.is_empty() {
        s.push_str(&format!(
            "; principal line: {}",
            principal_line(&st.principal_line)
        ));
    }
    s
}

/// User plus system CPU time of this process and its waited-for children
/// (the local workers).
pub(super) fn cpu_seconds() -> Option<f64> {
    let mut total = 0.0;
    for who in [libc::RUSAGE_SELF, libc::RUSAGE_CHILDREN] {
        // SAFETY: getrusage writes into the zeroed struct we own.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above; both `who` values are valid.
        if unsafe { libc::getrusage(who, &mut ru) } != 0 {
            return None;
        }
        let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
        total += t(ru.ru_utime) + t(ru.ru_stime);
    }
    Some(total)
}

/// A field of /proc/self/status in kB.
pub(super) fn read_status_kb(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    line[field.len()..].split_whitespace().next()?.parse().ok()
}

/// The git revision this binary was built from (`+dirty` with uncommitted
/// changes; `unknown` outside a checkout), recorded by `build.rs`.
pub(super) fn revision() -> String {
    env!("ANTIPROOF_REVISION").to_string()
}
