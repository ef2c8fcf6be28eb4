//! The table excerpts the master keeps ([`crate::jobs::excerpt`]): one
//! file per node whose unresolved job left one, at most
//! [`KeptExcerpts::cap`] at once (the least recently used goes first),
//! and none removed while a job out still names it.

use crate::jobs::excerpt;
use crate::jobs::job::with_suffix;
use crate::search::tt::TtValue;
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Table excerpts kept at once at most, for `jobs` jobs out: the least
/// recently used goes first (a leaf whose nearest excerpt went starts
/// from the next one up, or empty).
pub(super) fn excerpts_kept(jobs: usize) -> usize {
    jobs.saturating_mul(4).max(64)
}

/// The excerpts kept, by node, and what goes with them.
pub(super) struct KeptExcerpts {
    /// Each node's excerpt.
    files: HashMap<u64, PathBuf>,
    /// The nodes, least recently used first.
    order: VecDeque<u64>,
    /// Excerpts kept so far: each kept one's name has its number.
    seq: u64,
    /// Excerpts no longer kept that a job out still names: each goes once
    /// no job out names it.
    doomed: Vec<PathBuf>,
    /// The excerpt last read for its numbers ([`Self::table`]).
    read: Option<(PathBuf, Arc<HashMap<u64, TtValue>>)>,
    /// Kept at most.
    cap: usize,
}

impl KeptExcerpts {
    /// None kept yet, at most `cap` at once.
    pub(super) fn new(cap: usize) -> KeptExcerpts {
        KeptExcerpts {
            files: HashMap::new(),
            order: VecDeque::new(),
            seq: 0,
            doomed: Vec::new(),
            read: None,
            cap,
        }
    }

    /// The nodes that have an excerpt.
    pub(super) fn nodes(&self) -> impl Iterator<Item = u64> + '_ {
        self.files.keys().copied()
    }

    /// The excerpt nearest above node `id` (its own first), with the node
    /// whose it is; `parent` gives a node's parent, `None` above the root.
    pub(super) fn nearest<E>(
        &self,
        id: u64,
        mut parent: impl FnMut(u64) -> Result<Option<u64>, E>,
    ) -> Result<Option<(u64, PathBuf)>, E> {
        let mut at = Some(id);
        while let Some(n) = at {
            if let Some(p) = self.files.get(&n) {
                return Ok(Some((n, p.clone())));
            }
            at = parent(n)?;
        }
        Ok(None)
    }

    /// Marks node `node`'s excerpt used: the last to go.
    pub(super) fn touch(&mut self, node: u64) {
        self.order.retain(|&n| n != node);
        self.order.push_back(node);
    }

    /// Keeps the excerpt the job in `job` left as node `node`'s (the
    /// node's earlier one goes, and the least recently used once
    /// [`Self::cap`] are kept). It is renamed first, to a name of its own:
    /// the next job at the node has the same file name, and reads this
    /// excerpt while it writes its own. `named` says whether a job out
    /// names a file.
    pub(super) fn keep(&mut self, node: u64, job: &Path, named: impl Fn(&Path) -> bool) {
        self.seq += 1;
        let file = with_suffix(job, &format!(".{}.tt", self.seq));
        if std::fs::rename(excerpt::excerpt_path(job), &file).is_err() {
            let _ = std::fs::remove_file(excerpt::excerpt_path(job));
            return;
        }
        if let Some(old) = self.files.insert(node, file) {
            self.retire(old, &named);
        }
        self.touch(node);
        while self.order.len() > self.cap {
            if let Some(n) = self.order.pop_front()
                && let Some(p) = self.files.remove(&n)
            {
                self.retire(p, &named);
            }
        }
    }

    /// Lets the excerpts of `nodes` go (their nodes were settled).
    pub(super) fn drop_nodes(&mut self, nodes: &[u64], named: impl Fn(&Path) -> bool) {
        for node in nodes {
            if let Some(p) = self.files.remove(node) {
                self.retire(p, &named);
            }
            self.order.retain(|n| n != node);
        }
    }

    /// Removes the doomed excerpts no job out names any more.
    pub(super) fn sweep(&mut self, named: impl Fn(&Path) -> bool) {
        for file in std::mem::take(&mut self.doomed) {
            self.retire(file, &named);
        }
    }

    /// Removes every excerpt kept or doomed (the run ended).
    pub(super) fn remove_all(&mut self) {
        for p in self
            .files
            .drain()
            .map(|(_, p)| p)
            .chain(self.doomed.drain(..))
        {
            let _ = std::fs::remove_file(p);
        }
        self.order.clear();
        self.read = None;
    }

    /// The entries of `file`, read once for as long as it is the one
    /// asked for; `None` if it cannot be read.
    pub(super) fn table(&mut self, file: &Path) -> Option<Arc<HashMap<u64, TtValue>>> {
        match &self.read {
            Some((p, t)) if p == file => Some(t.clone()),
            _ => {
                let entries = excerpt::read(file).ok()?;
                let t = Arc::new(entries.into_iter().collect::<HashMap<_, _>>());
                self.read = Some((file.to_path_buf(), t.clone()));
                Some(t)
            }
        }
    }

    /// Removes an excerpt no longer kept, or, while a job out names it
    /// (one the simulation has not run yet, or a worker that has not read
    /// it), dooms it to go once none does.
    fn retire(&mut self, file: PathBuf, named: &impl Fn(&Path) -> bool) {
        if named(&file) {
            self.doomed.push(file);
        } else {
            let _ = std::fs::remove_file(file);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("antiproof-kept-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A job's file in `d` and the excerpt it left.
    fn left(d: &Path, node: u64) -> PathBuf {
        let job = d.join(format!("g1-n{node}-a0.json"));
        std::fs::write(excerpt::excerpt_path(&job), b"x").unwrap();
        job
    }

    #[test]
    fn the_least_recently_used_goes_but_not_while_a_job_names_it() {
        let d = dir("lru");
        let mut k = KeptExcerpts::new(2);
        let none = |_: &Path| false;
        k.keep(1, &left(&d, 1), none);
        k.keep(2, &left(&d, 2), none);
        let (_, first) = k.nearest(1, |_| Ok::<_, ()>(None)).unwrap().unwrap();
        assert!(first.is_file());
        // Node 1 used again: node 2 is the one to go when a third comes.
        k.touch(1);
        let (_, second) = k.nearest(2, |_| Ok::<_, ()>(None)).unwrap().unwrap();
        let named = |p: &Path| p == second;
        k.keep(3, &left(&d, 3), named);
        assert!(second.is_file(), "a job out names it");
        assert_eq!(k.nearest(2, |_| Ok::<_, ()>(None)).unwrap(), None);
        k.sweep(none);
        assert!(!second.exists());
        // Nearest above: node 4's parent is node 3.
        let up = k
            .nearest(4, |n| Ok::<_, ()>((n == 4).then_some(3)))
            .unwrap();
        assert_eq!(up.map(|(n, _)| n), Some(3));
        k.drop_nodes(&[3], none);
        assert_eq!(k.nodes().collect::<Vec<_>>(), vec![1]);
        k.remove_all();
        assert!(!first.exists());
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0, "nothing left");
        let _ = std::fs::remove_dir_all(&d);
    }
}
