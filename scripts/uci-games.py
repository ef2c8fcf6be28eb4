#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Games against `antiproof uci` with python-chess's chess.engine.

python-chess (https://pypi.org/project/chess/, `pip install chess`) is a
UCI client no one here wrote, and it keeps the rules of the game itself:
chess.variant.AntichessBoard is lichess's antichess (captures compulsory,
no castling, the king an ordinary piece, a side with no move or no piece
left wins). The engine plays the proof's winner from the proof's root;
python-chess plays the defence and says who won. Every game from the root
must be won by the engine.

Defences:
  random    a legal move at random (seeded), --games games;
  largest   the reply after which the proof's subtree is largest (asked of
            the engine at each reply's position: its `nodes`), --adversarial
            games, the first without and the others with a random move now
            and then (one in five);
  longest   the reply after which the proof's longest line is longest (the
            engine's `score mate`), likewise;
  engine    the engine's own choice for the loser (the reply with the
            largest subtree), one game.
Then --leave games from the start position where Black's first move is
random: most leave the proof at once, and the engine must say so and go on
with legal moves (those games are not counted as proof games).

Usage (from the crate root):
  scripts/uci-games.py --engine target/release/antiproof --tree proofs/e3-g6.tree

Exit 0 when every game from the root is won, 1 when one is not, 2 on a
usage or set-up error.
"""

import argparse
import json
import os
import random
import sys
import time

try:
    import chess
    import chess.engine
    import chess.variant
except ImportError:
    print("uci-games.py: python-chess is needed: pip install chess", file=sys.stderr)
    sys.exit(2)


def sidecar(tree):
    """The tree's sidecar JSON (proofs/NAME.json for NAME.tree[.zst])."""
    base = tree
    for ext in (".zst", ".bz2"):
        if base.endswith(ext):
            base = base[: -len(ext)]
    if base.endswith(".tree"):
        base = base[: -len(".tree")]
    try:
        with open(base + ".json") as f:
            return json.load(f)
    except OSError:
        return {}


def board_for(rule_set):
    """python-chess's board for a rule set, when it plays it exactly."""
    if rule_set in ("international", "international+fifty", "lichess"):
        return chess.variant.AntichessBoard
    return None


def info_of(result):
    return result.info if hasattr(result, "info") else result


def engine_move(engine, board, limit):
    """The engine's move and its info (python-chess merges the info lines
    of one search: depth, score, nodes, pv and the last string)."""
    r = engine.play(board, limit, info=chess.engine.INFO_ALL)
    return r.move, r.info


def reply_value(engine, board, move, how, limit):
    """How hard `move` defends, by the engine's report at the position
    after it: the proof's subtree there (`nodes`) or its mate distance."""
    board.push(move)
    try:
        if board.is_game_over():
            return -1
        info = engine.analyse(board, limit)
        if how == "largest":
            return info.get("nodes", 0)
        score = info.get("score")
        mate = score.pov(board.turn).mate() if score is not None else None
        return mate if mate is not None else 0
    finally:
        board.pop()


def play_game(engine, board_type, root_moves, winner, defence, rng, limit, noise):
    """One game from the proof's root; returns (won, plies, why)."""
    board = board_type()
    for m in root_moves:
        board.push_uci(m)
    plies = 0
    while not board.is_game_over():
        if plies > 1000:
            return False, plies, "no end after 1000 plies"
        engine_to_move = board.turn == winner or defence == "engine"
        if engine_to_move:
            move, info = engine_move(engine, board, limit)
            if move is None:
                return False, plies, f"no move at {board.fen()}"
            said = info.get("string", "")
            if "in the proof" not in said:
                return False, plies, f"left the proof at {board.fen()}: {said}"
        else:
            legal = list(board.legal_moves)
            if defence == "random" or (noise and rng.random() < noise):
                move = rng.choice(legal)
            else:
                legal.sort(key=lambda m: m.uci())
                move = max(legal, key=lambda m: reply_value(engine, board, m, defence, limit))
        board.push(move)
        plies += 1
    outcome = board.outcome()
    if outcome is None or outcome.winner != winner:
        return False, plies, f"ended {board.result()} ({outcome}) at {board.fen()}"
    return True, plies, ""


def leave_game(engine, board_type, winner, rng, limit):
    """A game from the start position, the engine playing the proof's
    winner, the other side at random from the first move: "left" when
    the engine said it was off the proof (it then plays on with legal
    moves), "won" when the game stayed in the proof and the engine won,
    else why not."""
    board = board_type()
    left = False
    while not board.is_game_over():
        if len(board.move_stack) > 1000:
            return "no end after 1000 plies"
        if board.turn == winner:
            move, info = engine_move(engine, board, limit)
            said = info.get("string", "")
            if said.startswith("not in the proof:"):
                left = True
            elif not left and "in the proof" not in said:
                return f"unclear at {board.fen()}: {said}"
            if move is None:
                return f"no move at {board.fen()}"
        else:
            move = rng.choice(list(board.legal_moves))
        board.push(move)
    if left:
        return "left"
    outcome = board.outcome()
    if outcome is not None and outcome.winner == winner:
        return "won"
    return f"stayed in the proof and ended {board.result()} at {board.fen()}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engine", default="target/release/antiproof")
    ap.add_argument("--tree", required=True, help="the win-tree file the engine plays")
    ap.add_argument("--games", type=int, default=200, help="games with random defences")
    ap.add_argument("--adversarial", type=int, default=10, help="games for each adversarial defence")
    ap.add_argument("--leave", type=int, default=20, help="games that may leave the proof")
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args()

    side = sidecar(args.tree)
    rule_set = side.get("rule_set") or side.get("rules") or "international"
    board_type = board_for(rule_set)
    if board_type is None:
        print(f"uci-games.py: python-chess plays no board for rule set {rule_set}", file=sys.stderr)
        return 2
    winner = {"white": chess.WHITE, "black": chess.BLACK}.get(side.get("winner", ""))
    line = side.get("line", "")
    if winner is None or not line:
        print(f"uci-games.py: the sidecar of {args.tree} names no winner or line", file=sys.stderr)
        return 2
    board = board_type()
    root_moves = []
    for san in line.split():
        m = board.parse_san(san)
        root_moves.append(m.uci())
        board.push(m)

    if not os.path.exists(args.engine):
        print(f"uci-games.py: no engine at {args.engine}", file=sys.stderr)
        return 2
    engine = chess.engine.SimpleEngine.popen_uci([args.engine, "uci", "--tree", args.tree])
    limit = chess.engine.Limit(time=1.0)
    rng = random.Random(args.seed)
    failures = []
    totals = []
    t0 = time.time()
    try:
        plans = [("random", args.games, 0.0)]
        for how in ("largest", "longest"):
            plans.append((how, args.adversarial, 0.2))
        plans.append(("engine", 1, 0.0))
        for how, n, noise in plans:
            won = plies_all = 0
            t = time.time()
            for i in range(n):
                ok, plies, why = play_game(
                    engine, board_type, root_moves, winner, how, rng, limit, noise if i else 0.0
                )
                won += ok
                plies_all += plies
                if not ok:
                    failures.append(f"{how} game {i + 1}: {why}")
            totals.append((how, won, n, plies_all, time.time() - t))
        left = stayed = 0
        for i in range(args.leave):
            r = leave_game(engine, board_type, winner, rng, limit)
            if r == "left":
                left += 1
            elif r == "won":
                stayed += 1
            else:
                failures.append(f"leave game {i + 1}: {r}")
    finally:
        engine.quit()
    elapsed = time.time() - t0
    print(f"python-chess {chess.__version__}, {board_type.__name__}, rule set {rule_set}, "
          f"engine {args.engine} --tree {args.tree}")
    for how, won, n, plies, secs in totals:
        print(f"  {how:8} defence: {won} of {n} won, {plies} plies, {secs:.1f} s")
    print(f"  from the start position, random replies: {left} of {args.leave} games left the "
          f"proof (the engine said so and played on with legal moves), {stayed} stayed in it "
          f"and were won")
    random_won = totals[0][1]
    print(f"{random_won} of {args.games} won with random defences; "
          f"{sum(t[1] for t in totals)} of {sum(t[2] for t in totals)} games won in all, {elapsed:.1f} s")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
