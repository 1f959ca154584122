"""What the MPI reference scripts of the proximal module share (tests/reference/proximal.py and
prox_op.py): pass/fail counting reduced over the ranks, the relative distance of two distributed
arrays, parlops' handle on MPI_COMM_WORLD and MPI_COMM_SELF, 1-D layouts, parlops vectors wrapping
NumPy arrays (kept alive here), PyLops-MPI DistributedArrays of this rank's part, and the
interleaved timing of benches/fft.py and benches/mdc.py."""
import ctypes as C
import time

import numpy as np
from mpi4py import MPI
from pylops_mpi import DistributedArray

from parlops_ctypes import P, call

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
_kept = []  # arrays that parlops vectors wrap


class Tally:
    """Checks counted on each rank; `finish` prints the totals on rank 0 and gives the exit code."""

    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"rank {rank}: FAILED: {what}", flush=True)

    def finish(self, name):
        p, f = comm.allreduce(self.passed), comm.allreduce(self.failed)
        if rank == 0:
            print(f"{name}: {p} passed, {f} failed ({size} ranks)")
        return 1 if f else 0


def rel(a, b):
    """||a - b|| / ||b|| over every rank's parts."""
    d = comm.allreduce(float(np.sum(np.abs(a - b) ** 2)))
    n = comm.allreduce(float(np.sum(np.abs(b) ** 2)))
    return np.sqrt(d / max(n, 1e-300))


def pcomm(c):
    """parlops' handle on the mpi4py communicator c."""
    h = P()
    call("parlops_comm_create_f", C.c_int(c.py2f()), C.byref(h))
    return h


world = pcomm(comm)
selfc = pcomm(MPI.COMM_SELF)


def layout(c, nloc, nglob=-1):
    """A 1-D split layout on parlops communicator c with this rank's nloc entries."""
    out = P()
    call("parlops_layout_create", c, C.c_int32(0), C.c_int64(nglob), C.c_int64(nloc), C.byref(out))
    return out


def layout_1d(nloc):
    """A 1-D layout of MPI_COMM_WORLD with this rank's nloc entries."""
    return layout(world, nloc, comm.allreduce(nloc))


def ptr(arr):
    """`arr`'s data pointer, arr kept alive (for calls that may keep or read it later)."""
    _kept.append(arr)
    return arr.ctypes.data_as(P)


def vec(lay, arr, dt):
    """A parlops vector of dtype code dt wrapping `arr` (no copy; arr kept alive)."""
    _kept.append(arr)
    out = P()
    call("parlops_vec_create_with_array", lay, C.c_int32(dt), C.c_int32(0), arr.ctypes.data_as(P), C.byref(out))
    return out


def dist(local):
    """A PyLops-MPI DistributedArray whose part on this rank is `local`."""
    d = DistributedArray(global_shape=comm.allreduce(local.size), local_shapes=comm.allgather((local.size,)),
                         dtype=local.dtype)
    d[:] = local
    return d


def layout_2d(ny, nx):
    """A 2-D (ny, nx) layout of MPI_COMM_WORLD split along axis 0 as parlops decides: (layout, this
    rank's first flat index, its length)."""
    shape = (C.c_int64 * 2)(ny, nx)
    lnd = P()
    call("parlops_layout_create_nd", world, C.c_int32(0), C.c_int(2), shape, C.c_int(0), C.c_int64(-1), C.byref(lnd))
    start, ln = C.c_int64(), C.c_int64()
    call("parlops_layout_local_range", lnd, C.byref(start), C.byref(ln))
    return lnd, start.value, ln.value


def interleaved(fs, rounds):
    """Each of `fs` run once a round, in turn, for `rounds` rounds: the median of each one's slowest
    rank's times."""
    out = [[] for _ in fs]
    for _ in range(rounds):
        for f, acc in zip(fs, out):
            comm.Barrier()
            t0 = time.perf_counter()
            f()
            comm.Barrier()
            acc.append(comm.allreduce(time.perf_counter() - t0, op=MPI.MAX))
    return [float(np.median(a)) for a in out]
