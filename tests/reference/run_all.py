"""Run reference scripts one after another in one MPI job (tests/reference.sh): each script as its
own __main__ (runpy), so that numpy, SciPy, mpi4py, PyLops and PyLops-MPI are imported once per rank
count instead of once per script (2-4 s a launch on 2 cores).

Usage: mpiexec -n N python tests/reference/run_all.py SCRIPT [SCRIPT ...]

A script's exit status (its sys.exit) is kept and the next script runs; the job exits with 1 if any
script failed, naming them. Any other exception ends the process, as it would have ended the
script's own job (mpiexec then stops the other ranks).
"""
import os
import runpy
import sys
import time

# one BLAS thread a rank, for every script (mdc.py asked for it before importing numpy; here numpy is
# imported once, by the first script, so the setting must come before it: 1-4 ranks share 2 cores)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from mpi4py import MPI  # noqa: E402

failed = []
for script in sys.argv[1:]:
    t0 = time.perf_counter()
    sys.argv = [script]
    try:
        runpy.run_path(script, run_name="__main__")
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    sys.stdout.flush()
    # the outcome every rank prints is the job's: failed if the script failed on any rank
    code = MPI.COMM_WORLD.allreduce(1 if code else 0, op=MPI.MAX)
    if MPI.COMM_WORLD.rank == 0:
        print(f"reference: {os.path.basename(script)} at {MPI.COMM_WORLD.size} rank(s): "
              f"{'FAILED' if code else 'ok'} ({time.perf_counter() - t0:.1f} s)", flush=True)
    if code:
        failed.append(os.path.basename(script))
if failed:
    if MPI.COMM_WORLD.rank == 0:
        print(f"reference: failed: {' '.join(failed)}", flush=True)
sys.exit(1 if failed else 0)
