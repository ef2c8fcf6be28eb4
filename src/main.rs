//! The `antiproof` command line: a thin layer over the library.
//!
//! Exit codes: 0 proven / verified / done, 1 not proven / rejected,
//! 2 usage or I/O error, 3 stopped by a limit (prove).

use std::process::ExitCode;

fn main() -> ExitCode {
    antiproof::cli::main()
}
