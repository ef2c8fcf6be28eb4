//! Panic containment for the storage engine.
//!
//! redb trusts its file: a damaged page (a zeroed 4 KiB block, one flipped
//! byte) can make it panic (`unreachable!`, an index out of bounds) deep
//! inside a read or a commit. A proof store is user data that can be
//! damaged, so no such panic may reach the user as a crash: every call into
//! the engine runs inside [`guarded`], which turns a panic into
//! [`StoreError::Damaged`] naming the file, and keeps the default panic
//! message (with its backtrace) off the terminal for these panics only.
//!
//! The panic hook is process-wide, so it is installed once and passes every
//! other panic to the hook that was there before: a thread-local depth
//! counter says whether the panicking thread is inside a guarded call.

use super::StoreError;
use std::any::Any;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;
use std::sync::Once;

thread_local! {
    /// How many guarded calls this thread is inside.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

static HOOK: Once = Once::new();

fn install_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if DEPTH.with(Cell::get) == 0 {
                previous(info);
            }
        }));
    });
}

/// The text of a panic payload.
fn payload_text(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "the storage engine panicked".to_string()
    }
}

/// Runs `f` (a call into the storage engine for the store at `path`); a
/// panic inside it becomes [`StoreError::Damaged`].
pub(super) fn guarded<T>(
    path: &Path,
    f: impl FnOnce() -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    install_hook();
    DEPTH.with(|d| d.set(d.get() + 1));
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    DEPTH.with(|d| d.set(d.get() - 1));
    r.unwrap_or_else(|p| {
        Err(StoreError::Damaged {
            path: path.to_path_buf(),
            message: payload_text(p.as_ref()),
        })
    })
}

/// Drops `value` (an engine handle), containing a panic of its destructor;
/// returns whether it panicked.
pub(super) fn drop_guarded<T>(path: &Path, value: T) -> bool {
    guarded(path, || {
        drop(value);
        Ok(())
    })
    .is_err()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_a_damaged_store_error_naming_the_file() {
        let r: Result<(), StoreError> = guarded(Path::new("x.redb"), || panic!("page 7 is bad"));
        match r {
            Err(StoreError::Damaged { path, message }) => {
                assert_eq!(path, Path::new("x.redb"));
                assert!(message.contains("page 7"), "{message}");
            }
            r => panic!("{r:?}"),
        }
        assert_eq!(DEPTH.with(Cell::get), 0);
        assert!(guarded(Path::new("x"), || Ok(5)).is_ok_and(|v| v == 5));
    }
}
