//! `antiproof store check|compact|load`: look after a proof store file.

use super::{EXIT_ERROR, EXIT_NO, EXIT_OK};
use crate::store::{Integrity, Store, StoreError};
use clap::{Args, Subcommand};
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `antiproof store`.
#[derive(Args, Debug)]
pub struct StoreArgs {
    #[command(subcommand)]
    command: StoreCommand,
}

#[derive(Subcommand, Debug)]
enum StoreCommand {
    /// Check the whole file (page checksums, tree structure), repairing
    /// what the engine can: exit 0 intact, 1 damaged. A file this user may
    /// not write is read only (schema, every record) and left unchanged,
    /// and that said: exit 2, since the engine's check needs to open it
    /// for writing. No other process may have the store open.
    Check(FileArgs),
    /// Give free pages back to the file system. No other process may have
    /// the store open.
    Compact(FileArgs),
    /// Load certified win-tree files into the store as proven records
    /// (known wins): each file is certified by the independent checker
    /// under the rule set first, and only a certified one is loaded; a
    /// search over the store then stops wherever it transposes into one.
    /// Exit 0 when every file was loaded, 1 when some were not certified
    /// under the rule set (nothing of them loaded), 2 on a file or store
    /// that cannot be read or written.
    Load(LoadArgs),
}

#[derive(Args, Debug)]
struct LoadArgs {
    /// The proof store (redb file; created if missing).
    #[arg(long, default_value = "antiproof.redb")]
    db: PathBuf,
    #[command(flatten)]
    rules: super::values::RuleArgs,
    /// Checker threads (default: all cores; at most 1024).
    #[arg(long, value_parser = super::values::threads())]
    threads: Option<usize>,
    /// Win-tree files (`.tree`, `.tree.zst`, `.tree.bz2`), or directories
    /// of them (`proofs/`).
    #[arg(required = true, value_name = "FILE|DIR")]
    files: Vec<PathBuf>,
}

#[derive(Args, Debug)]
struct FileArgs {
    /// The proof store (redb file).
    #[arg(long, default_value = "antiproof.redb")]
    db: PathBuf,
}

/// Runs `antiproof store`.
pub fn run(args: StoreArgs) -> anyhow::Result<u8> {
    let mut out = crate::cli::out::stdout();
    match args.command {
        StoreCommand::Check(a) => {
            // The schema and every record must read too.
            let read_all = || -> Result<u64, StoreError> {
                let s = Store::open_read_only(&a.db)?;
                let r = s.reader()?;
                let mut n = 0u64;
                for rules in crate::vocab::RuleSet::ALL {
                    r.for_each(rules, |_, _| {
                        n += 1;
                        Ok(())
                    })?;
                }
                Ok(n)
            };
            let verdict = Store::check_integrity(&a.db)
                .and_then(|integrity| Ok((integrity.clone(), read_all()?)));
            match verdict {
                Ok((Integrity::Intact, n)) => {
                    writeln!(out, "ok {}: intact, {n} records", a.db.display())?;
                    Ok(EXIT_OK)
                }
                Ok((Integrity::Damaged, _)) => {
                    writeln!(
                        out,
                        "DAMAGED {}: the engine's integrity check failed",
                        a.db.display()
                    )?;
                    Ok(EXIT_NO)
                }
                Ok((Integrity::NotWritable(why), n)) => {
                    writeln!(out, "{}", not_writable_report(&a.db, &why, n))?;
                    Ok(EXIT_ERROR)
                }
                Err(StoreError::Damaged { message, .. } | StoreError::Corrupt(message)) => {
                    writeln!(
                        out,
                        "DAMAGED {}: {message}; rebuild it by proving again \
                         (certificates already exported are not affected)",
                        a.db.display()
                    )?;
                    Ok(EXIT_NO)
                }
                Err(e) => Err(e.into()),
            }
        }
        StoreCommand::Load(a) => load(a, &mut out),
        StoreCommand::Compact(a) => {
            let (before, after) = Store::compact(&a.db)?;
            writeln!(
                out,
                "compacted {}: {before} -> {after} bytes",
                a.db.display()
            )?;
            Ok(EXIT_OK)
        }
    }
}

/// `store load`: every file certified, then loaded.
fn load(a: LoadArgs, out: &mut impl Write) -> anyhow::Result<u8> {
    use crate::known::{self, Loaded};
    let rules = a.rules.rule_set();
    let files = known::tree_paths(&a.files)?;
    anyhow::ensure!(!files.is_empty(), "no win-tree files in {:?}", a.files);
    let inputs: Vec<&std::path::Path> = files.iter().map(PathBuf::as_path).collect();
    super::check_output(&a.db, crate::fsutil::OutputKind::Store, &inputs)?;
    let store = Store::open(&a.db).map_err(|e| e.naming(&a.db))?;
    let (mut loaded, mut records) = (0usize, 0u64);
    for f in &files {
        let l = known::load_file(&store, rules, f, a.threads)?;
        let part = l
            .in_part(rules)
            .map_or(String::new(), |why| format!(" (in part: {why})"));
        match l {
            Loaded::Loaded {
                root_line,
                winner,
                positions,
                written,
                ..
            } => {
                loaded += 1;
                records += written;
                writeln!(
                    out,
                    "loaded {}: {root_line}, {winner} wins, {positions} positions, {written} new records{part}",
                    f.display()
                )?;
            }
            Loaded::NotCertified { verdict } => {
                writeln!(out, "not loaded {}: under {rules}: {verdict}", f.display())?
            }
        }
    }
    writeln!(
        out,
        "{loaded} of {} files loaded under {rules} into {}: {records} new records",
        files.len(),
        a.db.display()
    )?;
    Ok(if loaded == files.len() {
        EXIT_OK
    } else {
        EXIT_NO
    })
}

/// `store check`'s report on a store it may not open for writing, whose
/// `n` records read back (read-only) without error: what was checked and
/// what was not, and how to have the full check.
fn not_writable_report(db: &std::path::Path, why: &str, n: u64) -> String {
    let d = db.display();
    format!(
        "NOT FULLY CHECKED {d}: cannot open it for writing ({why}), which the engine's \
         integrity check (page checksums, repair) needs; nothing was changed. Read-only check: \
         the schema and all {n} records read back without error. For the full check, run it \
         as a user who may write the file, or on a copy: cp {d} COPY.redb && \
         antiproof store check --db COPY.redb"
    )
}
