//! Small file-system helpers shared by modules that must not depend on
//! each other (the first-move table, the web front end, the file
//! readers), and the atomic writing of every file the command line writes.

use std::fs::File;
use std::io;
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

/// Writes `path` atomically: `write` fills a temporary file in the same
/// directory, which is synced to disk and then renamed over `path`. A
/// reader never sees a half-written file, a failed write leaves the old
/// file as it was, and a process that has the old file memory-mapped keeps
/// a valid mapping (the old file lives on until unmapped).
pub fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{}: not a file name", path.display()),
        )
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = dir.join(tmp_name);
    let result = (|| {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        write(&mut w)?;
        let f = w.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
        return result;
    }
    // The rename itself is durable once the directory is synced; best
    // effort (some file systems refuse to sync a directory).
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Whether `a` and `b` name the same existing file (same device and inode:
/// links and different spellings of one path included). A path that does
/// not exist is the same as nothing.
pub fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// What a path that is not a regular file is, in words.
fn kind_of(ft: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_socket() {
            return "a socket";
        }
        if ft.is_block_device() || ft.is_char_device() {
            return "a device";
        }
    }
    if ft.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

/// An error for a path that is not a regular file: "not a regular file (a
/// FIFO)" (the caller's message names the path).
pub fn not_regular(ft: std::fs::FileType) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("not a regular file ({})", kind_of(ft)),
    )
}

/// Opens a regular file for reading; a FIFO, a device, a socket or a
/// directory is an error (`InvalidInput`) and is never opened, so a
/// reader never waits on a FIFO nor touches a device. Symbolic links are
/// followed.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(not_regular(meta.file_type()));
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        // Should the path change into a FIFO after the check, the open
        // does not wait for a writer; the check below refuses it.
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let file = opts.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(meta.file_type()));
    }
    Ok(file)
}

/// Reads a regular file to a string (see [`open_regular`]).
pub fn read_regular_to_string(path: &Path) -> io::Result<String> {
    let mut text = String::new();
    io::Read::read_to_string(&mut open_regular(path)?, &mut text)?;
    Ok(text)
}

/// A directory that must exist: `NotFound` "no such directory" if missing,
/// `InvalidInput` "not a directory" for anything else.
pub fn existing_dir(dir: &Path) -> io::Result<()> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a directory",
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            Err(io::Error::new(io::ErrorKind::NotFound, "no such directory"))
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_are_opened() {
        let dir = std::env::temp_dir().join(format!("antiproof-fsutil-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = open_regular(&dir).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file (a directory)");
        let f = dir.join("f");
        std::fs::write(&f, "x").unwrap();
        assert_eq!(read_regular_to_string(&f).unwrap(), "x");
        #[cfg(unix)]
        {
            let fifo = dir.join("fifo");
            let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
            let e = open_regular(&fifo).unwrap_err();
            assert_eq!(e.to_string(), "not a regular file (a FIFO)");
            let e = open_regular(Path::new("/dev/null")).unwrap_err();
            assert_eq!(e.to_string(), "not a regular file (a device)");
        }
        assert_eq!(
            existing_dir(&dir.join("missing")).unwrap_err().to_string(),
            "no such directory"
        );
        assert_eq!(existing_dir(&f).unwrap_err().to_string(), "not a directory");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
