//! The table's memory: an anonymous mapping advised to use huge pages, or
//! a file mapping shared with other processes, and this process's
//! registry of shared mappings.

use super::entry::{Bucket, WAYS};

/// Zeroed memory for the table: an anonymous mapping advised to use huge
/// pages where the platform has them (a table probe is otherwise nearly
/// always a TLB miss), else a vector.
pub(super) struct Slab {
    pub(super) ptr: *mut Bucket,
    pub(super) len: usize,
    /// A file mapping shared with other processes ([`Tt::open_shared`](super::Tt::open_shared)).
    pub(super) shared: bool,
    #[cfg(target_os = "linux")]
    pub(super) map: (*mut libc::c_void, usize),
    /// The process's mapping of a shared table, kept alive.
    #[cfg(target_os = "linux")]
    pub(super) _keep: Option<std::sync::Arc<SharedMap>>,
    #[cfg(not(target_os = "linux"))]
    pub(super) vec: Vec<Bucket>,
}

/// A process's mapping of a shared table file, unmapped when the last
/// table using it and the registry have let it go.
#[cfg(target_os = "linux")]
pub(super) struct SharedMap {
    pub(super) base: *mut libc::c_void,
    pub(super) bytes: usize,
}

// SAFETY: the mapping is process-wide memory; every access to it goes
// through atomics, so it may be used from any thread.
#[cfg(target_os = "linux")]
unsafe impl Send for SharedMap {}
// SAFETY: as for Send.
#[cfg(target_os = "linux")]
unsafe impl Sync for SharedMap {}

#[cfg(target_os = "linux")]
impl Drop for SharedMap {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `Slab::map_shared`,
        // once, when nothing uses it any more.
        unsafe {
            libc::munmap(self.base, self.bytes);
        }
    }
}

/// Tables made by [`Tt::create_in_process`](super::Tt::create_in_process): path, offset of the first
/// bucket in the mapping (aligned for huge pages), buckets.
#[cfg(target_os = "linux")]
pub(super) static IN_PROCESS: std::sync::Mutex<Vec<(std::path::PathBuf, usize, usize)>> =
    std::sync::Mutex::new(Vec::new());

/// This process's mappings of shared tables, by path.
#[cfg(target_os = "linux")]
pub(super) static SHARED_MAPS: std::sync::Mutex<
    Vec<(std::path::PathBuf, std::sync::Arc<SharedMap>)>,
> = std::sync::Mutex::new(Vec::new());

// SAFETY: the slab owns its memory exclusively, like a Vec.
unsafe impl Send for Slab {}
// SAFETY: shared access is read-only, like a Vec.
unsafe impl Sync for Slab {}

const HUGE: usize = 2 << 20;

impl Slab {
    pub(super) fn new(len: usize) -> Slab {
        #[cfg(target_os = "linux")]
        {
            let bytes = len * std::mem::size_of::<Bucket>();
            let total = bytes + HUGE;
            // SAFETY: an anonymous private mapping with no address hint;
            // the result is checked before use.
            let base = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    total,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                    -1,
                    0,
                )
            };
            assert!(
                base != libc::MAP_FAILED,
                "cannot map {total} bytes for the transposition table"
            );
            let aligned = (base as usize).next_multiple_of(HUGE);
            // SAFETY: the range lies inside the mapping just made; the advice
            // is only a hint and its failure is harmless.
            unsafe {
                libc::madvise(aligned as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE);
            }
            Slab {
                ptr: aligned as *mut Bucket,
                len,
                shared: false,
                map: (base, total),
                _keep: None,
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let mut vec = vec![Bucket::default(); len];
            Slab {
                ptr: vec.as_mut_ptr(),
                len,
                shared: false,
                vec,
            }
        }
    }

    /// Maps the shared table file at `path` (its length a whole number of
    /// buckets), or reuses this process's mapping of it: the jobs of one
    /// process map it once.
    #[cfg(target_os = "linux")]
    pub(super) fn map_shared(path: &std::path::Path) -> std::io::Result<Slab> {
        use std::os::fd::AsRawFd;
        let mut maps = SHARED_MAPS.lock().unwrap_or_else(|e| e.into_inner());
        let map = match maps.iter().find(|(p, _)| p == path) {
            Some((_, m)) => m.clone(),
            None => {
                use std::os::unix::fs::OpenOptionsExt;
                // Not through a link (checked before, and here again at
                // the open itself: the name may change between).
                let file = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                    .open(path)?;
                let meta = file.metadata()?;
                crate::fsutil::refuse_foreign(&meta)?;
                let bytes = meta.len() as usize;
                // SAFETY: a shared mapping of an open file, no address
                // hint; the result is checked before use. Other processes
                // write it concurrently, so it is only ever accessed
                // through atomics (`Tt::get_shared`, `Tt::put_shared`).
                let base = unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        bytes,
                        libc::PROT_READ | libc::PROT_WRITE,
                        // Populated at once: a job touches most pages of
                        // the table, and one fault per page costs far more
                        // system time.
                        libc::MAP_SHARED | libc::MAP_POPULATE,
                        file.as_raw_fd(),
                        0,
                    )
                };
                if base == libc::MAP_FAILED {
                    return Err(std::io::Error::last_os_error());
                }
                let m = std::sync::Arc::new(SharedMap { base, bytes });
                maps.push((path.to_path_buf(), m.clone()));
                m
            }
        };
        Ok(Slab {
            ptr: map.base as *mut Bucket,
            len: map.bytes / std::mem::size_of::<Bucket>(),
            shared: true,
            map: (map.base, map.bytes),
            _keep: Some(map),
        })
    }

    #[cfg(not(target_os = "linux"))]
    pub(super) fn map_shared(_path: &std::path::Path) -> std::io::Result<Slab> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "a shared transposition table needs Linux",
        ))
    }

    /// Word `w` (0 or 1) of entry `j` of bucket `i`, as an atomic.
    #[inline(always)]
    pub(super) fn word(&self, i: usize, j: usize, w: usize) -> &std::sync::atomic::AtomicU64 {
        assert!(i < self.len && j < WAYS && w < 2);
        // SAFETY: in bounds; buckets are 64-byte aligned and entries two
        // 8-byte words, so the word is aligned; AtomicU64 has u64's layout,
        // and every access to a shared mapping goes through atomics.
        unsafe { &*(self.ptr.add(i) as *const std::sync::atomic::AtomicU64).add(j * 2 + w) }
    }

    #[inline(always)]
    pub(super) fn get(&self, i: usize) -> &Bucket {
        assert!(i < self.len);
        // SAFETY: in bounds; the mapping is zero-filled, and all-zero bytes
        // are a valid Bucket.
        unsafe { &*self.ptr.add(i) }
    }

    #[inline(always)]
    pub(super) fn get_mut(&mut self, i: usize) -> &mut Bucket {
        assert!(i < self.len);
        // SAFETY: as in `get`, and `&mut self` makes the access exclusive.
        unsafe { &mut *self.ptr.add(i) }
    }
}

#[cfg(target_os = "linux")]
impl Drop for Slab {
    fn drop(&mut self) {
        if self.shared {
            // `_keep` owns a shared mapping.
            return;
        }
        // SAFETY: unmaps exactly the mapping made in `new` or `map_shared`,
        // once.
        unsafe {
            libc::munmap(self.map.0, self.map.1);
        }
    }
}
