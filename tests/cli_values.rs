//! Every command reads option values with the same typed parsers, and every
//! number is bounded: absurd values are usage errors (exit 2) naming the
//! bound, not panics, overflows or hangs.

use crate::util::antiproof;

/// Runs `args`, expects exit 2 and a message holding each of `want`.
fn rejected(args: &[&str], want: &[&str]) {
    let (code, _, err) = antiproof(args);
    assert_eq!(code, 2, "{args:?}: {err}");
    for w in want {
        assert!(err.contains(w), "{args:?}: {w:?} not in {err}");
    }
}

#[test]
fn absurd_values_exit_2_naming_the_bound() {
    rejected(
        &["prove", "--limit", "1e20s", "e3"],
        &["--limit", "at most 1 year"],
    );
    rejected(
        &["prove", "--limit", "1e19s", "e3"],
        &["--limit", "at most 1 year"],
    );
    rejected(
        &["prove", "--limit", "1e16 nodes", "e3"],
        &["--limit", "at most 10^15 nodes"],
    );
    rejected(
        &["prove", "--memory", "99999999999999999999G", "e3"],
        &["--memory", "at most 1T"],
    );
    rejected(
        &["prove", "--memory", "1K", "e3"],
        &["--memory", "at least 64K"],
    );
    rejected(
        &["prove", "--ladder", "--rungs", "1-99"],
        &["--rungs", "from 1 to 13"],
    );
    rejected(
        &["serve", "--request-timeout", "18446744073709551615"],
        &["--request-timeout", "1..=86400"],
    );
    rejected(
        &["serve", "--idle-timeout", "100000"],
        &["--idle-timeout", "1..=86400"],
    );
    rejected(
        &["serve", "--threads", "100000"],
        &["--threads", "1..=1024"],
    );
    rejected(
        &["verify", "--threads", "100000"],
        &["--threads", "1..=1024"],
    );
    rejected(&["verify", "--repeat", "0"], &["--repeat", "1..=1000"]);
    for (option, value, bound) in [
        ("--slurm-grace", "100000", "0..=86400"),
        ("--slurm-patience", "0", "1..=604800"),
    ] {
        let args = [
            "prove",
            "--jobs",
            "2",
            "--executor",
            "slurm",
            option,
            value,
            "e3",
        ];
        rejected(&args, &[option, bound]);
    }
    for option in ["--state-tt", "--state-records"] {
        rejected(
            &["prove", "--state", "s.zst", option, "99999999999", "e3"],
            &[option, "0..=10000000"],
        );
    }
    rejected(
        &["prove", "--state", "s.zst", "--state-every", "0s", "e3"],
        &["--state-every", "at least 0.1 s apart"],
    );
    rejected(&["perft", "99"], &["0..=20"]);
    rejected(&["tables", "build", "--men", "9"], &["--men", "2..=4"]);
    rejected(
        &["tables", "bench", "--probes", "99999999999999999999"],
        &["--probes"],
    );
}

#[test]
fn a_table_budget_past_the_machines_memory_is_refused() {
    // `--memory` is in bounds (at most 1T) but more than this machine
    // has: refused before anything starts, naming the machine's memory,
    // instead of the kernel killing the search once the table fills.
    let machine = antiproof::sysmem::usable_bytes().unwrap_or(u64::MAX);
    if machine >= 1 << 40 {
        return;
    }
    for extra in [&[][..], &["--jobs", "2"], &["--executor", "threads"]] {
        let mut args = vec!["prove", "--memory", "1T"];
        args.extend(extra);
        args.extend(["e3", "d5"]);
        rejected(&args, &["--memory 1T", "more than this machine has"]);
    }
}

#[test]
fn rules_and_sides_read_alike_in_every_command() {
    for cmd in [
        &["prove", "e3"][..],
        &["verify"],
        &["export", "-o", "x.tree"],
        &["browse"],
        &["serve"],
        &["tables", "probe", "8/8/8/8/8/8/8/K6k w - - 0 1"],
    ] {
        let mut args = cmd.to_vec();
        args.extend(["--rules", "atomic"]);
        rejected(&args, &["--rules", "unknown rule set \"atomic\""]);
        if cmd[0] != "tables" {
            let mut args = cmd.to_vec();
            args.extend(["--winner", "green"]);
            rejected(&args, &["--winner", "unknown side \"green\""]);
        }
    }
}
