//! The first pass: every slot decoded, and the set of transposition
//! targets with dense ids.

use crate::wintree::{NodeKind, WinTree};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// The set of transposition targets, with dense ids (rank in the set).
pub(super) struct Targets {
    words: Vec<u64>,
    rank: Vec<u32>,
    /// The targets' slots, by id.
    pub slots: Vec<u32>,
}

impl Targets {
    pub fn contains(&self, i: u32) -> bool {
        self.words[(i / 64) as usize] >> (i % 64) & 1 == 1
    }

    pub fn id(&self, i: u32) -> u32 {
        let w = self.words[(i / 64) as usize];
        self.rank[(i / 64) as usize] + (w & ((1u64 << (i % 64)) - 1)).count_ones()
    }

    pub fn len(&self) -> u32 {
        self.slots.len() as u32
    }

    /// Decodes every slot after the root in parallel and collects the
    /// transposition targets; `Err`: the first slot that does not decode.
    pub fn collect(tree: &WinTree) -> Result<Targets, u32> {
        let n = tree.len();
        let words_len = (n as usize).div_ceil(64);
        let words: Vec<AtomicU64> = (0..words_len).map(|_| AtomicU64::new(0)).collect();
        let first_bad = AtomicU32::new(u32::MAX);
        const CHUNK: u32 = 1 << 16;
        (0..n.div_ceil(CHUNK)).into_par_iter().for_each(|ch| {
            let lo = (ch * CHUNK).max(1);
            let hi = ((ch + 1) * CHUNK).min(n);
            for i in lo..hi {
                match tree.node(i) {
                    Ok(node) => {
                        if let NodeKind::Transposition { target } = node.kind {
                            words[(target / 64) as usize]
                                .fetch_or(1 << (target % 64), Ordering::Relaxed);
                        }
                    }
                    Err(_) => {
                        first_bad.fetch_min(i, Ordering::Relaxed);
                        return;
                    }
                }
            }
        });
        let bad = first_bad.load(Ordering::Relaxed);
        if bad != u32::MAX {
            return Err(bad);
        }
        let words: Vec<u64> = words.into_iter().map(AtomicU64::into_inner).collect();
        let mut rank = Vec::with_capacity(words.len());
        let mut slots = Vec::new();
        let mut total = 0u32;
        for (wi, &w) in words.iter().enumerate() {
            rank.push(total);
            total += w.count_ones();
            let mut b = w;
            while b != 0 {
                slots.push(wi as u32 * 64 + b.trailing_zeros());
                b &= b - 1;
            }
        }
        Ok(Targets { words, rank, slots })
    }
}
