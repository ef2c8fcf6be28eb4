//! `antiproof table`: The table of White's 20 first moves (issue 5).

use clap::Args;

/// Arguments of `antiproof table`.
#[derive(Args, Debug)]
pub struct TableArgs {
    /// Arguments (not implemented yet).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

/// Runs `antiproof table`.
pub fn run(_args: TableArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`antiproof table` is not implemented yet")
}
