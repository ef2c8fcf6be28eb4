//! Attack tables, all built at compile time.
//!
//! Leapers (knight, king, pawn) are plain tables. Sliders use
//! "kindergarten" bitboards: the blockers on a line are gathered into six
//! bits by one multiplication (no two partial products overlap, so there
//! are no carries) and looked up in a first-rank attack table. No start-up
//! cost, no magic numbers searched for, 4.5 KB of tables, a handful of
//! instructions per line.

use super::types::Color;

const fn leaper_table(deltas: &[(i32, i32)]) -> [u64; 64] {
    let mut table = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let (f, r) = ((sq % 8) as i32, (sq / 8) as i32);
        let mut i = 0;
        let mut bb = 0u64;
        while i < deltas.len() {
            let (nf, nr) = (f + deltas[i].0, r + deltas[i].1);
            if nf >= 0 && nf < 8 && nr >= 0 && nr < 8 {
                bb |= 1u64 << (nr * 8 + nf);
            }
            i += 1;
        }
        table[sq] = bb;
        sq += 1;
    }
    table
}

/// Knight moves from each square.
pub static KNIGHT: [u64; 64] = leaper_table(&[
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
]);

/// King moves from each square.
pub static KING: [u64; 64] = leaper_table(&[
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
]);

/// Squares a pawn of each colour attacks from each square.
pub static PAWN: [[u64; 64]; 2] = [
    leaper_table(&[(-1, 1), (1, 1)]),
    leaper_table(&[(-1, -1), (1, -1)]),
];

const fn ray_mask(df: i32, dr: i32) -> [u64; 64] {
    // Both directions of the line through each square, the square excluded.
    let mut table = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let (f, r) = ((sq % 8) as i32, (sq / 8) as i32);
        let mut bb = 0u64;
        let mut dir = -1;
        while dir <= 1 {
            let (mut nf, mut nr) = (f + df * dir, r + dr * dir);
            while nf >= 0 && nf < 8 && nr >= 0 && nr < 8 {
                bb |= 1u64 << (nr * 8 + nf);
                nf += df * dir;
                nr += dr * dir;
            }
            dir += 2;
        }
        table[sq] = bb;
        sq += 1;
    }
    table
}

static DIAG_EX: [u64; 64] = ray_mask(1, 1);
static ANTI_EX: [u64; 64] = ray_mask(-1, 1);

/// `FIRST_RANK[file][inner]`: the attacked files of a rook on `file` of a rank
/// whose b..g occupancy is `inner` (6 bits).
static FIRST_RANK: [[u8; 64]; 8] = {
    let mut t = [[0u8; 64]; 8];
    let mut file = 0;
    while file < 8 {
        let mut inner = 0;
        while inner < 64 {
            let occ = (inner as u32) << 1;
            let mut att = 0u32;
            let mut f = file as i32 + 1;
            while f < 8 {
                att |= 1 << f;
                if occ & (1 << f) != 0 {
                    break;
                }
                f += 1;
            }
            let mut f = file as i32 - 1;
            while f >= 0 {
                att |= 1 << f;
                if occ & (1 << f) != 0 {
                    break;
                }
                f -= 1;
            }
            t[file][inner] = att as u8;
            inner += 1;
        }
        file += 1;
    }
    t
};

/// `DIAG_FILL[file][inner]`: the first-rank attacks copied onto every rank,
/// to be masked by a diagonal.
static DIAG_FILL: [[u64; 64]; 8] = {
    let mut t = [[0u64; 64]; 8];
    let mut file = 0;
    while file < 8 {
        let mut inner = 0;
        while inner < 64 {
            t[file][inner] = (FIRST_RANK[file][inner] as u64).wrapping_mul(0x0101_0101_0101_0101);
            inner += 1;
        }
        file += 1;
    }
    t
};

/// `FILE_FILL[rank][inner]`: a-file attacks of a rook on `rank` whose a2..a7
/// occupancy, gathered by [`FILE_GATHER`], is `inner`.
static FILE_FILL: [[u64; 64]; 8] = {
    let mut t = [[0u64; 64]; 8];
    let mut rank = 0;
    while rank < 8 {
        let mut inner = 0;
        while inner < 64 {
            let att = FIRST_RANK[rank][inner] as u64;
            let mut bb = 0u64;
            let mut r = 0;
            while r < 8 {
                if att & (1 << r) != 0 {
                    bb |= 1u64 << (8 * r);
                }
                r += 1;
            }
            t[rank][inner] = bb;
            inner += 1;
        }
        rank += 1;
    }
    t
};

/// Multiplier taking a2..a7 to bits 58..63 (a2 lowest).
const FILE_GATHER: u64 = 0x0004_0810_2040_8000;
/// Multiplier taking one bit per file of a line to the eighth rank.
const DIAG_GATHER: u64 = 0x0202_0202_0202_0202;
const A2_TO_A7: u64 = 0x0001_0101_0101_0100;

#[inline(always)]
fn diagonal_line(occ: u64, sq: usize, mask: u64) -> u64 {
    let inner = ((occ & mask).wrapping_mul(DIAG_GATHER) >> 58) as usize;
    DIAG_FILL[sq & 7][inner] & mask
}

#[inline(always)]
fn file_attacks(occ: u64, sq: usize) -> u64 {
    let file = sq & 7;
    let inner = (((occ >> file) & A2_TO_A7).wrapping_mul(FILE_GATHER) >> 58) as usize;
    FILE_FILL[sq >> 3][inner] << file
}

#[inline(always)]
fn rank_attacks(occ: u64, sq: usize) -> u64 {
    let shift = sq & 56;
    let inner = ((occ >> (shift + 1)) & 63) as usize;
    (FIRST_RANK[sq & 7][inner] as u64) << shift
}

/// Bishop moves from `sq` with the board occupied as `occ` (blockers included).
#[inline(always)]
pub fn bishop(sq: usize, occ: u64) -> u64 {
    diagonal_line(occ, sq, DIAG_EX[sq]) | diagonal_line(occ, sq, ANTI_EX[sq])
}

/// Rook moves from `sq` with the board occupied as `occ` (blockers included).
#[inline(always)]
pub fn rook(sq: usize, occ: u64) -> u64 {
    file_attacks(occ, sq) | rank_attacks(occ, sq)
}

/// Queen moves from `sq`.
#[inline(always)]
pub fn queen(sq: usize, occ: u64) -> u64 {
    bishop(sq, occ) | rook(sq, occ)
}

/// Squares attacked by a pawn of `color` on `sq`.
#[inline(always)]
pub fn pawn(color: Color, sq: usize) -> u64 {
    PAWN[color.index()][sq]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slow_slider(sq: usize, occ: u64, dirs: &[(i32, i32)]) -> u64 {
        let mut bb = 0;
        for &(df, dr) in dirs {
            let (mut f, mut r) = ((sq % 8) as i32 + df, (sq / 8) as i32 + dr);
            while (0..8).contains(&f) && (0..8).contains(&r) {
                let b = 1u64 << (r * 8 + f);
                bb |= b;
                if occ & b != 0 {
                    break;
                }
                f += df;
                r += dr;
            }
        }
        bb
    }

    #[test]
    fn sliders_match_a_slow_ray_walk() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let occ = x & x.rotate_left(17);
            let sq = (x >> 58) as usize;
            let r = [(1, 0), (-1, 0), (0, 1), (0, -1)];
            let b = [(1, 1), (-1, 1), (1, -1), (-1, -1)];
            assert_eq!(rook(sq, occ), slow_slider(sq, occ, &r), "rook {sq} {occ:x}");
            assert_eq!(
                bishop(sq, occ),
                slow_slider(sq, occ, &b),
                "bishop {sq} {occ:x}"
            );
        }
    }

    #[test]
    fn leapers() {
        assert_eq!(KNIGHT[0].count_ones(), 2);
        assert_eq!(KNIGHT[27].count_ones(), 8);
        assert_eq!(KING[0].count_ones(), 3);
        assert_eq!(PAWN[0][8], 1 << 17);
        assert_eq!(PAWN[1][49], (1 << 40) | (1 << 42));
    }
}
