"""PyLops-MPI interoperation: parlops operators on DistributedArrays, PyLops-MPI operators in parlops.

Both directions pass this rank's local arrays without copying them where the splits agree
(parlops' default split is PyLops-MPI's), and redistribute where they do not."""
import numpy as np

from .core import Layout, Vector
from .operator import Operator


def _pm():
    try:
        import pylops_mpi
    except ImportError as e:
        raise ImportError("parlops: PyLops-MPI interoperation needs pylops-mpi "
                          "(pip install 'parlops[pylops-mpi]')") from e
    return pylops_mpi


def _partition(layout):
    P = _pm().Partition
    return {"scatter": P.SCATTER, "broadcast": P.BROADCAST,
            "unsafe_broadcast": P.UNSAFE_BROADCAST}[layout.partition]


def _local_shapes(layout):
    size = layout.comm.size
    return [(layout.rank_range(r)[1],) for r in range(size)]


def _sizes(shapes):
    return [int(np.prod(s, dtype=np.int64)) for s in shapes]


def _as_vector(da, layout):
    """A parlops Vector of `layout` over the DistributedArray's local array: no copy when its split
    is the layout's (decided from the split every rank knows, so every rank takes the same path)."""
    local = da.local_array
    if isinstance(local, np.ndarray) and not (local.flags.c_contiguous and local.flags.writeable):
        local = np.array(local, copy=True)
    if _sizes(da.local_shapes) == _sizes(_local_shapes(layout)):
        return Vector.wrap(layout, local)
    own = Layout(layout.comm, global_len=layout.global_len, local_len=local.size,
                 partition=layout.partition)
    return Vector.wrap(own, local).redistribute(layout)


def to_pylops_mpi(op):
    """A pylops_mpi.MPILinearOperator applying the parlops operator `op` to DistributedArrays (of
    global shape (N,)); its results have `op`'s row split. Usable in PyLops-MPI's solvers and
    compositions."""
    pm = _pm()
    rows, cols = op.rows, op.cols

    class ParlopsOperator(pm.MPILinearOperator):
        def __init__(self):
            super().__init__(shape=op.shape, dtype=np.dtype(op.dtype), base_comm=cols.comm.mpi)
            self.parlops = op

        def _apply(self, x, out_layout, in_layout, adjoint):
            y = pm.DistributedArray(global_shape=out_layout.global_len, base_comm=out_layout.comm.mpi,
                                    partition=_partition(out_layout), local_shapes=_local_shapes(out_layout),
                                    engine=x.engine, dtype=self.dtype)
            xv = _as_vector(x, in_layout)
            yv = Vector.wrap(out_layout, y.local_array)
            (op.apply_adjoint if adjoint else op.apply)(xv, yv)
            return y

        def _matvec(self, x):
            return self._apply(x, rows, cols, False)

        def _rmatvec(self, x):
            return self._apply(x, cols, rows, True)

    return ParlopsOperator()


def from_pylops_mpi(pop, comm=None, rows=None, cols=None):
    """A parlops Operator applying the pylops_mpi.MPILinearOperator `pop` (its matvec and rmatvec
    run on every rank at once inside parlops' calls, on DistributedArrays over this rank's parts,
    without copies). `rows`/`cols` are the parlops layouts of its output and input (default:
    PyLops-MPI's split of M and N entries over `comm`, a parlops.Comm over pop.base_comm)."""
    pm = _pm()
    from .core import Comm
    if comm is None:
        comm = Comm(pop.base_comm)
    m, n = pop.shape
    rows = rows or Layout(comm, global_len=m)
    cols = cols or Layout(comm, global_len=n)
    rshapes, cshapes = _local_shapes(rows), _local_shapes(cols)

    def wrap(local, layout, shapes):
        return pm.DistributedArray(global_shape=layout.global_len, base_comm=pop.base_comm,
                                   partition=_partition(layout), local_shapes=shapes,
                                   local_array=local.reshape(-1), dtype=local.dtype)

    def put(da, out, layout, shapes):
        if _sizes(da.local_shapes) == _sizes(shapes):
            out[...] = da.local_array.reshape(out.shape)
        else:  # the PyLops-MPI operator returned another split: gather what this rank needs
            start, length = layout.local_range
            out[...] = da.asarray()[start:start + length].reshape(out.shape)

    def matvec(x, y):
        put(pop.matvec(wrap(x, cols, cshapes)), y, rows, rshapes)

    def rmatvec(y, x):
        put(pop.rmatvec(wrap(y, rows, rshapes)), x, cols, cshapes)

    out = Operator.shell(rows, cols, matvec, rmatvec, dtype=np.dtype(pop.dtype))
    out._deps.append(pop)
    return out
