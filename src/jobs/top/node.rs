//! A top-tree node and the tree's header, and their value layouts in the
//! store.

use crate::rules::{Color, Position};
use crate::store::{KEY_LEN, Key};

/// Proof or disproof number "infinite".
pub const INF: u32 = u32::MAX;
/// The id of the header value.
pub const HEADER_ID: u64 = u64::MAX;
/// Bytes of one node's value.
pub const NODE_LEN: usize = 1 + KEY_LEN + 8 + 2 + 1 + 1 + 4 + 4 + 8 + 8 + 2 + 2;
/// Version byte of the node and header layout.
const LAYOUT: u8 = 1;

/// Where a node stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum State {
    /// A leaf waiting for a job.
    Frontier = 0,
    /// A leaf whose job is out.
    InFlight = 1,
    /// Expanded: its numbers come from its children.
    Inner = 2,
    /// The winner wins here.
    Proven = 3,
    /// The winner cannot win here (or it repeats its path).
    Disproven = 4,
    /// Its job failed twice (a wrong or unreadable result): never proven.
    Failed = 5,
}

impl State {
    fn from_u8(b: u8) -> Option<State> {
        Some(match b {
            0 => State::Frontier,
            1 => State::InFlight,
            2 => State::Inner,
            3 => State::Proven,
            4 => State::Disproven,
            5 => State::Failed,
            _ => return None,
        })
    }
}

/// One node of the top tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TopNode {
    /// The packed position.
    pub key: Key,
    /// The parent's id ([`HEADER_ID`] at the root).
    pub parent: u64,
    /// The move from the parent (raw Watkins code).
    pub mv: u16,
    /// Where it stands.
    pub state: State,
    /// Jobs of this node that came back wrong or never came back.
    pub attempts: u8,
    /// Proof number.
    pub pn: u32,
    /// Disproof number.
    pub dn: u32,
    /// Node budget of this leaf's next job.
    pub budget: u64,
    /// First child's id (when expanded).
    pub first_child: u64,
    /// Number of children.
    pub children: u16,
    /// Plies from the root.
    pub depth: u16,
}

impl TopNode {
    /// The value bytes: layout byte, key, parent, move, state, attempts,
    /// pn, dn, budget, first child, children, depth (little-endian).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(NODE_LEN);
        v.push(LAYOUT);
        v.extend_from_slice(&self.key);
        v.extend_from_slice(&self.parent.to_le_bytes());
        v.extend_from_slice(&self.mv.to_le_bytes());
        v.push(self.state as u8);
        v.push(self.attempts);
        v.extend_from_slice(&self.pn.to_le_bytes());
        v.extend_from_slice(&self.dn.to_le_bytes());
        v.extend_from_slice(&self.budget.to_le_bytes());
        v.extend_from_slice(&self.first_child.to_le_bytes());
        v.extend_from_slice(&self.children.to_le_bytes());
        v.extend_from_slice(&self.depth.to_le_bytes());
        v
    }

    /// Reads [`Self::to_bytes`]' layout; `None` if it is not that.
    pub fn from_bytes(b: &[u8]) -> Option<TopNode> {
        if b.len() != NODE_LEN || b[0] != LAYOUT {
            return None;
        }
        let mut at = 1;
        let mut take = |n: usize| {
            let s = &b[at..at + n];
            at += n;
            s
        };
        let key: Key = take(KEY_LEN).try_into().ok()?;
        let u64_of = |s: &[u8]| u64::from_le_bytes(s.try_into().unwrap());
        let u32_of = |s: &[u8]| u32::from_le_bytes(s.try_into().unwrap());
        let u16_of = |s: &[u8]| u16::from_le_bytes(s.try_into().unwrap());
        let parent = u64_of(take(8));
        let mv = u16_of(take(2));
        let state = State::from_u8(take(1)[0])?;
        let attempts = take(1)[0];
        let pn = u32_of(take(4));
        let dn = u32_of(take(4));
        let budget = u64_of(take(8));
        let first_child = u64_of(take(8));
        let children = u16_of(take(2));
        let depth = u16_of(take(2));
        Some(TopNode {
            key,
            parent,
            mv,
            state,
            attempts,
            pn,
            dn,
            budget,
            first_child,
            children,
            depth,
        })
    }

    /// The position.
    pub fn position(&self) -> Position {
        Position::unpack(&crate::rules::PackedPosition(self.key))
            .expect("top-tree keys are packed positions")
    }

    /// Whether the node is settled (proven, disproven or failed).
    pub fn settled(&self) -> bool {
        matches!(self.state, State::Proven | State::Disproven | State::Failed)
    }

    /// The key siblings are ordered by, most-proving first: proof number
    /// then disproof number where the winner moves (`or`), else the
    /// other way round.
    pub fn order(&self, or: bool) -> (u32, u32) {
        if or {
            (self.pn, self.dn)
        } else {
            (self.dn, self.pn)
        }
    }
}

/// `v` with df-pn's margin of 1 + 1/4 (plus one, so that it always
/// grows): how far a child may fall behind its best sibling before the
/// search leaves it.
pub fn with_margin(v: u32) -> u64 {
    u64::from(v) + u64::from(v) / 4 + 1
}

/// The header: what the tree is a search of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The root's packed position.
    pub root: Key,
    /// The side proven to win.
    pub winner: Color,
    /// The next free node id.
    pub next_id: u64,
    /// Master runs over this tree so far (job files carry it, so a
    /// resumed master never reads a result of a run before).
    pub generation: u32,
}

impl Header {
    pub(super) fn to_bytes(self) -> Vec<u8> {
        let mut v = vec![LAYOUT];
        v.extend_from_slice(&self.root);
        v.push(self.winner as u8);
        v.extend_from_slice(&self.next_id.to_le_bytes());
        v.extend_from_slice(&self.generation.to_le_bytes());
        v
    }

    /// Reads a header value ([`crate::jobs::state`] reads the one a state file
    /// holds).
    pub(in crate::jobs) fn from_value(b: &[u8]) -> Option<Header> {
        Header::from_bytes(b)
    }

    pub(super) fn from_bytes(b: &[u8]) -> Option<Header> {
        if b.len() != 1 + KEY_LEN + 1 + 8 + 4 || b[0] != LAYOUT {
            return None;
        }
        Some(Header {
            root: b[1..1 + KEY_LEN].try_into().ok()?,
            winner: match b[1 + KEY_LEN] {
                0 => Color::White,
                1 => Color::Black,
                _ => return None,
            },
            next_id: u64::from_le_bytes(b[KEY_LEN + 2..KEY_LEN + 10].try_into().ok()?),
            generation: u32::from_le_bytes(b[KEY_LEN + 10..].try_into().ok()?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_round_trip() {
        let n = TopNode {
            key: Position::startpos().pack().0,
            parent: 7,
            mv: 0x1234,
            state: State::InFlight,
            attempts: 1,
            pn: 5,
            dn: INF,
            budget: 1 << 20,
            first_child: 99,
            children: 20,
            depth: 3,
        };
        let b = n.to_bytes();
        assert_eq!(b.len(), NODE_LEN);
        assert_eq!(TopNode::from_bytes(&b), Some(n));
        assert_eq!(TopNode::from_bytes(&b[1..]), None);
        let h = Header {
            root: n.key,
            winner: Color::Black,
            next_id: 42,
            generation: 3,
        };
        assert_eq!(Header::from_bytes(&h.to_bytes()), Some(h));
    }
}
