//! Checkpoints and resuming: what makes a stopped or killed run's work
//! last.
//!
//! * During the search, big proven subtrees are extracted and written to
//!   the store ([`Prover::checkpoint`], called from the search), so a
//!   killed run keeps them and the next run starts from them.
//! * After a stop, the tt's tree is walked from the root and the proofs of
//!   proven nodes found there are written ([`Prover::flush_proven`]).
//! * The tt itself can be saved and loaded ([`Prover::save_tt`],
//!   [`Prover::load_tt`]), so the next run resumes the search.

use super::Prover;
use super::dfpn::child_key;
use super::report::SearchError;
use crate::rules::{Move, Position};
use std::io::{Read, Write};
use std::path::Path;

/// Magic and version of a saved transposition table: bump it whenever the
/// node keys or the entry layout change.
const TT_MAGIC: &[u8; 8] = b"APTT0001";

impl Prover<'_> {
    /// Saves the transposition table for resuming the search of `root`
    /// later ([`Prover::load_tt`]); written to a temporary file, then
    /// renamed.
    pub fn save_tt(&self, root: &Position, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension("tmp");
        {
            let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
            w.write_all(&self.tt_header(root))?;
            self.search.tt.save(&mut w)?;
            w.flush()?;
        }
        std::fs::rename(&tmp, path)
    }

    /// Loads a transposition table saved by [`Prover::save_tt`] for the
    /// same root, winner, rule set and tt format. `Ok(false)`: the file is
    /// for another search or does not fit the memory budget (nothing
    /// loaded). Sound whatever the file's age: tt values are valid for
    /// their keys on every path.
    pub fn load_tt(&mut self, root: &Position, path: &Path) -> std::io::Result<bool> {
        let mut r = std::io::BufReader::new(std::fs::File::open(path)?);
        let want = self.tt_header(root);
        let mut got = [0u8; 24];
        r.read_exact(&mut got)?;
        if got != want {
            return Ok(false);
        }
        self.search.tt.load(&mut r)
    }

    fn tt_header(&self, root: &Position) -> [u8; 24] {
        let mut h = [0u8; 24];
        h[..8].copy_from_slice(TT_MAGIC);
        h[8] = self.rules.code();
        h[9] = self.prover as u8;
        h[16..24].copy_from_slice(&root.zobrist().to_le_bytes());
        h
    }

    /// After a stop: walks the tt's tree from the root (the path's top)
    /// and writes the proofs of proven nodes found there that are not
    /// stored yet, so that the next run starts from them. Bounded: at most
    /// a million tt probes and 500 extractions, of proofs estimated at 20
    /// positions or more.
    pub(super) fn flush_proven(&mut self, root: &Position, key: u64) {
        let mut probes: u64 = 1_000_000;
        let mut extractions: u32 = 500;
        self.flush_rec(root, key, &mut probes, &mut extractions);
    }

    fn flush_rec(&mut self, pos: &Position, key: u64, probes: &mut u64, extractions: &mut u32) {
        let or = pos.turn() == self.prover;
        let moves = pos.legal_moves();
        // Children with tt entries: proven ones are written; of the open
        // ones the walk follows, at OR nodes, the two most promising
        // (smallest proof numbers), at AND nodes all.
        let mut open: Vec<(u32, Position, Move, u64)> = Vec::new();
        for &m in moves.iter() {
            if *probes == 0 || *extractions == 0 || self.writer.error.is_some() {
                return;
            }
            *probes -= 1;
            let child = pos.play(m);
            let irr = m.is_irreversible();
            let z = child.zobrist();
            if (!irr && self.search.path.repeats(z)) || self.writer.stored.contains_key(&z) {
                continue;
            }
            let ckey = child_key(key, m, &child);
            let Some(v) = self.search.tt.get(ckey) else {
                continue;
            };
            if v.dn == 0 {
                continue;
            }
            if v.pn == 0 {
                if v.dn >= 20 && child.outcome(self.rules).is_none() {
                    *extractions -= 1;
                    self.search.path.push(z, irr);
                    self.checkpoint(&child, ckey);
                    self.search.path.pop();
                }
            } else {
                open.push((v.pn, child, m, ckey));
            }
        }
        open.sort_by_key(|o| o.0);
        if or {
            open.truncate(2);
        }
        for (_, child, m, ckey) in open {
            self.search.path.push(child.zobrist(), m.is_irreversible());
            self.flush_rec(&child, ckey, probes, extractions);
            self.search.path.pop();
        }
    }

    /// Extracts and writes the proof of a proven node (the path's top is
    /// `pos`) unless it is stored; a store error stops the search.
    pub(super) fn checkpoint(&mut self, pos: &Position, key: u64) {
        if self.writer.stored.contains_key(&pos.zobrist()) {
            return;
        }
        match self.extract_and_store(pos, key) {
            Ok(_) => {}
            Err(SearchError::Store(e)) => {
                self.writer.error = Some(e);
                self.search.stopped = true;
            }
            Err(_) => {}
        }
    }
}
