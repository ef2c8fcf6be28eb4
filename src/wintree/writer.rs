//! The win-tree writer: a proof DAG to file bytes.

use super::{FLAG_CHILD, FLAG_TRANSPOSITION, MAX_NODES, MoveCode};
use std::fmt;

/// A proof as a DAG of positions: each node is one distinct position, each
/// edge a move to a child position. Node ids are indices into
/// [`ProofDag::nodes`].
#[derive(Clone, Debug, Default)]
pub struct ProofDag {
    /// The nodes.
    pub nodes: Vec<DagNode>,
}

/// One position of a [`ProofDag`].
#[derive(Clone, Debug, Default)]
pub struct DagNode {
    /// Its moves and the child each leads to, in the order to write them.
    pub children: Vec<(MoveCode, usize)>,
}

impl ProofDag {
    /// An empty DAG.
    pub fn new() -> ProofDag {
        ProofDag::default()
    }

    /// Adds a node with no children and returns its id.
    pub fn add_node(&mut self) -> usize {
        self.nodes.push(DagNode::default());
        self.nodes.len() - 1
    }

    /// Adds an edge.
    pub fn add_edge(&mut self, from: usize, mv: MoveCode, to: usize) {
        self.nodes[from].children.push((mv, to));
    }

    /// Number of distinct positions reachable from `root` (itself included).
    pub fn reachable(&self, root: usize) -> u64 {
        let mut mark = vec![false; self.nodes.len()];
        let mut stack = vec![root];
        mark[root] = true;
        let mut n = 0;
        while let Some(v) = stack.pop() {
            n += 1;
            for &(_, c) in &self.nodes[v].children {
                if !mark[c] {
                    mark[c] = true;
                    stack.push(c);
                }
            }
        }
        n
    }
}

/// Options of [`write_tree`].
#[derive(Clone, Debug)]
pub struct WriteOptions {
    /// Write the subtree-size table: an entry for the root and for the
    /// shallowest nodes with children (up to `size_depth` plies below the
    /// root) while their walks cost at most [`SIZE_TABLE_WALKS`] walks of
    /// the proof.
    pub size_table: bool,
    /// Deepest ply (0 = root) given a size entry; `None`: all.
    pub size_depth: Option<u32>,
}

impl Default for WriteOptions {
    fn default() -> WriteOptions {
        WriteOptions {
            size_table: true,
            size_depth: None,
        }
    }
}

/// Why a DAG cannot be written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteError {
    /// A node id out of range.
    BadNodeId(usize),
    /// The DAG has a cycle through this node.
    Cycle(usize),
    /// More slots than 30-bit indices allow.
    TooLarge,
    /// The prolog is longer than 65535 moves.
    PrologTooLong(usize),
    /// A subtree size does not fit in an `i32`.
    SizeOverflow(u64),
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::BadNodeId(n) => write!(f, "proof DAG refers to node {n}, out of range"),
            WriteError::Cycle(n) => write!(f, "proof DAG has a cycle through node {n}"),
            WriteError::TooLarge => write!(f, "proof has more than {MAX_NODES} node slots"),
            WriteError::PrologTooLong(n) => write!(f, "prolog of {n} moves is too long"),
            WriteError::SizeOverflow(s) => write!(f, "subtree size {s} does not fit in 32 bits"),
        }
    }
}

impl std::error::Error for WriteError {}

/// A written file and what was written.
#[derive(Clone, Debug)]
pub struct WrittenTree {
    /// The file bytes.
    pub bytes: Vec<u8>,
    /// Node slots, the root included.
    pub slots: u32,
    /// Transposition slots.
    pub transpositions: u32,
    /// For each DAG node reached, the slot index of its subtree
    /// (`u32::MAX` for nodes not reached).
    pub slot_of: Vec<u32>,
    /// The size table written, `(slot, size)` sorted by slot.
    pub sizes: Vec<(u32, i32)>,
}

/// Writes `dag` from `root` as a win-tree file with the given prolog (move
/// codes from the start position to `root`).
///
/// Nodes go in depth-first pre-order, children in the DAG's order. A child
/// whose position was already written becomes a transposition slot pointing
/// at it (so each DAG node is written once). The size of a node is the
/// number of distinct DAG nodes reachable from it, itself included, which
/// is the format's "distinct non-transposition nodes reachable following
/// transposition links".
pub fn write_tree(
    dag: &ProofDag,
    root: usize,
    prolog: &[MoveCode],
    opts: &WriteOptions,
) -> Result<WrittenTree, WriteError> {
    validate(dag, root, prolog)?;
    let laid = lay_out(dag, root)?;
    let sizes = if opts.size_table {
        size_table(dag, &laid, opts)?
    } else {
        Vec::new()
    };
    Ok(WrittenTree {
        bytes: encode(prolog, &laid.slots, &sizes),
        slots: laid.slots.len() as u32,
        transpositions: laid.transpositions,
        slot_of: laid.slot_of,
        sizes,
    })
}

/// Node ids in range and a prolog that fits its 16-bit count.
fn validate(dag: &ProofDag, root: usize, prolog: &[MoveCode]) -> Result<(), WriteError> {
    let n = dag.nodes.len();
    if root >= n {
        return Err(WriteError::BadNodeId(root));
    }
    if prolog.len() > u16::MAX as usize {
        return Err(WriteError::PrologTooLong(prolog.len()));
    }
    for node in &dag.nodes {
        for &(_, c) in &node.children {
            if c >= n {
                return Err(WriteError::BadNodeId(c));
            }
        }
    }
    Ok(())
}

/// Slot of a DAG node not written yet.
const NONE: u32 = u32::MAX;

/// The slots of a tree as laid out in pre-order.
struct Laid {
    /// (data, move) per slot; slot 0 is the root, its data holds the count.
    slots: Vec<(u32, u16)>,
    /// Depth of each slot (the root 0).
    depth_of_slot: Vec<u32>,
    /// The DAG node of each slot.
    dag_of_slot: Vec<usize>,
    /// The slot of each DAG node's subtree ([`NONE`] if not reached).
    slot_of: Vec<u32>,
    /// Transposition slots.
    transpositions: u32,
}

impl Laid {
    fn new_slot(&mut self, mv: u16, depth: u32, node: usize) -> Result<u32, WriteError> {
        if self.slots.len() as u64 >= MAX_NODES as u64 {
            return Err(WriteError::TooLarge);
        }
        self.slots.push((0, mv));
        self.depth_of_slot.push(depth);
        self.dag_of_slot.push(node);
        Ok(self.slots.len() as u32 - 1)
    }
}

/// Lays the DAG out depth-first from `root`: each node once, a second
/// reach of it a transposition slot; sibling links and flags set.
fn lay_out(dag: &ProofDag, root: usize) -> Result<Laid, WriteError> {
    let n = dag.nodes.len();
    let mut laid = Laid {
        slots: Vec::new(),
        depth_of_slot: Vec::new(),
        dag_of_slot: Vec::new(),
        slot_of: vec![NONE; n],
        transpositions: 0,
    };
    let mut on_stack = vec![false; n];
    // Frame: dag node, its slot, next child position, previous child slot.
    struct Frame {
        node: usize,
        slot: u32,
        next: usize,
        prev_child: Option<u32>,
    }
    let root_slot = laid.new_slot(0, 0, root)?;
    laid.slot_of[root] = root_slot;
    on_stack[root] = true;
    let mut stack = vec![Frame {
        node: root,
        slot: root_slot,
        next: 0,
        prev_child: None,
    }];
    while let Some(top) = stack.last_mut() {
        let node = top.node;
        if top.next == dag.nodes[node].children.len() {
            // Finish: the node's flags.
            let slot = top.slot;
            let has = top.prev_child.is_some();
            on_stack[node] = false;
            stack.pop();
            if has {
                laid.slots[slot as usize].0 |= FLAG_CHILD;
            }
            continue;
        }
        let (mv, child) = dag.nodes[node].children[top.next];
        top.next += 1;
        let prev = top.prev_child;
        let depth = stack.len() as u32;
        let cslot = laid.new_slot(mv.raw(), depth, child)?;
        stack.last_mut().expect("top").prev_child = Some(cslot);
        if laid.slot_of[child] != NONE {
            if on_stack[child] {
                return Err(WriteError::Cycle(child));
            }
            laid.slots[cslot as usize].0 = FLAG_TRANSPOSITION | laid.slot_of[child];
            laid.transpositions += 1;
        } else {
            laid.slot_of[child] = cslot;
            on_stack[child] = true;
            stack.push(Frame {
                node: child,
                slot: cslot,
                next: 0,
                prev_child: None,
            });
        }
        // Link the previous sibling to this one.
        if let Some(p) = prev {
            let d = &mut laid.slots[p as usize].0;
            if *d & FLAG_TRANSPOSITION != 0 {
                debug_assert_eq!(cslot, p + 1);
                *d |= FLAG_CHILD;
            } else {
                *d |= cslot;
            }
        }
    }
    let count = laid.slots.len() as u32;
    laid.slots[0].0 |= count;
    Ok(laid)
}

/// How many walks of the whole proof the size table's entries may cost
/// together, in the writer and again in the checker: each entry is
/// counted by a walk of what its node reaches, so a table listing every
/// node with children cost the sum of all subtree sizes (hours for a proof
/// of a few million positions with many transpositions).
pub const SIZE_TABLE_WALKS: u64 = 32;

/// The size table: the root, then the non-transposition slots with
/// children (down to `opts.size_depth`) shallowest first (by depth, then
/// slot), each with the distinct DAG nodes it reaches, while the walks so
/// far cost at most [`SIZE_TABLE_WALKS`] walks of the whole proof (the
/// entry whose walk crosses that budget is still written). Sorted by slot,
/// as readers search it. A node without an entry is walked by the reader
/// when its size is wanted.
fn size_table(
    dag: &ProofDag,
    laid: &Laid,
    opts: &WriteOptions,
) -> Result<Vec<(u32, i32)>, WriteError> {
    let mut wanted: Vec<u32> = (1..laid.slots.len() as u32)
        .filter(|&s| {
            let data = laid.slots[s as usize].0;
            data & FLAG_TRANSPOSITION == 0
                && data & FLAG_CHILD != 0
                && opts
                    .size_depth
                    .is_none_or(|d| laid.depth_of_slot[s as usize] <= d)
        })
        .collect();
    wanted.sort_by_key(|&s| (laid.depth_of_slot[s as usize], s));
    let mut sizes = Vec::new();
    let mut mark = vec![0u32; dag.nodes.len()];
    let mut epoch = 0u32;
    let mut work = Vec::new();
    let mut budget: Option<u64> = None;
    let mut spent = 0u64;
    for s in std::iter::once(0).chain(wanted) {
        if budget.is_some_and(|b| spent >= b) {
            break;
        }
        epoch += 1;
        let start = laid.dag_of_slot[s as usize];
        let mut count = 0u64;
        mark[start] = epoch;
        work.push(start);
        while let Some(v) = work.pop() {
            count += 1;
            for &(_, c) in &dag.nodes[v].children {
                if mark[c] != epoch {
                    mark[c] = epoch;
                    work.push(c);
                }
            }
        }
        spent += count;
        // The root's walk is the walk of the whole proof.
        budget.get_or_insert(count.saturating_mul(SIZE_TABLE_WALKS));
        let size = i32::try_from(count).map_err(|_| WriteError::SizeOverflow(count))?;
        sizes.push((s, size));
    }
    sizes.sort_unstable_by_key(|e| e.0);
    Ok(sizes)
}

/// The file bytes.
fn encode(prolog: &[MoveCode], slots: &[(u32, u16)], sizes: &[(u32, i32)]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(6 + 2 * prolog.len() + 6 * slots.len() + 8 * sizes.len());
    bytes.extend_from_slice(&slots[0].0.to_le_bytes());
    bytes.extend_from_slice(&(prolog.len() as u16).to_le_bytes());
    for m in prolog {
        bytes.extend_from_slice(&m.raw().to_le_bytes());
    }
    for &(d, m) in &slots[1..] {
        bytes.extend_from_slice(&d.to_le_bytes());
        bytes.extend_from_slice(&m.to_le_bytes());
    }
    for &(i, s) in sizes {
        bytes.extend_from_slice(&i.to_le_bytes());
        bytes.extend_from_slice(&s.to_le_bytes());
    }
    bytes
}
