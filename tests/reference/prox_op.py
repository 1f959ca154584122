"""parlops' L2 misfit through an operator (parlops_prox_create_l2_op) and ADMM (parlops_admm_l2)
against PyLops-MPI 0.8's MPIL2 with Op and ADMML2, in one MPI job (run under mpiexec, 1-4 ranks;
uneven splits from 2 ranks on).

- MPIL2(Op, b, q, x0) on a block diagonal of dense blocks (one per rank, uneven sizes): value,
  gradient, and three prox calls in a row (warm starts) with CGLS and with CG on the normal
  equations, f64 and c128, to 1e-12.
- Total-variation deblurring by ADMML2 (Op: the block diagonal "blur", A: MPIGradient, g: MPIL21):
  x and z after 100 iterations against PyLops-MPI's, to 1e-10, with the inner cgls's defaults
  (10 iterations, tol 1e-4); 20 iterations without its tolerance, with gfirst, and with an L1 on
  a first derivative and z given.
- PrimalDual with f = MPIL2(Op, b) (deblurring: the prox by warm-started CGLS) and
  ProximalGradient with f = MPIL2(Op, b) (its gradient) and g = L1 (a LASSO), against PyLops-MPI.
- A failing operator callback on one rank inside the inner CGLS fails every rank
  (PARLOPS_ERR_CALLBACK); NaN in b on one rank is PARLOPS_ERR_NOT_CONVERGED on every rank.
Prints "prox_op: N passed, M failed" on rank 0 and exits non-zero on a failure.
"""
import ctypes as C
import os
import sys

import numpy as np

import pylops
import pyproximal
from pylops_mpi import MPIBlockDiag
from pylops_mpi.basicoperators import MPIFirstDerivative, MPIGradient
from pylops_mpi.proximal import MPIProxOperator
from pylops_mpi.proximal.optimization.primal import ADMML2, ProximalGradient
from pylops_mpi.proximal.optimization.primaldual import PrimalDual
from pylops_mpi.proximal.proximal.L2 import MPIL2
from pylops_mpi.proximal.proximal.L21 import MPIL21

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parlops_ctypes import P, call, lib  # noqa: E402

from ref_mpi import Tally, comm, dist, layout_2d, layout, ptr, rank, rel, selfc, size, vec, world  # noqa: E402

t = Tally()
check = t.check
F64, C128 = 1, 3
CG, CGLS = 0, 3


def block_diag(mat, dt):
    """parlops' block diagonal of this rank's dense block (PyLops-MPI's MPIBlockDiag of MatrixMult)."""
    data = np.ascontiguousarray(mat)
    d, bd = P(), P()
    call("parlops_op_create_dense", layout(selfc, mat.shape[0]), layout(selfc, mat.shape[1]), C.c_int32(dt),
         ptr(data), C.byref(d))
    call("parlops_op_block_diag", world, C.c_int32(dt), C.c_int(1), (P * 1)(d), C.byref(bd))
    return bd


def blur(n, seed):
    """A well-conditioned local 'blur': a smoothing band plus a little noise."""
    r = np.random.default_rng(seed)
    m = np.eye(n) * 0.6
    for k in (1, -1):
        m += np.eye(n, k=k) * 0.2
    return m + 0.05 * r.standard_normal((n, n))


# ---- 1. MPIL2 with an operator: value, gradient, three warm-started prox calls
for dt, npt in ((F64, np.float64), (C128, np.complex128)):
    rng = np.random.default_rng(40 + rank)
    m, n = 6 + 2 * rank, 5 + rank

    def rnd(k):
        a = rng.standard_normal(k)
        if dt == C128:
            a = a + 1j * rng.standard_normal(k)
        return a.astype(npt)

    mat = rng.standard_normal((m, n)).astype(npt)
    if dt == C128:
        mat = mat + 1j * rng.standard_normal((m, n))
    A = block_diag(mat, dt)
    ref_op = MPIBlockDiag(ops=[pylops.MatrixMult(mat, dtype=npt)])
    b, q, x, x0 = rnd(m), rnd(n), rnd(n), rnd(n)
    rows, cols = P(), P()
    call("parlops_op_layouts", A, C.byref(rows), C.byref(cols))
    hb, hq, hx, hx0 = vec(rows, b, dt), vec(cols, q, dt), vec(cols, x, dt), vec(cols, x0, dt)
    y = np.zeros(n, npt)
    hy = vec(cols, y, dt)
    name = {F64: "f64", C128: "c128"}[dt]
    for method, sname in ((CGLS, "cgls"), (CG, "cg")):
        for warm in (True, False):
            pf = P()
            call("parlops_prox_create_l2_op", A, C.c_double(1.3), hb, hq, C.c_double(0.4), C.c_bool(True),
                 C.c_int32(method), C.c_int64(7), C.c_double(1e-4), hx0, C.c_bool(warm), C.byref(pf))
            ref = MPIL2(Op=ref_op, b=dist(b), q=dist(q), sigma=1.3, alpha=0.4, niter=7, x0=dist(x0.copy()),
                        warm=warm, solver=sname)
            if method == CGLS and warm:
                val = C.c_double()
                call("parlops_prox_value", pf, hx, C.byref(val))
                if dt == F64:  # PyLops-MPI's value of a complex q^T x fails in float()
                    r = ref(dist(x))
                    check(abs(val.value - r) <= 1e-12 * abs(r), f"L2(Op) value {name}: {val.value} vs {r}")
                call("parlops_prox_gradient", pf, hx, hy)
                check(rel(y, ref.grad(dist(x)).local_array) < 1e-12, f"L2(Op) gradient {name}")
            for k, tau in enumerate((0.7, 0.7, 1.9)):
                call("parlops_prox_apply", pf, C.c_double(tau), hx, hy)
                e = rel(y, ref.prox(dist(x.copy()), tau).local_array)
                check(e < 1e-10, f"L2(Op) prox {name} {sname} warm {warm}, call {k + 1}: {e:.1e}")
            call("parlops_prox_destroy", C.byref(pf))
    mg, ng = comm.allreduce(m), comm.allreduce(n)
    if rank == 0 and dt == F64:
        print(f"MPIL2 with Op (block diagonal {mg} x {ng}): value, gradient and "
              f"warm-started prox by cgls and cg equal PyLops-MPI's (1e-12, 1e-10)")

# ---- 2. total-variation deblurring by ADMML2
ny, nx = 21, 13
yy, xx = np.mgrid[0:ny, 0:nx]
img = ((yy - 10) ** 2 + (xx - 6) ** 2 < 30).astype(float) + 0.4 * (xx > 9)
lnd, s0, l0 = layout_2d(ny, nx)
bmat = blur(l0, 60 + rank)
Bop = block_diag(bmat, F64)
ref_B = MPIBlockDiag(ops=[pylops.MatrixMult(bmat)])
rng = np.random.default_rng(61)
noise = 0.05 * rng.standard_normal(ny * nx)
d_loc = bmat @ img.ravel()[s0:s0 + l0] + noise[s0:s0 + l0]
hd = vec(lnd, d_loc, F64)
grad = P()
samp = (C.c_double * 2)(1.0, 1.0)
call("parlops_op_gradient", lnd, samp, C.c_int32(0), C.c_bool(False), C.c_int32(F64), C.byref(grad))
grows, gcols = P(), P()
call("parlops_op_layouts", grad, C.byref(grows), C.byref(gcols))
G = MPIGradient(dims=(ny, nx), sampling=1.0, edge=False, kind="centered")
lam = 0.05
pg = P()
call("parlops_prox_create_l21", grows, C.c_int32(F64), C.c_int(2), C.c_double(lam), C.byref(pg))
xl, zl = np.zeros(l0), np.zeros(2 * l0)
hx, hz = vec(lnd, xl, F64), vec(grows, zl, F64)
# tau a power of 4: 1/sqrt(tau) exact (PyLops-MPI scales the operator in the model's precision)
tau, niter = 0.25, 100
# (PyLops-MPI takes about 0.1 s an iteration here at 4 ranks on 2 cores: the variants run fewer)
for gfirst, ctol, kw, nit in ((False, 1e-4, {}, niter), (False, 0.0, {"tol": 0.0}, 20), (True, 1e-4, {}, 20)):
    if True:
        xl[:] = 0
        zl[:] = 0
        call("parlops_admm_l2", pg, Bop, hd, grad, C.c_double(tau), C.c_int64(nit), C.c_bool(gfirst),
             C.c_bool(False), C.c_int64(10), C.c_double(ctol), hx, hz)
        xr, zr = ADMML2(MPIL21(ndim=2, sigma=lam), ref_B, dist(d_loc), G, dist(np.zeros(l0)), tau, niter=nit,
                        gfirst=gfirst, kwargs_solver=kw)
        ex = rel(xl, xr.local_array)
        ez = rel(zl, np.concatenate([zr[0].local_array, zr[1].local_array]))
        check(ex < 1e-10 and ez < 1e-10, f"ADMML2 TV gfirst {gfirst} cgls tol {ctol}, {nit} its: x {ex:.1e}, z {ez:.1e}")
        if not gfirst and ctol > 0:
            e_img = rel(xl, img.ravel()[s0:s0 + l0])
            check(e_img < 0.5, f"ADMM TV deblurring error {e_img:.3f}")
            if rank == 0:
                print(f"ADMML2 TV deblurring ({ny}x{nx}, {niter} iterations, {size} ranks): |x - x_pylops_mpi|/|x| = "
                      f"{ex:.1e}, |z - z_pylops_mpi|/|z| = {ez:.1e}; error to the image {e_img:.3f}")
# an L1 on a first derivative along axis 0, z given
deriv = P()
call("parlops_op_first_derivative", lnd, C.c_int(0), C.c_double(1.0), C.c_int32(0), C.c_bool(False), C.c_int32(F64),
     C.byref(deriv))
pl1 = P()
call("parlops_prox_create_l1", lnd, C.c_int32(F64), C.c_double(0.1), C.byref(pl1))
z0 = np.random.default_rng(5 + rank).standard_normal(l0)
xl[:] = 0
zl1 = z0.copy()
hz1 = vec(lnd, zl1, F64)
call("parlops_admm_l2", pl1, Bop, hd, deriv, C.c_double(0.25), C.c_int64(20), C.c_bool(False), C.c_bool(True),
     C.c_int64(10), C.c_double(1e-4), hx, hz1)
D = MPIFirstDerivative(dims=(ny, nx), sampling=1.0, kind="centered", edge=False)
xr, zr = ADMML2(MPIProxOperator(pyproximal.L1(sigma=0.1)), ref_B, dist(d_loc), D, dist(np.zeros(l0)), 0.25,
                niter=20, z0=dist(z0.copy()))
ex, ez = rel(xl, xr.local_array), rel(zl1, zr.local_array)
check(ex < 1e-10 and ez < 1e-10, f"ADMML2 L1 of the first derivative, z given: x {ex:.1e}, z {ez:.1e}")

# ---- 3. PrimalDual with f = MPIL2(Op, b), and ProximalGradient with its gradient
x0z = np.zeros(l0)
hx0z = vec(lnd, x0z, F64)
pf = P()
call("parlops_prox_create_l2_op", Bop, C.c_double(1.0), hd, None, C.c_double(0.0), C.c_bool(True), C.c_int32(CGLS),
     C.c_int64(5), C.c_double(1e-4), hx0z, C.c_bool(True), C.byref(pf))
yl = np.zeros(2 * l0)
hy = vec(grows, yl, F64)
xl[:] = 0
npd = 40
call("parlops_primal_dual", pf, pg, grad, None, C.c_double(0.5), C.c_double(0.25), C.c_double(1.0), C.c_int64(npd),
     C.c_bool(True), hx, hy)
f_ref = MPIL2(Op=ref_B, b=dist(d_loc), sigma=1.0, niter=5, x0=dist(np.zeros(l0)), warm=True)
xr = PrimalDual(f_ref, MPIL21(ndim=2, sigma=lam), G, dist(np.zeros(l0)), G.matvec(dist(np.zeros(l0))), 0.5, 0.25,
                theta=1.0, niter=npd)
e = rel(xl, xr.local_array)
check(e < 1e-10, f"PrimalDual with L2(Op): {e:.1e}")
if rank == 0:
    print(f"PrimalDual TV deblurring with MPIL2(Op) (prox by 5 warm-started cgls iterations), {npd} iterations: "
          f"|x - x_pylops_mpi|/|x| = {e:.1e}")
pl1b = P()
call("parlops_prox_create_l1", lnd, C.c_int32(F64), C.c_double(0.02), C.byref(pl1b))
xl[:] = 0
its = C.c_int64()
call("parlops_proximal_gradient", pf, pl1b, C.c_double(0.5), C.c_double(1.0), C.c_double(1.0), C.c_int64(30),
     C.c_int(2), C.c_double(0.0), hx, C.byref(its))
xr = ProximalGradient(MPIL2(Op=ref_B, b=dist(d_loc), sigma=1.0, x0=dist(np.zeros(l0))),
                      MPIProxOperator(pyproximal.L1(sigma=0.02)), dist(np.zeros(l0)), epsg=1.0, tau=0.5, niter=30,
                      acceleration="fista")
e = rel(xl, xr.local_array)
check(e < 1e-10, f"ProximalGradient (FISTA) with L2(Op)'s gradient: {e:.1e}")

# ---- 4. failures on one rank fail every rank
APPLY = C.CFUNCTYPE(C.c_int, C.c_void_p, C.c_void_p, C.c_void_p)
fail = [False]


@APPLY
def shell_fwd(ctx, xp, yp):
    if fail[0] and rank == size - 1:
        return 5
    xa = np.ctypeslib.as_array(C.cast(xp, C.POINTER(C.c_double)), (l0,))
    ya = np.ctypeslib.as_array(C.cast(yp, C.POINTER(C.c_double)), (l0,))
    ya[:] = 2.0 * xa
    return 0


sh = P()
call("parlops_op_create_shell", lnd, lnd, C.c_int32(F64), C.c_int32(0), None, shell_fwd, shell_fwd, None, C.byref(sh))
admm = lib.parlops_admm_l2
admm.restype = C.c_int
fail[0] = True
xl[:] = 0
st = admm(pl1, sh, hd, deriv, C.c_double(0.25), C.c_int64(5), C.c_bool(False), C.c_bool(False), C.c_int64(10),
          C.c_double(1e-4), hx, hz1)
sts = comm.allgather(st)
check(all(v == 12 for v in sts), f"ADMM: the operator's callback failing on rank {size - 1}: statuses {sts}")
pfs = P()
fail[0] = False
call("parlops_prox_create_l2_op", sh, C.c_double(1.0), hd, None, C.c_double(0.0), C.c_bool(True), C.c_int32(CGLS),
     C.c_int64(5), C.c_double(0.0), None, C.c_bool(True), C.byref(pfs))
fail[0] = True
papply = lib.parlops_prox_apply
papply.restype = C.c_int
st = papply(pfs, C.c_double(0.5), hx, hx0z)
sts = comm.allgather(st)
check(all(v == 12 for v in sts), f"L2(Op) prox: the operator's callback failing on rank {size - 1}: statuses {sts}")
fail[0] = False
dn = d_loc.copy()
if rank == size - 1:
    dn[0] = np.nan
hdn = vec(lnd, dn, F64)
xl[:] = 0
st = admm(pl1, Bop, hdn, deriv, C.c_double(0.25), C.c_int64(5), C.c_bool(False), C.c_bool(False), C.c_int64(10),
          C.c_double(1e-4), hx, hz1)
sts = comm.allgather(st)
check(all(v == 17 for v in sts), f"ADMM: NaN in b on rank {size - 1}: statuses {sts}")

sys.exit(t.finish("prox_op"))
