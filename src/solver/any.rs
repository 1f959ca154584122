//! A solver whose element type is chosen at run time (what a C handle holds), beside
//! [`AnyOp`](crate::op::AnyOp) and [`AnyVec`](crate::vector::AnyVec): the settings are kept here
//! and the typed [`Solver`] of the operator's dtype is made at the first solve (and kept, with its
//! work vectors, for the next).

use std::sync::Arc;

#[path = "any_solve.rs"]
mod solve;

use super::{Info, IterateMonitor, Method, Params, Solver};
use crate::comm::Comm;
use crate::error::Result;
use crate::op::{AnyOp, Op};
use crate::scalar::{DType, Scalar, c32, c64};
use crate::vector::{AnyVec, DistVector};

/// A monitor shared by the run-time typed solver and the typed one it makes: (iteration, residual
/// norm) -> true to stop the solve.
pub type SharedMonitor = Arc<dyn Fn(i64, f64) -> bool + Send + Sync>;

/// One of the four typed solvers.
enum Typed {
    F32(Solver<f32>),
    F64(Solver<f64>),
    C64(Solver<c32>),
    C128(Solver<c64>),
}

/// The typed solver inside `$t`, bound to `$s`, whatever its dtype.
macro_rules! any_solver {
    ($t:expr, $s:ident => $body:expr) => {
        match $t {
            Typed::F32($s) => $body,
            Typed::F64($s) => $body,
            Typed::C64($s) => $body,
            Typed::C128($s) => $body,
        }
    };
}

/// A solver of any dtype.
pub struct AnySolver {
    comm: Arc<Comm>,
    method: Method,
    /// Tolerances and the other settings of every solve.
    pub params: Params,
    op: Option<AnyOp>,
    pc: Option<AnyOp>,
    /// What names the operator and the preconditioner the same on every rank (the C handles'
    /// identities; 0 from Rust): agreed at every solve with the settings.
    op_ident: u64,
    pc_ident: u64,
    jacobi: bool,
    /// The preconditioner was set since the last solve: its reuse policy starts afresh.
    pc_set: bool,
    monitor: Option<SharedMonitor>,
    watch: Option<IterateMonitor>,
    typed: Option<Typed>,
    info: Info,
    /// Each column's outcome of the last solve of several right-hand sides.
    infos: Vec<Info>,
    /// The null space: (the constant vector, copies of the other vectors), and how many times it
    /// was set (the typed solver copies it when this changes).
    null_space: Option<(bool, Vec<AnyVec>)>,
    null_space_gen: u64,
    /// What a solve prints on rank 0 (the run-time options ask for it).
    printing: super::settings::Printing,
    /// Record where each solve's time goes (off by default; -log_view and PARLOPS_LOG turn it on).
    pub timing: bool,
}

impl AnySolver {
    /// A solver for `method` on `comm` (the communicator of the operators it will solve with).
    pub fn new(comm: Arc<Comm>, method: Method) -> AnySolver {
        AnySolver {
            comm,
            method,
            params: Params::default(),
            op: None,
            pc: None,
            op_ident: 0,
            pc_ident: 0,
            jacobi: false,
            pc_set: false,
            monitor: None,
            watch: None,
            typed: None,
            info: Info::default(),
            infos: Vec::new(),
            null_space: None,
            null_space_gen: 0,
            printing: super::settings::Printing {
                // PARLOPS_LOG=1: a table after each solve; =finalize: one at parlops_finalize
                log: crate::config::env()
                    .get("PARLOPS_LOG")
                    .is_some_and(|v| v != "0" && v != "finalize"),
                ..Default::default()
            },
            timing: crate::config::env().get("PARLOPS_LOG") == Some("finalize"),
        }
    }

    /// Where the last solve's time went on this rank (None before a solve).
    pub fn log(&self) -> Option<&crate::timing::Totals> {
        let t = self.typed.as_ref()?;
        any_solver!(t, s => s.log())
    }

    /// The method, from the next solve on (checked by [`AnySolver::set_method`]).
    pub(super) fn replace_method(&mut self, method: Method) {
        self.method = method;
    }

    /// The number of vectors GCRO-DR keeps for the next solve (0 before a solve).
    pub fn recycled(&self) -> usize {
        self.typed
            .as_ref()
            .map_or(0, |t| any_solver!(t, s => s.recycled()))
    }

    /// Forget GCRO-DR's recycled space (the next solve starts without one).
    pub fn drop_recycle(&mut self) {
        if let Some(t) = self.typed.as_mut() {
            any_solver!(t, s => s.drop_recycle())
        }
    }

    /// What each solve prints on rank 0 from now on.
    pub fn set_printing(&mut self, p: super::settings::Printing) {
        self.printing = p;
    }

    /// What each solve prints on rank 0.
    pub fn printing(&self) -> super::settings::Printing {
        self.printing
    }

    /// The operator's null space to remove (see [`Solver::set_null_space`]): the constant vector
    /// with `constant`, and copies of `vecs` (taken now). No constant and no vectors remove it.
    pub fn set_null_space(&mut self, constant: bool, vecs: &[&AnyVec]) -> Result<()> {
        if (constant || !vecs.is_empty()) && self.method.least_squares() {
            crate::bail!(
                NotSupported,
                "a null space is for square solves; {} solves least squares",
                self.method.name()
            );
        }
        for (i, v) in vecs.iter().enumerate() {
            if !Arc::ptr_eq(&self.comm, v.layout().comm()) {
                crate::bail!(
                    LayoutMismatch,
                    "vecs[{i}] lives on another communicator than the solver"
                );
            }
        }
        let copies = vecs
            .iter()
            .map(|v| v.clone_values())
            .collect::<Result<Vec<_>>>()?;
        self.null_space = (constant || !copies.is_empty()).then_some((constant, copies));
        self.null_space_gen += 1;
        Ok(())
    }

    /// Typed copies of the null space, for a solver of element type `T`.
    fn typed_null_space<T: Scalar>(&self) -> Result<Option<(bool, Vec<DistVector<T>>)>> {
        let Some((c, vs)) = &self.null_space else {
            return Ok(None);
        };
        let typed = vs
            .iter()
            .map(|v| {
                let t = v.typed::<T>().ok_or_else(|| {
                    crate::err!(
                        DTypeMismatch,
                        "a null-space vector is {}, the operator {}",
                        v.dtype().name(),
                        T::DTYPE.name()
                    )
                })?;
                let mut d = t.duplicate()?;
                d.copy_from(t)?;
                Ok(d)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Some((*c, typed)))
    }

    pub fn method(&self) -> Method {
        self.method
    }

    /// What the next solve will run, as text (PETSc's KSPView): the method and its settings, the
    /// communicator, the operator's and the preconditioner's trees ([`crate::op::tree::view`]).
    /// Local: this rank's settings (a solve agrees them).
    pub fn view(&self) -> String {
        let p = &self.params;
        let m = self.method;
        let mut v = format!(
            "solver: {} ({}) on {} rank(s); device data moves by {}\n",
            m.name(),
            m.c_name(),
            self.comm.size(),
            self.comm.transport().1
        );
        v += &format!(
            "  tolerances: rtol {:e}, atol {:e}, dtol {:e}, max_iter {}\n",
            p.rtol, p.atol, p.dtol, p.max_iter
        );
        v += &format!(
            "  stopping rule: {} norm against {} ({}); initial guess {}\n",
            if p.natural_norm {
                "the natural sqrt(r^H M r)"
            } else {
                "the method's"
            },
            p.reference.c_name(),
            if p.reference == super::Reference::Rhs {
                "||b||"
            } else {
                "the initial residual"
            },
            if p.nonzero_guess {
                "x as given"
            } else {
                "zero"
            }
        );
        if m.arnoldi() {
            v += &format!(
                "  restart {}, orthogonalization {}\n",
                p.restart,
                p.orthog.c_name()
            );
        }
        if m == Method::Gcrodr {
            v += &format!("  restart {}, ", p.restart);
        }
        if matches!(m, Method::Gcrodr | Method::CgDeflated) {
            v += &format!(
                "{}recycling {} vectors ({} kept now)\n",
                if m == Method::Gcrodr { "" } else { "  " },
                super::gcrodr::recycle_len(p, m),
                self.recycled()
            );
        }
        v += &format!(
            "  preconditioner side {}; local sums {}\n",
            p.pc_side.c_name(),
            p.sum_order.c_name()
        );
        if m.least_squares() && p.damp != 0.0 {
            v += &format!("  damping {:e}\n", p.damp);
        }
        if p.trust_radius > 0.0 {
            v += &format!("  trust-region radius {:e}\n", p.trust_radius);
        }
        if matches!(m, Method::Ista | Method::Fista) {
            v += &format!(
                "  threshold {}, eps {:e}, step {}; cost rules: rtol {:e} (to the first cost), rtol1 {:e} (to ||b||){}\n",
                p.threshold.c_name(),
                p.eps,
                p.step
                    .map_or("1 / lambda_max(A^H A)".to_string(), |s| format!("{s:e}")),
                p.cost_rtol,
                p.cost_rtol1,
                if p.cost_rtol > 0.0 || p.cost_rtol1 > 0.0 {
                    ""
                } else {
                    " (off)"
                }
            );
        }
        v += &format!(
            "  preconditioner reuse: set up again after new values at the first solve, then every {} solve(s){}\n",
            p.pc_reuse_every,
            if p.pc_reuse_growth > 0.0 {
                format!(" or when the iterations grow by {}x", p.pc_reuse_growth)
            } else {
                String::new()
            }
        );
        if let Some((c, vs)) = &self.null_space {
            v += &format!(
                "  null space removed: {}{} vector(s)\n",
                if *c { "the constants and " } else { "" },
                vs.len()
            );
        }
        let tree = |o: &AnyOp, out: &mut String| crate::any_op!(o, t => crate::op::tree::view(t.as_ref(), 4, out));
        match &self.op {
            Some(o) => {
                v += "  operator:\n";
                tree(o, &mut v);
            }
            None => v += "  operator: not set\n",
        }
        match (&self.pc, self.jacobi) {
            (_, true) => {
                v += "  preconditioner: Jacobi (D^-1 of the operator, taken at the solve)\n"
            }
            (Some(pc), _) => {
                v += "  preconditioner:\n";
                tree(pc, &mut v);
            }
            (None, _) => v += "  preconditioner: none\n",
        }
        v
    }
    pub fn comm(&self) -> &Arc<Comm> {
        &self.comm
    }
    pub fn operator(&self) -> Option<&AnyOp> {
        self.op.as_ref()
    }

    fn same_comm(&self, a: &AnyOp, what: &str) -> Result<()> {
        if !Arc::ptr_eq(&self.comm, a.rows().comm()) {
            crate::bail!(
                LayoutMismatch,
                "argument '{what}' ({}) lives on another communicator than the solver; create both from the same parlops_comm",
                a.describe()
            );
        }
        Ok(())
    }

    /// The operator A (kept by reference). Methods other than the least-squares ones need a square
    /// A with equal row and column layouts.
    ///
    /// `ident` names the operator the same on every rank (a C handle's identity; 0 from Rust).
    pub fn set_operator(&mut self, a: &AnyOp, ident: u64) -> Result<()> {
        self.same_comm(a, "A")?;
        if !self.method.least_squares() && !a.rows().compatible(a.cols()) {
            crate::bail!(
                SizeMismatch,
                "{} needs a square operator with equal row and column layouts; A is {}x{}; use CGLS or LSQR",
                self.method.name(),
                a.rows().global_len(),
                a.cols().global_len()
            );
        }
        self.op = Some(a.clone());
        self.op_ident = ident;
        Ok(())
    }

    /// Preconditioner M^{-1} applied as z = M r; `None` removes it (and Jacobi).
    /// `ident` (with the operator) names it the same on every rank (see [`AnySolver::set_operator`]).
    pub fn set_preconditioner(&mut self, m: Option<(&AnyOp, u64)>) -> Result<()> {
        if let Some((m, _)) = m {
            self.same_comm(m, "M")?;
        }
        self.pc = m.map(|(m, _)| m.clone());
        self.pc_ident = m.map_or(0, |(_, i)| i);
        self.jacobi = false;
        self.pc_set = true;
        Ok(())
    }

    /// Jacobi from A's diagonal (taken at the next solve, and again when A changes: another
    /// operator, or new values by the reuse policy).
    pub fn set_jacobi(&mut self) {
        self.jacobi = true;
        self.pc = None;
        self.pc_ident = 0;
        self.pc_set = true;
    }

    pub fn set_monitor(&mut self, m: Option<SharedMonitor>) {
        self.monitor = m;
    }

    /// A monitor that sees the iterate and its residual ([`Solver::set_iterate_monitor`]).
    pub fn set_iterate_monitor(&mut self, m: Option<IterateMonitor>) {
        self.watch = m;
    }

    /// Everything that steers the iteration and must be the same on every rank: the method, every
    /// setting of [`Params::agreement_values`], and whether a monitor, Jacobi or a preconditioner is set.
    pub fn agreement_values(&self) -> Vec<(&'static str, i64)> {
        let mut v = vec![
            ("method", self.method.code() as i64),
            (
                "monitor set",
                (self.monitor.is_some() || self.printing.monitor) as i64,
            ),
            (
                "log view (-log_view, PARLOPS_LOG)",
                self.printing.log as i64,
            ),
            ("iterate monitor set", self.watch.is_some() as i64),
            ("Jacobi set", self.jacobi as i64),
            ("preconditioner set", self.pc.is_some() as i64),
            ("operator", self.op_ident as i64),
            ("preconditioner", self.pc_ident as i64),
            (
                "null space: constant",
                self.null_space.as_ref().is_some_and(|n| n.0) as i64,
            ),
            (
                "null space: vectors",
                self.null_space.as_ref().map_or(0, |n| n.1.len()) as i64,
            ),
        ];
        v.extend(self.params.agreement_values());
        v
    }

    /// The operator, or an error when none is set.
    pub fn require_operator(&self) -> Result<&AnyOp> {
        self.op.as_ref().ok_or_else(|| {
            crate::err!(
                InvalidArgument,
                "no operator: call parlops_solver_set_operator first"
            )
        })
    }

    /// The local checks of a solve: an operator is set, and b, x and the preconditioner fit it.
    pub fn check_solve(&self, b: &AnyVec, x: &AnyVec) -> Result<()> {
        let op = self.require_operator()?;
        for (v, n) in [(b, "b"), (x, "x")] {
            if v.dtype() != op.dtype() {
                crate::bail!(
                    DTypeMismatch,
                    "argument '{n}' is {} but the operator is {}",
                    v.dtype().name(),
                    op.dtype().name()
                );
            }
        }
        for (i, v) in self.null_space.iter().flat_map(|n| n.1.iter()).enumerate() {
            if v.dtype() != op.dtype() {
                crate::bail!(
                    DTypeMismatch,
                    "null-space vector {i} is {} but the operator is {}",
                    v.dtype().name(),
                    op.dtype().name()
                );
            }
            if !v.layout().compatible(op.cols()) {
                crate::bail!(
                    SizeMismatch,
                    "null-space vector {i} has global length {} (split {:?}); the operator's columns have {} (split {:?})",
                    v.layout().global_len(),
                    v.layout().local_lens(),
                    op.cols().global_len(),
                    op.cols().local_lens()
                );
            }
        }
        if let Some(p) = &self.pc
            && p.dtype() != op.dtype()
        {
            crate::bail!(
                DTypeMismatch,
                "the preconditioner is {} but the operator is {}",
                p.dtype().name(),
                op.dtype().name()
            );
        }
        if !b.layout().compatible(op.rows()) || !x.layout().compatible(op.cols()) {
            crate::bail!(
                SizeMismatch,
                "'b' has global length {} (split {:?}) and 'x' {} (split {:?}); the operator maps {} (split {:?}) to {} (split {:?})",
                b.layout().global_len(),
                b.layout().local_lens(),
                x.layout().global_len(),
                x.layout().local_lens(),
                op.cols().global_len(),
                op.cols().local_lens(),
                op.rows().global_len(),
                op.rows().local_lens()
            );
        }
        Ok(())
    }

    /// A solver of this one's method and settings, on its operator and preconditioner (or Jacobi),
    /// for the operator's dtype `T`. Not the monitor: its context belongs to the caller, who may
    /// free it with this solver.
    fn snapshot<T: Scalar>(&self) -> Result<Solver<T>> {
        let typed = |o: &AnyOp, what: &str| {
            o.typed::<T>()
                .ok_or_else(|| crate::err!(DTypeMismatch, "the {what} is not {}", T::DTYPE.name()))
        };
        if self.params.trust_radius > 0.0 {
            crate::bail!(
                NotSupported,
                "an inverse solves to its tolerance: a trust-region solver (radius {}) stops short of it",
                self.params.trust_radius
            );
        }
        let mut s = Solver::new(self.method);
        s.params = self.params.clone();
        s.set_operator(typed(self.require_operator()?, "operator")?)?;
        if self.jacobi {
            s.set_jacobi();
        } else if let Some(p) = &self.pc {
            s.set_preconditioner(Some(typed(p, "preconditioner")?));
        }
        s.set_null_space(self.typed_null_space::<T>()?)?;
        Ok(s)
    }

    /// The inverse of the operator as an operator: each apply solves with a snapshot of this
    /// solver (see [`super::inverse`]); `accept_max_iter` lets a solve that ran out of iterations
    /// count as done.
    pub fn inverse(&self, accept_max_iter: bool) -> Result<AnyOp> {
        fn make<T: Scalar>(s: &AnySolver, accept: bool) -> Result<Op<T>> {
            Ok(Arc::new(super::inverse::Inverse::new(
                s.snapshot::<T>()?,
                accept,
            )?))
        }
        Ok(match self.require_operator()?.dtype() {
            DType::F32 => AnyOp::F32(make(self, accept_max_iter)?),
            DType::F64 => AnyOp::F64(make(self, accept_max_iter)?),
            DType::C64 => AnyOp::C64(make(self, accept_max_iter)?),
            DType::C128 => AnyOp::C128(make(self, accept_max_iter)?),
        })
    }

    /// The outcome of the last solve.
    pub fn info(&self) -> Info {
        self.info
    }

    /// The columns of the last solve (1 for a single solve).
    pub fn columns(&self) -> usize {
        self.infos.len().max(1)
    }

    /// Column `j`'s outcome of the last solve (the one column of a single solve).
    pub fn column_info(&self, j: usize) -> Option<Info> {
        if self.infos.is_empty() && j == 0 {
            return Some(self.info);
        }
        self.infos.get(j).copied()
    }

    /// The extreme eigenvalue (CG) or singular value (GMRES, FGMRES) estimates of the last solve
    /// made with `params.compute_eigs`.
    pub fn eigenvalue_estimates(&self) -> Result<(f64, f64)> {
        super::eig::supported(self.method)?;
        match &self.typed {
            None => crate::bail!(
                InvalidArgument,
                "no eigenvalue estimates: no solve yet (call parlops_solver_set_compute_eigenvalues, then solve)"
            ),
            Some(t) => any_solver!(t, s => s.eigenvalue_estimates()),
        }
    }

    /// Residual norms of the last solve (with `params.keep_history`).
    pub fn history(&self) -> &[f64] {
        match &self.typed {
            None => &[],
            Some(t) => any_solver!(t, s => s.history()),
        }
    }

    /// ||b - A x|| per iteration of the last least-squares solve ([`Solver::residual_history`]).
    pub fn residual_history(&self) -> &[f64] {
        match &self.typed {
            None => &[],
            Some(t) => any_solver!(t, s => s.residual_history()),
        }
    }
}

/// The typed solver of element type `T` inside a [`Typed`], and back.
trait Pick<T: Scalar> {
    fn pick(&mut self) -> Option<&mut Solver<T>>;
    fn wrap(s: Solver<T>) -> Self;
}

macro_rules! pick {
    ($t:ty, $v:ident) => {
        impl Pick<$t> for Typed {
            fn pick(&mut self) -> Option<&mut Solver<$t>> {
                match self {
                    Typed::$v(s) => Some(s),
                    _ => None,
                }
            }
            fn wrap(s: Solver<$t>) -> Typed {
                Typed::$v(s)
            }
        }
    };
}
pick!(f32, F32);
pick!(f64, F64);
pick!(c32, C64);
pick!(c64, C128);
