//! The jobs' shared transposition table, sized to need: it starts at what
//! the first jobs can fill and grows, four times at a step, up to
//! `--memory`, as the jobs' nodes fill it.
//!
//! A table shared by jobs cannot grow in place (every job maps it at its
//! size), so a step makes the next generation, a new table of four times
//! the size (`antiproof-PID.g1.tt`, ...), puts the old one's entries of
//! most work into it, and names it in every job sent from then on. The old
//! table stays until the last job given it ends (a job's mapping would
//! outlive its file anyway); then it is released and removed. A line a
//! plain `prove` does in a second thus never maps the gigabyte of
//! `--memory`'s default, and a long run reaches its whole budget after a
//! few steps.

use crate::search::tt::{ENTRY_BYTES, Tt, TtValue};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The smallest table (the search's own least: 2^16 buckets of 64 bytes).
const MIN_BYTES: u64 = 4 << 20;

/// Each step multiplies the size by this.
const STEP: u64 = 4;

/// A generation's fill is looked at when the jobs given it have searched
/// this many times its entries' count of nodes since the last look (a
/// node writes at most one entry, and most revisit one).
const LOOK: f64 = 0.5;

/// A generation steps when this share of its entries is in use (sampled:
/// [`SAMPLE_BUCKETS`]). Counting nodes alone stepped a 64 MiB table to
/// 256 MiB on a line whose jobs searched 2.2 M nodes and filled a fraction
/// of it (`prove --jobs 2 --executor threads e3 g6`: 380 MB against 44 MB
/// for a plain `prove`).
const FULL: f64 = 0.5;

/// Buckets read to sample a generation's fill (4 MiB of a table).
const SAMPLE_BUCKETS: usize = 1 << 16;

/// The most entries carried from one generation to the next (24 bytes
/// each while carried: 96 MiB at most).
const CARRY_MAX: usize = 4 << 20;

/// One table of the jobs' shared table's generations.
#[derive(Debug)]
struct Generation {
    path: PathBuf,
    bytes: u64,
    /// Jobs out that were given it.
    users: usize,
    /// Nodes searched by the jobs given it that ended since its fill was
    /// last looked at.
    nodes: u64,
}

/// The jobs' shared table, its generations and which job has which.
#[derive(Debug)]
pub struct SharedTable {
    /// The first generation's path (`antiproof-PID.tt`).
    base: PathBuf,
    /// Tables in this process's memory (threads) instead of files.
    in_process: bool,
    /// The largest it may grow to (`--memory`).
    max_bytes: u64,
    /// The one new jobs are given.
    current: Generation,
    /// Older ones that jobs out still use.
    retired: Vec<Generation>,
    /// Which generation each job out has (its path).
    given: HashMap<PathBuf, PathBuf>,
    /// Steps taken.
    steps: u32,
}

impl SharedTable {
    /// The first size for `jobs` jobs of `job_nodes` nodes each, at most
    /// `max_bytes`: twice what they can fill, a power of two.
    pub fn first_bytes(jobs: usize, job_nodes: u64, max_bytes: u64) -> u64 {
        let need = (jobs as u64)
            .saturating_mul(job_nodes)
            .saturating_mul(ENTRY_BYTES as u64)
            .saturating_mul(2);
        need.max(MIN_BYTES)
            .checked_next_power_of_two()
            .unwrap_or(u64::MAX)
            .min(max_bytes.max(MIN_BYTES))
    }

    /// Makes the first generation at `base` of `bytes` (see
    /// [`SharedTable::first_bytes`]), growing to at most `max_bytes`, with
    /// `seed`'s entries in it (a run state's).
    pub fn create(
        base: &Path,
        in_process: bool,
        bytes: u64,
        max_bytes: u64,
        seed: &[(u64, TtValue)],
    ) -> std::io::Result<SharedTable> {
        make(base, in_process, bytes)?;
        let t = SharedTable {
            base: base.to_path_buf(),
            in_process,
            max_bytes,
            current: Generation {
                path: base.to_path_buf(),
                bytes,
                users: 0,
                nodes: 0,
            },
            retired: Vec::new(),
            given: HashMap::new(),
            steps: 0,
        };
        if !seed.is_empty() {
            let mut tt = Tt::open_shared(base)?;
            for &(key, v) in seed {
                tt.put(key, v);
            }
        }
        Ok(t)
    }

    /// The table the job in `job` is to use (written in its job file).
    pub fn give(&mut self, job: &Path) -> PathBuf {
        self.current.users += 1;
        self.given
            .insert(job.to_path_buf(), self.current.path.clone());
        self.current.path.clone()
    }

    /// The job in `job` ended (or was dropped) after `nodes` nodes: a
    /// retired generation no job uses any more goes, and the current one
    /// steps when its jobs have filled it.
    pub fn ended(&mut self, job: &Path, nodes: u64) -> std::io::Result<()> {
        let Some(path) = self.given.remove(job) else {
            return Ok(());
        };
        if path == self.current.path {
            self.current.users -= 1;
            self.current.nodes += nodes;
        } else if let Some(i) = self.retired.iter().position(|g| g.path == path) {
            let g = &mut self.retired[i];
            g.users -= 1;
            if g.users == 0 {
                let g = self.retired.swap_remove(i);
                release(&g.path);
            }
        }
        let entries = self.current.bytes / ENTRY_BYTES as u64;
        if self.current.bytes < self.max_bytes && self.current.nodes as f64 >= entries as f64 * LOOK
        {
            self.current.nodes = 0;
            let share = Tt::open_shared(&self.current.path)?.occupied_share(SAMPLE_BUCKETS);
            if share >= FULL {
                self.step()?;
            }
        }
        Ok(())
    }

    /// Makes the next generation and carries the current one's entries of
    /// most work into it. If it cannot be made, the table stays as it is
    /// for the rest of the run.
    fn step(&mut self) -> std::io::Result<()> {
        let bytes = self.current.bytes.saturating_mul(STEP).min(self.max_bytes);
        let path = generation_path(&self.base, self.steps + 1);
        if let Err(e) = make(&path, self.in_process, bytes) {
            let _ = std::fs::remove_file(&path);
            self.max_bytes = self.current.bytes;
            return Err(e);
        }
        {
            let old = Tt::open_shared(&self.current.path)?;
            let mut new = Tt::open_shared(&path)?;
            let carry = (self.current.bytes / ENTRY_BYTES as u64).min(CARRY_MAX as u64);
            for (key, v) in old.most_worked(carry as usize) {
                new.put(key, v);
            }
        }
        self.steps += 1;
        let old = std::mem::replace(
            &mut self.current,
            Generation {
                path,
                bytes,
                users: 0,
                nodes: 0,
            },
        );
        if old.users == 0 {
            release(&old.path);
        } else {
            self.retired.push(old);
        }
        Ok(())
    }

    /// The table new jobs are given, and the one a run state reads.
    pub fn current(&self) -> &Path {
        &self.current.path
    }

    /// The current generation's size.
    pub fn bytes(&self) -> u64 {
        self.current.bytes
    }

    /// Steps taken so far.
    pub fn steps(&self) -> u32 {
        self.steps
    }
}

impl Drop for SharedTable {
    /// Every generation goes, however the run ends.
    fn drop(&mut self) {
        release(&self.current.path);
        for g in &self.retired {
            release(&g.path);
        }
    }
}

/// The path of generation `g` beside the first one's (`antiproof-PID.tt`
/// -> `antiproof-PID.g1.tt`): still an `antiproof-*.tt` name, as
/// [`Tt::open_shared`] asks, and the master's process id first, as the
/// clean-up of tables left by killed masters reads it.
pub fn generation_path(base: &Path, g: u32) -> PathBuf {
    let name = base
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".tt").unwrap_or(&name);
    base.with_file_name(format!("{stem}.g{g}.tt"))
}

/// Makes a table of `bytes` at `path`: in this process's memory, or a file.
fn make(path: &Path, in_process: bool, bytes: u64) -> std::io::Result<()> {
    let bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
    if in_process {
        Tt::create_in_process(path, bytes);
        Ok(())
    } else {
        Tt::create_shared(path, bytes)
    }
}

/// Lets a generation go: this process's mapping (once no table uses it)
/// and its file.
fn release(path: &Path) {
    Tt::release_shared(path);
    let _ = std::fs::remove_file(path);
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: u64 = 1 << 20;

    #[test]
    fn the_first_table_is_what_the_first_jobs_can_fill() {
        // Two jobs of 1M nodes: 2 x 1M x 16 bytes x 2 = 64 MiB.
        assert_eq!(SharedTable::first_bytes(2, 1_000_000, 1024 * M), 64 * M);
        // Never past --memory, never under the search's least.
        assert_eq!(SharedTable::first_bytes(64, 10_000_000, 256 * M), 256 * M);
        assert_eq!(SharedTable::first_bytes(1, 1_000, 1024 * M), 4 * M);
        assert_eq!(SharedTable::first_bytes(1, 1_000, 1), 4 * M);
    }

    /// Puts entries of random keys into the shared table at `path` until
    /// about `share` of it is in use.
    fn fill(path: &Path, share: f64) {
        let mut tt = Tt::open_shared(path).unwrap();
        let mut key = 0x9e37_79b9_7f4a_7c15u64;
        while tt.occupied_share(usize::MAX) < share {
            for _ in 0..10_000 {
                key = key
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                tt.put(
                    key,
                    TtValue {
                        pn: 2,
                        dn: 2,
                        work: 1,
                    },
                );
            }
        }
    }

    #[test]
    fn generations_are_named_after_the_first() {
        let p = generation_path(Path::new("/dev/shm/antiproof-42.tt"), 3);
        assert_eq!(p, Path::new("/dev/shm/antiproof-42.g3.tt"));
    }

    #[test]
    fn the_table_steps_as_jobs_fill_it_and_old_ones_go_with_their_last_job() {
        let dir = std::env::temp_dir().join(format!("antiproof-st-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let base = dir.join(format!("antiproof-{}.tt", std::process::id()));
        let seed = [(
            0x1234_5678_9abc_def1u64,
            TtValue {
                pn: 3,
                dn: 4,
                work: 9,
            },
        )];
        let mut t = SharedTable::create(&base, false, 4 * M, 64 * M, &seed).unwrap();
        assert!(base.is_file());
        let a = dir.join("a.job.json");
        let b = dir.join("b.job.json");
        assert_eq!(t.give(&a), base);
        assert_eq!(t.give(&b), base);
        // 4 MiB holds 262,144 entries: half of it searched, but hardly
        // any in use: no step.
        t.ended(&a, 131_072).unwrap();
        assert_eq!(t.steps(), 0);
        // Over half in use, and another half searched: a step.
        fill(&base, 0.6);
        t.give(&a);
        t.ended(&a, 131_072).unwrap();
        assert_eq!(t.steps(), 1);
        assert_eq!(t.bytes(), 16 * M);
        let g1 = generation_path(&base, 1);
        assert_eq!(t.current(), g1);
        // The seed's entry was carried.
        let tt = Tt::open_shared(&g1).unwrap();
        assert_eq!(tt.get(seed[0].0).map(|v| (v.pn, v.dn)), Some((3, 4)));
        drop(tt);
        // b still has the first: it stays until b ends.
        assert!(base.is_file());
        t.ended(&b, 10).unwrap();
        assert!(!base.is_file());
        // Steps stop at the most.
        let c = dir.join("c.job.json");
        t.give(&c);
        fill(&g1, 0.6);
        t.ended(&c, 1 << 30).unwrap();
        assert_eq!(t.bytes(), 64 * M);
        let d = dir.join("d.job.json");
        t.give(&d);
        fill(t.current(), 0.6);
        t.ended(&d, 1 << 30).unwrap();
        assert_eq!(t.bytes(), 64 * M);
        assert_eq!(t.steps(), 2);
        drop(t);
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
