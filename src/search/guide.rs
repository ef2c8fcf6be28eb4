//! A proven line's own moves as stored proof.
//!
//! `prove e3 c6 Bb5` proves the position after 2.Bb5; that wins 1.e3 c6
//! for White too, through the guide move 2.Bb5. After a proof, walking the
//! line back from its root, each position before a move of the winner
//! whose position after it is proven gets a `Win` record with that move,
//! and each position before a move of the loser every one of whose legal
//! moves leads to a proven position (or a game the winner has won) gets a
//! `Loss` record, until neither holds. Then `export e3 c6` writes a
//! certificate rooted after 1...c6 with 2.Bb5 as White's move, and
//! `openings` counts it for 1.e3 c6.
//!
//! Records already stored are kept; under the fifty-move rule each new
//! record gets its need from its children's (1 through a capture or pawn
//! move, else one more than the child's).

use crate::rules::{Color, Move, Position};
use crate::store::{Need, Record, Store, StoreError, WinLoss, need_through};
use crate::stored::{StoredNode, StoredProof};
use crate::vocab::RuleSet;

/// Stores the proof of the positions of `line` (played from `start`)
/// before its root, as far back as the line's moves carry it (see the
/// module doc); the root's own proof must be stored. Returns how many
/// positions before the root are proven now (0: none).
pub fn store_line_back(
    store: &Store,
    rules: RuleSet,
    start: &Position,
    line: &[Move],
    winner: Color,
) -> Result<usize, StoreError> {
    let mut positions = vec![*start];
    for &m in line {
        let next = positions.last().expect("start").play(m);
        positions.push(next);
    }
    let mut proven = 0;
    for i in (0..line.len()).rev() {
        let (before, after) = (&positions[i], &positions[i + 1]);
        let reader = store.reader()?;
        let proof = StoredProof::new(&reader, rules);
        // The proof below `after` must be there (a record for the winner,
        // or a game the winner has won).
        let Some((_, after_need, after_flags)) = won(&proof, after, winner)? else {
            break;
        };
        if proof.record(before)?.is_some() {
            proven += 1;
            continue;
        }
        let through = |m: Move, child_need: Need| need_through(m.is_irreversible(), child_need);
        let (rec, need) = if before.turn() == winner {
            let size = 1 + proof.record(after)?.map_or(1, |r| r.size);
            let rec = Record {
                verdict: WinLoss::Win,
                flags: after_flags,
                mv: line[i].watkins_code(),
                size,
            };
            (rec, through(line[i], after_need))
        } else {
            let (mut size, mut need, mut flags) = (1u64, 0 as Need, 0u8);
            let mut all = true;
            for &m in before.legal_moves().iter() {
                let child = before.play(m);
                match won(&proof, &child, winner)? {
                    Some((s, n, f)) => {
                        size = size.saturating_add(s);
                        flags |= f;
                        need = need.max(through(m, n));
                    }
                    None => {
                        all = false;
                        break;
                    }
                }
            }
            if !all {
                break;
            }
            let rec = Record {
                verdict: WinLoss::Loss,
                flags,
                mv: crate::vocab::MoveCode::NONE,
                size,
            };
            (rec, need)
        };
        drop(reader);
        if rules.fifty_move {
            if before.halfmoves() as u64 + need as u64 > crate::vocab::FIFTY_MOVE_PLIES as u64 {
                break;
            }
            store.put_batch_fifty(rules, &[(before.pack().0, rec, need)])?;
        } else {
            store.put_batch(rules, &[(before.pack().0, rec)])?;
        }
        proven += 1;
    }
    Ok(proven)
}

/// The size, need and flags of the proof at `pos` for `winner`, if the
/// store holds one (a finished game the winner has won: size 1, need 0).
fn won<R: crate::stored::RecordLookup>(
    proof: &StoredProof<R>,
    pos: &Position,
    winner: Color,
) -> Result<Option<(u64, Need, u8)>, StoreError> {
    Ok(match proof.node_for(pos, winner)? {
        Ok(StoredNode::GameEnd(_)) => Some((1, 0, 0)),
        Ok(StoredNode::Win { record, .. } | StoredNode::Loss { record, .. }) => Some((
            record.size,
            proof.need(pos)?.unwrap_or(0),
            record.flags & crate::store::FLAG_TABLES,
        )),
        _ => None,
    })
}
