//! Fault injection: valid ladder proofs (rungs 1-7) are certified; thousands of random
//! mutations of every kind are each rejected with the right kind of reason.

use crate::util::{self, Proof, Rng, ladder7};
use antiproof::check::{ReasonKind, Rules, TreeOptions, Verdict, check_tree};
use antiproof::rules::{Color, Position};
use antiproof::wintree::{
    FLAG_CHILD, FLAG_TRANSPOSITION, MoveCode, NodeKind, ProofDag, WinTree, WriteOptions, write_tree,
};
use std::collections::HashMap;

/// Mutations per kind.
const PER_KIND: usize = 1000;

fn opts_for(p: &Proof) -> TreeOptions {
    TreeOptions {
        threads: Some(1),
        winner: Some(if p.winner == Color::White {
            shakmaty::Color::White
        } else {
            shakmaty::Color::Black
        }),
        ..TreeOptions::default()
    }
}

/// The verdict's reason kind; `None` when certified or not certified.
fn verdict(bytes: &[u8], o: &TreeOptions) -> Option<ReasonKind> {
    let tree = match WinTree::from_bytes(bytes) {
        Ok(t) => t,
        Err(_) => return Some(ReasonKind::Malformed),
    };
    match check_tree(&tree, o).verdict {
        Verdict::Rejected(r) => Some(r.reason.kind()),
        _ => None,
    }
}

fn write(p: &Proof, dag: &ProofDag) -> Vec<u8> {
    let no_sizes = WriteOptions {
        size_table: false,
        size_depth: None,
    };
    write_tree(dag, 0, &p.prolog, &no_sizes).unwrap().bytes
}

fn men(p: &Position) -> u32 {
    p.men()
}

/// Tallies mutations per kind and the reasons seen.
#[derive(Default)]
struct Tally(HashMap<&'static str, (usize, HashMap<ReasonKind, usize>)>);

impl Tally {
    fn record(&mut self, kind: &'static str, got: Option<ReasonKind>, allowed: &[ReasonKind]) {
        let got = got.unwrap_or_else(|| panic!("{kind}: a mutation was certified"));
        assert!(
            allowed.contains(&got),
            "{kind}: rejected for {got:?}, expected one of {allowed:?}"
        );
        let e = self.0.entry(kind).or_default();
        e.0 += 1;
        *e.1.entry(got).or_default() += 1;
    }
}

const CHESS: &[ReasonKind] = &[
    ReasonKind::IllegalMove,
    ReasonKind::MissingDefence,
    ReasonKind::DuplicateMove,
    ReasonKind::WinnerChildren,
    ReasonKind::NonTerminalLeaf,
    ReasonKind::LeafNotWon,
    ReasonKind::TranspositionMismatch,
    ReasonKind::GameOver,
    ReasonKind::Cycle,
];

#[test]
fn originals_are_certified_and_every_mutation_is_rejected() {
    let proofs = ladder7();
    for p in proofs {
        assert_eq!(
            verdict(&p.file(), &opts_for(p)),
            None,
            "{}",
            p.line.join(" ")
        );
    }
    let mut rng = Rng(0xdead_beef_cafe_f00d);
    let mut tally = Tally::default();
    let winner_node = |p: &Proof, i: usize| p.positions[i].turn() == p.winner;

    let pick = |rng: &mut Rng, f: &dyn Fn(&Proof, usize) -> bool| -> (usize, usize) {
        let all: Vec<(usize, usize)> = proofs
            .iter()
            .enumerate()
            .flat_map(|(pi, p)| (0..p.dag.nodes.len()).map(move |i| (pi, i)))
            .filter(|&(pi, i)| f(&proofs[pi], i))
            .collect();
        all[rng.below(all.len())]
    };

    // 1. Drop a defence.
    for _ in 0..PER_KIND {
        let (pi, i) = pick(&mut rng, &|p, i| {
            !winner_node(p, i) && p.dag.nodes[i].children.len() >= 2
        });
        let p = &proofs[pi];
        let mut dag = p.dag.clone();
        let k = rng.below(dag.nodes[i].children.len());
        dag.nodes[i].children.remove(k);
        tally.record(
            "drop a defence",
            verdict(&write(p, &dag), &opts_for(p)),
            &[ReasonKind::MissingDefence],
        );
    }

    // 2. Add an extra child: an illegal move anywhere, a second move at a
    //    winner node, a repeated defence at a loser node.
    for n in 0..PER_KIND {
        let p = &proofs[rng.below(proofs.len())];
        let inner: Vec<usize> = (0..p.dag.nodes.len())
            .filter(|&i| !p.dag.nodes[i].children.is_empty())
            .collect();
        let i = inner[rng.below(inner.len())];
        let mut dag = p.dag.clone();
        let pos = p.positions[i];
        let legal: Vec<MoveCode> = pos.legal_moves().iter().map(|m| m.watkins_code()).collect();
        let leaf = dag.add_node();
        let k = rng.below(dag.nodes[i].children.len() + 1);
        let (code, allowed): (MoveCode, &[ReasonKind]) = match n % 3 {
            0 => {
                let c = loop {
                    let c = MoveCode::from_raw(rng.next() as u16).cleared();
                    if !legal.iter().any(|l| l.same_move(c)) {
                        break c;
                    }
                };
                (
                    c,
                    &[
                        ReasonKind::IllegalMove,
                        ReasonKind::BadMoveCode,
                        ReasonKind::Unsolved,
                    ],
                )
            }
            1 if winner_node(p, i) && legal.len() > 1 => {
                let cur = dag.nodes[i].children[0].0;
                let other = *legal.iter().find(|&&l| !cur.same_move(l)).unwrap();
                (other, &[ReasonKind::WinnerChildren])
            }
            _ => {
                let (c, _) = dag.nodes[i].children[rng.below(dag.nodes[i].children.len())];
                (c, &[ReasonKind::DuplicateMove, ReasonKind::WinnerChildren])
            }
        };
        dag.nodes[i].children.insert(k, (code, leaf));
        tally.record(
            "add an extra or illegal child",
            verdict(&write(p, &dag), &opts_for(p)),
            allowed,
        );
    }

    // 3. Replace a winner move by another legal move (keeping the subtree).
    for _ in 0..PER_KIND {
        let p = &proofs[rng.below(proofs.len())];
        let cands: Vec<(usize, Vec<MoveCode>)> = (0..p.dag.nodes.len())
            .filter(|&i| winner_node(p, i) && !p.dag.nodes[i].children.is_empty())
            .map(|i| {
                let cur = p.dag.nodes[i].children[0].0;
                let others: Vec<MoveCode> = p.positions[i]
                    .legal_moves()
                    .iter()
                    .map(|m| m.watkins_code())
                    .filter(|&c| !cur.same_move(c))
                    .collect();
                (i, others)
            })
            .filter(|(_, o)| !o.is_empty())
            .collect();
        let (i, others) = &cands[rng.below(cands.len())];
        let mut dag = p.dag.clone();
        dag.nodes[*i].children[0].0 = others[rng.below(others.len())];
        tally.record(
            "replace a winner move",
            verdict(&write(p, &dag), &opts_for(p)),
            CHESS,
        );
    }

    // 4. Cut a subtree to a non-terminal leaf (more than 4 men).
    for _ in 0..PER_KIND {
        let (pi, i) = pick(&mut rng, &|p, i| {
            !p.dag.nodes[i].children.is_empty() && men(&p.positions[i]) > 4
        });
        let p = &proofs[pi];
        let mut dag = p.dag.clone();
        dag.nodes[i].children.clear();
        tally.record(
            "cut a subtree",
            verdict(&write(p, &dag), &opts_for(p)),
            &[ReasonKind::NonTerminalLeaf],
        );
    }

    // File-level mutations need the slot layout.
    struct Layout {
        bytes: Vec<u8>,
        pointers: Vec<u32>,
        /// Non-transposition slots and their DAG node.
        plain: Vec<(u32, usize)>,
        dag_of_slot: Vec<Option<usize>>,
        parent: Vec<u32>,
        /// Leaves whose next sibling is none or the next slot.
        leaves: Vec<u32>,
    }
    let layouts: Vec<Layout> = proofs
        .iter()
        .map(|p| {
            let w = write_tree(&p.dag, 0, &p.prolog, &WriteOptions::default()).unwrap();
            let tree = WinTree::from_bytes(&w.bytes).unwrap();
            let mut dag_of_slot = vec![None; tree.len() as usize];
            for (d, &s) in w.slot_of.iter().enumerate() {
                if s != u32::MAX {
                    dag_of_slot[s as usize] = Some(d);
                }
            }
            let mut parent = vec![u32::MAX; tree.len() as usize];
            let mut pointers = Vec::new();
            let mut leaves = Vec::new();
            for i in 0..tree.len() {
                for c in tree.children(i).unwrap() {
                    parent[c.unwrap().index as usize] = i;
                }
                let node = tree.node(i).unwrap();
                match node.kind {
                    NodeKind::Transposition { .. } => pointers.push(i),
                    NodeKind::Leaf if i > 0 && node.next_sibling.is_none_or(|n| n == i + 1) => {
                        leaves.push(i)
                    }
                    _ => {}
                }
            }
            let plain = (1..tree.len())
                .filter_map(|s| dag_of_slot[s as usize].map(|d| (s, d)))
                .collect();
            Layout {
                bytes: w.bytes.clone(),
                pointers,
                plain,
                dag_of_slot,
                parent,
                leaves,
            }
        })
        .collect();
    let set_data = |b: &mut Vec<u8>, slot: u32, prolog: usize, data: u32| {
        let off = if slot == 0 {
            0
        } else {
            6 + 2 * prolog + 6 * (slot as usize - 1)
        };
        b[off..off + 4].copy_from_slice(&data.to_le_bytes());
    };
    let get_data = |b: &[u8], slot: u32, prolog: usize| -> u32 {
        let off = if slot == 0 {
            0
        } else {
            6 + 2 * prolog + 6 * (slot as usize - 1)
        };
        u32::from_le_bytes(b[off..off + 4].try_into().unwrap())
    };

    // 5. Point a transposition at a different position.
    let with_pointers: Vec<usize> = (0..proofs.len())
        .filter(|&i| !layouts[i].pointers.is_empty())
        .collect();
    assert!(!with_pointers.is_empty());
    for _ in 0..PER_KIND {
        let pi = with_pointers[rng.below(with_pointers.len())];
        let (p, l) = (&proofs[pi], &layouts[pi]);
        let ptr = l.pointers[rng.below(l.pointers.len())];
        let old = get_data(&l.bytes, ptr, p.prolog.len());
        let cur = l.dag_of_slot[(old & 0x3fff_ffff) as usize].unwrap();
        let (t, _) = loop {
            let (s, d) = l.plain[rng.below(l.plain.len())];
            if p.positions[d] != p.positions[cur] {
                break (s, d);
            }
        };
        let mut b = l.bytes.clone();
        set_data(&mut b, ptr, p.prolog.len(), (old & !0x3fff_ffff) | t);
        tally.record(
            "point a transposition elsewhere",
            verdict(&b, &opts_for(p)),
            &[ReasonKind::TranspositionMismatch, ReasonKind::Cycle],
        );
    }

    // 6. Make a cycle: a leaf becomes a transposition to one of its
    //    ancestors.
    for _ in 0..PER_KIND {
        let pi = rng.below(proofs.len());
        let (p, l) = (&proofs[pi], &layouts[pi]);
        let leaf = l.leaves[rng.below(l.leaves.len())];
        let mut anc = Vec::new();
        let mut a = l.parent[leaf as usize];
        while a != 0 && a != u32::MAX {
            anc.push(a);
            a = l.parent[a as usize];
        }
        if anc.is_empty() {
            continue;
        }
        let target = anc[rng.below(anc.len())];
        let old = get_data(&l.bytes, leaf, p.prolog.len());
        let follows = if old & 0x3fff_ffff == leaf + 1 {
            FLAG_CHILD
        } else {
            0
        };
        let mut b = l.bytes.clone();
        set_data(
            &mut b,
            leaf,
            p.prolog.len(),
            FLAG_TRANSPOSITION | follows | target,
        );
        tally.record(
            "make a cycle",
            verdict(&b, &opts_for(p)),
            &[ReasonKind::Cycle],
        );
    }

    // 7. Truncate the file (anywhere but a size-table entry boundary,
    //    which leaves a valid file with a shorter table).
    for _ in 0..PER_KIND {
        let pi = rng.below(proofs.len());
        let (p, l) = (&proofs[pi], &layouts[pi]);
        let nodes_end = 6 + 2 * p.prolog.len() + 6 * (l.dag_of_slot.len() - 1);
        let cut = loop {
            let c = rng.below(l.bytes.len());
            if c < nodes_end || !(c - nodes_end).is_multiple_of(8) {
                break c;
            }
        };
        tally.record(
            "truncate",
            verdict(&l.bytes[..cut], &opts_for(p)),
            &[ReasonKind::Malformed],
        );
    }

    // 8. Flip a flag bit (bit 30 or 31 of a node's data).
    for _ in 0..PER_KIND {
        let pi = rng.below(proofs.len());
        let (p, l) = (&proofs[pi], &layouts[pi]);
        let slot = rng.below(l.dag_of_slot.len()) as u32;
        let bit = if rng.next() & 1 == 0 {
            FLAG_CHILD
        } else {
            FLAG_TRANSPOSITION
        };
        let mut b = l.bytes.clone();
        let d = get_data(&b, slot, p.prolog.len());
        set_data(&mut b, slot, p.prolog.len(), d ^ bit);
        let mut allowed = vec![ReasonKind::Malformed];
        allowed.extend_from_slice(CHESS);
        tally.record("flip a flag bit", verdict(&b, &opts_for(p)), &allowed);
    }

    for (k, (n, reasons)) in &tally.0 {
        println!("{k}: {n} mutations rejected: {reasons:?}");
        assert!(*n >= PER_KIND * 9 / 10, "{k}: only {n}");
    }
}

/// Proofs that need a FICS-only win (a stalemated loser with more pieces)
/// are certified under FICS rules and rejected under International rules
/// with `LeafNotWon`.
#[test]
fn fics_only_wins_rejected_under_international() {
    use antiproof::rules::{Piece, Role, Square};
    let mut rng = Rng(0x5eed_1234_5678_9abc);
    let mut found = 0;
    let mut tried = 0;
    let roles = [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::King,
    ];
    while found < PER_KIND && tried < 200_000 {
        tried += 1;
        // A white pawn blocked by 2-4 black pawns stacked in front of it,
        // and one more white piece anywhere: White to move can often leave
        // Black stalemated with more pieces (a FICS win only).
        let mut pieces = Vec::new();
        let mut used = 0u64;
        let file = rng.below(8) as u32;
        let k = 2 + rng.below(3) as u32;
        let rank = 1 + rng.below((6 - k) as usize) as u32;
        let put = |sq: u32, color, role, pieces: &mut Vec<_>, used: &mut u64| {
            *used |= 1 << sq;
            pieces.push((Square::new(sq).unwrap(), Piece { color, role }));
        };
        put(
            rank * 8 + file,
            Color::White,
            Role::Pawn,
            &mut pieces,
            &mut used,
        );
        for j in 1..=k {
            put(
                (rank + j) * 8 + file,
                Color::Black,
                Role::Pawn,
                &mut pieces,
                &mut used,
            );
        }
        let role = roles[rng.below(roles.len())];
        let sq = loop {
            let s = rng.below(64) as u32;
            if used >> s & 1 == 0 && !(role == Role::Pawn && (s / 8 == 0 || s / 8 == 7)) {
                break s;
            }
        };
        put(sq, Color::White, role, &mut pieces, &mut used);
        let Ok(pos) = Position::from_pieces(pieces, Color::White, None) else {
            continue;
        };
        if pos.outcome(Rules::Fics).is_some() {
            continue;
        }
        // Cheap filter: a FICS win for White that International rules do
        // not give.
        let Some(p) = try_prove(pos, Rules::Fics, Color::White) else {
            continue;
        };
        let fics_only = p.positions.iter().zip(&p.dag.nodes).any(|(q, n)| {
            n.children.is_empty()
                && q.outcome(Rules::Fics).and_then(|o| o.winner()) == Some(Color::White)
                && q.outcome(Rules::International).and_then(|o| o.winner()) != Some(Color::White)
        });
        if !fics_only {
            continue;
        }
        let bytes = p.file();
        let start = Some(util::shak(&pos));
        let fics = TreeOptions {
            rule_set: Rules::Fics.into(),
            winner: Some(shakmaty::Color::White),
            start: start.clone(),
            threads: Some(1),
            line: Vec::new(),
            tables: None,
            open_leaves: false,
            open_listed: 0,
            progress: None,
            start_clock: 0,
        };
        assert_eq!(verdict(&bytes, &fics), None, "{}", pos.to_fen());
        let intl = TreeOptions {
            rule_set: Rules::International.into(),
            ..fics
        };
        assert_eq!(
            verdict(&bytes, &intl),
            Some(ReasonKind::LeafNotWon),
            "{}",
            pos.to_fen()
        );
        found += 1;
    }
    println!("{found} FICS-only proofs from {tried} random positions");
    assert!(found >= 100, "only {found} FICS-only proofs found");
}

fn try_prove(pos: Position, rules: Rules, winner: Color) -> Option<Proof> {
    util::try_prove_from(pos, &[], rules, winner, 3_000)
}

/// A leaf of 4 men or fewer that is not a finished game rests on endgame
/// tables: the proof is "not certified" (with the count), not rejected.
#[test]
fn small_unfinished_leaves_are_not_certified() {
    use antiproof::rules::Role;
    let mut rng = Rng(0xabcd_ef01_2345_6789);
    let mut done = 0;
    for _ in 0..20_000 {
        if done >= 100 {
            break;
        }
        let pieces = rng.pieces(4, &Role::ALL);
        let Some(p) = util::prove_set_up(pieces, 2_000) else {
            continue;
        };
        let pos = p.root();
        let inner: Vec<usize> = (0..p.dag.nodes.len())
            .filter(|&i| !p.dag.nodes[i].children.is_empty())
            .collect();
        let i = inner[rng.below(inner.len())];
        let mut dag = p.dag.clone();
        dag.nodes[i].children.clear();
        let bytes = write(&p, &dag);
        let tree = WinTree::from_bytes(&bytes).unwrap();
        let o = TreeOptions {
            start: Some(util::shak(&pos)),
            ..opts_for(&p)
        };
        assert_eq!(
            check_tree(&WinTree::from_bytes(&p.file()).unwrap(), &o).verdict,
            Verdict::Certified
        );
        match check_tree(&tree, &o).verdict {
            Verdict::NotCertified { table_leaves } => assert!(table_leaves >= 1),
            v => panic!("{}: {v:?}", pos.to_fen()),
        }
        done += 1;
    }
    assert!(done >= 100, "only {done}");
}

/// Offset of size-table entry `k` in a file written from `p`.
fn size_entry_offset(p: &Proof, slots: u32, k: usize) -> usize {
    6 + 2 * p.prolog.len() + 6 * (slots as usize - 1) + 8 * k
}

#[test]
fn a_wrong_size_entry_is_rejected_naming_the_node() {
    let proofs = ladder7();
    let mut rng = Rng(0x5eed_0f51_2e00_0001);
    let mut tried = 0;
    for p in proofs {
        let w = write_tree(&p.dag, 0, &p.prolog, &WriteOptions::default()).unwrap();
        assert!(!w.sizes.is_empty());
        assert_eq!(
            verdict(&w.bytes, &opts_for(p)),
            None,
            "unchanged: certified"
        );
        // The root's size made huge, then random entries off by a little,
        // and negative (unsolved) ones.
        let mut picks = vec![(0usize, 2_000_000_000i32)];
        for _ in 0..20 {
            let k = rng.below(w.sizes.len());
            let true_size = w.sizes[k].1;
            let wrong = match rng.below(3) {
                0 => true_size + 1,
                1 => true_size - 1,
                _ => -true_size,
            };
            picks.push((k, wrong));
        }
        for (k, wrong) in picks {
            let (slot, true_size) = w.sizes[k];
            let mut b = w.bytes.clone();
            let off = size_entry_offset(p, w.slots, k) + 4;
            b[off..off + 4].copy_from_slice(&wrong.to_le_bytes());
            let tree = WinTree::from_bytes(&b).unwrap();
            let Verdict::Rejected(r) = check_tree(&tree, &opts_for(p)).verdict else {
                panic!(
                    "{}: size {wrong} at node {slot} certified",
                    p.line.join(" ")
                );
            };
            assert_eq!(r.node, Some(slot));
            assert_eq!(
                r.reason,
                antiproof::check::Reason::WrongSize {
                    slot,
                    listed: wrong as i64,
                    actual: true_size as u64,
                }
            );
            assert!(r.to_string().contains(&format!("node {slot}")), "{r}");
            tried += 1;
        }
    }
    assert!(tried > 100);
}

/// A file another process truncates or rewrites in place while it is
/// checked cannot reach the checker: what it reads is a private snapshot
/// (the bytes in memory, or, above the read limit, an unlinked copy only
/// this process holds), so the check gives the verdict of the file as it
/// was opened, never SIGBUS. (Found by trying: a worker handing the job
/// master a 480 MB certificate and truncating it while the master checked
/// the mapped file killed the master with SIGBUS; so did `verify --tree` on
/// a file truncated under it.)
#[test]
fn a_file_changed_while_it_is_checked_is_read_from_a_snapshot() {
    let dir = util::temp_dir("changed-under");
    let _ = std::fs::create_dir_all(&dir);
    let original =
        std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("proofs/e3-Na6.tree"))
            .unwrap();
    let want = check_tree(
        &WinTree::from_bytes(&original).unwrap(),
        &TreeOptions::default(),
    );
    assert_eq!(want.verdict, Verdict::Certified);
    let f = dir.join("t.tree");
    // A copy into a temporary file (read limit 0), into memory (the
    // default for a file this small), and a read limit of its exact size.
    type Open = fn(&std::path::Path) -> WinTree<'static>;
    let opened: [(&str, Open); 3] = [
        ("copied", |p| WinTree::open_reading_up_to(p, 0).unwrap()),
        ("read", |p| WinTree::open(p).unwrap()),
        ("at the limit", |p| {
            let len = std::fs::metadata(p).unwrap().len();
            WinTree::open_reading_up_to(p, len).unwrap()
        }),
    ];
    for (how, open) in opened {
        std::fs::write(&f, &original).unwrap();
        let tree = open(&f);
        // Cut to 10 bytes, then filled with other bytes, in place (the
        // same inode, as `truncate` and a rewrite do).
        let file = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
        file.set_len(10).unwrap();
        file.set_len(original.len() as u64).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&file, &vec![0xa5; original.len() / 2], 0)
            .unwrap();
        drop(file);
        let got = check_tree(&tree, &TreeOptions::default());
        assert_eq!(got.verdict, Verdict::Certified, "{how}");
        assert_eq!(got.positions, want.positions, "{how}");
        // Truncated for good: the open tree still reads its snapshot.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&f)
            .unwrap()
            .set_len(0)
            .unwrap();
        assert_eq!(
            check_tree(&tree, &TreeOptions::default()).verdict,
            Verdict::Certified,
            "{how}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
