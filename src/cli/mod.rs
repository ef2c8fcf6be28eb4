//! Command-line parsing and dispatch. Each subcommand lives in its own
//! module and returns an exit code.

use clap::{Parser, Subcommand};
use std::io::{self, Write};
use std::process::ExitCode;

mod perft;

/// Exit code: proven, verified or done.
pub const EXIT_OK: u8 = 0;
/// Exit code: not proven, or rejected.
pub const EXIT_NO: u8 = 1;
/// Exit code: usage or I/O error.
pub const EXIT_ERROR: u8 = 2;
/// Exit code: a limit stopped the run.
pub const EXIT_LIMIT: u8 = 3;

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
    let result = match cli.command {
        Command::Perft(args) => perft::run(args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            if is_broken_pipe(&e) {
                return ExitCode::from(EXIT_OK);
            }
            let _ = writeln!(io::stderr(), "antiproof: error: {e:#}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// Whether an error is a closed output pipe (`antiproof ... | head`), which
/// is not an error.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}
