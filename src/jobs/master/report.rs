//! What a master run did: how it ended, each job's figures, the root's
//! moves and the principal line as the top tree has them.

use super::{Master, MasterError};
use crate::jobs::top::{State, TopNode};
use crate::rules::Position;
use crate::search::MoveStanding;
use serde::Serialize;

/// How a master run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MasterResult {
    /// The root is proven and its proof is in the store.
    Proven,
    /// The root is disproven (by the workers' searches: not certified).
    Disproven,
    /// The root cannot be proven because leaves failed.
    Failed,
    /// A limit or a signal stopped it (run again to resume).
    Stopped,
}

impl MasterResult {
    /// Its name, as `--json` and the status file write it (`proven`,
    /// `disproven`, `failed`, `stopped`).
    pub fn name(self) -> &'static str {
        match self {
            MasterResult::Proven => "proven",
            MasterResult::Disproven => "disproven",
            MasterResult::Failed => "failed",
            MasterResult::Stopped => "stopped",
        }
    }
}

/// One job's figures.
#[derive(Clone, Debug, Serialize)]
pub struct JobFigure {
    /// The job's id.
    pub id: String,
    /// Its top-tree node.
    pub node: u64,
    /// Its node's depth in the top tree.
    pub depth: u16,
    /// Its line from the start (SAN).
    pub line: String,
    /// Its node budget.
    pub budget_nodes: u64,
    /// Its search threads (omitted: one).
    #[serde(skip_serializing_if = "crate::jobs::job::is_one_thread")]
    pub threads: u32,
    /// `proven`, `disproven`, `unresolved`, or `rejected`.
    pub outcome: String,
    /// Why it was rejected.
    pub rejected: Option<String>,
    /// Nodes its search expanded (from its result).
    pub nodes: u64,
    /// Of `nodes`, its busiest thread's, where it had several threads
    /// (from its result).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span_nodes: Option<u64>,
    /// Seconds its worker reported.
    pub time_s: f64,
    /// Seconds the checker took over its certificate.
    pub check_s: f64,
    /// Records it brought into the store.
    pub records: u64,
    /// What stopped it unresolved (`budget`, `threshold`, `signal`, as
    /// its result says).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<String>,
    /// When it was sent, in virtual seconds (`--executor sim` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent_s: Option<f64>,
    /// When its result was taken in, in virtual seconds (`--executor sim`
    /// only): what a run's chain of jobs is read from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_s: Option<f64>,
}

/// What a master run did.
#[derive(Clone, Debug, Serialize)]
pub struct MasterReport {
    /// How it ended.
    pub result: MasterResult,
    /// The root's proof number.
    pub root_pn: u32,
    /// The root's disproof number.
    pub root_dn: u32,
    /// Whether it resumed a top tree left by an earlier run.
    pub resumed: bool,
    /// Leaves an earlier run left failed, or disproven by its workers
    /// (not certified), tried again in this one.
    pub reopened: u64,
    /// Top-tree nodes settled at the start from proofs the store holds
    /// (made since the tree was left), whatever the tree said.
    pub settled_from_store: u64,
    /// Jobs that came back accepted.
    pub jobs_done: u64,
    /// Results rejected (each named in `each`).
    pub jobs_rejected: u64,
    /// Jobs stopped because their leaf no longer mattered.
    pub jobs_cancelled: u64,
    /// Leaves marked failed.
    pub leaves_failed: u64,
    /// Records merged into the store.
    pub records_merged: u64,
    /// Nodes in the top tree.
    pub top_nodes: u64,
    /// Bytes of one top-tree node's key and value (the store adds its own
    /// page overhead).
    pub top_bytes_per_node: u64,
    /// Wall-clock seconds.
    pub time_s: f64,
    /// The root's moves as the top tree has them: how far each got
    /// (`state`: `frontier`, `inflight`, `inner`, `proven`, `disproven` or
    /// `failed`; `replies` and `replies_proven` counted in the top tree, 0
    /// until the move is expanded).
    pub root_moves: Vec<MoveStanding>,
    /// The top tree's most-proving path from the root when the run ended
    /// (empty when the root is settled; `state`: `frontier`, `inflight` or
    /// `inner`; no reply counts).
    pub principal_line: Vec<MoveStanding>,
    /// Every job.
    pub each: Vec<JobFigure>,
}

/// The move into top-tree node `c` from its parent's position `pos`, in
/// SAN (`?` for a code that is not a legal move there).
fn move_san(pos: &Position, c: &TopNode) -> String {
    crate::rules::move_of_code(pos, crate::vocab::MoveCode::from_raw(c.mv))
        .map(|m| pos.san(m))
        .unwrap_or_else(|| "?".into())
}

/// A node state as the report and the status file write it (`frontier`,
/// `inflight`, `inner`, `proven`, `disproven`, `failed`).
fn state_name(s: State) -> &'static str {
    match s {
        State::Frontier => "frontier",
        State::InFlight => "inflight",
        State::Inner => "inner",
        State::Proven => "proven",
        State::Disproven => "disproven",
        State::Failed => "failed",
    }
}
impl Master<'_, '_> {
    /// The root's moves with their numbers and replies proven, best first
    /// (by proof number where the winner moves, else disproof number).
    pub(super) fn root_moves(&self, root: &TopNode) -> Result<Vec<MoveStanding>, MasterError> {
        let pos = root.position();
        let or = pos.turn() == self.cfg.winner;
        let mut moves = self.top.children(root)?;
        moves.sort_by_key(|(_, c)| c.order(or));
        let mut out = Vec::new();
        for (_, c) in moves {
            let kids = self.top.children(&c)?;
            out.push(MoveStanding {
                san: move_san(&pos, &c),
                state: state_name(c.state),
                pn: c.pn,
                dn: c.dn,
                replies: Some(kids.len() as u32),
                replies_proven: Some(
                    kids.iter()
                        .filter(|(_, k)| k.state == State::Proven)
                        .count() as u32,
                ),
            });
        }
        Ok(out)
    }

    /// The principal line: from the root, at each inner node the child
    /// the selection would follow (by proof number where the winner
    /// moves, else by disproof number; jobs out included), down to a
    /// leaf, at most 200 plies.
    pub(super) fn principal_line(&self) -> Result<Vec<MoveStanding>, MasterError> {
        let mut out = Vec::new();
        let mut node = self.top.root()?;
        while node.state == State::Inner && out.len() < 200 {
            let pos = node.position();
            let or = pos.turn() == self.cfg.winner;
            let Some((_, next)) = self
                .top
                .children(&node)?
                .into_iter()
                .filter(|(_, c)| !c.settled())
                .min_by_key(|(_, c)| c.order(or))
            else {
                break;
            };
            out.push(MoveStanding {
                san: move_san(&pos, &next),
                state: state_name(next.state),
                pn: next.pn,
                dn: next.dn,
                replies: None,
                replies_proven: None,
            });
            node = next;
        }
        Ok(out)
    }
}
