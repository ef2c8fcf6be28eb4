//! Compressed win-tree files (`.bz2`, `.zst`), read directly.
//!
//! The reader needs random access, so a compressed file is decompressed
//! once, in full, to a temporary file that is unlinked as soon as it is
//! created: the data lives on only through the open handle and then the
//! memory map, and is gone when the process exits, however it exits (an
//! error, a panic, a signal, SIGKILL). The temporary file lies in
//! `$ANTIPROOF_STATE_DIR/cache` when that variable is set, else in the
//! system temp dir (`$TMPDIR`, else `/tmp`); it needs the decompressed
//! size free there (4.5 GB for Watkins' `e3wins`), and what it may take is
//! bounded ([`super::scratch`]): zstd frames are decoded one by one, each
//! refused from its header when it states a size past the bound.
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

use super::scratch;
use std::fs::File;
use std::io::{self, BufRead, IsTerminal, Read, Write};
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
/// temporary file ([`super::scratch`]) and returns that file. Damaged or
/// truncated data is an `InvalidData` error saying which compression
/// failed; data that would not fit the temporary file's room is refused
/// (kind `FileTooLarge`, an [`super::scratch::OverLimit`] inside): a zstd
/// frame that states its size before anything of it is written, else when
/// the running total gets there; a full disk or another I/O error is
/// returned as it is.
pub fn decompress(file: File, path: &Path, kind: Compression) -> io::Result<File> {
    let total = file.metadata()?.len();
    let show = io::stderr().is_terminal();
    let reader = Progress {
        inner: file,
        done: 0,
        total,
        started: Instant::now(),
        last: Instant::now(),
        name: path.display().to_string(),
        show,
    };
    let dir = scratch::dir();
    let out = scratch::anonymous_file(&dir)?;
    let room = scratch::Room::of(&out, &dir, Some(total))?;
    let mut w = scratch::Bounded::new(io::BufWriter::with_capacity(1 << 20, &out), room);
    let damaged = |e: io::Error| {
        if scratch::is_over_limit(&e) {
            e
        } else if e.kind() == io::ErrorKind::InvalidData
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
        Compression::Bzip2 => io::copy(
            &mut bzip2::read::MultiBzDecoder::new(io::BufReader::with_capacity(1 << 20, reader)),
            &mut w,
        )
        .map(drop),
        Compression::Zstd => zstd_frames(&mut Input::new(reader), &mut w),
    };
    if show {
        let _ = write!(io::stderr(), "\r\x1b[K");
    }
    copied.map_err(damaged)?;
    w.flush()?;
    drop(w);
    Ok(out)
}

/// The magic number of a zstd frame, little-endian.
const ZSTD_MAGIC: u32 = 0xfd2f_b528;

/// The magic numbers of skippable frames, 0x184D2A50 to 0x184D2A5F, with
/// the low four bits cleared.
const SKIPPABLE_MAGIC: u32 = 0x184d_2a50;

/// The most bytes a zstd frame header takes (magic, descriptor, window,
/// dictionary id, content size).
const FRAME_HEADER_MAX: usize = 18;

/// Decodes the zstd frames of `input` into `w` one by one: skippable
/// frames are skipped, and a frame stating its decompressed size is
/// refused before any of it is written when it would not fit `w`'s room.
fn zstd_frames<R: Read, W: Write>(
    input: &mut Input<R>,
    w: &mut scratch::Bounded<W>,
) -> io::Result<()> {
    let bad = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
    let mut ctx = zstd::zstd_safe::DCtx::create();
    let mut frames = 0u64;
    loop {
        let offset = input.offset;
        let head = input.peek(FRAME_HEADER_MAX)?;
        if head.is_empty() {
            if frames == 0 {
                return Err(bad("no zstd frame in the file".into()));
            }
            return Ok(());
        }
        if head.len() < 4 {
            return Err(bad(format!(
                "the file ends inside a frame header at byte offset {offset}"
            )));
        }
        let magic = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
        if magic & !0xf == SKIPPABLE_MAGIC {
            if head.len() < 8 {
                return Err(bad(format!(
                    "the file ends inside a skippable frame header at byte offset {offset}"
                )));
            }
            let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as u64;
            if input.skip(8 + len)? != 8 + len {
                return Err(bad(format!(
                    "the file ends inside the skippable frame at byte offset {offset}"
                )));
            }
            continue;
        }
        if magic != ZSTD_MAGIC {
            return Err(bad(format!(
                "no zstd frame at byte offset {offset} (it begins {magic:#010x})"
            )));
        }
        match zstd::zstd_safe::get_frame_content_size(head) {
            Ok(Some(n)) => w.expect(offset, n)?,
            Ok(None) => {}
            Err(_) => {
                return Err(bad(format!(
                    "bad zstd frame header at byte offset {offset}"
                )));
            }
        }
        let mut d = zstd::stream::read::Decoder::with_context(&mut *input, &mut ctx).single_frame();
        io::copy(&mut d, w)?;
        d.finish_frame()?;
        frames += 1;
    }
}

/// A buffered reader that can look ahead a few bytes (a frame header)
/// and counts the bytes consumed.
struct Input<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// Bytes consumed since the start.
    offset: u64,
}

impl<R: Read> Input<R> {
    fn new(inner: R) -> Input<R> {
        Input {
            inner,
            buf: vec![0; 1 << 20],
            pos: 0,
            end: 0,
            offset: 0,
        }
    }

    /// The next `n` bytes (fewer only at the end of the input), not
    /// consumed.
    fn peek(&mut self, n: usize) -> io::Result<&[u8]> {
        if self.end - self.pos < n {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
            while self.end < n {
                match self.inner.read(&mut self.buf[self.end..]) {
                    Ok(0) => break,
                    Ok(k) => self.end += k,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(&self.buf[self.pos..self.end.min(self.pos + n)])
    }

    /// Consumes up to `n` bytes; how many there were.
    fn skip(&mut self, n: u64) -> io::Result<u64> {
        let mut left = n;
        while left > 0 {
            let k = (self.fill_buf()?.len() as u64).min(left);
            if k == 0 {
                break;
            }
            self.consume(k as usize);
            left -= k;
        }
        Ok(n - left)
    }
}

impl<R: Read> Read for Input<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let b = self.fill_buf()?;
            let n = b.len().min(out.len());
            out[..n].copy_from_slice(&b[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: Read> io::BufRead for Input<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.end {
            self.pos = 0;
            self.end = 0;
            loop {
                match self.inner.read(&mut self.buf) {
                    Ok(k) => {
                        self.end = k;
                        break;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(&self.buf[self.pos..self.end])
    }

    fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.end);
        self.offset += n as u64;
    }
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
