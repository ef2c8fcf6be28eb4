//! A brute force for the fifty-move rule, with shakmaty alone (nothing of
//! the generator or the certifier): values by the definition of the rule,
//! over every clock.

use antiproof::tables::Value;
use shakmaty::variant::Antichess;
use shakmaty::{
    Bitboard, Board, CastlingMode, Color, FromSetup, Piece, Position as _, Role, Setup,
};
use std::collections::HashMap;
use std::sync::Arc;

// ---------------------------------------------------------------------
// The brute force: for one material, every placement of its men (no
// symmetry, identical men in every order) and side to move, the value at
// every half-move clock from 100 down to 0, by the definition of the
// rule: at clock c a side to move without legal moves scores its game end;
// otherwise at c = 100 the game is drawn; otherwise the best of its moves,
// a capture or pawn move leading to the next position at clock 0, any
// other to it at clock c + 1. Positions after pawn moves of the same
// material are valued from the previous round until nothing changes.

pub type Counts = [[u8; 6]; 2];

pub fn counts(board: &Board) -> Counts {
    let mut c = [[0u8; 6]; 2];
    for (ci, color) in [Color::White, Color::Black].into_iter().enumerate() {
        for (ri, role) in Role::ALL.into_iter().enumerate() {
            c[ci][ri] = board.by_piece(Piece { color, role }).count() as u8;
        }
    }
    c
}

pub fn slots(m: &Counts) -> Vec<Piece> {
    let mut v = Vec::new();
    for (ci, color) in [Color::White, Color::Black].into_iter().enumerate() {
        for (ri, role) in Role::ALL.into_iter().enumerate() {
            for _ in 0..m[ci][ri] {
                v.push(Piece { color, role });
            }
        }
    }
    v
}

/// The dense index of a position (no en passant) of material `slots`.
pub fn dense(pos: &Antichess, slots: &[Piece]) -> usize {
    let mut idx = if pos.turn() == Color::White { 0 } else { 1 };
    let mut i = 0;
    while i < slots.len() {
        let bb: Bitboard = pos.board().by_piece(slots[i]);
        for s in bb {
            idx = idx * 64 + u32::from(s) as usize;
            i += 1;
        }
    }
    idx
}

/// Edges of a position for the clock recursion.
#[derive(Clone, Copy)]
enum Edge {
    /// A capture or pawn move into another material: its value for the
    /// mover (+1 win, 0 draw, -1 loss), whatever the clock.
    Fixed(i8),
    /// A pawn move within the material (to this dense index, at clock 0).
    Same(u32),
    /// Any other move (to this dense index, at clock + 1).
    Inside(u32),
}

/// The brute force's memo, by material.
#[derive(Default)]
pub struct Brute {
    /// Solved materials: the clock-0 value of every dense index.
    pub memo: HashMap<Counts, Arc<Vec<Option<Value>>>>,
}

/// +1 win, 0 draw, -1 loss.
pub fn sign(v: Value) -> i8 {
    match v {
        Value::Win(_) => 1,
        Value::Draw => 0,
        Value::Loss(_) => -1,
    }
}

impl Brute {
    /// The value at clock 0 of a position for its side to move.
    pub fn value0(&mut self, pos: &Antichess) -> Value {
        if pos.us().is_empty() {
            return Value::Win(0);
        }
        if pos.legal_ep_square().is_some() {
            // Only captures: each resets the clock.
            let mut best = -1;
            for m in pos.legal_moves() {
                let mut c = pos.clone();
                c.play_unchecked(m);
                best = best.max(-sign(self.value0(&c)));
            }
            return [Value::Loss(1), Value::Draw, Value::Win(1)][(best + 1) as usize];
        }
        let m = counts(pos.board());
        let s = slots(&m);
        self.solve(m)[dense(pos, &s)].expect("a valid position")
    }

    /// The clock-0 value of every dense index of a material (`None`:
    /// not a position).
    pub fn solve(&mut self, m: Counts) -> Arc<Vec<Option<Value>>> {
        if let Some(v) = self.memo.get(&m) {
            return v.clone();
        }
        let s = slots(&m);
        let k = s.len();
        let size = 2 * 64usize.pow(k as u32);
        let mut term: Vec<Option<Value>> = vec![None; size];
        let mut valid = vec![false; size];
        let mut start = vec![0u32; size + 1];
        let mut edges: Vec<Edge> = Vec::new();
        for idx in 0..size {
            start[idx] = edges.len() as u32;
            let Some(pos) = position(idx, &s) else {
                continue;
            };
            valid[idx] = true;
            let moves = pos.legal_moves();
            if moves.is_empty() {
                term[idx] = Some(Value::Win(0)); // international
                continue;
            }
            if pos.is_insufficient_material() {
                term[idx] = Some(Value::Draw);
                continue;
            }
            for mv in moves {
                let mut c = pos.clone();
                c.play_unchecked(mv);
                if !mv.is_zeroing() {
                    edges.push(Edge::Inside(dense(&c, &s) as u32));
                } else if counts(c.board()) == m && c.legal_ep_square().is_none() {
                    edges.push(Edge::Same(dense(&c, &s) as u32));
                } else {
                    edges.push(Edge::Fixed(-sign(self.value0(&c))));
                }
            }
        }
        start[size] = edges.len() as u32;
        let mut z: Vec<Option<Value>> = vec![Some(Value::Draw); size];
        loop {
            let r = clock_rounds(&term, &valid, &start, &edges, &z);
            let same = (0..size).all(|i| r[i].map(sign) == z[i].map(sign));
            z = r;
            if same {
                break;
            }
        }
        let z = Arc::new(z);
        self.memo.insert(m, z.clone());
        z
    }
}

/// The shakmaty position of a dense index, if it is one.
pub fn position(idx: usize, s: &[Piece]) -> Option<Antichess> {
    let k = s.len();
    let mut board = Board::empty();
    let mut rest = idx;
    let mut sqs = vec![0u32; k];
    for i in (0..k).rev() {
        sqs[i] = (rest % 64) as u32;
        rest /= 64;
    }
    let turn = if rest == 0 {
        Color::White
    } else {
        Color::Black
    };
    for (i, &sq) in sqs.iter().enumerate() {
        let sq = shakmaty::Square::new(sq);
        if board.piece_at(sq).is_some() {
            return None;
        }
        if s[i].role == Role::Pawn
            && (sq.rank() == shakmaty::Rank::First || sq.rank() == shakmaty::Rank::Eighth)
        {
            return None;
        }
        board.set_piece_at(sq, s[i]);
    }
    let mut setup = Setup::empty();
    setup.board = board;
    setup.turn = turn;
    Antichess::from_setup(setup, CastlingMode::Standard).ok()
}

/// One round of the clock recursion, pawn moves within the material
/// valued by `z`: the clock-0 value of each index, `n` being 100 minus the
/// highest clock at which the position is decided.
fn clock_rounds(
    term: &[Option<Value>],
    valid: &[bool],
    start: &[u32],
    edges: &[Edge],
    z: &[Option<Value>],
) -> Vec<Option<Value>> {
    let size = term.len();
    let mut out: Vec<Option<Value>> = vec![None; size];
    // Clock 100: only game ends count.
    let mut g: Vec<i8> = (0..size).map(|i| term[i].map_or(0, sign)).collect();
    for i in 0..size {
        if valid[i] {
            out[i] = Some(term[i].unwrap_or(Value::Draw));
        }
    }
    for c in (0..100u16).rev() {
        let mut g2 = g.clone();
        for i in 0..size {
            if !valid[i] || term[i].is_some() {
                continue;
            }
            let mut best = -1i8;
            for e in &edges[start[i] as usize..start[i + 1] as usize] {
                let v = match *e {
                    Edge::Fixed(v) => v,
                    Edge::Same(j) => -sign(z[j as usize].expect("valid")),
                    Edge::Inside(j) => -g[j as usize],
                };
                best = best.max(v);
            }
            // Monotone in the clock: once decided, decided the same way.
            assert!(g[i] == 0 || g[i] == best, "index {i} at clock {c}");
            if g[i] == 0 && best != 0 {
                out[i] = Some(if best > 0 {
                    Value::Win(100 - c)
                } else {
                    Value::Loss(100 - c)
                });
            }
            g2[i] = best;
        }
        g = g2;
    }
    out
}

/// A memoised search over (position, clock) by the definition of the
/// rule, captures valued by the [`Brute`] force: +1 if the side to move
/// wins from `pos` at half-move clock `clock`, -1 if it loses, 0 if drawn.
pub struct Search<'a> {
    brute: &'a mut Brute,
    memo: HashMap<(Board, Color, u32), i8>,
}

impl<'a> Search<'a> {
    /// A search whose zeroing moves are valued by `brute`.
    pub fn new(brute: &'a mut Brute) -> Search<'a> {
        Search {
            brute,
            memo: HashMap::new(),
        }
    }

    /// Searched (position, clock) pairs so far.
    pub fn nodes(&self) -> usize {
        self.memo.len()
    }

    /// The value of `pos` at `clock` (international rules).
    pub fn value(&mut self, pos: &Antichess, clock: u32) -> i8 {
        if pos.us().is_empty() {
            return 1;
        }
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return 1;
        }
        if pos.is_insufficient_material() || clock >= 100 {
            return 0;
        }
        let key = (pos.board().clone(), pos.turn(), clock);
        if let Some(&v) = self.memo.get(&key) {
            return v;
        }
        let mut best = -1;
        for m in moves {
            let mut c = pos.clone();
            c.play_unchecked(m);
            let v = if m.is_zeroing() {
                -sign(self.brute.value0(&c))
            } else {
                -self.value(&c, clock + 1)
            };
            best = best.max(v);
            if best == 1 {
                break;
            }
        }
        self.memo.insert(key, best);
        best
    }
}
