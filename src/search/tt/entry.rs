//! The table's entries and buckets: the 16-byte entry's encoding (tag,
//! proof and disproof numbers), the bucket of four, and the replacement
//! rule (which slot a new entry takes).

use super::TtValue;

#[derive(Clone, Copy, Default)]
#[repr(C)]
pub(super) struct Entry {
    /// Bits 16..64 of the key, then 8 bits of log2 work, then 8 flag bits
    /// (bit 0: occupied).
    pub(super) tag: u64,
    pub(super) pn: u32,
    pub(super) dn: u32,
}

impl Entry {
    #[inline(always)]
    pub(super) fn occupied(&self) -> bool {
        self.tag & 1 != 0
    }
    #[inline(always)]
    pub(super) fn matches(&self, key: u64) -> bool {
        self.occupied() && (self.tag ^ key) >> 16 == 0
    }
    #[inline(always)]
    pub(super) fn work_log(&self) -> u64 {
        (self.tag >> 8) & 0xff
    }
    /// How much an occupied entry is worth keeping: its work, solved
    /// entries counting double.
    #[inline(always)]
    pub(super) fn priority(&self) -> u64 {
        self.work_log() + 1 + (self.pn == 0 || self.dn == 0) as u64
    }
    /// The key of an occupied entry found in bucket `i` of a table of at
    /// least 2^16 buckets: bits 0..16 are those of `i`, the rest are in
    /// the tag.
    #[inline(always)]
    pub(super) fn key_in(&self, i: usize) -> u64 {
        (self.tag & !0xffff) | (i as u64 & 0xffff)
    }
}

pub(super) const WAYS: usize = 4;

#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
pub(super) struct Bucket(pub(super) [Entry; WAYS]);

/// Bytes per table entry.
pub const ENTRY_BYTES: usize = std::mem::size_of::<Entry>();

#[inline(always)]
pub(super) fn tag_of(key: u64, v: &TtValue) -> u64 {
    (key & !0xffff) | (log_work(v.work) << 8) | 1
}

/// The bucket slot to write `key` into: its own entry, else a free one,
/// else the least valuable.
#[inline(always)]
pub(super) fn victim(b: &[Entry; WAYS], key: u64) -> usize {
    let mut victim = 0;
    let mut best = u64::MAX;
    for (j, e) in b.iter().enumerate() {
        if e.matches(key) {
            return j;
        }
        if !e.occupied() {
            victim = j;
            best = 0;
            continue;
        }
        let prio = e.priority();
        if prio < best {
            best = prio;
            victim = j;
        }
    }
    victim
}

#[inline(always)]
pub(super) fn value_of(e: &Entry) -> TtValue {
    TtValue {
        pn: e.pn,
        dn: e.dn,
        // The largest power of two not above the work stored.
        work: match e.work_log() {
            0 => 0,
            l => 1u32 << (l - 1).min(31),
        },
    }
}
#[inline(always)]
pub(super) fn log_work(w: u32) -> u64 {
    (32 - w.leading_zeros()) as u64
}
