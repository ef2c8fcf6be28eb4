//! Taking a job's result in: nothing from a worker is trusted. The result
//! file must parse and answer this very job (id, root, rule set, winner:
//! [`ResultFile::read_for`]); a proven result's certificate must be a
//! win-tree file rooted at the job's position (no prolog) that the
//! independent checker (`crate::check::check_tree`, shakmaty's rules)
//! certifies for the job's winner under the job's rules. Only then are its
//! positions turned into store records ([`records_of`]): a win with the
//! file's move where the winner moves, a loss where the other side does,
//! as the prover's own writer stores them, so `export` and `verify --db`
//! read the merged proof like any other.
//!
//! Every refusal is a [`Rejected`] naming its reason.

use super::job::{Job, JobOutcome, ResultFile, result_path};
use crate::check::{self, LeafTables, TreeOptions, Verdict};
use crate::rules::{Color, Position, Rules, move_of_code};
use crate::store::{FLAG_TABLES, Key, Record, StoreError, StoreReader, WinLoss};
use crate::vocab::MoveCode;
use crate::wintree::{NodeKind, WinTree};
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// Why a job's result was refused.
#[derive(Debug)]
pub enum Rejected {
    /// The worker exited without writing a result (killed, crashed).
    NoResult(String),
    /// The result file does not parse, or answers another job, position,
    /// rule set or winner.
    Malformed(String),
    /// The certificate is missing or not a win-tree file.
    BadCertificate(String),
    /// The checker did not certify the certificate.
    WrongProof(String),
}

impl Rejected {
    /// A short name of the reason (`no-result`, `malformed`,
    /// `bad-certificate`, `wrong-proof`).
    pub fn kind(&self) -> &'static str {
        match self {
            Rejected::NoResult(_) => "no-result",
            Rejected::Malformed(_) => "malformed",
            Rejected::BadCertificate(_) => "bad-certificate",
            Rejected::WrongProof(_) => "wrong-proof",
        }
    }
}

impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = match self {
            Rejected::NoResult(m)
            | Rejected::Malformed(m)
            | Rejected::BadCertificate(m)
            | Rejected::WrongProof(m) => m,
        };
        write!(f, "{}: {m}", self.kind())
    }
}

/// A result that passed every check.
pub struct Accepted {
    /// The result file.
    pub result: ResultFile,
    /// Records to store (proven results only; positions the store already
    /// holds are left out).
    pub records: Vec<(Key, Record)>,
    /// Seconds the checker took.
    pub check_s: f64,
}

/// Reads, checks and (when proven) certifies the result of the job in
/// `job_path`. `tables`: the endgame tables the checker may score leaves
/// of 4 men or fewer with.
pub fn take_result(
    job_path: &Path,
    job: &Job,
    reader: &StoreReader,
    tables: Option<&Arc<LeafTables>>,
) -> Result<Result<Accepted, Rejected>, StoreError> {
    let rp = result_path(job_path);
    if !rp.exists() {
        return Ok(Err(Rejected::NoResult(format!(
            "the worker wrote no {}",
            rp.display()
        ))));
    }
    let result = match ResultFile::read_for(&rp, job) {
        Ok(r) => r,
        Err(e) => return Ok(Err(Rejected::Malformed(e.to_string()))),
    };
    if result.outcome != JobOutcome::Proven {
        return Ok(Ok(Accepted {
            result,
            records: Vec::new(),
            check_s: 0.0,
        }));
    }
    let name = result
        .tree
        .clone()
        .expect("read_for: a proven result names its tree");
    let dir = job_path.parent().unwrap_or(Path::new("."));
    let tree_file = dir.join(&name);
    let tree = match WinTree::open(&tree_file) {
        Ok(t) => t,
        Err(e) => {
            return Ok(Err(Rejected::BadCertificate(format!(
                "{}: {e}",
                tree_file.display()
            ))));
        }
    };
    if !tree.prolog().is_empty() {
        return Ok(Err(Rejected::BadCertificate(format!(
            "{}: the certificate has a prolog; a job's certificate is rooted at its position",
            tree_file.display()
        ))));
    }
    let t0 = std::time::Instant::now();
    let report = check::check_tree(&tree, &check_options(job, tables));
    let check_s = t0.elapsed().as_secs_f64();
    match report.verdict {
        Verdict::Certified => {}
        Verdict::Rejected(r) => {
            return Ok(Err(Rejected::WrongProof(format!(
                "{}: the checker rejects it: {r}",
                tree_file.display()
            ))));
        }
        Verdict::NotCertified { table_leaves } => {
            return Ok(Err(Rejected::WrongProof(format!(
                "{}: {table_leaves} leaves rest on endgame tables the checker could not certify",
                tree_file.display()
            ))));
        }
        Verdict::Open { open_leaves } => {
            return Ok(Err(Rejected::WrongProof(format!(
                "{}: {open_leaves} leaves are not finished games",
                tree_file.display()
            ))));
        }
    }
    match records_of(&tree, &job.root, job.rules, job.winner, reader)? {
        Ok(records) => Ok(Ok(Accepted {
            result,
            records,
            check_s,
        })),
        Err(why) => Ok(Err(Rejected::WrongProof(format!(
            "{}: {why}",
            tree_file.display()
        )))),
    }
}

/// The checker's options for a job's certificate: rooted at the job's
/// position, its winner and rules, one thread (the workers have the
/// cores).
fn check_options(job: &Job, tables: Option<&Arc<LeafTables>>) -> TreeOptions {
    let start = job
        .file
        .root_fen
        .parse::<shakmaty::fen::Fen>()
        .ok()
        .and_then(|f| crate::check::game::position_from_fen(f).ok());
    TreeOptions {
        rule_set: job.rules.into(),
        winner: Some(match job.winner {
            Color::White => shakmaty::Color::White,
            Color::Black => shakmaty::Color::Black,
        }),
        start,
        threads: Some(1),
        line: Vec::new(),
        tables: tables.cloned(),
        open_leaves: false,
        open_listed: 0,
        progress: None,
        // Jobs run without the fifty-move rule (`prove --jobs` refuses it),
        // so no clock is read.
        start_clock: 0,
    }
}

/// The store records of a certified win-tree file rooted at `root`: every
/// position with children; sizes are the file's subtree sizes with
/// transpositions counted again (an upper bound). Positions `reader`
/// already holds are left out (their stored proofs stay as they are).
/// `Err`: the file disagrees with our rules (a move the checker took is
/// not legal here), which should not happen.
pub fn records_of(
    tree: &WinTree,
    root: &Position,
    rules: Rules,
    winner: Color,
    reader: &StoreReader,
) -> Result<Result<Vec<(Key, Record)>, String>, StoreError> {
    // Post-order over resolved slots: (size, rests on tables) per slot.
    let mut done: HashMap<u32, (u64, bool)> = HashMap::new();
    let mut out = Vec::new();
    let resolve = |s: u32| tree.resolve(s).map_err(|e| e.to_string());
    let root_slot = match resolve(0) {
        Ok(s) => s,
        Err(e) => return Ok(Err(e)),
    };
    // (slot, position, children expanded?)
    let mut stack: Vec<(u32, Position, bool)> = vec![(root_slot, *root, false)];
    while let Some((slot, pos, expanded)) = stack.pop() {
        if done.contains_key(&slot) && !expanded {
            continue;
        }
        let node = match tree.node(slot) {
            Ok(n) => n,
            Err(e) => return Ok(Err(e.to_string())),
        };
        if node.kind != NodeKind::Inner {
            let tables = pos.outcome(rules).is_none();
            done.insert(slot, (1, tables));
            continue;
        }
        let kids: Vec<(u32, MoveCode)> = match tree.children(slot) {
            Ok(c) => match c
                .map(|k| k.map(|k| (k.index, k.mv.unwrap_or(MoveCode::NULL))))
                .collect::<Result<Vec<_>, _>>()
            {
                Ok(v) => v,
                Err(e) => return Ok(Err(e.to_string())),
            },
            Err(e) => return Ok(Err(e.to_string())),
        };
        let mut children = Vec::with_capacity(kids.len());
        for (index, code) in &kids {
            let Some(m) = move_of_code(&pos, *code) else {
                return Ok(Err(format!(
                    "move {} at {} is not legal",
                    code.uci(),
                    pos.to_fen()
                )));
            };
            let c = match resolve(*index) {
                Ok(c) => c,
                Err(e) => return Ok(Err(e)),
            };
            children.push((c, pos.play(m), m.watkins_code()));
        }
        if !expanded {
            stack.push((slot, pos, true));
            for (c, p, _) in &children {
                if !done.contains_key(c) {
                    stack.push((*c, *p, false));
                }
            }
            continue;
        }
        let mut size = 1u64;
        let mut tables = false;
        for (c, _, _) in &children {
            let (s, t) = done.get(c).copied().unwrap_or((1, false));
            size = size.saturating_add(s);
            tables |= t;
        }
        done.insert(slot, (size, tables));
        let key = pos.pack().0;
        if reader.get(rules, &key)?.is_some() {
            continue;
        }
        let win = pos.turn() == winner;
        out.push((
            key,
            Record {
                verdict: if win { WinLoss::Win } else { WinLoss::Loss },
                flags: if tables { FLAG_TABLES } else { 0 },
                mv: if win { children[0].2 } else { MoveCode::NONE },
                size,
            },
        ));
    }
    Ok(Ok(out))
}
