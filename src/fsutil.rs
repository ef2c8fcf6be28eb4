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
    let (tmp, file) = create_temp(dir, &tmp_name)?;
    let result = (|| {
        let mut w = std::io::BufWriter::new(file);
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

/// Creates a new temporary file `dir/NAME` (`NAME` is `base`, then a
/// number should that be taken), never through a link nor over a file
/// already there (`O_EXCL`): the name of a temporary file is guessable,
/// and a link planted there must not have the write go to its target.
fn create_temp(dir: &Path, base: &std::ffi::OsStr) -> io::Result<(PathBuf, File)> {
    let mut last = None;
    for n in 0..64u32 {
        let mut name = base.to_os_string();
        if n > 0 {
            name.push(format!("-{n}"));
        }
        let path = dir.join(name);
        match new_file_options().open(&path) {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.expect("tried at least once"))
}

/// Options that create a new file for reading and writing: never an
/// existing one, and never through a symbolic link (`O_CREAT | O_EXCL`
/// refuses a link, dangling or not; `O_NOFOLLOW` says so twice).
fn new_file_options() -> std::fs::OpenOptions {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true).write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW);
    }
    opts
}

/// Creates `path` as a new, empty file of this process (read and write),
/// for a file a program writes under a name others can guess (a job's
/// log in a work directory, a shared table on /dev/shm). It never writes
/// through a link nor into a file it did not create: a symbolic link
/// there, a file with other hard links, another user's file or anything
/// not a regular file is refused (`AlreadyExists`, the error saying
/// which), and nothing is written. A plain file of this user with no other
/// link (a leftover of an earlier run under the same name) is removed
/// first: removing a name touches no other file.
pub fn create_fresh(path: &Path) -> io::Result<File> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => {
            refuse_foreign(&meta)?;
            std::fs::remove_file(path)?;
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    new_file_options().open(path).map_err(|e| {
        if e.kind() == io::ErrorKind::AlreadyExists {
            io::Error::new(
                io::ErrorKind::AlreadyExists,
                "a file appeared under this name while it was being created: refusing to write into it",
            )
        } else {
            e
        }
    })
}

/// An error unless `meta` (of a path, not followed) is a regular file of
/// this user with no other hard link: a file this program may remove and
/// write afresh under its own name.
pub fn refuse_foreign(meta: &std::fs::Metadata) -> io::Result<()> {
    let refuse = |why: &str| {
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            why.to_string(),
        ))
    };
    if meta.file_type().is_symlink() {
        return refuse("is a symbolic link: refusing to write through it");
    }
    if !meta.is_file() {
        return Err(not_regular(meta.file_type()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            return refuse(
                "has other hard links (another name for the same file): refusing to write into it",
            );
        }
        // SAFETY: geteuid has no preconditions and cannot fail.
        if meta.uid() != unsafe { libc::geteuid() } {
            return refuse("belongs to another user: refusing to write into it");
        }
    }
    Ok(())
}

/// An advisory lock (`flock`) on a file, held while this lives; the
/// kernel lets it go when the process ends however (a killed holder
/// leaves no stale lock).
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

/// What [`lock_exclusive`] found.
#[derive(Debug)]
pub enum Locked {
    /// The lock is this process's now.
    Held(FileLock),
    /// Another process holds it; what it wrote in the file (its note,
    /// possibly empty when it has only just taken the lock).
    Busy(String),
}

/// Takes the lock file `path` without waiting, creating it if need be
/// (never through a link, and never another's file or one with other
/// hard links: [`refuse_foreign`]); once held, the file's text is `note`
/// (who holds it, for the message of the next one to try).
#[cfg(unix)]
pub fn lock_exclusive(path: &Path, note: &str) -> io::Result<Locked> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match std::fs::symlink_metadata(path) {
            Ok(m) => refuse_foreign(&m).err().unwrap_or(e),
            Err(_) => e,
        })?;
    refuse_foreign(&file.metadata()?)?;
    // SAFETY: flock on a descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            let mut text = String::new();
            io::Read::read_to_string(&mut file, &mut text)?;
            return Ok(Locked::Busy(text.trim().to_string()));
        }
        return Err(e);
    }
    file.set_len(0)?;
    io::Write::write_all(&mut file, note.as_bytes())?;
    Ok(Locked::Held(FileLock { _file: file }))
}

/// Whether process `pid` has ended: there is no such process, or it is a
/// zombie (ended, not yet reaped: its files, locks and mappings are
/// already let go). A process of another user, or one `/proc` hides, is
/// not taken for gone.
#[cfg(unix)]
pub fn process_gone(pid: u32) -> bool {
    let Ok(id) = libc::pid_t::try_from(pid) else {
        return true;
    };
    // SAFETY: kill with signal 0 sends nothing; it only checks that the
    // process exists.
    if unsafe { libc::kill(id, 0) } != 0
        && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
    {
        return true;
    }
    // The state follows the command name, which is in parentheses and may
    // itself hold spaces or parentheses.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let (_, rest) = stat.rsplit_once(')')?;
            rest.trim_start().chars().next()
        })
        .is_some_and(|state| state == 'Z' || state == 'X')
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

/// What a command writes at an output path, for [`check_output`]: which
/// files already there it may replace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// A win-tree certificate (`export -o` and its split files, a job's
    /// certificate).
    WinTree,
    /// An obligations file (`verify --obligations`): replaces only an
    /// obligations file or an empty file.
    Obligations,
    /// A proof store opened for writing (`prove --db`; the storage
    /// engine refuses a file that is not one).
    Store,
    /// A file a command keeps beside a store (a saved transposition
    /// table) or a job's result.
    Beside,
}

impl OutputKind {
    fn name(self) -> &'static str {
        match self {
            OutputKind::WinTree => "a win-tree file",
            OutputKind::Obligations => "an obligations file",
            OutputKind::Store => "a proof store",
            OutputKind::Beside => "this output",
        }
    }
}

/// The first line of an obligations file (`verify --obligations`).
pub const OBLIGATIONS_MAGIC: &str = "# antiproof obligations";

/// An output path refused by [`check_output`]; the message names it and
/// why.
#[derive(Debug)]
pub struct OutputRefused(pub String);

impl std::fmt::Display for OutputRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OutputRefused {}

/// `path` made absolute with its links resolved; for a path that does not
/// exist (yet), its directory's canonical path and its name.
fn canonical(path: &Path) -> Option<PathBuf> {
    if let Ok(c) = path.canonicalize() {
        return Some(c);
    }
    let name = path.file_name()?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Some(dir.canonicalize().ok()?.join(name))
}

/// Checks an output path before a command writes anything, so that no
/// output ever overwrites an input or a file of another kind:
///
/// * it is none of `inputs` (files, or directories standing for every
///   file in them): not the same file by device and inode (a symbolic
///   link, a hard link, another spelling of the path) nor the same
///   canonical path;
/// * an existing file there is a regular file (a FIFO, a device, a
///   directory is refused: writing replaces the file by renaming over it);
/// * it is not a proof store (unless the output is one) nor an endgame
///   table, and for [`OutputKind::Obligations`] it is an obligations file
///   or empty (a certificate given as the obligations output is kept).
///
/// Every command that writes a file calls it for each output (see the
/// list in `src/cli/mod.rs`).
pub fn check_output(
    output: &Path,
    kind: OutputKind,
    inputs: &[&Path],
) -> Result<(), OutputRefused> {
    let out_canon = canonical(output);
    for &input in inputs {
        let mut files = vec![input.to_path_buf()];
        if input.is_dir()
            && let Ok(rd) = std::fs::read_dir(input)
        {
            files.extend(rd.filter_map(|e| e.ok()).map(|e| e.path()));
        }
        for f in files {
            let same_path = out_canon.is_some() && out_canon == canonical(&f);
            if same_file(output, &f) || same_path {
                return Err(OutputRefused(format!(
                    "the output {} is the input {}: refusing to overwrite it (choose another output file)",
                    output.display(),
                    f.display()
                )));
            }
        }
    }
    let meta = match std::fs::metadata(output) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(OutputRefused(format!(
                "the output {}: {e}",
                output.display()
            )));
        }
    };
    let refuse = |why: String| {
        Err(OutputRefused(format!(
            "the output {} {why}: refusing to overwrite it with {} (choose another output file)",
            output.display(),
            kind.name()
        )))
    };
    if !meta.is_file() {
        if kind == OutputKind::Store {
            // The store's own checks say what it is.
            return Ok(());
        }
        return refuse(format!("is {}", kind_of(meta.file_type())));
    }
    let mut head = [0u8; 32];
    let n = open_regular(output)
        .and_then(|mut f| {
            let mut n = 0;
            while n < head.len() {
                match io::Read::read(&mut f, &mut head[n..])? {
                    0 => break,
                    k => n += k,
                }
            }
            Ok(n)
        })
        .unwrap_or(0);
    let head = &head[..n];
    if kind != OutputKind::Store && head.starts_with(b"redb\x1a\x0a") {
        return refuse("is a proof store".into());
    }
    if head.starts_with(b"APTABLE\0") {
        return refuse("is an endgame table".into());
    }
    if kind == OutputKind::Obligations
        && !head.is_empty()
        && !head.starts_with(OBLIGATIONS_MAGIC.as_bytes())
    {
        return refuse("exists and is not an obligations file".into());
    }
    Ok(())
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

    #[cfg(unix)]
    #[test]
    fn a_lock_file_is_held_once_and_names_its_holder() {
        let dir =
            std::env::temp_dir().join(format!("antiproof-fsutil-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("lock");
        let Locked::Held(held) = lock_exclusive(&path, "pid 1").unwrap() else {
            panic!("a new lock is free");
        };
        // A second open file description of the same file is refused,
        // and told the holder's note.
        match lock_exclusive(&path, "pid 2").unwrap() {
            Locked::Busy(note) => assert_eq!(note, "pid 1"),
            Locked::Held(_) => panic!("the lock was taken twice"),
        }
        drop(held);
        assert!(matches!(
            lock_exclusive(&path, "pid 3").unwrap(),
            Locked::Held(_)
        ));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "pid 3");
        // Never through a link.
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let link = dir.join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = lock_exclusive(&link, "x").unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn files_written_never_go_through_a_link() {
        let dir =
            std::env::temp_dir().join(format!("antiproof-fsutil-links-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        // write_atomic's temporary name is guessable: a link planted there
        // is passed over, its target untouched.
        let out = dir.join("out");
        let tmp = dir.join(format!(".out.tmp-{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        write_atomic(&out, |w| io::Write::write_all(w, b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        // create_fresh: a link, dangling or not, and a hard link are
        // refused and left as they are; a plain leftover is replaced.
        let link = dir.join("log");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = create_fresh(&link).unwrap_err();
        assert_eq!(
            e.to_string(),
            "is a symbolic link: refusing to write through it"
        );
        let dangling = dir.join("dangling");
        std::os::unix::fs::symlink(dir.join("nothing"), &dangling).unwrap();
        assert!(create_fresh(&dangling).is_err());
        assert!(!dir.join("nothing").exists());
        let hard = dir.join("hard");
        std::fs::hard_link(&victim, &hard).unwrap();
        let e = create_fresh(&hard).unwrap_err();
        assert!(e.to_string().contains("other hard links"), "{e}");
        assert!(create_fresh(&dir).is_err(), "a directory");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        let leftover = dir.join("leftover");
        std::fs::write(&leftover, "old").unwrap();
        io::Write::write_all(&mut create_fresh(&leftover).unwrap(), b"x").unwrap();
        assert_eq!(std::fs::read_to_string(&leftover).unwrap(), "x");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
