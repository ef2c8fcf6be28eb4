//! `antiproof browse`: Show the proof tree at a line in the terminal (issue 5).

use clap::Args;

/// Arguments of `antiproof browse`.
#[derive(Args, Debug)]
pub struct BrowseArgs {
    /// Arguments (not implemented yet).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

/// Runs `antiproof browse`.
pub fn run(_args: BrowseArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`antiproof browse` is not implemented yet")
}
