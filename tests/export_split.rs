//! Certificates at scale: `export -o FILE.tree.zst` writes a compressed
//! certificate, `export --split-above SIZE` writes one certificate a reply
//! where a file would be larger, and `openings` adds the parts up again
//! (with the checker's rules): the line counts as proven only while every
//! part is there and certified.

use crate::util::{self, antiproof, temp_dir};
use std::path::{Path, PathBuf};

/// The `*.tree*` files of a directory, sorted.
fn trees(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains(".tree"))
        .collect();
    v.sort();
    v
}

/// A store holding the proof of 1.e4 (Black wins, 242 positions).
fn e4_store(d: &Path) -> String {
    let db = d.join("e4.redb");
    let db = db.to_str().unwrap().to_string();
    let (code, out, err) = antiproof(&["prove", "--db", &db, "e4"]);
    assert_eq!(code, 0, "{out}{err}");
    db
}

/// `antiproof export --db DB e4 -o OUT EXTRA...`.
fn export_e4(db: &str, out: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["export", "--db", db, "e4", "-o", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    antiproof(&args)
}

#[test]
fn a_split_proof_is_certified_part_by_part_and_adds_up_in_openings() {
    let d = temp_dir("export-split");
    let db = e4_store(&d);
    let parts = d.join("parts");
    std::fs::create_dir_all(&parts).unwrap();
    let out_name = parts.join("e4.tree");
    let (code, out, err) = export_e4(&db, &out_name, &["--split-above", "1K"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("split into 6 files"), "{out}");
    let files = trees(&parts);
    assert_eq!(files.len(), 6, "{files:?}");
    assert!(!out_name.exists(), "the whole file is not written");
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        // Named by the part's line: e4-b5-Bxb5-....tree.
        assert!(name.starts_with("e4-b5-Bxb5-"), "{name}");
        assert!(std::fs::metadata(f).unwrap().len() <= 1024, "{name}");
        let (code, out, err) = antiproof(&["verify", "--json", "--tree", f.to_str().unwrap()]);
        assert_eq!(code, 0, "{name}: {out}{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["verdict"], "certified", "{name}");
        assert_eq!(v["winner"], "black", "{name}");
        assert!(
            v["root_line"]
                .as_str()
                .unwrap()
                .starts_with("1. e4 b5 2. Bxb5"),
            "{name}: {v}"
        );
    }

    // verify certifies them together: each file, then the line they share.
    let mut args: Vec<String> = vec!["verify".into()];
    for f in &files {
        args.push("--tree".into());
        args.push(f.to_str().unwrap().into());
    }
    let (code, out, err) = antiproof(&[&args[..], &["e4".to_string()]].concat());
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("CERTIFIED together: 1. e4 is won by black, 6 files"),
        "{out}"
    );
    let (code, out, err) = antiproof(&[&args[..], &["--json".to_string()]].concat());
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["verdict"], "certified", "{v}");
    assert_eq!(v["files"].as_array().unwrap().len(), 6, "{v}");
    // Five of the six: 1.e4 is not proven by them, the reply named.
    let five = &args[..args.len() - 2];
    let (code, out, _) = antiproof(&[five, &["e4".to_string()]].concat());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("NOT CERTIFIED together: 1. e4 for black"),
        "{out}"
    );
    // A file that is not a win tree among them: rejected, named.
    let junk = d.join("junk.tree");
    std::fs::write(&junk, b"junk").unwrap();
    let with_junk = [
        &args[..],
        &["--tree".to_string(), junk.to_str().unwrap().to_string()],
    ]
    .concat();
    let (code, out, _) = antiproof(&with_junk);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("junk.tree: REJECTED: malformed file"), "{out}");
    assert!(
        out.contains("REJECTED: 1 of 7 files are not certified"),
        "{out}"
    );

    // Together they prove 1.e4 lost; each file listed under one entry.
    let dir = parts.to_str().unwrap();
    let (code, out, err) = antiproof(&["openings", "--verify", "--proofs", dir]);
    assert_eq!(code, 0, "{err}");
    let row = out.lines().find(|l| l.starts_with("e4 ")).unwrap();
    assert!(row.contains("black wins"), "{row}");
    assert!(row.contains("6 files"), "{row}");
    let (code, out, err) = antiproof(&["openings", "--long", "--verify", "--proofs", dir]);
    assert_eq!(code, 0, "{err}");
    let e4 = util::openings_block(&out, "1.e4:");
    assert!(e4.contains("black wins: international"), "{e4}");
    assert!(e4.contains("e4 b5 ... (6 files"), "{e4}");
    let (code, out, _) = antiproof(&["openings", "--json", "--verify", "--proofs", dir]);
    assert_eq!(code, 0);
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    let e4 = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["move"] == "e4")
        .unwrap();
    assert_eq!(e4["proven_here"]["winner"], "black");
    assert_eq!(e4["proven_here"]["proven_under"][0], "international");

    // One part gone: not proven, and what is missing is named.
    std::fs::remove_file(&files[0]).unwrap();
    let (code, out, err) = antiproof(&["openings", "--verify", "--proofs", dir]);
    assert_eq!(code, 0, "{err}");
    let row = out.lines().find(|l| l.starts_with("e4 ")).unwrap();
    assert!(row.contains("black: 0 of 1 replies to b5"), "{row}");
    let (code, long, err) = antiproof(&["openings", "--long", "--verify", "--proofs", dir]);
    assert_eq!(code, 0, "{err}");
    let e4 = util::openings_block(&long, "1.e4:");
    assert!(!e4.contains("black wins:"), "{e4}");
    assert!(
        e4.contains("black: 0 of 1 replies to b5 (international)"),
        "{e4}"
    );
    assert!(
        out.contains("1.e4 b5: replies not proven here yet: Bxb5"),
        "{out}"
    );

    // A part that is not certified does not count either.
    std::fs::write(&files[0], b"not a win-tree file at all").unwrap();
    let (code, out, err) = antiproof(&["openings", "--verify", "--proofs", dir]);
    // The damaged file is an error naming it (the table is not printed
    // with a part silently dropped).
    assert_ne!(code, 0, "{out}");
    assert!(
        err.contains(files[0].file_name().unwrap().to_str().unwrap()),
        "{err}"
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_zst_name_writes_a_compressed_certificate() {
    let d = temp_dir("export-zst");
    let db = e4_store(&d);
    let z = d.join("e4.tree.zst");
    let (code, out, err) = export_e4(&db, &z, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("uncompressed)"), "{out}");
    let bytes = std::fs::read(&z).unwrap();
    assert_eq!(&bytes[..4], &[0x28, 0xb5, 0x2f, 0xfd], "zstd magic");
    let (code, out, err) = antiproof(&["verify", "--tree", z.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    // Under the split size: one file, the name as given.
    let z2 = d.join("whole.tree.zst");
    let (code, out, err) = export_e4(&db, &z2, &["--split-above", "50M", "--zstd-level", "19"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("split into"), "{out}");
    assert!(z2.exists());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn absurd_split_sizes_and_levels_are_refused() {
    let d = temp_dir("export-absurd");
    let o = d.join("x.tree");
    let o = o.to_str().unwrap();
    for (flag, value, says) in [
        ("--split-above", "0", "give a size"),
        ("--split-above", "1", "too small"),
        ("--split-above", "-5M", "give a size"),
        ("--split-above", "2T", "too big"),
        ("--split-above", "lots", "give a size"),
        ("--zstd-level", "0", "1..=22"),
        ("--zstd-level", "23", "1..=22"),
    ] {
        let arg = format!("{flag}={value}");
        let (code, _, err) = antiproof(&["export", "--db", "none.redb", "e4", "-o", o, &arg]);
        assert_eq!(code, 2, "{flag} {value}: {err}");
        assert!(err.contains(says), "{flag} {value}: {err}");
    }
    assert!(!Path::new(o).exists());
    std::fs::remove_dir_all(&d).unwrap();
}
