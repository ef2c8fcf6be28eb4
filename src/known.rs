//! Known wins: certified win-tree files loaded into a proof store.
//!
//! A file (one of `proofs/`, or a published one such as Watkins' e3wins)
//! is first certified by the independent checker ([`crate::check`]) under
//! the store's rule set; only a file it certifies is loaded. Its positions
//! then become the store's proven records, the same records a search
//! writes: a `Win` record with the file's move at each winner node, a
//! `Loss` at each loser node, nothing at the leaves (finished games).
//! Under the fifty-move rule each record carries its headroom need (the
//! most plies from it to the first capture, pawn move or game end along
//! any line of the file below it), so it is reused only at a half-move
//! clock it fits, as a record the search wrote would be.
//!
//! A search over the store (`prove`, the job master) then stops wherever
//! it transposes into any loaded proof: the prover reads stored positions
//! through its filter ([`crate::search`]).
//!
//! **In part.** A file the checker does not certify under FICS or joint
//! rules may still be certified under international rules (with the same
//! fifty-move rule): its leaves are then finished games, some of them
//! stalemates that FICS or joint rules score otherwise (the winner to
//! move with as many men as the loser, or more). Such a file is loaded in
//! part: a position gets its record only where every leaf below it, along
//! every line of the file, is a win under the store's rule set, decided
//! by the prover's rules. The rest is left to the search: `prove --rules
//! joint --known proofs/` re-searches only the lines that end in those
//! stalemates. Whatever it then proves is certified by the checker under
//! that rule set when exported, as every proof is.
//!
//! Records the store already holds are kept (without the fifty-move rule
//! the first proof of a position stays; with it the one of smaller need,
//! as [`Store::put_batch_fifty`] keeps). Either way every stored proof
//! stays closed and acyclic: a loaded record's successors are loaded or
//! were stored before, and stored records only ever lead to stored ones
//! (under the fifty-move rule needs fall strictly along any line without
//! a reset, which no cycle can have).
//!
//! The walk follows the file with the prover's own rules (which the
//! checker's verdict came from shakmaty's); a move the prover does not
//! find legal is an error naming the line, never a record. Memory: five
//! bytes a slot of the file (Watkins' 932 M-node e3wins: about 4.7 GB).

use crate::check::{self, TreeOptions};
use crate::rules::{Color, Position, move_of_code};
use crate::store::{Key, Need, Record, Store, StoreError, WinLoss};
use crate::vocab::{MoveCode, RuleSet};
use crate::wintree::{WinTree, WinTreeError};
use std::fmt;
use std::path::{Path, PathBuf};

/// Files at most this large are read into memory rather than mapped (a
/// file another process truncates under a mapping would raise SIGBUS).
const READ_LIMIT: u64 = 1 << 30;

/// Records written to the store in one transaction.
const BATCH: usize = 100_000;

/// What loading a file did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Loaded {
    /// Certified and loaded.
    Loaded {
        /// The line from the start to the file's root, SAN (the checker's).
        root_line: String,
        /// The winner (the checker's).
        winner: Color,
        /// Distinct positions of the file with a record (not its leaves).
        positions: u64,
        /// Records that were new to the store (or, under the fifty-move
        /// rule, better than the one it held).
        written: u64,
        /// Positions of the file left without a record: a leaf below
        /// them is not a win under the store's rule set (a file certified
        /// under international rules only, loaded in part under FICS or
        /// joint rules). 0 for a file certified under the store's rule
        /// set.
        left_out: u64,
    },
    /// Not certified under the store's rule set: nothing loaded.
    NotCertified {
        /// The checker's verdict, in words.
        verdict: String,
    },
}

impl Loaded {
    /// For a file loaded in part under `rules`, what was left out, in
    /// words; `None` otherwise.
    pub fn in_part(&self, rules: RuleSet) -> Option<String> {
        match *self {
            Loaded::Loaded { left_out, .. } if left_out > 0 => Some(format!(
                "certified under international rules; {left_out} positions lead to stalemates {rules} does not score as wins"
            )),
            _ => None,
        }
    }
}

/// A file that could not be loaded.
#[derive(Debug)]
pub enum KnownError {
    /// The file could not be read or parsed.
    Tree(PathBuf, WinTreeError),
    /// The store failed.
    Store(StoreError),
    /// The file to load is the store itself.
    IsTheStore(PathBuf),
    /// The prover's rules disagree with the certified file (a bug in one
    /// of the two rule implementations): the line and what went wrong.
    Disagree(PathBuf, String),
}

impl fmt::Display for KnownError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KnownError::Tree(p, e) => write!(f, "{}: {e}", p.display()),
            KnownError::Store(e) => write!(f, "{e}"),
            KnownError::IsTheStore(p) => {
                write!(
                    f,
                    "{}: that is the store itself, not a win-tree file",
                    p.display()
                )
            }
            KnownError::Disagree(p, why) => write!(
                f,
                "{}: certified by the checker, but the prover's rules disagree: {why}",
                p.display()
            ),
        }
    }
}

impl std::error::Error for KnownError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            KnownError::Tree(_, e) => Some(e),
            KnownError::Store(e) => Some(e),
            KnownError::Disagree(..) | KnownError::IsTheStore(_) => None,
        }
    }
}

impl From<StoreError> for KnownError {
    fn from(e: StoreError) -> KnownError {
        KnownError::Store(e)
    }
}

/// Certifies the win-tree file at `path` under `rules` and, when
/// certified, loads its positions into `store` as proven records.
/// `threads`: the checker's worker threads (`None`: all cores).
pub fn load_file(
    store: &Store,
    rules: RuleSet,
    path: &Path,
    threads: Option<usize>,
) -> Result<Loaded, KnownError> {
    if crate::fsutil::same_file(path, store.path()) {
        return Err(KnownError::IsTheStore(path.to_path_buf()));
    }
    let tree = WinTree::open_reading_up_to(path, READ_LIMIT)
        .map_err(|e| KnownError::Tree(path.to_path_buf(), e))?;
    load_tree(store, rules, path, &tree, threads)
}

/// [`load_file`] of a tree already open (`path` names it in messages).
pub fn load_tree(
    store: &Store,
    rules: RuleSet,
    path: &Path,
    tree: &WinTree,
    threads: Option<usize>,
) -> Result<Loaded, KnownError> {
    let opts = TreeOptions {
        rule_set: rules,
        threads,
        ..TreeOptions::default()
    };
    let first = check::check_tree(tree, &opts);
    let (report, partial) = if first.verdict == check::Verdict::Certified {
        (first, false)
    } else {
        // Under FICS or joint rules, a file that holds under international
        // rules loads in part (the module docs).
        let base = RuleSet::new(crate::vocab::Rules::International, rules.fifty_move);
        let under_base = (rules != base)
            .then(|| {
                check::check_tree(
                    tree,
                    &TreeOptions {
                        rule_set: base,
                        ..opts.clone()
                    },
                )
            })
            .filter(|r| r.verdict == check::Verdict::Certified);
        match under_base {
            Some(r) => (r, true),
            None => {
                return Ok(Loaded::NotCertified {
                    verdict: verdict_words(&first.verdict),
                });
            }
        }
    };
    let winner = match report.winner {
        shakmaty::Color::White => Color::White,
        shakmaty::Color::Black => Color::Black,
    };
    let disagree = |why: String| KnownError::Disagree(path.to_path_buf(), why);
    let mut root = Position::startpos();
    for (i, &code) in tree.prolog().iter().enumerate() {
        let m = move_of_code(&root, code)
            .ok_or_else(|| disagree(format!("prolog move {} is not legal", i + 1)))?;
        root.play_unchecked(m);
    }
    let mut sink = Sink {
        store,
        rules,
        batch: Vec::new(),
        written: 0,
    };
    let walked = walk(tree, root, winner, &mut sink, &disagree)?;
    if walked.left_out > 0 && !partial {
        return Err(disagree(format!(
            "{} positions lead to leaves that are not wins under {rules}",
            walked.left_out
        )));
    }
    sink.flush()?;
    Ok(Loaded::Loaded {
        root_line: report.root_line,
        winner,
        positions: walked.records,
        written: sink.written,
        left_out: walked.left_out,
    })
}

/// The checker's verdict in a few words.
fn verdict_words(v: &check::Verdict) -> String {
    match v {
        check::Verdict::Certified => "certified".into(),
        check::Verdict::NotCertified { table_leaves } => {
            format!("not certified: {table_leaves} leaves rest on endgame tables")
        }
        check::Verdict::Open { open_leaves } => format!("open: {open_leaves} open leaves"),
        check::Verdict::Rejected(r) => format!("rejected at {}: {}", r.line, r.reason),
    }
}

/// Where the records go: batches of [`BATCH`] into the store.
struct Sink<'s> {
    store: &'s Store,
    rules: RuleSet,
    batch: Vec<(Key, Record, Need)>,
    written: u64,
}

impl Sink<'_> {
    fn push(&mut self, key: Key, rec: Record, need: Need) -> Result<(), StoreError> {
        self.batch.push((key, rec, need));
        if self.batch.len() >= BATCH {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let reader = self.store.reader()?;
        let mut fresh = Vec::with_capacity(self.batch.len());
        for &(k, r, need) in &self.batch {
            let keep = match reader.get_entry(self.rules, &k)? {
                None => true,
                Some((old, old_need)) => {
                    self.rules.fifty_move
                        && crate::store::fifty_better((&r, need), (&old, old_need.unwrap_or(0)))
                }
            };
            if keep {
                fresh.push((k, r, need));
            }
        }
        drop(reader);
        self.written += fresh.len() as u64;
        if self.rules.fifty_move {
            self.store.put_batch_fifty(self.rules, &fresh)?;
        } else {
            let plain: Vec<(Key, Record)> = fresh.iter().map(|&(k, r, _)| (k, r)).collect();
            self.store.put_batch(self.rules, &plain)?;
        }
        self.batch.clear();
        Ok(())
    }
}

/// Per slot of the file: not reached yet, on the walk's path, or done.
const UNSEEN: u8 = u8::MAX;
const ON_PATH: u8 = u8::MAX - 1;

/// One node of the walk's path.
struct Frame {
    slot: u32,
    pos: Position,
    /// Whether the move into it was a capture or pawn move.
    irreversible: bool,
    /// The node's moves and their (resolved) slots.
    kids: Vec<(MoveCode, u32)>,
    next: usize,
    need: Need,
    size: u64,
    /// A leaf at or below it is not a win under the store's rule set.
    lost: bool,
}

/// What [`walk`] found.
struct Walked {
    /// Records pushed.
    records: u64,
    /// Positions that are not leaves left without a record ([`Frame::lost`]).
    left_out: u64,
}

/// Walks the tree from its root in post-order, pushing a record for every
/// slot that is not a leaf and has no leaf below it that the store's rule
/// set scores other than a win for `winner`.
fn walk(
    tree: &WinTree,
    root: Position,
    winner: Color,
    sink: &mut Sink,
    disagree: &dyn Fn(String) -> KnownError,
) -> Result<Walked, KnownError> {
    let tree_err = |e: WinTreeError| disagree(format!("the file: {e}"));
    let slots = tree.len() as usize + 1;
    // need of each done slot (UNSEEN / ON_PATH otherwise) and its size.
    let mut need = vec![UNSEEN; slots];
    let mut size = vec![0u32; slots];
    // Done slots with a leaf below them that is not a win.
    let mut lost = vec![false; slots];
    let mut records = 0u64;
    let mut left_out = 0u64;
    let frame = |slot: u32, pos: Position, irreversible: bool| -> Result<Frame, KnownError> {
        let kids = tree
            .moves(slot)
            .map_err(tree_err)?
            .iter()
            .map(|e| (e.mv, e.node))
            .collect();
        Ok(Frame {
            slot,
            pos,
            irreversible,
            kids,
            next: 0,
            need: 0,
            size: 1,
            lost: false,
        })
    };
    let root_slot = tree.resolve(tree.root().index).map_err(tree_err)?;
    need[root_slot as usize] = ON_PATH;
    let mut path = vec![frame(root_slot, root, false)?];
    // A child done (its need and size) folded into its parent.
    let fold = |parent: &mut Frame, irreversible: bool, need: Need, size: u64, lost: bool| {
        parent.need = parent
            .need
            .max(crate::store::need_through(irreversible, need));
        parent.size = parent.size.saturating_add(size);
        parent.lost |= lost;
        parent.next += 1;
    };
    // The moves from the file's root to the top of the path and the move
    // being tried there, UCI.
    let line = |path: &[Frame]| -> String {
        path.iter()
            .map(|f| f.kids[f.next].0.uci())
            .collect::<Vec<_>>()
            .join(" ")
    };
    while let Some(top) = path.last_mut() {
        if top.next < top.kids.len() {
            let (code, slot) = top.kids[top.next];
            let Some(m) = move_of_code(&top.pos, code) else {
                return Err(disagree(format!(
                    "the last move of [{}] is not legal",
                    line(&path)
                )));
            };
            let child = top.pos.play(m);
            match need[slot as usize] {
                ON_PATH => {
                    return Err(disagree(format!(
                        "the line [{}] comes back to a position on it",
                        line(&path)
                    )));
                }
                UNSEEN => {
                    need[slot as usize] = ON_PATH;
                    path.push(frame(slot, child, m.is_irreversible())?);
                }
                done => fold(
                    top,
                    m.is_irreversible(),
                    done,
                    size[slot as usize] as u64,
                    lost[slot as usize],
                ),
            }
            continue;
        }
        // All children done: the node is done.
        let mut done = path.pop().expect("a frame");
        let is_leaf = done.kids.is_empty();
        if is_leaf {
            // A finished game (the checker certified the file): a win
            // under the store's rule set, or a stalemate it scores
            // otherwise.
            done.lost = done
                .pos
                .outcome(sink.rules.stalemate)
                .is_none_or(|o| o.winner() != Some(winner));
        } else if done.lost {
            left_out += 1;
        } else {
            let winner_moves = done.pos.turn() == winner;
            if winner_moves && done.kids.len() != 1 {
                return Err(disagree(format!(
                    "a winner node with {} moves",
                    done.kids.len()
                )));
            }
            let legal = done.pos.legal_moves().len();
            if !winner_moves && done.kids.len() != legal {
                return Err(disagree(format!(
                    "a loser node with {} of its {legal} legal moves",
                    done.kids.len()
                )));
            }
            let rec = Record {
                verdict: if winner_moves {
                    WinLoss::Win
                } else {
                    WinLoss::Loss
                },
                flags: 0,
                mv: if winner_moves {
                    done.kids[0].0
                } else {
                    MoveCode::NONE
                },
                size: done.size,
            };
            sink.push(done.pos.pack().0, rec, done.need)?;
            records += 1;
        }
        need[done.slot as usize] = done.need;
        size[done.slot as usize] = done.size.min(u32::MAX as u64) as u32;
        lost[done.slot as usize] = done.lost;
        if let Some(parent) = path.last_mut() {
            fold(parent, done.irreversible, done.need, done.size, done.lost);
        }
    }
    Ok(Walked { records, left_out })
}

/// The win-tree files named by `paths`: a file as it is, a directory as
/// its win-tree files ([`crate::wintree::compressed::tree_files`]: `*.tree`,
/// `*.tree.zst`, `*.tree.bz2`, by name).
pub fn tree_paths(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            out.extend(crate::wintree::compressed::tree_files(p)?);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Rules;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("antiproof-known-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn proofs(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("proofs")
            .join(name)
    }

    #[test]
    fn a_certified_file_becomes_a_closed_stored_proof_of_its_root() {
        let dir = scratch("closed");
        let store = Store::open(&dir.join("s.redb")).unwrap();
        let rules = RuleSet::new(Rules::International, false);
        let loaded = load_file(&store, rules, &proofs("e3-g6.tree"), Some(1)).unwrap();
        let Loaded::Loaded {
            root_line,
            winner,
            positions,
            written,
            left_out,
        } = loaded
        else {
            panic!("not loaded: {loaded:?}");
        };
        assert_eq!(left_out, 0);
        assert_eq!(root_line, "1. e3 g6");
        assert_eq!(winner, Color::White);
        assert_eq!(positions, written);
        assert!(positions > 1000, "{positions}");
        assert_eq!(store.len(rules).unwrap(), positions);
        // The root's record is the file's move, and its stored proof closes.
        let mut root = Position::startpos();
        for uci in ["e2e3", "g7g6"] {
            let code = MoveCode::from_uci(uci).unwrap();
            root.play_unchecked(move_of_code(&root, code).unwrap());
        }
        let rec = store
            .get(rules, &root.pack().0)
            .unwrap()
            .expect("root record");
        assert_eq!(rec.verdict, WinLoss::Win);
        // Loading again writes nothing new.
        let again = load_file(&store, rules, &proofs("e3-g6.tree"), Some(1)).unwrap();
        assert!(
            matches!(again, Loaded::Loaded { written: 0, .. }),
            "{again:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn under_the_fifty_move_rule_each_record_carries_its_need() {
        let dir = scratch("fifty");
        let store = Store::open(&dir.join("s.redb")).unwrap();
        let rules = RuleSet::LICHESS;
        let loaded = load_file(&store, rules, &proofs("e3-g6.tree"), Some(1)).unwrap();
        assert!(matches!(loaded, Loaded::Loaded { .. }), "{loaded:?}");
        let reader = store.reader().unwrap();
        let mut worst = 0u8;
        let mut n = 0u64;
        reader
            .for_each_entry(rules, |_, _, need| {
                worst = worst.max(need.unwrap_or(0));
                n += 1;
                Ok(())
            })
            .unwrap();
        assert!(n > 1000);
        assert!(worst > 0 && worst <= 100, "{worst}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_certified_under_international_rules_only_loads_in_part_under_fics() {
        let dir = scratch("in-part");
        let store = Store::open(&dir.join("s.redb")).unwrap();
        // proofs/Nc3.tree holds under international rules, not under FICS
        // (README's table of certificates): some of its stalemates are
        // not FICS wins.
        let fics = RuleSet::new(Rules::Fics, false);
        let loaded = load_file(&store, fics, &proofs("Nc3.tree"), Some(1)).unwrap();
        let Loaded::Loaded {
            positions,
            written,
            left_out,
            ..
        } = loaded
        else {
            panic!("not loaded in part: {loaded:?}");
        };
        assert!(left_out > 0 && positions > 10 * left_out, "{loaded:?}");
        assert_eq!(written, positions);
        assert_eq!(store.len(fics).unwrap(), positions);
        // The root leads to those stalemates: it is left to the search.
        let mut root = Position::startpos();
        root.play_unchecked(move_of_code(&root, MoveCode::from_uci("b1c3").unwrap()).unwrap());
        assert!(store.get(fics, &root.pack().0).unwrap().is_none());
        // Every record kept is a FICS proof: a win at a winner node goes
        // to a recorded position or a FICS win, a loss at a loser node
        // has every reply recorded or won.
        let reader = store.reader().unwrap();
        let mut checked = 0u64;
        let mut keys = Vec::new();
        reader
            .for_each_entry(fics, |k, _, _| {
                keys.push(*k);
                Ok(())
            })
            .unwrap();
        let winner = Color::Black;
        let closed = |p: &Position| -> bool {
            match p.outcome(Rules::Fics) {
                Some(o) => o.winner() == Some(winner),
                None => reader.get(fics, &p.pack().0).unwrap().is_some(),
            }
        };
        for k in keys {
            let rec = reader.get(fics, &k).unwrap().unwrap();
            let pos = crate::rules::PackedPosition::from_slice(&k)
                .unwrap()
                .unpack()
                .unwrap();
            if pos.turn() == winner {
                assert_eq!(rec.verdict, WinLoss::Win);
                let m = move_of_code(&pos, rec.mv).unwrap();
                assert!(closed(&pos.play(m)), "{pos}");
            } else {
                assert_eq!(rec.verdict, WinLoss::Loss);
                for &m in pos.legal_moves().iter() {
                    assert!(closed(&pos.play(m)), "{pos}");
                }
            }
            checked += 1;
        }
        assert_eq!(checked, positions);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_the_checker_certifies_under_no_rule_set_loads_nothing() {
        let dir = scratch("rejected");
        let store = Store::open(&dir.join("s.redb")).unwrap();
        // Node 1's move (bytes 4-5 of its slot after the prolog), its
        // destination one file over: no longer the file's proof.
        let mut bytes = std::fs::read(proofs("e3-g6.tree")).unwrap();
        let prolog = u16::from_le_bytes([bytes[4], bytes[5]]) as usize;
        bytes[6 + 2 * prolog + 4] ^= 1;
        let bad = dir.join("bad.tree");
        std::fs::write(&bad, &bytes).unwrap();
        for rules in [
            RuleSet::new(Rules::International, false),
            RuleSet::new(Rules::Joint, false),
        ] {
            match load_file(&store, rules, &bad, Some(1)).unwrap() {
                Loaded::NotCertified { verdict } => {
                    assert!(verdict.starts_with("rejected"), "{verdict}")
                }
                other => panic!("loaded under {rules}: {other:?}"),
            }
            assert_eq!(store.len(rules).unwrap(), 0);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
