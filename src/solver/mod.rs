//! Krylov and sparsity solvers with PETSc manners: one handle per solver, tolerances with the rule
//! ||r|| <= max(rtol ||b||, atol), divergence when ||r|| > dtol ||b||, a converged reason, residual
//! history, a monitor that may stop the solve, and work vectors reused across solves.
//!
//! Every method runs on any [`LinearOperator`] of any dtype. A local failure (an operator or
//! preconditioner that fails on one rank) is carried into the next global reduction, so every rank
//! stops together with that rank's message; breakdowns are decided from reduced values, hence the
//! same on every rank.

mod bicgstab;
mod cg;
mod cg_pipe;
mod cg_sr;
mod cgls;
mod gmres;
mod ista;
mod lsqr;
mod minres;
pub mod power;

use std::sync::Arc;

use crate::comm::{Comm, ReduceOp};
use crate::error::Result;
use crate::memory::Location;
use crate::op::basic::Diagonal;
use crate::op::{LinearOperator, Op};
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout};

/// Solution method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Cg,
    CgSingleReduction,
    CgPipelined,
    Cgls,
    Lsqr,
    Gmres,
    Fgmres,
    Bicgstab,
    Minres,
    Ista,
    Fista,
}

impl Method {
    pub fn from_code(c: i32) -> Option<Method> {
        use Method::*;
        [
            Cg,
            CgSingleReduction,
            CgPipelined,
            Cgls,
            Lsqr,
            Gmres,
            Fgmres,
            Bicgstab,
            Minres,
            Ista,
            Fista,
        ]
        .get(usize::try_from(c).ok()?)
        .copied()
    }
    pub fn name(self) -> &'static str {
        match self {
            Method::Cg => "CG",
            Method::CgSingleReduction => "CG (single reduction)",
            Method::CgPipelined => "CG (pipelined)",
            Method::Cgls => "CGLS",
            Method::Lsqr => "LSQR",
            Method::Gmres => "GMRES",
            Method::Fgmres => "FGMRES",
            Method::Bicgstab => "BiCGStab",
            Method::Minres => "MINRES",
            Method::Ista => "ISTA",
            Method::Fista => "FISTA",
        }
    }
    /// Least-squares methods work on rectangular operators; the others need a square one.
    pub fn least_squares(self) -> bool {
        matches!(
            self,
            Method::Cgls | Method::Lsqr | Method::Ista | Method::Fista
        )
    }
}

/// Why a solve stopped (PETSc's KSPConvergedReason values where they exist).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    Iterating,
    ConvergedRtol,
    ConvergedAtol,
    ConvergedUser,
    DivergedMaxIter,
    DivergedDtol,
    DivergedBreakdown,
    DivergedIndefinite,
    DivergedNan,
    DivergedUser,
}

impl Reason {
    pub fn code(self) -> i32 {
        match self {
            Reason::Iterating => 0,
            Reason::ConvergedRtol => 2,
            Reason::ConvergedAtol => 3,
            Reason::ConvergedUser => 4,
            Reason::DivergedMaxIter => -3,
            Reason::DivergedDtol => -4,
            Reason::DivergedBreakdown => -5,
            Reason::DivergedIndefinite => -8,
            Reason::DivergedNan => -9,
            Reason::DivergedUser => -10,
        }
    }
    pub fn converged(self) -> bool {
        self.code() > 0
    }
    pub fn name(self) -> &'static str {
        match self {
            Reason::Iterating => "PARLOPS_ITERATING",
            Reason::ConvergedRtol => "PARLOPS_CONVERGED_RTOL",
            Reason::ConvergedAtol => "PARLOPS_CONVERGED_ATOL",
            Reason::ConvergedUser => "PARLOPS_CONVERGED_USER",
            Reason::DivergedMaxIter => "PARLOPS_DIVERGED_MAX_ITER",
            Reason::DivergedDtol => "PARLOPS_DIVERGED_DTOL",
            Reason::DivergedBreakdown => "PARLOPS_DIVERGED_BREAKDOWN",
            Reason::DivergedIndefinite => "PARLOPS_DIVERGED_INDEFINITE_MATRIX",
            Reason::DivergedNan => "PARLOPS_DIVERGED_NAN",
            Reason::DivergedUser => "PARLOPS_DIVERGED_USER",
        }
    }
}

/// Thresholding of ISTA and FISTA (PyLops' soft, hard and half).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threshold {
    Soft,
    Hard,
    Half,
}

/// What the residual norm is compared with in the stopping rule ||r|| <= max(rtol * ref, atol).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reference {
    /// ref = ||b|| in the norm the method tests (PETSc's default).
    Rhs,
    /// ref = the residual norm at iteration 0, in the norm the method tests (PETSc's
    /// KSPConvergedDefaultSetUIRNorm; what MFEM's iterative solvers do).
    InitialResidual,
}

impl Reference {
    pub fn from_code(c: i32) -> Option<Reference> {
        match c {
            0 => Some(Reference::Rhs),
            1 => Some(Reference::InitialResidual),
            _ => None,
        }
    }
}

/// Solver settings (PETSc's defaults for the tolerances).
#[derive(Clone, Debug)]
pub struct Params {
    pub rtol: f64,
    pub atol: f64,
    pub dtol: f64,
    pub max_iter: i64,
    pub nonzero_guess: bool,
    pub restart: usize,
    pub damp: f64,
    pub keep_history: bool,
    pub threshold: Threshold,
    pub eps: f64,
    /// ISTA/FISTA step; None: 1 / largest eigenvalue of A^H A by power iteration
    pub step: Option<f64>,
    /// CG family: test the natural norm sqrt(r^H M r) against sqrt(b^H M b) (MFEM's CGSolver)
    /// instead of ||r|| against ||b||.
    pub natural_norm: bool,
    /// What rtol is relative to.
    pub reference: Reference,
}

impl Default for Params {
    fn default() -> Params {
        Params {
            rtol: 1e-5,
            atol: 1e-50,
            dtol: 1e5,
            max_iter: 10000,
            nonzero_guess: false,
            restart: 30,
            damp: 0.0,
            keep_history: false,
            threshold: Threshold::Soft,
            eps: 0.1,
            step: None,
            natural_norm: false,
            reference: Reference::Rhs,
        }
    }
}

/// What a solve did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Info {
    pub iterations: i64,
    pub reason: Reason,
    pub initial_residual_norm: f64,
    pub final_residual_norm: f64,
    pub rhs_norm: f64,
    /// Least squares: ||b - A x||, and sqrt(||b - A x||^2 + damp^2 ||x||^2) (CGLS, LSQR, ISTA, FISTA).
    pub r1norm: f64,
    pub r2norm: f64,
}

impl Default for Info {
    fn default() -> Info {
        Info {
            iterations: 0,
            reason: Reason::Iterating,
            initial_residual_norm: 0.0,
            final_residual_norm: 0.0,
            rhs_norm: 0.0,
            r1norm: 0.0,
            r2norm: 0.0,
        }
    }
}

/// Monitor: (iteration, residual norm) -> true to stop the solve.
pub type MonitorFn = Box<dyn FnMut(i64, f64) -> bool + Send>;

/// Work vectors kept by a solver between solves.
pub(crate) struct Workspace<T: Scalar> {
    vecs: Vec<DistVector<T>>,
    /// Where this solve's vectors live (the solution's memory and stream).
    loc: Location,
    stream: Option<crate::gpu::Stream>,
}

impl<T: Scalar> Workspace<T> {
    fn new() -> Self {
        Workspace {
            vecs: Vec::new(),
            loc: Location::Host,
            stream: None,
        }
    }
    /// `n` vectors of `layout` (reused when the layout fits, allocated otherwise); give them back
    /// with [`Workspace::put`].
    pub(crate) fn take(&mut self, n: usize, layout: &Arc<Layout>) -> Result<Vec<DistVector<T>>> {
        let mut out = Vec::with_capacity(n);
        // vectors allocated here (dropped if any rank fails, so that every workspace stays the same)
        let mut fresh = Vec::new();
        let mut allocated = false;
        let mut failed = Ok(());
        while out.len() + fresh.len() < n {
            match self.vecs.iter().position(|v| {
                v.layout().compatible(layout)
                    && v.location() == self.loc
                    && v.caller_stream() == self.stream
            }) {
                Some(i) => {
                    // zeroed, so that nothing from an earlier solve (a NaN) leaks into 0 * v
                    let mut v = self.vecs.swap_remove(i);
                    v.fill(T::zero())?;
                    out.push(v)
                }
                None => {
                    allocated = true;
                    let v = DistVector::new_in(layout.clone(), self.loc).and_then(|mut v| {
                        if self.stream.is_some() {
                            v.set_stream(self.stream)?;
                        }
                        Ok(v)
                    });
                    match v {
                        Ok(v) => fresh.push(v),
                        Err(e) => {
                            failed = Err(e);
                            break;
                        }
                    }
                }
            }
        }
        if allocated {
            // allocations (host or device) can fail on one rank: agreed before any collective
            // (every rank allocates at the same solve: the workspaces follow the same calls)
            if let Err(e) = layout.comm().agree(failed) {
                self.vecs.extend(out);
                return Err(e);
            }
        }
        out.extend(fresh);
        Ok(out)
    }
    pub(crate) fn put(&mut self, v: Vec<DistVector<T>>) {
        self.vecs.extend(v);
    }
}

/// What every method gets: the operators, settings, convergence test and work vectors.
pub(crate) struct Ctx<'a, T: Scalar> {
    pub op: &'a dyn LinearOperator<T>,
    pub pc: Option<&'a dyn LinearOperator<T>>,
    pub p: &'a Params,
    pub comm: Arc<Comm>,
    pub ws: &'a mut Workspace<T>,
    monitor: Option<&'a mut MonitorFn>,
    history: &'a mut Vec<f64>,
    print: bool,
    pub name: &'static str,
    /// The tested norm at the first convergence test of this solve (iteration 0).
    first: Option<f64>,
}

impl<T: Scalar> Ctx<'_, T> {
    /// z = M r (or a copy of r without preconditioner).
    pub fn precond(&self, r: &DistVector<T>, z: &mut DistVector<T>) -> Result<()> {
        match self.pc {
            Some(m) => m.apply(r, z),
            None => z.copy_from(r),
        }
    }

    /// What rtol is relative to: `bnorm` (the right-hand side's norm as the method tests it), or the
    /// norm at the first convergence test of this solve (PARLOPS_REFERENCE_INITIAL_RESIDUAL).
    pub fn reference(&self, bnorm: f64) -> f64 {
        match self.p.reference {
            Reference::Rhs => bnorm,
            Reference::InitialResidual => self.first.unwrap_or(bnorm),
        }
    }

    /// Does the stopping rule rnorm <= max(rtol ref, atol) hold (both finite)? `ref` is `bnorm` or
    /// the initial residual norm ([`Ctx::reference`]).
    pub fn holds(&self, rnorm: f64, bnorm: f64) -> bool {
        let r = self.reference(bnorm);
        rnorm.is_finite() && r.is_finite() && rnorm <= (self.p.rtol * r).max(self.p.atol)
    }

    /// The convergence test at iteration `it` with residual norm `rnorm`, against `bnorm` (or, with
    /// [`Reference::InitialResidual`], against the `rnorm` of the first test of the solve): the one
    /// place where a method decides convergence (rnorm <= max(rtol ref, atol)); a non-finite
    /// `rnorm` or `bnorm` is [`Reason::DivergedNan`]. Both are reduced values, so every rank decides
    /// alike. Calls the monitor (a user stop request is agreed across ranks), records the history, prints
    /// with PARLOPS_MONITOR=1.
    pub fn check(&mut self, it: i64, rnorm: f64, bnorm: f64) -> Result<Option<Reason>> {
        if self.first.is_none() {
            self.first = Some(rnorm);
        }
        let bnorm = self.reference(bnorm);
        if self.p.keep_history {
            self.history.push(rnorm);
        }
        if self.print && self.comm.rank() == 0 {
            println!("{it:4} KSP {} Residual norm {}", self.name, sci(rnorm));
        }
        if let Some(m) = self.monitor.as_mut() {
            let stop = if m(it, rnorm) { 1.0 } else { 0.0 };
            let any = self.comm.allreduce_f64(&[stop], ReduceOp::Max)?;
            if any[0] > 0.0 {
                return Ok(Some(Reason::DivergedUser));
            }
        }
        // NaN or Inf in the residual or the reference norm is a divergence, never a convergence
        if !rnorm.is_finite() || !bnorm.is_finite() {
            return Ok(Some(Reason::DivergedNan));
        }
        if self.holds(rnorm, bnorm) {
            return Ok(Some(if self.p.rtol * bnorm >= self.p.atol {
                Reason::ConvergedRtol
            } else {
                Reason::ConvergedAtol
            }));
        }
        if it > 0 && rnorm > self.p.dtol * bnorm.max(f64::MIN_POSITIVE) {
            return Ok(Some(Reason::DivergedDtol));
        }
        if it >= self.p.max_iter {
            return Ok(Some(Reason::DivergedMaxIter));
        }
        Ok(None)
    }
}

/// C's %.12e: 1.234567890123e+00.
pub(crate) fn sci(v: f64) -> String {
    if !v.is_finite() || v == 0.0 {
        return format!("{v:.12e}").replace("e0", "e+00");
    }
    let e = v.abs().log10().floor() as i32;
    let mut m = v / 10f64.powi(e);
    let mut e = e;
    if m.abs() >= 9.9999999999995 {
        m /= 10.0;
        e += 1;
    }
    format!("{m:.12}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

/// Run a method with `n` work vectors of `layout` taken from (and given back to) the workspace.
pub(crate) fn with_vecs<T: Scalar, R>(
    ctx: &mut Ctx<T>,
    n: usize,
    layout: &Arc<Layout>,
    f: impl FnOnce(&mut Ctx<T>, &mut [DistVector<T>]) -> Result<R>,
) -> Result<R> {
    let mut v = ctx.ws.take(n, layout)?;
    let out = f(ctx, &mut v);
    ctx.ws.put(v);
    out
}

/// [`with_vecs`] for the least-squares methods: `nr` vectors of the rows layout, `nc` of the columns.
pub(crate) fn with_vecs2<T: Scalar, R>(
    ctx: &mut Ctx<T>,
    nr: usize,
    rows: &Arc<Layout>,
    nc: usize,
    cols: &Arc<Layout>,
    f: impl FnOnce(&mut Ctx<T>, &mut [DistVector<T>], &mut [DistVector<T>]) -> Result<R>,
) -> Result<R> {
    let mut r = ctx.ws.take(nr, rows)?;
    let mut c = match ctx.ws.take(nc, cols) {
        Ok(c) => c,
        Err(e) => {
            ctx.ws.put(r);
            return Err(e);
        }
    };
    let out = f(ctx, &mut r, &mut c);
    ctx.ws.put(r);
    ctx.ws.put(c);
    out
}

/// The driver's last check (on by default): a method that claims convergence must leave a finite x.
static FINAL_CHECK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Switch the driver's final check off (tests use this to see what the methods decide by themselves).
#[doc(hidden)]
pub fn set_final_check(on: bool) {
    FINAL_CHECK.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// A norm from a reduced squared value (||r||^2 = r^H r, or r^H M r): its square root, with NaN kept
/// (never clamped to 0, which would read as convergence) and a negative value, which no norm has,
/// turned into NaN too. Callers for which a negative value means an indefinite preconditioner test
/// the sign first.
pub(crate) fn root(sq: f64) -> f64 {
    if sq >= 0.0 { sq.sqrt() } else { f64::NAN }
}

/// Is any entry of x NaN or Inf, on any rank? One reduction; every rank gets the same answer. [collective]
fn nonfinite_anywhere<T: Scalar>(comm: &Comm, x: &DistVector<T>) -> Result<bool> {
    let local = if x.is_device() {
        crate::vector::device::norm_partial(x, crate::vector::NormKind::Inf).map(|(v, _)| v)
    } else {
        Ok(if x.local().iter().all(|v| v.abs_f64().is_finite()) {
            0.0
        } else {
            f64::INFINITY
        })
    };
    // a device failure on one rank travels with the flag (as 1 in a second slot)
    let (flag, failed) = match &local {
        Ok(v) => (if v.is_finite() { 0.0 } else { 1.0 }, 0.0),
        Err(_) => (0.0, 1.0),
    };
    let r = comm.allreduce_f64(&[flag, failed], ReduceOp::Max)?;
    if r[1] > 0.0 {
        comm.agree(local)?;
    }
    Ok(r[0] > 0.0)
}

/// Real part of a reduced scalar.
pub(crate) fn re<T: Scalar>(v: T) -> f64 {
    v.to_parts().0
}

/// The operators as a solve sees them: every apply runs inside a per-rank panic catcher, so that a
/// panic on one rank becomes a local error carried into the next reduction (as a failing callback's
/// is) instead of leaving the other ranks waiting there.
struct Guarded<'a, T: Scalar>(&'a dyn LinearOperator<T>);

impl<T: Scalar> LinearOperator<T> for Guarded<'_, T> {
    fn rows(&self) -> &Arc<Layout> {
        self.0.rows()
    }
    fn cols(&self) -> &Arc<Layout> {
        self.0.cols()
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        crate::error::catch_panic(&self.0.describe(), || self.0.forward(x, y))
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        crate::error::catch_panic(&self.0.describe(), || self.0.backward(y, x))
    }
    fn handles(&self, loc: Location) -> bool {
        self.0.handles(loc)
    }
    fn apply(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        crate::error::catch_panic(&self.0.describe(), || self.0.apply(x, y))
    }
    fn apply_adjoint(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        crate::error::catch_panic(&self.0.describe(), || self.0.apply_adjoint(y, x))
    }
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self.0.as_any()
    }
    fn diagonal(&self, d: &mut DistVector<T>) -> Result<()> {
        crate::error::catch_panic(&self.0.describe(), || self.0.diagonal(d))
    }
}

/// A solver for operators of element type `T`.
pub struct Solver<T: Scalar> {
    pub method: Method,
    pub params: Params,
    op: Option<Op<T>>,
    pc: Option<Op<T>>,
    jacobi: bool,
    jacobi_op: Option<(usize, Op<T>)>,
    monitor: Option<MonitorFn>,
    history: Vec<f64>,
    info: Info,
    ws: Workspace<T>,
}

impl<T: Scalar> Solver<T> {
    pub fn new(method: Method) -> Solver<T> {
        Solver {
            method,
            params: Params::default(),
            op: None,
            pc: None,
            jacobi: false,
            jacobi_op: None,
            monitor: None,
            history: Vec::new(),
            info: Info::default(),
            ws: Workspace::new(),
        }
    }

    pub fn set_operator(&mut self, op: Op<T>) -> Result<()> {
        if !self.method.least_squares() && !op.rows().compatible(op.cols()) {
            crate::bail!(
                SizeMismatch,
                "{} needs a square operator with equal row and column layouts; {} is {}x{} (rows split as {:?}, columns as {:?}); \
                 use CGLS or LSQR for least squares",
                self.method.name(),
                op.describe(),
                op.rows().global_len(),
                op.cols().global_len(),
                op.rows().local_lens(),
                op.cols().local_lens()
            );
        }
        let same = self.op.as_ref().is_some_and(|o| Arc::ptr_eq(o, &op));
        if !same {
            self.jacobi_op = None;
        }
        self.op = Some(op);
        Ok(())
    }

    /// M^{-1} applied as z = M r; `None` removes it.
    pub fn set_preconditioner(&mut self, pc: Option<Op<T>>) {
        self.pc = pc;
        self.jacobi = false;
    }

    /// Jacobi from the operator's diagonal (computed at the next solve, and again when the operator changes).
    pub fn set_jacobi(&mut self) {
        self.jacobi = true;
        self.pc = None;
        self.jacobi_op = None;
    }

    /// Jacobi, keeping a diagonal already computed for the same operator.
    pub fn set_jacobi_keep(&mut self) {
        self.jacobi = true;
        self.pc = None;
    }

    pub fn set_monitor(&mut self, m: Option<MonitorFn>) {
        self.monitor = m;
    }

    pub fn info(&self) -> Info {
        self.info
    }
    pub fn history(&self) -> &[f64] {
        &self.history
    }
    pub fn operator(&self) -> Option<&Op<T>> {
        self.op.as_ref()
    }

    /// The inverse diagonal as an operator; zero or non-finite diagonal entries are an error (on every rank).
    fn jacobi_pc(&mut self, op: &Op<T>) -> Result<Op<T>> {
        let key = Arc::as_ptr(op) as *const u8 as usize;
        if let Some((k, j)) = &self.jacobi_op
            && *k == key
        {
            return Ok(j.clone());
        }
        let mut d = DistVector::<T>::new(op.rows().clone());
        let got = match &mut d {
            Ok(d) => crate::error::catch_panic("the operator's diagonal", || op.diagonal(d)),
            Err(e) => Err(e.clone()),
        };
        let local = got.and_then(|_| {
            let d = d.as_mut().map_err(|e| e.clone())?;
            let start = d.layout().local_start();
            for (i, v) in d.local_mut().iter_mut().enumerate() {
                if v.is_zero() || !v.abs_f64().is_finite() {
                    crate::bail!(
                        InvalidArgument,
                        "Jacobi: the diagonal entry of global row {} is {:?}; it must be non-zero and finite",
                        start + i as i64,
                        v
                    );
                }
                let (a, b) = v.to_parts();
                let n = a * a + b * b;
                *v = T::from_parts_lossy(a / n, -b / n);
            }
            Ok(())
        });
        op.rows().comm().agree(local)?;
        let d = d?;
        let j = op.rows().comm().agree(Diagonal::new(&d))?;
        let j: Op<T> = Arc::new(j);
        self.jacobi_op = Some((key, j.clone()));
        Ok(j)
    }

    /// Solve A x = b (least squares for CGLS, LSQR, ISTA, FISTA); x holds the initial guess when
    /// `params.nonzero_guess`. The outcome is in [`Solver::info`]; a diverged solve is not an error. [collective]
    pub fn solve(&mut self, b: &DistVector<T>, x: &mut DistVector<T>) -> Result<Info> {
        let op = self.op.clone().ok_or_else(|| {
            crate::err!(
                InvalidArgument,
                "no operator: call set_operator before solve"
            )
        })?;
        crate::op::check_apply(op.as_ref(), x, b, false)?;
        if x.is_device() && matches!(self.method, Method::Ista | Method::Fista) {
            // the soft-thresholding step runs on the host: solve on host copies
            let hb = b.to_location(Location::Host)?;
            let mut hx = x.to_location(Location::Host)?;
            let info = self.solve(&hb, &mut hx)?;
            x.copy_any(&hx)?;
            x.settle()?;
            return Ok(info);
        }
        self.ws.loc = x.location();
        self.ws.stream = x.caller_stream();
        let p = &self.params;
        if !(p.rtol >= 0.0 && p.atol >= 0.0 && p.dtol > 0.0 && p.max_iter >= 0) || p.rtol.is_nan() {
            crate::bail!(
                InvalidArgument,
                "tolerances must be rtol >= 0, atol >= 0, dtol > 0 and max_iter >= 0; got rtol {}, atol {}, dtol {}, max_iter {}",
                p.rtol,
                p.atol,
                p.dtol,
                p.max_iter
            );
        }
        let pc = if self.jacobi {
            Some(self.jacobi_pc(&op)?)
        } else {
            self.pc.clone()
        };
        if let Some(m) = &pc
            && (!m.rows().compatible(op.cols()) || !m.cols().compatible(op.cols()))
        {
            crate::bail!(
                SizeMismatch,
                "the preconditioner ({}, {}x{}) does not fit the operator's columns ({})",
                m.describe(),
                m.rows().global_len(),
                m.cols().global_len(),
                op.cols().global_len()
            );
        }
        self.history.clear();
        let print = crate::config::env()
            .get("PARLOPS_MONITOR")
            .is_some_and(|v| v != "0");
        let method = self.method;
        let gop = Guarded(op.as_ref());
        let gpc = pc.as_deref().map(Guarded);
        let mut ctx = Ctx {
            op: &gop,
            pc: gpc.as_ref().map(|g| g as &dyn LinearOperator<T>),
            p: &self.params,
            comm: op.rows().comm().clone(),
            ws: &mut self.ws,
            monitor: self.monitor.as_mut(),
            history: &mut self.history,
            print,
            name: method.name(),
            first: None,
        };
        if print && ctx.comm.rank() == 0 {
            println!(
                "  {} solve of {} ({} unknowns)",
                method.name(),
                op.describe(),
                op.cols().global_len()
            );
        }
        let info = match method {
            Method::Cg => cg::solve(&mut ctx, b, x),
            Method::CgSingleReduction => cg_sr::solve(&mut ctx, b, x),
            Method::CgPipelined => cg_pipe::solve(&mut ctx, b, x),
            Method::Cgls => cgls::solve(&mut ctx, b, x),
            Method::Lsqr => lsqr::solve(&mut ctx, b, x),
            Method::Gmres => gmres::solve(&mut ctx, b, x, false),
            Method::Fgmres => gmres::solve(&mut ctx, b, x, true),
            Method::Bicgstab => bicgstab::solve(&mut ctx, b, x),
            Method::Minres => minres::solve(&mut ctx, b, x),
            Method::Ista => ista::solve(&mut ctx, b, x, false),
            Method::Fista => ista::solve(&mut ctx, b, x, true),
        }?;
        let mut info = info;
        // the last safeguard: a converged reason needs a finite reported residual and a finite x on
        // every rank (one reduction). The methods decide this themselves; this catches what one misses.
        if info.reason.converged()
            && FINAL_CHECK.load(std::sync::atomic::Ordering::Relaxed)
            && (!info.final_residual_norm.is_finite() || nonfinite_anywhere(&ctx.comm, x)?)
        {
            info.reason = Reason::DivergedNan;
        }
        if print && ctx.comm.rank() == 0 {
            println!(
                "  {} {} in {} iterations",
                method.name(),
                info.reason.name(),
                info.iterations
            );
        }
        self.info = info;
        x.settle()?;
        Ok(info)
    }
}

/// Initial residual r = b - A x (or b with a zero guess, x zeroed). Returns the pending local outcome.
pub(crate) fn initial_residual<T: Scalar>(
    ctx: &Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    r: &mut DistVector<T>,
) -> Result<()> {
    if ctx.p.nonzero_guess {
        let e = ctx.op.apply(x, r);
        r.axpby(T::one(), b, -T::one())?;
        e
    } else {
        x.fill(T::zero())?;
        r.copy_from(b)
    }
}

/// Info for a solve that stopped at iteration `it`.
pub(crate) fn info(it: i64, reason: Reason, r0: f64, r: f64, bnorm: f64) -> Info {
    Info {
        iterations: it,
        reason,
        initial_residual_norm: r0,
        final_residual_norm: r,
        rhs_norm: bnorm,
        r1norm: r,
        r2norm: r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn petsc_style_numbers() {
        assert_eq!(sci(8.0), "8.000000000000e+00");
        assert_eq!(sci(0.0123), "1.230000000000e-02");
        assert_eq!(sci(-2.5e10), "-2.500000000000e+10");
        assert_eq!(sci(9.9999999999999), "1.000000000000e+01");
    }
    #[test]
    fn method_and_reason_codes() {
        for c in 0..11 {
            assert!(Method::from_code(c).is_some());
        }
        assert!(Method::from_code(11).is_none() && Method::from_code(-1).is_none());
        assert_eq!(Reason::DivergedIndefinite.code(), -8);
        assert!(Reason::ConvergedAtol.converged() && !Reason::DivergedNan.converged());
    }
}
