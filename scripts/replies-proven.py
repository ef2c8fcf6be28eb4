#!/usr/bin/env python3
"""How far a store's proof of a line has got, two plies down.

For every move at the line's position: whether the store proves a win for
WINNER after it (the stored proof certified by `antiproof verify --db`),
and if not, how many of the next moves the store proves. WINNER is the
side to move at the line (`--winner` for the other). So for 1.h3 (Black
wins): each Black reply, proven or with how many of White's answers to it
proven. Read-only: it may run while `prove` writes the store.

    scripts/replies-proven.py DB [--winner white|black] MOVES...
    ANTIPROOF_BIN=/path/to/antiproof scripts/replies-proven.py /tmp/h3.redb h3

With --proven-lines (first), only the lines of the moves proven are
printed, one a line in SAN, for scripts/make-proofs.sh --db:

    mapfile -t lines < <(scripts/replies-proven.py --proven-lines DB --winner black c3 e6)
    scripts/make-proofs.sh --db DB "${lines[@]}"
"""
import json
import os
import subprocess
import sys

def binary():
    """The binary, as scripts/release-bin.sh finds it ($ANTIPROOF_BIN, else
    the release build wherever cargo puts it); its error stops the script."""
    helper = os.path.join(os.path.dirname(os.path.abspath(__file__)), "release-bin.sh")
    found = subprocess.run([helper], stdout=subprocess.PIPE, text=True)
    if found.returncode != 0:
        sys.exit(found.returncode)
    return found.stdout.strip()


BIN = binary()


def run(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True)


def fen_of(db, line):
    out = run("verify", "--db", db, "--json", *line).stdout
    try:
        return json.loads(out)["root_fen"]
    except (ValueError, KeyError):
        pass
    for row in run("browse", "--db", db, *line).stdout.splitlines():
        if row.startswith("FEN:"):
            return row.split(None, 1)[1]
    sys.exit(f"cannot find the position after {' '.join(line)}")


def moves_of(fen):
    out = run("perft", "--fen", fen, "--divide", "1").stdout
    return [r.split(":")[0] for r in out.splitlines() if ":" in r and " " not in r.split(":")[0]]


def certified(db, line, winner):
    """The checker's report when the store proves the line for winner."""
    out = run("verify", "--db", db, "--json", *line).stdout
    try:
        v = json.loads(out)
    except ValueError:
        return None
    ok = v.get("verdict") == "certified" and v.get("winner") == winner
    return v if ok else None


def proven(db, line, winner):
    return certified(db, line, winner) is not None


def san_line(report):
    """The report's root line in SAN without move numbers."""
    return " ".join(t for t in report["root_line"].split() if not t.rstrip(".").isdigit())


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    lines_only = sys.argv[1] == "--proven-lines"
    if lines_only:
        del sys.argv[1]
        if len(sys.argv) < 3:
            sys.exit(__doc__)
    db, line = sys.argv[1], sys.argv[2:]
    winner = None
    if line[:1] == ["--winner"] and len(line) > 1:
        winner, line = line[1], line[2:]
    fen = fen_of(db, line)
    if winner is None:
        winner = "white" if fen.split()[1] == "w" else "black"
    replies = moves_of(fen)
    if lines_only:
        for r in replies:
            report = certified(db, line + [r], winner)
            if report is not None:
                print(san_line(report))
        return
    done = 0
    rows = []
    for r in replies:
        after = line + [r]
        if proven(db, after, winner):
            done += 1
            rows.append((r, "proven", ""))
            continue
        answers = moves_of(fen_of(db, after))
        won = [a for a in answers if proven(db, after + [a], winner)]
        rows.append((r, "open", f"{len(won)} of {len(answers)} next moves proven"))
    print(f"{' '.join(line)}: {winner} to win; {done} of {len(replies)} moves proven")
    for r, state, note in rows:
        print(f"  {r:6} {state:7} {note}")


if __name__ == "__main__":
    main()
