"""Krylov-Schur's memory against its basis size (issue 37: "memory bounded by the basis size given"):
the 6 largest eigenvalues of the matrix-free 1000^2 Poisson operator with ncv 16, 32 and 64, each in
its own process, the peak resident memory (ru_maxrss) before and after the run. The host bound is ncv
+ 4 vectors of the layout (8 MiB each here: 8 MB in whole 2 MiB pages), whatever the products: a run stopped at 300 products and
one at 1,500 must grow alike. Exits 1 when the growth exceeds the bound by more than 4 MiB.
Usage: python eigen_memory.py [ncv products]  (no arguments: the whole table, each run a singleton)"""
import resource
import subprocess
import sys
import time

if len(sys.argv) < 3:
    # the table: one MPI singleton process per run (ru_maxrss never goes down within a process);
    # this driver itself stays out of MPI
    bad = 0
    for ncv, prods in [(16, 300), (16, 1500), (32, 300), (64, 300)]:
        out = subprocess.run([sys.executable, __file__, str(ncv), str(prods)], capture_output=True, text=True)
        line = [x for x in out.stdout.splitlines() if x.startswith("eigen memory")]
        print(line[0] if line else out.stdout + out.stderr, flush=True)
        bad |= out.returncode != 0 or not line
    sys.exit(1 if bad else 0)
from mpi4py import MPI  # noqa: E402

import parlops  # noqa: E402

ncv, prods = int(sys.argv[1]), int(sys.argv[2])
comm = parlops.Comm(MPI.COMM_WORLD)
nx = 1000
lay = parlops.Layout(comm, global_len=nx * nx)
A = parlops.Operator.poisson(lay, (nx, nx))
v0 = parlops.Vector(lay).set_random(seed=1)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t = time.perf_counter()
try:
    parlops.krylov_schur(A, k=6, which="largest", ncv=ncv, tol=1e-12, v0=v0, max_products=prods)
except parlops.ParlopsError as e:
    if "NOT_CONVERGED" not in str(e):
        raise
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
# a long vector is allocated in whole 2 MiB pages (huge pages, benches/NOTES.md item 21)
vec_mib = 8.0 * lay.local_len / 2**20
vec_mib = -(-vec_mib // 2) * 2 if vec_mib >= 2 else vec_mib
bound = (ncv + 4) * vec_mib
print(f"eigen memory: ncv {ncv}, {prods} products, {lay.local_len} rows: peak {peak:.1f} MiB, before the run "
      f"{before:.1f} MiB, growth {peak - before:.1f} MiB (ncv + 4 vectors: {bound:.1f} MiB), {time.perf_counter() - t:.1f} s",
      flush=True)
sys.exit(0 if peak - before <= bound + 4.0 else 1)
