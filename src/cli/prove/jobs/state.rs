//! `prove --state FILE` at the start: the run state of an earlier session
//! restored into the store, and its table entries for the jobs' shared
//! table.

use crate::store::Store;
use anyhow::bail;
use std::io;

/// `--state FILE` at the start: restores the file into the store when
/// the store holds no top tree of this line and the file exists (a fresh
/// machine), saying what it did on stderr. Returns the file's table
/// entries for the jobs' shared table (also when the store's own top
/// tree is resumed: the table did not outlive the last run either).
pub(super) fn restore_state(
    store: &Store,
    rules: crate::rules::Rules,
    path: &std::path::Path,
    root: &crate::rules::Position,
    winner: crate::rules::Color,
) -> anyhow::Result<TtSeed> {
    use crate::jobs::state;
    if let Some((key, w)) = crate::jobs::top::stored_root(store, rules)?
        && key == root.pack().0
        && w == winner
    {
        errln!(
            "antiproof: the store holds this line's top tree: resuming it ({} is read only for its table entries)",
            path.display()
        );
        return Ok(match state::read(path) {
            Ok(st) if st.rules == rules && state::root_of(&st) == Some((key, w)) => {
                seed_of(&st, path)
            }
            _ => Vec::new(),
        });
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            errln!(
                "antiproof: no run state at {} yet: a fresh search, saved there as it goes",
                path.display()
            );
            return Ok(Vec::new());
        }
        _ => {}
    }
    let st = state::read(path)?;
    if st.rules != rules {
        bail!(
            "--state {}: the state of a search under {} rules, not {rules}",
            path.display(),
            st.rules
        );
    }
    store.top_clear(rules)?;
    let r = state::restore(store, path, &st, root, winner)?;
    errln!(
        "antiproof: run state restored from {}: {} top-tree nodes, {} records (a proven node whose proof is neither there nor in the store is reopened as the run resumes)",
        path.display(),
        r.nodes,
        r.records
    );
    Ok(seed_of(&st, path))
}
/// Entries for the jobs' shared table.
pub(super) type TtSeed = Vec<(u64, crate::search::tt::TtValue)>;

/// A state file's table entries, if this build makes keys alike (said on
/// stderr either way).
fn seed_of(st: &crate::jobs::state::RunState, path: &std::path::Path) -> TtSeed {
    match st.tt_seed() {
        Some(seed) => {
            if !seed.is_empty() {
                errln!(
                    "antiproof: {} table entries of {} go into the jobs' shared table",
                    seed.len(),
                    path.display()
                );
            }
            seed.to_vec()
        }
        None => {
            errln!(
                "antiproof: the table entries of {} are of a build that makes keys otherwise: not used",
                path.display()
            );
            Vec::new()
        }
    }
}
