//! Build script: records the git revision the binary is built from, so a
//! run's figures name the code that produced them (not whatever the
//! checkout holds when the binary runs). Outside a git checkout, or
//! without git, the revision is `unknown`.

use std::process::Command;

fn main() {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    let mut rev = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into());
    // Uncommitted changes to tracked files make the build differ from the
    // revision: say so.
    if rev != "unknown"
        && git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty())
    {
        rev.push_str("+dirty");
    }
    println!("cargo:rustc-env=ANTIPROOF_REVISION={rev}");
    // Rebuild when HEAD moves (a commit, a checkout) or the index changes.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        for f in ["HEAD", "index", "packed-refs"] {
            println!("cargo:rerun-if-changed={dir}/{f}");
        }
        if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={dir}/{head_ref}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
