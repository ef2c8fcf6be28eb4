//! Zobrist keys, fixed at compile time from a SplitMix64 stream.

const fn splitmix(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (s, z ^ (z >> 31))
}

struct Keys {
    pieces: [[[u64; 64]; 6]; 2],
    black_to_move: u64,
    ep_file: [u64; 8],
}

const KEYS: Keys = {
    let mut state = 0x616e_7469_7072_6f6fu64; // "antiproo"
    let mut pieces = [[[0u64; 64]; 6]; 2];
    let mut c = 0;
    while c < 2 {
        let mut r = 0;
        while r < 6 {
            let mut s = 0;
            while s < 64 {
                let (ns, v) = splitmix(state);
                state = ns;
                pieces[c][r][s] = v;
                s += 1;
            }
            r += 1;
        }
        c += 1;
    }
    let (ns, black_to_move) = splitmix(state);
    state = ns;
    let mut ep_file = [0u64; 8];
    let mut f = 0;
    while f < 8 {
        let (ns, v) = splitmix(state);
        state = ns;
        ep_file[f] = v;
        f += 1;
    }
    Keys {
        pieces,
        black_to_move,
        ep_file,
    }
};

static PIECES: [[[u64; 64]; 6]; 2] = KEYS.pieces;

/// Key of a piece of colour index `c`, role index `r` on square `s`.
#[inline(always)]
pub(crate) fn piece(c: usize, r: usize, s: usize) -> u64 {
    PIECES[c][r][s]
}

/// Key XOR-ed in when Black is to move.
pub(crate) const BLACK_TO_MOVE: u64 = KEYS.black_to_move;

/// Key of an en-passant file (only when a capture is legal).
#[inline(always)]
pub(crate) fn ep_file(f: u32) -> u64 {
    KEYS.ep_file[f as usize & 7]
}
