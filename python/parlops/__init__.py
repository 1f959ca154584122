"""parlops from Python: distributed linear operators and Krylov solvers over MPI (mpi4py), on
NumPy arrays without copies (and device memory through __cuda_array_interface__), over the
installed libparlops (found through PARLOPS_LIB, PARLOPS_DIR, pkg-config or the loader's path).

    from mpi4py import MPI
    import numpy as np, parlops
    comm = parlops.Comm(MPI.COMM_WORLD)
    lay = parlops.Layout(comm, global_len=100 * 100)
    A = parlops.Operator.poisson(lay, (100, 100))
    b = parlops.Vector(lay).fill(1.0)
    s = parlops.Solver(comm, "cg", A, rtol=1e-10, pc="jacobi")
    x = s.solve(b)
    assert s.info.converged

Every failure raises ParlopsError (status, function, parlops' message) on every rank of a
collective call. `parlops.capi` holds the whole C API as ctypes prototypes (`parlops.capi.lib`).
"""
from . import _capi
from ._lib import LIB_PATH, ParlopsError, library_version, lib
from .core import Comm, DeviceArray, Layout, Vector
from .operator import Operator, aslinearoperator
from .solver import METHODS, Options, SolveInfo, Solver, eigsh, krylov_schur
from .proximal import Prox, admm_l2, primal_dual, proximal_gradient
from .interop import from_pylops_mpi, to_pylops_mpi


class _CAPI:
    """The C API: every function of parlops.h with its ctypes prototype, the constants, structs
    and callback types."""

    def __init__(self):
        self.lib = lib
        self.prototypes = _capi.PROTOTYPES

    def __getattr__(self, name):
        if name in _capi.PROTOTYPES:
            return getattr(lib, name)
        return getattr(_capi, name)

    def __dir__(self):
        return sorted(set(_capi.PROTOTYPES) | {n for n in dir(_capi) if not n.startswith("_")})


capi = _CAPI()
__version__ = ".".join(map(str, library_version()))
__all__ = ["Comm", "DeviceArray", "Layout", "Vector", "Operator", "Solver", "Options", "SolveInfo",
           "ParlopsError", "METHODS", "aslinearoperator", "eigsh", "krylov_schur", "from_pylops_mpi", "to_pylops_mpi",
           "capi", "library_version", "LIB_PATH"]
