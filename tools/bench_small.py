#!/usr/bin/env python3
"""The small-problem table of `make bench-small` (issue 35, section 3) from benches/versus.c's JSON
rows: for each rank count, problem and size, the time per iteration of PETSc's KSPCG, hypre's PCG and
parlops' CG solvers, and each one's ratio to PETSc's (the median of each round's own ratio, as
versus.c pairs them). Usage: bench_small.py bench-small.json"""
import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
cg = [r for r in rows if r.get("problem") in ("poisson2d", "poisson3d")]
keep = ("PETSc KSPCG", "hypre PCG", "parlops CG (64-bit input)", "parlops CG single-reduction",
        "parlops CG pipelined", "parlops CG matrix-free")
print("\nCG in the small-problem regime: microseconds per iteration (ratio to PETSc's KSPCG, median of "
      "the rounds' own ratios)")
print(f"  {'ranks':>5} {'problem':>10} {'rows':>7} {'rows/rank':>9}  " + "  ".join(f"{k:>27}" for k in keep))
worst = 0.0
for key in sorted({(r["ranks"], r["problem"], r["rows"]) for r in cg}):
    by = {r["solver"]: r for r in cg if (r["ranks"], r["problem"], r["rows"]) == key}
    cells = []
    for k in keep:
        r = by.get(k)
        cells.append(f"{1e3 * r['ms_per_it']:9.2f} us ({r['vs_first']:.2f}x)" if r else "-")
    if "parlops CG (64-bit input)" in by:
        worst = max(worst, by["parlops CG (64-bit input)"]["vs_first"])
    ranks, problem, n = key
    print(f"  {ranks:>5} {problem:>10} {n:>7} {n // ranks:>9}  " + "  ".join(f"{c:>27}" for c in cells))
print(f"parlops CG against PETSc's KSPCG, the largest ratio: {worst:.2f}x (issue 35's bound: 1.0x)")
