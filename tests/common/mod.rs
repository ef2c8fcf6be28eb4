//! Shared helpers of the web tests: a tiny exhaustive prover that builds
//! small proofs in memory (records as the proof store holds them), so the
//! tests do not depend on the real prover.
#![allow(dead_code)]

use antiproof::rules::{Color, Move, Position, RuleSet};
use antiproof::store::{Key, Record, Verdict};
use antiproof::wintree::{MoveCode, ProofDag, WriteOptions, write_tree};
use std::collections::{HashMap, HashSet};

/// Proves that `winner` wins from `pos` with a small proof-number search
/// (mobility initialisation, whole tree in memory, a position repeated on
/// its own path counts as a loss for the winner) within `max_nodes` tree
/// nodes; returns the proof as store records keyed by packed position
/// (sizes filled in), or `None`.
pub fn prove(pos: &Position, winner: Color, max_nodes: usize) -> Option<HashMap<Key, Record>> {
    let mut t = Pn {
        nodes: Vec::new(),
        winner,
    };
    t.add(*pos, usize::MAX, None);
    while t.nodes[0].pn != 0 && t.nodes[0].dn != 0 && t.nodes.len() < max_nodes {
        let mut n = 0;
        while !t.nodes[n].kids.is_empty() {
            let kids = &t.nodes[n].kids;
            n = if t.nodes[n].pos.turn() == winner {
                *kids.iter().min_by_key(|&&k| t.nodes[k].pn).unwrap()
            } else {
                *kids.iter().min_by_key(|&&k| t.nodes[k].dn).unwrap()
            };
        }
        t.expand(n);
        let mut up = n;
        while up != usize::MAX {
            t.update(up);
            up = t.nodes[up].parent;
        }
    }
    if t.nodes[0].pn != 0 {
        return None;
    }
    let mut out = HashMap::new();
    t.extract(0, &mut out);
    let keys: Vec<Key> = out.keys().copied().collect();
    for k in keys {
        let p = Position::unpack(&antiproof::rules::PackedPosition(k)).unwrap();
        let size = reach(&p, &out).len() as u64;
        out.get_mut(&k).unwrap().size = size;
    }
    Some(out)
}

const INF: u64 = u64::MAX / 4;

struct PnNode {
    pos: Position,
    parent: usize,
    mv: Option<Move>,
    kids: Vec<usize>,
    pn: u64,
    dn: u64,
}

struct Pn {
    nodes: Vec<PnNode>,
    winner: Color,
}

impl Pn {
    fn add(&mut self, pos: Position, parent: usize, mv: Option<Move>) -> usize {
        let (pn, dn) = if let Some(o) = pos.outcome(RuleSet::International) {
            if o.winner() == Some(self.winner) {
                (0, INF)
            } else {
                (INF, 0)
            }
        } else if self.repeats(parent, &pos) {
            (INF, 0)
        } else {
            let n = pos.count_legal_moves() as u64;
            if pos.turn() == self.winner {
                (1, n)
            } else {
                (n, 1)
            }
        };
        self.nodes.push(PnNode {
            pos,
            parent,
            mv,
            kids: Vec::new(),
            pn,
            dn,
        });
        self.nodes.len() - 1
    }

    fn repeats(&self, mut up: usize, pos: &Position) -> bool {
        let key = pos.pack();
        while up != usize::MAX {
            if self.nodes[up].pos.pack() == key {
                return true;
            }
            up = self.nodes[up].parent;
        }
        false
    }

    fn expand(&mut self, n: usize) {
        let pos = self.nodes[n].pos;
        let mut kids = Vec::new();
        for &m in pos.legal_moves().iter() {
            kids.push(self.add(pos.play(m), n, Some(m)));
        }
        self.nodes[n].kids = kids;
    }

    fn update(&mut self, n: usize) {
        if self.nodes[n].kids.is_empty() {
            return;
        }
        let kids = &self.nodes[n].kids;
        let pns = kids.iter().map(|&k| self.nodes[k].pn);
        let dns = kids.iter().map(|&k| self.nodes[k].dn);
        let (pn, dn) = if self.nodes[n].pos.turn() == self.winner {
            (
                pns.min().unwrap(),
                dns.fold(0, |a: u64, b| a.saturating_add(b)).min(INF),
            )
        } else {
            (
                pns.fold(0, |a: u64, b| a.saturating_add(b)).min(INF),
                dns.min().unwrap(),
            )
        };
        self.nodes[n].pn = pn;
        self.nodes[n].dn = dn;
    }

    fn extract(&self, n: usize, out: &mut HashMap<Key, Record>) {
        let node = &self.nodes[n];
        let key = node.pos.pack().0;
        if node.kids.is_empty() || out.contains_key(&key) {
            return;
        }
        if node.pos.turn() == self.winner {
            let &k = node.kids.iter().find(|&&k| self.nodes[k].pn == 0).unwrap();
            let mv = self.nodes[k].mv.unwrap().watkins_code();
            out.insert(
                key,
                Record {
                    verdict: Verdict::Win,
                    flags: 0,
                    mv,
                    size: 0,
                },
            );
            self.extract(k, out);
        } else {
            out.insert(
                key,
                Record {
                    verdict: Verdict::Loss,
                    flags: 0,
                    mv: 0,
                    size: 0,
                },
            );
            for &k in &node.kids {
                self.extract(k, out);
            }
        }
    }
}

/// Distinct positions reachable in the proof from `pos`, itself included
/// (game-over leaves count).
pub fn reach(pos: &Position, recs: &HashMap<Key, Record>) -> HashSet<Key> {
    let mut seen = HashSet::new();
    let mut stack = vec![*pos];
    while let Some(p) = stack.pop() {
        if !seen.insert(p.pack().0) {
            continue;
        }
        let Some(r) = recs.get(&p.pack().0) else {
            continue;
        };
        match r.verdict {
            Verdict::Win => {
                let m = p
                    .legal_moves()
                    .iter()
                    .copied()
                    .find(|m| m.watkins_code() == r.mv)
                    .unwrap();
                stack.push(p.play(m));
            }
            Verdict::Loss => {
                for &m in p.legal_moves().iter() {
                    stack.push(p.play(m));
                }
            }
        }
    }
    seen
}

/// The proof of `winner` from the position after `line` (UCI, from the
/// start), as records. Panics if the small search does not find it.
pub fn prove_line(line: &str, winner: Color) -> (Position, HashMap<Key, Record>) {
    let (pos, _) = Position::startpos().play_line_str(line).unwrap();
    let recs = prove(&pos, winner, 500_000).expect("small proof found");
    (pos, recs)
}

/// The records as a proof DAG (one node per distinct position, game-over
/// leaves included), with the root's id.
pub fn dag_of(root: &Position, recs: &HashMap<Key, Record>) -> (ProofDag, usize) {
    let mut dag = ProofDag::new();
    let mut ids: HashMap<Key, usize> = HashMap::new();
    let mut todo = vec![*root];
    ids.insert(root.pack().0, dag.add_node());
    while let Some(p) = todo.pop() {
        let id = ids[&p.pack().0];
        let Some(r) = recs.get(&p.pack().0) else {
            continue;
        };
        let moves: Vec<Move> = match r.verdict {
            Verdict::Win => p
                .legal_moves()
                .iter()
                .copied()
                .filter(|m| m.watkins_code() == r.mv)
                .collect(),
            Verdict::Loss => p.legal_moves().iter().copied().collect(),
        };
        for m in moves {
            let c = p.play(m);
            let cid = match ids.get(&c.pack().0) {
                Some(&x) => x,
                None => {
                    let x = dag.add_node();
                    ids.insert(c.pack().0, x);
                    todo.push(c);
                    x
                }
            };
            dag.add_edge(id, MoveCode(m.watkins_code()), cid);
        }
    }
    (dag, 0)
}

/// Writes the proof of `winner` after `line` as `<dir>/<name>.tree` (the
/// line as the prolog; with `sizes` false, no size table) and returns its
/// path and the proof's size in positions.
pub fn write_proof(
    dir: &std::path::Path,
    name: &str,
    line: &str,
    winner: Color,
    sizes: bool,
) -> (std::path::PathBuf, u64) {
    let (pos, recs) = prove_line(line, winner);
    let (dag, root) = dag_of(&pos, &recs);
    let (_, played) = Position::startpos().play_line_str(line).unwrap();
    let prolog: Vec<MoveCode> = played.iter().map(|m| MoveCode(m.watkins_code())).collect();
    let opts = WriteOptions {
        size_table: sizes,
        size_depth: None,
    };
    let written = write_tree(&dag, root, &prolog, &opts).unwrap();
    let path = dir.join(format!("{name}.tree"));
    std::fs::write(&path, &written.bytes).unwrap();
    (path, dag.reachable(root))
}

/// A fresh empty directory under the target dir.
pub fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}
