"""parlops' multi-dimensional convolution (parlops_op_mdc) next to PyLops-MPI 0.8's MPIMDC on PyLops-MPI's
MDD tutorial (tutorials/mdd.py: a 799 x 61 two-sided model, G of 200 frequencies x 101 x 61,
prescaled), in double precision, in one MPI job, interleaved (run under mpiexec; `make bench` runs it
at 1 and 2 ranks). G is split by frequency as the tutorial splits it, the same for both.

Two timings, each as medians of ROUNDS interleaved rounds: one forward-plus-adjoint pair (K of them a
round), and the tutorial's inversion, CGLS for NITER iterations from zero. The answers are compared
first (the pair to 1e-12, CGLS after 20 iterations to 1e-10). The pair's rate is given in bytes of G
read (each product reads every rank's share of G once: nfmax ns nr 16 bytes in all), a lower bound
on its memory traffic. Appends JSON lines to the file given.
Usage: mpiexec -n P python mdc.py rounds K niter json-file
"""
import ctypes as C
import json
import os
import sys
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one thread per rank, both libraries
import numpy as np  # noqa: E402
from mpi4py import MPI  # noqa: E402

import pylops_mpi  # noqa: E402
from pylops_mpi.waveeqprocessing import MPIMDC  # noqa: E402

warnings.filterwarnings("ignore")
rounds, K, niter = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
jf = sys.argv[4]
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
from parlops_ctypes import P, call  # noqa: E402
from ref_mpi import interleaved  # noqa: E402

world = P()
call("parlops_comm_create_f", C.c_int(comm.py2f()), C.byref(world))
F64, C128, CGLS = 1, 3, 3

from mdd_tutorial import tutorial  # noqa: E402

# the tutorial's kernel and model
Gf, mtrue, nt2, nx, ny, nf, dt_tut = tutorial()
split = [nf // size + (1 if i < nf % size else 0) for i in range(size)]
lo = sum(split[:rank])
Gl = np.ascontiguousarray(Gf[lo:lo + split[rank]])
ref = MPIMDC(Gl, nt=nt2, nv=1, nfreq=nf, dt=dt_tut, dr=1.0, twosided=True, prescaled=True)
op = P()
call("parlops_op_mdc", world, C.c_int32(C128), C.c_int64(split[rank]), C.c_int64(ny), C.c_int64(nx), C.c_int64(nt2),
     C.c_int64(1), C.c_double(dt_tut), C.c_double(1.0), C.c_bool(True), C.c_bool(False), C.c_bool(True),
     Gl.ctypes.data_as(P), C.byref(op))


def bvec(arr):
    lay = P()
    call("parlops_layout_create", world, C.c_int32(1), C.c_int64(arr.size), C.c_int64(-1), C.byref(lay))
    h = P()
    call("parlops_vec_create_with_array", lay, C.c_int32(F64), C.c_int32(0), arr.ctypes.data_as(P), C.byref(h))
    call("parlops_layout_destroy", C.byref(lay))
    return h


def bcast(a):
    d = pylops_mpi.DistributedArray(global_shape=a.size, partition=pylops_mpi.Partition.BROADCAST)
    d[:] = a
    return d


m = bcast(mtrue.ravel())
d = ref @ m
dl = np.ascontiguousarray(np.real(d.local_array), dtype=np.float64)  # (PyLops-MPI's arrays may be complex)
xm, ym, x2 = np.array(m.local_array), np.zeros(dl.size), np.zeros(nt2 * nx)
hx, hy, hx2 = bvec(xm), bvec(ym), bvec(x2)
dcopy, ma = np.array(dl), np.zeros(nt2 * nx)  # kept: the vectors wrap them
hd = bvec(dcopy)
hm = bvec(ma)


def cgls_pl(n):
    s = P()
    call("parlops_solver_create", world, C.c_int32(CGLS), C.byref(s))
    call("parlops_solver_set_operator", s, op)
    call("parlops_solver_set_tolerances", s, C.c_double(1e-300), C.c_double(0.0), C.c_double(1e10), C.c_int64(n))
    ma[:] = 0.0
    call("parlops_solver_solve", s, hd, hm)
    call("parlops_solver_destroy", C.byref(s))
    return np.array(ma)


def cgls_pm(n):
    x0 = bcast(np.zeros(nt2 * nx))
    return np.real(np.array(pylops_mpi.cgls(ref, d, x0=x0, niter=n, tol=0.0)[0].local_array))


# the same answers first
call("parlops_op_apply", op, hx, hy)
e1 = np.linalg.norm(ym - dl) / np.linalg.norm(dl)
a_pl, a_pm = cgls_pl(20), cgls_pm(20)
e2 = np.linalg.norm(a_pl - a_pm) / np.linalg.norm(a_pm)
if e1 > 1e-12 or e2 > 1e-10:
    if rank == 0:
        print(f"mdc bench: parlops and PyLops-MPI differ: product {e1:.2e}, CGLS after 20 iterations {e2:.2e}", flush=True)
    sys.exit(1)


def pair_pm():
    for _ in range(K):
        y = ref @ m
        ref.H @ y


def pair_pl():
    for _ in range(K):
        call("parlops_op_apply", op, hx, hy)
        call("parlops_op_apply_adjoint", op, hy, hx2)


pm, pl = interleaved((pair_pm, pair_pl), rounds)
pm, pl = pm / K, pl / K
cm, cl = interleaved((lambda: cgls_pm(niter), lambda: cgls_pl(niter)), rounds)
gbytes = 2 * nf * ny * nx * 16 / 1e9  # G read by the forward and by the adjoint
if rank == 0:
    print(f"mdc {size} rank(s), MDD tutorial ({nt2} x {nx} model, {nf} x {ny} x {nx} G): forward+adjoint parlops "
          f"{pl * 1e3:.2f} ms ({gbytes / pl:.1f} GB/s of G), PyLops-MPI {pm * 1e3:.2f} ms: PyLops-MPI/parlops = "
          f"{pm / pl:.2f}x; CGLS {niter} iterations parlops {cl:.3f} s, PyLops-MPI {cm:.3f} s: {cm / cl:.2f}x "
          f"(medians of {rounds} interleaved rounds)", flush=True)
    with open(jf, "a") as f:
        f.write(json.dumps({"bench": "mdc", "ranks": size, "pair_parlops_s": pl, "pair_pylops_mpi_s": pm,
                            "cgls_parlops_s": cl, "cgls_pylops_mpi_s": cm, "niter": niter}) + "\n")
for h in (hx, hy, hx2, hd, hm):
    call("parlops_vec_destroy", C.byref(h))
call("parlops_op_destroy", C.byref(op))
