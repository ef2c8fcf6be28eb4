#!/usr/bin/env python3
"""Draws the TSV of scripts/scaling-sim.py as an SVG (no dependencies):
four panels against the workers P (log scale): speedup (with the ideal
P), efficiency, work inflation and busy fraction, one series a line.

  scripts/plot-scaling.py [--in docs/scaling-sim.tsv] [--out docs/scaling-sim.svg]
"""

import argparse
import math

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def read(path):
    with open(path) as f:
        head = f.readline().rstrip("\n").split("\t")
        rows = [dict(zip(head, r.rstrip("\n").split("\t"))) for r in f if r.strip()]
    series = {}
    for r in rows:
        series.setdefault(r["line"], []).append(r)
    for rs in series.values():
        rs.sort(key=lambda r: int(r["workers"]))
    return series


def panel(x0, y0, w, h, title, series, key, log_y, ideal=False):
    out = []
    ps = [int(r["workers"]) for rs in series.values() for r in rs]
    vals = [float(r[key]) for rs in series.values() for r in rs if float(r[key]) > 0]
    pmax = max(ps + [2])
    if ideal:
        vals += [1, pmax]
    lo, hi = (min(vals), max(vals)) if vals else (0.1, 1)
    if log_y:
        lo, hi = 10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi))
    else:
        lo, hi = 0.0, max(1.0, hi * 1.1) if key != "busy_fraction" and key != "efficiency" else 1.0
        if key == "efficiency":
            hi = max(1.0, max(vals, default=1) * 1.1)

    def px(p):
        return x0 + 50 + (w - 70) * math.log2(p) / max(1, math.log2(pmax))

    def py(v):
        if log_y:
            t = (math.log10(max(v, lo)) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
        else:
            t = (v - lo) / (hi - lo)
        return y0 + h - 30 - (h - 60) * t

    out.append(f'<text x="{x0 + w / 2}" y="{y0 + 16}" text-anchor="middle" '
               f'font-size="14" font-weight="bold">{title}</text>')
    out.append(f'<rect x="{x0 + 50}" y="{y0 + 30}" width="{w - 70}" height="{h - 60}" '
               f'fill="none" stroke="#888"/>')
    p = 1
    while p <= pmax:
        out.append(f'<line x1="{px(p)}" y1="{y0 + 30}" x2="{px(p)}" y2="{y0 + h - 30}" '
                   f'stroke="#eee"/>')
        out.append(f'<text x="{px(p)}" y="{y0 + h - 14}" text-anchor="middle" '
                   f'font-size="10">{p}</text>')
        p *= 2
    out.append(f'<text x="{x0 + w / 2 + 25}" y="{y0 + h}" text-anchor="middle" '
               f'font-size="11">workers P</text>')
    ticks = []
    if log_y:
        v = lo
        while v <= hi * 1.0001:
            ticks.append(v)
            v *= 10
    else:
        ticks = [lo + (hi - lo) * i / 4 for i in range(5)]
    for v in ticks:
        out.append(f'<line x1="{x0 + 50}" y1="{py(v)}" x2="{x0 + w - 20}" y2="{py(v)}" '
                   f'stroke="#eee"/>')
        label = f"{v:g}"
        out.append(f'<text x="{x0 + 46}" y="{py(v) + 4}" text-anchor="end" '
                   f'font-size="10">{label}</text>')
    if ideal:
        out.append(f'<line x1="{px(1)}" y1="{py(1)}" x2="{px(pmax)}" y2="{py(pmax)}" '
                   f'stroke="#aaa" stroke-dasharray="4 3"/>')
    for i, (line, rs) in enumerate(sorted(series.items())):
        c = COLOURS[i % len(COLOURS)]
        pts = [(px(int(r["workers"])), py(float(r[key]))) for r in rs]
        out.append('<polyline fill="none" stroke="{}" stroke-width="2" points="{}"/>'.format(
            c, " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)))
        for (x, y), r in zip(pts, rs):
            shape = "circle" if r["result"] == "proven" else "rect"
            if shape == "circle":
                out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{c}"/>')
            else:
                out.append(f'<rect x="{x - 3:.1f}" y="{y - 3:.1f}" width="6" height="6" '
                           f'fill="white" stroke="{c}"/>')
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--in", dest="inp", default="docs/scaling-sim.tsv")
    ap.add_argument("--out", default="docs/scaling-sim.svg")
    a = ap.parse_args()
    series = read(a.inp)
    w, h = 420, 300
    body = []
    body += panel(0, 40, w, h, "speedup (dashed: P)", series, "speedup", True, ideal=True)
    body += panel(w, 40, w, h, "efficiency (speedup / P)", series, "efficiency", False)
    body += panel(0, 40 + h, w, h, "work inflation (job nodes / one process's)", series,
                  "work_inflation", True)
    body += panel(w, 40 + h, w, h, "busy fraction of the workers", series, "busy_fraction",
                  False)
    rows = [r for rs in series.values() for r in rs]

    def setting(key, unit=""):
        """One value of a column for the title, or 'per line' when the
        series differ in it (a TSV of several latencies, say)."""
        vals = sorted({r.get(key, "?") for r in rows}) or ["?"]
        return vals[0] + unit if len(vals) == 1 else "per line"

    title = "prove --executor sim: rate {}, latency {}, --job-nodes {}".format(
        setting("rate_nodes_per_s", " nodes/s"), setting("latency_s", " s"),
        setting("job_nodes_budget"))
    body.insert(0, f'<text x="{w}" y="18" text-anchor="middle" font-size="15">{title}</text>')
    for i, line in enumerate(sorted(series)):
        c = COLOURS[i % len(COLOURS)]
        y = 40 + 2 * h + 20 + 16 * i
        body.append(f'<line x1="60" y1="{y - 4}" x2="90" y2="{y - 4}" stroke="{c}" '
                    f'stroke-width="2"/>')
        body.append(f'<text x="96" y="{y}" font-size="12">1.{line.replace(" ", " ", 1)} '
                    f'(one process {int(series[line][0]["baseline_nodes"]):,} nodes)</text>')
    body.append(f'<text x="500" y="{40 + 2 * h + 20}" font-size="11">dot: proven; '
                f'square: stopped by --limit</text>')
    total_h = 40 + 2 * h + 30 + 16 * len(series)
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * w}" height="{total_h}" '
           f'font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n'
           + "\n".join(body) + "\n</svg>\n")
    with open(a.out, "w") as f:
        f.write(svg)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
