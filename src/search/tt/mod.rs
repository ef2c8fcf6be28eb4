//! The transposition table: a fixed-size array of 16-byte entries in
//! 64-byte buckets of four, sized from the memory budget.
//!
//! ```text
//! entry (16 bytes)
//!   tag   u64   bits 16..64 of the 64-bit node key (bits 0..16 are those of
//!               the bucket index, which has at least 16 bits, so the whole
//!               key is known), 8 bits of log2(work + 1), 8 flag bits
//!               (bit 0: occupied)
//!   pn    u32   proof number (0: proven)
//!   dn    u32   disproof number (0: disproven); for a proven node, the size
//!               of its proof tree (an estimate used to pick small proofs)
//! ```
//!
//! Keys are verified on all 64 bits. Replacement: a bucket keeps the
//! entries with the most work (search effort below them); solved entries
//! count as if they had twice the work, since extraction needs them.
//!
//! The table reserves address space for the whole budget up front but
//! starts with 2^16 buckets (4 MiB) and doubles in place when three
//! quarters full: every entry of bucket `i` either stays or moves to bucket
//! `i + n`, which only bucket `i` feeds. So a small proof touches little
//! memory (fresh memory costs system time to fault in) and a large one gets
//! the whole budget.
//!
//! The pieces: `entry` (an entry's encoding and the replacement rule),
//! `slab` (the memory: huge pages, or a file mapping shared by processes),
//! `shared` (tables shared by threads and by processes), `save` (saving a
//! table and loading it back).

/// Infinity for proof and disproof numbers.
pub const INF: u32 = u32::MAX;

mod entry;
mod save;
mod shared;
mod slab;

pub use entry::ENTRY_BYTES;
use entry::{Bucket, Entry, WAYS, tag_of, value_of, victim};
use slab::Slab;

/// A transposition table entry as read: proof number, disproof number (or
/// proof size for a proven node), work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TtValue {
    /// Proof number.
    pub pn: u32,
    /// Disproof number; for a proven node the proof-size estimate.
    pub dn: u32,
    /// Work spent below the node.
    pub work: u32,
}

/// The transposition table.
pub struct Tt {
    buckets: Slab,
    /// Buckets in use (a power of two, at most `buckets.len`).
    n: usize,
    mask: u64,
    used: u64,
    /// Made by [`Tt::share`]: this process's own table, shared by threads;
    /// saved once every other handle is gone.
    threads_share: bool,
}

/// The tag word of an entry for `key` with value `v`.
const MIN_BUCKETS: usize = 1 << 16;

/// The buckets of a table of at most `bytes` bytes: a power of two, at
/// least [`MIN_BUCKETS`].
fn buckets_for(bytes: usize) -> usize {
    let want = (bytes / std::mem::size_of::<Bucket>()).max(MIN_BUCKETS);
    if want.is_power_of_two() {
        want
    } else {
        want.next_power_of_two() / 2
    }
}

impl Tt {
    /// A table using at most `bytes` bytes (at least 4 MiB): a power of two
    /// buckets, of which it starts using 2^16.
    pub fn with_bytes(bytes: usize) -> Tt {
        let max = buckets_for(bytes);
        Tt {
            buckets: Slab::new(max),
            n: MIN_BUCKETS,
            mask: MIN_BUCKETS as u64 - 1,
            used: 0,
            threads_share: false,
        }
    }
    /// Number of entries the table can hold at its full size.
    pub fn capacity(&self) -> u64 {
        self.buckets.len as u64 * WAYS as u64
    }

    /// Entries in use (while the table is shared by threads, this
    /// handle's count: racing threads may both count one slot, so it is
    /// held to the capacity).
    pub fn used(&self) -> u64 {
        self.used.min(self.capacity())
    }

    /// Bytes of the table at its full size.
    pub fn bytes(&self) -> u64 {
        self.buckets.len as u64 * std::mem::size_of::<Bucket>() as u64
    }

    /// Bytes of the table in use now.
    pub fn bytes_in_use(&self) -> u64 {
        self.n as u64 * std::mem::size_of::<Bucket>() as u64
    }

    /// Hints the processor to fetch a key's bucket.
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let i = (key & self.mask) as usize;
            let p = self.buckets.ptr.wrapping_add(i) as *const i8;
            // SAFETY: prefetching is a hint; it never faults, whatever the
            // address, and the address is inside the table anyway.
            unsafe {
                std::arch::x86_64::_mm_prefetch(p, std::arch::x86_64::_MM_HINT_T0);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    /// The entry of a key, if present.
    #[inline]
    pub fn get(&self, key: u64) -> Option<TtValue> {
        if self.buckets.shared {
            return self.get_shared(key);
        }
        let b = &self.buckets.get((key & self.mask) as usize).0;
        b.iter().find(|e| e.matches(key)).map(value_of)
    }

    /// Stores an entry, replacing the key's old entry or the bucket's least
    /// valuable one.
    #[inline]
    pub fn put(&mut self, key: u64, v: TtValue) {
        if self.buckets.shared {
            return self.put_shared(key, v);
        }
        if self.used * 4 > self.n as u64 * WAYS as u64 * 3 && self.n < self.buckets.len {
            self.grow();
        }
        let b = &mut self.buckets.get_mut((key & self.mask) as usize).0;
        let e = &mut b[victim(b, key)];
        if !e.occupied() {
            self.used += 1;
        }
        *e = Entry {
            tag: tag_of(key, &v),
            pn: v.pn,
            dn: v.dn,
        };
    }
    /// The share of the entries in use, read from at most
    /// `sample_buckets` of the buckets in use (the first ones: keys are
    /// hashes, so any run of buckets is a fair sample). A shared table's
    /// entries are read as they stand.
    pub fn occupied_share(&self, sample_buckets: usize) -> f64 {
        let buckets = self.n.min(sample_buckets.max(1));
        let mut used = 0u64;
        for i in 0..buckets {
            for j in 0..WAYS {
                let e = if self.buckets.shared {
                    self.shared_entry(i, j)
                } else {
                    self.buckets.get(i).0[j]
                };
                used += u64::from(e.occupied());
            }
        }
        used as f64 / (buckets * WAYS) as f64
    }

    /// The `k` entries most worth keeping across machines (a run state,
    /// [`crate::jobs::state`]): those of the highest [`Entry::priority`]
    /// (most work, solved entries counting double), ties in bucket order,
    /// as (key, value) pairs. Two passes over the buckets in use, no
    /// memory beyond the answer: a histogram of the priorities gives the
    /// lowest one kept. Entries of a shared table are read as they stand
    /// (other handles may write meanwhile: a torn entry is skipped).
    pub fn most_worked(&self, k: usize) -> Vec<(u64, TtValue)> {
        if k == 0 {
            return Vec::new();
        }
        let entry = |i: usize, j: usize| -> Entry {
            if self.buckets.shared {
                self.shared_entry(i, j)
            } else {
                self.buckets.get(i).0[j]
            }
        };
        // Priorities are at most 255 + 2.
        let mut count = [0u64; 258];
        for i in 0..self.n {
            for j in 0..WAYS {
                let e = entry(i, j);
                if e.occupied() {
                    count[e.priority() as usize] += 1;
                }
            }
        }
        let mut floor = count.len();
        let mut above = 0u64;
        while floor > 0 && above < k as u64 {
            floor -= 1;
            above += count[floor];
        }
        let mut out = Vec::with_capacity(k.min(above as usize));
        // Those above the floor first, then the floor's own in bucket
        // order while room is left.
        let mut at_floor = k as u64 - (above - count[floor]).min(k as u64);
        for i in 0..self.n {
            for j in 0..WAYS {
                let e = entry(i, j);
                if !e.occupied() || (e.priority() as usize) < floor {
                    continue;
                }
                if e.priority() as usize == floor {
                    if at_floor == 0 {
                        continue;
                    }
                    at_floor -= 1;
                }
                let key = e.key_in(i);
                // A torn shared entry decodes to a key of another bucket.
                if key & self.mask == i as u64 & self.mask {
                    out.push((key, value_of(&e)));
                }
            }
        }
        out
    }
    /// Grows a private table to its full size at once (every entry moved
    /// straight to its bucket there; nothing to move in an empty table).
    pub fn grow_full(&mut self) {
        let len = self.buckets.len;
        if self.buckets.shared || self.n >= len {
            return;
        }
        let n = self.n;
        if self.used > 0 {
            for i in 0..n {
                let old = *self.buckets.get(i);
                *self.buckets.get_mut(i) = Bucket::default();
                for e in old.0.into_iter().filter(Entry::occupied) {
                    // The entries of bucket t come from bucket t mod n
                    // alone, so four always fit.
                    let key = e.key_in(i);
                    let b = &mut self.buckets.get_mut((key & (len as u64 - 1)) as usize).0;
                    if let Some(slot) = b.iter_mut().find(|s| !s.occupied()) {
                        *slot = e;
                    }
                }
            }
        }
        self.n = len;
        self.mask = len as u64 - 1;
    }

    /// Halves the buckets in use of a private table while its entries
    /// would fill at most half of the halved table, so that a saved table
    /// is about the size its entries need (a table grown to its full size
    /// for threads, [`Tt::grow_full`], may be mostly empty). Buckets `i`
    /// and `i + n/2` merge into `i`; where more than four entries meet,
    /// the least valuable go (as [`Tt::put`] would replace them).
    pub fn fold_to_use(&mut self) {
        if self.buckets.shared {
            return;
        }
        while self.n > MIN_BUCKETS && self.used * 4 <= (self.n as u64 / 2) * WAYS as u64 * 2 {
            let half = self.n / 2;
            let mut used = 0u64;
            for i in 0..half {
                let upper = *self.buckets.get(i + half);
                *self.buckets.get_mut(i + half) = Bucket::default();
                let b = &mut self.buckets.get_mut(i).0;
                for e in upper.0.into_iter().filter(Entry::occupied) {
                    // Bit log2(half) of the key tells the pair's entries
                    // apart: none matches another's key.
                    let j = victim(b, e.key_in(i + half));
                    if !b[j].occupied() || b[j].priority() < e.priority() {
                        b[j] = e;
                    }
                }
                used += b.iter().filter(|e| e.occupied()).count() as u64;
            }
            self.n = half;
            self.mask = half as u64 - 1;
            self.used = used;
        }
    }
    /// Doubles the buckets in use, in place.
    fn grow(&mut self) {
        let n = self.n;
        for i in 0..n {
            let old = *self.buckets.get(i);
            let mut keep = Bucket::default();
            let mut moved = Bucket::default();
            let (mut a, mut b) = (0, 0);
            for e in old.0 {
                if !e.occupied() {
                    continue;
                }
                // Bit log2(n) of the key: n >= 2^16, so it lies in the tag.
                if e.tag & n as u64 != 0 {
                    moved.0[b] = e;
                    b += 1;
                } else {
                    keep.0[a] = e;
                    a += 1;
                }
            }
            *self.buckets.get_mut(i) = keep;
            *self.buckets.get_mut(i + n) = moved;
        }
        self.n = 2 * n;
        self.mask = self.n as u64 - 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_16_bytes_and_round_trip() {
        assert_eq!(ENTRY_BYTES, 16);
        let mut t = Tt::with_bytes(1 << 16);
        let v = TtValue {
            pn: 3,
            dn: 7,
            work: 8,
        };
        t.put(0xdead_beef_1234_5678, v);
        assert_eq!(t.get(0xdead_beef_1234_5678), Some(v));
        assert_eq!(t.get(0xdead_beee_1234_5678), None);
        // Fill one bucket past its ways: the least-worked entry goes.
        for k in 0..8u64 {
            t.put(
                (k << 40) | 5,
                TtValue {
                    pn: 1,
                    dn: 1,
                    work: 1 << (10 + k),
                },
            );
        }
        assert!(t.get((7 << 40) | 5).is_some());
        assert!(t.get(5).is_none());
        assert!(t.used() <= t.capacity());
    }
    #[test]
    fn growing_keeps_every_entry() {
        let mut t = Tt::with_bytes(64 << 20);
        let key = |i: u64| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15)) ^ (i << 7);
        let n = 600_000u64;
        for i in 1..=n {
            t.put(
                key(i),
                TtValue {
                    pn: i as u32,
                    dn: 1,
                    work: 1,
                },
            );
        }
        assert!(t.bytes_in_use() > 4 << 20, "the table grew");
        let found = (1..=n)
            .filter(|&i| t.get(key(i)).map(|v| v.pn) == Some(i as u32))
            .count();
        // A few may have been replaced in full buckets before a growth.
        assert!(found as u64 > n * 95 / 100, "{found} of {n}");
    }

    /// A table grown to its full size and then mostly empty is folded
    /// back before saving: to the smallest size at which its entries fill
    /// at most half, every entry kept (few meet in one bucket), and it
    /// saves, loads and reads back the same.
    #[test]
    fn a_mostly_empty_table_folds_to_the_size_its_entries_need() {
        let mut t = Tt::with_bytes(64 << 20);
        t.grow_full();
        assert_eq!(t.bytes_in_use(), t.bytes());
        let key = |i: u64| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15)) ^ (i << 7);
        let n = 100_000u64;
        let v = |i: u64| TtValue {
            pn: i as u32,
            dn: 3,
            work: 4,
        };
        for i in 1..=n {
            t.put(key(i), v(i));
        }
        t.fold_to_use();
        // 100,000 entries: 2^17 buckets (2^19 slots) hold them at 19 %,
        // 2^16 would be at 38 %: folded once more only at most half full.
        assert_eq!(t.n, 1 << 16, "{}", t.n);
        let found = (1..=n).filter(|&i| t.get(key(i)) == Some(v(i))).count() as u64;
        assert!(found > n * 99 / 100, "{found} of {n}");
        assert_eq!(t.used(), found);
        let mut bytes = Vec::new();
        t.save(&mut bytes).unwrap();
        let mut u = Tt::with_bytes(64 << 20);
        assert!(u.load(&mut bytes.as_slice(), t.checksum()).unwrap());
        assert_eq!(u.used(), found);
        assert_eq!(
            (1..=n).filter(|&i| u.get(key(i)) == Some(v(i))).count() as u64,
            found
        );
        // A table in use by the single search is not folded.
        let mut w = Tt::with_bytes(64 << 20);
        for i in 1..=600_000u64 {
            w.put(key(i), v(i));
        }
        let before = w.n;
        w.fold_to_use();
        assert_eq!(w.n, before);
    }
}
