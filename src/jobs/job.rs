//! The job protocol's two files, JSON with a format name and a version:
//!
//! * a **job** (`NAME.json`): the root position (FEN, and the line that
//!   led there for people), the rule set, the side to prove a win for,
//!   the budgets (nodes, seconds, transposition-table bytes) and the
//!   endgame-table directory, if any;
//! * its **result** (`NAME.json.result.json`, [`result_path`]): proven,
//!   disproven or unresolved, the root's proof and disproof numbers, the
//!   figures, and when proven the name of the win-tree certificate
//!   (`NAME.json.tree`, [`tree_path`]) written next to it before the
//!   result.
//!
//! Any engine may run a job: the master trusts nothing in a result (see
//! `super::merge`). Reading either file names the file and the field that
//! is wrong ([`JobFileError`]).

use crate::rules::{Color, Position, Rules};
use crate::search::MAX_THREADS;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// The `format` of a job file.
pub const JOB_FORMAT: &str = "antiproof-job";
/// The `format` of a result file.
pub const RESULT_FORMAT: &str = "antiproof-job-result";
/// The protocol version both files carry.
pub const VERSION: u32 = 1;

/// The budgets of one job.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    /// Nodes the df-pn search may expand.
    pub nodes: u64,
    /// Seconds it may run (wall clock).
    pub time_s: f64,
    /// Bytes of its transposition table.
    pub memory_bytes: u64,
    /// Threads of its df-pn search on that table (optional, default 1;
    /// at most [`MAX_THREADS`]): where the job has a table of its own (not a table
    /// shared by the jobs of one machine).
    #[serde(default = "one_thread", skip_serializing_if = "is_one_thread")]
    pub threads: u32,
}

fn one_thread() -> u32 {
    1
}

/// Whether a job's `threads` is the default one (left out of its files
/// and reports).
pub(super) fn is_one_thread(t: &u32) -> bool {
    *t == 1
}

/// A job as written in its file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobFile {
    /// [`JOB_FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// The job's name, repeated in its result.
    pub id: String,
    /// The position to prove, as FEN.
    pub root_fen: String,
    /// The line from the master's root to here (SAN, for people).
    pub line: Vec<String>,
    /// The rule set's name.
    pub rules: String,
    /// The side to prove a win for (`white` or `black`).
    pub winner: String,
    /// The budgets.
    pub budget: Budget,
    /// The endgame-table directory, if any.
    pub tables: Option<PathBuf>,
    /// Stop (unresolved) once the root's proof number reaches `pn` or its
    /// disproof number `dn`, as df-pn leaves a child for a sibling that
    /// looks better (checked about once a second; optional).
    #[serde(default)]
    pub thresholds: Option<Thresholds>,
    /// A transposition-table file shared by the jobs of one master on one
    /// machine (`crate::search::tt::Tt::open_shared`; optional: without
    /// it, or where it cannot be mapped, the job sizes its own table from
    /// `budget.memory_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_tt: Option<PathBuf>,
    /// The positions before the root since the last capture or pawn move
    /// (or since the master's root), oldest first, as FEN; each is
    /// followed by the next, then the root, by one legal move (optional).
    /// A repetition of one of them is a draw, as on the board; and jobs of
    /// one line then key their shared table alike.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<String>,
    /// A table excerpt to start from (an ancestor job's,
    /// [`super::excerpt`]; optional, for jobs with tables of their own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tt_excerpt: Option<PathBuf>,
    /// When the job ends unresolved, the entries of its table of most
    /// work, at most this many, go to its excerpt file `JOB.json.tt`
    /// (optional; 0: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tt_excerpt_out: u64,
    /// With `budget.threads` above 1: the threads take turns in a fixed
    /// round (`crate::search::Config::lockstep`), so the job searches the
    /// same nodes every time it is run (the simulated cluster's jobs;
    /// optional, default off).
    #[serde(default, skip_serializing_if = "is_false")]
    pub lockstep: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Proof- and disproof-number thresholds of a job.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    /// Stop when the root's proof number reaches this.
    pub pn: u32,
    /// Stop when the root's disproof number reaches this.
    pub dn: u32,
    /// But not before the search has expanded this many nodes (the
    /// thresholds are raised as needed): a job's start-up is paid for
    /// (optional, default 0).
    #[serde(default)]
    pub min_nodes: u64,
}

/// A job, read and checked.
#[derive(Clone, Debug)]
pub struct Job {
    /// The file as written.
    pub file: JobFile,
    /// The root position.
    pub root: Position,
    /// The stalemate rule (jobs run without the fifty-move rule).
    pub rules: Rules,
    /// The side to prove a win for.
    pub winner: Color,
    /// The positions of `file.history`.
    pub history: Vec<Position>,
}

/// How a job ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobOutcome {
    /// The winner wins: a certificate comes with it.
    Proven,
    /// The winner cannot win (from the search alone: not certifiable).
    Disproven,
    /// A budget or a signal stopped the search first.
    Unresolved,
}

/// A result as written in its file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResultFile {
    /// [`RESULT_FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// The job's id.
    pub id: String,
    /// The job's root FEN.
    pub root_fen: String,
    /// The job's rule set.
    pub rules: String,
    /// The job's winner.
    pub winner: String,
    /// How it ended.
    pub outcome: JobOutcome,
    /// The root's proof number at the end (0 when proven).
    pub root_pn: u32,
    /// The root's disproof number at the end (0 when disproven).
    pub root_dn: u32,
    /// Nodes expanded.
    pub nodes: u64,
    /// Of `nodes`, those of the job's busiest search thread: its length in
    /// one thread's time (optional; absent: all of `nodes`, one thread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_nodes: Option<u64>,
    /// Distinct positions of the proof (0 unless proven).
    pub proof_positions: u64,
    /// Wall-clock seconds.
    pub time_s: f64,
    /// The certificate's file name (in the job's directory) when proven.
    pub tree: Option<String>,
    /// Why an unresolved job stopped: `budget`, `threshold` or `signal`.
    pub stopped_by: Option<String>,
    /// An unresolved job's hints: its root's moves with their children's
    /// numbers as its search left them (optional; a master only orders
    /// the children it expands by them, and checks every move).
    #[serde(default)]
    pub children: Vec<ChildHint>,
    /// The file name of the table excerpt an unresolved job wrote (in the
    /// job's directory; optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tt_excerpt: Option<String>,
}

/// A move of an unresolved job's root with its child's proof and disproof
/// numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChildHint {
    /// The move (UCI).
    pub uci: String,
    /// The child's proof number.
    pub pn: u32,
    /// The child's disproof number.
    pub dn: u32,
}

/// A job or result file that cannot be used.
#[derive(Debug)]
pub enum JobFileError {
    /// It cannot be read.
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        error: std::io::Error,
    },
    /// It is not the JSON of its kind, or a field is wrong.
    Malformed {
        /// The file.
        path: PathBuf,
        /// The field at fault, when one is.
        field: Option<String>,
        /// What is wrong.
        message: String,
    },
}

impl fmt::Display for JobFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobFileError::Io { path, error } => {
                write!(f, "cannot read {}: {error}", path.display())
            }
            JobFileError::Malformed {
                path,
                field: Some(field),
                message,
            } => write!(f, "{}: field `{field}`: {message}", path.display()),
            JobFileError::Malformed {
                path,
                field: None,
                message,
            } => write!(f, "{}: {message}", path.display()),
        }
    }
}

impl std::error::Error for JobFileError {}

fn malformed(path: &Path, field: Option<&str>, message: impl Into<String>) -> JobFileError {
    JobFileError::Malformed {
        path: path.to_path_buf(),
        field: field.map(str::to_string),
        message: message.into(),
    }
}

/// Reads `path` as JSON of type `T`; serde names a missing or mistyped
/// field in its message (`missing field \`id\``), which becomes the
/// error's field.
fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, JobFileError> {
    let text = crate::fsutil::read_regular_to_string(path).map_err(|error| JobFileError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    serde_json::from_str(&text).map_err(|e| {
        let msg = e.to_string();
        let field = msg
            .split('`')
            .nth(1)
            .filter(|_| msg.contains("field"))
            .map(str::to_string);
        JobFileError::Malformed {
            path: path.to_path_buf(),
            field,
            message: format!("not a valid file: {msg}"),
        }
    })
}

fn check_header(path: &Path, format: &str, version: u32, want: &str) -> Result<(), JobFileError> {
    if format != want {
        return Err(malformed(
            path,
            Some("format"),
            format!("{format:?}, expected {want:?}"),
        ));
    }
    if version != VERSION {
        return Err(malformed(
            path,
            Some("version"),
            format!("version {version}, this program reads version {VERSION}"),
        ));
    }
    Ok(())
}

/// The rule set named in a file's `rules` field.
fn parse_rules(path: &Path, s: &str) -> Result<Rules, JobFileError> {
    s.parse()
        .map_err(|e: String| malformed(path, Some("rules"), e))
}

/// The positions of a job's `history` field, each checked to lead to the
/// next (then to `root`) by a legal move.
fn parse_history(
    path: &Path,
    fens: &[String],
    root: &Position,
) -> Result<Vec<Position>, JobFileError> {
    let mut out = Vec::with_capacity(fens.len());
    for (i, f) in fens.iter().enumerate() {
        let p = Position::from_fen(f)
            .map_err(|e| malformed(path, Some("history"), format!("entry {i}: {e}")))?;
        out.push(p);
    }
    for (i, w) in out.iter().enumerate() {
        let next = out.get(i + 1).unwrap_or(root);
        let want = next.pack();
        if !w.legal_moves().iter().any(|&m| w.play(m).pack() == want) {
            return Err(malformed(
                path,
                Some("history"),
                format!("entry {i} does not lead to the next position by a legal move"),
            ));
        }
    }
    Ok(out)
}

/// The side named in a file's `winner` field.
fn parse_winner(path: &Path, s: &str) -> Result<Color, JobFileError> {
    s.parse()
        .map_err(|e: String| malformed(path, Some("winner"), e))
}

impl Job {
    /// A job for `root` (its FEN written), with its fields.
    pub fn new(
        id: String,
        root: Position,
        line: Vec<String>,
        rules: Rules,
        winner: Color,
        budget: Budget,
        tables: Option<PathBuf>,
    ) -> Job {
        Job {
            file: JobFile {
                format: JOB_FORMAT.into(),
                version: VERSION,
                id,
                root_fen: root.to_fen(),
                line,
                rules: rules.name().into(),
                winner: winner.name().to_lowercase(),
                budget,
                tables,
                thresholds: None,
                shared_tt: None,
                history: Vec::new(),
                tt_excerpt: None,
                tt_excerpt_out: 0,
                lockstep: false,
            },
            root,
            history: Vec::new(),
            rules,
            winner,
        }
    }

    /// Reads and checks a job file.
    pub fn read(path: &Path) -> Result<Job, JobFileError> {
        let file: JobFile = read_json(path)?;
        check_header(path, &file.format, file.version, JOB_FORMAT)?;
        let root = Position::from_fen(&file.root_fen)
            .map_err(|e| malformed(path, Some("root_fen"), e.to_string()))?;
        let rules = parse_rules(path, &file.rules)?;
        let winner = parse_winner(path, &file.winner)?;
        if root.outcome(rules).is_some() {
            return Err(malformed(
                path,
                Some("root_fen"),
                "the game is already over",
            ));
        }
        let b = file.budget;
        if b.nodes == 0 || !(b.time_s > 0.0 && b.time_s.is_finite()) || b.memory_bytes < 1 << 16 {
            return Err(malformed(
                path,
                Some("budget"),
                "nodes and time_s must be positive and memory_bytes at least 64K",
            ));
        }
        if !(1..=MAX_THREADS).contains(&(b.threads as usize)) {
            return Err(malformed(
                path,
                Some("budget"),
                format!("threads must be 1 to {MAX_THREADS}"),
            ));
        }
        let history = parse_history(path, &file.history, &root)?;
        Ok(Job {
            file,
            root,
            rules,
            winner,
            history,
        })
    }

    /// Sets the history (`file.history` and `history`).
    pub fn set_history(&mut self, history: Vec<Position>) {
        self.file.history = history.iter().map(|p| p.to_fen()).collect();
        self.history = history;
    }

    /// Writes the job file atomically.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(&self.file).map_err(std::io::Error::other)?;
        crate::fsutil::write_atomic(path, |w| {
            use std::io::Write;
            w.write_all(text.as_bytes())?;
            w.write_all(b"\n")
        })
    }
}

/// The result file of the job file `job`: `JOB.result.json`.
pub fn result_path(job: &Path) -> PathBuf {
    with_suffix(job, ".result.json")
}

/// The certificate of the job file `job`: `JOB.tree`.
pub fn tree_path(job: &Path) -> PathBuf {
    with_suffix(job, ".tree")
}

/// The scratch store a worker runs the job file `job` in: `JOB.redb`.
pub fn store_path(job: &Path) -> PathBuf {
    with_suffix(job, ".redb")
}

/// The log of the job file `job`: `JOB.log` (the worker's stderr).
pub fn log_path(job: &Path) -> PathBuf {
    with_suffix(job, ".log")
}

/// Everything a run of the job file `job` may leave beside it: its
/// result, certificate, table excerpt, log, and scratch store with what
/// the search keeps beside a store. One list for every place that clears
/// a job's files (before it is sent, when it is cancelled, when a stopped
/// worker's last words come in), so none forgets one.
pub fn outputs(job: &Path) -> [PathBuf; 7] {
    let store = store_path(job);
    [
        result_path(job),
        tree_path(job),
        super::excerpt::excerpt_path(job),
        log_path(job),
        with_suffix(&store, ".table"),
        with_suffix(&store, ".table-endgame"),
        store,
    ]
}

/// Removes what a run of `job` left ([`outputs`]), whatever of it there
/// is; the job file itself stays.
pub fn remove_outputs(job: &Path) {
    for p in outputs(job) {
        let _ = std::fs::remove_file(p);
    }
}

/// Removes the job file `job` and what a run of it left: a job done
/// with, cancelled, or run only to measure.
pub fn remove_with_outputs(job: &Path) {
    let _ = std::fs::remove_file(job);
    remove_outputs(job);
}

/// `path` with `suffix` appended to its name.
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

impl ResultFile {
    /// Reads a result file and checks its header and that it answers
    /// `job`: the same id, root, rule set and winner (each mismatch names
    /// its field).
    pub fn read_for(path: &Path, job: &Job) -> Result<ResultFile, JobFileError> {
        let r: ResultFile = read_json(path)?;
        check_header(path, &r.format, r.version, RESULT_FORMAT)?;
        if r.id != job.file.id {
            return Err(malformed(
                path,
                Some("id"),
                format!("{:?} is another job's (expected {:?})", r.id, job.file.id),
            ));
        }
        let root = Position::from_fen(&r.root_fen)
            .map_err(|e| malformed(path, Some("root_fen"), e.to_string()))?;
        if root.pack() != job.root.pack() {
            return Err(malformed(
                path,
                Some("root_fen"),
                format!("{} is another position than the job's", r.root_fen),
            ));
        }
        if parse_rules(path, &r.rules)? != job.rules {
            return Err(malformed(
                path,
                Some("rules"),
                format!(
                    "{} is another rule set than the job's {}",
                    r.rules, job.rules
                ),
            ));
        }
        if parse_winner(path, &r.winner)? != job.winner {
            return Err(malformed(
                path,
                Some("winner"),
                format!("{} is not the job's winner", r.winner),
            ));
        }
        match (r.outcome, &r.tree) {
            (JobOutcome::Proven, None) => {
                return Err(malformed(
                    path,
                    Some("tree"),
                    "a proven result names no certificate",
                ));
            }
            (JobOutcome::Proven, Some(t)) if t.contains('/') || t.starts_with('.') => {
                return Err(malformed(
                    path,
                    Some("tree"),
                    format!("{t:?} is not a file name in the job's directory"),
                ));
            }
            _ => {}
        }
        Ok(r)
    }

    /// Writes the result file atomically.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        crate::fsutil::write_atomic(path, |w| {
            use std::io::Write;
            w.write_all(text.as_bytes())?;
            w.write_all(b"\n")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(dir: &Path) -> (Job, PathBuf) {
        let (pos, _) = Position::startpos().play_line(&["e3", "d5"]).unwrap();
        let budget = Budget {
            nodes: 1000,
            time_s: 5.0,
            memory_bytes: 1 << 20,
            threads: 1,
        };
        let job = Job::new(
            "n1".into(),
            pos,
            vec!["e3".into(), "d5".into()],
            Rules::International,
            Color::White,
            budget,
            None,
        );
        std::fs::create_dir_all(dir).unwrap();
        let path = dir.join("n1.json");
        job.write(&path).unwrap();
        (job, path)
    }

    /// A scratch directory, removed when dropped.
    struct Scratch(PathBuf);

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn dir(name: &str) -> Scratch {
        Scratch(std::env::temp_dir().join(format!("antiproof-job-{name}-{}", std::process::id())))
    }

    #[test]
    fn a_job_reads_back_as_written() {
        let d = dir("roundtrip");
        let (job, path) = sample(&d.0);
        let back = Job::read(&path).unwrap();
        assert_eq!(back.file, job.file);
        assert_eq!(back.winner, Color::White);
    }

    #[test]
    fn a_bad_field_is_named() {
        let d = dir("badfield");
        let (_, path) = sample(&d.0);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("\"white\"", "\"green\"")).unwrap();
        let e = Job::read(&path).unwrap_err().to_string();
        assert!(e.contains("field `winner`"), "{e}");
        std::fs::write(&path, "{\"format\": \"antiproof-job\"}").unwrap();
        let e = Job::read(&path).unwrap_err().to_string();
        assert!(e.contains("field `version`"), "{e}");
        assert!(e.contains("n1.json"), "{e}");
    }

    #[test]
    fn a_result_for_another_job_is_refused() {
        let d = dir("foreign");
        let (job, path) = sample(&d.0);
        let mut r = ResultFile {
            format: RESULT_FORMAT.into(),
            version: VERSION,
            id: "n1".into(),
            root_fen: job.file.root_fen.clone(),
            rules: "international".into(),
            winner: "white".into(),
            outcome: JobOutcome::Unresolved,
            root_pn: 3,
            root_dn: 4,
            nodes: 10,
            span_nodes: None,
            proof_positions: 0,
            time_s: 0.1,
            tree: None,
            stopped_by: Some("budget".into()),
            children: Vec::new(),
            tt_excerpt: None,
        };
        let rp = result_path(&path);
        r.write(&rp).unwrap();
        assert!(ResultFile::read_for(&rp, &job).is_ok());
        r.rules = "fics".into();
        r.write(&rp).unwrap();
        let e = ResultFile::read_for(&rp, &job).unwrap_err().to_string();
        assert!(e.contains("field `rules`"), "{e}");
        r.rules = "international".into();
        r.root_fen = Position::startpos().to_fen();
        r.write(&rp).unwrap();
        let e = ResultFile::read_for(&rp, &job).unwrap_err().to_string();
        assert!(e.contains("field `root_fen`"), "{e}");
    }
}
