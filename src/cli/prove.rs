//! `antiproof prove`: Prove a forced win for a line and store its solution tree (issue 3).

use clap::Args;

/// Arguments of `antiproof prove`.
#[derive(Args, Debug)]
pub struct ProveArgs {
    /// Arguments (not implemented yet).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

/// Runs `antiproof prove`.
pub fn run(_args: ProveArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`antiproof prove` is not implemented yet")
}
