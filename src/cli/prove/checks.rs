//! What `prove` refuses before it starts: a `--memory` past what this
//! machine can give a table, and an output (the store, its saved table)
//! that is one of the run's inputs.

use super::ProveArgs;
use super::values::MemorySize;
use anyhow::bail;
use std::path::{Path, PathBuf};

/// Refuses a `--memory` above what this machine (or this process's
/// control group) has, where the table lives on this machine (not for
/// Slurm's jobs and steps, which run elsewhere and clamp their own): the table
/// grows to its budget as it fills, so the process would be killed by the
/// kernel instead, its unsaved work lost. The table of threads of one
/// search is touched whole at the start: it must fit in what is
/// available now.
pub(super) fn check_memory(args: &ProveArgs) -> anyhow::Result<()> {
    if matches!(
        args.many.executor,
        super::jobs::ExecutorKind::Slurm | super::jobs::ExecutorKind::Srun
    ) {
        return Ok(());
    }
    match memory_refusal(
        args.memory,
        args.many.threads(),
        crate::sysmem::usable_bytes(),
        crate::sysmem::available_bytes(),
    ) {
        Some(why) => bail!(why),
        None => Ok(()),
    }
}

/// Why a table of `memory` for `threads` search threads does not fit a
/// machine of `usable` bytes with `available` free now: over
/// [`crate::sysmem::table_limit`], the one policy a job clamps its table
/// to; `None` when it fits or the machine cannot tell.
fn memory_refusal(
    memory: MemorySize,
    threads: usize,
    usable: Option<u64>,
    available: Option<u64>,
) -> Option<String> {
    // The machine first (any number of threads), then what a table of
    // threads may take of what is free now.
    if let Some(limit) = crate::sysmem::table_limit(1, usable, None)
        && memory.0 > limit.bytes
    {
        return Some(format!(
            "--memory {memory}: more than this machine has for a table, {limit}; past it the kernel would kill the search"
        ));
    }
    if threads > 1
        && let Some(limit) = crate::sysmem::table_limit(threads, None, available)
        && memory.0 > limit.bytes
    {
        return Some(format!(
            "--memory {memory} with {threads} threads: more than their table may have, {limit}"
        ));
    }
    None
}

/// Refuses a store, or a saved table beside it, that is one of the run's
/// input files (`--obligations`, `--tables`, `--known`): nothing is
/// written then.
pub(super) fn check_outputs(args: &ProveArgs) -> anyhow::Result<()> {
    use crate::fsutil::OutputKind;
    // Of a tables directory, its tables are inputs (a store may live
    // beside them).
    let tables: Vec<PathBuf> = match &args.tables {
        Some(d) if d.is_dir() => crate::fsutil::files_with_ext(d, "apt")?,
        Some(d) => vec![d.clone()],
        None => Vec::new(),
    };
    let known = crate::known::tree_paths(&args.known)?;
    let mut inputs: Vec<&Path> = args.obligations.iter().map(PathBuf::as_path).collect();
    inputs.extend(tables.iter().map(PathBuf::as_path));
    inputs.extend(known.iter().map(PathBuf::as_path));
    crate::cli::check_output(&args.db, OutputKind::Store, &inputs)?;
    for endgame in [false, true] {
        let tt = crate::search::run::tt_file(&args.db, endgame);
        crate::cli::check_output(&tt, OutputKind::Beside, &inputs)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_must_fit_the_machine_and_a_threaded_one_what_is_free() {
        const G: u64 = 1 << 30;
        let m = |g: u64| MemorySize(g * G);
        // Past the machine: refused, threads or not.
        let why = memory_refusal(m(32), 1, Some(24 * G), Some(20 * G)).unwrap();
        assert!(
            why.contains("--memory 32G: more than this machine has for a table, 21.0 GiB (7/8 of this machine's 24.0 GiB"),
            "{why}"
        );
        // The same policy a job clamps its table to: 7/8 of the machine.
        assert!(memory_refusal(m(22), 1, Some(24 * G), Some(20 * G)).is_some());
        assert_eq!(memory_refusal(m(21), 1, Some(24 * G), Some(20 * G)), None);
        // One thread grows its table as it fills: what is free now does
        // not matter.
        assert_eq!(memory_refusal(m(16), 1, Some(24 * G), Some(4 * G)), None);
        // Threads touch theirs whole at the start.
        let why = memory_refusal(m(16), 2, Some(24 * G), Some(4 * G)).unwrap();
        assert!(
            why.contains("with 2 threads") && why.contains("the 4.0 GiB available now"),
            "{why}"
        );
        assert_eq!(memory_refusal(m(2), 2, Some(24 * G), Some(4 * G)), None);
        // A machine that cannot tell refuses nothing.
        assert_eq!(memory_refusal(m(1024), 8, None, None), None);
    }
}
