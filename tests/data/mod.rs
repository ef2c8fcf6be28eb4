//! The cross-checked test data beside this file (`tests/data/`, origins in
//! its README.md), compiled in, and its readers. Each file is
//! tab-separated with `#` comment lines and one header row.

/// `perft.tsv`: perft counts of 36 positions.
pub const PERFT: &str = include_str!("perft.tsv");
/// `startpos_divide6.tsv`: perft 6 from the start, by first move.
pub const STARTPOS_DIVIDE6: &str = include_str!("startpos_divide6.tsv");
/// `outcomes.tsv`: game-end and dead-position cases.
pub const OUTCOMES: &str = include_str!("outcomes.tsv");
/// `games.tsv`: 100 real games and their final positions.
pub const GAMES: &str = include_str!("games.tsv");

/// The data rows of a file, split at tabs, after its header row `header`
/// (checked, so a file whose columns moved fails loudly).
pub fn rows<'a>(text: &'a str, header: &str) -> Vec<Vec<&'a str>> {
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    assert_eq!(lines.next(), Some(header), "header row");
    let columns = header.split('\t').count();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(cols.len(), columns, "{l:?}");
            cols
        })
        .collect()
}

/// One row of `perft.tsv`.
pub struct PerftLine {
    /// The position's name.
    pub name: &'static str,
    /// The position's FEN, clocks included.
    pub fen: &'static str,
    /// The depth in plies.
    pub depth: u32,
    /// Leaf nodes at that depth.
    pub nodes: u64,
}

/// Every row of `perft.tsv`, in file order.
pub fn perft_lines() -> Vec<PerftLine> {
    rows(PERFT, "name\tfen\tdepth\tnodes\tagreed_by")
        .into_iter()
        .map(|c| PerftLine {
            name: c[0],
            fen: c[1],
            depth: c[2].parse().unwrap(),
            nodes: c[3].parse().unwrap(),
        })
        .collect()
}

/// The 36 cross-check positions of `perft.tsv` as `(name, FEN)`, in file
/// order.
pub fn crosscheck_positions() -> Vec<(&'static str, &'static str)> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for l in perft_lines() {
        if out.last() != Some(&(l.name, l.fen)) {
            assert!(
                out.iter().all(|&(n, _)| n != l.name),
                "{}: rows apart",
                l.name
            );
            out.push((l.name, l.fen));
        }
    }
    out
}
