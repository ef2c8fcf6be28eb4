//! Material signatures: which men stand on the board, by side and kind.
//!
//! A signature is written White's men, `v`, Black's men, each side in the
//! order `K Q R B N P`: `KNvB`, `PPvP`, `KQvK`. Parsing accepts either case
//! for the letters. A material and its colour-swapped twin (`KNvB` and
//! `BvKN`) share one table: the *canonical* orientation is the one whose
//! White side is the larger (more men, then more of the earlier letters in
//! `K Q R B N P`), and the other orientation is looked up by swapping
//! colours (and mirroring ranks) first.
//!
//! This module knows nothing of move generation: roles and colours are
//! plain indices (colour 0 White, 1 Black; role 0 pawn .. 5 king, the
//! numbering of `crate::rules::Role::index` and of shakmaty's roles minus
//! one).

use std::fmt;
use std::str::FromStr;

/// Role letters by role index (pawn .. king).
const ROLE_CHARS: [char; 6] = ['P', 'N', 'B', 'R', 'Q', 'K'];
/// Role indices in signature order: K Q R B N P.
pub const SIGNATURE_ORDER: [usize; 6] = [5, 4, 3, 2, 1, 0];

/// How many men of each kind each side has.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Material {
    /// `counts[colour][role]`, colour 0 White, role 0 pawn .. 5 king.
    pub counts: [[u8; 6]; 2],
}

/// A material string that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaterialError(pub String);

impl fmt::Display for MaterialError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MaterialError {}

impl Material {
    /// Men of side `c` (0 White, 1 Black).
    pub fn side_men(&self, c: usize) -> u32 {
        self.counts[c].iter().map(|&n| n as u32).sum()
    }

    /// Men on the board.
    pub fn men(&self) -> u32 {
        self.side_men(0) + self.side_men(1)
    }

    /// Pawns on the board, both sides.
    pub fn pawns(&self) -> u32 {
        (self.counts[0][0] + self.counts[1][0]) as u32
    }

    /// The colour-swapped twin.
    pub fn flip(&self) -> Material {
        Material {
            counts: [self.counts[1], self.counts[0]],
        }
    }

    /// The comparison key of one side: men, then counts in signature order.
    fn side_key(&self, c: usize) -> [u8; 7] {
        let mut k = [0u8; 7];
        k[0] = self.side_men(c) as u8;
        for (i, &r) in SIGNATURE_ORDER.iter().enumerate() {
            k[i + 1] = self.counts[c][r];
        }
        k
    }

    /// Whether this orientation is the one tables are stored in.
    pub fn is_canonical(&self) -> bool {
        self.side_key(0) >= self.side_key(1)
    }

    /// The stored orientation of this material.
    pub fn canonical(&self) -> Material {
        if self.is_canonical() {
            *self
        } else {
            self.flip()
        }
    }

    /// Whether both sides have at least one man (the game is not over).
    pub fn is_table_material(&self) -> bool {
        self.side_men(0) >= 1 && self.side_men(1) >= 1
    }

    /// Every material with `men` men, both sides at least one man, in
    /// canonical orientation, sorted by name.
    pub fn all_with_men(men: u32) -> Vec<Material> {
        let mut out = Vec::new();
        // Multisets of roles for one side with n men.
        fn sides(n: u32) -> Vec<[u8; 6]> {
            let mut v = Vec::new();
            fn rec(role: usize, left: u32, cur: &mut [u8; 6], v: &mut Vec<[u8; 6]>) {
                if role == 6 {
                    if left == 0 {
                        v.push(*cur);
                    }
                    return;
                }
                for k in 0..=left {
                    cur[role] = k as u8;
                    rec(role + 1, left - k, cur, v);
                }
                cur[role] = 0;
            }
            rec(0, n, &mut [0; 6], &mut v);
            v
        }
        for w in 1..men {
            for a in sides(w) {
                for b in sides(men - w) {
                    let m = Material { counts: [a, b] };
                    if m.is_canonical() {
                        out.push(m);
                    }
                }
            }
        }
        out.sort_by_key(|m| m.to_string());
        out
    }

    /// Every table material with 2 to `max_men` men, canonical, in an
    /// order where every material comes after those it can reach by a
    /// capture or a promotion (fewer men first, then fewer pawns).
    pub fn all_up_to(max_men: u32) -> Vec<Material> {
        let mut v: Vec<Material> = (2..=max_men).flat_map(Material::all_with_men).collect();
        v.sort_by_key(|m| (m.men(), m.pawns(), m.to_string()));
        v
    }

    /// The table materials one move can lead to from this one, other than
    /// itself: captures (with or without promotion) and promotions, by
    /// either side, canonical, without duplicates. Materials where a side
    /// has no men are game ends, not tables, and are left out.
    pub fn successors(&self) -> Vec<Material> {
        let mut out: Vec<Material> = Vec::new();
        let mut push = |m: Material| {
            if m.is_table_material() {
                let c = m.canonical();
                if c != self.canonical() && !out.contains(&c) {
                    out.push(c);
                }
            }
        };
        for us in 0..2 {
            let them = 1 - us;
            for victim in 0..6 {
                if self.counts[them][victim] == 0 {
                    continue;
                }
                let mut m = *self;
                m.counts[them][victim] -= 1;
                push(m);
                if self.counts[us][0] > 0 {
                    for promo in 1..6 {
                        let mut p = m;
                        p.counts[us][0] -= 1;
                        p.counts[us][promo] += 1;
                        push(p);
                    }
                }
            }
            if self.counts[us][0] > 0 {
                for promo in 1..6 {
                    let mut p = *self;
                    p.counts[us][0] -= 1;
                    p.counts[us][promo] += 1;
                    push(p);
                }
            }
        }
        out
    }

    /// A 64-bit key: 3 bits per count (colour-major, role-minor).
    pub fn key(&self) -> u64 {
        let mut k = 0u64;
        for c in 0..2 {
            for r in 0..6 {
                k = (k << 3) | self.counts[c][r] as u64;
            }
        }
        k
    }
}

impl fmt::Display for Material {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in 0..2 {
            if c == 1 {
                f.write_str("v")?;
            }
            for &r in &SIGNATURE_ORDER {
                for _ in 0..self.counts[c][r] {
                    write!(f, "{}", ROLE_CHARS[r])?;
                }
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Material {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Material {
    type Err = MaterialError;
    fn from_str(s: &str) -> Result<Material, MaterialError> {
        let parts: Vec<&str> = s.split(['v', 'V']).collect();
        if parts.len() != 2 {
            return Err(MaterialError(format!(
                "bad material {s:?}: expected White's men, 'v', Black's men, e.g. KNvB"
            )));
        }
        let mut m = Material::default();
        for (c, part) in parts.iter().enumerate() {
            for ch in part.chars() {
                let up = ch.to_ascii_uppercase();
                let r = ROLE_CHARS.iter().position(|&x| x == up).ok_or_else(|| {
                    MaterialError(format!(
                        "bad material {s:?}: {ch:?} is not a piece letter (K Q R B N P)"
                    ))
                })?;
                m.counts[c][r] += 1;
                if m.counts[c][r] > 7 {
                    return Err(MaterialError(format!("bad material {s:?}: too many men")));
                }
            }
        }
        if !m.is_table_material() {
            return Err(MaterialError(format!(
                "bad material {s:?}: each side needs at least one man (a side without men has already won)"
            )));
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_orient() {
        let m: Material = "KNvB".parse().unwrap();
        assert_eq!(m.to_string(), "KNvB");
        assert!(m.is_canonical());
        let t: Material = "bvkn".parse().unwrap();
        assert_eq!(t.to_string(), "BvKN");
        assert!(!t.is_canonical());
        assert_eq!(t.canonical(), m);
        assert!("KvX".parse::<Material>().is_err());
        assert!("Kv".parse::<Material>().is_err());
        assert!("KNB".parse::<Material>().is_err());
    }

    #[test]
    fn counts_of_materials() {
        // 2 men: 6*6 ordered pairs, 21 classes under colour swap.
        assert_eq!(Material::all_with_men(2).len(), 21);
        // 3 men: 6 * 21 ordered (1 v 2), canonical ones put the two on White.
        assert_eq!(Material::all_with_men(3).len(), 126);
        // 4 men: 1v3 (336) + 2v2 (21*21 = 441, 231 classes).
        assert_eq!(Material::all_with_men(4).len(), 336 + 231);
    }

    #[test]
    fn successors_are_smaller_or_have_fewer_pawns() {
        for m in Material::all_up_to(4) {
            for s in m.successors() {
                assert!((s.men(), s.pawns()) < (m.men(), m.pawns()), "{m} -> {s}");
            }
        }
        let mut s: Vec<String> = "KvP"
            .parse::<Material>()
            .unwrap()
            .successors()
            .iter()
            .map(|m| m.to_string())
            .collect();
        s.sort();
        assert_eq!(s, ["KvB", "KvK", "KvN", "KvQ", "KvR"]);
    }
}
