//! Table indexing: from the squares of the men of a material and the side
//! to move to an index, and back.
//!
//! Pure arithmetic on squares (a1 = 0 .. h8 = 63); no move generation, so
//! the generator (`crate::rules`) and the certifier (shakmaty) share it.
//!
//! # Layout
//!
//! The men of a material are split into *groups* of identical men (same
//! colour and kind), White's first, each side in the order `K Q R B N P`.
//! Each group's squares, sorted, are one k-subset of its domain: the 64
//! squares, or for pawns the 48 squares a2..h7 (square minus 8). A k-subset
//! `a1 < a2 < .. < ak` has the combinatorial (colex) number
//! `C(a1,1) + C(a2,2) + .. + C(ak,k)`.
//!
//! The first group is the *lead*. Board symmetries act on whole positions:
//! the 8 symmetries of the square (reflections in files, ranks and the a1-h8
//! diagonal, and their compositions) for materials without pawns, only the
//! left-right mirror with pawns. Of each orbit of lead subsets only the one
//! with the smallest number (its *representative*) is stored, numbered in
//! increasing order; among the symmetries taking a position's lead to its
//! representative the one giving the smallest number for the other groups
//! is used. So
//!
//! `index = (stm * leads + lead_number) * rest + rest_number`
//!
//! where `stm` is 0 for White to move, 1 for Black, `leads` the number of
//! representatives, and `rest_number` the mixed-radix number of the other
//! groups' subsets (first group most significant, radix `C(domain, k)`).
//! Indices whose squares overlap, or that are not the smallest of their
//! orbit, are *unused*: they hold 0 and are never probed.

#![allow(clippy::needless_range_loop)] // square lists are indexed by slot

use super::material::{Material, SIGNATURE_ORDER};

/// Square maps of the 8 symmetries: bit 2 transposes (file <-> rank), then
/// bit 0 mirrors files, bit 1 mirrors ranks. Symmetry 0 is the identity,
/// symmetry 1 the left-right mirror (the only one kept with pawns).
pub static SYM: [[u8; 64]; 8] = sym_tables();

const fn sym_tables() -> [[u8; 64]; 8] {
    let mut t = [[0u8; 64]; 8];
    let mut s = 0;
    while s < 8 {
        let mut sq = 0;
        while sq < 64 {
            let (mut f, mut r) = (sq % 8, sq / 8);
            if s & 4 != 0 {
                let x = f;
                f = r;
                r = x;
            }
            if s & 1 != 0 {
                f = 7 - f;
            }
            if s & 2 != 0 {
                r = 7 - r;
            }
            t[s][sq] = (r * 8 + f) as u8;
            sq += 1;
        }
        s += 1;
    }
    t
}

/// Binomial coefficients `C(n, k)` for n <= 64, k <= 4.
static BINOM: [[u64; 5]; 65] = binom_table();

const fn binom_table() -> [[u64; 5]; 65] {
    let mut t = [[0u64; 5]; 65];
    let mut n = 0;
    while n <= 64 {
        t[n][0] = 1;
        let mut k = 1;
        while k <= 4 {
            t[n][k] = if n == 0 {
                0
            } else {
                t[n - 1][k - 1] + t[n - 1][k]
            };
            k += 1;
        }
        n += 1;
    }
    t
}

/// `C(n, k)`.
#[inline(always)]
pub fn binom(n: usize, k: usize) -> u64 {
    BINOM[n][k]
}

/// The colex number of a sorted subset.
#[inline(always)]
fn subset_number(sorted: &[u8]) -> u64 {
    let mut x = 0;
    for (i, &a) in sorted.iter().enumerate() {
        x += BINOM[a as usize][i + 1];
    }
    x
}

/// The sorted k-subset with colex number `x`.
#[inline]
fn subset_of(mut x: u64, k: usize, out: &mut [u8]) {
    if k == 1 {
        out[0] = x as u8;
        return;
    }
    let mut hi = 64usize;
    for i in (0..k).rev() {
        // Largest a < hi with C(a, i+1) <= x, by binary search.
        let (mut lo, mut up) = (i, hi - 1);
        while lo < up {
            let mid = (lo + up).div_ceil(2);
            if BINOM[mid][i + 1] <= x {
                lo = mid;
            } else {
                up = mid - 1;
            }
        }
        out[i] = lo as u8;
        x -= BINOM[lo][i + 1];
        hi = lo;
    }
}

/// Sorts up to 4 bytes in place (insertion sort).
#[inline(always)]
fn sort_small(v: &mut [u8]) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1] > x {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

/// Identical men of one colour and kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group {
    /// 0 White, 1 Black.
    pub color: usize,
    /// 0 pawn .. 5 king.
    pub role: usize,
    /// How many.
    pub count: usize,
    /// First slot of the group in a square list.
    pub start: usize,
}

impl Group {
    fn is_pawn(&self) -> bool {
        self.role == 0
    }
    fn domain(&self) -> usize {
        if self.is_pawn() { 48 } else { 64 }
    }
    #[inline(always)]
    fn dom(&self, sq: u8) -> u8 {
        if self.is_pawn() { sq - 8 } else { sq }
    }
    #[inline(always)]
    fn undom(&self, d: u8) -> u8 {
        if self.is_pawn() { d + 8 } else { d }
    }
}

/// Most men a table holds.
pub const MAX_MEN: usize = 4;

/// The squares of a material's men in slot order (groups in order, each
/// group's squares ascending) and the side to move (0 White, 1 Black).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Squares {
    /// Squares by slot; slots past the material's men are unused.
    pub sq: [u8; MAX_MEN],
    /// 0 White to move, 1 Black.
    pub stm: usize,
}

/// The index layout of one material (see the module docs).
#[derive(Clone, Debug)]
pub struct Layout {
    /// The material, canonical orientation.
    pub material: Material,
    /// Groups in slot order.
    pub groups: Vec<Group>,
    /// Men (slots).
    pub men: usize,
    /// Symmetry mask in use: all 8, or identity and mirror with pawns.
    pub sym_mask: u8,
    /// For each lead subset number: its representative's lead number.
    lead_number: Vec<u32>,
    /// For each lead subset number: the symmetries taking it to its
    /// representative.
    lead_syms: Vec<u8>,
    /// Lead number -> representative subset number.
    lead_rep: Vec<u32>,
    /// Size of the rest part (product of the other groups' radices).
    pub rest: u64,
    /// Entries per side to move.
    pub half: u64,
}

impl Layout {
    /// The layout of a material (its canonical orientation is used).
    pub fn new(material: &Material) -> Layout {
        let material = material.canonical();
        let mut groups = Vec::new();
        let mut start = 0;
        for color in 0..2 {
            for &role in &SIGNATURE_ORDER {
                let count = material.counts[color][role] as usize;
                if count > 0 {
                    groups.push(Group {
                        color,
                        role,
                        count,
                        start,
                    });
                    start += count;
                }
            }
        }
        assert!(
            start <= MAX_MEN && !groups.is_empty(),
            "material {material} too large"
        );
        let sym_mask = if material.pawns() > 0 { 0b11 } else { 0xff };
        let lead = groups[0];
        let n_lead = binom(lead.domain(), lead.count);
        let mut lead_syms = vec![0u8; n_lead as usize];
        let mut rep_of = vec![0u32; n_lead as usize];
        let mut sq = [0u8; MAX_MEN];
        let mut t = [0u8; MAX_MEN];
        for x in 0..n_lead {
            subset_of(x, lead.count, &mut sq);
            let mut best = u64::MAX;
            let mut mask = 0u8;
            for s in 0..8 {
                if sym_mask & (1 << s) == 0 {
                    continue;
                }
                for i in 0..lead.count {
                    t[i] = lead.dom(SYM[s][lead.undom(sq[i]) as usize]);
                }
                sort_small(&mut t[..lead.count]);
                let y = subset_number(&t[..lead.count]);
                if y < best {
                    best = y;
                    mask = 0;
                }
                if y == best {
                    mask |= 1 << s;
                }
            }
            lead_syms[x as usize] = mask;
            rep_of[x as usize] = best as u32;
        }
        let mut lead_rep = Vec::new();
        let mut number_of_rep = vec![u32::MAX; n_lead as usize];
        for x in 0..n_lead as u32 {
            if rep_of[x as usize] == x {
                number_of_rep[x as usize] = lead_rep.len() as u32;
                lead_rep.push(x);
            }
        }
        let lead_number = rep_of.iter().map(|&r| number_of_rep[r as usize]).collect();
        let rest = groups[1..]
            .iter()
            .map(|g| binom(g.domain(), g.count))
            .product::<u64>();
        let half = lead_rep.len() as u64 * rest;
        Layout {
            material,
            men: start,
            groups,
            sym_mask,
            lead_number,
            lead_syms,
            lead_rep,
            rest,
            half,
        }
    }

    /// Entries in the table (both sides to move).
    pub fn size(&self) -> u64 {
        2 * self.half
    }

    /// The (colour, role) of each slot.
    pub fn slot_pieces(&self) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        for g in &self.groups {
            for _ in 0..g.count {
                v.push((g.color, g.role));
            }
        }
        v
    }

    /// The index of a position given by its squares in slot order (each
    /// group's squares in any order) and the side to move. The squares
    /// must be distinct, pawns on ranks 2 to 7.
    #[inline]
    pub fn encode(&self, p: &Squares) -> u64 {
        let lead = &self.groups[0];
        let mut t = [0u8; MAX_MEN];
        for i in 0..lead.count {
            t[i] = lead.dom(p.sq[i]);
        }
        sort_small(&mut t[..lead.count]);
        let x = subset_number(&t[..lead.count]) as usize;
        let mask = self.lead_syms[x];
        let mut best = u64::MAX;
        for s in 0..8 {
            if mask & (1 << s) == 0 {
                continue;
            }
            let map = &SYM[s];
            let mut r = 0u64;
            for g in &self.groups[1..] {
                for i in 0..g.count {
                    t[i] = g.dom(map[p.sq[g.start + i] as usize]);
                }
                sort_small(&mut t[..g.count]);
                r = r * binom(g.domain(), g.count) + subset_number(&t[..g.count]);
            }
            if r < best {
                best = r;
            }
        }
        (p.stm as u64 * self.lead_rep.len() as u64 + self.lead_number[x] as u64) * self.rest + best
    }

    /// The squares of an index (each group ascending), and whether the
    /// index is used: squares distinct and the index the smallest of its
    /// orbit.
    #[inline]
    pub fn decode(&self, index: u64) -> (Squares, bool) {
        let p = self.squares(index);
        let mut occ = 0u64;
        for &s in &p.sq[..self.men] {
            occ |= 1 << s;
        }
        let used = occ.count_ones() as usize == self.men && self.encode(&p) == index;
        (p, used)
    }

    /// The squares of an index (each group ascending), used or not.
    #[inline]
    pub fn squares(&self, index: u64) -> Squares {
        let stm = (index / self.half) as usize;
        let rem = index % self.half;
        let ln = (rem / self.rest) as usize;
        let mut r = rem % self.rest;
        let mut p = Squares {
            sq: [0; MAX_MEN],
            stm,
        };
        let lead = &self.groups[0];
        let mut t = [0u8; MAX_MEN];
        subset_of(self.lead_rep[ln] as u64, lead.count, &mut t);
        for i in 0..lead.count {
            p.sq[i] = lead.undom(t[i]);
        }
        for g in self.groups[1..].iter().rev() {
            let radix = binom(g.domain(), g.count);
            subset_of(r % radix, g.count, &mut t);
            r /= radix;
            for i in 0..g.count {
                p.sq[g.start + i] = g.undom(t[i]);
            }
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetries_are_a_group_of_8_distinct_maps() {
        for s in 0..8 {
            let mut seen = 0u64;
            for sq in 0..64 {
                seen |= 1 << SYM[s][sq];
            }
            assert_eq!(seen, u64::MAX);
        }
        for s in 0..8 {
            for t in 0..s {
                assert_ne!(SYM[s], SYM[t]);
            }
        }
        // Symmetry 1 mirrors files: a1 <-> h1.
        assert_eq!(SYM[1][0], 7);
        assert_eq!(SYM[1][8], 15);
    }

    #[test]
    fn subsets_round_trip() {
        let mut out = [0u8; 4];
        for k in 1..=3 {
            for x in (0..binom(64, k)).step_by(97) {
                subset_of(x, k, &mut out);
                assert!(out[..k].windows(2).all(|w| w[0] < w[1]));
                assert_eq!(subset_number(&out[..k]), x);
            }
        }
    }

    #[test]
    fn pawnless_single_lead_has_10_representatives() {
        let l = Layout::new(&"KvK".parse().unwrap());
        assert_eq!(l.lead_rep.len(), 10);
        assert_eq!(l.size(), 2 * 10 * 64);
        let l = Layout::new(&"KvP".parse().unwrap());
        assert_eq!(l.lead_rep.len(), 32);
        assert_eq!(l.size(), 2 * 32 * 48);
    }

    #[test]
    fn decode_encode_round_trip_and_symmetric_positions_share_an_index() {
        for name in ["KvK", "KNvB", "KKvQ", "PvP", "KPvK", "NNvNN", "BBBvK"] {
            let l = Layout::new(&name.parse().unwrap());
            let mut used = 0;
            for i in (0..l.size()).step_by(7) {
                let (p, ok) = l.decode(i);
                if !ok {
                    continue;
                }
                used += 1;
                assert_eq!(l.encode(&p), i);
                for s in 0..8 {
                    if l.sym_mask & (1 << s) == 0 {
                        continue;
                    }
                    let mut q = p;
                    for j in 0..l.men {
                        q.sq[j] = SYM[s][p.sq[j] as usize];
                    }
                    assert_eq!(l.encode(&q), i, "{name} index {i} symmetry {s}");
                }
            }
            assert!(used > 0, "{name}");
        }
    }
}
