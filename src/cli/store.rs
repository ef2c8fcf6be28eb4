//! `antiproof store check|compact`: look after a proof store file.

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
