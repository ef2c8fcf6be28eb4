//! `antiproof serve`: Serve proof trees over HTTP and as a web page (issue 5).

use clap::Args;

/// Arguments of `antiproof serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Arguments (not implemented yet).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

/// Runs `antiproof serve`.
pub fn run(_args: ServeArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`antiproof serve` is not implemented yet")
}
