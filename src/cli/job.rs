//! `antiproof job run FILE`: runs one job of a job-level search (see
//! `crate::jobs`) and writes its result next to it.

use super::out::outln;
use super::{EXIT_NO, EXIT_OK};
use crate::jobs::job::{JobOutcome, result_path};
use crate::jobs::run::run_job;
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// Arguments of `antiproof job`.
#[derive(Args, Debug)]
pub struct JobArgs {
    #[command(subcommand)]
    command: JobCommand,
}

#[derive(Subcommand, Debug)]
enum JobCommand {
    /// Run one job file: a df-pn search within its budgets; writes
    /// FILE.result.json (and FILE.tree, a win-tree certificate, when
    /// proven) atomically. Ctrl-C or SIGTERM stop it as unresolved.
    /// Exit 0 proven, 1 disproven or unresolved, 2 a bad job file.
    Run {
        /// The job file (JSON, as `prove --jobs` writes them).
        file: PathBuf,
    },
}

/// Runs `antiproof job`.
pub fn run(args: JobArgs) -> anyhow::Result<u8> {
    match args.command {
        JobCommand::Run { file } => {
            let r = run_job(&file, Some(crate::search::run::stop_flag()))?;
            outln!(
                "{} {}: {} nodes, {:.3} s, root pn {} dn {}; result in {}",
                r.id,
                match r.outcome {
                    JobOutcome::Proven => "proven",
                    JobOutcome::Disproven => "disproven",
                    JobOutcome::Unresolved => "unresolved",
                },
                r.nodes,
                r.time_s,
                r.root_pn,
                r.root_dn,
                result_path(&file).display()
            )?;
            Ok(if r.outcome == JobOutcome::Proven {
                EXIT_OK
            } else {
                EXIT_NO
            })
        }
    }
}
