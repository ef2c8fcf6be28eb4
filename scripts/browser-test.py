#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The proof page in a real browser: Debian's chromium, headless, driven by
Playwright for Python (no browser download: the system chromium).

    scripts/browser-test.py [--antiproof BIN] [--tree FILE] [--out DIR]

Starts `antiproof serve --tree FILE` (default proofs/e3-g6.tree) on a free
loopback port, then on /browse: plays 1.e3 on #board by click-click and
1...g6 by drag, and checks the URL holds the line, the winner's move shown
with the size the JSON endpoint gives, ArrowLeft/ArrowRight, Home/End, the
browser's back and forward buttons, the solved-openings table at the start
and after 1.e3, flip, copy FEN, the lichess link, a line typed in SAN, a
bad line, and that nothing was fetched from any other host. Saves
screenshots in DIR (default target/browser) for a person to look at.

Needs: apt-get install -y chromium; pip install playwright. Run by the
ignored test `tests/web_browser.rs` (cargo test --test tests web_browser:: --
--ignored). Exit 0 when every check passed, 1 when one failed, 2 when it
could not run.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import urllib.request

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def fail(msg):
    print(f"browser-test: FAILED: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print(f"ok: {msg}")


def start_server(binary, tree):
    proc = subprocess.Popen(
        [binary, "serve", "--tree", tree, "--addr", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    for line in proc.stdout:
        m = re.search(r"listening on (http://[0-9.:]+)/", line)
        if m:
            return proc, m.group(1)
    proc.wait()
    print("browser-test: serve did not start", file=sys.stderr)
    sys.exit(2)


def get_json(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.load(r)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--antiproof", default=os.environ.get("ANTIPROOF", "target/debug/antiproof"))
    ap.add_argument("--tree", default="proofs/e3-g6.tree")
    ap.add_argument("--out", default="target/browser")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("browser-test: needs Playwright for Python (pip install playwright)", file=sys.stderr)
        sys.exit(2)
    if not os.path.exists(args.chromium):
        print(f"browser-test: no {args.chromium} (apt-get install -y chromium)", file=sys.stderr)
        sys.exit(2)
    os.makedirs(args.out, exist_ok=True)
    server, base = start_server(args.antiproof, args.tree)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
            try:
                run(browser, base, args.out)
            finally:
                browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
    print("browser-test: every check passed; screenshots in", args.out)


def run(browser, base, out):
    ctx = browser.new_context(viewport={"width": 1100, "height": 820})
    ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    page = ctx.new_page()
    elsewhere, problems = [], []

    # Offline: any request to another origin is refused and remembered.
    def route(r):
        if r.request.url.startswith(base + "/"):
            r.continue_()
        else:
            elsewhere.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("console", lambda m: m.type in ("error", "warning") and problems.append(m.text))
    page.on("pageerror", lambda e: problems.append(str(e)))

    def shot(name):
        path = os.path.join(out, name)
        page.screenshot(path=path, full_page=True)
        print(f"screenshot: {path}")

    def line_in_url():
        m = re.search(r"[?&]line=([^&#]*)", page.url)
        return m.group(1).replace("%2C", ",") if m else ""

    def wait_line(line):
        # The address, and the panel showing the line (start + one link a
        # move).
        page.wait_for_function(
            """([want, n]) =>
                (new URLSearchParams(location.search).get('line') || '') === want
                && document.querySelectorAll('#line a').length === n + 1""",
            arg=[line, len(line.split(",")) if line else 0],
        )
        check(line_in_url() == line, f"the URL holds the line {line or '(start)'}")

    def square(sq, flipped=False):
        box = page.locator("#board cg-board").bounding_box()
        f, r = ord(sq[0]) - 97, int(sq[1]) - 1
        if flipped:
            f, r = 7 - f, 7 - r
        w, h = box["width"] / 8, box["height"] / 8
        return box["x"] + (f + 0.5) * w, box["y"] + (7 - r + 0.5) * h

    def click(sq):
        x, y = square(sq)
        page.mouse.click(x, y)

    def drag(a, b):
        (x0, y0), (x1, y1) = square(a), square(b)
        page.mouse.move(x0, y0)
        page.mouse.down()
        page.mouse.move((x0 + x1) / 2, (y0 + y1) / 2, steps=5)
        page.mouse.move(x1, y1, steps=5)
        page.mouse.up()

    # The piece (its class, "white pawn") whose box holds the square's
    # centre: chessground places pieces by CSS transforms.
    find_piece = """([x, y]) => {
        for (const p of document.querySelectorAll('#board piece')) {
            if (p.classList.contains('ghost') || p.classList.contains('fading')) continue;
            const b = p.getBoundingClientRect();
            if (x > b.left && x < b.right && y > b.top && y < b.bottom) return p.className;
        }
        return null;
    }"""

    def piece_at(sq, want):
        # Waits out the move's animation (150 ms) before it says no.
        xy = list(square(sq))
        try:
            page.wait_for_function(
                f"([xy, want]) => ({find_piece})(xy) === want", arg=[xy, want], timeout=5000
            )
            return True
        except Exception:
            print(f"on {sq}: {page.evaluate(find_piece, xy)!r}, not {want!r}", file=sys.stderr)
            return False

    def key(k):
        page.keyboard.press(k)

    # The start position.
    page.goto(base + "/browse")
    page.wait_for_selector("#board cg-board piece")
    check(page.locator("#board.cg-wrap").count() == 1, "chessground mounted on #board")
    check(piece_at("e2", "white pawn"), "White at the bottom: a white pawn on e2")
    check(piece_at("e8", "black king"), "the black king on e8 (top)")
    start_rows = page.locator("#moves tbody tr").count()
    check(start_rows == 1, "the start lists the one move into the proof (1.e3)")
    e3_table = page.locator("#moves tr[data-uci=e2e3] td").nth(4).inner_text()
    check("won" in e3_table and "1 of 20" in e3_table, f"1.e3 shows its table status: {e3_table!r}")
    others = page.locator("#others")
    check(others.locator("a").count() == 19, "the 19 other first moves are listed")
    lost = others.locator(".lost").inner_text()
    check(" h4 " in f" {lost} ", f"1.h4 is listed as lost: {lost!r}")
    shot("1-start.png")

    # 1.e3 by click-click, 1...g6 by drag.
    click("e2")
    page.wait_for_selector("#board square.selected")
    click("e3")
    wait_line("e2e3")
    missing = page.locator("#missing").inner_text()
    check("(19)" in missing and "d5" in missing, "after 1.e3 the 19 replies not proven are listed")
    g6_table = page.locator("#moves tr[data-uci=g7g6] td").nth(4).inner_text()
    check(g6_table == "won; certified", f"1...g6 shows 'certified here': {g6_table!r}")
    shot("2-after-e3.png")
    drag("g7", "g6")
    wait_line("e2e3,g7g6")
    check(piece_at("g6", "black pawn"), "the pawn stands on g6")

    # The winner's move and its size, as the JSON endpoint gives it.
    api = get_json(base + "/?moves=e2e3,g7g6")
    best = api["moves"][0]
    row = page.locator("#moves tr.win")
    check(row.count() == 1, "one move marked as the winner's")
    cells = row.locator("td").all_inner_texts()
    check(cells[0].startswith(best["san"]), f"the marked move is {best['san']}")
    shown = int(cells[2].replace(",", ""))
    check(shown == best["nodes"], f"its size {cells[2]} is the endpoint's {best['nodes']}")
    check(cells[3] == "proven", "it leads to a proven node")
    state = get_json(base + "/api/line?line=e2e3,g7g6")
    check(state["moves"][0]["nodes"] == best["nodes"], "/api/line agrees with /?moves=")
    status = page.locator("#status").inner_text()
    check("win for White" in status and "White to move" in status, f"status: {status!r}")
    href = page.locator("#lichess").get_attribute("href")
    check(
        href == "https://lichess.org/analysis/antichess/" + state["fen"].replace(" ", "_"),
        "the lichess link is this position",
    )
    shot("3-after-e3-g6.png")

    # Keys: back, forward along the line, forward along the proof, Home, End.
    key("ArrowLeft")
    wait_line("e2e3")
    check(piece_at("g7", "black pawn"), "ArrowLeft took g6 back")
    key("ArrowRight")
    wait_line("e2e3,g7g6")
    key("ArrowRight")
    wait_line("e2e3,g7g6,d1h5")
    check(piece_at("h5", "white queen"), "ArrowRight at the end follows the winner's move")
    key("Home")
    wait_line("")
    check(piece_at("e2", "white pawn"), "Home: the start position")
    key("End")
    wait_line("e2e3,g7g6,d1h5")

    # Keys pressed faster than the answers come: each steps from the last.
    for _ in range(3):
        key("ArrowLeft")
    wait_line("")
    for _ in range(3):
        key("ArrowRight")
    wait_line("e2e3,g7g6,d1h5")
    for _ in range(6):
        key("ArrowLeft")
    key("End")
    wait_line("e2e3,g7g6,d1h5")

    # The browser's back and forward buttons.
    page.go_back()
    wait_line("")
    page.go_back()
    wait_line("e2e3,g7g6,d1h5")
    page.go_forward()
    wait_line("")
    page.go_back()
    wait_line("e2e3,g7g6,d1h5")

    # Flip: Black at the bottom.
    page.click("#flip")
    page.wait_for_selector("#board.orientation-black")
    x, y = square("e8", flipped=True)
    box = page.locator("#board cg-board").bounding_box()
    check(y > box["y"] + box["height"] * 7 / 8, "flipped: rank 8 at the bottom")
    shot("4-flipped.png")
    page.click("#flip")
    page.wait_for_selector("#board.orientation-white")

    # Copy FEN.
    page.click("#copy-fen")
    page.wait_for_function("() => document.getElementById('note').textContent !== ''")
    copied = page.evaluate("navigator.clipboard.readText()")
    fen = get_json(base + "/api/line?line=e2e3,g7g6,d1h5")["fen"]
    check(copied == fen, f"copy FEN copied {copied!r}")

    # A link of the panel stays on the page (no reload): the line's first move.
    page.evaluate("window.__kept = 1")
    page.click("#line a[data-ply='1']")
    wait_line("e2e3")
    check(page.evaluate("window.__kept") == 1, "a panel link is followed without a reload")

    # A promotion (off the proof): the board asks which piece; antichess
    # promotes to a king too. 1.a4 e6 2.a5 Bc5 3.a6 Bxf2 4.axb7 Bxe1.
    promo = "a2a4,e7e6,a4a5,f8c5,a5a6,c5f2,a6b7,f2e1"
    page.goto(base + "/browse?line=" + promo)
    page.wait_for_selector("#board cg-board piece")
    wait_line(promo)
    click("b7")
    click("a8")
    page.wait_for_selector("#promote:not([hidden]) button")
    names = page.locator("#promote button").all_inner_texts()
    check(
        names == ["queen", "rook", "bishop", "knight", "king", "cancel"],
        f"a promotion offers {names}",
    )
    shot("7-promotion.png")
    page.click("#promote button:text('cancel')")
    check(piece_at("b7", "white pawn"), "cancel puts the pawn back")
    click("b7")
    click("a8")
    page.click("#promote button:text('king')")
    wait_line(promo + ",b7a8k")
    check(piece_at("a8", "white king"), "promoted to a king")
    status = page.locator("#status").inner_text()
    check("not in the proof" in status, f"off the proof: {status!r}")

    # A line typed in SAN is shown and its address rewritten in UCI.
    page.goto(base + "/browse?line=e3+g6")
    page.wait_for_selector("#board cg-board piece")
    wait_line("e2e3,g7g6")

    # A bad line: the error named, a way back.
    resp = page.goto(base + "/browse?line=e2e3,e7e4")
    check(resp.status == 400, "a bad line answers 400")
    err = page.locator("#error").inner_text()
    check("ply 2" in err, f"the error names the ply: {err!r}")
    check(page.locator("a", has_text="the line before the bad move").count() == 1, "a way back")
    shot("5-bad-line.png")
    # (chromium logs the 400 itself as a console error.)
    problems[:] = [m for m in problems if "status of 400" not in m]

    # A narrow window: the panel goes below the board.
    page.set_viewport_size({"width": 420, "height": 900})
    page.goto(base + "/browse?line=e2e3")
    page.wait_for_selector("#board cg-board piece")
    b = page.locator("#board").bounding_box()
    check(b["x"] + b["width"] <= 420, "the board fits a narrow window")
    shot("6-narrow.png")

    check(not elsewhere, f"nothing fetched from another host {elsewhere}")
    check(not problems, f"no script errors or warnings {problems}")
    ctx.close()


if __name__ == "__main__":
    main()
