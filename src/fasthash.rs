//! One fast hasher for the crate's in-memory maps: Zobrist keys, material
//! keys, packed positions.
//!
//! Multiply-rotate over 8-byte words with a final xor-shift: a few cycles a
//! key. It offers no defence against chosen keys, and needs none: every
//! key is a position or material of the proof or table at hand, and a bad
//! spread would cost time, never a wrong answer (maps compare keys in
//! full). Plain code, no rules: the checker may use it too.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

const K: u64 = 0x9e37_79b9_7f4a_7c15;

/// The hasher (see the module docs).
#[derive(Clone, Copy, Default, Debug)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            self.0 = (self.0.rotate_left(23) ^ w).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(23) ^ x).wrapping_mul(K);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
}

/// Builds [`FastHasher`]s.
pub type FastBuild = BuildHasherDefault<FastHasher>;
/// A map with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, FastBuild>;
/// A set with [`FastHasher`].
pub type FastSet<K> = HashSet<K, FastBuild>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn spreads_small_and_word_keys() {
        let b = FastBuild::default();
        let small: FastSet<u64> = (0..1000u64).map(|i| b.hash_one(i) >> 54).collect();
        assert!(small.len() > 500, "{}", small.len());
        let a = b.hash_one([1u8; 25]);
        let mut k = [1u8; 25];
        k[24] = 2;
        assert_ne!(a, b.hash_one(k));
    }
}
