"""Loading libparlops, checked calls, errors, and the bookkeeping every handle shares."""
import ctypes as C
import ctypes.util
import atexit
import os
import shutil
import subprocess
import threading
import weakref

from . import _capi

# MPI is started (and finished at exit) by mpi4py, which parlops' calls then run on.
from mpi4py import MPI  # noqa: F401  (imported for its side effect: MPI is initialised)


def _candidates():
    """Where libparlops may be, in the order tried."""
    env = os.environ.get("PARLOPS_LIB")
    if env:
        return [env]
    out = []
    d = os.environ.get("PARLOPS_DIR")
    if d:
        out.append(os.path.join(d, "lib", "libparlops.so"))
    if shutil.which("pkg-config"):
        try:
            libdir = subprocess.run(["pkg-config", "--variable=libdir", "parlops"], capture_output=True,
                                    text=True, timeout=30).stdout.strip()
            if libdir:
                out.append(os.path.join(libdir, "libparlops.so"))
        except (OSError, subprocess.SubprocessError):
            pass
    found = ctypes.util.find_library("parlops")
    if found:
        out.append(found)
    out.append("libparlops.so")
    return out


def _load():
    tried = []
    for path in _candidates():
        try:
            lib = C.CDLL(path)
        except OSError as e:
            tried.append(f"{path}: {e}")
            continue
        return path, _capi.bind(lib)
    raise ImportError("parlops: libparlops was not found; set PARLOPS_LIB to the library file or "
                      "PARLOPS_DIR to its installation prefix (or put its lib/pkgconfig on "
                      "PKG_CONFIG_PATH). Tried:\n  " + "\n  ".join(tried))


LIB_PATH, lib = _load()


def library_version():
    v = [C.c_int(), C.c_int(), C.c_int()]
    lib.parlops_version(*[C.byref(x) for x in v])
    return tuple(x.value for x in v)


# the library must keep the ABI of the header this package was generated from
if lib.parlops_check_version(_capi.PARLOPS_VERSION_MAJOR, _capi.PARLOPS_VERSION_MINOR,
                             _capi.PARLOPS_VERSION_PATCH) != 0:
    raise ImportError("parlops: " + lib.parlops_last_error().decode(errors="replace") +
                      " (install the Python package of the library's version)")


def _check_mpi():
    """mpi4py and libparlops must run on the same MPI library (a communicator handle of one MPI
    means nothing to another): compare what each says it is."""
    needed = C.c_size_t()
    lib.parlops_config_report(None, None, 0, C.byref(needed))
    buf = C.create_string_buffer(needed.value + 1)
    lib.parlops_config_report(None, buf, needed.value + 1, C.byref(needed))
    line = next((x for x in buf.value.decode(errors="replace").splitlines() if "MPI library:" in x), "")
    ours = line.split("MPI library:", 1)[-1].split(" (MPI standard")[0].strip().splitlines()[0:1]
    theirs = MPI.Get_library_version().replace("\x00", "").strip().splitlines()[0:1]
    if ours and theirs and ours[0].strip() != theirs[0].strip():
        raise ImportError(f"parlops: mpi4py runs on '{theirs[0].strip()}' but {LIB_PATH} was built "
                          f"with '{ours[0].strip()}': install mpi4py against the MPI parlops was built "
                          "with (pip install --no-binary mpi4py mpi4py, with that MPI's mpicc first on PATH)")


_check_mpi()


class ParlopsError(RuntimeError):
    """A parlops call failed: `status` (an int, `status_name` its PARLOPS_ERR_* name), `function`,
    and parlops' message, which names the argument and the values. A collective call fails on every
    rank, so every rank raises."""

    def __init__(self, function, status, message):
        self.function = function
        self.status = status
        self.status_name = _capi.PARLOPS_STATUS_NAMES.get(status, "unknown status")
        self.message = message
        super().__init__(f"{function}: {self.status_name} ({status}): {message}")


_tls = threading.local()


def note_callback_error(exc):
    """A Python callback raised: keep the exception to chain to the ParlopsError that follows."""
    _tls.callback_error = exc


def call(name, *args):
    """Call a parlops function and raise ParlopsError on any status but PARLOPS_OK."""
    st = getattr(lib, name)(*args)
    if st != 0:
        msg = lib.parlops_last_error().decode(errors="replace")
        cause = getattr(_tls, "callback_error", None)
        _tls.callback_error = None
        if cause is not None:
            raise ParlopsError(name, st, msg) from cause
        raise ParlopsError(name, st, msg)
    _tls.callback_error = None


def call_noting(why, name, *args):
    """`call`, for a call to which this rank passes an invalid value in place of a Python argument
    it cannot pass (a list of the wrong length, a name parlops does not know): parlops refuses it on
    every rank, and `why` (None where this rank's arguments were fine) says in the error what the
    caller gave."""
    try:
        call(name, *args)
    except ParlopsError as e:
        if why is None:
            raise
        raise ParlopsError(name, e.status, f"{why} (parlops was passed an invalid value: {e.message})") from None


def text(name, *args):
    """A text getter of the (buf, len, needed) form, read whole."""
    needed = C.c_size_t()
    call(name, *args, None, 0, C.byref(needed))
    size = needed.value + 1
    buf = C.create_string_buffer(size)
    call(name, *args, buf, size, C.byref(needed))
    return buf.value.decode(errors="replace")


# Every live handle, in creation order, so that those still alive at exit are released before
# mpi4py finalises MPI (this module's atexit runs first: it is registered after mpi4py's).
_live = weakref.WeakValueDictionary()
_serial = [0]
_exiting = [False]


class Handle:
    """An owned parlops handle; `destroy()` releases it (also done when the object is collected)."""
    _destroy = None  # the name of the parlops_*_destroy function

    def _own(self, handle):
        self._h = handle
        _serial[0] += 1
        self._serial = _serial[0]
        _live[self._serial] = self

    @property
    def handle(self):
        """The C handle (a ctypes.c_void_p) for calls into `parlops.capi` directly."""
        if getattr(self, "_h", None) is None or not self._h.value:
            raise ValueError(f"{type(self).__name__}: the object was destroyed")
        return self._h

    def destroy(self):
        if getattr(self, "_borrowed", False):  # lent by parlops for a callback: not ours to free
            self._h = None
            return
        h = getattr(self, "_h", None)
        if h is not None and h.value:
            call(self._destroy, C.byref(h))
        _live.pop(getattr(self, "_serial", None), None)

    def __del__(self):
        try:
            self.destroy()
        except Exception:  # noqa: BLE001 (a destructor must not raise)
            pass


@atexit.register
def _release_all():
    """At exit, before mpi4py ends MPI: release what is alive, then parlops_finalize (which prints
    the run's timing table under PARLOPS_LOG=finalize; MPI stays mpi4py's to end)."""
    _exiting[0] = True
    for key in sorted(_live.keys(), reverse=True):
        obj = _live.get(key)
        if obj is not None:
            try:
                obj.destroy()
            except Exception:  # noqa: BLE001
                pass
    lib.parlops_finalize()
