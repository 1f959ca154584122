"""Communicators, layouts and vectors."""
import ctypes as C

import numpy as np
from mpi4py import MPI

from . import _capi
from ._lib import Handle, call, text

DTYPES = {
    np.dtype(np.float32): _capi.PARLOPS_F32,
    np.dtype(np.float64): _capi.PARLOPS_F64,
    np.dtype(np.complex64): _capi.PARLOPS_C64,
    np.dtype(np.complex128): _capi.PARLOPS_C128,
}
NUMPY = {v: k for k, v in DTYPES.items()}
MEMORY = {"host": _capi.PARLOPS_MEMORY_HOST, "cuda": _capi.PARLOPS_MEMORY_CUDA}
PARTITIONS = {
    "scatter": _capi.PARLOPS_PARTITION_SCATTER,
    "broadcast": _capi.PARLOPS_PARTITION_BROADCAST,
    "unsafe_broadcast": _capi.PARLOPS_PARTITION_UNSAFE_BROADCAST,
}


def dtype_code(dtype):
    """parlops' code of a NumPy dtype (float32, float64, complex64, complex128)."""
    try:
        return DTYPES[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise TypeError(f"dtype {dtype!r}: parlops takes float32, float64, complex64 or complex128") from None


def scalar(a):
    """A Python number as a parlops_scalar."""
    a = complex(a)
    return _capi.parlops_scalar(a.real, a.imag)


def local_view(address, n, dtype, shape=None, writable=True, owner=None):
    """A NumPy array over `n` entries of `dtype` at a host address (no copy); the array keeps
    `owner` (the object owning the memory) alive."""
    dtype = np.dtype(dtype)
    if n == 0 or not address:
        a = np.empty(0, dtype)
    else:
        buf = (C.c_char * (n * dtype.itemsize)).from_address(address)
        buf._owner = owner
        a = np.frombuffer(buf, dtype=dtype)
    if shape is not None:
        a = a.reshape(shape)
    if not writable:
        a.flags.writeable = False
    return a


class Comm(Handle):
    """A parlops communicator over an mpi4py communicator (MPI.COMM_WORLD when none is given),
    which parlops duplicates: its traffic never mixes with the caller's. [collective]"""
    _destroy = "parlops_comm_destroy"

    def __init__(self, comm=None):
        self.mpi = MPI.COMM_WORLD if comm is None else comm
        h = C.c_void_p()
        call("parlops_comm_create_f", self.mpi.py2f(), C.byref(h))
        self._own(h)

    @property
    def rank(self):
        r = C.c_int()
        call("parlops_comm_rank", self.handle, C.byref(r))
        return r.value

    @property
    def size(self):
        r = C.c_int()
        call("parlops_comm_size", self.handle, C.byref(r))
        return r.value

    @property
    def reduction_count(self):
        n = C.c_uint64()
        call("parlops_comm_reduction_count", self.handle, C.byref(n))
        return n.value

    def nccl(self, device=-1):
        """A communicator over the same ranks moving device data with NCCL. [collective]"""
        h = C.c_void_p()
        call("parlops_comm_create_nccl", self.handle, int(device), C.byref(h))
        out = Comm.__new__(Comm)
        out.mpi = self.mpi
        out._own(h)
        return out

    def config_report(self):
        """The configuration report (version, MPI, CUDA/NCCL, environment, one line per rank).
        [collective]"""
        return text("parlops_config_report", self.handle)


def _comm(comm):
    return comm if isinstance(comm, Comm) else Comm(comm)


class Layout(Handle):
    """How `global_len` entries (or an N-D array of `global_shape`, split along axis 0) are placed
    on the ranks of `comm`: `local_len` (or the local extent along axis 0) is this rank's part, or
    None to split as PyLops-MPI does; `partition` is "scatter", "broadcast" or "unsafe_broadcast".
    [collective]"""
    _destroy = "parlops_layout_destroy"

    def __init__(self, comm, global_len=None, local_len=None, partition="scatter", global_shape=None):
        self.comm = _comm(comm)
        part = PARTITIONS.get(partition)
        if part is None:
            raise ValueError(f"partition {partition!r}: one of {sorted(PARTITIONS)}")
        h = C.c_void_p()
        loc = _capi.PARLOPS_DECIDE if local_len is None else int(local_len)
        if global_shape is not None:
            shape = (C.c_int64 * len(global_shape))(*[int(s) for s in global_shape])
            call("parlops_layout_create_nd", self.comm.handle, part, len(global_shape), shape, 0, loc,
                 C.byref(h))
        else:
            g = -1 if global_len is None else int(global_len)
            call("parlops_layout_create", self.comm.handle, part, g, loc, C.byref(h))
        self._own(h)

    @classmethod
    def _adopt(cls, h, comm):
        out = cls.__new__(cls)
        out.comm = comm
        out._own(h)
        return out

    @property
    def global_len(self):
        n = C.c_int64()
        call("parlops_layout_global_len", self.handle, C.byref(n))
        return n.value

    @property
    def local_range(self):
        """(first global index, length) of this rank's part."""
        s, n = C.c_int64(), C.c_int64()
        call("parlops_layout_local_range", self.handle, C.byref(s), C.byref(n))
        return s.value, n.value

    @property
    def local_len(self):
        return self.local_range[1]

    def rank_range(self, rank):
        s, n = C.c_int64(), C.c_int64()
        call("parlops_layout_rank_range", self.handle, int(rank), C.byref(s), C.byref(n))
        return s.value, n.value

    @property
    def global_shape(self):
        nd = C.c_int()
        call("parlops_layout_shape", self.handle, C.byref(nd), None, 0)
        shape = (C.c_int64 * nd.value)()
        call("parlops_layout_shape", self.handle, C.byref(nd), shape, nd.value)
        return tuple(shape)

    @property
    def local_shape(self):
        """This rank's part as an array shape: (local_len,), or the local slab of an N-D layout."""
        shape = self.global_shape
        if len(shape) == 1:
            return (self.local_len,)
        inner = int(np.prod(shape[1:], dtype=np.int64))
        return (self.local_len // inner if inner else 0,) + tuple(shape[1:])

    @property
    def partition(self):
        p = C.c_int32()
        call("parlops_layout_partition", self.handle, C.byref(p))
        return {v: k for k, v in PARTITIONS.items()}[p.value]

    def __eq__(self, other):
        if not isinstance(other, Layout):
            return NotImplemented
        eq = C.c_bool()
        call("parlops_layout_equal", self.handle, other.handle, C.byref(eq))
        return eq.value

    __hash__ = None

    def __repr__(self):
        return f"Layout(global_shape={self.global_shape}, local_range={self.local_range})"


class DeviceArray:
    """This rank's part of a device vector: exposes `__cuda_array_interface__` (version 3), so CuPy,
    Numba or PyTorch take it without a copy (`cupy.asarray(v.array)`)."""

    def __init__(self, address, shape, dtype, owner):
        self.shape, self.dtype, self._owner = tuple(shape), np.dtype(dtype), owner
        self.__cuda_array_interface__ = {"shape": self.shape, "typestr": self.dtype.str,
                                         "data": (int(address or 0), False), "version": 3,
                                         "strides": None}


def _array_address(array):
    """(address, memory, dtype, shape) of a NumPy array or an object with __cuda_array_interface__."""
    iface = getattr(array, "__cuda_array_interface__", None)
    if iface is not None:
        if iface.get("strides") not in (None,) and iface["strides"] != tuple(
                np.dtype(iface["typestr"]).itemsize * int(np.prod(iface["shape"][i + 1:], dtype=np.int64))
                for i in range(len(iface["shape"]))):
            raise ValueError("a device array must be C-contiguous to be wrapped without a copy")
        return iface["data"][0], "cuda", np.dtype(iface["typestr"]), tuple(iface["shape"])
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{type(array).__name__}: a NumPy array or an object with "
                        "__cuda_array_interface__ (CuPy) is needed to wrap without a copy")
    if not array.flags.c_contiguous or not array.flags.writeable:
        raise ValueError("the array must be C-contiguous and writable to be wrapped without a copy "
                         "(np.ascontiguousarray makes one)")
    return array.ctypes.data, "host", array.dtype, array.shape


class Vector(Handle):
    """A distributed vector of `layout`: zeroed storage owned by parlops, in "host" or "cuda" memory.
    `Vector.wrap(layout, array)` uses the caller's NumPy (or CuPy) array in place instead. [collective]"""
    _destroy = "parlops_vec_destroy"

    def __init__(self, layout, dtype=np.float64, memory="host"):
        self.layout = layout
        h = C.c_void_p()
        call("parlops_vec_create", layout.handle, dtype_code(dtype), _memory(memory), C.byref(h))
        self._own(h)
        self._keep = None

    @classmethod
    def wrap(cls, layout, array):
        """A vector whose storage is `array` (this rank's part, of the layout's local length or
        local shape; NumPy, or any object with __cuda_array_interface__ for device memory): no copy,
        writes through the vector land in `array`, which the vector keeps alive. [collective]"""
        address, memory, dtype, shape = _array_address(array)
        n = int(np.prod(shape, dtype=np.int64))
        if n != layout.local_len:
            raise ValueError(f"array of {n} entries (shape {shape}) for a layout whose local length "
                             f"on rank {layout.comm.rank if layout.comm else '?'} is {layout.local_len}")
        h = C.c_void_p()
        call("parlops_vec_create_with_array", layout.handle, dtype_code(dtype), MEMORY[memory],
             C.c_void_p(address or None), C.byref(h))
        out = cls.__new__(cls)
        out.layout = layout
        out._own(h)
        out._keep = array
        return out

    @classmethod
    def _adopt(cls, h, layout, keep=None):
        out = cls.__new__(cls)
        out.layout = layout
        out._own(h)
        out._keep = keep
        return out

    @classmethod
    def _borrow(cls, address, layout):
        """A vector parlops lends to a callback (not destroyed here; valid during the call)."""
        out = cls.__new__(cls)
        out.layout, out._h, out._keep, out._borrowed = layout, C.c_void_p(address), None, True
        return out

    @property
    def dtype(self):
        d = C.c_int32()
        call("parlops_vec_dtype", self.handle, C.byref(d))
        return NUMPY[d.value]

    @property
    def memory(self):
        m = C.c_int32()
        call("parlops_vec_memory", self.handle, C.byref(m))
        return {v: k for k, v in MEMORY.items()}[m.value]

    @property
    def array(self):
        """This rank's entries with no copy: a NumPy array over the vector's storage (shaped as the
        layout's local part), or for a device vector a DeviceArray (CuPy: cupy.asarray(v.array))."""
        p, n = C.c_void_p(), C.c_int64()
        call("parlops_vec_local_array", self.handle, C.byref(p), C.byref(n))
        shape = self.layout.local_shape
        if self.memory == "cuda":
            return DeviceArray(p.value, shape, self.dtype, self)
        return local_view(p.value, n.value, self.dtype, shape, owner=self)

    def to_numpy(self):
        """A host copy of this rank's entries (from host or device memory)."""
        out = np.empty(self.layout.local_shape, self.dtype)
        call("parlops_vec_copy_to_host", self.handle, out.ctypes.data_as(C.c_void_p))
        return out

    def set_local(self, values):
        """Set this rank's entries from host values (into host or device memory)."""
        v = np.ascontiguousarray(values, dtype=self.dtype).reshape(-1)
        if v.size != self.layout.local_len:
            raise ValueError(f"{v.size} values for a local length of {self.layout.local_len}")
        call("parlops_vec_copy_from_host", self.handle, v.ctypes.data_as(C.c_void_p))

    def gather(self, root=None):
        """The whole vector as a NumPy array on every rank (root None) or on `root` (None elsewhere).
        [collective]"""
        if root is not None and self.layout.comm.rank != root:
            call("parlops_vec_gather", self.handle, int(root), None)
            return None
        out = np.empty(self.layout.global_shape, self.dtype)
        r = _capi.PARLOPS_ALL_RANKS if root is None else int(root)
        call("parlops_vec_gather", self.handle, r, out.ctypes.data_as(C.c_void_p))
        return out

    def scatter(self, array, root=0):
        """Set the vector from the whole array given on `root`. [collective]"""
        p = None
        if array is not None:
            array = np.ascontiguousarray(array, dtype=self.dtype)
            p = array.ctypes.data_as(C.c_void_p)
        call("parlops_vec_scatter", self.handle, int(root), p)

    def duplicate(self):
        """A new zeroed vector of the same layout, dtype and memory."""
        h = C.c_void_p()
        call("parlops_vec_duplicate", self.handle, C.byref(h))
        return Vector._adopt(h, self.layout)

    def copy(self):
        """A new vector holding the same entries."""
        out = self.duplicate()
        call("parlops_vec_copy", self.handle, out.handle)
        return out

    def to(self, memory):
        """A copy in "host" or "cuda" memory."""
        h = C.c_void_p()
        call("parlops_vec_to_memory", self.handle, _memory(memory), C.byref(h))
        return Vector._adopt(h, self.layout)

    def fill(self, a):
        call("parlops_vec_fill", self.handle, scalar(a))
        return self

    def set_random(self, seed=0, distribution="uniform"):
        """Seeded random entries, bitwise the same global vector at any rank count."""
        d = {"uniform": _capi.PARLOPS_RANDOM_UNIFORM, "gaussian": _capi.PARLOPS_RANDOM_GAUSSIAN,
             "rademacher": _capi.PARLOPS_RANDOM_RADEMACHER}[distribution]
        call("parlops_vec_set_random", self.handle, d, int(seed))
        return self

    def scale(self, a):
        call("parlops_vec_scale", self.handle, scalar(a))
        return self

    def axpy(self, a, x):
        """self += a x."""
        call("parlops_vec_axpy", self.handle, scalar(a), x.handle)
        return self

    def axpby(self, a, x, b):
        """self = a x + b self."""
        call("parlops_vec_axpby", self.handle, scalar(a), x.handle, scalar(b))
        return self

    def dot(self, y):
        """sum conj(self_i) y_i over the whole vector. [collective]"""
        out = _capi.parlops_scalar()
        call("parlops_vec_dot", self.handle, y.handle, C.byref(out))
        if np.iscomplexobj(np.empty(0, self.dtype)):
            return complex(out.re, out.im)
        return out.re

    def norm(self, ord=2):
        """The norm of the whole vector: ord 2, 1, 0 (count of non-zeros), np.inf, -np.inf or any
        p > 0. [collective]"""
        kinds = {2: _capi.PARLOPS_NORM_2, 1: _capi.PARLOPS_NORM_1, 0: _capi.PARLOPS_NORM_0,
                 np.inf: _capi.PARLOPS_NORM_INF, -np.inf: _capi.PARLOPS_NORM_NEG_INF}
        kind, p = (kinds[ord], 0.0) if ord in kinds else (_capi.PARLOPS_NORM_P, float(ord))
        out = C.c_double()
        call("parlops_vec_norm", self.handle, kind, p, C.byref(out))
        return out.value

    def assemble(self):
        """Make every rank's copy of a broadcast vector rank 0's. [collective]"""
        call("parlops_vec_assemble", self.handle)
        return self

    def redistribute(self, layout):
        """A new vector of `layout` holding the same entries. [collective]"""
        h = C.c_void_p()
        call("parlops_vec_redistribute", self.handle, layout.handle, C.byref(h))
        return Vector._adopt(h, layout)

    # arithmetic as PyLops-MPI's DistributedArray has it: new vectors, the same layout
    def __add__(self, other):
        return self.copy().axpy(1.0, other)

    def __sub__(self, other):
        return self.copy().axpy(-1.0, other)

    def __mul__(self, a):
        if isinstance(a, Vector):
            out = self.duplicate()
            call("parlops_vec_pointwise_mult", out.handle, self.handle, a.handle)
            return out
        return self.copy().scale(a)

    __rmul__ = __mul__

    def __neg__(self):
        return self.copy().scale(-1.0)

    def __iadd__(self, other):
        return self.axpy(1.0, other)

    def __isub__(self, other):
        return self.axpy(-1.0, other)

    def __imul__(self, a):
        return self.scale(a)

    def __repr__(self):
        return f"Vector({self.layout!r}, dtype={self.dtype}, memory={self.memory!r})"


def _memory(memory):
    m = MEMORY.get(memory)
    if m is None:
        raise ValueError(f"memory {memory!r}: 'host' or 'cuda'")
    return m
