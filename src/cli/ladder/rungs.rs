//! The ladder benchmark (docs/ladder.md): lines of growing difficulty,
//! each proven in a child process (`antiproof prove --json`, for a clean
//! peak-memory figure) with a fresh store in a temporary directory, next to
//! the anchor solver's figures. The command line prints the rows
//! (`antiproof prove --ladder`).

use std::io;
use std::path::PathBuf;
use std::process::Command;
use std::str::FromStr;

/// One rung of docs/ladder.md with the anchor solver's figures: time
/// and nodes from its first table, proof positions from its re-measured
/// one (the only one with rungs 8 and 10).
pub struct Rung {
    /// The line, SAN moves separated by spaces.
    pub line: &'static str,
    /// The anchor's time in seconds.
    pub anchor_s: Option<f64>,
    /// The anchor's node count.
    pub anchor_nodes: Option<f64>,
    /// The anchor's proof size in positions.
    pub anchor_proof: Option<u64>,
}

/// The rungs, numbered from 1: docs/ladder.md's, compiled in (checked
/// against that file by a unit test).
pub const LADDER: &[Rung] = &[
    Rung {
        line: "e3 d5",
        anchor_s: Some(0.003),
        anchor_nodes: Some(817.0),
        anchor_proof: Some(33),
    },
    Rung {
        line: "e3 d6",
        anchor_s: Some(0.005),
        anchor_nodes: Some(2011.0),
        anchor_proof: Some(33),
    },
    Rung {
        line: "e4",
        anchor_s: Some(0.023),
        anchor_nodes: Some(7655.0),
        anchor_proof: Some(242),
    },
    Rung {
        line: "d3",
        anchor_s: Some(0.022),
        anchor_nodes: Some(7923.0),
        anchor_proof: Some(223),
    },
    Rung {
        line: "d4",
        anchor_s: Some(0.031),
        anchor_nodes: Some(10284.0),
        anchor_proof: Some(90),
    },
    Rung {
        line: "e3 Na6",
        anchor_s: Some(0.83),
        anchor_nodes: Some(618_933.0),
        anchor_proof: Some(3309),
    },
    Rung {
        line: "e3 g6",
        anchor_s: Some(3.5),
        anchor_nodes: Some(4_076_330.0),
        anchor_proof: Some(4489),
    },
    Rung {
        line: "e3 e5",
        anchor_s: Some(22.7),
        anchor_nodes: Some(21.5e6),
        anchor_proof: Some(44_599),
    },
    Rung {
        line: "Nc3",
        anchor_s: Some(35.0),
        anchor_nodes: Some(44.0e6),
        anchor_proof: Some(57_072),
    },
    Rung {
        line: "e3 f5",
        anchor_s: Some(141.0),
        anchor_nodes: Some(106.0e6),
        anchor_proof: Some(89_563),
    },
    Rung {
        line: "Nf3",
        anchor_s: None,
        anchor_nodes: None,
        anchor_proof: None,
    },
    Rung {
        line: "f4",
        anchor_s: None,
        anchor_nodes: None,
        anchor_proof: None,
    },
    Rung {
        line: "h4",
        anchor_s: None,
        anchor_nodes: None,
        anchor_proof: None,
    },
];

/// A selection of rungs such as `1-10` or `1,3,6-8` (numbers from 1 to
/// the number of rungs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rungs(pub Vec<u32>);

impl FromStr for Rungs {
    type Err = String;
    fn from_str(s: &str) -> Result<Rungs, String> {
        let bad = || {
            format!(
                "cannot read rungs {s:?}: give rungs from 1 to {} such as 1-10 or 1,3,6-8",
                LADDER.len()
            )
        };
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (a, b) = match part.split_once('-') {
                Some((a, b)) => (
                    a.trim().parse().map_err(|_| bad())?,
                    b.trim().parse().map_err(|_| bad())?,
                ),
                None => {
                    let a: u32 = part.parse().map_err(|_| bad())?;
                    (a, a)
                }
            };
            if a == 0 || b < a || b as usize > LADDER.len() {
                return Err(bad());
            }
            out.extend(a..=b);
        }
        if out.is_empty() {
            return Err(bad());
        }
        Ok(Rungs(out))
    }
}

/// The figures of one proven (or stopped) rung, from the child's JSON.
#[derive(Clone, Debug)]
pub struct Figures {
    /// The child's exit status (`None`: killed by a signal).
    pub code: Option<i32>,
    /// proven, disproven or stopped.
    pub result: String,
    /// Wall-clock seconds.
    pub time_s: f64,
    /// CPU seconds.
    pub cpu_s: f64,
    /// Nodes expanded.
    pub nodes: f64,
    /// Nodes a second.
    pub nodes_per_second: f64,
    /// Distinct positions of the proof.
    pub proof_positions: f64,
    /// Proof depth in plies.
    pub proof_depth: f64,
    /// Peak resident memory in bytes.
    pub peak_memory_bytes: f64,
    /// Size of the store file in bytes.
    pub store_bytes: f64,
}

/// A ladder run: the antiproof binary, a temporary directory for the
/// stores (removed on drop), and the `prove` options passed to each rung.
pub struct Ladder {
    exe: PathBuf,
    dir: PathBuf,
    options: Vec<String>,
}

impl Ladder {
    /// A run whose rungs get the `prove` options `options` (such as
    /// `--memory 1G`).
    pub fn new(options: Vec<String>) -> io::Result<Ladder> {
        let exe = std::env::current_exe()
            .map_err(|e| io::Error::new(e.kind(), format!("finding the antiproof binary: {e}")))?;
        let dir = std::env::temp_dir().join(format!("antiproof-ladder-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| io::Error::new(e.kind(), format!("creating {}: {e}", dir.display())))?;
        Ok(Ladder { exe, dir, options })
    }

    /// Proves rung `n` (from 1) in a child process with a fresh store.
    /// `Ok(Err(stderr))`: the child printed no JSON summary.
    pub fn run(&self, n: u32) -> io::Result<Result<Figures, String>> {
        self.run_with(n, &self.options)
    }

    /// As [`Ladder::run`], with the `prove` options `options` instead of
    /// the run's (a baseline under other rules).
    pub fn run_with(&self, n: u32, options: &[String]) -> io::Result<Result<Figures, String>> {
        let rung = &LADDER[n as usize - 1];
        let db = self.dir.join(format!("rung{n}.redb"));
        let _ = std::fs::remove_file(&db);
        let o = Command::new(&self.exe)
            .arg("prove")
            .arg("--json")
            .arg("--db")
            .arg(&db)
            .args(options)
            .args(rung.line.split_whitespace())
            .output()
            .map_err(|e| io::Error::new(e.kind(), format!("running a ladder rung: {e}")))?;
        let _ = std::fs::remove_file(&db);
        let v: serde_json::Value = match serde_json::from_slice(&o.stdout) {
            Ok(v) => v,
            Err(_) => return Ok(Err(String::from_utf8_lossy(&o.stderr).trim().to_string())),
        };
        let f = |k: &str| v[k].as_f64().unwrap_or(0.0);
        Ok(Ok(Figures {
            code: o.status.code(),
            result: v["result"].as_str().unwrap_or("?").to_string(),
            time_s: f("time_s"),
            cpu_s: f("cpu_s"),
            nodes: f("nodes"),
            nodes_per_second: f("nodes_per_second"),
            proof_positions: f("proof_positions"),
            proof_depth: f("proof_depth"),
            peak_memory_bytes: f("peak_memory_bytes"),
            store_bytes: f("store_bytes"),
        }))
    }
}

impl Drop for Ladder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rungs_parse() {
        assert_eq!("1-3,5".parse::<Rungs>().unwrap().0, vec![1, 2, 3, 5]);
        assert!("0-3".parse::<Rungs>().is_err());
        assert!(
            "1-14"
                .parse::<Rungs>()
                .unwrap_err()
                .contains("from 1 to 13")
        );
        assert!("".parse::<Rungs>().is_err());
    }

    /// The rows of the markdown table of docs/ladder.md whose header row
    /// is `header`, as cells, keyed by rung number.
    fn table(doc: &str, header: &str) -> Vec<(u32, Vec<String>)> {
        let rows = doc.lines().skip_while(|l| *l != header).skip(2);
        let mut out = Vec::new();
        for l in rows.take_while(|l| l.starts_with('|')) {
            let cells: Vec<String> = l
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect();
            if let Ok(n) = cells[0].parse() {
                out.push((n, cells));
            }
        }
        assert!(!out.is_empty(), "no table {header:?} in docs/ladder.md");
        out
    }

    /// A figure as the doc writes it: `4,076,330`, `0.83` or `21.5 M`.
    fn figure(cell: &str) -> Option<f64> {
        let cell = cell.replace(',', "");
        match cell.strip_suffix(" M") {
            Some(m) => m.parse::<f64>().ok().map(|m| m * 1e6),
            None => cell.parse().ok(),
        }
    }

    #[test]
    fn the_rungs_are_those_of_docs_ladder_md() {
        let doc = include_str!("../../../docs/ladder.md");
        let rungs = table(doc, "| rung | line | winner | known first winning move |");
        let first = table(
            doc,
            "| rung | line | time s | tree nodes | proof positions | peak memory |",
        );
        let again = table(
            doc,
            "| rung | line | tree nodes | proof positions | peak memory | time s |",
        );
        let cell = |t: &[(u32, Vec<String>)], n: u32, i: usize| {
            t.iter()
                .find(|(m, _)| *m == n)
                .and_then(|(_, c)| figure(&c[i]))
        };
        for (i, rung) in LADDER.iter().enumerate() {
            let n = i as u32 + 1;
            let (_, cells) = rungs.iter().find(|(m, _)| *m == n).expect("rung");
            // `1.e3 d5` -> `e3 d5`.
            let line = cells[1].strip_prefix("1.").expect("a line from move 1");
            assert_eq!(rung.line, line, "rung {n}");
            assert_eq!(rung.anchor_s, cell(&first, n, 2), "rung {n} time");
            assert_eq!(rung.anchor_nodes, cell(&first, n, 3), "rung {n} nodes");
            let proof = cell(&again, n, 3).or(cell(&first, n, 4));
            assert_eq!(rung.anchor_proof.map(|p| p as f64), proof, "rung {n} proof");
        }
        // The rungs after the last are several lines each.
        for (n, c) in &rungs {
            assert!(
                *n as usize <= LADDER.len() || c[1].contains(','),
                "rung {n} of docs/ladder.md is one line, missing from LADDER"
            );
        }
    }
}
