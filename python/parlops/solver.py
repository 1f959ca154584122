"""Krylov solvers, run-time options, eigensolvers."""
import ctypes as C
import os
import sys
from dataclasses import dataclass

import numpy as np

from . import _capi
from ._lib import Handle, ParlopsError, call, call_noting, note_callback_error, text
from .core import Vector, _comm

METHODS = {n[len("PARLOPS_METHOD_"):].lower(): getattr(_capi, n)
           for n in dir(_capi) if n.startswith("PARLOPS_METHOD_")}
PHASES = ("setup", "operator", "preconditioner", "reduction", "halo", "vector", "copy", "solve", "rest")
MONITOR_ACTIONS = {None: _capi.PARLOPS_MONITOR_CONTINUE, False: _capi.PARLOPS_MONITOR_CONTINUE,
                   True: _capi.PARLOPS_MONITOR_STOP, "continue": _capi.PARLOPS_MONITOR_CONTINUE,
                   "stop": _capi.PARLOPS_MONITOR_STOP, "converged": _capi.PARLOPS_MONITOR_CONVERGED}


@dataclass
class SolveInfo:
    """The outcome of a solve (parlops_solve_info); `reason` is the PARLOPS_* name."""
    iterations: int
    reason: str
    reason_code: int
    initial_residual_norm: float
    final_residual_norm: float
    rhs_norm: float
    r1norm: float
    r2norm: float

    @property
    def converged(self):
        return self.reason_code > 0


class Options(Handle):
    """A set of run-time options (PETSc's names: -ksp_type, -ksp_rtol, -pc_type, ...; see
    docs/options.md), from a string, the environment (PARLOPS_OPTIONS) or sys.argv. Rank 0 prints
    the options no solver used when the set is destroyed, unless it holds -options_left false."""
    _destroy = "parlops_options_destroy"

    def __init__(self, comm=None, text=None, env=False, args=None):
        self.comm = _comm(comm)
        h = C.c_void_p()
        call("parlops_options_create", self.comm.handle, C.byref(h))
        self._own(h)
        if env:
            self.insert_env(None if env is True else env)
        if args is not None:
            self.insert_args(sys.argv if args is True else args)
        if text:
            self.insert(text)

    def insert(self, text):
        """Add the options of a string ("-ksp_type gmres -ksp_rtol 1e-8")."""
        call("parlops_options_insert_string", self.handle, text.encode())
        return self

    def insert_env(self, name=None):
        """Add the options of an environment variable (None: PARLOPS_OPTIONS)."""
        call("parlops_options_insert_env", self.handle, None if name is None else name.encode())
        return self

    def insert_args(self, argv):
        """Add the options among program arguments (argv[0] skipped, non-options left alone)."""
        arr = (C.c_char_p * (len(argv) + 1))(*[os.fsencode(a) for a in argv], None)
        call("parlops_options_insert_args", self.handle, len(argv), arr)
        return self

    def left(self):
        """The options no solver used so far, one line each ("" when all were used)."""
        return text("parlops_options_left", self.handle)


class Solver(Handle):
    """A Krylov solver: `Solver(comm, "gmres", A, rtol=1e-8, restart=50, pc=M)`.

    `method` is one of cg, cg_single_reduction, cg_pipelined, cgls, lsqr, gmres, fgmres,
    bicgstab, minres, ista, fista, richardson, gcrodr and cg_deflated (recycling for sequences of
    systems).
    Keyword arguments set what the C setters set: rtol, atol, dtol, max_it, pc (an Operator
    applying M ~ A^-1, or "jacobi"), restart, recycle (GCRO-DR's and deflated CG's k),
    pc_side ("left"/"right"), norm_type ("unpreconditioned"/"natural"), reference ("rhs"/
    "initial_residual"), orthogonalization ("classical"/"modified"), damp, richardson_scale,
    initial_guess_nonzero, history, timing, compute_eigenvalues, sparsity ((threshold, eps[, step])
    for ista and fista), cost_tolerances ((rtol, rtol1): ista and fista stop on the cost), null_space (True for the
    constants, or a list of Vectors), monitor (a callable (iteration, residual_norm) returning
    True to stop), monitor_iterate (a callable (iteration, residual_norm, x, r) returning None,
    "stop" or "converged"), options (an Options or a string) with prefix."""
    _destroy = "parlops_solver_destroy"

    def __init__(self, comm, method="cg", operator=None, options=None, prefix=None, **settings):
        self.comm = _comm(comm)
        m = METHODS.get(method)
        if m is None:
            raise ValueError(f"method {method!r}: one of {sorted(METHODS)}")
        h = C.c_void_p()
        call("parlops_solver_create", self.comm.handle, m, C.byref(h))
        self._own(h)
        self.operator, self._pc, self._cbs, self._null = None, None, {}, []
        if operator is not None:
            self.set_operator(operator)
        self.set(**settings)
        if options is not None:
            self.set_from_options(options, prefix)

    def set_operator(self, a):
        call("parlops_solver_set_operator", self.handle, a.handle)
        self.operator = a
        return self

    def set(self, **settings):
        """Change settings by keyword (see the class)."""
        tol = {k: settings.pop(k) for k in ("rtol", "atol", "dtol", "max_it") if k in settings}
        if tol:
            cur = self.tolerances
            cur.update(tol)
            call("parlops_solver_set_tolerances", self.handle, float(cur["rtol"]), float(cur["atol"]),
                 float(cur["dtol"]), int(cur["max_it"]))
        for k, v in settings.items():
            setter = _SETTERS.get(k)
            if setter is None:
                raise TypeError(f"Solver: unknown setting {k!r}; settings: "
                                f"{sorted(list(_SETTERS) + ['rtol', 'atol', 'dtol', 'max_it'])}")
            setter(self, v)
        return self

    @property
    def tolerances(self):
        """{"rtol", "atol", "dtol", "max_it"}."""
        r, a, d, m = C.c_double(), C.c_double(), C.c_double(), C.c_int64()
        call("parlops_solver_get_tolerances", self.handle, C.byref(r), C.byref(a), C.byref(d), C.byref(m))
        return {"rtol": r.value, "atol": a.value, "dtol": d.value, "max_it": m.value}

    def set_from_options(self, options, prefix=None):
        """Apply run-time options (an Options, or a string read into a new set) whose names start
        with '-' + prefix, as PETSc's KSPSetFromOptions. [collective]"""
        if isinstance(options, str):
            options = Options(self.comm, options + " -options_left false")
        call("parlops_solver_set_from_options", self.handle, options.handle,
             None if not prefix else prefix.encode())
        return self

    def solve(self, b, x=None):
        """Solve A x = b (least squares for cgls, lsqr, ista, fista); x (a new zero vector of A's
        column layout when None) is returned. A solve that ran returns whether it converged or not:
        read `info` (`info.converged`, `info.reason`). [collective]"""
        if x is None:
            if self.operator is None:
                raise ValueError("Solver.solve: set an operator first (Solver(..., operator=A))")
            x = Vector(self.operator.cols, b.dtype, b.memory)
        call("parlops_solver_solve", self.handle, b.handle, x.handle)
        return x

    def solve_many(self, bs, xs=None):
        """Solve A x_j = b_j for every j (block CG for "cg": the operator applied to all columns at
        once; other methods one column after another); xs (new zero vectors when None) is returned.
        Each column's outcome: `column_info(j)`; `info` is the column farthest from its rule. [collective]"""
        bs = list(bs)
        why = None
        if xs is None:
            if self.operator is None:
                raise ValueError("Solver.solve_many: set an operator first (Solver(..., operator=A))")
            # one collective creation whatever this rank's number of right-hand sides (a number
            # that differs between ranks is then refused by the solve itself, on every rank, by
            # name), the others duplicates, which no other rank waits for
            one = Vector(self.operator.cols, bs[0].dtype if bs else self.operator.dtype,
                         bs[0].memory if bs else "host")
            xs = [one] if bs else []
            try:
                xs += [one.duplicate() for _ in bs[1:]]
            except ParlopsError as e:
                why = f"Solver.solve_many: the solution vectors for {len(bs)} right-hand sides: {e.message}"
        xs = list(xs)
        if len(xs) != len(bs) and why is None:
            raise ValueError(f"Solver.solve_many: {len(bs)} right-hand sides and {len(xs)} solutions")
        barr = (C.c_void_p * max(len(bs), 1))(*[b.handle for b in bs])
        xarr = (C.c_void_p * max(len(bs), 1))(*[x.handle for x in xs])
        # (a failure above on this rank: -1 right-hand sides, which every rank refuses)
        call_noting(why, "parlops_solver_solve_many", self.handle, len(bs) if why is None else -1, barr, xarr)
        return xs

    @staticmethod
    def _info_of(i):
        return SolveInfo(i.iterations, _capi.PARLOPS_REASON_NAMES.get(i.reason, str(i.reason)), i.reason,
                         i.initial_residual_norm, i.final_residual_norm, i.rhs_norm, i.r1norm, i.r2norm)

    @property
    def info(self):
        i = _capi.parlops_solve_info()
        call("parlops_solver_info", self.handle, C.byref(i))
        return self._info_of(i)

    def column_info(self, j):
        """Column j's outcome of the last solve (solve_many; column 0 of a single solve)."""
        i = _capi.parlops_solve_info()
        call("parlops_solver_info_column", self.handle, j, C.byref(i))
        return self._info_of(i)

    def history(self):
        """The residual norm of every iteration of the last solve (with history=True)."""
        return self._norms("parlops_solver_history")

    def residual_history(self):
        """Least squares: ||b - A x|| per iteration (PyLops-MPI's cgls cost)."""
        return self._norms("parlops_solver_residual_history")

    def _norms(self, fn):
        p, n = C.POINTER(C.c_double)(), C.c_int64()
        call(fn, self.handle, C.byref(p), C.byref(n))
        return np.array(p[:n.value], dtype=np.float64) if n.value else np.empty(0)

    def eigenvalue_estimates(self):
        """(emin, emax) from the last solve (with compute_eigenvalues=True)."""
        lo, hi = C.c_double(), C.c_double()
        call("parlops_solver_eigenvalue_estimates", self.handle, C.byref(lo), C.byref(hi))
        return lo.value, hi.value

    def view(self):
        """What will run: method, settings, tolerances, the preconditioner tree, the operator."""
        return text("parlops_solver_view", self.handle)

    def log(self, phase):
        """(count, seconds, seconds outside other phases, bytes) of one phase of the last solve
        on this rank (timing=True): phase one of setup, operator, preconditioner, reduction, halo,
        vector, copy, solve, rest."""
        c, s, o, b = C.c_int64(), C.c_double(), C.c_double(), C.c_int64()
        call("parlops_solver_log", self.handle, PHASES.index(phase), C.byref(c), C.byref(s),
             C.byref(o), C.byref(b))
        return c.value, s.value, o.value, b.value

    def log_view(self):
        """The per-phase table over the ranks (min, max, ratio), PETSc's -log_view. [collective]"""
        return text("parlops_solver_log_view", self.handle)


def _set_pc(s, pc):
    if isinstance(pc, str):
        if pc != "jacobi":
            raise ValueError(f"pc {pc!r}: an Operator, or 'jacobi'")
        call("parlops_solver_set_jacobi", s.handle)
    else:
        call("parlops_solver_set_preconditioner", s.handle, pc.handle)
    s._pc = pc


def _choice(fn, table, what):
    def setter(s, v):
        if v not in table:
            raise ValueError(f"{what} {v!r}: one of {sorted(table)}")
        call(fn, s.handle, table[v])
    return setter


def _set_monitor(s, f):
    if f is None:
        call("parlops_solver_set_monitor", s.handle, _capi.parlops_monitor_fn(), None)
        s._cbs.pop("monitor", None)
        return

    def cb(_ctx, it, rnorm):
        try:
            return 1 if f(int(it), float(rnorm)) else 0
        except BaseException as e:  # noqa: BLE001 (an exception stops the solve on every rank)
            note_callback_error(e)
            return 1
    s._cbs["monitor"] = _capi.parlops_monitor_fn(cb)
    call("parlops_solver_set_monitor", s.handle, s._cbs["monitor"], None)


def _set_monitor_iterate(s, f):
    if f is None:
        call("parlops_solver_set_monitor_iterate", s.handle, _capi.parlops_monitor_iterate_fn(), None)
        s._cbs.pop("monitor_iterate", None)
        return
    op = s.operator

    def cb(_ctx, it, rnorm, x, r):
        try:
            xv = Vector._borrow(x, op.cols if op else None)
            rv = Vector._borrow(r, op.rows if op else None)
            return MONITOR_ACTIONS[f(int(it), float(rnorm), xv, rv)]
        except BaseException as e:  # noqa: BLE001
            note_callback_error(e)
            return _capi.PARLOPS_MONITOR_STOP
    s._cbs["monitor_iterate"] = _capi.parlops_monitor_iterate_fn(cb)
    call("parlops_solver_set_monitor_iterate", s.handle, s._cbs["monitor_iterate"], None)


def _set_null_space(s, ns):
    vecs = [] if ns in (None, False, True) else list(ns)
    arr = (C.c_void_p * max(len(vecs), 1))(*[v.handle.value for v in vecs])
    call("parlops_solver_set_null_space", s.handle, ns is True, len(vecs), arr)


_SETTERS = {
    "pc": _set_pc,
    "restart": lambda s, v: call("parlops_solver_set_restart", s.handle, int(v)),
    "recycle": lambda s, v: call("parlops_solver_set_recycle", s.handle, int(v)),
    "damp": lambda s, v: call("parlops_solver_set_damping", s.handle, float(v)),
    "richardson_scale": lambda s, v: call("parlops_solver_set_richardson_scale", s.handle, float(v)),
    "initial_guess_nonzero": lambda s, v: call("parlops_solver_set_initial_guess_nonzero", s.handle, bool(v)),
    "history": lambda s, v: call("parlops_solver_keep_history", s.handle, bool(v)),
    "timing": lambda s, v: call("parlops_solver_set_timing", s.handle, bool(v)),
    "compute_eigenvalues": lambda s, v: call("parlops_solver_set_compute_eigenvalues", s.handle, bool(v)),
    "pc_side": _choice("parlops_solver_set_pc_side",
                       {"right": _capi.PARLOPS_PC_SIDE_DEFAULT, "default": _capi.PARLOPS_PC_SIDE_DEFAULT,
                        "left": _capi.PARLOPS_PC_LEFT}, "pc_side"),
    "norm_type": _choice("parlops_solver_set_norm_type",
                         {"unpreconditioned": _capi.PARLOPS_NORM_TYPE_UNPRECONDITIONED,
                          "natural": _capi.PARLOPS_NORM_TYPE_NATURAL}, "norm_type"),
    "reference": _choice("parlops_solver_set_convergence_reference",
                         {"rhs": _capi.PARLOPS_REFERENCE_RHS,
                          "initial_residual": _capi.PARLOPS_REFERENCE_INITIAL_RESIDUAL}, "reference"),
    "orthogonalization": _choice("parlops_solver_set_orthogonalization",
                                 {"classical": _capi.PARLOPS_ORTHOG_CLASSICAL,
                                  "modified": _capi.PARLOPS_ORTHOG_MODIFIED}, "orthogonalization"),
    "sparsity": lambda s, v: call("parlops_solver_set_sparsity", s.handle,
                                  {"soft": _capi.PARLOPS_THRESHOLD_SOFT, "hard": _capi.PARLOPS_THRESHOLD_HARD,
                                   "half": _capi.PARLOPS_THRESHOLD_HALF}[v[0]], float(v[1]),
                                  float(v[2]) if len(v) > 2 else 0.0),
    "cost_tolerances": lambda s, v: call("parlops_solver_set_cost_tolerances", s.handle, float(v[0]),
                                         float(v[1]) if len(v) > 1 else 0.0),
    "monitor": _set_monitor,
    "monitor_iterate": _set_monitor_iterate,
    "null_space": _set_null_space,
}


def eigsh(a, k=6, which="largest", v0=None, max_steps=None, tol=1e-10, return_eigenvectors=False):
    """The k largest or smallest eigenvalues of a Hermitian operator by Lanczos (SciPy's eigsh
    in spirit): eigenvalues (largest: descending; smallest: ascending), their residual norms, the vectors when asked, and the
    Lanczos steps taken. [collective]"""
    w = {"largest": _capi.PARLOPS_EIG_LARGEST, "smallest": _capi.PARLOPS_EIG_SMALLEST}[which]
    if v0 is None:
        v0 = Vector(a.cols, a.dtype).set_random(seed=1)
    ev = np.zeros(k)
    res = np.zeros(k)
    vecs = [Vector(a.cols, a.dtype) for _ in range(k)] if return_eigenvectors else []
    arr = (C.c_void_p * k)(*[v.handle.value for v in vecs]) if vecs else None
    steps = C.c_int64()
    m = max_steps if max_steps is not None else min(a.shape[0], max(30 * k, 300))
    call("parlops_eig_lanczos", a.handle, v0.handle, int(m), float(tol), int(k), w,
         ev.ctypes.data_as(C.POINTER(C.c_double)), res.ctypes.data_as(C.POINTER(C.c_double)), arr,
         C.byref(steps))
    return (ev, res, vecs, steps.value) if return_eigenvectors else (ev, res, steps.value)


def krylov_schur(a, k=6, which="largest", sigma=None, b=None, inv=None, v0=None, ncv=None,
                 max_products=100000, tol=1e-8, return_eigenvectors=False, monitor=None):
    """Krylov-Schur (thick-restart Lanczos, SLEPc's default) for k eigenvalues of the Hermitian
    operator `a`, or of the pencil (a, b) with b Hermitian positive definite, with a basis of at
    most `ncv` vectors (default SLEPc's max(2k, k + 15), at most a's size). `which`: "largest"
    (descending), "smallest" (ascending; with b, `inv` applies b^-1), or "nearest" (the eigenvalues
    nearest `sigma`, by increasing distance, by shift-and-invert: `inv` applies (a - sigma b)^-1,
    for instance an Operator.inverse of an AMG-preconditioned solver). `monitor(products,
    n_converged, values, estimates)` is called after each cycle; a true return stops the run.
    Returns the eigenvalues, their true relative residuals ||A x - lambda B x|| / (|lambda| ||B x||),
    the eigenvectors when asked, and the products made; ParlopsError
    (PARLOPS_ERR_NOT_CONVERGED) when the rule is not met. [collective]"""
    w = {"largest": _capi.PARLOPS_EIG_LARGEST, "smallest": _capi.PARLOPS_EIG_SMALLEST,
         "nearest": _capi.PARLOPS_EIG_NEAREST}[which]
    if which == "nearest" and sigma is None:
        raise ValueError("which='nearest' needs sigma (and inv applying (a - sigma b)^-1)")
    if v0 is None:
        v0 = Vector(a.cols, a.dtype).set_random(seed=1)
    n = a.shape[0]
    if ncv is None:
        ncv = min(max(2 * k, k + 15), n)
    ev = np.zeros(k)
    res = np.zeros(k)
    vecs = [Vector(a.cols, a.dtype) for _ in range(k)] if return_eigenvectors else []
    arr = (C.c_void_p * k)(*[v.handle.value for v in vecs]) if vecs else None
    products = C.c_int64()
    cb = _capi.parlops_eig_monitor_fn()
    if monitor is not None:
        def _cb(_ctx, prods, nconv, nv, values, estimates):
            try:
                vals = np.ctypeslib.as_array(values, shape=(nv,)).copy() if nv > 0 else np.zeros(0)
                ests = np.ctypeslib.as_array(estimates, shape=(nv,)).copy() if nv > 0 else np.zeros(0)
                return 1 if monitor(int(prods), int(nconv), vals, ests) else 0
            except BaseException as e:  # noqa: BLE001 (an exception stops the run on every rank)
                note_callback_error(e)
                return 1
        cb = _capi.parlops_eig_monitor_fn(_cb)
    call("parlops_eig_krylov_schur", a.handle, b.handle if b is not None else None,
         inv.handle if inv is not None else None, float(sigma or 0.0), v0.handle, int(k), int(ncv),
         int(max_products), float(tol), w, cb, None,
         ev.ctypes.data_as(C.POINTER(C.c_double)), res.ctypes.data_as(C.POINTER(C.c_double)), arr,
         C.byref(products))
    return (ev, res, vecs, products.value) if return_eigenvectors else (ev, res, products.value)
