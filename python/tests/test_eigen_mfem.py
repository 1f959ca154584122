"""Krylov-Schur on MFEM-assembled matrices (tests/eigen/beam_matrices.cpp: MFEM's example 2 beam,
beam-tri.mesh refined 3 times, elasticity stiffness K and mass M without the fixed degrees of
freedom), against SciPy: the dense eigenvalues (scipy.linalg.eigh) and ARPACK (scipy's eigsh), at
any rank count with an uneven split. The 4 smallest and 6 largest eigenvalues of K without a spectral
transformation (condition number about 1e7: thousands of products with a basis of 24; the Lanczos
of the first round took minutes for the smallest), the pencil (K, M): its largest with M^-1 a
Jacobi-CG inverse, its smallest by shift-and-invert about 0 (K^-1 by AMG-CG), and the 4 nearest a
shift inside the spectrum by shift-and-invert with a MINRES inverse of K - sigma M (tol 1e-6 on
the true relative residual with inner solves to 1e-10 and 1e-12: the eigenvalues, accurate to about
the square of it, still agree to 1e-8); each eigenvalue
to 1e-8 relative (the smallest without a transformation too: 0.9e-10-1.9e-10 at 1-4 ranks since the
final Rayleigh-Ritz step of A; 1.3e-8-1.9e-8 at 3-4 ranks from the restarted projected matrix
before it), each pair's backward error from the dense matrices at most tol. Prints "eigen (MFEM beam) at N
rank(s): P passed, F failed". Usage: test_eigen_mfem.py K.bin M.bin"""
import sys
import time

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from mpi4py import MPI

import parlops
from eigen_tally import check, finish

W = MPI.COMM_WORLD
rank, size = W.rank, W.size
comm = parlops.Comm(W)


def load(path):
    with open(path, "rb") as f:
        n, nnz = np.fromfile(f, np.int64, 2)
        ptr = np.fromfile(f, np.int64, n + 1)
        col = np.fromfile(f, np.int32, nnz)
        val = np.fromfile(f, np.float64, nnz)
    return sp.csr_matrix((val, col, ptr), shape=(n, n))


K, M = load(sys.argv[1]), load(sys.argv[2])
n = K.shape[0]
# uneven split in whole nodes (2 dofs): the first rank 2 nodes short, the last 2 long
nodes = n // 2
lens = [nodes // size + (1 if r < nodes % size else 0) for r in range(size)]
if size > 1:
    lens[0] -= 2
    lens[-1] += 2
lens = [2 * x for x in lens]
lo = sum(lens[:rank])
hi = lo + lens[rank]
lay = parlops.Layout(comm, local_len=lens[rank])
Kop = parlops.Operator.from_scipy(lay, lay, K[lo:hi])
Mop = parlops.Operator.from_scipy(lay, lay, M[lo:hi])
Kd, Md = K.toarray(), M.toarray()
ref = np.linalg.eigvalsh(Kd)
refg = sla.eigh(Kd, Md, eigvals_only=True)
check(abs(sla.norm(Kd - Kd.T)) <= 1e-12 * sla.norm(Kd), "K is symmetric")
if rank == 0:
    print(f"eigen (MFEM beam): {n} rows, {K.nnz} nonzeros, condition {ref[-1] / ref[0]:.2e}", flush=True)

# ARPACK agrees with the dense reference (the second reference)
ars = np.sort(spla.eigsh(K.tocsc(), k=4, sigma=0.0, which="LM", return_eigenvectors=False))
arl = np.sort(spla.eigsh(K, k=6, which="LA", return_eigenvectors=False))[::-1]
check(np.allclose(ars, ref[:4], rtol=1e-10) and np.allclose(arl, ref[::-1][:6], rtol=1e-10),
      f"scipy eigsh {ars}, {arl} against the dense eigenvalues")


def rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b)) / np.abs(np.asarray(b))))


KN = np.linalg.norm(Kd, 2)


def true_res(vecs, vals, B=None):
    """The largest backward error ||K x - lambda B x|| / ((||K|| + |lambda| ||B||) ||x||) of the pairs
    (rounding level: the smallest eigenvalues of a matrix of condition 1e7 are accurate to about
    eps ||K|| / lambda, as LAPACK's)."""
    out = 0.0
    BN = 1.0 if B is None else np.linalg.norm(B, 2)
    for v, lam in zip(vecs, vals):
        x = v.gather()
        bx = x if B is None else B @ x
        out = max(out, np.linalg.norm(Kd @ x - lam * bx) / ((KN + abs(lam) * BN) * np.linalg.norm(x)))
    return out


v0 = parlops.Vector(lay).set_random(seed=3)
# the 1e-8 for both ends without a spectral transformation (the rounding floor of the
# smallest is about eps ||K|| / lambda = 2.4e-9, LAPACK's as well)
for which, k, ncv, want, rtol in [("smallest", 4, 24, ref[:4], 1e-8), ("largest", 6, 24, ref[::-1][:6], 1e-8)]:
    t0 = time.perf_counter()
    ev, res, vecs, prods = parlops.krylov_schur(Kop, k=k, which=which, ncv=ncv, tol=1e-10, v0=v0,
                                                max_products=200000, return_eigenvectors=True)
    dt = time.perf_counter() - t0
    tr = true_res(vecs, ev)
    check(rel(ev, want) <= rtol and tr <= 1e-10,
          f"K, {k} {which}: {ev} against {want} ({rel(ev, want):.1e}), backward error {tr:.1e}")
    check(rel(ev, ars if which == "smallest" else arl) <= rtol, f"K, {which}: against scipy's eigsh")
    if rank == 0:
        print(f"eigen (MFEM beam) K, {k} {which}, ncv {ncv}, tol 1e-10: {prods} products, {dt:.2f} s, "
              f"max relative error {rel(ev, want):.1e}", flush=True)
amg = parlops.Operator.boomeramg(Kop, num_functions=2)
kinv = parlops.Operator.inverse(parlops.Solver(comm, "cg", Kop, rtol=1e-10, max_it=5000, pc=amg))
t0 = time.perf_counter()
ev, res, vecs, prods = parlops.krylov_schur(Kop, k=4, which="nearest", sigma=0.0, inv=kinv, ncv=20, tol=1e-6,
                                            v0=v0, return_eigenvectors=True)
dt = time.perf_counter() - t0
tr = true_res(vecs, ev)
check(rel(ev, ref[:4]) <= 1e-8 and rel(ev, ars) <= 1e-8 and tr <= 1e-6,
      f"K, 4 nearest 0: {ev} against {ref[:4]} ({rel(ev, ref[:4]):.1e}), eigsh {ars}, backward error {tr:.1e}")
if rank == 0:
    print(f"eigen (MFEM beam) K, 4 nearest 0 (AMG-CG inverse to 1e-10), ncv 20, tol 1e-6: {prods} products, {dt:.2f} s, "
          f"max relative error {rel(ev, ref[:4]):.1e}", flush=True)

# the pencil (K, M): the largest with M^-1 by CG with Jacobi (OP = M^-1 K); the smallest by
# shift-and-invert about 0 with K^-1 by CG with BoomerAMG (OP = K^-1 M: the smallest of a pencil of
# condition 1e8 converge in a few dozen products instead of tens of thousands)
minv = parlops.Operator.inverse(parlops.Solver(comm, "cg", Mop, rtol=1e-14, max_it=2000, pc="jacobi"))
for which, want, inv in [("largest", refg[::-1][:4], minv), ("nearest", refg[:4], kinv)]:
    t0 = time.perf_counter()
    tol = 1e-10 if which == "largest" else 1e-6
    ev, res, vecs, prods = parlops.krylov_schur(Kop, k=4, which=which, sigma=0.0, b=Mop, inv=inv, ncv=20,
                                                tol=tol, v0=v0, max_products=200000, return_eigenvectors=True)
    dt = time.perf_counter() - t0
    tr = true_res(vecs, ev, Md)
    # M-orthonormal eigenvectors
    X = np.array([v.gather() for v in vecs]).T
    orth = np.max(np.abs(X.T @ Md @ X - np.eye(4)))
    check(rel(ev, want) <= 1e-8 and tr <= tol and orth <= 1e-10,
          f"(K, M), 4 {which}: {ev} against {want} ({rel(ev, want):.1e}), backward error {tr:.1e}, "
          f"X^T M X - I {orth:.1e}")
    if rank == 0:
        print(f"eigen (MFEM beam) (K, M), 4 {which}{' 0' if which == 'nearest' else ''}: {prods} products, "
              f"{dt:.2f} s, max relative error {rel(ev, want):.1e}", flush=True)

# shift-and-invert inside the spectrum of the pencil: MINRES on K - sigma M (indefinite)
sigma = float(0.6 * refg[30] + 0.4 * refg[31])
near = refg[np.argsort(np.abs(refg - sigma))[:4]]
S = (K - sigma * M).tocsr()
Sop = parlops.Operator.from_scipy(lay, lay, S[lo:hi])
# (rtol 1e-11: this system's true residual stalls near 1.0012e-12 ||b||, so MINRES, which confirms a
# convergence on the true residual, can never meet 1e-12 and runs to max_it)
sinv = parlops.Operator.inverse(parlops.Solver(comm, "minres", Sop, rtol=1e-11, max_it=100000))
ev, res, vecs, prods = parlops.krylov_schur(Kop, k=4, which="nearest", sigma=sigma, b=Mop, inv=sinv, ncv=16,
                                            tol=1e-6, v0=v0, return_eigenvectors=True)
tr = true_res(vecs, ev, Md)
check(rel(ev, near) <= 1e-8 and tr <= 1e-6,
      f"(K, M) nearest {sigma:.6g}: {ev} against {near} ({rel(ev, near):.1e}), backward error {tr:.1e}, {prods} products")
if rank == 0:
    print(f"eigen (MFEM beam) (K, M), 4 nearest {sigma:.6g} (MINRES inverse): {prods} products, "
          f"max relative error {rel(ev, near):.1e}", flush=True)

# bad input fails on every rank, naming the argument
for kw, word in [(dict(k=4, ncv=4), "ncv"), (dict(k=4, which="smallest", b=Mop), "without inv"),
                 (dict(k=2, which="nearest", sigma=1.0), "inv is NULL")]:
    try:
        parlops.krylov_schur(Kop, **kw)
        check(False, f"{kw} refused")
    except parlops.ParlopsError as e:
        check(word in str(e), f"{kw}: {e}")

finish("eigen (MFEM beam)")
