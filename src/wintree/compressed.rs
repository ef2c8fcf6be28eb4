//! Compressed win-tree files (`.bz2`, `.zst`), read directly.
//!
//! The reader needs random access, so a compressed file is decompressed
//! once, in full, to a temporary file that is unlinked as soon as it is
//! created: the data lives on only through the open handle and then the
//! memory map, and is gone when the process exits, however it exits (an
//! error, a panic, a signal, SIGKILL). The temporary file lies in
//! `$ANTIPROOF_STATE_DIR/cache` when that variable is set, else in the
//! system temp dir (`$TMPDIR`, else `/tmp`); it needs the decompressed
//! size free there (4.5 GB for Watkins' `e3wins`).
//!
//! The compression is told by the file's first bytes, whatever its name:
//! bzip2 `BZh1`..`BZh9`, zstd `28 b5 2f fd`, or a zstd skippable frame
//! (`50`..`5f` `2a 4d 18`, as `pzstd` writes one before each frame). A
//! plain win-tree file never begins with the bzip2 magic (bit 30 of its
//! root record, "root has a child", would be clear), one beginning with
//! the zstd magic would claim over a thousand million node slots with the
//! unused bit 31 set, and one beginning with a skippable frame's magic
//! would claim 407 million nodes with "root has a child" clear, which the
//! reader rejects.

use std::fs::File;
use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A compression a win-tree file may come in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Compression {
    /// bzip2 (one stream or several concatenated, as `pbzip2` writes).
    Bzip2,
    /// Zstandard (one frame or several, skippable frames among them, as
    /// `pzstd` writes).
    Zstd,
}

impl Compression {
    /// The name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            Compression::Bzip2 => "bzip2",
            Compression::Zstd => "zstd",
        }
    }

    /// The compression whose magic bytes begin `head`, if any.
    pub fn sniff(head: &[u8]) -> Option<Compression> {
        match head {
            [b'B', b'Z', b'h', b'1'..=b'9', ..] => Some(Compression::Bzip2),
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Some(Compression::Zstd),
            // A skippable frame (RFC 8878, 3.1.2): magic 0x184D2A50 to
            // 0x184D2A5F, little-endian. libzstd's decoder skips it.
            [0x50..=0x5f, 0x2a, 0x4d, 0x18, ..] => Some(Compression::Zstd),
            _ => None,
        }
    }
}

/// The compression of an open file, from its first four bytes (read
/// without moving the file's cursor).
pub fn sniff_file(file: &File) -> io::Result<Option<Compression>> {
    use std::os::unix::fs::FileExt;
    let mut head = [0u8; 4];
    let mut n = 0;
    while n < head.len() {
        match file.read_at(&mut head[n..], n as u64)? {
            0 => break,
            k => n += k,
        }
    }
    Ok(Compression::sniff(&head[..n]))
}

/// Whether a file name is one of a win-tree file, plain or compressed:
/// `*.tree`, `*.tree.zst`, `*.tree.bz2`.
pub fn is_tree_name(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        [".tree", ".tree.zst", ".tree.bz2"]
            .iter()
            .any(|e| n.ends_with(e))
    })
}

/// The file name of a win-tree file without its compression suffix
/// (`x.tree.zst` gives `x.tree`): the name its sidecar is found by.
pub fn plain_name(path: &Path) -> PathBuf {
    match path.extension().and_then(|e| e.to_str()) {
        Some("zst" | "bz2") => path.with_extension(""),
        _ => path.to_path_buf(),
    }
}

/// The zstd level `antiproof export` writes with by default: about ten
/// times zstd's own default's time for a file 7 % smaller (measured on the
/// certificates of `proofs/`: level 3 gives 11.4 MB, 9 10.7 MB, 19 8.7 MB
/// at 16 times the time of 9).
pub const ZSTD_LEVEL: i32 = 9;

/// The highest zstd level.
pub const ZSTD_MAX_LEVEL: i32 = 22;

/// A win-tree file's bytes compressed as one zstd frame at `level` (1 to
/// [`ZSTD_MAX_LEVEL`]), as `verify`, `browse`, `serve` and `openings` read
/// them.
pub fn zstd_bytes(bytes: &[u8], level: i32) -> io::Result<Vec<u8>> {
    zstd::encode_all(bytes, level)
}

/// Whether a name asks for a zstd file (`*.zst`).
pub fn is_zstd_name(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "zst")
}

/// Where decompressed copies are written.
fn temp_dir() -> PathBuf {
    match std::env::var_os("ANTIPROOF_STATE_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d).join("cache"),
        _ => std::env::temp_dir(),
    }
}

/// Creates an anonymous (already unlinked) read-write file in `dir`.
fn anonymous_file(dir: &Path) -> io::Result<File> {
    std::fs::create_dir_all(dir)?;
    for attempt in 0u32.. {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = dir.join(format!(
            ".antiproof-tree-{}-{nanos:x}-{attempt}",
            std::process::id()
        ));
        let mut opts = std::fs::OpenOptions::new();
        opts.read(true).write(true).create_new(true);
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        match opts.open(&path) {
            Ok(f) => {
                std::fs::remove_file(&path)?;
                return Ok(f);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => continue,
            Err(e) => return Err(e),
        }
    }
    unreachable!("the loop returns")
}

/// Counts the compressed bytes read and shows progress on a terminal.
struct Progress<R> {
    inner: R,
    done: u64,
    total: u64,
    started: Instant,
    last: Instant,
    name: String,
    show: bool,
}

impl<R: Read> Read for Progress<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.done += n as u64;
        if self.show && self.last.elapsed() >= Duration::from_millis(500) {
            self.last = Instant::now();
            let secs = self.started.elapsed().as_secs_f64();
            let left = if self.done > 0 {
                secs * (self.total.saturating_sub(self.done)) as f64 / self.done as f64
            } else {
                0.0
            };
            let mb = |b: u64| b as f64 / 1e6;
            let mut err = io::stderr().lock();
            let _ = write!(
                err,
                "\rdecompressing {}: {:.0} / {:.0} MB ({:.0}%), about {:.0} s left   ",
                self.name,
                mb(self.done),
                mb(self.total),
                100.0 * self.done as f64 / self.total.max(1) as f64,
                left
            );
            let _ = err.flush();
        }
        Ok(n)
    }
}

/// Decompresses `file` (of the given compression) into an unlinked
/// temporary file and returns that file, rewound. Damaged or truncated
/// data is an `InvalidData` error saying which compression failed; a full
/// disk or another I/O error is returned as it is.
pub fn decompress(file: File, path: &Path, kind: Compression) -> io::Result<File> {
    let total = file.metadata()?.len();
    let show = io::stderr().is_terminal();
    let reader = Progress {
        inner: io::BufReader::with_capacity(1 << 20, file),
        done: 0,
        total,
        started: Instant::now(),
        last: Instant::now(),
        name: path.display().to_string(),
        show,
    };
    let out = anonymous_file(&temp_dir())?;
    let mut w = io::BufWriter::with_capacity(1 << 20, &out);
    let damaged = |e: io::Error| {
        if e.kind() == io::ErrorKind::InvalidData
            || e.kind() == io::ErrorKind::UnexpectedEof
            || e.kind() == io::ErrorKind::Other
        {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("damaged {} data: {e}", kind.name()),
            )
        } else {
            e
        }
    };
    let copied = match kind {
        Compression::Bzip2 => io::copy(&mut bzip2::read::MultiBzDecoder::new(reader), &mut w),
        Compression::Zstd => {
            let mut d = zstd::stream::read::Decoder::new(reader)?;
            io::copy(&mut d, &mut w)
        }
    };
    if show {
        let _ = write!(io::stderr(), "\r\x1b[K");
    }
    copied.map_err(damaged)?;
    w.flush()?;
    drop(w);
    Ok(out)
}

/// The win-tree files of a directory, sorted by name: `*.tree`, and
/// `*.tree.zst` and `*.tree.bz2` unless the plain `*.tree` is there too
/// (the same proof once).
pub fn tree_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if is_tree_name(&p) && p.is_file() {
            all.push(p);
        }
    }
    all.sort();
    let plain: std::collections::HashSet<PathBuf> = all
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "tree"))
        .cloned()
        .collect();
    // Of x.tree.bz2 and x.tree.zst (no x.tree), the first by name.
    let mut seen = std::collections::HashSet::new();
    all.retain(|p| {
        let base = plain_name(p);
        if base != *p && plain.contains(&base) {
            return false;
        }
        seen.insert(base)
    });
    Ok(all)
}
