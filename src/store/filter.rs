//! The stored-position filter: a compact set of the Zobrist hashes of the
//! store's positions, at about 2.4 bytes a record (against 28.5 measured
//! for the hash map of hash -> value it replaces, 57 with the fifty-move
//! needs), for stores of 10^9 records (`cargo bench --bench filter`).
//!
//! It only says "maybe stored" or "surely not stored": it has no false
//! negatives, and false positives at a rate of about `load / 65536` (about
//! 1.5e-4 to 3e-4 a lookup of an absent position). Every "maybe" must be
//! confirmed by reading the store by the position's full key: positions are
//! compared by their full encoding, never by hash alone.
//!
//! # Layout
//!
//! A hash `z` falls into bucket `((z >> 32) * buckets) >> 32` (its top 32
//! bits scaled to the bucket count) and leaves its low 16 bits, its
//! remainder, there. The remainders of all buckets lie in one `Vec<u16>`,
//! sorted within each bucket, in bucket order. Bucket `b` starts at
//! `start(b)`: `starts[b]` holds that offset's low 32 bits and `bases`,
//! one `u64` per [`SUPERBLOCK`] buckets, the offset of the superblock's
//! first bucket; since a bucket holds at most 65,536 distinct remainders,
//! a superblock spans less than 2^32 entries, so the low 32 bits and the
//! base give the exact offset, for any number of records. The buckets are
//! sized for [`TARGET_LOAD`] records each when built: 2 bytes a record of
//! remainders, 4 / 10 of offsets.
//!
//! Hashes added after the build go to a small side set; when it outgrows
//! `max(MIN_SIDE, len / SIDE_FRACTION)` it is folded into the sorted part
//! in place (a backward merge, bucket by bucket: no second copy of the
//! remainders). Buckets cannot be split later (the bits below the
//! remainder are gone), so once the load passes [`MAX_LOAD`] a fold is
//! refused ([`StoredFilter::insert`] returns `false`) and the owner
//! rebuilds the filter from the full hashes (the store's keys); until
//! then the side set keeps growing and the filter stays exact about
//! negatives.

use crate::fasthash::FastSet;

/// Records per bucket that a build aims at.
pub const TARGET_LOAD: u64 = 10;
/// Records per bucket past which a fold is refused and a rebuild asked
/// for (the false-positive rate grows with the load).
pub const MAX_LOAD: u64 = 2 * TARGET_LOAD;
/// Buckets per superblock (one `u64` base each).
pub const SUPERBLOCK: usize = 1 << SB_SHIFT;
const SB_SHIFT: u32 = 10;
/// The side set is folded in once it holds more than this many hashes...
const MIN_SIDE: usize = 1 << 14;
/// ... and more than this fraction (1 / it) of the sorted part (so the
/// side set costs at most about 0.65 byte a record).
const SIDE_FRACTION: usize = 32;
/// A lookup compares this many remainders from its bucket's start at once,
/// without branches, and masks off those past the bucket's end (a longer
/// bucket, rare, is scanned).
const WINDOW: usize = 16;

/// A set of 64-bit hashes with no false negatives and rare false
/// positives; see the module docs.
#[derive(Clone, Debug, Default)]
pub struct StoredFilter {
    /// Number of buckets of the sorted part (0: it is empty).
    buckets: u64,
    /// Entries of the sorted part.
    len: usize,
    /// The remainders (low 16 bits of each hash), sorted within each
    /// bucket, buckets in order; then [`WINDOW`] entries of padding (when
    /// not empty), so that a lookup can compare a whole window.
    rems: Vec<u16>,
    /// `buckets + 1` entries: the low 32 bits of each bucket's start in
    /// `rems` (the last one is the end).
    starts: Vec<u32>,
    /// The start of each superblock's first bucket (one for every
    /// [`SUPERBLOCK`] entries of `starts`).
    bases: Vec<u64>,
    /// Hashes added since the last build or fold.
    side: FastSet<u64>,
}

/// The bucket of `z` among `buckets`.
#[inline(always)]
fn bucket_of(z: u64, buckets: u64) -> u64 {
    ((z >> 32) * buckets) >> 32
}

/// The buckets for `n` records at [`TARGET_LOAD`] (at most 2^32 - 1, so
/// that [`bucket_of`] cannot overflow).
fn buckets_for(n: u64) -> u64 {
    n.div_ceil(TARGET_LOAD).clamp(1, u32::MAX as u64)
}

impl StoredFilter {
    /// An empty filter that will hold about `expected` hashes: its buckets
    /// are sized for them, and the hashes inserted fold into them as they
    /// come, so building never holds more than the filter and its side set.
    pub fn with_expected(expected: u64) -> StoredFilter {
        let mut f = StoredFilter::default();
        if expected > 0 {
            f.reset_buckets(buckets_for(expected));
        }
        f
    }

    /// A filter of `hashes`, sized for them.
    pub fn from_hashes(hashes: &[u64]) -> StoredFilter {
        let mut f = StoredFilter::with_expected(hashes.len() as u64);
        for &z in hashes {
            f.insert(z);
        }
        f.fold();
        f
    }

    /// Empty sorted part of `buckets` buckets.
    fn reset_buckets(&mut self, buckets: u64) {
        self.buckets = buckets;
        self.len = 0;
        self.rems = Vec::new();
        self.starts = vec![0; buckets as usize + 1];
        self.bases = vec![0; (buckets as usize >> SB_SHIFT) + 1];
    }

    /// Number of hashes held (distinct fingerprints of the sorted part,
    /// plus the side set).
    pub fn len(&self) -> usize {
        self.len + self.side.len()
    }

    /// Whether the filter holds nothing.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0 && self.side.is_empty()
    }

    /// Bytes of memory the filter holds (its vectors' capacities and an
    /// estimate of the side set's table).
    pub fn bytes(&self) -> u64 {
        let side = if self.side.capacity() == 0 {
            0
        } else {
            // hashbrown: a power of two of buckets, 7/8 of them usable, a
            // control byte each.
            let buckets = (self.side.capacity() * 8).div_ceil(7).next_power_of_two();
            buckets * (std::mem::size_of::<u64>() + 1)
        };
        (self.rems.capacity() * 2 + self.starts.capacity() * 4 + self.bases.capacity() * 8 + side)
            as u64
    }

    /// The start of bucket `b` in `rems`.
    #[inline(always)]
    fn start(&self, b: usize) -> usize {
        let base = self.bases[b >> SB_SHIFT];
        (base + self.starts[b].wrapping_sub(base as u32) as u64) as usize
    }

    /// Whether the sorted part holds `z`'s fingerprint.
    #[inline]
    fn in_sorted(&self, z: u64) -> bool {
        if self.len == 0 {
            return false;
        }
        self.bucket_has(bucket_of(z, self.buckets), z as u16)
    }

    /// Hints the processor to fetch the offsets of `z`'s bucket: the first
    /// of a lookup's two dependent memory reads. For a batch of hashes
    /// (a node's children), call this for all, then
    /// [`StoredFilter::prefetch_remainders`] for all, then look them up:
    /// the cache misses then overlap instead of following each other.
    #[inline(always)]
    pub fn prefetch_offsets(&self, z: u64) {
        if self.len == 0 {
            return;
        }
        let b = bucket_of(z, self.buckets) as usize;
        prefetch(self.starts.as_ptr().wrapping_add(b));
    }

    /// Hints the processor to fetch `z`'s remainders (reads the bucket's
    /// offsets: fetch those first with [`StoredFilter::prefetch_offsets`]).
    #[inline(always)]
    pub fn prefetch_remainders(&self, z: u64) {
        if self.len == 0 {
            return;
        }
        let b = bucket_of(z, self.buckets) as usize;
        let p = self.rems.as_ptr().wrapping_add(self.start(b));
        // The window read may straddle two cache lines.
        prefetch(p);
        prefetch(p.wrapping_add(WINDOW - 1));
    }

    /// Whether bucket `b` of the (non-empty) sorted part holds remainder
    /// `r`.
    #[inline(always)]
    fn bucket_has(&self, b: u64, r: u16) -> bool {
        let b = b as usize;
        let s = self.start(b);
        let n = self.starts[b + 1].wrapping_sub(self.starts[b]) as usize;
        if n > WINDOW {
            return self.rems[s..s + n].contains(&r);
        }
        // Branch-free: a mispredicted early exit costs more than the
        // compares, and stops the next lookups' loads from overlapping.
        let w: &[u16; WINDOW] = self.rems[s..s + WINDOW]
            .try_into()
            .expect("the padding covers a window");
        let mut hits = 0u32;
        for (i, &x) in w.iter().enumerate() {
            hits |= ((x == r) as u32) << i;
        }
        hits & ((1u32 << n) - 1) != 0
    }

    /// Whether `z` may be in the set: `false` means surely not.
    #[inline]
    pub fn contains(&self, z: u64) -> bool {
        self.in_sorted(z) || (!self.side.is_empty() && self.side.contains(&z))
    }

    /// Adds `z`. Returns `false` when the filter is past [`MAX_LOAD`] and
    /// should be rebuilt from all hashes ([`StoredFilter::with_expected`]);
    /// it still answers soundly meanwhile (its side set just grows).
    pub fn insert(&mut self, z: u64) -> bool {
        if self.in_sorted(z) {
            return true;
        }
        self.side.insert(z);
        if self.side.len() <= MIN_SIDE.max(self.len / SIDE_FRACTION) {
            return true;
        }
        self.fold()
    }

    /// Folds the side set into the sorted part, unless that would pass
    /// [`MAX_LOAD`] (then `false`, and nothing changes). An empty sorted
    /// part takes buckets sized for the side set first.
    pub fn fold(&mut self) -> bool {
        if self.side.is_empty() {
            return true;
        }
        if self.len == 0 && (self.buckets == 0 || self.side.len() as u64 > self.buckets * MAX_LOAD)
        {
            self.reset_buckets(buckets_for(self.side.len() as u64));
        }
        let total = (self.len + self.side.len()) as u64;
        if total > self.buckets * MAX_LOAD {
            return false;
        }
        // The new fingerprints as bucket << 16 | remainder, sorted.
        let buckets = self.buckets;
        let mut add: Vec<u64> = self
            .side
            .drain()
            .map(|z| (bucket_of(z, buckets) << 16) | (z & 0xffff))
            .collect();
        add.sort_unstable();
        add.dedup();
        // `insert` only puts in the side set hashes whose fingerprint the
        // sorted part lacks; dropping any that is there keeps the merge
        // exact whatever the caller did.
        if self.len > 0 {
            add.retain(|&k| !self.bucket_has(k >> 16, k as u16));
        }
        let old_len = self.len;
        let new_len = old_len + add.len();
        // Exactly: a doubled capacity would cost 2 bytes a record.
        self.rems.reserve_exact(new_len + WINDOW - self.rems.len());
        self.rems.resize(new_len + WINDOW, 0);
        // Backward merge, bucket by bucket: every bucket only moves right.
        let mut w = new_len; // write cursor (exclusive)
        let mut ai = add.len(); // adds not placed yet: add[..ai]
        let mut old_next = old_len; // old start of bucket b + 1
        let nb = buckets as usize;
        // The end sentinel.
        self.set_start(nb, new_len, &mut old_next);
        for b in (0..nb).rev() {
            let old_s = self.start(b);
            let mut i = old_next; // old entries of b: rems[old_s..i]
            let mut j = ai;
            while j > 0 && (add[j - 1] >> 16) as usize == b {
                j -= 1;
            }
            let mut k = ai;
            while k > j {
                let r = add[k - 1] as u16;
                w -= 1;
                if i > old_s && self.rems[i - 1] > r {
                    self.rems[w] = self.rems[i - 1];
                    i -= 1;
                } else {
                    self.rems[w] = r;
                    k -= 1;
                }
            }
            let rest = i - old_s;
            if w != i {
                self.rems.copy_within(old_s..i, w - rest);
            }
            w -= rest;
            ai = j;
            self.set_start(b, w, &mut old_next);
        }
        debug_assert_eq!(w, 0);
        self.rems[new_len..].fill(0);
        self.len = new_len;
        self.side = FastSet::default();
        true
    }

    /// Sets bucket `b`'s start to `at` during a fold (buckets visited from
    /// the last down), saving its old start in `old` first; the base of a
    /// superblock is updated at its first bucket, after its last read.
    fn set_start(&mut self, b: usize, at: usize, old: &mut usize) {
        *old = self.start(b);
        self.starts[b] = at as u32;
        if b & (SUPERBLOCK - 1) == 0 {
            self.bases[b >> SB_SHIFT] = at as u64;
        }
    }
}

/// Hints the processor to fetch the cache line at `p`.
#[inline(always)]
fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults, whatever the
    // address (and the address is inside a vector anyway).
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// `n` random-looking hashes, like Zobrist keys, from `seed` (SplitMix64;
/// the store, which the checker uses, takes nothing from the prover's
/// rules, so not their Zobrist generator): for this module's tests and
/// benchmark.
#[doc(hidden)]
pub fn sample_hashes(seed: u64, n: usize) -> Vec<u64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::sample_hashes as hashes;

    #[test]
    fn empty_filter_holds_nothing_and_costs_nothing() {
        let f = StoredFilter::default();
        assert!(f.is_empty());
        assert_eq!(f.len(), 0);
        assert_eq!(f.bytes(), 0);
        assert!(!f.contains(0));
        assert!(!f.contains(u64::MAX));
    }

    #[test]
    fn insert_then_lookup_across_folds() {
        let keys = hashes(1, 300_000);
        let mut f = StoredFilter::with_expected(0);
        for (i, &z) in keys.iter().enumerate() {
            f.insert(z);
            if i % 50_000 == 0 {
                // Everything inserted so far is found, folded or not.
                assert!(keys[..=i].iter().all(|&k| f.contains(k)));
            }
        }
        assert!(keys.iter().all(|&k| f.contains(k)));
        // Repeats add nothing.
        let n = f.len();
        f.insert(keys[7]);
        assert_eq!(f.len(), n);
    }

    #[test]
    fn no_false_negatives_over_a_million_keys() {
        let keys = hashes(2, 1_000_000);
        let f = StoredFilter::from_hashes(&keys);
        assert!(f.side.is_empty());
        assert!(keys.iter().all(|&k| f.contains(k)));
        // Sorted within each bucket.
        for b in 0..f.buckets as usize {
            let s = &f.rems[f.start(b)..f.start(b + 1)];
            assert!(s.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn false_positive_rate_and_bytes_per_record() {
        let n = 1_000_000;
        let keys = hashes(3, n);
        let f = StoredFilter::from_hashes(&keys);
        let probes = hashes(4, 1_000_000);
        let fp = probes.iter().filter(|&&z| f.contains(z)).count();
        let rate = fp as f64 / probes.len() as f64;
        let per_record = f.bytes() as f64 / n as f64;
        errln!("false positives {rate:.2e}, {per_record:.3} bytes a record");
        // Expected about TARGET_LOAD / 65536 = 1.5e-4.
        assert!(rate < 4e-4, "false-positive rate {rate}");
        assert!(per_record <= 2.6, "{per_record} bytes a record");
    }

    #[test]
    fn growth_stays_under_four_bytes_and_asks_for_a_rebuild_past_the_load() {
        let keys = hashes(5, 2_500_000);
        let mut f = StoredFilter::from_hashes(&keys[..1_000_000]);
        let mut refused = None;
        for (i, &z) in keys[1_000_000..].iter().enumerate() {
            if !f.insert(z) && refused.is_none() {
                refused = Some(i);
            }
            if refused.is_none() {
                let per = f.bytes() as f64 / f.len() as f64;
                assert!(per <= 3.2, "{per} bytes a record after {i} inserts");
            }
        }
        // Refused once the load passed MAX_LOAD (about 1,000,000 more),
        // still without false negatives.
        let r = refused.expect("a rebuild is asked for");
        assert!((900_000..1_100_000).contains(&r), "{r}");
        assert!(keys.iter().all(|&k| f.contains(k)));
        // The rebuild from all hashes.
        let g = StoredFilter::from_hashes(&keys);
        assert!(keys.iter().all(|&k| g.contains(k)));
        assert!(g.bytes() as f64 / g.len() as f64 <= 2.6);
    }

    #[test]
    fn offsets_are_exact_across_superblocks() {
        // Few buckets per superblock boundary crossing: buckets at the
        // superblock edges hold their own keys.
        let keys = hashes(6, 200_000);
        let f = StoredFilter::from_hashes(&keys);
        assert!(f.buckets as usize > 2 * SUPERBLOCK);
        let mut total = 0;
        for b in 0..f.buckets as usize {
            total += f.start(b + 1) - f.start(b);
        }
        assert_eq!(total, f.len);
        assert_eq!(f.start(f.buckets as usize), f.len);
        assert_eq!(f.rems.len(), f.len + WINDOW);
    }
}
