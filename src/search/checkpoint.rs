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
/// node keys, the entry layout or the file layout change (a file of
/// another version is ignored with a warning).
const TT_MAGIC: &[u8; 8] = b"APTT0002";

/// Bytes of a saved tt's header: magic, rule set, winner, the fifty-move
/// rule (1 if on, else 0), the root's half-move clock under the rule
/// (capped at 255; 0 without it), 4 zero bytes, the root's Zobrist key,
/// the checksum of the rest ([`Tt::checksum`]). Without the fifty-move
/// rule the header is as before it existed.
///
/// [`Tt::checksum`]: super::tt::Tt::checksum
const TT_HEADER: usize = 32;

impl Prover<'_> {
    /// Saves the transposition table for resuming the search of `root`
    /// later ([`Prover::load_tt`]), with a checksum of its entries;
    /// written atomically (a temporary file, synced, then renamed). A
    /// mostly empty table is folded to the size its entries need first
    /// ([`super::tt::Tt::fold_to_use`]).
    pub fn save_tt(&mut self, root: &Position, path: &Path) -> std::io::Result<()> {
        self.search.tt.fold_to_use();
        let mut header = self.tt_header(root);
        header[24..].copy_from_slice(&self.search.tt.checksum().to_le_bytes());
        crate::fsutil::write_atomic(path, |w| {
            w.write_all(&header)?;
            self.search.tt.save(w)
        })
    }

    /// Loads a transposition table saved by [`Prover::save_tt`] for the
    /// same root, winner, rule set and file version, with its checksum
    /// right. Any other file (another search's, an older version's, one
    /// that does not fit the memory budget, a damaged or truncated one) is
    /// an error saying why, and the tt stays empty: the search then starts
    /// fresh, and nothing of a damaged file decides anything. Sound whatever
    /// the file's age: tt values are valid for their keys on every path.
    pub fn load_tt(&mut self, root: &Position, path: &Path) -> std::io::Result<()> {
        use std::io::{Error, ErrorKind};
        let bad = |m: &str| Error::new(ErrorKind::InvalidData, m.to_string());
        let mut r = std::io::BufReader::new(crate::fsutil::open_regular(path)?);
        let want = self.tt_header(root);
        let mut got = [0u8; TT_HEADER];
        r.read_exact(&mut got).map_err(|e| match e.kind() {
            ErrorKind::UnexpectedEof => bad("the file is truncated (no full header)"),
            _ => e,
        })?;
        if got[..8] != want[..8] {
            return Err(bad(
                "not a saved table of this version (wrong magic or version)",
            ));
        }
        if got[8..24] != want[8..24] {
            return Err(bad(
                "saved for another search (line, winner, rule set or half-move clock); it is replaced if this one stops",
            ));
        }
        let checksum = u64::from_le_bytes(got[24..].try_into().expect("8 bytes"));
        if self.search.tt.load(&mut r, checksum)? {
            Ok(())
        } else {
            Err(bad("larger than this run's --memory, or malformed"))
        }
    }

    fn tt_header(&self, root: &Position) -> [u8; TT_HEADER] {
        let mut h = [0u8; TT_HEADER];
        h[..8].copy_from_slice(TT_MAGIC);
        h[8] = self.rule_set.stalemate.code();
        h[9] = self.prover as u8;
        if self.rule_set.fifty_move {
            h[10] = 1;
            h[11] = root.halfmoves().min(255) as u8;
        }
        h[16..24].copy_from_slice(&root.zobrist().to_le_bytes());
        h
    }

    /// After a stop: walks the tt's tree from the root (the path's top)
    /// and writes the proofs of proven nodes found there that are not
    /// stored yet, so that the next run starts from them. Bounded: at most
    /// a million tt probes and 500 extractions, of proofs estimated at 20
    /// positions or more.
    ///
    /// An extraction that meets an entry the table lost searches again for
    /// it: the run being stopped, its limits are lifted for that, within
    /// [`crate::search::Config::flush_nodes`] in all (without it, such a
    /// proof was skipped, and the next run proved it again).
    pub(super) fn flush_proven(&mut self, root: &Position, key: u64) {
        let mut probes: u64 = 1_000_000;
        let mut extractions: u32 = 500;
        if self.search.flush_nodes == 0 {
            self.flush_rec(root, key, &mut probes, &mut extractions);
            return;
        }
        let lifted = self
            .search
            .budget
            .suspend(self.search.nodes, self.search.flush_nodes);
        let was = std::mem::replace(&mut self.search.stopped, false);
        self.flush_rec(root, key, &mut probes, &mut extractions);
        self.search.budget.resume(lifted);
        self.search.stopped = was;
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
            if !irr && self.search.path.repeats(z) {
                continue;
            }
            match self.writer.is_stored(&child) {
                Ok(false) => {}
                Ok(true) => continue,
                Err(e) => {
                    self.writer.error = Some(e);
                    self.search.stopped = true;
                    return;
                }
            }
            let ckey = child_key(key, m, &child);
            let Some(v) = self.search.tt.get(ckey) else {
                continue;
            };
            if v.dn == 0 {
                continue;
            }
            if v.pn == 0 {
                if v.dn >= 20 && child.outcome(self.rule_set.stalemate).is_none() {
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
        let r = match self.writer.is_stored(pos) {
            Ok(true) => return,
            Ok(false) => self.extract_and_store(pos, key),
            Err(e) => Err(SearchError::Store(e)),
        };
        match r {
            Ok(_) => {}
            Err(SearchError::Store(e)) => {
                self.writer.error = Some(e);
                self.search.stopped = true;
            }
            Err(_) => {}
        }
    }
}
