//! `antiproof export`: Write a stored proof as a Watkins win-tree file (issue 4).

use clap::Args;

/// Arguments of `antiproof export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Arguments (not implemented yet).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

/// Runs `antiproof export`.
pub fn run(_args: ExportArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`antiproof export` is not implemented yet")
}
