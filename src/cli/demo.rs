//! `antiproof demo`: the set-up check. Proves the embedded default line
//! (1.e3 d5, White wins, international rules) into a temporary store,
//! exports the proof as a win-tree file, and certifies the file with the
//! independent checker, printing each step's report.

use super::out::outln;
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `antiproof demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// The line to prove (default: 1.e3 d5, which White wins).
    #[arg(default_values_t = ["e3".to_string(), "d5".to_string()])]
    moves: Vec<String>,
    /// Keep the store and the win-tree file in this directory instead of a
    /// temporary one.
    #[arg(long)]
    dir: Option<PathBuf>,
}

/// The demo's own temporary directory, removed when dropped (on every
/// path out of [`run`], errors and panics included).
struct TempDir(PathBuf);

impl TempDir {
    /// Creates a fresh directory in `TMPDIR` (or the system's default),
    /// which must exist: it is never created, so a `TMPDIR` that names a
    /// missing directory is an error and nothing is left behind.
    fn new() -> anyhow::Result<TempDir> {
        let base = std::env::temp_dir();
        if !base.is_dir() {
            anyhow::bail!(
                "the temporary directory {} (TMPDIR) is not an existing directory; \
                 set TMPDIR to one, or give --dir DIR",
                base.display()
            );
        }
        for n in 0u32.. {
            let p = base.join(format!("antiproof-demo-{}-{n}", std::process::id()));
            match std::fs::create_dir(&p) {
                Ok(()) => return Ok(TempDir(p)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => {}
                Err(e) => return Err(e).with_context(|| format!("creating {}", p.display())),
            }
        }
        unreachable!("the loop returns")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `antiproof demo`.
pub fn run(args: DemoArgs) -> anyhow::Result<u8> {
    let (dir, _temp) = match &args.dir {
        Some(d) => {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
            (d.clone(), None)
        }
        None => {
            let t = TempDir::new()?;
            (t.0.clone(), Some(t))
        }
    };
    let db = dir.join("demo.redb").display().to_string();
    let tree = dir.join("demo.tree").display().to_string();
    let step = |title: &str, words: &[&str]| -> anyhow::Result<u8> {
        outln!("== {title}: antiproof {}", words.join(" "))?;
        let mut all = vec!["antiproof".to_string()];
        all.extend(words.iter().map(|w| w.to_string()));
        // After `--`, so a move is never taken for an option (`--` is a
        // null move, refused as such by the line reader).
        all.push("--".to_string());
        all.extend(args.moves.iter().cloned());
        let code = super::run_words(&all)?;
        outln!()?;
        Ok(code)
    };
    let result = (|| {
        let code = step("prove", &["prove", "--db", &db])?;
        if code != super::EXIT_OK {
            return Ok(code);
        }
        let code = step("export", &["export", "--db", &db, "-o", &tree])?;
        if code != super::EXIT_OK {
            return Ok(code);
        }
        step(
            "verify (independent checker, shakmaty rules)",
            &["verify", "--tree", &tree],
        )
    })();
    let code = result?;
    if code == super::EXIT_OK {
        outln!("demo: proven, exported and certified")?;
    }
    Ok(code)
}
