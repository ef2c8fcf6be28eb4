//! antiproof: proves and certifies forced wins in antichess openings.
//!
//! Modules and their one-way doors (see README.md):
//! - [`rules`]: the project's own fast antichess rules (prover, tables).
//! - [`search`]: the proof-number search; writes proofs through [`store`].
//! - [`store`]: the proof store (redb), fixed-width versioned records.
//! - [`stored`]: what a stored proof means at a position (the one reader
//!   of records, for extraction, export, browse/serve and the tests).
//! - [`wintree`]: the Watkins win-tree format, reader and writer.
//! - [`check`]: the independent checker (shakmaty only, nothing of
//!   `rules`, `search` or `tables`).
//! - [`tables`]: endgame tables up to 4 men, generated with [`rules`];
//!   [`tablefile`]: their rules-free half (format, index, certifier), which
//!   the checker reads.
//! - [`web`], [`openings`]: browse, serve and the first-move table;
//!   [`uci`]: a UCI engine that plays proofs (through [`web`]'s sources).
//! - [`known`]: certified win-tree files loaded into a store as proven
//!   records (known wins a search stops at).
//! - [`jobs`]: job-level search (`prove --jobs N`, `job run`): the top
//!   tree in the store, jobs on local workers or Slurm, every result
//!   certified by [`check`] before it is merged.
//! - [`fsutil`]: small file-system helpers shared across modules;
//!   [`sysmem`]: how much memory this process may use.
//! - [`cli`]: the command line, a thin layer over the rest.
//! - [`vocab`]: plain vocabulary shared by all of them (the rule set,
//!   move codes): names and codes only, no rules logic.
/// `eprintln!` that never panics: a closed or failing standard error
/// (`2>&1 | head`, a log reader that died) drops the line instead of
/// killing the command, so a long run is not ended by its own messages
/// (its table and state are still saved when it stops).
macro_rules! errln {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stderr().lock(), $($arg)*);
    }};
}

/// `eprint!` that never panics, as [`errln!`] is `eprintln!` (and flushed,
/// for a progress line without a newline).
macro_rules! errprint {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let mut e = ::std::io::stderr().lock();
        let _ = ::std::write!(e, $($arg)*);
        let _ = e.flush();
    }};
}

pub mod check;
pub mod cli;
pub mod export;
pub mod fasthash;
pub mod fsutil;
pub mod jobs;
pub mod known;
pub mod openings;
pub mod rules;
pub mod search;
pub mod store;
pub mod stored;
pub mod sysmem;
pub mod tablefile;
pub mod tables;
pub mod uci;
pub mod vocab;
pub mod web;
pub mod wintree;
