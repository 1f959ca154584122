"""parlops' non-stationary 1-D convolution (parlops_op_nonstationary_convolve1d) against PyLops-MPI
0.8's MPINonStationaryConvolve1D (1-D, its even split; where its forward equals PyLops' serial
operator, which it does not at every split) and PyLops' NonStationaryConvolve1D (N-D, along every
axis), in one MPI job (1-4 ranks; parlops' arrays split unevenly along axis 0, with an
empty rank from 3 ranks on). Forward and adjoint of the same vectors, gathered, to 1e-12 relative
(f64, c128; f32 to 1e-5), and the dot test. PyLops' rmatvec does not conjugate the filters: for
complex filters parlops' adjoint is compared with PyLops' rmatvec of the conjugate filters. Prints
"nsconv: N passed, M failed" on rank 0 and exits non-zero on a failure.
"""
import ctypes as C
import os
import sys
import warnings

import numpy as np
from mpi4py import MPI

import pylops_mpi
from pylops.signalprocessing import NonStationaryConvolve1D
from pylops_mpi.signalprocessing import MPINonStationaryConvolve1D

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from parlops_ctypes import P, call  # noqa: E402

warnings.filterwarnings("ignore")
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
passed = failed = 0
F32, F64, C64, C128 = 0, 1, 2, 3
NP = {F32: np.float32, F64: np.float64, C64: np.complex64, C128: np.complex128}


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"rank {rank}: FAILED: {what}", flush=True)


world = P()
call("parlops_comm_create_f", C.c_int(comm.py2f()), C.byref(world))


def rows_uneven(n0):
    r = [n0 // size + (1 if i < n0 % size else 0) for i in range(size)]
    if size > 2:
        r[0] += r[1]
        r[1] = 0
    return r


def filters(nf, hsize, dt, seed):
    rng = np.random.default_rng(seed)
    hs = rng.standard_normal((nf, hsize))
    if dt in (C64, C128):
        hs = hs + 1j * rng.standard_normal((nf, hsize))
    return hs.astype(NP[dt])


def parlops_apply(dims, axis, hs, ih, dt, xg, yg):
    """parlops' y = A x and A^H y (gathered), and its dot test, on a split along axis 0."""
    rows = rows_uneven(dims[0])
    lay = P()
    shape = (C.c_int64 * len(dims))(*dims)
    call("parlops_layout_create_nd", world, C.c_int32(0), C.c_int(len(dims)), shape, C.c_int(0),
         C.c_int64(rows[rank]), C.byref(lay))
    op = P()
    ihc = np.ascontiguousarray(ih, dtype=np.int64)
    hsc = np.ascontiguousarray(hs)
    call("parlops_op_nonstationary_convolve1d", lay, C.c_int(axis), C.c_int64(hs.shape[1]), C.c_int64(hs.shape[0]),
         hsc.ctypes.data_as(P), ihc.ctypes.data_as(P), C.c_int32(dt), C.byref(op))
    s, n = C.c_int64(), C.c_int64()
    call("parlops_layout_local_range", lay, C.byref(s), C.byref(n))
    s, n = s.value, n.value
    xl = np.array(xg[s:s + n])
    yl = np.zeros(n, NP[dt])
    hx, hy = P(), P()
    call("parlops_vec_create_with_array", lay, C.c_int32(dt), C.c_int32(0), xl.ctypes.data_as(P), C.byref(hx))
    call("parlops_vec_create_with_array", lay, C.c_int32(dt), C.c_int32(0), yl.ctypes.data_as(P), C.byref(hy))
    call("parlops_op_apply", op, hx, hy)
    y = np.zeros(xg.size, NP[dt])
    call("parlops_vec_gather", hy, C.c_int(-1), y.ctypes.data_as(P))
    yl[:] = yg[s:s + n]
    call("parlops_op_apply_adjoint", op, hy, hx)
    x = np.zeros(xg.size, NP[dt])
    call("parlops_vec_gather", hx, C.c_int(-1), x.ctypes.data_as(P))
    err = C.c_double()
    call("parlops_op_dottest", op, C.c_uint64(5), C.byref(err))
    for h in (hx, hy):
        call("parlops_vec_destroy", C.byref(h))
    call("parlops_op_destroy", C.byref(op))
    call("parlops_layout_destroy", C.byref(lay))
    return y, x, err.value


def rel(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)


def vectors(n, dt, seed):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((2, n))
    if dt in (C64, C128):
        v = v + 1j * rng.standard_normal((2, n))
    return v[0].astype(NP[dt]), v[1].astype(NP[dt])


def against_pylops(dims, axis, nf, hsize, ih, dt):
    """N-D, any axis: PyLops' serial operator is the reference."""
    what = f"dims {dims} axis {axis} {nf} filters of {hsize} at {list(ih)} {NP[dt].__name__}"
    hs = filters(nf, hsize, dt, 3)
    xg, yg = vectors(int(np.prod(dims)), dt, 4)
    y, x, dot = parlops_apply(dims, axis, hs, ih, dt, xg, yg)
    ref = NonStationaryConvolve1D(dims=dims, hs=hs.astype(np.complex128 if dt in (C64, C128) else np.float64),
                                  ih=tuple(ih), axis=axis, dtype=np.complex128 if dt in (C64, C128) else np.float64)
    refc = NonStationaryConvolve1D(dims=dims, hs=np.conj(hs).astype(ref.dtype), ih=tuple(ih), axis=axis, dtype=ref.dtype)
    tol = 1e-12 if dt in (F64, C128) else 1e-5
    e = rel(y, ref.matvec(xg.astype(ref.dtype).ravel()))
    check(e < tol, f"{what}: forward vs PyLops {e:.2e}")
    e = rel(x, refc.rmatvec(yg.astype(ref.dtype).ravel()))
    check(e < tol, f"{what}: adjoint vs PyLops (conjugate filters) {e:.2e}")
    check(dot < (1e-12 if dt in (F64, C128) else 1e-4), f"{what}: dot test {dot:.2e}")


def against_pylops_mpi(n, hsize, ih, dt):
    """1-D: PyLops-MPI's distributed operator (its even split; parlops' uneven) is the reference."""
    what = f"MPINonStationaryConvolve1D n {n}, {len(ih)} filters of {hsize} {NP[dt].__name__}"
    hs = filters(len(ih), hsize, dt, 5)
    xg, yg = vectors(n, dt, 6)
    y, x, dot = parlops_apply((n,), 0, hs, ih, dt, xg, yg)
    Op = MPINonStationaryConvolve1D(dims=n, hs=hs, ih=np.asarray(ih), dtype=NP[dt])
    xd = pylops_mpi.DistributedArray(global_shape=n, dtype=NP[dt])
    off = sum(s[0] for s in xd.local_shapes[:rank])
    xd[:] = xg[off:off + xd.local_array.size]
    yd = pylops_mpi.DistributedArray(global_shape=n, dtype=NP[dt])
    yd[:] = yg[off:off + yd.local_array.size]
    tol = 1e-12 if dt == F64 else 1e-5
    ser = NonStationaryConvolve1D(dims=n, hs=hs.astype(np.float64), ih=tuple(ih))
    y_ser, x_ser = ser.matvec(xg.astype(np.float64)), ser.rmatvec(yg.astype(np.float64))
    y_pm, x_pm = (Op @ xd).asarray(), (Op.H @ yd).asarray()
    check(rel(y, y_ser) < tol and rel(x, x_ser) < tol,
          f"{what}: forward {rel(y, y_ser):.2e} and adjoint {rel(x, x_ser):.2e} vs PyLops' serial operator")
    # PyLops-MPI 0.8's forward is not PyLops' operator at some splits (n 48, filters of 7 every 4
    # samples: 3.4e-2 at 2 ranks, 6.9e-3 at 3, 4.5e-2 at 4, at the ranks' edges; its adjoint is):
    # parlops is compared with it where it equals PyLops' serial operator, and the gap is printed
    gap = rel(y_pm, y_ser)
    if gap < tol:
        check(rel(y, y_pm) < tol, f"{what}: forward vs PyLops-MPI {rel(y, y_pm):.2e}")
    elif rank == 0:
        print(f"note: {what} at {size} ranks: PyLops-MPI's forward is {gap:.1e} from PyLops' serial operator "
              f"(parlops: {rel(y, y_ser):.1e}); not compared", flush=True)
    check(rel(x, x_pm) < tol, f"{what}: adjoint vs PyLops-MPI {rel(x, x_pm):.2e}")
    check(dot < (1e-12 if dt == F64 else 1e-4), f"{what}: dot test {dot:.2e}")


for dt in (F64, F32):
    against_pylops_mpi(48, 7, range(2, 48, 4), dt)
    against_pylops_mpi(96, 5, range(1, 96, 8), dt)
for dt in (F64, C128, F32, C64):
    against_pylops((40,), 0, 6, 9, range(3, 40, 7), dt)  # 1-D, halo wider than a rank's share
    against_pylops((13, 6, 5), 0, 3, 5, (1, 6, 11), dt)  # along the split axis, slabs of 30
    against_pylops((7, 11, 4), 1, 4, 3, (0, 3, 6, 9), dt)  # along a local axis
    against_pylops((6, 5, 12), -1, 2, 11, (2, 9), dt)  # the last axis, filters longer than the gap

if rank == 0:
    print(f"nsconv: {passed} passed, {failed} failed", flush=True)
sys.exit(1 if comm.allreduce(failed) else 0)
