//! Compressed certificates (`.tree.bz2`, `.tree.zst`) read directly by
//! `verify --tree`, `browse --tree` and `openings`: the same verdict and
//! figures as the plain file; damaged data is exit 2 naming the file; no
//! decompressed copy is left behind.

use crate::util;
use std::path::Path;
use std::process::Command;

fn zst(bytes: &[u8]) -> Vec<u8> {
    zstd::encode_all(bytes, 3).unwrap()
}

fn bz2(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// The JSON report without its timings.
fn figures(json: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(json).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("seconds");
    o.remove("positions_per_second");
    v
}

/// Whether the cache directory holds no file (the copies are unlinked).
fn cache_is_empty(state: &Path) {
    let cache = state.join("cache");
    if cache.is_dir() {
        let left: Vec<_> = std::fs::read_dir(&cache).unwrap().collect();
        assert!(left.is_empty(), "left in {}: {left:?}", cache.display());
    }
}

#[test]
fn compressed_trees_verify_like_the_plain_file() {
    let d = util::temp_dir("same");
    let state = d.join("state");
    let plain = Path::new(env!("CARGO_MANIFEST_DIR")).join("proofs/e3-Na6.tree");
    let bytes = std::fs::read(&plain).unwrap();
    // Names that do not say the compression: the magic bytes do.
    let z = d.join("e3-Na6.tree.zst");
    let b = d.join("e3-Na6.bin");
    std::fs::write(&z, zst(&bytes)).unwrap();
    std::fs::write(&b, bz2(&bytes)).unwrap();
    let (code, want, err) = util::antiproof_with_state(
        &state,
        &["verify", "--json", "--tree", plain.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{err}");
    for f in [&z, &b] {
        let (code, out, err) = util::antiproof_with_state(
            &state,
            &["verify", "--json", "--tree", f.to_str().unwrap()],
        );
        assert_eq!(code, 0, "{}: {err}", f.display());
        assert_eq!(figures(&out), figures(&want), "{}", f.display());
        assert!(err.is_empty(), "no progress off a terminal: {err}");
    }
    cache_is_empty(&state);

    // browse reads it too.
    let (code, out, err) =
        util::antiproof_with_state(&state, &["browse", "--tree", z.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Na6"), "{out}");

    // openings lists *.tree.zst (and *.tree.bz2) beside *.tree, with the
    // sidecar of the plain name.
    let proofs = d.join("proofs");
    std::fs::create_dir_all(&proofs).unwrap();
    std::fs::copy(&z, proofs.join("e3-Na6.tree.zst")).unwrap();
    std::fs::copy(&b, proofs.join("e3-Na6.tree.bz2")).unwrap();
    let (code, out, err) = util::antiproof_with_state(
        &state,
        &[
            "openings",
            "--long",
            "--verify",
            "--proofs",
            proofs.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("e3 Na6 (international"), "{out}");
    assert!(out.contains("verified now"), "{out}");
    assert!(out.contains("(1 files)"), "one proof, listed once: {out}");
    cache_is_empty(&state);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn damaged_compressed_trees_are_exit_2_naming_the_file() {
    let d = util::temp_dir("damaged");
    let state = d.join("state");
    let bytes =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("proofs/e3-g6.tree")).unwrap();
    for (name, data) in [("t.tree.zst", zst(&bytes)), ("t.tree.bz2", bz2(&bytes))] {
        let f = d.join(name);
        // Truncated.
        std::fs::write(&f, &data[..data.len() / 2]).unwrap();
        let (code, out, err) =
            util::antiproof_with_state(&state, &["verify", "--tree", f.to_str().unwrap()]);
        assert_eq!(code, 2, "{name}: {out}{err}");
        assert!(err.contains(f.to_str().unwrap()), "{name}: {err}");
        assert!(err.contains("damaged"), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        // A byte flipped in the middle.
        let mut bad = data.clone();
        let mid = bad.len() / 2;
        bad[mid] ^= 0x5a;
        std::fs::write(&f, &bad).unwrap();
        let (code, out, err) =
            util::antiproof_with_state(&state, &["verify", "--tree", f.to_str().unwrap()]);
        assert!(code == 2 || code == 1, "{name}: {code} {out}{err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        // Sound compression of a malformed tree: rejected.
        let f2 = d.join(format!("short-{name}"));
        let short = if name.ends_with("zst") {
            zst(&bytes[..3])
        } else {
            bz2(&bytes[..3])
        };
        std::fs::write(&f2, short).unwrap();
        let (code, out, err) =
            util::antiproof_with_state(&state, &["verify", "--tree", f2.to_str().unwrap()]);
        assert_eq!(code, 1, "{name}: {out}{err}");
        assert!(out.contains("REJECTED: malformed file"), "{out}");
    }
    cache_is_empty(&state);
    std::fs::remove_dir_all(&d).unwrap();
}

/// A zstd skippable frame (magic `0x184D2A50 + nibble`, little-endian, then
/// the payload's length and the payload; RFC 8878 section 3.1.2).
fn skippable(nibble: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = (0x184D_2A50u32 + nibble as u32).to_le_bytes().to_vec();
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

/// What `pzstd` writes: the input in chunks, each zstd frame preceded by a
/// skippable frame holding the frame's compressed length (4 bytes).
fn pzstd_like(bytes: &[u8], chunks: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for part in bytes.chunks(bytes.len().div_ceil(chunks)) {
        let frame = zst(part);
        out.extend(skippable(0, &(frame.len() as u32).to_le_bytes()));
        out.extend(frame);
    }
    out
}

#[test]
fn zstd_files_beginning_with_skippable_frames_verify() {
    let d = util::temp_dir("skippable");
    let state = d.join("state");
    let plain = Path::new(env!("CARGO_MANIFEST_DIR")).join("proofs/e3-Na6.tree");
    let bytes = std::fs::read(&plain).unwrap();
    let (code, want, err) = util::antiproof_with_state(
        &state,
        &["verify", "--json", "--tree", plain.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{err}");
    // pzstd's layout, one chunk and three; and other skippable magics with
    // longer payloads, one after another, before and between the frames.
    let mut other = skippable(0xf, &[7u8; 300]);
    other.extend(skippable(0x3, b""));
    other.extend(zst(&bytes[..100]));
    other.extend(skippable(0x9, &[0u8; 17]));
    other.extend(zst(&bytes[100..]));
    for (name, data) in [
        ("one.tree.zst", pzstd_like(&bytes, 1)),
        ("three.tree.zst", pzstd_like(&bytes, 3)),
        ("other.bin", other),
    ] {
        let f = d.join(name);
        std::fs::write(&f, data).unwrap();
        let (code, out, err) = util::antiproof_with_state(
            &state,
            &["verify", "--json", "--tree", f.to_str().unwrap()],
        );
        assert_eq!(code, 0, "{name}: {out}{err}");
        assert_eq!(figures(&out), figures(&want), "{name}");
    }
    // Skippable frames and then no zstd frame, or damage after them: zstd
    // data, damaged (exit 2), not a malformed plain file.
    let mut cut = skippable(0, &[1, 2, 3, 4]);
    cut.extend(&zst(&bytes)[..20]);
    for (name, data) in [
        ("cut.tree.zst", cut),
        ("lonely.tree.zst", skippable(0, &[1, 2, 3, 4])[..6].to_vec()),
    ] {
        let f = d.join(name);
        std::fs::write(&f, data).unwrap();
        let (code, out, err) =
            util::antiproof_with_state(&state, &["verify", "--tree", f.to_str().unwrap()]);
        assert_eq!(code, 2, "{name}: {out}{err}");
        assert!(err.contains("damaged zstd data"), "{name}: {err}");
        assert!(err.contains(f.to_str().unwrap()), "{name}: {err}");
    }
    cache_is_empty(&state);
    std::fs::remove_dir_all(&d).unwrap();
}

/// Runs antiproof as [`run`] does, with `vars` set too.
fn run_with(state: &Path, vars: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let o = Command::new(util::EXE)
        .env("ANTIPROOF_STATE_DIR", state)
        .envs(vars.iter().copied())
        .args(args)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A zstd frame header stating `size` bytes of content (a 1 MiB window,
/// 8-byte content size; RFC 8878, 3.1.1.1) and one RLE block of one zero
/// byte: the header alone says what the frame would take.
fn frame_stating(size: u64) -> Vec<u8> {
    let mut f = vec![0x28, 0xb5, 0x2f, 0xfd, 0xc0, 0x50];
    f.extend_from_slice(&size.to_le_bytes());
    // Last block, RLE, regenerated size 1.
    f.extend_from_slice(&[0x0b, 0x00, 0x00, 0x00]);
    f
}

/// A file that decompresses to far more than it holds is refused before
/// it is written out (a zstd frame stating its size) or as soon as the
/// running total passes the room the temp dir has, or
/// `$ANTIPROOF_DECOMPRESS_LIMIT`: exit 2 naming the file and the bound,
/// nothing left behind. (Found by trying: a 263 KB `.zst` of eight 1 GB
/// frames of zeros was written out until TMPDIR was full.)
#[test]
fn files_decompressing_past_the_room_are_refused() {
    let d = util::temp_dir("bomb");
    let state = d.join("state");
    let fails = |vars: &[(&str, &str)], f: &Path, want: &[&str]| {
        let (code, out, err) = run_with(&state, vars, &["verify", "--tree", f.to_str().unwrap()]);
        assert_eq!(code, 2, "{}: {out}{err}", f.display());
        assert!(err.contains(f.to_str().unwrap()), "{err}");
        for w in want {
            assert!(err.contains(w), "{}: wants {w:?}: {err}", f.display());
        }
        assert!(!err.contains("panicked"), "{err}");
        cache_is_empty(&state);
    };
    // A frame stating an exabyte: more than the disk has, refused from its
    // header alone, nothing written (a stated limit past any disk, so the
    // free space is the bound).
    let huge = d.join("huge.tree.zst");
    std::fs::write(&huge, frame_stating(1 << 60)).unwrap();
    fails(
        &[("ANTIPROOF_DECOMPRESS_LIMIT", "4194304T")],
        &huge,
        &[
            "refused to decompress",
            "byte offset 0 states 1152921504.61 GB",
            "(the free space of",
            "nothing of it was written",
        ],
    );
    // After a pzstd skippable frame too, and at the frame after a sound
    // one; by default a file decompresses to at most a thousand times its
    // size (at least 64 MiB).
    let mut later = skippable(0, &[0; 4]);
    later.extend(zst(&[0u8; 5000]));
    let second = later.len();
    later.extend(frame_stating(1 << 40));
    let later_f = d.join("later.tree.zst");
    std::fs::write(&later_f, later).unwrap();
    fails(
        &[],
        &later_f,
        &[
            &format!(
                "byte offset {second} states 1099.51 GB decompressed, which with the 5000 bytes written before it"
            ),
            "1000 times its",
        ],
    );
    let mut e = zstd::stream::write::Encoder::new(Vec::new(), 1).unwrap();
    std::io::Write::write_all(&mut e, &vec![0u8; 128 << 20]).unwrap();
    let zeros = d.join("zeros.tree.zst");
    std::fs::write(&zeros, e.finish().unwrap()).unwrap();
    fails(
        &[],
        &zeros,
        &[
            "stopped decompressing after",
            "more than the 67.1 MB",
            "1000 times its",
        ],
    );

    // Eight frames of 4 MiB of zeros each (their sizes stated) under a
    // stated limit of 10 MiB: the third is refused before it is written.
    // (One-shot compression, as the `zstd` tool does a file, states the
    // size; the streaming encoder of `zst` does not.)
    let frame = zstd::bulk::compress(&vec![0u8; 4 << 20], 3).unwrap();
    assert!(matches!(
        zstd::zstd_safe::get_frame_content_size(&frame),
        Ok(Some(n)) if n == 4 << 20
    ));
    let eight: Vec<u8> = (0..8).flat_map(|_| frame.clone()).collect();
    let bomb = d.join("bomb.tree.zst");
    std::fs::write(&bomb, &eight).unwrap();
    let limit = [("ANTIPROOF_DECOMPRESS_LIMIT", "10M")];
    fails(
        &limit,
        &bomb,
        &[
            &format!("byte offset {} states 4.2 MB", 2 * frame.len()),
            "which with the 8.4 MB written before it",
            "ANTIPROOF_DECOMPRESS_LIMIT=10M",
        ],
    );
    // Frames that do not state their size (a streaming encoder's), and
    // bzip2, which never does: stopped when the running total passes the
    // limit.
    let mut e = zstd::stream::write::Encoder::new(Vec::new(), 1).unwrap();
    e.include_contentsize(false).unwrap();
    std::io::Write::write_all(&mut e, &vec![0u8; 32 << 20]).unwrap();
    let unsized_f = d.join("unsized.tree.zst");
    std::fs::write(&unsized_f, e.finish().unwrap()).unwrap();
    let bz = d.join("zeros.tree.bz2");
    std::fs::write(&bz, bz2(&vec![0u8; 32 << 20])).unwrap();
    for f in [&unsized_f, &bz] {
        fails(
            &limit,
            f,
            &[
                "stopped decompressing after",
                "more than the 10.5 MB a temporary file may take here (ANTIPROOF_DECOMPRESS_LIMIT=10M)",
                "what was written is removed",
            ],
        );
    }
    // A sound file under the limit is read as before; a bad limit is an
    // error naming the variable.
    let plain = Path::new(env!("CARGO_MANIFEST_DIR")).join("proofs/e3-Na6.tree");
    let z = d.join("e3-Na6.tree.zst");
    std::fs::write(&z, zst(&std::fs::read(&plain).unwrap())).unwrap();
    let (code, out, err) = run_with(&state, &limit, &["verify", "--tree", z.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    fails(
        &[("ANTIPROOF_DECOMPRESS_LIMIT", "lots")],
        &z,
        &["ANTIPROOF_DECOMPRESS_LIMIT=\"lots\": give a size"],
    );
    std::fs::remove_dir_all(&d).unwrap();
}
