//! How much memory this process may use: the machine's (`MemTotal` in
//! `/proc/meminfo`) or, when smaller, the limit of its control group (a
//! container's, or a Slurm job's `--mem`), cgroup v2 or v1; and how much
//! is available now; and the one policy for a transposition table's size
//! on this machine ([`table_limit`]): `prove` refuses a `--memory` above
//! it, and a job (whose file comes from a master elsewhere) clamps its
//! table to it, instead of being killed by the kernel once the table fills
//! (a table of threads is touched whole at the start).

use std::path::Path;

/// Limits at or above this are "no limit" (cgroup v1 writes 2^63 rounded
/// down to a page).
const UNLIMITED: u64 = 1 << 60;

/// The bytes this process may use, when they can be read (Linux).
pub fn usable_bytes() -> Option<u64> {
    within_cgroup("MemTotal:")
}

/// The bytes free for this process now: the machine's `MemAvailable`,
/// or its control group's limit when smaller (what a table touched whole
/// at its start must fit in).
pub fn available_bytes() -> Option<u64> {
    within_cgroup("MemAvailable:")
}

/// A `/proc/meminfo` field, or this process's control-group limit when
/// smaller; either alone when the other cannot be read.
fn within_cgroup(field: &str) -> Option<u64> {
    let machine = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| meminfo_field(&s, field));
    let group = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|s| cgroup_limit(&s, Path::new("/sys/fs/cgroup")));
    match (machine, group) {
        (Some(m), Some(g)) => Some(m.min(g)),
        (m, g) => m.or(g),
    }
}

/// A field of a `/proc/meminfo` text (`MemTotal:`), in bytes.
fn meminfo_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}

/// The smallest memory limit on the way from this process's control
/// group up to the root, from a `/proc/self/cgroup` text and the cgroup
/// file systems under `root`: cgroup v2 (`0::PATH`, `memory.max`) and v1
/// (`N:...memory...:PATH`, `memory/memory.limit_in_bytes`). `None` when
/// no limit is set or none can be read.
fn cgroup_limit(text: &str, root: &Path) -> Option<u64> {
    let mut best: Option<u64> = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (dir, file) = if controllers.is_empty() {
            (root.to_path_buf(), "memory.max")
        } else if controllers.split(',').any(|c| c == "memory") {
            (root.join("memory"), "memory.limit_in_bytes")
        } else {
            continue;
        };
        // The group and each of its parents; a path the mount does not
        // show (another namespace's view) is simply not found.
        let mut at = Path::new(path.trim_start_matches('/'));
        loop {
            let limit = std::fs::read_to_string(dir.join(at).join(file))
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .filter(|&v| v < UNLIMITED);
            if let Some(v) = limit {
                best = Some(best.map_or(v, |b| b.min(v)));
            }
            match at.parent() {
                Some(p) => at = p,
                None => break,
            }
        }
    }
    best
}

/// The most a transposition table may have on this machine, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableLimit {
    /// The limit, bytes.
    pub bytes: u64,
    /// What it is a part of: the machine's (or control group's) memory,
    /// or, for a table of threads, what is available now.
    pub of: LimitOf,
}

/// What a [`TableLimit`] is a part of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitOf {
    /// 7/8 of the machine's (or control group's) memory of this many
    /// bytes: one thread's table grows as it fills, and the rest is for
    /// the process, the store's cache and the system.
    Machine(u64),
    /// 3/4 of the bytes available now: a table of threads is touched whole
    /// at the start.
    Available(u64),
}

/// The largest table for a search of `threads` threads on a machine (or
/// control group) of `usable` bytes with `available` free now (see
/// [`LimitOf`]); `None` when the machine's memory cannot be read.
pub fn table_limit(
    threads: usize,
    usable: Option<u64>,
    available: Option<u64>,
) -> Option<TableLimit> {
    if threads > 1 {
        available.map(|a| TableLimit {
            bytes: a / 4 * 3,
            of: LimitOf::Available(a),
        })
    } else {
        usable.map(|u| TableLimit {
            bytes: u / 8 * 7,
            of: LimitOf::Machine(u),
        })
    }
}

impl std::fmt::Display for TableLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.of {
            LimitOf::Machine(u) => write!(
                f,
                "{} (7/8 of this machine's {}; the table grows as it fills)",
                human(self.bytes),
                human(u)
            ),
            LimitOf::Available(a) => write!(
                f,
                "{} (3/4 of the {} available now; a table of threads is allocated whole at the start)",
                human(self.bytes),
                human(a)
            ),
        }
    }
}

/// `bytes` as a short size for messages (`23.5 GiB`, `512 MiB`).
pub fn human(bytes: u64) -> String {
    let gib = bytes as f64 / (1u64 << 30) as f64;
    if gib >= 1.0 {
        format!("{gib:.1} GiB")
    } else {
        format!("{} MiB", bytes >> 20)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_fields_are_read_in_bytes() {
        let text = "MemTotal:       24683652 kB\nMemFree:        1 kB\n";
        assert_eq!(meminfo_field(text, "MemTotal:"), Some(24683652 * 1024));
        assert_eq!(meminfo_field("MemFree: 1 kB\n", "MemTotal:"), None);
        assert_eq!(meminfo_field("MemTotal: lots kB\n", "MemTotal:"), None);
        let text = "MemTotal: 8 kB\nMemAvailable:   3 kB\n";
        assert_eq!(meminfo_field(text, "MemAvailable:"), Some(3 * 1024));
    }

    #[test]
    fn cgroup_limits_are_the_smallest_on_the_way_up() {
        let root = std::env::temp_dir().join(format!("antiproof-cgroup-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let v2 = root.join("slurm/job_7/step_batch");
        std::fs::create_dir_all(&v2).unwrap();
        std::fs::write(v2.join("memory.max"), "max\n").unwrap();
        std::fs::write(root.join("slurm/job_7/memory.max"), "5368709120\n").unwrap();
        std::fs::write(root.join("slurm/memory.max"), "8589934592\n").unwrap();
        assert_eq!(
            cgroup_limit("0::/slurm/job_7/step_batch\n", &root),
            Some(5 << 30)
        );
        // v1: the memory controller's line; 2^63 rounded is no limit.
        let v1 = root.join("memory/box");
        std::fs::create_dir_all(&v1).unwrap();
        std::fs::write(v1.join("memory.limit_in_bytes"), "9223372036854771712\n").unwrap();
        assert_eq!(cgroup_limit("4:memory:/box\n1:cpu:/\n", &root), None);
        std::fs::write(v1.join("memory.limit_in_bytes"), "1073741824\n").unwrap();
        assert_eq!(cgroup_limit("4:memory:/box\n", &root), Some(1 << 30));
        // Paths the mount does not show, and unreadable lines.
        assert_eq!(cgroup_limit("0::/elsewhere\n", &root), None);
        assert_eq!(cgroup_limit("garbage\n", &root), None);
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn this_machine_has_some_memory() {
        if cfg!(target_os = "linux") {
            assert!(usable_bytes().is_some_and(|b| b >= 64 << 20));
            assert!(available_bytes().is_some_and(|b| b <= usable_bytes().unwrap()));
        }
    }

    #[test]
    fn a_table_is_limited_by_the_machine_or_by_what_is_free() {
        const G: u64 = 1 << 30;
        // One thread: its table grows as it fills, up to 7/8 of the machine.
        let one = table_limit(1, Some(24 * G), Some(4 * G)).unwrap();
        assert_eq!(one.bytes, 21 * G);
        assert_eq!(one.of, LimitOf::Machine(24 * G));
        // Threads: touched whole at the start, so 3/4 of what is free.
        assert_eq!(
            table_limit(4, Some(24 * G), Some(4 * G)).unwrap().bytes,
            3 * G
        );
        // Nothing known, nothing limited.
        assert_eq!(table_limit(1, None, None), None);
        assert_eq!(table_limit(2, Some(24 * G), None), None);
        assert!(
            one.to_string()
                .starts_with("21.0 GiB (7/8 of this machine's 24.0 GiB")
        );
    }
}
