"""parlops against the references users trust, in one MPI job (run under mpiexec, 1-4 ranks).

- CG on the 2D Poisson problem against SciPy's cg with the same stopping rule
  (||r|| <= rtol ||b||): iteration counts within one, solutions close.
- CG and CGLS (with damping) against PyLops-MPI's cg and cgls on the same operators (a block
  diagonal of per-rank dense SPD blocks; a vertical stack of per-rank dense blocks): solutions to
  1e-10 relative, and CGLS's r1norm = ||y - A x||.
parlops is called through its C API (ctypes on libparlops.so), on mpi4py's communicator.
Prints "reference: N passed, M failed" on rank 0 and exits non-zero on a failure.
"""
import ctypes as C
import os
import sys

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from mpi4py import MPI

import pylops
import pylops_mpi

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parlops_ctypes import P, SolveInfo, call, lib  # noqa: E402

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"rank {rank}: FAILED: {what}", flush=True)


def pcomm(c):
    h = P()
    call("parlops_comm_create_f", C.c_int(c.py2f()), C.byref(h))
    return h


def layout(c, partition, n, local=-1):
    h = P()
    call("parlops_layout_create", c, C.c_int32(partition), C.c_int64(n), C.c_int64(local), C.byref(h))
    return h


def vec_from(lay, local):
    """A parlops vector wrapping a numpy array (no copy)."""
    h = P()
    call("parlops_vec_create_with_array", lay, C.c_int32(1), C.c_int32(0), local.ctypes.data_as(P), C.byref(h))
    return h


def gather_all(v, n):
    out = np.zeros(n)
    call("parlops_vec_gather", v, C.c_int(-1), out.ctypes.data_as(P))
    return out


def solve(method, op, b, x, rtol, max_iter, damp=0.0):
    s = P()
    call("parlops_solver_create", world, C.c_int32(method), C.byref(s))
    call("parlops_solver_set_operator", s, op)
    call("parlops_solver_set_tolerances", s, C.c_double(rtol), C.c_double(0.0), C.c_double(1e10), C.c_int64(max_iter))
    if damp:
        call("parlops_solver_set_damping", s, C.c_double(damp))
    call("parlops_solver_solve", s, b, x)
    info = SolveInfo()
    call("parlops_solver_info", s, C.byref(info))
    call("parlops_solver_destroy", C.byref(s))
    return info


world = pcomm(comm)
selfc = pcomm(MPI.COMM_SELF)
CG, CGLS = 0, 3

# ---- 1. Poisson CG against SciPy: iteration count and solution
n = 64
N = n * n
lay = layout(world, 0, N)
start, ln = C.c_int64(), C.c_int64()
call("parlops_layout_local_range", lay, C.byref(start), C.byref(ln))
s0, l0 = start.value, ln.value
rp, ci, va = [0], [], []
for r in range(s0, s0 + l0):
    i, j = divmod(r, n)
    for ok, c, v in ((i > 0, r - n, -1.0), (j > 0, r - 1, -1.0), (True, r, 4.0), (j < n - 1, r + 1, -1.0), (i < n - 1, r + n, -1.0)):
        if ok:
            ci.append(c)
            va.append(v)
    rp.append(len(ci))
rp, ci, va = np.array(rp, np.int64), np.array(ci, np.int64), np.array(va)
A = P()
call("parlops_op_create_csr", lay, lay, C.c_int32(1), C.c_int32(1), rp.ctypes.data_as(P), ci.ctypes.data_as(P),
     va.ctypes.data_as(P), C.byref(A))
bl, xl = np.ones(l0), np.zeros(l0)
b, x = vec_from(lay, bl), vec_from(lay, xl)
rtol = 1e-8
info = solve(CG, A, b, x, rtol, 10000)
xs = gather_all(x, N)
T = sp.diags_array([-1.0, -1.0, 4.0, -1.0, -1.0], offsets=[-n, -1, 0, 1, n], shape=(N, N)).tolil()
for k in range(1, n):  # no coupling across grid rows
    T[k * n, k * n - 1] = 0
    T[k * n - 1, k * n] = 0
T = T.tocsr()
its = [0]
xr, flag = spla.cg(T, np.ones(N), rtol=rtol, atol=0.0, maxiter=10000, callback=lambda _: its.__setitem__(0, its[0] + 1))
check(flag == 0 and info.reason > 0, f"both converge (SciPy flag {flag}, parlops reason {info.reason})")
check(abs(info.iterations - its[0]) <= 1, f"CG iterations: parlops {info.iterations}, SciPy {its[0]}")
err = np.linalg.norm(xs - xr) / np.linalg.norm(xr)
check(err < 1e-6, f"Poisson solution vs SciPy: {err:.2e}")
if rank == 0:
    print(f"Poisson {n}x{n}, rtol {rtol}: CG iterations parlops {info.iterations}, SciPy {its[0]}; |x - x_scipy|/|x| = {err:.1e}")

# ---- 2. CG against PyLops-MPI on a block diagonal of dense SPD blocks (uneven sizes)
rng = np.random.default_rng(100 + rank)
m = 4 + 2 * rank
G = rng.standard_normal((m, m))
Ar = G @ G.T + m * np.eye(m)
Op = pylops_mpi.MPIBlockDiag(ops=[pylops.MatrixMult(Ar)])
y = pylops_mpi.DistributedArray(global_shape=Op.shape[0], local_shapes=comm.allgather((m,)))
y[:] = np.arange(m, dtype=float) + rank
x0 = pylops_mpi.DistributedArray(global_shape=Op.shape[1], local_shapes=comm.allgather((m,)))
x0[:] = 0.0
xp = pylops_mpi.optimization.basic.cg(Op, y, x0, niter=500, tol=1e-28)[0].asarray()


def local_dense(a):
    rl, cl = layout(selfc, 0, a.shape[0]), layout(selfc, 0, a.shape[1])
    h = P()
    data = np.ascontiguousarray(a, dtype=float)
    call("parlops_op_create_dense", rl, cl, C.c_int32(1), data.ctypes.data_as(P), C.byref(h))
    return h


blocks = (P * 1)(local_dense(Ar))
BD = P()
call("parlops_op_block_diag", world, C.c_int32(1), C.c_int(1), blocks, C.byref(BD))
lb = layout(world, 0, Op.shape[0], m)
yl, xl2 = np.array(y.local_array, dtype=float), np.zeros(m)
info = solve(CG, BD, vec_from(lb, yl), vec_from(lb, xl2), 1e-14, 500)
xq = gather_all(vec_from(lb, xl2), Op.shape[1])
err = np.linalg.norm(xq - xp) / np.linalg.norm(xp)
check(err < 1e-10, f"CG vs PyLops-MPI cg: {err:.2e}")
if rank == 0:
    print(f"CG on a block-diagonal SPD operator ({Op.shape[0]} unknowns): |x - x_pylops_mpi|/|x| = {err:.1e}")

# ---- 3. CGLS with damping against PyLops-MPI on a vertical stack (x replicated)
ncol, damp = 7, 0.5
mr = 6 + rank
B = rng.standard_normal((mr, ncol))
Vop = pylops_mpi.MPIVStack(ops=[pylops.MatrixMult(B)])
yv = pylops_mpi.DistributedArray(global_shape=Vop.shape[0], local_shapes=comm.allgather((mr,)))
yv[:] = np.sin(np.arange(mr) + 3.0 * rank)
xv0 = pylops_mpi.DistributedArray(global_shape=ncol, partition=pylops_mpi.Partition.BROADCAST)
xv0[:] = 0.0
res = pylops_mpi.optimization.basic.cgls(Vop, yv, xv0, niter=200, damp=damp, tol=1e-30)
xpv = res[0].asarray()
vblocks = (P * 1)(local_dense(B))
VS = P()
call("parlops_op_vstack", world, C.c_int32(1), C.c_int(1), vblocks, C.byref(VS))
lr = layout(world, 0, Vop.shape[0], mr)
lc = layout(world, 1, ncol)  # broadcast
yvl, xvl = np.array(yv.local_array, dtype=float), np.zeros(ncol)
info = solve(CGLS, VS, vec_from(lr, yvl), vec_from(lc, xvl), 1e-14, 200, damp)
err = np.linalg.norm(xvl - xpv) / np.linalg.norm(xpv)
check(err < 1e-10, f"CGLS vs PyLops-MPI cgls (damp {damp}): {err:.2e}")
Bfull = np.vstack(comm.allgather(B))
yfull = np.concatenate(comm.allgather(np.array(yv.local_array)))
r1 = np.linalg.norm(yfull - Bfull @ xvl)
check(abs(info.r1norm - r1) < 1e-10 * max(r1, 1.0), f"CGLS r1norm {info.r1norm} vs ||y - A x|| {r1}")
check(abs(info.r2norm - np.sqrt(r1 ** 2 + damp ** 2 * xvl @ xvl)) < 1e-10 * max(r1, 1.0), "CGLS r2norm")
xn = np.linalg.solve(Bfull.T @ Bfull + damp ** 2 * np.eye(ncol), Bfull.T @ yfull)
check(np.linalg.norm(xvl - xn) / np.linalg.norm(xn) < 1e-10, "CGLS vs the damped normal equations")
if rank == 0:
    print(f"CGLS (damp {damp}) on a {Vop.shape[0]}x{ncol} stack: |x - x_pylops_mpi|/|x| = {err:.1e}, r1norm {info.r1norm:.6e}")

tot = comm.allreduce(np.array([passed, failed]))
if rank == 0:
    print(f"reference ({size} ranks): {tot[0]} passed, {tot[1]} failed")
sys.exit(1 if tot[1] else 0)
