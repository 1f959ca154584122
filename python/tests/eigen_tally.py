"""The pass/fail tally of the eigenvalue test scripts (test_eigen_mfem.py, test_eigen_shift.py):
check() records a check on this rank, finish() prints the line CI counts, "NAME at N rank(s): P
passed, F failed" (summed over the ranks), and exits 1 if any check failed anywhere."""
import sys

from mpi4py import MPI

W = MPI.COMM_WORLD
_tally = [0, 0]


def check(ok, what):
    if ok:
        _tally[0] += 1
    else:
        _tally[1] += 1
        print(f"FAIL [rank {W.rank}/{W.size}]: {what}", flush=True)


def finish(name):
    passed, failed = W.allreduce(_tally[0]), W.allreduce(_tally[1])
    if W.rank == 0:
        print(f"{name} at {W.size} rank(s): {passed} passed, {failed} failed", flush=True)
    sys.exit(1 if failed else 0)
