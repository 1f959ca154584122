"""Proximal operators and solvers (PyLops-MPI's proximal module): L1, L2, L21 and the caller's own
as NumPy callbacks on this rank's entries; primal_dual (PyLops-MPI's PrimalDual) and
proximal_gradient (ProximalGradient), admm_l2 (ADMML2), run by the library with the same updates in
the same order."""
import ctypes as C

import numpy as np

from . import _capi
from ._lib import Handle, call, call_noting, note_callback_error
from .core import Vector, dtype_code

ACCELERATIONS = {None: _capi.PARLOPS_ACCELERATION_NONE, "None": _capi.PARLOPS_ACCELERATION_NONE,
                 "vandenberghe": _capi.PARLOPS_ACCELERATION_VANDENBERGHE,
                 "fista": _capi.PARLOPS_ACCELERATION_FISTA}


class Prox(Handle):
    """A proximal operator of a convex function f on vectors of `layout`: `p(x)` is f(x),
    `p.prox(x, tau)` prox_{tau f}(x), `p.proxdual(x, tau)` prox_{tau f*}(x), `p.grad(x)` grad f(x)
    (L2 and shells with `grad`). Made by Prox.l1, .l2, .l2_op, .l21 or .shell. [collective]"""
    _destroy = "parlops_prox_destroy"

    def __init__(self, layout, dtype, make, keep=None):
        self.layout, self.dtype, self._keep = layout, np.dtype(dtype), keep
        h = C.c_void_p()
        make(C.byref(h))
        self._own(h)

    @classmethod
    def l1(cls, layout, sigma=1.0, dtype=np.float64):
        """sigma ||x||_1 (PyProximal's L1)."""
        return cls(layout, dtype, lambda out: call("parlops_prox_create_l1", layout.handle, dtype_code(dtype),
                                                   float(sigma), out))

    @classmethod
    def l2(cls, layout, sigma=1.0, b=None, q=None, alpha=1.0, qgrad=True, dtype=np.float64):
        """sigma/2 ||x - b||^2 + alpha Re(q^H x) (PyLops-MPI's MPIL2 without an operator; b and q
        Vectors or None, copied)."""
        return cls(layout, dtype, lambda out: call(
            "parlops_prox_create_l2", layout.handle, dtype_code(dtype), float(sigma),
            b.handle if b is not None else None, q.handle if q is not None else None, float(alpha), bool(qgrad), out))

    @classmethod
    def l2_op(cls, Op, b, sigma=1.0, q=None, alpha=1.0, qgrad=True, niter=10, x0=None, warm=True, solver="cgls",
              tol=1e-4):
        """sigma/2 ||Op x - b||^2 + alpha Re(q^H x) (PyLops-MPI's MPIL2 with Op), on Op's columns:
        the prox by `niter` iterations of PyLops-MPI's cgls (solver="cgls") or cg on the normal
        equations ("cg"), stopping once ||r||^2 <= tol, from x0 (None: zero) and, with warm, from
        the previous result. b, q and x0 are copied; Op is held by the library."""
        methods = {"cgls": _capi.PARLOPS_METHOD_CGLS, "cg": _capi.PARLOPS_METHOD_CG}
        if solver not in methods:
            raise ValueError(f"solver={solver!r}: 'cg' or 'cgls'")
        return cls(Op.cols, Op.dtype, lambda out: call(
            "parlops_prox_create_l2_op", Op.handle, float(sigma), b.handle, q.handle if q is not None else None,
            float(alpha), bool(qgrad), methods[solver], int(niter), float(tol), x0.handle if x0 is not None else None,
            bool(warm), out))

    @classmethod
    def l21(cls, layout, ndim, sigma=1.0, dtype=np.float64):
        """sigma sum_i |(x_{0,i}, ..., x_{ndim-1,i})| over `ndim` blocks of each rank's entries
        (PyLops-MPI's MPIL21 on a gradient's output: total variation)."""
        return cls(layout, dtype, lambda out: call("parlops_prox_create_l21", layout.handle, dtype_code(dtype),
                                                   int(ndim), float(sigma), out))

    @classmethod
    def shell(cls, layout, prox, proxdual=None, value=None, grad=None, dtype=np.float64):
        """The caller's separable proximal operator on this rank's entries (NumPy arrays):
        prox(x, tau) -> y, proxdual(x, tau) -> y (None: the Moreau identity), value(x) -> this
        rank's share of f(x), grad(x) -> g. An exception fails the call on every rank."""
        dt = np.dtype(dtype)
        n = layout.local_len

        def arr(p):
            return np.ctypeslib.as_array(C.cast(p, C.POINTER(C.c_byte)), shape=(n * dt.itemsize,)).view(dt) \
                if n > 0 else np.zeros(0, dt)

        def put(dst, got, name):
            # what the callback returned, this rank's entries: None or another shape is an error
            # (NumPy would write NaN for None and broadcast a scalar)
            if got is None or np.shape(got) != (n,):
                raise TypeError(f"the shell's {name} returned {type(got).__name__} of shape {np.shape(got)}: "
                                f"an array of this rank's {n} entries wanted")
            dst[:] = got

        def wrap_map(f, name):
            def cb(_ctx, tau, x, y):
                try:
                    put(arr(y), f(arr(x).copy(), float(tau)), name)
                    return 0
                except BaseException as e:  # noqa: BLE001 (an exception fails every rank)
                    note_callback_error(e)
                    return 1
            return _capi.parlops_prox_fn(cb)

        def cb_value(_ctx, x, v):
            try:
                v[0] = float(value(arr(x).copy()))
                return 0
            except BaseException as e:  # noqa: BLE001
                note_callback_error(e)
                return 1

        def cb_grad(_ctx, x, g):
            try:
                put(arr(g), grad(arr(x).copy()), "grad")
                return 0
            except BaseException as e:  # noqa: BLE001
                note_callback_error(e)
                return 1
        keep = [wrap_map(prox, "prox"), wrap_map(proxdual, "proxdual") if proxdual else _capi.parlops_prox_fn(),
                _capi.parlops_prox_value_fn(cb_value) if value else _capi.parlops_prox_value_fn(),
                _capi.parlops_prox_grad_fn(cb_grad) if grad else _capi.parlops_prox_grad_fn()]
        return cls(layout, dt, lambda out: call("parlops_prox_create_shell", layout.handle, dtype_code(dt), None,
                                                *keep, _capi.parlops_destroy_fn(), out), keep)

    def __call__(self, x):
        v = C.c_double()
        call("parlops_prox_value", self.handle, x.handle, C.byref(v))
        return v.value

    def _map(self, fn, x, tau, y):
        y = y if y is not None else Vector(x.layout, x.dtype)
        if tau is None:
            call(fn, self.handle, x.handle, y.handle)
        else:
            call(fn, self.handle, float(tau), x.handle, y.handle)
        return y

    def prox(self, x, tau, y=None):
        return self._map("parlops_prox_apply", x, tau, y)

    def proxdual(self, x, tau, y=None):
        return self._map("parlops_prox_apply_dual", x, tau, y)

    def grad(self, x, g=None):
        return self._map("parlops_prox_gradient", x, None, g)


def primal_dual(proxf, proxg, A, x0, y0, tau, mu, z=None, theta=1.0, niter=10, gfirst=True, returny=False):
    """PyLops-MPI's PrimalDual: min_x f(x) + g(A x) + z^H x from x0 and the dual y0 (not changed).
    Returns x (and y with returny). [collective]"""
    x, y = x0.copy(), y0.copy()
    call("parlops_primal_dual", proxf.handle, proxg.handle, A.handle, z.handle if z is not None else None,
         float(tau), float(mu), float(theta), int(niter), bool(gfirst), x.handle, y.handle)
    return (x, y) if returny else x


def admm_l2(proxg, Op, b, A, x0, tau, niter=10, z0=None, gfirst=False, niter_cgls=10, tol_cgls=1e-4):
    """PyLops-MPI's ADMML2: min_x 1/2 ||Op x - b||^2 + g(A x) from x0 and z0 (None: A x0), neither
    changed; the x-update by `niter_cgls` iterations of cgls (its kwargs_solver niter and tol).
    Returns (x, z). [collective]"""
    x = x0.copy()
    z = z0.copy() if z0 is not None else Vector(A.rows, A.dtype, x0.memory)
    call("parlops_admm_l2", proxg.handle, Op.handle, b.handle, A.handle, float(tau), int(niter), bool(gfirst),
         z0 is not None, int(niter_cgls), float(tol_cgls), x.handle, z.handle)
    return x, z


def proximal_gradient(proxf, proxg, x0, tau, epsg=1.0, eta=1.0, niter=10, acceleration=None, tol=None):
    """PyLops-MPI's ProximalGradient: min_x f(x) + epsg g(x), f smooth, from x0 (not changed);
    acceleration None, "vandenberghe" or "fista"; tol stops on the objective's relative change.
    Returns x. [collective]"""
    x = x0.copy()
    its = C.c_int64()
    why = []
    # PyLops-MPI's per-iteration epsg (an array) where its entries are all one value; others, and
    # an unknown acceleration, go to parlops as invalid values: refused on every rank
    e = np.atleast_1d(np.asarray(epsg, dtype=float)).ravel()
    if e.size == 0:
        eps = np.nan
        why.append("epsg is empty: one value wanted")
    elif not np.all(np.isfinite(e)):
        eps = float(e[~np.isfinite(e)][0])  # parlops names the value
    elif np.all(e == e[0]):
        eps = float(e[0])
    else:
        eps = np.nan
        why.append(f"epsg holds {e.size} different values (one per iteration): parlops takes one value")
    acc = ACCELERATIONS.get(acceleration, -1)
    if acc < 0:
        why.append(f"acceleration={acceleration!r}: None, 'vandenberghe' or 'fista'")
    call_noting("; ".join(why) or None, "parlops_proximal_gradient", proxf.handle, proxg.handle, float(tau), eps,
                float(eta), int(niter), acc, float(tol or 0.0), x.handle, C.byref(its))
    x.iterations = its.value
    return x
