#!/usr/bin/env python3
"""Turn the JSON lines of benches/versus.c (and benches/pylops_cg.py) into a Markdown table and an
SVG chart: time per iteration of every solver relative to the first one of its group (PETSc), by
problem and rank count; the table also gives the parlops CG variants relative to parlops CG (32-bit
input). Usage: bench_report.py bench.json [bench.svg] [bench.md]"""
import json
import sys
from collections import OrderedDict


def load(path):
    rows, triad = [], {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            if r.get("problem") == "triad":
                triad[r["ranks"]] = r["triad_gbs"]
            else:
                rows.append(r)
    return rows, triad


def groups(rows):
    g = OrderedDict()
    for r in rows:
        g.setdefault((r["problem"], r["ranks"]), []).append(r)
    return g


def table(rows, triad):
    out = []
    for (prob, ranks), rs in groups(rows).items():
        first = rs[0]
        out.append(
            f"\n### {prob}, {ranks} rank(s): {first.get('rows', 0):,} rows; STREAM triad "
            f"{first.get('triad_gbs') or triad.get(ranks, 0):.1f} GB/s "
            f"({'median of its rounds' if first.get('triad_gbs') else 'at the start of the run'}); medians (min-max) of "
            f"{first['rounds']} interleaved rounds of {first['timed_iterations']} iterations"
            f"{'; ratios: medians of each round' + chr(39) + 's own ratio' if 'vs_first_of_medians' in first else ''}\n"
        )
        out.append(
            "| solver | iterations to 1e-8 (kernels: repetitions) | ms/iteration | vs first | bytes/row floor "
            "| x floor | vs parlops CG |"
        )
        out.append("|---|---|---|---|---|---|---|")
        for r in rs:
            fl = r["floor_bytes_per_row"]
            floor = f"{fl:.0f} | {r['x_floor']:.2f}" if fl > 0 else "- | -"
            its = r["iterations"] if r.get("counted", 1) else "not counted"
            vcg = r.get("vs_parlops_cg")
            out.append(
                f"| {r['solver']} | {its} | {r['ms_per_it']:.3f} ({r['ms_min']:.3f}-{r['ms_max']:.3f}) "
                f"| {r['vs_first']:.2f} | {floor} | {'-' if vcg is None else f'{vcg:.2f}'} |"
            )
    return "\n".join(out) + "\n"


def svg(rows):
    g = groups(rows)
    bar_h, gap, left, width = 16, 26, 250, 420
    n = sum(len(v) for v in g.values())
    height = 40 + n * bar_h + len(g) * gap
    vmax = max([r["vs_first"] for r in rows] + [1.0]) * 1.1
    x = lambda v: left + width * v / vmax
    s = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 80}" height="{height}" '
        'font-family="sans-serif" font-size="11">',
        f'<text x="10" y="16" font-size="13">time per iteration relative to the first solver of each group '
        "(lower is faster; the line is 1.0)</text>",
    ]
    y = 30
    for (prob, ranks), rs in g.items():
        y += gap - 8
        s.append(f'<text x="10" y="{y}" font-weight="bold">{prob}, {ranks} rank(s)</text>')
        y += 6
        for r in rs:
            colour = "#888888" if not r["solver"].startswith("parlops") else "#2b6cb0"
            w = x(r["vs_first"]) - left
            s.append(f'<text x="{left - 6}" y="{y + 12}" text-anchor="end">{r["solver"]}</text>')
            s.append(f'<rect x="{left}" y="{y + 2}" width="{w:.1f}" height="{bar_h - 4}" fill="{colour}"/>')
            s.append(f'<text x="{left + w + 4:.1f}" y="{y + 12}">{r["vs_first"]:.2f}</text>')
            y += bar_h
    s.append(f'<line x1="{x(1.0):.1f}" y1="26" x2="{x(1.0):.1f}" y2="{height}" stroke="#cc3333"/>')
    s.append("</svg>")
    return "\n".join(s) + "\n"


def main():
    rows, triad = load(sys.argv[1])
    if not rows:
        sys.exit("no benchmark rows in " + sys.argv[1])
    md = table(rows, triad)
    print(md)
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            f.write(svg(rows))
        print("chart:", sys.argv[2])
    if len(sys.argv) > 3:
        with open(sys.argv[3], "w") as f:
            f.write(md)


if __name__ == "__main__":
    main()
