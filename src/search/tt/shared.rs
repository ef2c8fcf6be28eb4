//! Tables shared by threads ([`Tt::share`]) and by processes
//! ([`Tt::open_shared`]): every access through atomics, entries encoded
//! with the tag XORed with the value word so that a torn entry matches no
//! key.

use super::slab::Slab;
#[cfg(target_os = "linux")]
use super::slab::{IN_PROCESS, SHARED_MAPS, SharedMap};
use super::{Bucket, Entry, MIN_BUCKETS, Tt, TtValue, WAYS, buckets_for, tag_of, value_of, victim};

impl Tt {
    /// Makes this private table one that threads share, at its present
    /// size (no handle may grow it while shared): every access from now on goes through atomics
    /// as in a table shared by processes, and the returned handle is one
    /// more view of the same entries ([`Tt::view`] makes others). A table
    /// shared already (by threads, or a job's table shared by processes,
    /// [`Tt::open_shared`]) is accessed through atomics already: the
    /// handle is one more view of it, and the table stays as it is (so a
    /// job of several threads searches on the machine's shared table).
    /// `None` where the platform has no shared tables (the search then
    /// runs one thread).
    pub fn share(&mut self) -> Option<Tt> {
        #[cfg(target_os = "linux")]
        {
            if self.buckets.shared {
                return self.view();
            }
            self.xor_tags();
            let map = std::sync::Arc::new(SharedMap {
                base: self.buckets.map.0,
                bytes: self.buckets.map.1,
            });
            // The mapping now belongs to the SharedMap: no Slab unmaps it.
            self.buckets.shared = true;
            self.buckets._keep = Some(map);
            self.threads_share = true;
            self.view()
        }
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// One more handle of a shared table: one that threads share
    /// ([`Tt::share`]) or one that processes share ([`Tt::open_shared`]),
    /// of the same kind; `None` for a private table.
    pub fn view(&self) -> Option<Tt> {
        #[cfg(target_os = "linux")]
        {
            if !self.buckets.shared {
                return None;
            }
            let map = self.buckets._keep.clone()?;
            Some(Tt::over_shared(
                map,
                self.buckets.ptr,
                self.n,
                self.threads_share,
            ))
        }
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// A handle on the `n` buckets at `ptr` inside the shared mapping
    /// `map`: threads' (`threads_share`) or processes'.
    #[cfg(target_os = "linux")]
    fn over_shared(
        map: std::sync::Arc<SharedMap>,
        ptr: *mut Bucket,
        n: usize,
        threads_share: bool,
    ) -> Tt {
        Tt {
            buckets: Slab {
                ptr,
                len: n,
                shared: true,
                map: (map.base, map.bytes),
                _keep: Some(map),
            },
            n,
            mask: n as u64 - 1,
            used: 0,
            threads_share,
        }
    }

    /// Makes a table that threads share ([`Tt::share`]) this thread's own
    /// again once every other handle is gone (entries as they are); false
    /// (nothing changed) if it is not such a table or another handle
    /// lives.
    pub fn unshare(&mut self) -> bool {
        #[cfg(target_os = "linux")]
        {
            if !self.threads_share {
                return false;
            }
            let Some(map) = self.buckets._keep.take() else {
                return false;
            };
            match std::sync::Arc::try_unwrap(map) {
                Ok(map) => {
                    // The Slab owns the mapping again (and unmaps it).
                    std::mem::forget(map);
                }
                Err(map) => {
                    self.buckets._keep = Some(map);
                    return false;
                }
            }
            self.buckets.shared = false;
            self.threads_share = false;
            self.xor_tags();
            self.used = (0..self.n)
                .map(|i| {
                    self.buckets
                        .get(i)
                        .0
                        .iter()
                        .filter(|e| e.occupied())
                        .count() as u64
                })
                .sum();
            true
        }
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// XORs every entry's tag with its value word: a private table's
    /// entries to the encoding of a shared one and back (all-zero free
    /// entries stay zero). Only while no other handle exists.
    fn xor_tags(&mut self) {
        for i in 0..self.n {
            for e in &mut self.buckets.get_mut(i).0 {
                e.tag ^= e.pn as u64 | (e.dn as u64) << 32;
            }
        }
    }
    /// Bucket `i` of a shared table, decoded (a torn entry decodes to a tag
    /// that matches no key).
    #[inline(always)]
    pub(super) fn shared_bucket(&self, i: usize) -> [Entry; WAYS] {
        std::array::from_fn(|j| self.shared_entry(i, j))
    }

    /// Entry `j` of bucket `i` of a shared table, decoded.
    #[inline(always)]
    pub(super) fn shared_entry(&self, i: usize, j: usize) -> Entry {
        use std::sync::atomic::Ordering::Relaxed;
        let w1 = self.buckets.word(i, j, 1).load(Relaxed);
        Entry {
            tag: self.buckets.word(i, j, 0).load(Relaxed) ^ w1,
            pn: w1 as u32,
            dn: (w1 >> 32) as u32,
        }
    }

    #[inline]
    pub(super) fn get_shared(&self, key: u64) -> Option<TtValue> {
        let i = (key & self.mask) as usize;
        (0..WAYS).find_map(|j| {
            let e = self.shared_entry(i, j);
            e.matches(key).then(|| value_of(&e))
        })
    }

    #[inline]
    pub(super) fn put_shared(&mut self, key: u64, v: TtValue) {
        use std::sync::atomic::Ordering::Relaxed;
        let i = (key & self.mask) as usize;
        let b = self.shared_bucket(i);
        let j = victim(&b, key);
        if !b[j].occupied() {
            self.used += 1;
        }
        let w1 = v.pn as u64 | (v.dn as u64) << 32;
        self.buckets.word(i, j, 1).store(w1, Relaxed);
        self.buckets
            .word(i, j, 0)
            .store(tag_of(key, &v) ^ w1, Relaxed);
    }
    /// Creates the file of a table shared by processes, of at most `bytes`
    /// bytes (a power of two buckets, at least 4 MiB), for
    /// [`Tt::open_shared`]: a new file ([`crate::fsutil::create_fresh`]:
    /// a link or another's file under the name is refused, never written
    /// through).
    pub fn create_shared(path: &std::path::Path, bytes: usize) -> std::io::Result<()> {
        let n = buckets_for(bytes);
        let f = crate::fsutil::create_fresh(path)?;
        f.set_len((n * std::mem::size_of::<Bucket>()) as u64)
    }

    /// Maps the shared table file made by [`Tt::create_shared`]; its
    /// entries are shared with every process that maps it.
    /// The file must be named `antiproof-*.tt` and be a regular file of
    /// this user with no other hard link, not reached through a symbolic
    /// link (so a wrong job file cannot have a worker write over some
    /// other file).
    pub fn open_shared(path: &std::path::Path) -> std::io::Result<Tt> {
        use std::io::{Error, ErrorKind};
        let named = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("antiproof-") && n.ends_with(".tt"));
        if !named {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                "a shared table's file name is antiproof-*.tt",
            ));
        }
        #[cfg(target_os = "linux")]
        {
            let found = IN_PROCESS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .find(|(p, _, _)| p == path)
                .map(|&(_, off, n)| (off, n));
            let map = SHARED_MAPS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .find(|(p, _)| p == path)
                .map(|(_, m)| m.clone());
            if let (Some((off, n)), Some(map)) = (found, map) {
                let ptr = (map.base as usize + off) as *mut Bucket;
                return Ok(Tt::over_shared(map, ptr, n, false));
            }
        }
        crate::fsutil::refuse_foreign(&std::fs::symlink_metadata(path)?)?;
        let bytes = std::fs::metadata(path)?.len() as usize;
        let n = bytes / std::mem::size_of::<Bucket>();
        if !bytes.is_multiple_of(std::mem::size_of::<Bucket>())
            || !n.is_power_of_two()
            || n < MIN_BUCKETS
        {
            return Err(Error::new(
                ErrorKind::InvalidData,
                format!(
                    "{bytes} bytes is not a shared table's size (a power of two buckets of 64 bytes, at least 4 MiB)"
                ),
            ));
        }
        let buckets = Slab::map_shared(path)?;
        if buckets.len != n {
            return Err(Error::new(
                ErrorKind::InvalidData,
                "the shared table changed size since this process mapped it",
            ));
        }
        Ok(Tt {
            buckets,
            n,
            mask: n as u64 - 1,
            used: 0,
            threads_share: false,
        })
    }

    /// Makes a table of at most `bytes` bytes (a power of two buckets, at
    /// least 4 MiB) in this process's memory, shared by every
    /// [`Tt::open_shared`] of `path` in this process (threads: no file,
    /// and huge pages where the platform has them), until
    /// [`Tt::release_shared`].
    pub fn create_in_process(path: &std::path::Path, bytes: usize) {
        #[cfg(target_os = "linux")]
        {
            let n = buckets_for(bytes);
            let mut slab = Slab::new(n);
            // The mapping now belongs to the registry's SharedMap.
            let map = std::sync::Arc::new(SharedMap {
                base: slab.map.0,
                bytes: slab.map.1,
            });
            let offset = slab.ptr as usize - slab.map.0 as usize;
            slab.shared = true; // its Drop leaves the mapping alone
            drop(slab);
            let mut maps = SHARED_MAPS.lock().unwrap_or_else(|e| e.into_inner());
            maps.retain(|(p, _)| p != path);
            maps.push((path.to_path_buf(), map));
            IN_PROCESS.lock().unwrap_or_else(|e| e.into_inner()).push((
                path.to_path_buf(),
                offset,
                n,
            ));
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (path, bytes);
    }

    /// Lets this process's mapping of the shared table at `path` go once
    /// no table uses it (the master, when its run ends).
    pub fn release_shared(path: &std::path::Path) {
        #[cfg(target_os = "linux")]
        SHARED_MAPS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(p, _)| p != path);
        #[cfg(target_os = "linux")]
        IN_PROCESS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(p, _, _)| p != path);
        #[cfg(not(target_os = "linux"))]
        let _ = path;
    }
    /// Whether this table is shared with other processes.
    pub fn is_shared(&self) -> bool {
        self.buckets.shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::tt::ENTRY_BYTES;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_table_shared_by_threads_keeps_its_entries_and_saves_once_alone() {
        let mut t = Tt::with_bytes(16 << 20);
        let v = |pn| TtValue { pn, dn: 7, work: 2 };
        let keys: Vec<u64> = (1..5000u64)
            .map(|k| k.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        for &k in &keys {
            t.put(k, v(1));
        }
        let mut other = t.share().expect("shared");
        // Shared again: one more view, the table as it is.
        drop(t.share().expect("a view"));
        // Shared at its size, the entries kept; it grows only once its own.
        let size = t.bytes_in_use();
        t.grow_full();
        assert_eq!(t.bytes_in_use(), size, "not while shared");
        assert!(keys.iter().all(|&k| other.get(k) == Some(v(1))));
        // Each handle sees what the other writes, from another thread.
        let third = t.view().expect("a view");
        std::thread::scope(|s| {
            s.spawn(|| {
                for &k in &keys {
                    other.put(k, v(2));
                }
            });
        });
        assert!(keys.iter().all(|&k| t.get(k) == Some(v(2))));
        // Not saved while shared; its own again once the others are gone.
        let mut bytes = Vec::new();
        assert!(t.save(&mut bytes).is_err());
        assert!(!t.unshare(), "another handle lives");
        drop((other, third));
        assert!(t.unshare());
        assert_eq!(t.used(), keys.len() as u64);
        t.grow_full();
        assert_eq!(t.bytes_in_use(), t.bytes());
        assert_eq!(t.used(), keys.len() as u64);
        assert!(keys.iter().all(|&k| t.get(k) == Some(v(2))), "kept");
        bytes.clear();
        t.save(&mut bytes).unwrap();
        let mut u = Tt::with_bytes(16 << 20);
        assert!(u.load(&mut &bytes[..], t.checksum()).unwrap());
        assert_eq!(u.used(), keys.len() as u64);
        assert!(keys.iter().all(|&k| u.get(k) == Some(v(2))));
        // A private table has no views.
        assert!(u.view().is_none());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_table_shared_by_processes_is_shared_by_threads_as_it_is() {
        let dir = std::env::temp_dir().join(format!("antiproof-tt-threads-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("antiproof-threads.tt");
        let _ = std::fs::remove_file(&path);
        Tt::create_shared(&path, 4 << 20).unwrap();
        let mut t = Tt::open_shared(&path).unwrap();
        let v = TtValue {
            pn: 3,
            dn: 4,
            work: 2,
        };
        let mut other = t.share().expect("one more handle");
        assert!(t.is_shared() && other.is_shared());
        std::thread::scope(|s| {
            s.spawn(|| other.put(42, v));
        });
        assert_eq!(t.get(42), Some(v));
        assert_eq!(t.view().expect("a view").get(42), Some(v));
        // Still the processes' table: never made private, nor saved.
        assert!(!t.unshare());
        assert!(t.save(&mut Vec::new()).is_err());
        assert_eq!(Tt::open_shared(&path).unwrap().get(42), Some(v));
        let _ = std::fs::remove_dir_all(&dir);
    }
    #[test]
    fn a_shared_table_is_seen_by_every_mapping() {
        let dir = std::env::temp_dir().join(format!("ap-tt-shared-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("antiproof-test.tt");
        Tt::create_shared(&path, 8 << 20).unwrap();
        std::fs::write(dir.join("other"), vec![0u8; 8 << 20]).unwrap();
        assert!(Tt::open_shared(&dir.join("other")).is_err());
        let mut a = Tt::open_shared(&path).unwrap();
        let b = Tt::open_shared(&path).unwrap();
        assert!(a.is_shared() && b.is_shared());
        assert_eq!(b.capacity(), (8 << 20) / ENTRY_BYTES as u64);
        let v = TtValue {
            pn: 3,
            dn: 7,
            work: 4,
        };
        for k in 0..1000u64 {
            a.put(k.wrapping_mul(0x9e37_79b9_7f4a_7c15), v);
        }
        for k in 0..1000u64 {
            assert_eq!(b.get(k.wrapping_mul(0x9e37_79b9_7f4a_7c15)), Some(v));
        }
        assert_eq!(b.get(12345), None);
        // A torn entry (value word of another write) reads as absent.
        let key = 0x1234_5678_9abc_def0u64;
        a.put(key, v);
        let i = (key & a.mask) as usize;
        let j = (0..WAYS)
            .find(|&j| a.shared_bucket(i)[j].matches(key))
            .unwrap();
        a.buckets
            .word(i, j, 1)
            .store(99 | 5 << 32, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(b.get(key), None);
        // Not saved, and a file of the wrong size is refused.
        assert!(a.save(&mut Vec::new()).is_err());
        Tt::release_shared(&path);
        std::fs::write(&path, [0u8; 100]).unwrap();
        assert!(Tt::open_shared(&path).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
