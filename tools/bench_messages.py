#!/usr/bin/env python3
"""Messages per CG iteration, parlops next to PETSc (issue 35, section 3: "at 8 oversubscribed ranks
for counting messages"): runs benches/setup.c's memory mode (a CG solve without preconditioner on the
2D Poisson matrix, about ROWS rows per rank) with the PMPI counter benches/mpi_count.c preloaded,
for K and 2K iterations, and prints the difference over K for each library: point-to-point sends,
persistent starts and receives, and allreduces per iteration, the largest over the ranks. Usage:
bench_messages.py MPIEXEC SETUP_BENCH COUNTER_SO RANKS ROWS [K]"""
import math
import re
import subprocess
import sys

mpiexec, bench, counter, ranks, rows = sys.argv[1:6]
k = int(sys.argv[6]) if len(sys.argv) > 6 else 50
n = round(math.sqrt(int(rows) * int(ranks)))


ver = subprocess.run(mpiexec.split() + ["--version"], capture_output=True, text=True).stdout
# the preload reaches the ranks only: Open MPI's -x, MPICH's (Hydra's) -genv
env = ["-x", "LD_PRELOAD=" + counter] if "Open MPI" in ver or "OpenRTE" in ver else ["-genv", "LD_PRELOAD", counter]


def counts(lib, iters):
    cmd = mpiexec.split() + ["-n", ranks] + env + [bench, "memory", lib, str(n), str(iters)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    pat = r"mpi_count rank (\d+): (\d+) sends, (\d+) starts, (\d+) receives, (\d+) allreduces"
    # by rank (the ranks' lines come in any order)
    per = [tuple(map(int, m[1:])) for m in sorted(re.findall(pat, out.stderr), key=lambda m: int(m[0]))]
    if len(per) != int(ranks):
        sys.exit(f"bench_messages.py: {len(per)} counts from {ranks} ranks:\n{out.stdout}\n{out.stderr}")
    return per


print(f"\nmessages per CG iteration at {ranks} ranks ({n}^2 = {n * n} rows, about {n * n // int(ranks)} a rank), "
      f"the largest over the ranks ({k} and {2 * k} iterations, the difference over {k})")
for lib, name in (("petsc", "PETSc KSPCG"), ("parlops", "parlops CG")):
    a, b = counts(lib, k), counts(lib, 2 * k)
    d = [[(y[i] - x[i]) / k for i in range(4)] for x, y in zip(a, b)]
    top = [max(r[i] for r in d) for i in range(4)]
    p2p = max(r[0] + r[1] + r[2] for r in d)
    print(f"  {name:12s} {top[0]:5.2f} sends, {top[1]:5.2f} persistent starts, {top[2]:5.2f} receives "
          f"({p2p:5.2f} point-to-point operations in all), {top[3]:5.2f} allreduces")
