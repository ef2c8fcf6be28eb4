//! The transposition table: a fixed-size array of 16-byte entries in
//! 64-byte buckets of four, sized from the memory budget.
//!
//! ```text
//! entry (16 bytes)
//!   check u32   bits 32..64 of the 64-bit node key, low bit forced to 1
//!               (0 marks an empty slot); bits 0..n of the key pick the bucket
//!   pn    u32   proof number (0: proven)
//!   dn    u32   disproof number (0: disproven); for a proven node, the size
//!               of its proof tree (an estimate used to pick small proofs)
//!   work  u32   search effort spent below the node (replacement priority)
//! ```
//!
//! Replacement: a bucket keeps the entries with the most work; solved
//! entries count double, since extraction needs them.

/// Infinity for proof and disproof numbers.
pub const INF: u32 = u32::MAX;

#[derive(Clone, Copy, Default)]
#[repr(C)]
struct Entry {
    check: u32,
    pn: u32,
    dn: u32,
    work: u32,
}

const WAYS: usize = 4;

#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
struct Bucket([Entry; WAYS]);

/// Bytes per table entry.
pub const ENTRY_BYTES: usize = std::mem::size_of::<Entry>();

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

/// The fixed-size transposition table.
pub struct Tt {
    buckets: Vec<Bucket>,
    mask: u64,
    used: u64,
}

impl Tt {
    /// A table using at most `bytes` bytes (at least 64 KiB), a power of two
    /// buckets.
    pub fn with_bytes(bytes: usize) -> Tt {
        let want = (bytes / std::mem::size_of::<Bucket>()).max(1024);
        let n = if want.is_power_of_two() {
            want
        } else {
            want.next_power_of_two() / 2
        };
        Tt {
            buckets: vec![Bucket::default(); n],
            mask: n as u64 - 1,
            used: 0,
        }
    }

    /// Number of entries the table holds.
    pub fn capacity(&self) -> u64 {
        self.buckets.len() as u64 * WAYS as u64
    }

    /// Entries in use.
    pub fn used(&self) -> u64 {
        self.used
    }

    /// Bytes of the table.
    pub fn bytes(&self) -> u64 {
        self.buckets.len() as u64 * std::mem::size_of::<Bucket>() as u64
    }

    #[inline(always)]
    fn locate(&self, key: u64) -> (usize, u32) {
        ((key & self.mask) as usize, ((key >> 32) as u32) | 1)
    }

    /// The entry of a key, if present.
    #[inline]
    pub fn get(&self, key: u64) -> Option<TtValue> {
        let (i, check) = self.locate(key);
        let b = &self.buckets[i].0;
        for e in b {
            if e.check == check {
                return Some(TtValue {
                    pn: e.pn,
                    dn: e.dn,
                    work: e.work,
                });
            }
        }
        None
    }

    /// Stores an entry, replacing the key's old entry or the bucket's least
    /// valuable one.
    #[inline]
    pub fn put(&mut self, key: u64, v: TtValue) {
        let (i, check) = self.locate(key);
        let b = &mut self.buckets[i].0;
        let mut victim = 0;
        let mut best = u64::MAX;
        for (j, e) in b.iter().enumerate() {
            if e.check == check {
                victim = j;
                break;
            }
            if e.check == 0 {
                victim = j;
                best = 0;
                continue;
            }
            let solved = e.pn == 0 || e.dn == 0;
            let prio = e.work as u64 * if solved { 2 } else { 1 };
            if prio < best {
                best = prio;
                victim = j;
            }
        }
        let e = &mut b[victim];
        if e.check == 0 {
            self.used += 1;
        }
        *e = Entry {
            check,
            pn: v.pn,
            dn: v.dn,
            work: v.work,
        };
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
            work: 9,
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
                    work: 100 + k as u32,
                },
            );
        }
        assert!(t.get((7 << 40) | 5).is_some());
        assert!(t.used() <= t.capacity());
    }
}
