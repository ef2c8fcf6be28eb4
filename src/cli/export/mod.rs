//! `antiproof export`: write a stored proof as a Watkins win-tree file.
//!
//! Walks the store from the line's position with the project's own rules
//! (this is not the trusted part: `antiproof verify --tree` checks the
//! result independently): the stored move at the winner's positions, every
//! legal move at the loser's, leaves at finished games and at positions of
//! 4 men or fewer without a record (endgame tables). Transpositions are
//! merged: each distinct position is written once.
//!
//! With `--expand-tables --tables DIR` such leaves are replaced by full
//! subtrees from the tables (the winner's move with the shortest distance
//! to win, every reply of the loser), so the file needs no tables to be
//! certified.
//!
//! Under the fifty-move rule (`--rules lichess`, `--fifty-move-rule`) the
//! rule set's own records are followed, and every written position gets
//! its headroom need (the most plies to the first capture, pawn move or
//! game end along any line below it in the written DAG): a position
//! reached at clock `c` needing `n` with `c + n > 100` (a transposition
//! merged from a line with more headroom) is refused, naming the line, so
//! no position that is not a finished game is reached at clock 100 or
//! more along any path of the file.

use super::values;
use super::{EXIT_NO, EXIT_OK};
use crate::rules::{Color, Move, Position};
use crate::store::{Key, StoreReader};
use crate::stored::{Node, StoredProof};
use crate::tables::{Tables, Value};
use crate::vocab::FIFTY_MOVE_PLIES;
use crate::wintree::{MoveCode, NodeKind, ProofDag, WinTree, WriteOptions, compressed, write_tree};

mod layout;
use anyhow::Context;
use clap::Args;
use layout::Layout;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `antiproof export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The proof store (default: antiproof.redb in the current directory).
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,
    #[command(flatten)]
    rules: values::RuleArgs,
    /// The winner (default: the side with a win record at the line or just
    /// after it).
    #[arg(long, value_parser = values::color)]
    winner: Option<Color>,
    /// The file to write; a name ending in `.zst` (`x.tree.zst`) is
    /// written zstd-compressed, as `verify`, `browse`, `serve` and
    /// `openings` read it.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: PathBuf,
    /// Where the file would be larger than SIZE (`50M`; compressed, for a
    /// `.zst` name), write one certificate a reply instead: below the
    /// line's root, each move of the loser (after the winner's move where
    /// the winner moves first) gets a file of its own, rooted there with
    /// its whole line as prolog, named after the output with the moves
    /// added (`h4.tree.zst` -> `h4-b5-a3.tree.zst`, ...; `h4.joint.tree`
    /// -> `h4-b5-a3.joint.tree`), split again where still too large.
    /// `antiproof openings` adds such files up again.
    /// At most 100,000 files are written (a smaller SIZE is refused once
    /// it needs more, the files written so far removed).
    #[arg(long, value_name = "SIZE", value_parser = values::file_size)]
    split_above: Option<u64>,
    /// zstd level of a `.zst` output (1 to 22; higher: smaller and
    /// slower).
    #[arg(long, value_parser = values::zstd_level(), default_value_t = crate::wintree::compressed::ZSTD_LEVEL)]
    zstd_level: i32,
    /// Write no subtree-size table.
    #[arg(long)]
    no_sizes: bool,
    /// Print nothing when the file is written.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Start the line from this FEN instead of the standard start position
    /// (check the file with `verify --tree FILE --fen FEN`).
    #[arg(long)]
    fen: Option<String>,
    /// Endgame tables (a directory of `antiproof tables build`), for
    /// `--expand-tables`.
    #[arg(long, value_name = "DIR")]
    tables: Option<PathBuf>,
    /// Replace the leaves resting on endgame tables by full subtrees from
    /// the tables (needs --tables): the file then needs no tables.
    #[arg(long, requires = "tables")]
    expand_tables: bool,
    /// Merge: write this win-tree file's proof with each open leaf (a leaf
    /// that is not a finished game, such as those `verify --tree FILE
    /// --obligations OUT` lists) replaced by its proof from the store
    /// (`prove --obligations OUT`), positions shared. Leaves of 4 men or
    /// fewer without a record stay table leaves (or are expanded with
    /// --expand-tables). A store lacking a proof of an open leaf: exit 1,
    /// no file written.
    #[arg(long, value_name = "FILE", conflicts_with = "moves")]
    tree: Option<PathBuf>,
    /// The line from the start position (UCI or SAN); it becomes the
    /// file's prolog. Default: the line the store notes as proven (with
    /// several, they are named and one must be given).
    moves: Vec<String>,
}

/// A stored proof that cannot be exported.
#[derive(Debug)]
struct Broken(String);

struct Exporter<'r> {
    proof: StoredProof<&'r StoreReader>,
    winner: Color,
    dag: ProofDag,
    ids: HashMap<Key, (usize, bool)>,
    table_leaves: u64,
    path: Vec<Move>,
    /// Tables to expand table leaves with.
    expand: Option<&'r Tables>,
    /// Positions written from the tables.
    expanded: u64,
    /// The nodes of the tables' lines (`--expand-tables`), apart from the
    /// stored proof's: position, node and whether its subtree is written.
    table_ids: HashMap<Key, (usize, bool)>,
    /// Open leaves of a merged win-tree file replaced by stored proofs.
    grafted: u64,
    /// Under the fifty-move rule: the need of each written node.
    need: Option<HashMap<usize, u8>>,
}

impl Exporter<'_> {
    /// Under the fifty-move rule, whether a position at half-move clock
    /// `clock` with a proof needing `need` plies is within the limit, or
    /// why not.
    fn fits(&self, pos: &Position, need: u8) -> Result<(), Broken> {
        if self.need.is_none() || pos.halfmoves() + need as u32 <= FIFTY_MOVE_PLIES {
            return Ok(());
        }
        Err(Broken(format!(
            "the fifty-move rule: the proof here needs {need} plies before a capture or pawn move, but the position is reached at half-move clock {}",
            pos.halfmoves()
        )))
    }

    /// Records the need of node `id` (position `pos`) from its moves and
    /// children, and checks that it fits the clock.
    fn set_need(
        &mut self,
        id: usize,
        pos: &Position,
        kids: &[(Move, usize)],
    ) -> Result<(), Broken> {
        let Some(map) = &self.need else {
            return Ok(());
        };
        let n = kids
            .iter()
            .map(|&(m, c)| {
                if m.is_irreversible() {
                    1
                } else {
                    map.get(&c).copied().unwrap_or(0).saturating_add(1)
                }
            })
            .max()
            .unwrap_or(0);
        self.fits(pos, n)?;
        if let Some(map) = &mut self.need {
            map.insert(id, n);
        }
        Ok(())
    }

    /// A node already written, reached again: its need must fit.
    fn reuse(&self, id: usize, pos: &Position) -> Result<(), Broken> {
        match &self.need {
            Some(map) => self.fits(pos, map.get(&id).copied().unwrap_or(0)),
            None => Ok(()),
        }
    }
}

impl Exporter<'_> {
    /// The winner's move at a table position: the quickest win by the
    /// tables. Under the fifty-move rule (tables giving the distance to the
    /// next capture or pawn move) the move with the least headroom need: a
    /// capture or pawn move to a lost position, else the reversible move
    /// to the loss nearest its next capture or pawn move, if it fits the
    /// clock.
    fn table_move(&self, t: &Tables, pos: &Position) -> Result<Move, Broken> {
        let fifty = self.need.is_some();
        let mut best: Option<(u32, Move)> = None;
        for &m in pos.legal_moves().iter() {
            let child = pos.play(m);
            let Some(Value::Loss(n)) = t.probe(&child) else {
                continue;
            };
            let key = match (fifty, m.is_irreversible()) {
                (false, _) => n as u32,
                (true, true) => 0,
                (true, false) if child.halfmoves() + n as u32 <= FIFTY_MOVE_PLIES => n as u32 + 1,
                (true, false) => continue,
            };
            if best.is_none_or(|(b, _)| key < b) {
                best = Some((key, m));
            }
        }
        best.map(|(_, m)| m).ok_or_else(|| {
            Broken(format!(
                "the endgame tables in {} do not score this position ({}) a win for the winner",
                t.dir().display(),
                pos.to_fen()
            ))
        })
    }

    /// Under the fifty-move rule, a position reached at clock 100 or more
    /// that is not a finished game.
    fn past_fifty(&self, pos: &Position) -> Result<(), Broken> {
        if self.need.is_some()
            && pos.halfmoves() >= FIFTY_MOVE_PLIES
            && pos.outcome(self.proof.rules()).is_none()
        {
            return Err(Broken(format!(
                "the fifty-move rule: reached at half-move clock {} and the game is not over",
                pos.halfmoves()
            )));
        }
        Ok(())
    }

    fn visit(&mut self, pos: &Position) -> anyhow::Result<Result<usize, Broken>> {
        let key = pos.pack().0;
        if let Some(&(id, done)) = self.ids.get(&key) {
            if !done {
                return Ok(Err(Broken("the stored proof repeats a position".into())));
            }
            return Ok(self.reuse(id, pos).map(|()| id));
        }
        if let Err(b) = self.past_fifty(pos) {
            return Ok(Err(b));
        }
        let loser_to_move = pos.turn() != self.winner;
        let moves: Vec<Move> = match self.proof.node_for(pos, self.winner)? {
            Err(b) => return Ok(Err(Broken(b.to_string()))),
            Ok(n @ (Node::GameEnd(_) | Node::Win { .. } | Node::Loss { .. })) => n.moves(pos),
            // The loser's replies are all legal moves, record or not: the
            // winner's positions below say whether the proof goes on.
            Ok(Node::TableSized | Node::Missing) if loser_to_move => pos.legal_moves().to_vec(),
            Ok(Node::TableSized) => match self.expand {
                // The tables' line from here, on its own.
                Some(t) => {
                    let r = self.expand_table(t, pos)?;
                    if let Ok(id) = r {
                        self.ids.insert(key, (id, true));
                    }
                    return Ok(r);
                }
                None => {
                    self.table_leaves += 1;
                    Vec::new()
                }
            },
            Ok(Node::Missing) => {
                return Ok(Err(Broken("no record for the winner's move".into())));
            }
        };
        let id = self.dag.add_node();
        self.ids.insert(key, (id, false));
        let mut kids = Vec::with_capacity(moves.len());
        for m in moves {
            self.path.push(m);
            let child = match self.visit(&pos.play(m))? {
                Ok(c) => c,
                Err(b) => return Ok(Err(b)),
            };
            self.path.pop();
            self.dag.add_edge(id, m.watkins_code(), child);
            kids.push((m, child));
        }
        if let Err(b) = self.set_need(id, pos, &kids) {
            return Ok(Err(b));
        }
        self.ids.insert(key, (id, true));
        Ok(Ok(id))
    }

    /// The subtree the endgame tables give at `pos` (`--expand-tables`):
    /// at the winner's positions the move [`Self::table_move`] picks, at
    /// the loser's every legal move, down to finished games, with the
    /// store's records left aside. The tables' distances fall along every
    /// line (to the win, or under the fifty-move rule to the next capture
    /// or pawn move, which cannot be undone), so it has no cycle of its
    /// own. A position the stored proof has written in full is linked to
    /// (its subtree holds no position still being written); one the
    /// stored proof is still writing (a table line leading back to the
    /// stored line above it, as `prove --tables` proofs can) is not: it
    /// gets a node of the table line's own, so the file has no cycle.
    fn expand_table(
        &mut self,
        t: &Tables,
        pos: &Position,
    ) -> anyhow::Result<Result<usize, Broken>> {
        let key = pos.pack().0;
        if let Some(&(id, true)) = self.ids.get(&key)
            && self.reuse(id, pos).is_ok()
        {
            return Ok(Ok(id));
        }
        if let Some(&(id, done)) = self.table_ids.get(&key) {
            if !done {
                return Ok(Err(Broken(format!(
                    "the endgame tables in {} lead back to this position",
                    t.dir().display()
                ))));
            }
            return Ok(self.reuse(id, pos).map(|()| id));
        }
        if let Err(b) = self.past_fifty(pos) {
            return Ok(Err(b));
        }
        let moves = match pos.outcome(self.proof.rules()) {
            Some(o) if o == crate::rules::Outcome::Win(self.winner) => Vec::new(),
            Some(o) => {
                return Ok(Err(Broken(format!(
                    "the endgame tables' line ends in a game not won by the winner ({o})"
                ))));
            }
            None if pos.turn() == self.winner => match self.table_move(t, pos) {
                Ok(m) => {
                    self.expanded += 1;
                    vec![m]
                }
                Err(b) => return Ok(Err(b)),
            },
            None => pos.legal_moves().to_vec(),
        };
        let id = self.dag.add_node();
        self.table_ids.insert(key, (id, false));
        let mut kids = Vec::with_capacity(moves.len());
        for m in moves {
            self.path.push(m);
            let child = match self.expand_table(t, &pos.play(m))? {
                Ok(c) => c,
                Err(b) => return Ok(Err(b)),
            };
            self.path.pop();
            self.dag.add_edge(id, m.watkins_code(), child);
            kids.push((m, child));
        }
        if let Err(b) = self.set_need(id, pos, &kids) {
            return Ok(Err(b));
        }
        self.table_ids.insert(key, (id, true));
        Ok(Ok(id))
    }

    /// Adds the win-tree file's subtree at `slot` (position `pos`) to the
    /// DAG with its moves as in the file; each leaf that is not a finished
    /// game (an open leaf) gets its proof from the store ([`Self::visit`]).
    /// Positions already added are shared.
    fn graft(
        &mut self,
        tree: &WinTree,
        slot: u32,
        pos: &Position,
    ) -> anyhow::Result<Result<usize, Broken>> {
        let key = pos.pack().0;
        if let Some(&(id, done)) = self.ids.get(&key) {
            if !done {
                return Ok(Err(Broken("the file's proof repeats a position".into())));
            }
            return Ok(self.reuse(id, pos).map(|()| id));
        }
        let slot = tree.resolve(slot)?;
        let node = tree.node(slot)?;
        match node.kind {
            NodeKind::Unsolved => Ok(Err(Broken(format!(
                "node {slot} is unsolved (a partial proof)"
            )))),
            NodeKind::Leaf if pos.outcome(self.proof.rules()).is_some() => {
                let id = self.dag.add_node();
                self.ids.insert(key, (id, true));
                Ok(Ok(id))
            }
            NodeKind::Leaf => {
                let stored = self.proof.winner_at(pos)? == Some(self.winner);
                if pos.men() > 4 && !stored {
                    return Ok(Err(Broken(format!(
                        "the store holds no proof of the open leaf {} (node {slot}) for {}",
                        pos.to_epd(),
                        self.winner.to_string().to_lowercase()
                    ))));
                }
                self.grafted += stored as u64;
                self.visit(pos)
            }
            NodeKind::Inner | NodeKind::Transposition { .. } => {
                let id = self.dag.add_node();
                self.ids.insert(key, (id, false));
                let mut kids = Vec::new();
                for child in tree.children(slot)? {
                    let child = child?;
                    let code = child.mv.unwrap_or(MoveCode::NULL);
                    let Some(m) = crate::rules::move_of_code(pos, code) else {
                        return Ok(Err(Broken(format!(
                            "the file's move {} (node {}) is not legal",
                            code.uci(),
                            child.index
                        ))));
                    };
                    self.path.push(m);
                    let c = match self.graft(tree, child.index, &pos.play(m))? {
                        Ok(c) => c,
                        Err(b) => return Ok(Err(b)),
                    };
                    self.path.pop();
                    self.dag.add_edge(id, m.watkins_code(), c);
                    kids.push((m, c));
                }
                if let Err(b) = self.set_need(id, pos, &kids) {
                    return Ok(Err(b));
                }
                self.ids.insert(key, (id, true));
                Ok(Ok(id))
            }
        }
    }
}

/// Walks the stored proof at `root` for `winner` (with `file`: that
/// win-tree file's proof, its open leaves replaced by stored proofs) into a
/// DAG, on a thread with a large stack (deep proofs recurse): the root's
/// node, or where the proof breaks (the exporter's `path` leads there).
fn walk<'r>(
    reader: &'r StoreReader,
    rule_set: crate::vocab::RuleSet,
    winner: Color,
    root: &Position,
    file: Option<&WinTree>,
    expand: Option<&'r Tables>,
) -> (anyhow::Result<Result<usize, Broken>>, Exporter<'r>) {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(1 << 30)
            .spawn_scoped(s, || {
                let mut ex = Exporter {
                    proof: StoredProof::new(reader, rule_set),
                    winner,
                    dag: ProofDag::new(),
                    ids: HashMap::new(),
                    table_leaves: 0,
                    path: Vec::new(),
                    expand,
                    expanded: 0,
                    table_ids: HashMap::new(),
                    grafted: 0,
                    need: rule_set.fifty_move.then(HashMap::new),
                };
                let r = match file {
                    Some(t) => ex.graft(t, 0, root),
                    None => ex.visit(root),
                };
                (r, ex)
            })
            .expect("spawn export thread")
            .join()
            .expect("export thread panicked")
    })
}

/// The stored proof at the line `moves` from `start` as the bytes of a
/// win-tree file (the line as prolog, no size table), for `verify --db`
/// under the fifty-move rule: the checker follows the clock along every
/// path of a win-tree file, so the store's proof is checked as the file
/// `export` would write. `Ok(Err(why))`: no proof there, or a broken one
/// (the line named).
pub(super) fn stored_tree_bytes(
    reader: &StoreReader,
    rule_set: crate::vocab::RuleSet,
    start: Position,
    moves: &[String],
    winner: Option<Color>,
) -> anyhow::Result<Result<Vec<u8>, String>> {
    let (root, line) = start
        .play_line(moves)
        .map_err(|e| anyhow::anyhow!("bad move at {e}"))?;
    let winner = match winner {
        Some(w) => w,
        None => match StoredProof::new(reader, rule_set).winner_at(&root)? {
            Some(w) => w,
            None => {
                return Ok(Err(format!(
                    "no proof in the store at this line under {}",
                    rule_set.describe()
                )));
            }
        },
    };
    let (r, ex) = walk(reader, rule_set, winner, &root, None, None);
    match r? {
        Ok(root_id) => {
            let prolog: Vec<MoveCode> = line.iter().map(|m| m.watkins_code()).collect();
            let opts = WriteOptions {
                size_table: false,
                size_depth: None,
            };
            Ok(Ok(write_tree(&ex.dag, root_id, &prolog, &opts)?.bytes))
        }
        Err(Broken(why)) => {
            let mut full = line;
            full.extend(ex.path.iter().copied());
            Ok(Err(format!(
                "the stored proof is broken at {}: {why}",
                crate::rules::numbered_san(&start, &full)
            )))
        }
    }
}

/// Runs `antiproof export`.
pub fn run(args: ExportArgs) -> anyhow::Result<u8> {
    let rule_set = args.rules.rule_set();
    let db = args
        .db
        .clone()
        .unwrap_or_else(|| PathBuf::from(super::DEFAULT_DB));
    let mut inputs = vec![db.as_path()];
    inputs.extend(args.tables.as_deref());
    inputs.extend(args.tree.as_deref());
    let (_store, reader, path) = super::open_store(Some(&db))?;
    super::check_output(&args.output, crate::fsutil::OutputKind::WinTree, &inputs)?;
    let start = match &args.fen {
        Some(f) => super::prove::root_from_fen(f, rule_set.fifty_move)?,
        None => Position::startpos(),
    };
    let tables = if args.expand_tables {
        let dir = args.tables.as_ref().expect("clap: requires --tables");
        if !dir.is_dir() {
            anyhow::bail!("--tables {}: not a directory", dir.display());
        }
        Some(Tables::open_rule_set(dir, rule_set))
    } else {
        None
    };
    let file = match &args.tree {
        Some(p) => {
            Some(WinTree::open(p).with_context(|| format!("reading --tree {}", p.display()))?)
        }
        None => None,
    };
    let (root, line) = match &file {
        Some(t) => {
            let mut pos = start;
            let mut line = Vec::new();
            for code in t.prolog() {
                let m = crate::rules::move_of_code(&pos, code).ok_or_else(|| {
                    anyhow::anyhow!(
                        "the prolog of the --tree file has an illegal move {}",
                        code.uci()
                    )
                })?;
                pos = pos.play(m);
                line.push(m);
            }
            (pos, line)
        }
        None if args.moves.is_empty() && args.fen.is_none() => {
            let moves = super::proven_lines::line_for(&db, rule_set, "export -o FILE")?;
            start
                .play_line(&moves)
                .map_err(|e| anyhow::anyhow!("bad move at {e}"))?
        }
        None => start
            .play_line(&args.moves)
            .map_err(|e| anyhow::anyhow!("bad move at {e}"))?,
    };
    let winner = match (args.winner, &file) {
        (Some(w), _) => w,
        // The side whose nodes have one child: the root's side when the
        // root has one.
        (None, Some(t)) => match t.children(0)?.count() {
            1 => root.turn(),
            _ => !root.turn(),
        },
        (None, None) => match StoredProof::new(&reader, rule_set).winner_at(&root)? {
            Some(w) => w,
            None => {
                eprintln!(
                    "antiproof: no proof in {} at this line under {}",
                    path.display(),
                    rule_set.describe()
                );
                return Ok(EXIT_NO);
            }
        },
    };
    let (r, ex) = walk(
        &reader,
        rule_set,
        winner,
        &root,
        file.as_ref(),
        tables.as_ref(),
    );
    match r? {
        Ok(root_id) => {
            let layout = Layout {
                opts: WriteOptions {
                    size_table: !args.no_sizes,
                    size_depth: None,
                },
                zstd: compressed::is_zstd_name(&args.output).then_some(args.zstd_level),
                split_above: args.split_above,
                winner,
                output: &args.output,
                inputs: &inputs,
            };
            let mut prolog: Vec<MoveCode> = line.iter().map(|m| m.watkins_code()).collect();
            let mut parts = Vec::new();
            let laid = layout.parts(
                &ex.dag,
                root_id,
                &root,
                &mut prolog,
                &mut Vec::new(),
                &mut parts,
            );
            if let Err(e) = laid {
                // A split that cannot finish leaves none of its files.
                if parts.len() > 1 || parts.first().is_some_and(|p| !p.suffix.is_empty()) {
                    for p in &parts {
                        let _ = std::fs::remove_file(&p.path);
                    }
                    return Err(e.context(format!(
                        "no file written (the {} written so far removed)",
                        parts.len()
                    )));
                }
                return Err(e);
            }
            let split = parts.len() > 1 || parts.first().is_some_and(|p| !p.suffix.is_empty());
            if args.quiet {
                return Ok(EXIT_OK);
            }
            let mut out = crate::cli::out::stdout();
            for part in &parts {
                writeln!(
                    out,
                    "wrote {}: rules {}, winner {}, {} positions, {} node slots ({} transpositions), {} size entries, {} bytes{}{}{}",
                    part.path.display(),
                    rule_set,
                    winner,
                    if split {
                        ex.dag.reachable(part.node)
                    } else {
                        ex.dag.nodes.len() as u64
                    },
                    part.slots,
                    part.transpositions,
                    part.size_entries,
                    part.len,
                    if layout.zstd.is_some() {
                        format!(" ({} uncompressed)", part.raw_len)
                    } else {
                        String::new()
                    },
                    if split || ex.grafted == 0 {
                        String::new()
                    } else {
                        format!(", {} open leaves replaced by stored proofs", ex.grafted)
                    },
                    if split {
                        String::new()
                    } else if ex.table_leaves > 0 {
                        format!(", {} leaves rest on endgame tables", ex.table_leaves)
                    } else if ex.expanded > 0 {
                        format!(
                            ", {} winner positions expanded from the endgame tables",
                            ex.expanded
                        )
                    } else {
                        String::new()
                    }
                )?;
                if part.too_large {
                    writeln!(
                        out,
                        "  (over --split-above: no reply of the loser below its root to split at)"
                    )?;
                }
            }
            if split {
                writeln!(
                    out,
                    "split into {} files, one a reply (a DAG of {} positions{}{}); each is a certificate of its own line",
                    parts.len(),
                    ex.dag.nodes.len(),
                    if ex.grafted > 0 {
                        format!(", {} open leaves replaced by stored proofs", ex.grafted)
                    } else {
                        String::new()
                    },
                    if ex.table_leaves > 0 {
                        format!(", {} leaves rest on endgame tables", ex.table_leaves)
                    } else {
                        String::new()
                    }
                )?;
            }
            Ok(EXIT_OK)
        }
        Err(Broken(why)) => {
            let mut full = line.clone();
            full.extend(ex.path.iter().copied());
            let what = if file.is_some() {
                "cannot merge the file's proof with the store's"
            } else {
                "the stored proof is broken"
            };
            eprintln!(
                "antiproof: {what} at {}: {why}",
                crate::rules::numbered_san(&start, &full)
            );
            Ok(EXIT_NO)
        }
    }
}
