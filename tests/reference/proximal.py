"""parlops' proximal operators and solvers against PyLops-MPI 0.8's (pylops_mpi.proximal), in one MPI
job (run under mpiexec, 1-4 ranks; uneven splits from 2 ranks on).

- L1 (PyProximal's, wrapped by MPIProxOperator), MPIL2 (with b and q) and MPIL21: value, prox, dual
  prox and gradient on the same vectors, f64 and c128 (L2's dual prox: the Moreau identity, which
  MPIL2 does not offer, against the identity computed from MPIL2.prox), to 1e-13.
- Total-variation denoising of a 2-D image by PrimalDual (f = MPIL2 with the noisy image as b,
  g = MPIL21 on MPIGradient's output): parlops' x after 100 iterations against PyLops-MPI's, to 1e-10.
- ProximalGradient with f = MPIL2(b), g = L1, no acceleration / Vandenberghe / FISTA, eta 1 and
  0.7, against PyLops-MPI's; the caller's L1 as callbacks (parlops_prox_create_shell) gives
  parlops' L1 bits; the objective's stopping rule (tol) stops where PyLops-MPI's does.
- One rank's callback failing fails every rank with PARLOPS_ERR_CALLBACK (12).
Prints "proximal: N passed, M failed" on rank 0 and exits non-zero on a failure.
"""
import ctypes as C
import os
import sys

import numpy as np

import pylops_mpi
import pyproximal
from pylops_mpi import StackedDistributedArray
from pylops_mpi.basicoperators import MPIGradient
from pylops_mpi.proximal import MPIProxOperator
from pylops_mpi.proximal.optimization.primal import ProximalGradient
from pylops_mpi.proximal.optimization.primaldual import PrimalDual
from pylops_mpi.proximal.proximal.L2 import MPIL2
from pylops_mpi.proximal.proximal.L21 import MPIL21

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parlops_ctypes import P, SolveInfo, call, lib  # noqa: E402

from ref_mpi import Tally, comm, dist, layout_2d, layout_1d, rank, rel, size, vec, world  # noqa: E402

t = Tally()
check = t.check
F32, F64, C64, C128 = 0, 1, 2, 3


# ---- 1. the proximal operators one by one
for dt, npt in ((F32, np.float32), (F64, np.float64), (C64, np.complex64), (C128, np.complex128)):
    rng = np.random.default_rng(7 + rank)
    nloc = 5 + 3 * rank
    lay = layout_1d(nloc)

    def rnd(n=nloc):
        a = rng.standard_normal(n)
        if np.iscomplexobj(npt(0)):
            a = a + 1j * rng.standard_normal(n)
        return a.astype(npt)

    x, b, q = rnd(), rnd(), rnd()
    hx, hb, hq = vec(lay, x, dt), vec(lay, b, dt), vec(lay, q, dt)
    y = np.zeros(nloc, npt)
    hy = vec(lay, y, dt)
    tau = 0.37
    val = C.c_double()
    name = {F32: "f32", F64: "f64", C64: "c64", C128: "c128"}[dt]
    # single precision: parlops computes in it, PyLops-MPI partly in double
    tol = 1e-13 if dt in (F64, C128) else 2e-6

    # L1
    pl1 = P()
    call("parlops_prox_create_l1", lay, C.c_int32(dt), C.c_double(0.6), C.byref(pl1))
    ref = MPIProxOperator(pyproximal.L1(sigma=0.6))
    call("parlops_prox_value", pl1, hx, C.byref(val))
    r = ref(dist(x))
    check(abs(val.value - r) <= tol * abs(r), f"L1 value {name}: {val.value} vs {r}")
    call("parlops_prox_apply", pl1, C.c_double(tau), hx, hy)
    check(rel(y, ref.prox(dist(x), tau).local_array) < tol, f"L1 prox {name}")
    if dt in (F32, F64):  # PyProximal's box projection is for real entries
        call("parlops_prox_apply_dual", pl1, C.c_double(tau), hx, hy)
        check(rel(y, ref.proxdual(dist(x), tau).local_array) < tol, f"L1 dual prox {name}")

    # L2 with b and q
    pl2 = P()
    call("parlops_prox_create_l2", lay, C.c_int32(dt), C.c_double(1.7), hb, hq, C.c_double(0.3), C.c_bool(True),
         C.byref(pl2))
    ref2 = MPIL2(b=dist(b), q=dist(q), sigma=1.7, alpha=0.3)
    if dt in (F32, F64):
        call("parlops_prox_value", pl2, hx, C.byref(val))
        r = ref2(dist(x))
        check(abs(val.value - r) <= tol * abs(r), f"L2 value {name}: {val.value} vs {r}")
    call("parlops_prox_apply", pl2, C.c_double(tau), hx, hy)
    check(rel(y, ref2.prox(dist(x), tau).local_array) < tol, f"L2 prox {name}")
    call("parlops_prox_gradient", pl2, hx, hy)
    check(rel(y, ref2.grad(dist(x)).local_array) < tol, f"L2 gradient {name}")
    call("parlops_prox_apply_dual", pl2, C.c_double(tau), hx, hy)
    moreau = x - tau * ref2.prox(dist(x / tau), 1.0 / tau).local_array
    check(rel(y, moreau) < tol, f"L2 dual prox (Moreau) {name}")

    # L21 on two blocks of each rank's entries
    pl21 = P()
    x2 = np.concatenate([x, rnd()])
    lay2 = layout_1d(2 * nloc)
    hx2 = vec(lay2, x2, dt)
    y2 = np.zeros(2 * nloc, npt)
    hy2 = vec(lay2, y2, dt)
    call("parlops_prox_create_l21", lay2, C.c_int32(dt), C.c_int(2), C.c_double(0.8), C.byref(pl21))
    ref21 = MPIL21(ndim=2, sigma=0.8)
    st = StackedDistributedArray([dist(x2[:nloc]), dist(x2[nloc:])])
    call("parlops_prox_value", pl21, hx2, C.byref(val))
    r = ref21(st)
    check(abs(val.value - r) <= tol * abs(r), f"L21 value {name}: {val.value} vs {r}")
    call("parlops_prox_apply", pl21, C.c_double(tau), hx2, hy2)
    p = ref21.prox(st, tau)
    check(rel(y2, np.concatenate([p[0].local_array, p[1].local_array])) < tol, f"L21 prox {name}")
    call("parlops_prox_apply_dual", pl21, C.c_double(tau), hx2, hy2)
    p = ref21.proxdual(st, tau)
    check(rel(y2, np.concatenate([p[0].local_array, p[1].local_array])) < tol, f"L21 dual prox {name}")
    for o in (pl1, pl2, pl21):
        call("parlops_prox_destroy", C.byref(o))

# ---- 2. total-variation denoising by PrimalDual
ny, nx = 23, 17
rng = np.random.default_rng(11)
yy, xx = np.mgrid[0:ny, 0:nx]
img = ((yy - 11) ** 2 + (xx - 8) ** 2 < 40).astype(float) + 0.3 * (xx > 12)
noisy = img + 0.2 * rng.standard_normal((ny, nx))
lnd, s0, l0 = layout_2d(ny, nx)
grad = P()
samp = (C.c_double * 2)(1.0, 1.0)
call("parlops_op_gradient", lnd, samp, C.c_int32(0), C.c_bool(False), C.c_int32(F64), C.byref(grad))
rows, cols = P(), P()
call("parlops_op_layouts", grad, C.byref(rows), C.byref(cols))
b_loc = noisy.ravel()[s0:s0 + l0].copy()
hb = vec(lnd, b_loc, F64)
pf, pg = P(), P()
lam = 0.3
call("parlops_prox_create_l2", lnd, C.c_int32(F64), C.c_double(1.0), hb, None, C.c_double(0.0), C.c_bool(True),
     C.byref(pf))
call("parlops_prox_create_l21", rows, C.c_int32(F64), C.c_int(2), C.c_double(lam), C.byref(pg))
# tau and mu exact in float32 (PyLops-MPI rounds scalar steps to float32) with 1 / (1 + tau) exact too
tau, mu, niter = 1.0, 0.0625, 100
xl = np.zeros(l0)
yl = np.zeros(2 * l0)
hx, hy = vec(lnd, xl, F64), vec(rows, yl, F64)
call("parlops_primal_dual", pf, pg, grad, None, C.c_double(tau), C.c_double(mu), C.c_double(1.0), C.c_int64(niter),
     C.c_bool(True), hx, hy)
G = MPIGradient(dims=(ny, nx), sampling=1.0, edge=False, kind="centered")
x0 = dist(np.zeros(l0))
y0 = G.matvec(x0)
xr = PrimalDual(MPIL2(b=dist(b_loc), sigma=1.0), MPIL21(ndim=2, sigma=lam), G, x0, y0, tau, mu, theta=1.0,
                niter=niter)
e = rel(xl, xr.local_array)
check(e < 1e-10, f"PrimalDual TV denoising x: {e:.2e}")
e_img = rel(xl, img.ravel()[s0:s0 + l0])
e_noisy = rel(b_loc, img.ravel()[s0:s0 + l0])
check(e_img < 0.8 * e_noisy, f"TV denoising reduces the error: {e_img:.3f} vs noisy {e_noisy:.3f}")
if rank == 0:
    print(f"PrimalDual TV ({ny}x{nx}, {niter} iterations, {size} ranks): |x - x_pylops_mpi|/|x| = {e:.1e}; "
          f"error to the clean image {e_img:.3f} (noisy {e_noisy:.3f})")
# gfirst false: against PyLops-MPI's
xl[:] = 0
yl[:] = 0
call("parlops_primal_dual", pf, pg, grad, None, C.c_double(tau), C.c_double(mu), C.c_double(1.0), C.c_int64(30),
     C.c_bool(False), hx, hy)
xr = PrimalDual(MPIL2(b=dist(b_loc), sigma=1.0), MPIL21(ndim=2, sigma=lam), G, x0, G.matvec(x0), tau, mu,
                theta=1.0, niter=30, gfirst=False)
e = rel(xl, xr.local_array)
check(e < 1e-10, f"PrimalDual gfirst=False x: {e:.2e}")

# ---- 3. ProximalGradient: f = L2(b), g = L1
nloc = 6 + 2 * rank
lay = layout_1d(nloc)
rng = np.random.default_rng(3 + rank)
bb = rng.standard_normal(nloc)
hb = vec(lay, bb, F64)
pf2, pl1, psh = P(), P(), P()
call("parlops_prox_create_l2", lay, C.c_int32(F64), C.c_double(1.0), hb, None, C.c_double(0.0), C.c_bool(True),
     C.byref(pf2))
call("parlops_prox_create_l1", lay, C.c_int32(F64), C.c_double(0.5), C.byref(pl1))
PROX = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_double, C.c_void_p, C.c_void_p)
VAL = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_void_p, C.POINTER(C.c_double))
fail_on = [-1]


@PROX
def my_l1(ctx, t, xp, yp):
    if rank == fail_on[0]:
        return 7
    xa = np.ctypeslib.as_array(C.cast(xp, C.POINTER(C.c_double)), (nloc,))
    ya = np.ctypeslib.as_array(C.cast(yp, C.POINTER(C.c_double)), (nloc,))
    ya[:] = np.maximum(np.abs(xa) - t * 0.5, 0.0) * np.sign(xa)
    return 0


@VAL
def my_l1_value(ctx, xp, v):
    xa = np.ctypeslib.as_array(C.cast(xp, C.POINTER(C.c_double)), (nloc,))
    v[0] = 0.5 * float(np.sum(np.abs(xa)))
    return 0


call("parlops_prox_create_shell", lay, C.c_int32(F64), None, my_l1, None, my_l1_value, None, None, C.byref(psh))
xl = np.zeros(nloc)
hx = vec(lay, xl, F64)
its = C.c_int64()
for acc, accname in ((0, None), (1, "vandenberghe"), (2, "fista")):
    for eta in (1.0, 0.7):
        xl[:] = 0
        call("parlops_proximal_gradient", pf2, pl1, C.c_double(0.4), C.c_double(1.0), C.c_double(eta),
             C.c_int64(40), C.c_int(acc), C.c_double(0.0), hx, C.byref(its))
        xr = ProximalGradient(MPIL2(b=dist(bb), sigma=1.0), MPIProxOperator(pyproximal.L1(sigma=0.5)),
                              dist(np.zeros(nloc)), epsg=1.0, tau=0.4, eta=eta, niter=40, acceleration=accname)
        e = rel(xl, xr.local_array)
        check(e < 1e-12 and its.value == 40, f"ProximalGradient {accname} eta {eta}: {e:.2e}, {its.value} its")
        keep = xl.copy()
        xl[:] = 0
        call("parlops_proximal_gradient", pf2, psh, C.c_double(0.4), C.c_double(1.0), C.c_double(eta),
             C.c_int64(40), C.c_int(acc), C.c_double(0.0), hx, C.byref(its))
        check(np.array_equal(xl, keep), f"ProximalGradient {accname} eta {eta}: the shell L1 gives L1's bits")
# the objective's stopping rule
xl[:] = 0
call("parlops_proximal_gradient", pf2, pl1, C.c_double(0.4), C.c_double(1.0), C.c_double(1.0), C.c_int64(500),
     C.c_int(2), C.c_double(1e-10), hx, C.byref(its))
xr = ProximalGradient(MPIL2(b=dist(bb), sigma=1.0), MPIProxOperator(pyproximal.L1(sigma=0.5)),
                      dist(np.zeros(nloc)), epsg=1.0, tau=0.4, niter=500, acceleration="fista", tol=1e-10)
e = rel(xl, xr.local_array)
check(e < 1e-12 and 1 < its.value < 500, f"ProximalGradient tol: {e:.2e} after {its.value} iterations")
if rank == 0:
    print(f"ProximalGradient (FISTA, tol 1e-10): {its.value} iterations, |x - x_pylops_mpi|/|x| = {e:.1e}")

# ---- 4. one rank's callback failing fails every rank
fail_on[0] = size - 1
xl[:] = 0
f = lib.parlops_proximal_gradient
f.restype = C.c_int
st = f(pf2, psh, C.c_double(0.4), C.c_double(1.0), C.c_double(1.0), C.c_int64(40), C.c_int(0), C.c_double(0.0), hx,
       None)
sts = comm.allgather(st)
check(all(s == 12 for s in sts), f"a callback failing on rank {size - 1}: statuses {sts}")
fail_on[0] = -1

# ---- 6. FISTA's cost rules (PyLops' CostToInitialCallback, CostToDataCallback) against PyLops' own
# fista on the same problem (A = diag(d), serial, the whole vector on every rank): the iteration it
# stops at, x, and the reason. (PyLops-MPI 0.8's fista takes rtol and rtol1 but does not stop on them.)
import pylops  # noqa: E402

nglob = comm.allreduce(nloc)
lo = comm.scan(nloc) - nloc
dg = 1.0 + (np.arange(nglob) % 7) / 3.0
bg = np.random.default_rng(21).standard_normal(nglob)
d_loc, b_loc2 = dg[lo:lo + nloc].copy(), bg[lo:lo + nloc].copy()  # kept alive: the vectors wrap them
hd = vec(lay, d_loc, F64)
hbb = vec(lay, b_loc2, F64)
D = P()
call("parlops_op_diagonal_matrix", hd, C.byref(D))
FISTA, SOFT = 10, 0
alpha = 1.0 / float(np.max(dg) ** 2)
# the rules' values from PyLops' own cost history, so that each stops the run about where chosen
_, _, c0 = pylops.optimization.sparsity.fista(pylops.Diagonal(dg), bg, niter=60, eps=0.5, alpha=alpha, tol=0.0)
r_init = 1.0001 * c0[24] / c0[0]
r_data = 1.0001 * c0[9] / np.linalg.norm(bg)
for rt, rt1, want in ((r_init, 0.0, 10), (0.0, r_data, 11)):
    s_ = P()
    call("parlops_solver_create", world, C.c_int32(FISTA), C.byref(s_))
    call("parlops_solver_set_operator", s_, D)
    call("parlops_solver_set_sparsity", s_, C.c_int32(SOFT), C.c_double(0.5), C.c_double(alpha))
    call("parlops_solver_set_tolerances", s_, C.c_double(1e-300), C.c_double(1e-300), C.c_double(1e10),
         C.c_int64(1000))
    call("parlops_solver_set_cost_tolerances", s_, C.c_double(rt), C.c_double(rt1))
    xl[:] = 0
    call("parlops_solver_solve", s_, hbb, hx)
    info = SolveInfo()
    call("parlops_solver_info", s_, C.byref(info))
    xr, itr, cost = pylops.optimization.sparsity.fista(pylops.Diagonal(dg), bg, niter=1000, eps=0.5, alpha=alpha,
                                                      tol=0.0, rtol=rt, rtol1=rt1)
    e = rel(xl, xr[lo:lo + nloc])
    check(info.reason == want and info.iterations == itr and itr < 60 and e < 1e-12,
          f"FISTA cost rule rtol {rt} rtol1 {rt1}: reason {info.reason} (want {want}), {info.iterations} iterations "
          f"(PyLops {itr}), |x - x_pylops| {e:.1e}")
    # the rule holds for the returned x: its cost recomputed
    xg = np.array(comm.allgather(xl.copy()), dtype=object)
    xg = np.concatenate(list(xg))
    j = 0.5 * np.linalg.norm(bg - dg * xg) ** 2 + 0.5 * np.sum(np.abs(xg))
    check(j < (rt * cost[0] if rt > 0 else rt1 * np.linalg.norm(bg)), f"FISTA cost rule holds: J = {j}")
    if rank == 0:
        print(f"FISTA with cost rtol {rt}, rtol1 {rt1}: reason {info.reason} after {info.iterations} iterations "
              f"(PyLops' fista: {itr}); |x - x_pylops| = {e:.1e}")
    call("parlops_solver_destroy", C.byref(s_))

# ---- 5. NaN in the data on one rank: PARLOPS_ERR_NOT_CONVERGED (17) on every rank, never OK
bn = bb.copy()
if rank == size - 1:
    bn[0] = np.nan
hbn = vec(lay, bn, F64)
pfn = P()
call("parlops_prox_create_l2", lay, C.c_int32(F64), C.c_double(1.0), hbn, None, C.c_double(0.0), C.c_bool(True),
     C.byref(pfn))
xl[:] = 0
st = f(pfn, pl1, C.c_double(0.4), C.c_double(1.0), C.c_double(1.0), C.c_int64(10), C.c_int(2), C.c_double(0.0), hx, None)
sts = comm.allgather(st)
check(all(s == 17 for s in sts), f"NaN in b on rank {size - 1}, proximal gradient: statuses {sts}")
g2 = lib.parlops_primal_dual
g2.restype = C.c_int
ident = P()
call("parlops_op_identity", lay, C.c_int32(F64), C.byref(ident))
yl2 = np.zeros(nloc)
hy2 = vec(lay, yl2, F64)
st = g2(pfn, pl1, ident, None, C.c_double(1.0), C.c_double(0.5), C.c_double(1.0), C.c_int64(10), C.c_bool(True), hx,
        hy2)
sts = comm.allgather(st)
check(all(s == 17 for s in sts), f"NaN in b on rank {size - 1}, primal-dual: statuses {sts}")

sys.exit(t.finish("proximal"))
