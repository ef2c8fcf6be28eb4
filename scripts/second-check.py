#!/usr/bin/env python3
"""second-check.py: a second, independent checker of antiproof's proof certificates.

Usage (from the crate root; needs python-chess: `pip install chess`):

    scripts/second-check.py                          # every proofs/*.tree, *.tree.zst
    scripts/second-check.py proofs/e3-c6-*.tree*     # some files
    scripts/second-check.py --rules fics,joint+fifty --jobs 2 FILE...
    scripts/second-check.py --winner white /tmp/x.tree   # a file without sidecar

For every win-tree file it decides under which of the six rule sets
(international, fics, joint, and each of them +fifty) the proof holds, and
compares that with the sidecar `NAME.json` (`holds_under`; the winner is the
sidecar's `winner`). Exit status: 0 every file agrees with its sidecar, 1 some
file differs, 2 usage or I/O error or a malformed file (named on stderr).

Where it comes from. This is a second implementation written only from the
format description in docs/watkins-format.md (the project's copy of
shared/watkins-format.md, a description of Mark Watkins' win-tree layout
from public sources) and from the rules as stated in the task
that asked for it; it does not run the antiproof binary and was not ported
from its Rust code. Move generation is python-chess's
`chess.variant.AntichessBoard` (captures compulsory, the king an ordinary
piece, promotion to king, no castling), a code base unrelated to the project's
(shakmaty).

What it checks. The file: root record (u32 data0, u16 prolog length), the
prolog (legal moves from the start position to the root), nodes 1..N-1 as
(u32 data, u16 move) in depth-first pre-order, N = data0 & 0x3fffffff; an
optional size table after the nodes is ignored. Child and sibling links must
stay inside the file, go forward, and reach no slot twice (else: malformed,
exit 2). The proof: at each node of the winner exactly one child, a legal
move; at each node of the loser one child per legal move, exactly the legal
set (no missing, illegal or duplicate reply); every leaf a finished game (the
side to move has no legal move); every transposition resolves to a node of
the tree holding the same position (board, side to move, and the en-passant
square only where an en-passant capture is legal: python-chess
`_transposition_key()`) as the one reached at the pointer; and no cycle
through transpositions (a repetition is never a win). Unsolved markers (low
bits 0x3fffffff, or a move XOR-ed with 0xf000) and null moves fail the proof.
Leaves are scored per rule set (a side to move without legal move, by piece
count against the opponent: fewer or none wins everywhere; as many: wins in
international, draws in fics and joint; more: wins in international, loses in
fics, draws in joint), so a leaf where the loser is stalemated with more
pieces is a fics win. The +fifty sets additionally need every position that
is not a finished game to be reached with a halfmove clock below 100 along
every path of the proof DAG, transpositions included: the largest clock into
each node is propagated in topological order (Kahn's algorithm, which also
finds the cycles), starting from the root's clock after the prolog.

Design. One pass per file generates the legal moves of each distinct
non-transposition node once (the cost: roughly 10-30 k positions/s per core
in python-chess) and collects everything all six rule sets need; the sets
are then decided from leaf classes and the clock pass. Everything is
iterative (explicit stacks), nodes live in flat arrays, so files of millions
of nodes and lines hundreds of plies deep are fine. Failing lines are named
in SAN from the standard start position (the prolog included).
"""

import argparse
import bz2
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import time
from array import array
from collections import Counter

try:
    import chess
    import chess.variant
except ImportError:  # pragma: no cover
    sys.stderr.write("second-check: python-chess is needed: pip install chess\n")
    sys.exit(2)

RULE_SETS = ["international", "fics", "joint",
             "international+fifty", "fics+fifty", "joint+fifty"]
BASE = {r: r.split("+")[0] for r in RULE_SETS}
ALL = frozenset(RULE_SETS)
MASK30 = 0x3FFFFFFF
NULL_MOVES = (0xFEDC, 0x0EDC)
PROMO_OK = (0, 2, 3, 4, 5, 6)
PROMO_LETTER = {2: "n", 3: "b", 4: "r", 5: "q", 6: "k"}


class Malformed(Exception):
    """The file cannot be read as a win tree."""


def uci_of(code):
    code &= 0x7FFF
    to, fr, pr = code & 63, (code >> 6) & 63, (code >> 12) & 7
    return chess.SQUARE_NAMES[fr] + chess.SQUARE_NAMES[to] + PROMO_LETTER.get(pr, "" if pr == 0 else "?%d" % pr)


def enc(m):
    return (m.from_square << 6) | m.to_square | ((m.promotion or 0) << 12)


def line_text(prolog, codes):
    """SAN of prolog + codes from the start position; an illegal tail in UCI."""
    b = chess.variant.AntichessBoard()
    out = []
    for i, code in enumerate(list(prolog) + list(codes)):
        legal = {enc(m): m for m in b.generate_legal_moves()}
        m = legal.get(code & 0x7FFF)
        num = "%d." % b.fullmove_number if b.turn == chess.WHITE else ("%d..." % b.fullmove_number if i == 0 else "")
        if m is None:
            out.append((num + " " if num else "") + "%s(illegal here, uci)" % uci_of(code))
            break
        s = b.san(m)
        out.append(num + " " + s if num else s)
        b.push(m)
    return " ".join(out) if out else "(the start position)"


def read_file(path):
    try:
        if path.endswith(".zst"):
            if shutil.which("zstd"):
                p = subprocess.run(["zstd", "-dc", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                if p.returncode != 0:
                    raise OSError("zstd -dc %s: %s" % (path, p.stderr.decode(errors="replace").strip()))
                return p.stdout
            import zstandard  # noqa: the fallback when there is no zstd binary
            with open(path, "rb") as f:
                return zstandard.ZstdDecompressor().stream_reader(f).read()
        if path.endswith(".bz2"):
            with bz2.open(path, "rb") as f:
                return f.read()
        with open(path, "rb") as f:
            return f.read()
    except ImportError:
        raise OSError("%s: no zstd binary and no zstandard module" % path)


def sidecar_path(path):
    p = path
    for ext in (".zst", ".bz2"):
        if p.endswith(ext):
            p = p[: -len(ext)]
    if p.endswith(".tree"):
        p = p[: -len(".tree")]
    return p + ".json"


class Result:
    def __init__(self):
        self.failures = {}      # category -> [count, rule sets, [example texts]]
        self.notes = []

    def fail(self, cat, rules, text_fn, keep):
        f = self.failures.get(cat)
        if f is None:
            f = self.failures[cat] = [0, frozenset(rules), []]
        f[0] += 1
        if len(f[2]) < keep:
            f[2].append(text_fn())


def check_tree(buf, winner, keep=3):
    """Checks one win tree (bytes). winner: chess.WHITE/BLACK or None (inferred)."""
    if len(buf) < 6:
        raise Malformed("file of %d bytes, shorter than the 6-byte root record" % len(buf))
    data0, plen = struct.unpack_from("<IH", buf, 0)
    n = data0 & MASK30
    off = 6 + 2 * plen
    end = off + 6 * (n - 1)
    if n < 1:
        raise Malformed("data0 0x%08x gives N = 0 node slots" % data0)
    if len(buf) < end:
        raise Malformed("N = %d node slots and a %d-move prolog need %d bytes, the file has %d"
                        % (n, plen, end, len(buf)))
    res = Result()
    if (len(buf) - end) % 8:
        res.notes.append("%d bytes after the nodes are not whole (u32,i32) size-table pairs" % (len(buf) - end))
    prolog = struct.unpack_from("<%dH" % plen, buf, 6)

    # Nodes into flat arrays (root slot 0: data0, no move).
    raw = buf[off:end]
    db = bytearray(4 * (n - 1))
    mb = bytearray(2 * (n - 1))
    for i in range(4):
        db[i::4] = raw[i::6]
    mb[0::2] = raw[4::6]
    mb[1::2] = raw[5::6]
    data = array("I", struct.pack("<I", data0))
    data.frombytes(bytes(db))
    mv = array("H", [0])
    mv.frombytes(bytes(mb))
    if sys.byteorder != "little":
        data.byteswap()
        mv.byteswap()
    del raw, db, mb

    board = chess.variant.AntichessBoard()
    for i, code in enumerate(prolog):
        legal = {enc(m): m for m in board.generate_legal_moves()}
        m = legal.get(code & 0x7FFF)
        if m is None:
            raise Malformed("prolog move %d (%s, 0x%04x) is not legal after %s"
                            % (i + 1, uci_of(code), code, line_text(prolog[:i], [])))
        board.push(m)
    root_fen = board.fen()
    root_clock = board.halfmove_clock
    if winner is None:
        winner = board.turn  # refined below if the root says otherwise
        root_kids = 0
        if n > 1:
            c = 1
            while True:
                root_kids += 1
                d = data[c]
                f = d >> 30
                nx = (d & MASK30) if f < 2 else (c + 1 if f == 3 else 0)
                if nx <= c or nx >= n:
                    break
                c = nx
        legal_root = sum(1 for _ in board.generate_legal_moves())
        if root_kids != 1 or legal_root == 1:
            winner = (not board.turn) if root_kids == legal_root and legal_root != 1 else board.turn

    # Transposition targets, resolved up front (pointer chains followed).
    target_of = {}           # pointer slot -> final slot, or None when it has none
    bad_target = {}          # pointer slot -> why
    for k in range(1, n):
        d = data[k]
        if d >> 31 and (d & MASK30) != MASK30:
            seen = {k}
            t = d & MASK30
            while True:
                if t >= n:
                    bad_target[k] = "target slot %d is outside the file's %d slots" % (t, n)
                    t = None
                    break
                if t in seen:
                    bad_target[k] = "the transposition chain loops"
                    t = None
                    break
                seen.add(t)
                dt = data[t]
                if (dt & MASK30) == MASK30:
                    bad_target[k] = "target slot %d is unsolved" % t
                    t = None
                    break
                if dt >> 31:
                    t = dt & MASK30
                    continue
                break
            target_of[k] = t
    want_key = set(t for t in target_of.values() if t is not None)
    key_of = {}              # target slot -> transposition key
    ptr_key = {}             # pointer slot -> key reached at the pointer

    parent = array("i", [-1]) * n
    reached = bytearray(n)
    reached[0] = 1
    canon = bytearray(n)     # 1: a non-transposition node that was checked
    nonterminal = bytearray(n)
    e_first = array("i", [-1]) * n
    e_slot = array("i")      # edges, grouped by source in visit order
    e_zero = bytearray()
    e_cnt = array("H", [0]) * n
    leaves = Counter()       # (winner to move?, 'none'/'fewer'/'equal'/'more') -> count
    leaf_example = {}
    distinct = set()
    positions = 0
    transpositions = 0
    max_depth = 0
    depth_ok = True

    def path_codes(k):
        codes = []
        while k > 0:
            codes.append(mv[k])
            k = parent[k]
        codes.reverse()
        return codes

    def line_of(k, extra=()):
        return line_text(prolog, path_codes(k) + list(extra))

    stm_name = {chess.WHITE: "white", chess.BLACK: "black"}

    def visit(k):
        """Checks node k (board at its position); returns [(slot, move)] to descend into."""
        nonlocal positions, transpositions
        positions += 1
        canon[k] = 1
        key = board._transposition_key()
        distinct.add(hash(key))
        if k in want_key:
            key_of[k] = key
        legal = {}
        for m in board.generate_legal_moves():
            legal[enc(m)] = m
        if legal:
            nonterminal[k] = 1
        kids = []
        if (k == 0 and n > 1) or (k > 0 and (data[k] >> 30) == 1 and (data[k] & MASK30) != MASK30):
            c = k + 1
            while True:
                if c >= n:
                    raise Malformed("a child link of slot %d (%s) points to slot %d, past the last slot %d"
                                    % (k, line_of(k), c, n - 1))
                if reached[c]:
                    raise Malformed("slot %d is reached twice through child/sibling links (under %s)"
                                    % (c, line_of(k)))
                reached[c] = 1
                parent[c] = k
                kids.append(c)
                d = data[c]
                f = d >> 30
                low = d & MASK30
                if low == MASK30:   # unsolved slot; bit 30 says a sibling follows at index+1
                    nx = c + 1 if d & (1 << 30) else 0
                elif f < 2:
                    nx = low
                elif f == 3:
                    nx = c + 1
                else:
                    nx = 0
                if nx == 0:
                    break
                if nx <= c:
                    raise Malformed("slot %d (%s) names slot %d as next sibling: links must go forward"
                                    % (c, line_of(c), nx))
                c = nx
        elif k > 0 and (data[k] & MASK30) == MASK30:
            res.fail("unsolved", ALL, lambda: line_of(k), keep)

        winner_to_move = board.turn == winner
        descend = []
        seen = set()
        e_first[k] = len(e_slot)
        for c in kids:
            raw_code = mv[c]
            code = raw_code & 0x7FFF
            d = data[c]
            if raw_code in NULL_MOVES:
                res.fail("null move", ALL, lambda: line_of(k) + " then a null move", keep)
                continue
            if (code >> 12) not in PROMO_OK:
                res.fail("unsolved", ALL, lambda: line_of(k) + " then %s (move field 0x%04x: unsolved marker)"
                         % (uci_of(code), raw_code), keep)
                continue
            m = legal.get(code)
            if m is None:
                res.fail("illegal move", ALL, lambda: line_of(c), keep)
                continue
            if code in seen:
                res.fail("duplicate move", ALL, lambda: line_of(c), keep)
                continue
            seen.add(code)
            if (d & MASK30) == MASK30:
                res.fail("unsolved", ALL, lambda: line_of(c), keep)
                continue
            e_slot.append(c)
            e_zero.append(1 if board.is_zeroing(m) else 0)
            if d >> 31:
                transpositions += 1
                board.push(m)
                ptr_key[c] = board._transposition_key()
                board.pop()
            else:
                descend.append((c, m))
        e_cnt[k] = len(e_slot) - e_first[k]

        if not kids:
            if legal:
                res.fail("unfinished leaf", ALL,
                         lambda: "%s (%s to move has %d legal moves)" % (line_of(k), stm_name[board.turn], len(legal)),
                         keep)
            else:
                us = chess.popcount(board.occupied_co[board.turn])
                them = chess.popcount(board.occupied_co[not board.turn])
                rel = "none" if us == 0 else ("fewer" if us < them else ("equal" if us == them else "more"))
                cls = (winner_to_move, rel)
                leaves[cls] += 1
                if cls not in leaf_example:
                    leaf_example[cls] = k
        elif winner_to_move:
            if len(kids) != 1:
                res.fail("winner node without exactly one move", ALL,
                         lambda: "%s (%d moves: %s)" % (line_of(k), len(kids),
                                                        " ".join(uci_of(mv[c]) for c in kids)), keep)
        else:
            missing = [legal[x] for x in legal if x not in seen]
            if missing:
                res.fail("missing reply", ALL,
                         lambda: "%s: no child for %s" % (line_of(k), ", ".join(board.san(m) for m in missing)),
                         keep)
        return descend

    # Depth-first walk with push/pop, iterative.
    stack = [(0, iter(visit(0)))]
    while stack:
        k, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            stack.pop()
            if stack:
                board.pop()
            continue
        c, m = nxt
        board.push(m)
        stack.append((c, iter(visit(c))))
        if len(stack) - 1 > max_depth:
            max_depth = len(stack) - 1

    unreached = n - sum(reached)
    if unreached:
        res.notes.append("%d slots are not reached from the root (ignored)" % unreached)

    # Transpositions: target must be a checked node holding the pointer's position.
    dst_of = {}
    for p, key in ptr_key.items():
        t = target_of.get(p)
        if t is None:
            why = bad_target.get(p, "no target")
            if "outside the file" in why:
                raise Malformed("transposition at slot %d (%s): %s" % (p, line_of(p), why))
            res.fail("bad transposition", ALL, lambda: "%s: %s" % (line_of(p), why), keep)
            continue
        if not canon[t]:
            res.fail("bad transposition", ALL,
                     lambda: "%s: target slot %d is not a node of the tree" % (line_of(p), t), keep)
            continue
        if key_of[t] != key:
            res.fail("bad transposition", ALL,
                     lambda: "%s: target slot %d holds another position (%s)" % (line_of(p), t, line_of(t)), keep)
            continue
        dst_of[p] = t

    # Kahn over the proof DAG: cycles, largest halfmove clock into each node, longest line.
    indeg = array("i", [0]) * n
    for i, c in enumerate(e_slot):
        dst = dst_of.get(c, c) if data[c] >> 31 else c
        if data[c] >> 31 and c not in dst_of:
            continue
        indeg[dst] += 1
    clock = array("i", [-1]) * n
    longest = array("i", [0]) * n
    pred = array("i", [-1]) * n      # edge slot that gave the largest clock
    clock[0] = root_clock
    order = [0]
    done = 0
    while order:
        k = order.pop()
        done += 1
        ck = clock[k]
        lk = longest[k] + 1
        first = e_first[k]
        for i in range(first, first + e_cnt[k]) if first >= 0 else ():
            c = e_slot[i]
            if data[c] >> 31:
                dst = dst_of.get(c)
                if dst is None:
                    continue
            else:
                dst = c
            nc = 0 if e_zero[i] else ck + 1
            if nc > clock[dst]:
                clock[dst] = nc
                pred[dst] = c
            if lk > longest[dst]:
                longest[dst] = lk
            indeg[dst] -= 1
            if indeg[dst] == 0:
                order.append(dst)
    if done < positions:
        # A cycle: every node left out of the order has a predecessor left out too;
        # walk predecessors back from one of them until a node repeats.
        rev = {}
        for k in range(n):
            if canon[k] and indeg[k] > 0:
                first = e_first[k]
                for i in range(first, first + e_cnt[k]) if first >= 0 else ():
                    c = e_slot[i]
                    dst = dst_of.get(c) if data[c] >> 31 else c
                    if dst is not None and indeg[dst] > 0:
                        rev[dst] = c
        k = next(iter(rev))
        seen_at = set()
        while k not in seen_at:
            seen_at.add(k)
            k = parent[rev[k]]
        cyc = []
        j = k
        while True:
            c = rev[j]
            cyc.append(c)
            j = parent[c]
            if j == k:
                break
        closing = next((c for c in cyc if data[c] >> 31), cyc[0])
        res.fail("cycle through transpositions", ALL,
                 lambda: "%s returns to an earlier position of its own line (a cycle of %d moves; "
                 "%d nodes left out of the order)" % (line_of(closing), len(cyc), positions - done), keep)
    max_clock = -1
    fifty_bad = 0
    fifty_example = None
    for k in range(n):
        if canon[k] and nonterminal[k] and clock[k] >= 0:
            if clock[k] > max_clock:
                max_clock = clock[k]
            if clock[k] >= 100:
                fifty_bad += 1
                if fifty_example is None or clock[k] > clock[fifty_example]:
                    fifty_example = k
    if fifty_bad:
        def fifty_text():
            codes = []
            k = fifty_example
            while k > 0:
                c = pred[k]
                codes.append(mv[c])
                k = parent[c]
            codes.reverse()
            return ("%s: halfmove clock %d along this line, and %s to move is not a finished game "
                    "(%d such nodes)" % (line_text(prolog, codes), clock[fifty_example],
                                         "white" if (len(codes) + len(prolog)) % 2 == 0 else "black", fifty_bad))
        res.fail("fifty-move draw", [r for r in RULE_SETS if r.endswith("+fifty")], fifty_text, keep)

    # Leaf classes per rule set.
    def leaf_ok(base, winner_to_move, rel):
        if rel in ("none", "fewer"):
            return winner_to_move
        if rel == "equal":
            return winner_to_move and base == "international"
        # rel == 'more'
        if base == "international":
            return winner_to_move
        if base == "fics":
            return not winner_to_move
        return False

    for (wtm, rel), cnt in sorted(leaves.items()):
        bad = [r for r in RULE_SETS if not leaf_ok(BASE[r], wtm, rel)]
        if bad:
            k = leaf_example[(wtm, rel)]
            who = "winner" if wtm else "loser"
            cat = "leaf: %s to move, no legal move, %s pieces" % (
                who, {"none": "no", "fewer": "fewer", "equal": "as many", "more": "more"}[rel])
            f = res.failures.setdefault(cat, [0, frozenset(bad), []])
            f[0] += cnt
            f[2].append(line_of(k))

    failed = set()
    for cat, (cnt, rules, ex) in res.failures.items():
        failed |= rules
    holds = [r for r in RULE_SETS if r not in failed]
    leaf_counts = {}
    for (wtm, rel), cnt in leaves.items():
        leaf_counts["%s:%s" % ("winner" if wtm else "loser",
                               "no_pieces" if rel == "none" else "stalemate_" + rel)] = cnt
    return {
        "positions": positions,
        "distinct_positions": len(distinct),
        "slots": n,
        "transpositions": transpositions,
        "leaves": leaf_counts,
        "holds": holds,
        "failures": {cat: [cnt, sorted(r), ex] for cat, (cnt, r, ex) in res.failures.items()},
        "notes": res.notes,
        "root_fen": root_fen,
        "root_clock": root_clock,
        "max_clock": max_clock,
        "longest_line": max(longest) if positions else 0,
        "tree_depth": max_depth,
        "winner": "white" if winner == chess.WHITE else "black",
    }


def check_path(args):
    path, rules, winner_opt, keep = args
    name = os.path.basename(path)
    out = {"path": path, "name": name}
    try:
        side = sidecar_path(path)
        sidecar = None
        if os.path.exists(side):
            with open(side) as f:
                sidecar = json.load(f)
        elif winner_opt is None:
            out["error"] = "%s: no sidecar %s (give --winner to check without one)" % (path, side)
            return out
        wname = winner_opt or (sidecar or {}).get("winner")
        if wname not in (None, "white", "black"):
            out["error"] = "%s: sidecar winner %r is neither white nor black" % (side, wname)
            return out
        winner = None if wname is None else (chess.WHITE if wname == "white" else chess.BLACK)
        t0 = time.time()
        buf = read_file(path)
        t1 = time.time()
        r = check_tree(buf, winner, keep)
        r["seconds"] = time.time() - t1
        r["read_seconds"] = t1 - t0
        out.update(r)
        if sidecar is not None:
            sh = sidecar.get("holds_under")
            if sh is None:
                out["sidecar_diff"] = "sidecar has no holds_under"
            else:
                mine = set(r["holds"]) & set(rules)
                theirs = set(sh) & set(rules)
                if mine != theirs:
                    out["sidecar_diff"] = "sidecar holds_under %s, found %s" % (
                        " ".join(x for x in RULE_SETS if x in theirs) or "nothing",
                        " ".join(x for x in RULE_SETS if x in mine) or "nothing")
            out["sidecar_positions"] = sidecar.get("positions")
            out["sidecar_root_fen"] = (sidecar.get("verify") or {}).get("root_fen")
            out["sidecar_longest"] = (sidecar.get("verify") or {}).get("longest_line")
        else:
            out["sidecar_diff"] = None
            out["no_sidecar"] = True
    except Malformed as e:
        out["error"] = "%s: malformed: %s" % (path, e)
    except (OSError, ValueError) as e:
        out["error"] = "%s: %s" % (path, e)
    return out


def report(o, rules, stream=sys.stdout):
    if "error" in o:
        return
    w = stream.write
    secs = max(o["seconds"], 1e-9)
    w("%s: %s positions (%s distinct), %s slots, %s transpositions, winner %s, %.2f s (%s positions/s)\n"
      % (o["name"], f"{o['positions']:,}", f"{o['distinct_positions']:,}", f"{o['slots']:,}",
         f"{o['transpositions']:,}", o["winner"], o["seconds"], f"{int(o['positions'] / secs):,}"))
    w("  leaves: %s\n" % (", ".join("%s %s" % (k, f"{v:,}") for k, v in sorted(o["leaves"].items())) or "none"))
    w("  root clock %d, largest clock at an unfinished position %d, longest line %d plies\n"
      % (o["root_clock"], o["max_clock"], o["longest_line"]))
    for cat, (cnt, rs, ex) in sorted(o["failures"].items()):
        if not set(rs) & set(rules):
            continue
        w("  FAILS (%s) %s: %s\n" % (", ".join(x for x in RULE_SETS if x in rs), cat, f"{cnt:,}"))
        for e in ex:
            w("    at %s\n" % e)
    for note in o["notes"]:
        w("  note: %s\n" % note)
    w("  holds under: %s\n" % (" ".join(x for x in o["holds"] if x in rules) or "nothing"))
    extra = []
    if o.get("sidecar_positions") not in (None, o["positions"]):
        extra.append("sidecar positions %s" % f"{o['sidecar_positions']:,}")
    if o.get("sidecar_root_fen") not in (None, o["root_fen"]):
        extra.append("sidecar root_fen %s, found %s" % (o["sidecar_root_fen"], o["root_fen"]))
    if o.get("sidecar_longest") not in (None, o["longest_line"]):
        extra.append("sidecar longest_line %s" % o["sidecar_longest"])
    if o.get("no_sidecar"):
        w("  sidecar: none\n")
    elif o.get("sidecar_diff"):
        w("  sidecar: DIFFERS: %s\n" % o["sidecar_diff"])
    else:
        w("  sidecar: agrees\n")
    if extra:
        w("  (informative: %s)\n" % "; ".join(extra))
    stream.flush()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="Second, independent checker of antiproof win-tree certificates "
                                             "(python-chess).")
    ap.add_argument("files", nargs="*", help="win-tree files (.tree, .tree.zst, .tree.bz2); "
                                             "default: every tree in proofs/")
    ap.add_argument("--rules", action="append",
                    help="rule sets to check, comma-separated, repeatable (default: all six: %s)" % ",".join(RULE_SETS))
    ap.add_argument("--jobs", type=int, default=1, help="files checked in parallel (default 1)")
    ap.add_argument("--winner", choices=["white", "black"], help="the winner, overriding the sidecar's")
    ap.add_argument("--examples", type=int, default=3, help="failing lines shown per kind of failure (default 3)")
    a = ap.parse_args()
    rules = []
    for spec in a.rules or [",".join(RULE_SETS)]:
        for r in spec.split(","):
            r = r.strip()
            if not r:
                continue
            if r not in RULE_SETS:
                ap.error("unknown rule set %r (known: %s)" % (r, ", ".join(RULE_SETS)))
            if r not in rules:
                rules.append(r)
    if a.jobs < 1:
        ap.error("--jobs must be at least 1")
    files = a.files
    if not files:
        pdir = os.path.join(os.path.dirname(here), "proofs")
        files = sorted(glob.glob(os.path.join(pdir, "*.tree")) + glob.glob(os.path.join(pdir, "*.tree.zst"))
                       + glob.glob(os.path.join(pdir, "*.tree.bz2")))
        if not files:
            sys.stderr.write("second-check: no trees in %s\n" % pdir)
            return 2
    skipped = [f for f in files if f.endswith(".json")]
    if skipped:
        sys.stderr.write("second-check: skipping %d sidecar argument(s) (*.json)\n" % len(skipped))
        files = [f for f in files if not f.endswith(".json")]
        if not files:
            ap.error("no tree files among the arguments")
    for f in files:
        if not os.path.exists(f):
            sys.stderr.write("second-check: %s: no such file\n" % f)
            return 2
        if not os.path.isfile(f):
            sys.stderr.write("second-check: %s: not a regular file (a directory, FIFO or device)\n" % f)
            return 2
    # Biggest first so that parallel jobs finish together.
    work = sorted(files, key=lambda f: -os.path.getsize(f) * (4 if f.endswith((".zst", ".bz2")) else 1))
    tasks = [(f, rules, a.winner, a.examples) for f in work]
    t0 = time.time()
    results = []
    if a.jobs == 1 or len(tasks) == 1:
        it = map(check_path, tasks)
    else:
        import multiprocessing
        pool = multiprocessing.Pool(min(a.jobs, len(tasks)))
        it = pool.imap_unordered(check_path, tasks)
    for o in it:
        if "error" in o:
            sys.stderr.write("second-check: %s\n" % o["error"])
        report(o, rules)
        results.append(o)
    wall = time.time() - t0
    errors = [o for o in results if "error" in o]
    differ = [o for o in results if "error" not in o and o.get("sidecar_diff")]
    pos = sum(o.get("positions", 0) for o in results)
    cpu = sum(o.get("seconds", 0) for o in results)
    print("== %d files, %s positions, %.1f s wall (%.1f s checking, %s positions/s per job), rules %s"
          % (len(results), f"{pos:,}", wall, cpu, f"{int(pos / max(cpu, 1e-9)):,}", ",".join(rules)))
    print("== %d agree with their sidecar, %d differ%s, %d errors"
          % (len(results) - len(differ) - len(errors), len(differ),
             (": " + ", ".join(o["name"] for o in differ)) if differ else "", len(errors)))
    if errors:
        sys.stderr.write("second-check: %d file(s) could not be checked (named above)\n" % len(errors))
        return 2
    return 1 if differ else 0


if __name__ == "__main__":
    # A closed pipe (`| head`) ends the run quietly, as other tools do.
    import signal
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
