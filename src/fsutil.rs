//! Small file-system helpers shared by modules that must not depend on
//! each other (the first-move table and the web front end).

use std::path::{Path, PathBuf};

/// Files of a directory with the given extension, sorted by name.
pub fn files_with_ext(dir: &Path, ext: &str) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.extension().is_some_and(|x| x == ext) && p.is_file() {
            out.push(p);
        }
    }
    out.sort();
    Ok(out)
}
