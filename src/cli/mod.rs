//! Command-line parsing and dispatch. Each subcommand lives in its own
//! module and returns an exit code.

use clap::{Parser, Subcommand};
use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

mod browse;
mod demo;
mod export;
mod job;
mod ladder;
mod obligations;
mod openings;
pub(crate) mod out;
mod perft;
mod prove;
mod proven_lines;
mod serve;
mod store;
mod tables;
mod uci;
pub mod values;
mod verify;

/// Exit code: proven, verified or done.
pub const EXIT_OK: u8 = 0;
/// Exit code: not proven, or rejected.
pub const EXIT_NO: u8 = 1;
/// Exit code: usage or I/O error.
pub const EXIT_ERROR: u8 = 2;
/// Exit code: a limit stopped the run.
pub const EXIT_LIMIT: u8 = 3;
/// Exit code: `verify --tree`: sound, but leaves are open (positions the
/// proof still owes; `--obligations` lists them).
pub const EXIT_OPEN: u8 = 4;

/// Proves and certifies forced wins in antichess openings.
#[derive(Parser, Debug)]
#[command(name = "antiproof", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Count leaf positions of the move tree (move-generator test and timing).
    Perft(perft::PerftArgs),
    /// Prove a forced win for a line and store its solution tree.
    Prove(Box<prove::ProveArgs>),
    /// Certify a proof from the store or a win-tree file.
    Verify(verify::VerifyArgs),
    /// Write a stored proof as a Watkins win-tree file.
    Export(export::ExportArgs),
    /// Show the proof tree at a line in the terminal.
    Browse(browse::BrowseArgs),
    /// Serve proof trees over HTTP and as a web page.
    Serve(serve::ServeArgs),
    /// The table of White's 20 first moves.
    #[command(alias = "table")]
    Openings(openings::OpeningsArgs),
    /// Play proofs as a UCI engine (for chess GUIs; antichess).
    Uci(uci::UciArgs),
    /// Endgame tables up to 4 men: build, verify, probe.
    Tables(tables::TablesArgs),
    /// Run one job of a job-level search (`prove --jobs N`).
    Job(job::JobArgs),
    /// Look after a proof store file: integrity check, compaction.
    Store(store::StoreArgs),
    /// Prove 1.e3 d5 into a temporary store, export it, and certify it with
    /// the independent checker: the set-up check.
    Demo(demo::DemoArgs),
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_ERROR } else { EXIT_OK };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = run_command(cli.command);
    finish(result)
}

fn run_command(command: Command) -> anyhow::Result<u8> {
    match command {
        Command::Perft(args) => perft::run(args),
        Command::Prove(args) => prove::run(*args),
        Command::Verify(args) => verify::run(args),
        Command::Export(args) => export::run(args),
        Command::Browse(args) => browse::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Openings(args) => openings::run(args),
        Command::Uci(args) => uci::run(args),
        Command::Tables(args) => tables::run(args),
        Command::Store(args) => store::run(args),
        Command::Job(args) => job::run(args),
        Command::Demo(args) => demo::run(args),
    }
}

/// Runs a command line given as words (the first is the program name), as
/// `demo` does for its steps.
pub(crate) fn run_words(words: &[String]) -> anyhow::Result<u8> {
    let cli = Cli::try_parse_from(words)?;
    run_command(cli.command)
}

/// The exit code of a command's result; an error is said on stderr (exit
/// 2). A closed standard output is no error and changes no code: the
/// commands write through [`out::stdout`], which ends the output there
/// and lets the command finish with its own verdict.
fn finish(result: anyhow::Result<u8>) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            let _ = writeln!(io::stderr(), "antiproof: error: {e:#}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// Refuses an output path before anything is written: one of the
/// command's `inputs` (files, or directories standing for every file in
/// them) however spelled (a link, a hard link, `./`), something not a
/// regular file, or a file of another kind than `kind` writes
/// ([`crate::fsutil::check_output`]). Every output of every command goes
/// through it:
///
/// | command | outputs | inputs |
/// |---|---|---|
/// | `verify --tree F --obligations OUT` | OUT | F, `--tables` |
/// | `export -o OUT` (and `--split-above`'s files) | OUT, each part | `--db`, `--tree`, `--tables` |
/// | `prove --db DB` (any mode) | DB, DB.table, DB.table-endgame | `--obligations`, `--tables` |
/// | `job run JOB` | JOB.tree, JOB.result.json, JOB.redb | JOB, its `tables`, its `shared_tt` |
///
/// Not here: the job master's work directory (names of its own, written
/// by [`crate::fsutil::create_fresh`] or renamed over, never through a
/// link), `tables build` (its own table files in `--dir`), `store
/// compact` (the store in place), `demo` (a new directory).
pub(crate) fn check_output(
    output: &Path,
    kind: crate::fsutil::OutputKind,
    inputs: &[&Path],
) -> anyhow::Result<()> {
    Ok(crate::fsutil::check_output(output, kind, inputs)?)
}

/// The store read when `--db` is not given.
pub(crate) const DEFAULT_DB: &str = "antiproof.redb";

/// Opens the proof store `db` (default: [`DEFAULT_DB`] in the current
/// directory) for reading, as `verify` and `export` do: the store, a read
/// transaction on it and the path opened.
pub(crate) fn open_store(
    db: Option<&std::path::Path>,
) -> anyhow::Result<(
    crate::store::Store,
    crate::store::StoreReader,
    std::path::PathBuf,
)> {
    let path = db.map_or_else(|| std::path::PathBuf::from(DEFAULT_DB), |p| p.to_path_buf());
    // Store errors name the path (or are given it here) and the cause once.
    let store = crate::store::Store::open_read_only(&path).map_err(|e| e.naming(&path))?;
    let reader = store.reader().map_err(|e| e.naming(&path))?;
    Ok((store, reader, path))
}
