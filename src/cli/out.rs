//! Standard output for every command: a closed output pipe
//! (`antiproof verify ... | head -1`, `| true`) stops the output and
//! nothing else. The command goes on to its end (an obligations file is
//! still written, a stopped search's table still saved) and exits with its
//! own code, so `set -o pipefail` sees a rejection as a rejection. Any
//! other write error (a full disk behind `> file`) is an error as before.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a write to standard output met a closed pipe: later writes
/// are dropped.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Standard output, locked, with a closed pipe taken as the end of the
/// output (see the module doc).
pub(crate) struct Stdout(io::StdoutLock<'static>);

/// Standard output for a command's report.
pub(crate) fn stdout() -> Stdout {
    Stdout(io::stdout().lock())
}

/// Whether an earlier write found standard output closed.
pub(crate) fn closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// `r`, with a closed pipe turned into "written" (and remembered).
fn unless_closed<T>(r: io::Result<T>, written: T) -> io::Result<T> {
    match r {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            CLOSED.store(true, Ordering::Relaxed);
            Ok(written)
        }
        r => r,
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if closed() {
            return Ok(buf.len());
        }
        unless_closed(self.0.write(buf), buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if closed() {
            return Ok(());
        }
        unless_closed(self.0.flush(), ())
    }
}

/// `println!` through [`stdout`]: a closed pipe ends the output; another
/// write error is returned (`?` it).
macro_rules! outln {
    () => {
        ::std::io::Write::write_all(&mut $crate::cli::out::stdout(), b"\n")
    };
    ($($arg:tt)*) => {
        ::std::io::Write::write_fmt(
            &mut $crate::cli::out::stdout(),
            format_args!("{}\n", format_args!($($arg)*)),
        )
    };
}
pub(crate) use outln;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_is_written_and_remembered_other_errors_are_not() {
        let broken = io::Error::from(io::ErrorKind::BrokenPipe);
        assert_eq!(unless_closed(Err(broken), 7).unwrap(), 7);
        assert!(closed());
        let full = io::Error::from(io::ErrorKind::StorageFull);
        assert_eq!(
            unless_closed::<usize>(Err(full), 7).unwrap_err().kind(),
            io::ErrorKind::StorageFull
        );
        CLOSED.store(false, Ordering::Relaxed);
    }
}
