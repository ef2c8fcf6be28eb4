//! Test support shared by the modules of the integration tests (one test
//! binary, `tests/tests.rs`): the binary under test and ways to run it;
//! temporary directories and state directories, one set per test module;
//! a small proof-number search built on `crate::rules` that proves the easy
//! ladder rungs and hands the proof over as a DAG (transpositions merged),
//! a win-tree file and store records; a plain walker of stored proofs; a
//! seeded random generator. The checker under test shares no code with
//! this generator.

use antiproof::rules::{Color, Move, Position, Rules};
use antiproof::store::{Key, Record, Store, WinLoss};
use antiproof::stored::{self, StoredProof};
use antiproof::wintree::{MoveCode, ProofDag, WriteOptions, write_tree};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The `antiproof` binary of this build.
pub const EXE: &str = env!("CARGO_BIN_EXE_antiproof");

/// A command running the `antiproof` binary, arguments to be added.
pub fn command() -> Command {
    Command::new(EXE)
}

/// A process's standard error as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// One of a child's two output streams.
#[derive(Clone, Copy, Debug)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Runs `cmd` (standard input empty) with the reading end of `closed`'s
/// pipe closed before the program writes, as `antiproof ... | true` closes
/// standard output and a log reader that died (`2>&1 | head -1`) closes
/// standard error; the exit code and the other stream's text.
pub fn run_with_closed(mut cmd: Command, closed: Stream) -> (Option<i32>, String) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // `spawn` returns once the program is executing, before its first
    // write: every write it makes to the closed stream finds the pipe
    // closed.
    match closed {
        Stream::Stdout => drop(child.stdout.take()),
        Stream::Stderr => drop(child.stderr.take()),
    }
    let o = child.wait_with_output().unwrap();
    let other = match closed {
        Stream::Stdout => &o.stderr,
        Stream::Stderr => &o.stdout,
    };
    (o.status.code(), String::from_utf8_lossy(other).into_owned())
}

/// The JSON on a process's standard output; panics, showing both of its
/// outputs, when it is none.
pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", String::from_utf8_lossy(&o.stdout), stderr(o)))
}

/// The JSON on standard output of a run that exited 0.
pub fn ok_json(o: &Output) -> serde_json::Value {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    json(o)
}

/// The position as shakmaty's Antichess (the checker's rules library).
pub fn shak(p: &Position) -> shakmaty::variant::Antichess {
    let fen: shakmaty::fen::Fen = p.to_fen().parse().unwrap();
    fen.into_position(shakmaty::CastlingMode::Standard).unwrap()
}

/// The node limit of the search for the test proofs.
pub const MAX_NODES: usize = 3_000_000;

const INF: u32 = u32::MAX / 4;

struct Node {
    pos: Position,
    parent: u32,
    mv: Option<Move>,
    children: Vec<u32>,
    pn: u32,
    dn: u32,
    expanded: bool,
}

/// A proof of a line.
pub struct Proof {
    /// The line from the start position, UCI.
    pub line: Vec<String>,
    /// The line as move codes (the win-tree prolog).
    pub prolog: Vec<MoveCode>,
    /// The winner.
    pub winner: Color,
    /// The proof DAG; node 0 is the root.
    pub dag: ProofDag,
    /// The position of each DAG node.
    pub positions: Vec<Position>,
    /// Store records of every DAG node.
    pub records: Vec<(Key, Record)>,
}

impl Proof {
    /// A proof of the line `moves` (from the start position) with `dag`
    /// rooted at node 0.
    fn new(
        moves: &[Move],
        winner: Color,
        dag: ProofDag,
        positions: Vec<Position>,
        records: Vec<(Key, Record)>,
    ) -> Proof {
        Proof {
            line: moves.iter().map(|m| m.uci().to_string()).collect(),
            prolog: moves.iter().map(|m| m.watkins_code()).collect(),
            winner,
            dag,
            positions,
            records,
        }
    }

    /// The win-tree file bytes (with a size table).
    pub fn file(&self) -> Vec<u8> {
        self.file_with(&WriteOptions::default())
    }

    /// The win-tree file bytes written with `opts`.
    pub fn file_with(&self, opts: &WriteOptions) -> Vec<u8> {
        write_tree(&self.dag, 0, &self.prolog, opts).unwrap().bytes
    }

    /// The root position.
    pub fn root(&self) -> Position {
        self.positions[0]
    }

    /// The store records by key.
    pub fn records_map(&self) -> HashMap<Key, Record> {
        self.records.iter().copied().collect()
    }

    /// The number of distinct positions in the proof, game-over leaves
    /// included.
    pub fn size(&self) -> u64 {
        self.dag.reachable(0)
    }
}

/// Proves `line` (space-separated moves from the start) for the side that
/// wins, by proof-number search; panics beyond `max_nodes`.
pub fn prove(line: &str, rules: Rules, winner: Color, max_nodes: usize) -> Proof {
    let (root, moves) = Position::startpos().play_line_str(line).unwrap();
    prove_from(root, &moves, rules, winner, max_nodes)
}

/// Proves from a position; panics when it cannot.
pub fn prove_from(
    root: Position,
    moves: &[Move],
    rules: Rules,
    winner: Color,
    max_nodes: usize,
) -> Proof {
    try_prove_from(root, moves, rules, winner, max_nodes)
        .unwrap_or_else(|| panic!("no proof for {winner:?} within {max_nodes} nodes"))
}

/// A proof that White, to move, wins the set-up `pieces` (no en passant),
/// found within `max_nodes`; `None` if the pieces make no valid position,
/// the game is already over, or the search finds none.
pub fn prove_set_up(
    pieces: Vec<(antiproof::rules::Square, antiproof::rules::Piece)>,
    max_nodes: usize,
) -> Option<Proof> {
    let pos = Position::from_pieces(pieces, Color::White, None).ok()?;
    if pos.outcome(Rules::International).is_some() {
        return None;
    }
    try_prove_from(pos, &[], Rules::International, Color::White, max_nodes)
}

/// Proves from a position; `None` when not a win or over `max_nodes`.
pub fn try_prove_from(
    root: Position,
    moves: &[Move],
    rules: Rules,
    winner: Color,
    max_nodes: usize,
) -> Option<Proof> {
    let mut nodes = vec![Node {
        pos: root,
        parent: u32::MAX,
        mv: None,
        children: Vec::new(),
        pn: 1,
        dn: 1,
        expanded: false,
    }];
    eval(&mut nodes, 0, rules, winner);
    while nodes[0].pn != 0 && nodes[0].dn != 0 {
        if nodes.len() >= max_nodes {
            return None;
        }
        // Most-proving node.
        let mut n = 0usize;
        while nodes[n].expanded {
            let or = nodes[n].pos.turn() == winner;
            let kids = &nodes[n].children;
            n = *kids
                .iter()
                .find(|&&c| {
                    if or {
                        nodes[c as usize].pn == nodes[n].pn
                    } else {
                        nodes[c as usize].dn == nodes[n].dn
                    }
                })
                .unwrap() as usize;
        }
        // Expand.
        let pos = nodes[n].pos;
        let legal = pos.legal_moves();
        let mut kids = Vec::with_capacity(legal.len());
        for &m in legal.iter() {
            let child = pos.play(m);
            let id = nodes.len();
            nodes.push(Node {
                pos: child,
                parent: n as u32,
                mv: Some(m),
                children: Vec::new(),
                pn: 1,
                dn: 1,
                expanded: false,
            });
            eval(&mut nodes, id, rules, winner);
            kids.push(id as u32);
        }
        nodes[n].children = kids;
        nodes[n].expanded = true;
        // Update to the root.
        let mut v = n;
        loop {
            update(&mut nodes, v, winner);
            if nodes[v].parent == u32::MAX {
                break;
            }
            v = nodes[v].parent as usize;
        }
    }
    if nodes[0].pn != 0 {
        return None;
    }
    // Extract, merging transpositions.
    let mut dag = ProofDag::new();
    let mut positions = Vec::new();
    let mut memo: HashMap<Key, usize> = HashMap::new();
    let mut winning_move: Vec<Option<Move>> = Vec::new();
    extract(
        &nodes,
        0,
        winner,
        &mut dag,
        &mut positions,
        &mut memo,
        &mut winning_move,
    );
    let mut records = Vec::new();
    for (i, p) in positions.iter().enumerate() {
        if p.outcome(rules).is_some() {
            continue;
        }
        let size = dag.reachable(i);
        let rec = if p.turn() == winner {
            Record {
                verdict: WinLoss::Win,
                flags: 0,
                mv: winning_move[i].unwrap().watkins_code(),
                size,
            }
        } else {
            Record {
                verdict: WinLoss::Loss,
                flags: 0,
                mv: MoveCode::NONE,
                size,
            }
        };
        records.push((p.pack().0, rec));
    }
    Some(Proof::new(moves, winner, dag, positions, records))
}

fn extract(
    nodes: &[Node],
    n: usize,
    winner: Color,
    dag: &mut ProofDag,
    positions: &mut Vec<Position>,
    memo: &mut HashMap<Key, usize>,
    winning_move: &mut Vec<Option<Move>>,
) -> usize {
    let (d, new) = node_for(nodes[n].pos.pack().0, nodes[n].pos, dag, positions, memo);
    if !new {
        return d;
    }
    winning_move.push(None);
    if !nodes[n].expanded {
        assert_eq!(nodes[n].pn, 0);
        return d;
    }
    let kids: Vec<usize> = if nodes[n].pos.turn() == winner {
        let c = nodes[n]
            .children
            .iter()
            .copied()
            .find(|&c| nodes[c as usize].pn == 0)
            .unwrap() as usize;
        winning_move[d] = nodes[c].mv;
        vec![c]
    } else {
        nodes[n].children.iter().map(|&c| c as usize).collect()
    };
    for c in kids {
        let cd = extract(nodes, c, winner, dag, positions, memo, winning_move);
        let code = nodes[c].mv.unwrap().watkins_code();
        dag.add_edge(d, code, cd);
    }
    d
}

/// The DAG node of `pos`, met under `key`, and whether it is new: a node
/// met before is reused (a transposition), a new one added with its
/// position.
fn node_for<K: Eq + std::hash::Hash>(
    key: K,
    pos: Position,
    dag: &mut ProofDag,
    positions: &mut Vec<Position>,
    memo: &mut HashMap<K, usize>,
) -> (usize, bool) {
    if let Some(&d) = memo.get(&key) {
        return (d, false);
    }
    let d = dag.add_node();
    positions.push(pos);
    memo.insert(key, d);
    (d, true)
}

fn eval(nodes: &mut [Node], id: usize, rules: Rules, winner: Color) {
    let pos = nodes[id].pos;
    // A repetition of an ancestor is no win for the winner.
    let mut a = nodes[id].parent;
    while a != u32::MAX {
        if nodes[a as usize].pos == pos {
            nodes[id].pn = INF;
            nodes[id].dn = 0;
            nodes[id].expanded = false;
            return;
        }
        a = nodes[a as usize].parent;
    }
    match pos.outcome(rules) {
        Some(o) => {
            if o.winner() == Some(winner) {
                nodes[id].pn = 0;
                nodes[id].dn = INF;
            } else {
                nodes[id].pn = INF;
                nodes[id].dn = 0;
            }
        }
        None => {
            let k = pos.count_legal_moves();
            if pos.turn() == winner {
                nodes[id].pn = 1;
                nodes[id].dn = k;
            } else {
                nodes[id].pn = k;
                nodes[id].dn = 1;
            }
        }
    }
}

fn update(nodes: &mut [Node], v: usize, winner: Color) {
    if !nodes[v].expanded {
        return;
    }
    let or = nodes[v].pos.turn() == winner;
    let (mut pn, mut dn): (u32, u32) = if or { (INF, 0) } else { (0, INF) };
    for &c in &nodes[v].children {
        let c = &nodes[c as usize];
        if or {
            pn = pn.min(c.pn);
            dn = (dn + c.dn).min(INF);
        } else {
            pn = (pn + c.pn).min(INF);
            dn = dn.min(c.dn);
        }
    }
    nodes[v].pn = pn;
    nodes[v].dn = dn;
}

/// The ladder rungs 1-5: (line, winner).
pub const RUNGS: [(&str, Color); 5] = [
    ("e3 d5", Color::White),
    ("e3 d6", Color::White),
    ("e4", Color::Black),
    ("d3", Color::Black),
    ("d4", Color::Black),
];

/// Proofs of rungs 1-5 under International rules (cached per process).
pub fn ladder() -> &'static [Proof] {
    static CELL: std::sync::OnceLock<Vec<Proof>> = std::sync::OnceLock::new();
    CELL.get_or_init(prove_rungs)
}

/// Proves rungs 1-5 under International rules.
fn prove_rungs() -> Vec<Proof> {
    RUNGS
        .iter()
        .map(|&(line, w)| prove(line, Rules::International, w, MAX_NODES))
        .collect()
}

/// A small xorshift generator for reproducible random tests (seeded; the
/// seed must not be 0).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// `men` men on distinct squares, White and Black alternately, each of
    /// a role drawn from `roles` (no draw when there is one), pawns never
    /// on the first or last rank.
    pub fn pieces(
        &mut self,
        men: usize,
        roles: &[antiproof::rules::Role],
    ) -> Vec<(antiproof::rules::Square, antiproof::rules::Piece)> {
        use antiproof::rules::{Piece, Role, Square};
        let mut pieces = Vec::new();
        let mut used = 0u64;
        for k in 0..men {
            let color = if k % 2 == 0 {
                Color::White
            } else {
                Color::Black
            };
            let role = if roles.len() == 1 {
                roles[0]
            } else {
                roles[self.below(roles.len())]
            };
            let sq = loop {
                let s = self.below(64) as u32;
                if used >> s & 1 == 0 && !(role == Role::Pawn && (s / 8 == 0 || s / 8 == 7)) {
                    break s;
                }
            };
            used |= 1 << sq;
            pieces.push((Square::new(sq).unwrap(), Piece { color, role }));
        }
        pieces
    }
}

/// A large synthetic tree for measuring the checker's speed: from `line`,
/// the side to move plays one legal move (picked by a hash of the
/// position) and the other side every legal move, to `plies` plies;
/// positions are merged (transpositions). Its leaves are not finished
/// games, so the checker rejects it, but it does the same work per node as
/// on a valid proof (legal moves, move matching, game-end tests, keys of
/// transposition targets) and walks everything.
pub fn synthetic(line: &str, plies: u32) -> Proof {
    let (root, moves) = Position::startpos().play_line_str(line).unwrap();
    let winner = root.turn();
    let mut dag = ProofDag::new();
    let mut positions = Vec::new();
    let mut memo: HashMap<(Key, u32), usize> = HashMap::new();
    fn go(
        pos: Position,
        depth: u32,
        plies: u32,
        winner: Color,
        dag: &mut ProofDag,
        positions: &mut Vec<Position>,
        memo: &mut HashMap<(Key, u32), usize>,
    ) -> usize {
        // Merged by position and depth: transpositions, never a cycle.
        let (d, new) = node_for((pos.pack().0, depth), pos, dag, positions, memo);
        if !new {
            return d;
        }
        if depth == plies || pos.outcome(Rules::International).is_some() {
            return d;
        }
        let legal = pos.legal_moves();
        let chosen: Vec<Move> = if pos.turn() == winner {
            vec![legal[(pos.zobrist() % legal.len() as u64) as usize]]
        } else {
            legal.to_vec()
        };
        for m in chosen {
            let c = go(pos.play(m), depth + 1, plies, winner, dag, positions, memo);
            dag.add_edge(d, m.watkins_code(), c);
        }
        d
    }
    go(root, 0, plies, winner, &mut dag, &mut positions, &mut memo);
    Proof::new(&moves, winner, dag, positions, Vec::new())
}

/// Proves `line` with the project's prover (`antiproof prove`) into a
/// fresh store and reads the proof back as a DAG (the walk `export` does).
/// Used for the ladder rungs too big for the little search above.
pub fn prove_with_cli(line: &str, winner: Color) -> Proof {
    let dir = temp_dir(&format!("prove-with-cli-{}", line.replace(' ', "-")));
    let db = dir.join("p.redb");
    let out = Command::new(EXE)
        .arg("prove")
        .arg("--db")
        .arg(&db)
        .args(line.split(' '))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "prove {line}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let st = Store::open_existing(&db).unwrap();
    let (root, moves) = Position::startpos().play_line_str(line).unwrap();
    let mut dag = ProofDag::new();
    let mut positions = Vec::new();
    let mut records = Vec::new();
    let mut memo: HashMap<Key, usize> = HashMap::new();
    fn go(
        pos: Position,
        winner: Color,
        st: &Store,
        dag: &mut ProofDag,
        positions: &mut Vec<Position>,
        records: &mut Vec<(Key, Record)>,
        memo: &mut HashMap<Key, usize>,
    ) -> usize {
        let key = pos.pack().0;
        let (d, new) = node_for(key, pos, dag, positions, memo);
        if !new {
            return d;
        }
        if pos.outcome(Rules::International).is_some() {
            return d;
        }
        let proof = StoredProof::new(st, Rules::International);
        let node = proof
            .node_for(&pos, winner)
            .unwrap()
            .unwrap_or_else(|b| panic!("{b} at {}", pos.to_fen()));
        if let Some(r) = node.record() {
            records.push((key, *r));
        }
        // The loser's replies are every legal move, record or not.
        let moves: Vec<Move> = match node {
            stored::StoredNode::Win { mv, .. } => vec![mv],
            _ if pos.turn() == winner => panic!("no win record at {}", pos.to_fen()),
            _ => pos.legal_moves().to_vec(),
        };
        for m in moves {
            let c = go(pos.play(m), winner, st, dag, positions, records, memo);
            dag.add_edge(d, m.watkins_code(), c);
        }
        d
    }
    go(
        root,
        winner,
        &st,
        &mut dag,
        &mut positions,
        &mut records,
        &mut memo,
    );
    drop(st);
    let _ = std::fs::remove_dir_all(&dir);
    Proof::new(&moves, winner, dag, positions, records)
}

/// Rungs 1-7: rungs 1-5 from the search above, 6 (1.e3 Na6) and 7 (1.e3
/// g6) from `antiproof prove` (cached per process).
pub fn ladder7() -> &'static [Proof] {
    static CELL: std::sync::OnceLock<Vec<Proof>> = std::sync::OnceLock::new();
    CELL.get_or_init(|| {
        let mut v = prove_rungs();
        v.push(prove_with_cli("e3 Na6", Color::White));
        v.push(prove_with_cli("e3 g6", Color::White));
        v
    })
}

/// Writes the International proof of `winner` after `line` (moves from the
/// start) as `<dir>/<name>.tree` (the line as the prolog; with `sizes`
/// false, no size table) and returns its path and the proof's size in
/// positions.
pub fn write_proof(
    dir: &Path,
    name: &str,
    line: &str,
    winner: Color,
    sizes: bool,
) -> (PathBuf, u64) {
    let proof = prove(line, Rules::International, winner, MAX_NODES);
    let opts = WriteOptions {
        size_table: sizes,
        size_depth: None,
    };
    let path = dir.join(format!("{name}.tree"));
    std::fs::write(&path, proof.file_with(&opts)).unwrap();
    (path, proof.size())
}

/// The test module that called: the file name of the caller's source
/// (`check_store` for tests/check_store.rs), through the callers marked
/// `#[track_caller]`. The tests ran as one binary per module before they
/// were one binary; naming directories by module keeps each module's apart
/// from every other's as the process id kept each binary's.
#[track_caller]
fn caller_module() -> String {
    let file = std::panic::Location::caller().file();
    Path::new(file)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("tests")
        .to_string()
}

/// A fresh empty directory `<module>-<name>-<process id>` under the target
/// dir, for the calling test module (`name` unique within the module).
#[track_caller]
pub fn temp_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "{}-{name}-{}",
        caller_module(),
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A fresh store path, `t.redb` in a directory of its own
/// ([`temp_dir`]`(name)`).
#[track_caller]
pub fn temp_db(name: &str) -> PathBuf {
    temp_dir(name).join("t.redb")
}

/// Certifies the proof of `line` in the store `db` with `verify --db`
/// (the checker's verdict must be CERTIFIED).
#[track_caller]
pub fn assert_store_certified(db: &Path, line: &[&str]) {
    let mut args = vec![
        "verify".to_string(),
        "--db".into(),
        db.display().to_string(),
    ];
    args.extend(line.iter().map(|m| m.to_string()));
    let (_, out, err) = antiproof(&args);
    assert!(out.starts_with("CERTIFIED"), "{out}{err}");
}

/// Runs the `antiproof` binary with `args`: exit code (-1 if killed),
/// standard output and standard error; the state directory is the calling
/// module's [`test_state_dir`].
#[track_caller]
pub fn antiproof<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (i32, String, String) {
    antiproof_with_state(&test_state_dir(), args)
}

/// A state directory for the calling test module in this process
/// (certification records), so tests never read or write the user's own,
/// nor another module's (whose certifications would skip this one's).
#[track_caller]
pub fn test_state_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "antiproof-test-state-{}-{}",
        caller_module(),
        std::process::id()
    ))
}

/// Runs the antiproof binary with `state` as its state directory
/// (`ANTIPROOF_STATE_DIR`): exit code, standard output, standard error.
pub fn antiproof_with_state<S: AsRef<std::ffi::OsStr>>(
    state: &std::path::Path,
    args: &[S],
) -> (i32, String, String) {
    let out = Command::new(EXE)
        .env("ANTIPROOF_STATE_DIR", state)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The block of `openings --long` output for one move: from the line
/// starting with `head` (`1.e4:`) to the next empty line.
pub fn openings_block<'a>(long: &'a str, head: &str) -> &'a str {
    let start = long
        .find(&format!("\n{head}"))
        .map(|i| i + 1)
        .or_else(|| long.starts_with(head).then_some(0))
        .unwrap_or_else(|| panic!("no block {head} in:\n{long}"));
    let rest = &long[start..];
    &rest[..rest.find("\n\n").unwrap_or(rest.len())]
}

/// Walks the stored proof from the position after `line`: the winner's
/// stored move is legal, every reply of the loser is covered, every leaf is
/// a game won by the winner, and there is no cycle. Returns the number of
/// distinct positions walked (game ends included).
pub fn walk(db: &Path, line: &str, winner: Color) -> usize {
    let (root, _) = Position::startpos().play_line_str(line).unwrap();
    let store = Store::open_existing(db).unwrap();
    let reader = store.reader().unwrap();
    let proof = StoredProof::new(&reader, Rules::International);
    // false: on the path; true: done.
    let mut seen: HashMap<Key, bool> = HashMap::new();
    let mut stack: Vec<(Position, Vec<Position>)> = Vec::new();
    let expand = |pos: &Position, seen: &mut HashMap<Key, bool>| -> Option<Vec<Position>> {
        let node = proof
            .node_for(pos, winner)
            .unwrap()
            .unwrap_or_else(|b| panic!("{b} at {}", pos.to_fen()));
        let key = pos.pack().0;
        match node {
            stored::StoredNode::GameEnd(_) => {
                seen.insert(key, true);
                None
            }
            stored::StoredNode::Win { .. } | stored::StoredNode::Loss { .. } => {
                seen.insert(key, false);
                Some(node.moves(pos).iter().map(|&m| pos.play(m)).collect())
            }
            stored::StoredNode::TableSized | stored::StoredNode::Missing => {
                panic!("no record for {}", pos.to_fen())
            }
        }
    };
    if let Some(kids) = expand(&root, &mut seen) {
        stack.push((root, kids));
    }
    while let Some((pos, kids)) = stack.last_mut() {
        match kids.pop() {
            Some(c) => match seen.get(&c.pack().0) {
                Some(true) => {}
                Some(false) => panic!("cycle through {}", c.to_fen()),
                None => {
                    if let Some(k) = expand(&c, &mut seen) {
                        stack.push((c, k));
                    }
                }
            },
            None => {
                seen.insert(pos.pack().0, true);
                stack.pop();
            }
        }
    }
    seen.len()
}

/// The bytes of `proofs/NAME` with node 1's move (bytes 4-5 of its slot
/// after the prolog) sent one file over: no longer a proof of anything.
pub fn first_move_moved(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("proofs")
        .join(name);
    let mut bytes = std::fs::read(path).unwrap();
    let prolog = u16::from_le_bytes([bytes[4], bytes[5]]) as usize;
    bytes[6 + 2 * prolog + 4] ^= 1;
    bytes
}
