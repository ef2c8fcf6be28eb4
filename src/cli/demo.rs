//! `antiproof demo`: the set-up check. Proves the embedded default line
//! (1.e3 d5, White wins, international rules) into a temporary store,
//! exports the proof as a win-tree file, and certifies the file with the
//! independent checker, printing each step's report.

use anyhow::Context;
use clap::Args;

/// Arguments of `antiproof demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// The line to prove (default: 1.e3 d5, which White wins).
    #[arg(default_values_t = ["e3".to_string(), "d5".to_string()])]
    moves: Vec<String>,
    /// Keep the store and the win-tree file in this directory instead of a
    /// temporary one.
    #[arg(long)]
    dir: Option<std::path::PathBuf>,
}

/// Runs `antiproof demo`.
pub fn run(args: DemoArgs) -> anyhow::Result<u8> {
    let temp = std::env::temp_dir().join(format!("antiproof-demo-{}", std::process::id()));
    let dir = args.dir.clone().unwrap_or_else(|| temp.clone());
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let db = dir.join("demo.redb").display().to_string();
    let tree = dir.join("demo.tree").display().to_string();
    let step = |title: &str, words: &[&str]| -> anyhow::Result<u8> {
        println!("== {title}: antiproof {}", words.join(" "));
        let mut all = vec!["antiproof".to_string()];
        all.extend(words.iter().map(|w| w.to_string()));
        all.extend(args.moves.iter().cloned());
        let code = super::run_words(&all)?;
        println!();
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
    if args.dir.is_none() {
        let _ = std::fs::remove_dir_all(&temp);
    }
    let code = result?;
    if code == super::EXIT_OK {
        println!("demo: proven, exported and certified");
    }
    Ok(code)
}
