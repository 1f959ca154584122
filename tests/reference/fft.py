"""parlops' distributed FFT (parlops_op_fft) against PyLops-MPI 0.8's MPIFFTND and MPIFFT2D (on
mpi4py-fft), in one MPI job (run under mpiexec, 1-4 ranks; parlops' x split unevenly along axis 0,
with an empty rank from 3 ranks on).

For 2-, 3- and 4-D arrays, complex and real models (f64/c128 to 1e-12 relative, f32/c64 to 1e-5:
PyLops-MPI transforms those in double and rounds), every norm, real=True with the real axis last,
first or in the middle, ifftshift_before and fftshift_after: the forward and the adjoint of the
same vectors, gathered, against PyLops-MPI's. Prints "fft: N passed, M failed" on rank 0 and exits
non-zero on a failure.
"""
import ctypes as C
import os
import sys
import warnings

import numpy as np
from mpi4py import MPI

import pylops_mpi
from pylops_mpi.signalprocessing import MPIFFT2D, MPIFFTND

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parlops_ctypes import P, call  # noqa: E402

warnings.filterwarnings("ignore")  # PyLops-MPI warns that NumPy's FFT returns complex128
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
passed = failed = 0
F32, F64, C64, C128 = 0, 1, 2, 3
NP = {F32: np.float32, F64: np.float64, C64: np.complex64, C128: np.complex128}
CX = {F32: np.complex64, F64: np.complex128, C64: np.complex64, C128: np.complex128}


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"rank {rank}: FAILED: {what}", flush=True)


h = P()
call("parlops_comm_create_f", C.c_int(comm.py2f()), C.byref(h))
world = h


def rows_uneven(n0):
    r = [n0 // size + (1 if i < n0 % size else 0) for i in range(size)]
    if size > 2:
        r[0] += r[1]
        r[1] = 0
    return r


def local_range(lay):
    s, n = C.c_int64(), C.c_int64()
    call("parlops_layout_local_range", lay, C.byref(s), C.byref(n))
    return s.value, n.value


def run(dims, axes, dt, real=False, norm="none", ish=False, fsh=False, two_d=False):
    global passed, failed
    nax = len(axes)
    ish = [ish] * nax if isinstance(ish, bool) else list(ish)
    fsh = [fsh] * nax if isinstance(fsh, bool) else list(fsh)
    what = f"FFT dims {dims} axes {axes} {NP[dt].__name__} real {real} norm {norm} shifts {ish}/{fsh}"
    rng = np.random.default_rng(11)
    n = int(np.prod(dims))
    xg = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    if dt in (F32, F64):
        xg = xg.real
    xg = xg.astype(NP[dt])
    # PyLops-MPI
    kw = dict(axes=tuple(axes), norm=norm, real=real, ifftshift_before=tuple(ish), fftshift_after=tuple(fsh),
              dtype=NP[dt])
    Op = MPIFFT2D(dims=dims, **kw) if two_d else MPIFFTND(dims=dims, **kw)
    xd = pylops_mpi.DistributedArray(global_shape=n, dtype=NP[dt])
    off = sum(s[0] for s in xd.local_shapes[:rank])
    xd[:] = xg[off:off + xd.local_array.size]
    yref = (Op @ xd).asarray()
    m = yref.size
    yg = (np.random.default_rng(12).standard_normal(m) + 1j * np.random.default_rng(13).standard_normal(m))
    yg = yg.astype(CX[dt])
    yd = pylops_mpi.DistributedArray(global_shape=m, dtype=CX[dt])
    offy = sum(s[0] for s in yd.local_shapes[:rank])
    yd[:] = yg[offy:offy + yd.local_array.size]
    xref = Op.H @ yd
    xref = xref.asarray()
    # parlops
    rows = rows_uneven(dims[0])
    lay = P()
    shape = (C.c_int64 * len(dims))(*dims)
    call("parlops_layout_create_nd", world, C.c_int32(0), C.c_int(len(dims)), shape, C.c_int(0),
         C.c_int64(rows[rank]), C.byref(lay))
    op = P()
    cax = (C.c_int * nax)(*axes)
    cish = (C.c_bool * nax)(*ish)
    cfsh = (C.c_bool * nax)(*fsh)
    call("parlops_op_fft", lay, C.c_int(nax), cax, C.c_int(1 if norm == "1/n" else 0), C.c_bool(real), cish, cfsh,
         C.c_int32(dt), C.byref(op))
    rl, cl = P(), P()
    call("parlops_op_layouts", op, C.byref(rl), C.byref(cl))
    vt = C64 if CX[dt] == np.complex64 else C128
    xs, xn = local_range(cl)
    ys, yn = local_range(rl)
    xl = np.ascontiguousarray(xg[xs:xs + xn].astype(CX[dt]))
    yl = np.zeros(yn, CX[dt])
    hx, hy = P(), P()
    call("parlops_vec_create_with_array", cl, C.c_int32(vt), C.c_int32(0), xl.ctypes.data_as(P), C.byref(hx))
    call("parlops_vec_create_with_array", rl, C.c_int32(vt), C.c_int32(0), yl.ctypes.data_as(P), C.byref(hy))
    call("parlops_op_apply", op, hx, hy)
    yall = np.zeros(m, CX[dt])
    call("parlops_vec_gather", hy, C.c_int(-1), yall.ctypes.data_as(P))
    tol = 1e-12 if dt in (F64, C128) else 1e-5
    e = np.linalg.norm(yall - yref) / max(np.linalg.norm(yref), 1e-300)
    check(yall.size == yref.size and e < tol, f"{what}: forward relative difference {e:.2e}")
    yl[:] = yg[ys:ys + yn]
    call("parlops_op_apply_adjoint", op, hy, hx)
    xall = np.zeros(n, CX[dt])
    call("parlops_vec_gather", hx, C.c_int(-1), xall.ctypes.data_as(P))
    e = np.linalg.norm(xall - xref) / max(np.linalg.norm(xref), 1e-300)
    check(e < tol, f"{what}: adjoint relative difference {e:.2e}")
    if dt in (F32, F64) or real:
        check(np.all(xall.imag == 0), f"{what}: a real model's adjoint is real")
    for hh in (hx, hy):
        call("parlops_vec_destroy", C.byref(hh))
    for hh in (rl, cl, lay):
        call("parlops_layout_destroy", C.byref(hh))
    call("parlops_op_destroy", C.byref(op))


for dt in (C128, F64, C64, F32):
    run((8, 6), (0, 1), dt, two_d=True)
    run((7, 5), (1, 0), dt, norm="1/n", ish=True, fsh=(False, True), two_d=True)
    run((6, 5, 4), (0, 1, 2), dt)
    run((5, 6, 4), (2, 0, 1), dt, ish=(True, False, True), fsh=(False, True, True))
    run((6, 4, 5), (0, 1, 2), dt, real=True)
    run((7, 4, 6), (1, 2, 0), dt, real=True, norm="1/n")
    run((8, 5, 3), (2, 1), dt, real=True, fsh=(False, True))
    run((4, 5, 3, 6), (3, 0), dt, ish=True)  # mpi4py-fft needs >= P entries on the axis it splits
    run((9, 10), (1,), dt, real=True)

if rank == 0:
    print(f"fft: {passed} passed, {failed} failed", flush=True)
sys.exit(1 if comm.allreduce(failed) else 0)
