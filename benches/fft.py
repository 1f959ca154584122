"""parlops' distributed FFT (parlops_op_fft) next to PyLops-MPI 0.8's MPIFFTND (mpi4py-fft on FFTW)
on the same arrays, in one MPI job, interleaved (run under mpiexec; `make bench` runs it at 1 and 2
ranks; issue 36 asks parlops for at least 3x).

Each case applies the forward and then the adjoint (one "pair") to a complex128 array split along
axis 0 as PyLops-MPI splits it (its default DistributedArray of the flattened array, reshaped): a 3-D
complex transform over all axes, a 2-D one, and a 3-D real (real=True) one. The two results are
compared first (to 1e-12 relative), then ROUNDS interleaved rounds time K pairs of each; the medians
and their ratio are printed, with the rate in the usual FFT flop count (5 N log2 N per complex
transform of N points, each way; the real form counted as complex: an upper bound on its work).
Appends JSON lines to the file given.
Usage: mpiexec -n P python fft.py rounds K json-file
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
from pylops_mpi.signalprocessing import MPIFFTND  # noqa: E402

warnings.filterwarnings("ignore")
rounds, K = int(sys.argv[1]), int(sys.argv[2])
jf = sys.argv[3]
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
from parlops_ctypes import P, call  # noqa: E402
from ref_mpi import interleaved  # noqa: E402

world = P()
call("parlops_comm_create_f", C.c_int(comm.py2f()), C.byref(world))
C128 = 3


def local_range(lay):
    s, n = C.c_int64(), C.c_int64()
    call("parlops_layout_local_range", lay, C.byref(s), C.byref(n))
    return s.value, n.value


def case(dims, axes, real):
    n = int(np.prod(dims))
    rng = np.random.default_rng(5)
    xg = rng.standard_normal(n) + (0 if real else 1j * rng.standard_normal(n))
    xg = xg.astype(np.complex128)
    Op = MPIFFTND(dims=dims, axes=axes, real=real, dtype=np.float64 if real else np.complex128)
    xd = pylops_mpi.DistributedArray(global_shape=n, dtype=np.float64 if real else np.complex128)
    off = sum(s[0] for s in xd.local_shapes[:rank])
    xd[:] = (xg.real if real else xg)[off:off + xd.local_array.size]
    # parlops: the same split along axis 0 (PyLops-MPI's default: the first n0 % P ranks one more row)
    n0 = dims[0]
    rows = n0 // size + (1 if rank < n0 % size else 0)
    lay = P()
    call("parlops_layout_create_nd", world, C.c_int32(0), C.c_int(len(dims)), (C.c_int64 * len(dims))(*dims),
         C.c_int(0), C.c_int64(rows), C.byref(lay))
    op = P()
    call("parlops_op_fft", lay, C.c_int(len(axes)), (C.c_int * len(axes))(*axes), C.c_int(0), C.c_bool(real),
         None, None, C.c_int32(1 if real else C128), C.byref(op))
    rl, cl = P(), P()
    call("parlops_op_layouts", op, C.byref(rl), C.byref(cl))
    xs, xn = local_range(cl)
    ys, yn = local_range(rl)
    xl = np.ascontiguousarray(xg[xs:xs + xn])
    yl = np.zeros(yn, np.complex128)
    hx, hy = P(), P()
    call("parlops_vec_create_with_array", cl, C.c_int32(C128), C.c_int32(0), xl.ctypes.data_as(P), C.byref(hx))
    call("parlops_vec_create_with_array", rl, C.c_int32(C128), C.c_int32(0), yl.ctypes.data_as(P), C.byref(hy))
    hx2 = P()
    x2 = np.zeros(xn, np.complex128)
    call("parlops_vec_create_with_array", cl, C.c_int32(C128), C.c_int32(0), x2.ctypes.data_as(P), C.byref(hx2))

    # the same answer first
    yref = (Op @ xd).asarray()
    call("parlops_op_apply", op, hx, hy)
    yall = np.zeros(yref.size, np.complex128)
    call("parlops_vec_gather", hy, C.c_int(-1), yall.ctypes.data_as(P))
    err = np.linalg.norm(yall - yref) / np.linalg.norm(yref)
    if err > 1e-12:
        if rank == 0:
            print(f"fft bench {dims} axes {axes} real {real}: parlops and PyLops-MPI differ by {err:.2e}", flush=True)
        sys.exit(1)

    def run_pm():
        for _ in range(K):
            y = Op @ xd
            Op.H @ y

    def run_pl():
        for _ in range(K):
            call("parlops_op_apply", op, hx, hy)
            call("parlops_op_apply_adjoint", op, hy, hx2)

    mp, ml = (t / K for t in interleaved((run_pm, run_pl), rounds))
    flops = 2 * 5 * n * np.log2(np.prod([dims[a] for a in axes]))
    if rank == 0:
        form = "real" if real else "complex"
        print(f"fft {size} rank(s) {dims} axes {axes} {form}: forward+adjoint parlops {ml * 1e3:.2f} ms "
              f"({flops / ml / 1e9:.2f} GF/s), PyLops-MPI MPIFFTND {mp * 1e3:.2f} ms; "
              f"PyLops-MPI/parlops = {mp / ml:.2f}x (medians of {rounds} interleaved rounds of {K})", flush=True)
        with open(jf, "a") as f:
            f.write(json.dumps({"bench": "fft", "ranks": size, "dims": list(dims), "axes": list(axes),
                                "real": real, "parlops_s": ml, "pylops_mpi_s": mp, "ratio": mp / ml}) + "\n")
    for hh in (hx, hy, hx2):
        call("parlops_vec_destroy", C.byref(hh))
    for hh in (rl, cl, lay):
        call("parlops_layout_destroy", C.byref(hh))
    call("parlops_op_destroy", C.byref(op))


case((128, 128, 128), (0, 1, 2), False)
case((1024, 1024), (0, 1), False)
case((128, 128, 128), (0, 1, 2), True)
