"""parlops CG next to PyLops-MPI's cg on the same 2D 5-point Poisson matrix (n x n, b = 1), in one
MPI job, interleaved (run under mpiexec; `make bench` runs it at 1 and 2 ranks).

PyLops-MPI has no distributed sparse matrix, so the operator is written the way its users write
one: an MPILinearOperator whose matvec brings the neighbouring grid rows with the DistributedArray's
own ghost cells (add_ghost_cells) and multiplies by this rank's rows as a SciPy CSR matrix. parlops
gets the same rows through parlops_op_create_csr (ctypes on libparlops.so, mpi4py's communicator).
Both first solve to ||r|| <= 1e-8 ||b|| (the iteration counts are printed side by side), then
ROUNDS interleaved rounds time K iterations of each. Appends JSON lines to the file given.
Usage: mpiexec -n P python pylops_cg.py n rounds K json-file
"""
import ctypes as C
import json
import os
import sys
import time

import numpy as np
import scipy.sparse as sp
from mpi4py import MPI

import pylops_mpi
from pylops_mpi import DistributedArray, MPILinearOperator, Partition
from pylops_mpi.basicoperators import MPILaplacian
from pylops_mpi.DistributedArray import local_split
from pylops_mpi.optimization.basic import cg, cgls

n, rounds, K = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
jf = sys.argv[4]
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
N = n * n
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
from parlops_ctypes import P, SolveInfo, call, lib  # noqa: E402

# this rank's rows: PyLops-MPI's default split of N (its local_split), whole grid rows not required
b_da = DistributedArray(global_shape=N, dtype=np.float64)
b_da[:] = 1.0
lens = comm.allgather(b_da.local_array.shape[0])
start = sum(lens[:rank])
ln = lens[rank]
rp, ci, va = [0], [], []
for r in range(start, start + ln):
    i, j = divmod(r, n)
    for ok, c, v in ((i > 0, r - n, -1.0), (j > 0, r - 1, -1.0), (True, r, 4.0), (j < n - 1, r + 1, -1.0),
                     (i < n - 1, r + n, -1.0)):
        if ok:
            ci.append(c)
            va.append(v)
    rp.append(len(ci))
rp, ci, va = np.array(rp, np.int64), np.array(ci, np.int64), np.array(va)

# PyLops-MPI: ghost cells of width n on the sides that have a neighbour, local CSR on [start - front, end + back)
front = min(n, start) if rank > 0 else 0
back = min(n, N - start - ln) if rank < size - 1 else 0
A_loc = sp.csr_matrix((va, ci - (start - front), rp), shape=(ln, ln + front + back))


class Poisson(MPILinearOperator):
    def __init__(self):
        super().__init__(shape=(N, N), dtype=np.dtype(np.float64), base_comm=comm)

    def _matvec(self, x):
        y = DistributedArray(global_shape=N, local_shapes=x.local_shapes, dtype=np.float64)
        # every rank passes both counts (0 where it has no neighbour): they are allgathered
        ext = x.add_ghost_cells(cells_front=front, cells_back=back)
        y[:] = A_loc @ ext
        return y

    def _rmatvec(self, x):
        return self._matvec(x)


Op = Poisson()


def pylops_solve(niter, tol):
    x0 = DistributedArray(global_shape=N, dtype=np.float64)
    x0[:] = 0.0
    x, iit, cost = cg(Op, b_da, x0=x0, niter=niter, tol=tol, show=False)
    return iit


# parlops on the same rows
world = P()
call("parlops_comm_create_f", C.c_int(comm.py2f()), C.byref(world))
lay = P()
call("parlops_layout_create", world, C.c_int32(0), C.c_int64(N), C.c_int64(ln), C.byref(lay))
A = P()
call("parlops_op_create_csr", lay, lay, C.c_int32(1), C.c_int32(1), rp.ctypes.data_as(P), ci.ctypes.data_as(P),
     va.ctypes.data_as(P), C.byref(A))
bl, xl = np.ones(ln), np.zeros(ln)
b, x = P(), P()
call("parlops_vec_create_with_array", lay, C.c_int32(1), C.c_int32(0), bl.ctypes.data_as(P), C.byref(b))
call("parlops_vec_create_with_array", lay, C.c_int32(1), C.c_int32(0), xl.ctypes.data_as(P), C.byref(x))
s = P()
call("parlops_solver_create", world, C.c_int32(0), C.byref(s))
call("parlops_solver_set_operator", s, A)


def parlops_solve(niter, rtol):
    xl[:] = 0.0
    call("parlops_solver_set_tolerances", s, C.c_double(rtol), C.c_double(0.0), C.c_double(1e300), C.c_int64(niter))
    st = lib.parlops_solver_solve(s, b, x)
    if st not in (0, 17):
        call("parlops_solver_solve", s, b, x)
    info = SolveInfo()
    call("parlops_solver_info", s, C.byref(info))
    return info.iterations


def timed(runs):
    """ROUNDS interleaved rounds (order reversed every other round) of each run; seconds per iteration."""
    times = {k: [] for k in runs}
    for r in range(rounds):
        for name in (list(runs) if r % 2 == 0 else list(runs)[::-1]):
            comm.Barrier()
            t = time.perf_counter()
            runs[name]()
            dt = comm.allreduce(time.perf_counter() - t, op=MPI.MAX)
            times[name].append(dt / K)
    return times


def report(problem, title, its, times, labels):
    if rank != 0:
        return
    ref = None
    print(f"\n{problem}: {title}, {size} rank(s); PyLops-MPI {pylops_mpi.__version__}; "
          f"medians (min-max) of {rounds} interleaved rounds of {K} iterations")
    with open(jf, "a") as f:
        for name in times:
            t = sorted(times[name])
            med = t[len(t) // 2]
            ref = ref or med
            print(f"  {labels[name]:<48} {its[name]:7d} its  {1e3 * med:8.3f} ms/it "
                  f"({1e3 * t[0]:.3f}-{1e3 * t[-1]:.3f})  vs first {med / ref:.2f}")
            f.write(json.dumps({"problem": problem, "rows": N, "ranks": size, "solver": labels[name],
                                "iterations": its[name], "ms_per_it": 1e3 * med, "ms_min": 1e3 * t[0],
                                "ms_max": 1e3 * t[-1], "vs_first": med / ref, "floor_bytes_per_row": 0,
                                "x_floor": 0, "rounds": rounds, "timed_iterations": K}) + "\n")


# iteration counts to ||r|| <= 1e-8 ||b|| (PyLops-MPI compares its tol with ||r||^2)
bnorm = np.sqrt(N)
its = {"PyLops-MPI cg": pylops_solve(100000, (1e-8 * bnorm) ** 2), "parlops CG": parlops_solve(100000, 1e-8)}
times = timed({"PyLops-MPI cg": lambda: pylops_solve(K, 0.0), "parlops CG": lambda: parlops_solve(K, 0.0)})
report("pylops-poisson2d", f"2D Poisson {n}x{n} ({N} rows), CSR", its, times, {k: k for k in its})
call("parlops_solver_destroy", C.byref(s))

# PyLops' own Laplacian (MPILaplacian over both axes, centered, edge False: its boundary rows are
# zero, so the operator is singular and not symmetric) and parlops_op_laplacian, both matrix-free,
# in CGLS on b = 1 from x = 0 for the same number of iterations. Both iterates are compared.
dims = (n, n)
mine = local_split(dims, comm, Partition.SCATTER, 0)
lshapes = [int(np.prod(d)) for d in comm.allgather(mine)]
Lop = MPILaplacian(dims=dims, axes=(0, 1), weights=(1.0, 1.0), sampling=(1.0, 1.0), dtype=np.float64)
y_da = DistributedArray(global_shape=N, local_shapes=lshapes, dtype=np.float64)
y_da[:] = 1.0
shape = (C.c_int64 * 2)(n, n)
lay2, L = P(), P()
call("parlops_layout_create_nd", world, C.c_int32(0), C.c_int(2), shape, C.c_int(0), C.c_int64(mine[0]),
     C.byref(lay2))
ones2 = (C.c_double * 2)(1.0, 1.0)
call("parlops_op_laplacian", lay2, ones2, ones2, C.c_int32(1), C.byref(L))
n2 = lshapes[rank]
b2l, x2l = np.ones(n2), np.zeros(n2)
b2, x2, s2 = P(), P(), P()
call("parlops_vec_create_with_array", lay2, C.c_int32(1), C.c_int32(0), b2l.ctypes.data_as(P), C.byref(b2))
call("parlops_vec_create_with_array", lay2, C.c_int32(1), C.c_int32(0), x2l.ctypes.data_as(P), C.byref(x2))
call("parlops_solver_create", world, C.c_int32(3), C.byref(s2))  # PARLOPS_METHOD_CGLS
call("parlops_solver_set_operator", s2, L)


def pylops_cgls(niter):
    x0 = DistributedArray(global_shape=N, local_shapes=lshapes, dtype=np.float64)
    x0[:] = 0.0
    return cgls(Lop, y_da, x0=x0, niter=niter, tol=0.0, show=False)[0].local_array


def parlops_cgls(niter):
    x2l[:] = 0.0
    call("parlops_solver_set_tolerances", s2, C.c_double(0.0), C.c_double(0.0), C.c_double(1e300),
         C.c_int64(niter))
    st = lib.parlops_solver_solve(s2, b2, x2)
    if st not in (0, 17):
        call("parlops_solver_solve", s2, b2, x2)
    return x2l


# the same iterates: || x_pylops - x_parlops || / || x_parlops || after K iterations
d = pylops_cgls(K) - parlops_cgls(K)
num, den = comm.allreduce(float(d @ d)), comm.allreduce(float(x2l @ x2l))
diff = np.sqrt(num / den)
if diff > 1e-8:
    raise SystemExit(f"pylops_cg.py: CGLS iterates differ by {diff:.2e} relative after {K} iterations")
times = timed({"PyLops-MPI cgls": lambda: pylops_cgls(K), "parlops CGLS": lambda: parlops_cgls(K)})
report("pylops-laplacian2d", f"PyLops Laplacian {n}x{n} ({N} rows), matrix-free CGLS", {k: K for k in times},
       times, {"PyLops-MPI cgls": "PyLops-MPI cgls, MPILaplacian",
               "parlops CGLS": f"parlops CGLS, parlops_op_laplacian (x within {diff:.0e})"})
call("parlops_solver_destroy", C.byref(s2))
call("parlops_op_destroy", C.byref(L))
