//! `antiproof tables`: Endgame tables up to 4 men: build, verify, probe (issue 6).

use clap::Args;

/// Arguments of `antiproof tables`.
#[derive(Args, Debug)]
pub struct TablesArgs {
    /// Arguments (not implemented yet).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

/// Runs `antiproof tables`.
pub fn run(_args: TablesArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`antiproof tables` is not implemented yet")
}
