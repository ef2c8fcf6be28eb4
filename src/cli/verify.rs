//! `antiproof verify`: Certify a proof from the store or a win-tree file (issue 4).

use clap::Args;

/// Arguments of `antiproof verify`.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// Arguments (not implemented yet).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

/// Runs `antiproof verify`.
pub fn run(_args: VerifyArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`antiproof verify` is not implemented yet")
}
