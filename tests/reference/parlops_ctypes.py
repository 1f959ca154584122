"""parlops' C API from Python through ctypes (libparlops.so, or PARLOPS_LIB): the library, a
checked call, and the solve-info structure. Shared by tests/reference/compare.py and
benches/pylops_cg.py."""
import ctypes as C
import os

lib = C.CDLL(os.environ.get("PARLOPS_LIB", "libparlops.so"))
P = C.c_void_p


def call(name, *args):
    """Call a parlops function; a status other than PARLOPS_OK raises with parlops' message."""
    f = getattr(lib, name)
    f.restype = C.c_int
    st = f(*args)
    if st != 0:
        msg = lib.parlops_last_error
        msg.restype = C.c_char_p
        raise RuntimeError(f"{name}: status {st}: {msg().decode()}")


class SolveInfo(C.Structure):
    _fields_ = [("iterations", C.c_int64), ("reason", C.c_int), ("initial_residual_norm", C.c_double),
                ("final_residual_norm", C.c_double), ("rhs_norm", C.c_double), ("r1norm", C.c_double),
                ("r2norm", C.c_double)]
