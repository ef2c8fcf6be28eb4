//! The current path of the search and the repetitions on it.

#[derive(Clone, Copy)]
pub(in crate::search) struct PathEntry {
    z: u64,
    irrev_start: u32,
}

/// The Zobrist hashes of the current path, each with the index where its
/// repetition window starts (the last irreversible move).
pub(in crate::search) struct Path(pub(super) Vec<PathEntry>);

impl Path {
    /// Starts a path at a root with Zobrist hash `z`.
    pub(in crate::search) fn reset(&mut self, z: u64) {
        self.0.clear();
        self.0.push(PathEntry { z, irrev_start: 0 });
    }

    /// Number of positions on the path.
    #[inline]
    pub(in crate::search) fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether a position with Zobrist hash `z`, about to be pushed on the
    /// path after a reversible move, repeats a position of the path.
    #[inline]
    pub(in crate::search) fn repeats(&self, z: u64) -> bool {
        let len = self.0.len();
        let start = self.0[len - 1].irrev_start as usize;
        let mut i = len as isize - 2;
        while i >= start as isize {
            if self.0[i as usize].z == z {
                return true;
            }
            i -= 2;
        }
        false
    }

    /// Pushes a position reached by an irreversible move or not.
    #[inline]
    pub(in crate::search) fn push(&mut self, z: u64, irr: bool) {
        let len = self.0.len();
        let irrev_start = if irr {
            len as u32
        } else {
            self.0[len - 1].irrev_start
        };
        self.0.push(PathEntry { z, irrev_start });
    }

    /// The path's entries, for another search thread's [`Path::set_entries`].
    pub(in crate::search) fn entries(&self) -> Vec<PathEntry> {
        self.0.clone()
    }

    /// Makes the path the one [`Path::entries`] returned.
    pub(in crate::search) fn set_entries(&mut self, entries: &[PathEntry]) {
        self.0.clear();
        self.0.extend_from_slice(entries);
    }

    /// Pops the top position.
    #[inline]
    pub(in crate::search) fn pop(&mut self) {
        self.0.pop();
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::{Color, Position};
    use crate::search::{Config, Prover};

    #[test]
    fn repetitions_are_seen_back_to_the_last_irreversible_move() {
        let mut p = Prover::new(Config::default(), Color::White, None).unwrap();
        let start = Position::startpos();
        let mut walk = |line: &[&str]| {
            let mut pos = start;
            let path = &mut p.search.path;
            path.reset(pos.zobrist());
            let mut last = false;
            for (i, s) in line.iter().enumerate() {
                let m = pos.parse_move(s).unwrap();
                let next = pos.play(m);
                if i + 1 == line.len() {
                    last = !m.is_irreversible() && path.repeats(next.zobrist());
                } else {
                    path.push(next.zobrist(), m.is_irreversible());
                }
                pos = next;
            }
            last
        };
        assert!(walk(&["Nf3", "Nf6", "Ng1", "Ng8"]));
        assert!(!walk(&["Nf3", "Nf6", "Ng1", "Nc6"]));
        // The window starts at 1.e3: the position right after it repeats.
        assert!(walk(&["e3", "Nc6", "Nf3", "Nb8", "Ng1"]));
        assert!(!walk(&["e3", "Nc6", "Nf3", "Nb8"]));
    }
}
