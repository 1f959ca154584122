"""Distributed linear operators: matrices, stencils, Python callables, compositions, preconditioners."""
import ctypes as C
import inspect
import itertools
import threading

import numpy as np

from . import _capi
from ._lib import Handle, call, call_noting, note_callback_error
from .core import NUMPY, Layout, Vector, DeviceArray, _memory, dtype_code, local_view, scalar

STENCILS = {"centered": _capi.PARLOPS_CENTERED, "forward": _capi.PARLOPS_FORWARD,
            "backward": _capi.PARLOPS_BACKWARD}
LOCAL_SOLVES = {"ilu0": _capi.PARLOPS_LOCAL_ILU0, "ic0": _capi.PARLOPS_LOCAL_IC0,
                "ssor": _capi.PARLOPS_LOCAL_SSOR}


class Operator(Handle):
    """A distributed linear operator from its column layout (x) to its row layout (y).

    `A @ x` applies it to a Vector (a new vector of the row layout); `A @ B`, `A + B`, `A - B`,
    `2 * A`, `-A`, `A ** k`, `A.H`, `A.T` and `A.conj()` compose without copying data, with
    parlops operators, shell operators made from Python callables (`Operator.shell`) and
    PyLops-MPI operators (wrapped with `parlops.from_pylops_mpi`)."""
    _destroy = "parlops_op_destroy"

    def _init(self, h, rows, cols, deps=()):
        self._own(h)
        self._rows, self._cols = rows, cols
        self._deps = list(deps)
        return self

    @classmethod
    def _adopt(cls, h, rows, cols, deps=()):
        return cls.__new__(cls)._init(h, rows, cols, deps)

    # ---- properties
    @property
    def shape(self):
        r, c = C.c_int64(), C.c_int64()
        call("parlops_op_size", self.handle, C.byref(r), C.byref(c))
        return r.value, c.value

    @property
    def dtype(self):
        d = C.c_int32()
        call("parlops_op_dtype", self.handle, C.byref(d))
        return NUMPY[d.value]

    def _layouts(self):
        if self._rows is None or self._cols is None:
            r, c = C.c_void_p(), C.c_void_p()
            call("parlops_op_layouts", self.handle, C.byref(r), C.byref(c))
            comm = _find_comm(self)
            self._rows = Layout._adopt(r, comm)
            self._cols = Layout._adopt(c, comm)
        return self._rows, self._cols

    @property
    def rows(self):
        """The row (range, y) layout."""
        return self._layouts()[0]

    @property
    def cols(self):
        """The column (domain, x) layout."""
        return self._layouts()[1]

    def create_vecs(self, memory="host"):
        """(x, y): zeroed vectors of the column and row layouts."""
        return (Vector(self.cols, self.dtype, memory), Vector(self.rows, self.dtype, memory))

    # ---- applying
    def apply(self, x, y=None):
        """y = A x (a new vector when y is None). [collective]"""
        if y is None:
            y = Vector(self.rows, self.dtype, x.memory)
        call("parlops_op_apply", self.handle, x.handle, y.handle)
        return y

    matvec = apply

    def apply_adjoint(self, y, x=None):
        """x = A^H y (a new vector when x is None). [collective]"""
        if x is None:
            x = Vector(self.cols, self.dtype, y.memory)
        call("parlops_op_apply_adjoint", self.handle, y.handle, x.handle)
        return x

    rmatvec = apply_adjoint

    def multadd(self, alpha, x, beta, y):
        """y = alpha A x + beta y. [collective]"""
        call("parlops_op_multadd", self.handle, scalar(alpha), x.handle, scalar(beta), y.handle)
        return y

    def dottest(self, seed=0):
        """The dot test's relative error |<A x, y> - <x, A^H y>| / max(...). [collective]"""
        e = C.c_double()
        call("parlops_op_dottest", self.handle, int(seed), C.byref(e))
        return e.value

    def diagonal(self):
        """diag(A) as a vector of the row layout."""
        d = Vector(self.rows, self.dtype)
        call("parlops_op_diagonal", self.handle, d.handle)
        return d

    # ---- compositions
    def _compose(self, fn, other, rows, cols, *extra):
        h = C.c_void_p()
        if other is None:
            call(fn, self.handle, *extra, C.byref(h))
            return Operator._adopt(h, rows, cols, [self])
        call(fn, self.handle, other.handle, C.byref(h))
        return Operator._adopt(h, rows, cols, [self, other])

    def __matmul__(self, other):
        if isinstance(other, Vector):
            return self.apply(other)
        other = aslinearoperator(other)
        return self._compose("parlops_op_product", other, self._rows, other._cols)

    def __rmatmul__(self, other):
        return aslinearoperator(other).__matmul__(self)

    def __add__(self, other):
        return self._compose("parlops_op_sum", aslinearoperator(other), self._rows, self._cols)

    def __radd__(self, other):
        return aslinearoperator(other).__add__(self)

    def __sub__(self, other):
        return self._compose("parlops_op_difference", aslinearoperator(other), self._rows, self._cols)

    def __rsub__(self, other):
        return aslinearoperator(other).__sub__(self)

    def __mul__(self, alpha):
        if isinstance(alpha, Vector):
            return self.apply(alpha)
        if not np.isscalar(alpha):
            return NotImplemented
        return self._compose("parlops_op_scale", None, self._rows, self._cols, scalar(alpha))

    __rmul__ = __mul__

    def __neg__(self):
        return self * -1.0

    def __pow__(self, k):
        return self._compose("parlops_op_power", None, self._rows, self._cols, int(k))

    @property
    def H(self):
        """The adjoint (conjugate transpose)."""
        return self._compose("parlops_op_adjoint", None, self._cols, self._rows)

    @property
    def T(self):
        """The transpose (no conjugation)."""
        return self._compose("parlops_op_transpose", None, self._cols, self._rows)

    def adjoint(self):
        return self.H

    def transpose(self):
        return self.T

    def conj(self):
        return self._compose("parlops_op_conj", None, self._rows, self._cols)

    def to_pylops_mpi(self):
        """This operator as a pylops_mpi.MPILinearOperator acting on DistributedArrays."""
        from .interop import to_pylops_mpi
        return to_pylops_mpi(self)

    def __repr__(self):
        return f"Operator(shape={self.shape}, dtype={self.dtype})"

    # ---- constructors
    @classmethod
    def csr(cls, rows, cols, indptr, indices, data):
        """A sparse matrix from this rank's rows in CSR form with GLOBAL column indices (the arrays
        are copied; int32 or int64 indices; data's dtype is the operator's). [collective]"""
        data = np.ascontiguousarray(data)
        indices = np.ascontiguousarray(indices)
        itype = np.int64 if indices.dtype == np.int64 or np.asarray(indptr).dtype == np.int64 else np.int32
        indptr = np.ascontiguousarray(indptr, dtype=itype)
        indices = np.ascontiguousarray(indices, dtype=itype)
        idx = _capi.PARLOPS_INDEX_I64 if itype == np.int64 else _capi.PARLOPS_INDEX_I32
        h = C.c_void_p()
        call("parlops_op_create_csr", rows.handle, cols.handle, dtype_code(data.dtype), idx,
             _ptr(indptr), _ptr(indices), _ptr(data), C.byref(h))
        return cls._adopt(h, rows, cols, [rows, cols])

    @classmethod
    def from_scipy(cls, rows, cols, local_rows):
        """A sparse matrix from this rank's rows as a SciPy sparse matrix (local rows x global
        columns). [collective]"""
        m = local_rows.tocsr()
        m.sort_indices()
        m.sum_duplicates()
        return cls.csr(rows, cols, m.indptr, m.indices, m.data)

    @classmethod
    def dense(cls, rows, cols, local_rows):
        """A dense matrix from this rank's rows (local rows x global columns, copied). [collective]"""
        a = np.ascontiguousarray(local_rows)
        h = C.c_void_p()
        call("parlops_op_create_dense", rows.handle, cols.handle, dtype_code(a.dtype), _ptr(a),
             C.byref(h))
        return cls._adopt(h, rows, cols, [rows, cols])

    @classmethod
    def identity(cls, layout, dtype=np.float64):
        h = C.c_void_p()
        call("parlops_op_identity", layout.handle, dtype_code(dtype), C.byref(h))
        return cls._adopt(h, layout, layout, [layout])

    @classmethod
    def zero(cls, rows, cols, dtype=np.float64):
        h = C.c_void_p()
        call("parlops_op_zero", rows.handle, cols.handle, dtype_code(dtype), C.byref(h))
        return cls._adopt(h, rows, cols, [rows, cols])

    @classmethod
    def diag(cls, d):
        """diag(d) for a Vector d (copied)."""
        h = C.c_void_p()
        call("parlops_op_diagonal_matrix", d.handle, C.byref(h))
        return cls._adopt(h, d.layout, d.layout, [d.layout])

    @classmethod
    def poisson(cls, layout, dims, dtype=np.float64):
        """The matrix-free 2D/3D Poisson operator (5- or 7-point) on a grid of `dims`. [collective]"""
        d = (C.c_int64 * len(dims))(*[int(x) for x in dims])
        h = C.c_void_p()
        call("parlops_op_poisson", layout.handle, len(dims), d, dtype_code(dtype), C.byref(h))
        return cls._adopt(h, layout, layout, [layout])

    @classmethod
    def fft(cls, layout, axes, norm="none", real=False, ifftshift_before=False, fftshift_after=False,
            dtype=np.complex128):
        """PyLops-MPI's MPIFFTND (MPIFFT2D with two axes) of an N-D layout split along axis 0: `norm`
        "none" or "1/n", `real` keeps the non-negative frequencies of the last axis, the shift flags
        (one bool, or one per axis) NumPy's ifftshift of x and fftshift of y. `dtype` is the model's
        type; the operator's vectors are complex (complex64 for float32/complex64). [collective]"""
        ax = [int(a) for a in np.atleast_1d(axes)]
        n = len(ax)

        def flags(f):
            f = np.atleast_1d(np.asarray(f, dtype=bool))
            # a wrong-length list goes to parlops as naxes 0 below: it fails on every rank
            return (C.c_bool * n)(*(f if f.size == n else np.resize(f, n)).tolist()), f.size in (1, n)

        f1, ok1 = flags(ifftshift_before)
        f2, ok2 = flags(fftshift_after)
        # an unknown norm goes to parlops as -1: refused on every rank with the value named
        code = {"none": 0, "1/n": 1}.get(str(norm).lower(), -1)
        why = [f"{name} has {np.atleast_1d(f).size} entries for {n} axes (one bool, or one per axis)"
               for name, f, ok in (("ifftshift_before", ifftshift_before, ok1),
                                   ("fftshift_after", fftshift_after, ok2)) if not ok]
        if code < 0:
            why.append(f"norm={norm!r}: 'none' or '1/n' (PyLops-MPI's MPIFFTND offers these two)")
        h = C.c_void_p()
        call_noting("; ".join(why) or None, "parlops_op_fft", layout.handle, n if ok1 and ok2 else 0,
                    (C.c_int * max(n, 1))(*ax), code, bool(real), f1, f2, dtype_code(dtype), C.byref(h))
        return cls._adopt(h, None, layout, [layout])

    @classmethod
    def nonstationary_convolve1d(cls, layout, hs, ih, axis=-1, dtype=None):
        """PyLops' NonStationaryConvolve1D (PyLops-MPI's MPINonStationaryConvolve1D) along `axis` of
        a layout's array (1-D, or N-D split along axis 0): `hs` the filters, shape (nfilts, hsize),
        hsize odd, at the regularly spaced positions `ih`; linearly interpolated between them.
        `dtype` defaults to the filters' type. [collective]"""
        h = np.asarray(hs)
        dt = np.dtype(dtype) if dtype is not None else h.dtype
        h = np.ascontiguousarray(h, dtype=dt)
        p = np.ascontiguousarray(np.asarray(ih).ravel(), dtype=np.int64)
        # filters of another rank than 2 go to parlops as hsize 0: refused on every rank, named
        nf, k = h.shape if h.ndim == 2 else (p.size, 0)
        why = None
        if h.ndim != 2:
            why = f"hs has shape {h.shape}: (nfilts, hsize) wanted"
        elif nf != p.size:
            why = f"hs holds {nf} filters for {p.size} positions ih"
            k = 0
        out = C.c_void_p()
        call_noting(why, "parlops_op_nonstationary_convolve1d", layout.handle, int(axis), k, p.size,
                    h.ctypes.data_as(C.c_void_p), p.ctypes.data_as(C.POINTER(C.c_int64)), dtype_code(dt), C.byref(out))
        return cls._adopt(out, layout, layout, [layout])

    @classmethod
    def mdc(cls, comm, g_local, nt, nv, dt=1.0, dr=1.0, twosided=True, conj=False, prescaled=False):
        """PyLops-MPI's MPIMDC (multi-dimensional convolution): `g_local` is this rank's frequency
        slices of G, shape (nfreq_local, ns, nr) (the slices of all ranks in rank order are
        frequencies 0, 1, ...); the model (nt x nr x nv) and data (nt x ns x nv) are real broadcast
        vectors (float32 for a complex64/float32 G, float64 otherwise). [collective]"""
        g = np.ascontiguousarray(g_local)
        if g.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
            g = g.astype(np.complex128)
        # a G of another rank than 3 goes to parlops as ns = 0: refused on every rank, the sizes named
        nf, ns, nr = g.shape if g.ndim == 3 else (0, 0, 0)
        why = None if g.ndim == 3 else f"g_local has shape {g.shape}: (nfreq_local, ns, nr) wanted"
        h = C.c_void_p()
        call_noting(why, "parlops_op_mdc", comm.handle, dtype_code(g.dtype), nf, ns, nr, int(nt), int(nv), float(dt),
                    float(dr), bool(twosided), bool(conj), bool(prescaled), g.ctypes.data_as(C.c_void_p), C.byref(h))
        return cls._adopt(h, None, None, [comm])

    @classmethod
    def first_derivative(cls, layout, axis=0, sampling=1.0, kind="centered", edge=False, dtype=np.float64):
        """PyLops' FirstDerivative along `axis` of an N-D layout (matrix-free). [collective]"""
        h = C.c_void_p()
        call("parlops_op_first_derivative", layout.handle, int(axis), float(sampling), STENCILS[kind],
             bool(edge), dtype_code(dtype), C.byref(h))
        return cls._adopt(h, layout, layout, [layout])

    @classmethod
    def second_derivative(cls, layout, axis=0, sampling=1.0, kind="centered", edge=False,
                          dtype=np.float64):
        """PyLops' SecondDerivative along `axis` (matrix-free). [collective]"""
        h = C.c_void_p()
        call("parlops_op_second_derivative", layout.handle, int(axis), float(sampling), STENCILS[kind],
             bool(edge), dtype_code(dtype), C.byref(h))
        return cls._adopt(h, layout, layout, [layout])

    @classmethod
    def laplacian(cls, layout, weights=None, sampling=None, dtype=np.float64):
        """PyLops' Laplacian over every axis of an N-D layout (matrix-free). [collective]"""
        nd = len(layout.global_shape)
        why = []

        def per_axis(v, name):
            # a list of another length goes to parlops as NaN: refused on every rank (ctypes would
            # pad a short one with zeros, and a zero weight drops its axis)
            v = np.atleast_1d(np.asarray(v if v is not None else [1.0] * nd, dtype=float)).ravel()
            if v.size != nd:
                why.append(f"{name} has {v.size} entries for a {nd}-D layout (one per axis)")
                return (C.c_double * nd)(*([np.nan] * nd))
            return (C.c_double * nd)(*v.tolist())
        w = per_axis(weights, "weights")
        s = per_axis(sampling, "sampling")
        if why:
            # (a sampling is read only on axes of nonzero weight: NaN weights are refused whatever)
            w = (C.c_double * nd)(*([np.nan] * nd))
        h = C.c_void_p()
        call_noting("; ".join(why) or None, "parlops_op_laplacian", layout.handle, w, s, dtype_code(dtype),
                    C.byref(h))
        return cls._adopt(h, layout, layout, [layout])

    @classmethod
    def block_diag(cls, comm, local_ops, dtype=np.float64):
        """Block diagonal of this rank's local operators (on MPI.COMM_SELF layouts). [collective]"""
        return cls._stack("parlops_op_block_diag", comm, local_ops, dtype)

    @classmethod
    def vstack(cls, comm, local_ops, dtype=np.float64):
        """[A_1; A_2; ...] of this rank's local operators (x replicated, y split). [collective]"""
        return cls._stack("parlops_op_vstack", comm, local_ops, dtype)

    @classmethod
    def hstack(cls, comm, local_ops, dtype=np.float64):
        """[A_1, A_2, ...] of this rank's local operators (x split, y replicated). [collective]"""
        return cls._stack("parlops_op_hstack", comm, local_ops, dtype)

    @classmethod
    def _stack(cls, fn, comm, local_ops, dtype):
        ops = [aslinearoperator(a) for a in local_ops]
        arr = (C.c_void_p * max(len(ops), 1))(*[a.handle.value for a in ops])
        h = C.c_void_p()
        call(fn, comm.handle, dtype_code(dtype), len(ops), arr, C.byref(h))
        return cls._adopt(h, None, None, [comm] + ops)

    # ---- Python callables
    @classmethod
    def shell(cls, rows, cols, matvec, rmatvec=None, diagonal=None, dtype=np.float64, memory="host"):
        """An operator given by Python callables on this rank's parts (PETSc's MATSHELL):
        `matvec(x)` gets this rank's part of x (read-only, shaped as the column layout's local
        part) and returns this rank's part of y, or `matvec(x, y)` fills `y` in place and returns
        None; `rmatvec` likewise for A^H (None: no adjoint); `diagonal(d)` (None: none) fills this
        rank's diagonal entries for Jacobi and Chebyshev. An exception in a callback fails the call on
        every rank with PARLOPS_ERR_CALLBACK; the ParlopsError raised carries it as its __cause__.
        With memory "cuda" the callbacks get device arrays (CuPy arrays when CuPy is installed,
        else DeviceArray). The callables run on every rank at once, so they may communicate.
        [collective]"""
        key = next(_keys)
        entry = _Shell(rows, cols, np.dtype(dtype), memory, matvec, rmatvec, diagonal)
        with _shells_lock:
            _shells[key] = entry
        h = C.c_void_p()
        fwd = _apply_cb
        adj = _adjoint_cb if rmatvec is not None else _capi.parlops_apply_fn()
        try:
            if diagonal is not None:
                call("parlops_op_create_shell_with_diagonal", rows.handle, cols.handle, dtype_code(dtype),
                     _memory(memory), C.c_void_p(key), fwd, adj, _diagonal_cb, _destroy_cb, C.byref(h))
            else:
                call("parlops_op_create_shell", rows.handle, cols.handle, dtype_code(dtype),
                     _memory(memory), C.c_void_p(key), fwd, adj, _destroy_cb, C.byref(h))
        except Exception:
            with _shells_lock:
                _shells.pop(key, None)  # a failed create does not call destroy_ctx
            raise
        return cls._adopt(h, rows, cols, [rows, cols])

    # ---- preconditioners
    @classmethod
    def boomeramg(cls, a, **options):
        """hypre's BoomerAMG on a matrix, with options by parlops_amg_options' field names
        (strong_threshold, coarsen_type, interp_type, relax_type, num_sweeps, max_levels,
        agg_num_levels, num_functions, dof_ordering, print_level). [collective]"""
        o = _capi.parlops_amg_options()
        call("parlops_amg_options_init", C.byref(o))
        names = {f for f, _ in o._fields_}
        for k, v in options.items():
            if k not in names:
                raise TypeError(f"boomeramg: unknown option {k!r}; options: {sorted(names)}")
            setattr(o, k, v)
        h = C.c_void_p()
        call("parlops_op_create_boomeramg", a.handle, C.byref(o), C.byref(h))
        return cls._adopt(h, a._cols, a._rows, [a])

    @classmethod
    def block_jacobi(cls, a, kind="ilu0", omega=1.0):
        """Block Jacobi with one block per rank solved by ILU(0), IC(0) or SSOR. [collective]"""
        h = C.c_void_p()
        call("parlops_op_create_block_jacobi", a.handle, LOCAL_SOLVES[kind], float(omega), C.byref(h))
        return cls._adopt(h, a._cols, a._rows, [a])

    @classmethod
    def chebyshev(cls, a, degree, lmin=0.0, lmax=0.0):
        """Chebyshev polynomial preconditioner of `degree` (bounds 0: estimated). [collective]"""
        h = C.c_void_p()
        call("parlops_op_create_chebyshev", a.handle, int(degree), float(lmin), float(lmax), C.byref(h))
        return cls._adopt(h, a._cols, a._rows, [a])

    @classmethod
    def inverse(cls, solver, accept_max_iter=False):
        """The operator x = solve(A, b) of a solver (an inner solve, a preconditioner). [collective]"""
        h = C.c_void_p()
        call("parlops_op_create_inverse", solver.handle, bool(accept_max_iter), C.byref(h))
        a = solver.operator
        return cls._adopt(h, a._cols if a else None, a._rows if a else None, [solver])

    def refresh(self, force=False):
        """Set up again the preconditioners whose matrices changed (all with force); returns how
        many set-ups ran. [collective]"""
        n = C.c_int64()
        call("parlops_op_refresh", self.handle, int(bool(force)), C.byref(n))
        return n.value


def _find_comm(obj, depth=0):
    """The parlops Comm an operator was built on, from what it was built from."""
    from .core import Comm
    if isinstance(obj, Comm):
        return obj
    c = getattr(obj, "comm", None)
    if isinstance(c, Comm):
        return c
    for d in getattr(obj, "_deps", []) + [getattr(obj, "_rows", None), getattr(obj, "_cols", None)]:
        if d is not None and depth < 8:
            c = _find_comm(d, depth + 1)
            if c is not None:
                return c
    return None


def aslinearoperator(a):
    """An Operator from an Operator, or from a pylops_mpi.MPILinearOperator (wrapped)."""
    if isinstance(a, Operator):
        return a
    try:
        import pylops_mpi
    except ImportError:
        pylops_mpi = None
    if pylops_mpi is not None and isinstance(a, pylops_mpi.MPILinearOperator):
        from .interop import from_pylops_mpi
        return from_pylops_mpi(a)
    raise TypeError(f"{type(a).__name__} is not a parlops Operator or a pylops_mpi.MPILinearOperator")


def _ptr(a):
    return a.ctypes.data_as(C.c_void_p) if a.size else None


# ---- shell callbacks: one C entry point each, the Python callables looked up by the context key
class _Shell:
    def __init__(self, rows, cols, dtype, memory, matvec, rmatvec, diagonal):
        self.rows, self.cols, self.dtype, self.memory = rows, cols, dtype, memory
        self.matvec, self.rmatvec, self.diagonal = matvec, rmatvec, diagonal
        self.rshape, self.cshape = rows.local_shape, cols.local_shape
        self.inplace = {"matvec": _takes_two(matvec), "rmatvec": _takes_two(rmatvec)}

    def view(self, address, shape, writable):
        n = int(np.prod(shape, dtype=np.int64))
        if self.memory == "cuda":
            d = DeviceArray(address, shape, self.dtype, None)
            try:
                import cupy
                return cupy.asarray(d)
            except ImportError:
                return d
        return local_view(address, n, self.dtype, shape, writable)


def _takes_two(fn):
    """Whether a callable takes (x, y) (fills y in place) rather than (x) (returns y)."""
    if fn is None:
        return False
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    pos = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(pos) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params)


_shells = {}
_shells_lock = threading.Lock()
_keys = itertools.count(1)


def _run(ctx, fn_name, in_addr, in_shape, out_addr, out_shape):
    try:
        s = _shells[ctx]
        fn = getattr(s, fn_name)
        x = s.view(in_addr, in_shape, False)
        y = s.view(out_addr, out_shape, True)
        r = fn(x, y) if s.inplace[fn_name] else fn(x)
        if r is not None:
            if s.memory == "cuda":
                y[...] = r
            else:
                y[...] = np.asarray(r).reshape(out_shape)
        return 0
    except BaseException as e:  # noqa: BLE001 (every failure goes back to parlops as a status)
        note_callback_error(e)
        return 1


@_capi.parlops_apply_fn
def _apply_cb(ctx, x, y):
    s = _shells.get(ctx)
    return _run(ctx, "matvec", x, s.cshape, y, s.rshape) if s else 1


@_capi.parlops_apply_fn
def _adjoint_cb(ctx, y, x):
    s = _shells.get(ctx)
    return _run(ctx, "rmatvec", y, s.rshape, x, s.cshape) if s else 1


@_capi.parlops_diagonal_fn
def _diagonal_cb(ctx, d):
    try:
        s = _shells[ctx]
        r = s.diagonal(s.view(d, s.rshape, True))
        if r is not None:
            s.view(d, s.rshape, True)[...] = np.asarray(r).reshape(s.rshape)
        return 0
    except BaseException as e:  # noqa: BLE001
        note_callback_error(e)
        return 1


@_capi.parlops_destroy_fn
def _destroy_cb(ctx):
    with _shells_lock:
        _shells.pop(ctx, None)
