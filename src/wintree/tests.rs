use super::*;

fn mc(s: &str) -> MoveCode {
    MoveCode::from_uci(s).unwrap()
}

/// root -e2e3-> a; a -d7d5-> b, a -d7d6-> c; b -g1f3-> d; c -g1f3-> d (transposition).
fn small() -> (ProofDag, WrittenTree) {
    let mut dag = ProofDag::new();
    let r = dag.add_node();
    let a = dag.add_node();
    let b = dag.add_node();
    let c = dag.add_node();
    let d = dag.add_node();
    dag.add_edge(r, mc("e2e3"), a);
    dag.add_edge(a, mc("d7d5"), b);
    dag.add_edge(a, mc("d7d6"), c);
    dag.add_edge(b, mc("g1f3"), d);
    dag.add_edge(c, mc("g1f3"), d);
    let w = write_tree(&dag, r, &[], &WriteOptions::default()).unwrap();
    (dag, w)
}

#[test]
fn move_codes() {
    let m = mc("e7e8k");
    assert_eq!(m.from(), 52);
    assert_eq!(m.to(), 60);
    assert_eq!(m.promotion(), 6);
    assert_eq!(m.uci(), "e7e8k");
    assert!(m.is_move());
    assert!(MoveCode::NULL.is_null() && MoveCode::NULL_ALT.is_null());
    assert!(!MoveCode::NULL.is_unsolved() && !MoveCode::NULL.is_move());
    let u = mc("e2e3").as_unsolved();
    assert!(u.is_unsolved() && !u.is_move());
    assert_eq!(u.unsolved_move(), mc("e2e3"));
    assert_eq!(u.uci(), "e2e3");
    let e = mc("e5d6");
    assert!(MoveCode::new(e.from(), e.to(), 0, true).same_move(e));
    assert_eq!(MoveCode::from_uci("e2e9"), None);
    assert_eq!(MoveCode::from_uci("e7e8x"), None);
}

#[test]
fn write_and_read() {
    let (_, w) = small();
    assert_eq!(w.slots, 6);
    assert_eq!(w.transpositions, 1);
    let t = WinTree::from_bytes(&w.bytes).unwrap();
    assert_eq!(t.len(), 6);
    assert!(t.prolog().is_empty());
    let a = t.follow_uci(["e2e3"]).unwrap().unwrap();
    assert_eq!(a, 1);
    let moves = t.moves(a).unwrap();
    assert_eq!(moves.len(), 2);
    assert_eq!(moves[0].mv, mc("d7d5"));
    assert_eq!(moves[0].size, Some(2));
    assert_eq!(moves[1].size, Some(2));
    let d1 = t.follow_uci(["e2e3", "d7d5", "g1f3"]).unwrap().unwrap();
    let d2 = t.follow_uci(["e2e3", "d7d6", "g1f3"]).unwrap().unwrap();
    assert_eq!(d1, d2);
    assert!(t.node(d1).unwrap().is_leaf());
    assert_eq!(t.size(0).unwrap(), Some(5));
    assert_eq!(t.follow_uci(["e2e4"]).unwrap(), None);
    assert_eq!(t.follow_uci(["zz"]).unwrap(), None);
    // The transposition slot is the last one.
    assert_eq!(
        t.node(5).unwrap().kind,
        NodeKind::Transposition { target: 3 }
    );
}

#[test]
fn prolog_round_trip() {
    let mut dag = ProofDag::new();
    let r = dag.add_node();
    let w = write_tree(&dag, r, &[mc("e2e3"), mc("d7d5")], &WriteOptions::default()).unwrap();
    let t = WinTree::from_vec(w.bytes).unwrap();
    assert_eq!(t.prolog(), vec![mc("e2e3"), mc("d7d5")]);
    assert_eq!(t.follow_uci_from_start(["e2e3", "d7d5"]).unwrap(), Some(0));
    assert_eq!(t.follow_uci_from_start(["e2e3"]).unwrap(), None);
    assert_eq!(t.follow_uci_from_start(["e2e3", "d7d6"]).unwrap(), None);
    assert_eq!(
        t.follow_uci_from_start(["e2e3", "d7d5", "a2a3"]).unwrap(),
        None
    );
    assert!(t.root().is_leaf());
    assert_eq!(t.len(), 1);
}

#[test]
fn writer_rejects_cycles() {
    let mut dag = ProofDag::new();
    let a = dag.add_node();
    let b = dag.add_node();
    dag.add_edge(a, mc("e2e3"), b);
    dag.add_edge(b, mc("e7e6"), a);
    assert_eq!(
        write_tree(&dag, a, &[], &WriteOptions::default()).unwrap_err(),
        WriteError::Cycle(a)
    );
}

#[test]
fn resolve_detects_loops() {
    // root -> 1 (transposition to 2, sibling follows) -> 2 (transposition to 1).
    let mut b = Vec::new();
    b.extend_from_slice(&(3u32 | FLAG_CHILD).to_le_bytes());
    b.extend_from_slice(&0u16.to_le_bytes());
    b.extend_from_slice(&(2u32 | FLAG_TRANSPOSITION | FLAG_CHILD).to_le_bytes());
    b.extend_from_slice(&mc("e2e3").raw().to_le_bytes());
    b.extend_from_slice(&(1u32 | FLAG_TRANSPOSITION).to_le_bytes());
    b.extend_from_slice(&mc("e2e4").raw().to_le_bytes());
    let t = WinTree::from_vec(b).unwrap();
    assert!(matches!(
        t.resolve(1),
        Err(WinTreeError::TranspositionCycle { node: 1 })
    ));
    assert_eq!(t.children(0).unwrap().count(), 2);
}

#[test]
fn malformed_inputs_never_panic() {
    let (_, w) = small();
    // Every truncation is an error (or, at entry boundaries of the size
    // table, a valid shorter table).
    for cut in 0..w.bytes.len() {
        let r = WinTree::from_bytes(&w.bytes[..cut]);
        let nodes_end = 6 + 6 * 5;
        if cut >= nodes_end && (cut - nodes_end) % 8 == 0 {
            assert!(r.is_ok(), "cut {cut}");
        } else {
            assert!(r.is_err(), "cut {cut}");
        }
    }
    // Random corruption: walk everything, never panic.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..20_000 {
        let mut b = w.bytes.clone();
        for _ in 0..3 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let i = (seed % b.len() as u64) as usize;
            b[i] ^= 1 << ((seed >> 32) % 8);
        }
        if let Ok(t) = WinTree::from_bytes(&b) {
            for i in 0..t.len() {
                let _ = t.node(i);
                let _ = t.resolve(i);
                let _ = t.size(i);
                if let Ok(c) = t.children(i) {
                    for x in c {
                        let _ = x;
                    }
                }
                let _ = t.moves(i);
            }
            let _ = t.follow_uci(["e2e3", "d7d5", "g1f3"]);
            let _ = t.node(t.len());
        }
    }
}

#[test]
fn bad_headers() {
    assert!(matches!(
        WinTree::from_bytes(&[1, 0, 0]),
        Err(WinTreeError::TooShort { len: 3 })
    ));
    assert!(matches!(
        WinTree::from_bytes(&[0, 0, 0, 0, 0, 0]),
        Err(WinTreeError::NoNodes)
    ));
    let r = WinTree::from_bytes(&[5, 0, 0, 0x40, 0, 0]);
    assert!(matches!(
        r,
        Err(WinTreeError::Truncated {
            expected: 30,
            actual: 6
        })
    ));
    let e = WinTree::from_bytes(&[1, 0, 0, 0x40, 0, 0]).err().unwrap();
    assert!(e.to_string().contains("node 0"), "{e}");
}

/// A file read into memory (as `serve` opens one) reads the same after
/// another process truncates it in place; mapped, that read would raise
/// SIGBUS.
#[test]
fn a_file_read_into_memory_survives_its_truncation() {
    let (_, w) = small();
    let dir = std::env::temp_dir().join(format!("ap-wt-read-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.tree");
    std::fs::write(&path, &w.bytes).unwrap();
    let t = WinTree::open_reading_up_to(&path, 1 << 20).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    assert_eq!(t.bytes(), &w.bytes[..]);
    assert_eq!(t.size(0).unwrap(), Some(5));
    assert_eq!(t.follow_uci(["e2e3", "d7d5", "g1f3"]).unwrap(), Some(3));
    // Over the limit it is mapped.
    std::fs::write(&path, &w.bytes).unwrap();
    assert!(WinTree::open_reading_up_to(&path, 4).is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_size_table_lists_the_shallowest_nodes_within_its_budget() {
    // A chain of 200 positions: the walk from depth d costs 200 - d, so
    // the budget of 32 walks (6,400) is crossed by the entry at depth 34
    // (200 + 199 + ... + 166 = 6,405), which is still written.
    let mut dag = ProofDag::new();
    let nodes: Vec<usize> = (0..200).map(|_| dag.add_node()).collect();
    for w in nodes.windows(2) {
        dag.add_edge(w[0], mc("e2e3"), w[1]);
    }
    let w = write_tree(&dag, nodes[0], &[], &WriteOptions::default()).unwrap();
    assert_eq!(SIZE_TABLE_WALKS, 32);
    let want: Vec<(u32, i32)> = (0..35).map(|d| (d, 200 - d as i32)).collect();
    assert_eq!(w.sizes, want);
    let t = WinTree::from_bytes(&w.bytes).unwrap();
    assert_eq!(t.size_table_len(), 35);
    assert_eq!(t.size(0).unwrap(), Some(200));
    assert_eq!(t.size(34).unwrap(), Some(166));
    // Past the table a reader walks (None here); a leaf is 1.
    assert_eq!(t.size(35).unwrap(), None);
    assert_eq!(t.size(199).unwrap(), Some(1));
}
