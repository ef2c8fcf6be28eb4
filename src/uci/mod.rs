//! `antiproof uci`: a UCI engine that plays a proof, so that a chess GUI
//! (Cute Chess, python-chess's `chess.engine`, ...) can follow it move by
//! move, as AntichessProofEngine did for Watkins' published tree.
//!
//! * [`play`]: what to play at a position ([`Proofs::choose`]): where the
//!   proof covers it, the winner's move (for the loser, the reply with the
//!   largest subtree); else a move toward a proof's root, the endgame
//!   tables' best move, or the first legal move in UCI order.
//! * [`index`]: the node a line reaches in a win-tree file, the node of a
//!   position reached any other way (a FEN, a transposition), and the
//!   proof's longest line below a node.
//! * [`Engine`]: the protocol. `uci`, `isready`, `ucinewgame`, `setoption
//!   name UCI_Variant value antichess`, `position startpos|fen FEN [moves
//!   ...]`, `go [...]` (answered at once; `go infinite` and `go ponder`
//!   hold the `bestmove` until `stop` or `ponderhit`), `stop`, `quit`.
//!   Unknown words are skipped as the protocol asks (`joho debug on` is
//!   `debug on`), an illegal move or a bad FEN in `position` is reported
//!   with `info string` and never ends the engine, nor does end of input
//!   (it stops) or a closed output (it stops quietly).
//!
//! What `go` reports (see `docs/uci.md`): in the proof, `info depth P
//! score mate K nodes N pv MOVE`, where N is the number of positions of the
//! proof below the move, P the plies of the proof's longest line from here
//! (the move included) and K = ceil(P / 2) moves of the side to move (a
//! negative K for the loser), then an `info string` in words naming the
//! file, the winner and the rule set; off the proof an `info string` that
//! says so and what is played instead.

pub mod index;
pub mod play;

pub use play::{Choice, Proofs, Standing};

use crate::rules::{Move, Position, UciMove};
use crate::tables::Value;
use crate::web::view::{group, name};
use std::io::{self, BufRead, Write};

/// The longest input line read; the rest of a longer one is dropped and
/// the line ignored (a `position` of 100,000 moves is 500 KB).
pub const MAX_LINE: usize = 1 << 20;

/// The variant played (the `UCI_Variant` option's only value).
pub const VARIANT: &str = "antichess";

/// The commands of the protocol; any other word is skipped.
const COMMANDS: &[&str] = &[
    "uci",
    "debug",
    "isready",
    "setoption",
    "register",
    "ucinewgame",
    "position",
    "go",
    "stop",
    "ponderhit",
    "quit",
];

/// Where the game stands: the position and, when known, the line to it
/// from the standard start position.
#[derive(Clone, Debug)]
struct Setup {
    pos: Position,
    line: Option<Vec<Move>>,
}

impl Setup {
    fn start() -> Setup {
        Setup {
            pos: Position::startpos(),
            line: Some(Vec::new()),
        }
    }
}

/// A UCI engine over a set of proofs.
pub struct Engine<'a> {
    proofs: &'a Proofs,
    /// Lines said (as `info string`) after `id`: the proofs and the rule
    /// set.
    about: Vec<String>,
    /// The position to play from (`None` after a bad `position`).
    setup: Option<Setup>,
    /// A `bestmove` held back by `go infinite` or `go ponder`.
    pending: Option<String>,
    /// Whether the index's state was reported.
    index_told: bool,
}

impl<'a> Engine<'a> {
    /// An engine playing `proofs`; `about` is said after `id` on `uci`.
    pub fn new(proofs: &'a Proofs, about: Vec<String>) -> Engine<'a> {
        Engine {
            proofs,
            about,
            setup: Some(Setup::start()),
            pending: None,
            index_told: false,
        }
    }

    /// Reads commands from `input` until `quit` or end of input, answering
    /// on `output` (flushed after every command). An I/O error on the
    /// output (a closed pipe) ends it with that error.
    pub fn run(&mut self, mut input: impl BufRead, output: &mut impl Write) -> io::Result<()> {
        let mut buf = Vec::new();
        while let Some(too_long) = read_line(&mut input, &mut buf)? {
            if too_long {
                writeln!(
                    output,
                    "info string input line of more than {MAX_LINE} bytes ignored"
                )?;
                output.flush()?;
                continue;
            }
            let line = String::from_utf8_lossy(&buf);
            let go_on = self.command(&line, output)?;
            output.flush()?;
            if !go_on {
                break;
            }
        }
        Ok(())
    }

    /// Answers one line; `false` on `quit`.
    fn command(&mut self, line: &str, out: &mut impl Write) -> io::Result<bool> {
        let mut words = line
            .split_whitespace()
            .skip_while(|w| !COMMANDS.contains(w));
        let Some(cmd) = words.next() else {
            return Ok(true);
        };
        let rest: Vec<&str> = words.collect();
        if matches!(cmd, "go" | "position" | "ucinewgame") {
            // A new search or position ends a held one.
            self.release(out)?;
        }
        match cmd {
            "uci" => {
                writeln!(out, "id name antiproof {}", env!("CARGO_PKG_VERSION"))?;
                writeln!(out, "id author the antiproof developers")?;
                writeln!(
                    out,
                    "option name UCI_Variant type combo default {VARIANT} var {VARIANT}"
                )?;
                for a in &self.about {
                    writeln!(out, "info string {a}")?;
                }
                writeln!(out, "uciok")?;
            }
            "isready" => writeln!(out, "readyok")?,
            "ucinewgame" => self.setup = Some(Setup::start()),
            "setoption" => self.setoption(&rest, out)?,
            "position" => self.position(&rest, out)?,
            "go" => self.go(&rest, out)?,
            "stop" | "ponderhit" => self.release(out)?,
            "quit" => return Ok(false),
            // debug, register: nothing to do.
            _ => {}
        }
        Ok(true)
    }

    /// Sends a held `bestmove`.
    fn release(&mut self, out: &mut impl Write) -> io::Result<()> {
        if let Some(b) = self.pending.take() {
            writeln!(out, "{b}")?;
        }
        Ok(())
    }

    fn setoption(&mut self, rest: &[&str], out: &mut impl Write) -> io::Result<()> {
        // setoption name <id...> [value <x...>]
        let words: Vec<&str> = rest.iter().copied().skip_while(|w| *w != "name").collect();
        let split = words.iter().position(|w| *w == "value");
        let id = words[1.min(words.len())..split.unwrap_or(words.len())].join(" ");
        let value = split.map(|i| words[i + 1..].join(" ")).unwrap_or_default();
        if id.eq_ignore_ascii_case("UCI_Variant") {
            if !value.eq_ignore_ascii_case(VARIANT) {
                writeln!(
                    out,
                    "info string only {VARIANT} is played: UCI_Variant stays {VARIANT} (not {value:?})"
                )?;
            }
        } else {
            writeln!(out, "info string no option {id:?}: ignored")?;
        }
        Ok(())
    }

    /// `position startpos|fen FEN [moves M...]`: an illegal move is
    /// reported and the position is the one before it; a bad FEN is
    /// reported and leaves no position (`go` then says so).
    fn position(&mut self, rest: &[&str], out: &mut impl Write) -> io::Result<()> {
        let moves_at = rest.iter().position(|w| *w == "moves");
        let (base, moves) = match moves_at {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &[][..]),
        };
        let mut setup = match base.first() {
            Some(&"startpos") => Setup::start(),
            Some(&"fen") => {
                let fen = base[1..].join(" ");
                match Position::from_fen(&fen) {
                    Ok(pos) => {
                        // The start position by FEN (as python-chess sends
                        // every variant game) has its line known.
                        let start = pos.pack() == Position::startpos().pack();
                        Setup {
                            pos,
                            line: start.then(Vec::new),
                        }
                    }
                    Err(e) => {
                        writeln!(out, "info string bad FEN {fen:?}: {e}; no position set")?;
                        self.setup = None;
                        return Ok(());
                    }
                }
            }
            _ => {
                writeln!(
                    out,
                    "info string position needs startpos or fen FEN; no position set"
                )?;
                self.setup = None;
                return Ok(());
            }
        };
        for (i, w) in moves.iter().enumerate() {
            let m = UciMove::parse(w).and_then(|u| setup.pos.find_uci(&u));
            let Some(m) = m else {
                writeln!(
                    out,
                    "info string illegal move {w:?} at move {} of the list in {}; the position is the one before it",
                    i + 1,
                    setup.pos.to_fen()
                )?;
                break;
            };
            setup.pos.play_unchecked(m);
            if let Some(l) = &mut setup.line {
                l.push(m);
            }
        }
        self.setup = Some(setup);
        Ok(())
    }

    fn go(&mut self, rest: &[&str], out: &mut impl Write) -> io::Result<()> {
        let hold = rest.iter().any(|w| *w == "infinite" || *w == "ponder");
        let Some(setup) = &self.setup else {
            writeln!(
                out,
                "info string no position: the last position command was not valid"
            )?;
            return self.bestmove(None, hold, out);
        };
        let choice = match self.proofs.choose(&setup.pos, setup.line.as_deref()) {
            Ok(c) => c,
            Err(e) => {
                writeln!(out, "info string cannot read the proof: {e}")?;
                let mut legal: Vec<Move> = setup.pos.legal_moves().iter().copied().collect();
                legal.sort_by_key(|m| m.uci().to_string());
                Choice {
                    mv: legal.first().copied(),
                    standing: Standing::Off,
                }
            }
        };
        if !self.index_told && self.proofs.index_built() {
            self.index_told = true;
            match self.proofs.index() {
                Ok(i) => writeln!(
                    out,
                    "info string position index built: {} positions",
                    group(i.len() as u64)
                )?,
                Err(e) => writeln!(out, "info string position index: {e}")?,
            }
        }
        for l in self.report(&setup.pos, &choice) {
            writeln!(out, "{l}")?;
        }
        self.bestmove(choice.mv, hold, out)
    }

    fn bestmove(&mut self, mv: Option<Move>, hold: bool, out: &mut impl Write) -> io::Result<()> {
        let b = format!(
            "bestmove {}",
            mv.map_or("0000".to_string(), |m| m.uci().to_string())
        );
        if hold {
            self.pending = Some(b);
        } else {
            writeln!(out, "{b}")?;
        }
        Ok(())
    }

    /// The `info` lines for a choice.
    fn report(&self, pos: &Position, c: &Choice) -> Vec<String> {
        let rules = self.proofs.rules().describe();
        let mv = c.mv.map_or("no move".to_string(), |m| m.uci().to_string());
        let turn = name(pos.turn());
        let mut lines = Vec::new();
        match &c.standing {
            Standing::GameOver(o) => {
                lines.push(format!("info string game over under {rules}: {o}"));
            }
            Standing::InProof {
                winner,
                source,
                nodes,
                plies,
                replies,
                by_position,
            } => {
                let loser = *replies > 0;
                let mut score = match plies {
                    Some(p) => {
                        let k = p.div_ceil(2);
                        format!(
                            "info depth {p} score mate {}{k}",
                            if loser { "-" } else { "" }
                        )
                    }
                    None => "info".to_string(),
                };
                score.push_str(&format!(" nodes {nodes} pv {mv}"));
                lines.push(score);
                let who = winner.map_or("the winner (not known)".to_string(), |w| {
                    format!("{} wins", name(w))
                });
                let mut line = plies.map_or(String::new(), |p| {
                    format!(", the proof's longest line from here {p} plies")
                });
                if *by_position && self.proofs.rules().fifty_move && pos.halfmoves() > 0 {
                    line.push_str(&format!(
                        "; found by position: whether the proof holds at this half-move clock ({}) is not checked",
                        pos.halfmoves()
                    ));
                }
                let answered = match replies {
                    1 => "its one move answered".to_string(),
                    n => format!("all {n} replies answered"),
                };
                lines.push(if loser {
                    format!(
                        "info string in the proof ({source}): {who} under {rules}; {turn} to move, {answered}; {mv} has the largest subtree ({} positions{line})",
                        group(*nodes)
                    )
                } else {
                    format!(
                        "info string in the proof ({source}): {who} under {rules}; {mv} is the winner's move ({} positions below it{line})",
                        group(*nodes)
                    )
                });
            }
            Standing::TableLeaf { winner, value } => {
                let who = winner.map_or("the winner (not known)".to_string(), |w| {
                    format!("{} wins", name(w))
                });
                if let Some(v) = value {
                    lines.push(table_score(*v));
                }
                lines.push(format!(
                    "info string in the proof: {who} under {rules}, by the endgame tables from this leaf; {}",
                    match value {
                        Some(v) => format!("the tables: {v} for {turn}; playing {mv}"),
                        None => format!(
                            "no table for it given (--tables): playing the first legal move, {mv}"
                        ),
                    }
                ));
            }
            Standing::Before { nodes } => lines.push(format!(
                "info string not in the proof yet: {mv} leads into a proof ({} positions)",
                group(*nodes)
            )),
            Standing::Table { value } => {
                lines.push(table_score(*value));
                lines.push(format!(
                    "info string not in the proof: the endgame tables give {value} for {turn} under {rules}; playing {mv}"
                ));
            }
            Standing::Off => lines.push(format!(
                "info string not in the proof: playing the first legal move in UCI order, {mv}"
            )),
        }
        lines
    }
}

/// The `info` score line of an endgame-table value (distances in plies).
fn table_score(v: Value) -> String {
    match v {
        Value::Win(n) => format!("info depth {n} score mate {}", u32::from(n).div_ceil(2)),
        Value::Loss(n) => format!("info depth {n} score mate -{}", u32::from(n).div_ceil(2)),
        Value::Draw => "info depth 1 score cp 0".to_string(),
    }
}

/// Reads one line (without its end) into `buf`: `None` at end of input,
/// `Some(true)` for a line longer than [`MAX_LINE`] (its bytes past that
/// dropped).
fn read_line(input: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<Option<bool>> {
    buf.clear();
    let mut any = false;
    let mut too_long = false;
    loop {
        let avail = match input.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok(any.then_some(too_long));
        }
        any = true;
        let (chunk, done) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (&avail[..i], Some(i + 1)),
            None => (avail, None),
        };
        let room = MAX_LINE.saturating_sub(buf.len());
        if chunk.len() > room {
            too_long = true;
        }
        buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let used = done.unwrap_or(avail.len());
        input.consume(used);
        if done.is_some() {
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            return Ok(Some(too_long));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_whole_cut_when_too_long_and_to_the_end() {
        let long = vec![b'x'; MAX_LINE + 10];
        let mut input = Vec::new();
        input.extend_from_slice(b"uci\r\n");
        input.extend_from_slice(&long);
        input.extend_from_slice(b"\nisready");
        let mut r = io::BufReader::with_capacity(7, &input[..]);
        let mut buf = Vec::new();
        assert_eq!(read_line(&mut r, &mut buf).unwrap(), Some(false));
        assert_eq!(buf, b"uci");
        assert_eq!(read_line(&mut r, &mut buf).unwrap(), Some(true));
        assert_eq!(buf.len(), MAX_LINE);
        assert_eq!(read_line(&mut r, &mut buf).unwrap(), Some(false));
        assert_eq!(buf, b"isready");
        assert_eq!(read_line(&mut r, &mut buf).unwrap(), None);
    }

    #[test]
    fn table_scores_count_the_movers_moves() {
        assert_eq!(table_score(Value::Win(3)), "info depth 3 score mate 2");
        assert_eq!(table_score(Value::Loss(4)), "info depth 4 score mate -2");
        assert_eq!(table_score(Value::Draw), "info depth 1 score cp 0");
    }
}
