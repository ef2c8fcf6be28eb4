//! Private temporary files for the reader: decompressed copies of
//! compressed win-tree files and snapshots of plain ones, each unlinked as
//! soon as it is created, and bounded by the room their file system has.
//!
//! The files lie in `$ANTIPROOF_STATE_DIR/cache` when that variable is
//! set, else in the system temp dir (`$TMPDIR`, else `/tmp`). One file may
//! hold at most the space free there when it is created, less what is kept
//! free (a sixteenth of it, at most 1 GiB); a decompressed copy at most
//! [`BOMB_RATIO`] times its compressed size too (at least
//! [`BOMB_FLOOR`]). `$ANTIPROOF_DECOMPRESS_LIMIT`, when set, bounds every
//! such file instead of the ratio (a number of bytes, optionally with `K`,
//! `M`, `G` or `T`: binary multiples; never past the free space). Going
//! past it is an
//! [`OverLimit`] error, checked before each write, so a file that
//! decompresses to more than the disk holds (a zstd "bomb": eight frames
//! of a thousand million zeros each in 263 KB) is refused, never written
//! out until the disk is full.

use std::fmt;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The environment variable bounding a temporary file's size.
pub const LIMIT_ENV: &str = "ANTIPROOF_DECOMPRESS_LIMIT";

/// Where the temporary files are written.
pub fn dir() -> PathBuf {
    match std::env::var_os("ANTIPROOF_STATE_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d).join("cache"),
        _ => std::env::temp_dir(),
    }
}

/// Creates an anonymous (already unlinked) read-write file in `dir`: it
/// lives on only through the handle (and a memory map of it), and is gone
/// when the process exits, however it exits.
pub fn anonymous_file(dir: &Path) -> io::Result<File> {
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

/// A size in bytes, in words (`1.07 GB`, `512 bytes`).
pub fn size(bytes: u64) -> String {
    match bytes {
        0..10_000 => format!("{bytes} bytes"),
        10_000..1_000_000 => format!("{:.1} kB", bytes as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", bytes as f64 / 1e6),
        _ => format!("{:.2} GB", bytes as f64 / 1e9),
    }
}

/// How many times its compressed size a compressed win-tree file may
/// decompress to, unless `$ANTIPROOF_DECOMPRESS_LIMIT` says otherwise.
/// Win-tree files compress 3 to 5 times (`proofs/`: at most 4.9 with zstd
/// at level 9; Watkins' `e3wins` 4.1 with bzip2), zeros 32,000 times
/// (zstd), so a thousand is far from both.
pub const BOMB_RATIO: u64 = 1000;

/// The least that [`BOMB_RATIO`] allows a small file.
pub const BOMB_FLOOR: u64 = 64 << 20;

/// A byte count as `$ANTIPROOF_DECOMPRESS_LIMIT` gives it: digits,
/// optionally followed by `K`, `M`, `G` or `T` (binary multiples) and a
/// `B`.
fn parse_limit(s: &str) -> Option<u64> {
    let t = s.trim();
    let t = t.strip_suffix(['B', 'b']).unwrap_or(t);
    let (digits, shift) = match t.char_indices().last() {
        Some((i, 'K' | 'k')) => (&t[..i], 10),
        Some((i, 'M' | 'm')) => (&t[..i], 20),
        Some((i, 'G' | 'g')) => (&t[..i], 30),
        Some((i, 'T' | 't')) => (&t[..i], 40),
        _ => (t, 0),
    };
    let n: u64 = digits.trim().parse().ok()?;
    n.checked_mul(1 << shift)
}

/// How much one temporary file may hold, and what bounds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Room {
    /// The most bytes the file may hold.
    pub bytes: u64,
    /// What sets the bound, in words.
    pub why: String,
}

impl Room {
    /// The room for a file in `dir` whose file system has `free` bytes
    /// available: of a decompressed copy of `compressed` bytes (`None`: a
    /// plain copy), with `limit` the value of `$ANTIPROOF_DECOMPRESS_LIMIT`
    /// if set.
    fn new(
        dir: &Path,
        free: u64,
        compressed: Option<u64>,
        limit: Option<&str>,
    ) -> io::Result<Room> {
        let keep = (free / 16).min(1 << 30);
        let disk = Room {
            bytes: free - keep,
            why: format!(
                "the free space of {}, {}, less {} kept free",
                dir.display(),
                size(free),
                size(keep)
            ),
        };
        let bound = match (limit, compressed) {
            (Some(text), _) => {
                let Some(bytes) = parse_limit(text) else {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("{LIMIT_ENV}={text:?}: give a size in bytes such as 8G or 500M"),
                    ));
                };
                Room {
                    bytes,
                    why: format!("{LIMIT_ENV}={text}"),
                }
            }
            (None, Some(c)) => Room {
                bytes: c.saturating_mul(BOMB_RATIO).max(BOMB_FLOOR),
                why: format!(
                    "{BOMB_RATIO} times its {} compressed, far more than a win-tree file \
                     decompresses to",
                    size(c)
                ),
            },
            (None, None) => return Ok(disk),
        };
        Ok(if bound.bytes < disk.bytes {
            bound
        } else {
            disk
        })
    }

    /// The room for `file`, an anonymous file just made in `dir`, for a
    /// decompressed copy of `compressed` bytes (`None`: a plain copy): its
    /// file system's free space (`fstatvfs`), [`BOMB_RATIO`] and
    /// `$ANTIPROOF_DECOMPRESS_LIMIT`.
    pub fn of(file: &File, dir: &Path, compressed: Option<u64>) -> io::Result<Room> {
        use std::os::fd::AsRawFd;
        let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
        // SAFETY: `file` is an open descriptor and `st` a buffer of the
        // struct fstatvfs fills; it is read only after a success.
        let rc = unsafe { libc::fstatvfs(file.as_raw_fd(), st.as_mut_ptr()) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fstatvfs succeeded, so it filled the struct.
        let st = unsafe { st.assume_init() };
        // (u64 here; narrower on some targets.)
        #[allow(clippy::unnecessary_cast)]
        let free = (st.f_bavail as u64).saturating_mul(st.f_frsize as u64);
        let limit = std::env::var(LIMIT_ENV).ok();
        Room::new(
            dir,
            free,
            compressed,
            limit.as_deref().filter(|s| !s.is_empty()),
        )
    }
}

/// What changes the bound, in words.
const HINT: &str = "ANTIPROOF_DECOMPRESS_LIMIT=SIZE sets the bound (within the free space), \
                    ANTIPROOF_STATE_DIR=DIR puts the temporary files in DIR/cache";

/// A temporary file would hold more than its [`Room`]: the error inside
/// the `io::Error` the writers return (kind `FileTooLarge`).
#[derive(Debug)]
pub struct OverLimit {
    /// The room there was.
    pub room: Room,
    /// Bytes written before the refusal.
    pub written: u64,
    /// What was to be written: `Some((offset, size))` when a compressed
    /// frame at that byte offset stated its size (nothing of it written),
    /// `None` when the running total went past.
    pub stated: Option<(u64, u64)>,
}

impl fmt::Display for OverLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let before = match self.written {
            0 => String::new(),
            n => format!(", which with the {} written before it is", size(n)),
        };
        match self.stated {
            Some((offset, n)) => write!(
                f,
                "refused to decompress: the frame at byte offset {offset} states {} decompressed{}, \
                 more than the {} a temporary file may take here ({}); nothing of it was \
                 written. {HINT}",
                size(n),
                before,
                size(self.room.bytes),
                self.room.why
            ),
            None => write!(
                f,
                "stopped decompressing after {}: the data comes to more than the {} a \
                 temporary file may take here ({}); what was written is removed. {HINT}",
                size(self.written),
                size(self.room.bytes),
                self.room.why
            ),
        }
    }
}

impl std::error::Error for OverLimit {}

/// Whether an I/O error is an [`OverLimit`].
pub fn is_over_limit(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<OverLimit>())
}

/// A writer that refuses to go past a [`Room`].
pub struct Bounded<W> {
    inner: W,
    room: Room,
    written: u64,
}

impl<W: Write> Bounded<W> {
    /// Bounds `inner` by `room`.
    pub fn new(inner: W, room: Room) -> Bounded<W> {
        Bounded {
            inner,
            room,
            written: 0,
        }
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    fn refuse(&self, stated: Option<(u64, u64)>) -> io::Error {
        io::Error::new(
            io::ErrorKind::FileTooLarge,
            OverLimit {
                room: self.room.clone(),
                written: self.written,
                stated,
            },
        )
    }

    /// Refuses, before anything of it is written, a frame at byte `offset`
    /// of the input that states it decompresses to `n` bytes, when they
    /// would not fit.
    pub fn expect(&self, offset: u64, n: u64) -> io::Result<()> {
        if self.written.saturating_add(n) > self.room.bytes {
            return Err(self.refuse(Some((offset, n))));
        }
        Ok(())
    }

    /// The inner writer.
    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Write for Bounded<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.written.saturating_add(buf.len() as u64) > self.room.bytes {
            return Err(self.refuse(None));
        }
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A private copy of the regular file `file` (opened from `path`): an
/// anonymous file in [`dir`] holding its bytes as they were when copied,
/// which no other process can reach, so what is read from it (or a map of
/// it) cannot change. Copied with `copy_file_range` where the kernel has
/// it (a reflink on file systems that share extents, such as btrfs and
/// XFS). A file that shrinks while it is copied is an error naming it.
pub fn snapshot(file: &File, path: &Path) -> io::Result<File> {
    let len = file.metadata()?.len();
    let dir = dir();
    let out = anonymous_file(&dir)?;
    let room = Room::of(&out, &dir, None)?;
    if len > room.bytes {
        return Err(io::Error::new(
            io::ErrorKind::FileTooLarge,
            format!(
                "no room for a private copy of its {} (a file this large is copied, not \
                 mapped as it stands, so that another process changing it cannot crash the \
                 reader): {} allowed ({}). {HINT}",
                size(len),
                size(room.bytes),
                room.why
            ),
        ));
    }
    // `&File` to `&File` is copied in the kernel (copy_file_range).
    let mut src = file.take(len);
    let mut dst = &out;
    let copied = io::copy(&mut src, &mut dst)?;
    if copied != len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "{} changed while it was read: {} bytes when opened, {copied} copied",
                path.display(),
                len
            ),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_read_with_binary_units() {
        assert_eq!(parse_limit("512"), Some(512));
        assert_eq!(parse_limit("4K"), Some(4096));
        assert_eq!(parse_limit("8G"), Some(8 << 30));
        assert_eq!(parse_limit(" 2 MB"), Some(2 << 20));
        assert_eq!(parse_limit("1t"), Some(1 << 40));
        for bad in ["", "G", "-1", "1.5G", "lots", "99999999999999T"] {
            assert_eq!(parse_limit(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_room_is_the_free_space_less_a_reserve_or_a_tighter_bound() {
        let d = Path::new("/tmp");
        let r = Room::new(d, 16 << 30, None, None).unwrap();
        assert_eq!(r.bytes, 15 << 30, "1 GiB kept free of 16");
        assert!(r.why.contains("free space of /tmp"), "{}", r.why);
        let r = Room::new(d, 1600, None, None).unwrap();
        assert_eq!(r.bytes, 1500, "a sixteenth kept free");
        // A decompressed copy: a thousand times the compressed size, at
        // least 64 MiB, within the free space.
        let r = Room::new(d, 16 << 30, Some(264_048), None).unwrap();
        assert_eq!(r.bytes, 264_048_000);
        assert!(
            r.why.contains("1000 times its 264.0 kB compressed"),
            "{}",
            r.why
        );
        assert_eq!(
            Room::new(d, 16 << 30, Some(10), None).unwrap().bytes,
            64 << 20
        );
        assert_eq!(Room::new(d, 1600, Some(10), None).unwrap().bytes, 1500);
        // A stated limit replaces the ratio, not the free space.
        let r = Room::new(d, 16 << 30, Some(10), Some("1G")).unwrap();
        assert_eq!(r.bytes, 1 << 30);
        assert!(r.why.contains("ANTIPROOF_DECOMPRESS_LIMIT=1G"), "{}", r.why);
        let r = Room::new(d, 16 << 30, None, Some("1M")).unwrap();
        assert_eq!(r.bytes, 1 << 20);
        let r = Room::new(d, 16 << 30, Some(10), Some("1T")).unwrap();
        assert_eq!(r.bytes, 15 << 30);
        let e = Room::new(d, 1 << 30, None, Some("a lot")).unwrap_err();
        assert!(e.to_string().contains(LIMIT_ENV), "{e}");
    }

    #[test]
    fn bounded_writers_refuse_before_writing_past_the_room() {
        let room = Room {
            bytes: 10,
            why: "test".into(),
        };
        let mut w = Bounded::new(Vec::new(), room);
        w.write_all(b"12345678").unwrap();
        assert!(w.expect(0, 2).is_ok());
        let e = w.expect(40, 3).unwrap_err();
        assert!(is_over_limit(&e));
        assert!(e.to_string().contains("byte offset 40"), "{e}");
        let e = w.write_all(b"abc").unwrap_err();
        assert!(is_over_limit(&e), "{e}");
        assert!(e.to_string().contains("after 8 bytes"), "{e}");
        assert_eq!(w.into_inner(), b"12345678", "nothing past the room");
    }
}
