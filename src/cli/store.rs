//! `antiproof store check|compact`: look after a proof store file.

use super::{EXIT_NO, EXIT_OK};
use crate::store::{Store, StoreError};
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
    /// what the engine can: exit 0 intact, 1 damaged. No other process
    /// may have the store open.
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
            let verdict = Store::check_integrity(&a.db).and_then(|intact| {
                // The schema and every record must read too.
                let s = Store::open_read_only(&a.db)?;
                let r = s.reader()?;
                let mut n = 0u64;
                for rules in crate::vocab::RuleSet::ALL {
                    r.for_each(rules, |_, _| {
                        n += 1;
                        Ok(())
                    })?;
                }
                Ok((intact, n))
            });
            match verdict {
                Ok((true, n)) => {
                    writeln!(out, "ok {}: intact, {n} records", a.db.display())?;
                    Ok(EXIT_OK)
                }
                Ok((false, _)) => {
                    writeln!(
                        out,
                        "DAMAGED {}: the engine's integrity check failed",
                        a.db.display()
                    )?;
                    Ok(EXIT_NO)
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
