//! What every method works with: the work vectors a solver keeps between solves ([`Workspace`]) and
//! the per-solve context ([`Ctx`]) with the one convergence test.

use std::sync::Arc;

use super::{Info, IterateMonitor, MonitorAction, MonitorFn, Params, Reason, Reference, sci};
use crate::comm::{Comm, ReduceOp};
use crate::error::Result;
use crate::memory::Location;
use crate::op::LinearOperator;
use crate::scalar::Scalar;
use crate::vector::{AnyVec, DistVector, Layout};

/// Work vectors kept by a solver between solves.
pub(crate) struct Workspace<T: Scalar> {
    vecs: Vec<DistVector<T>>,
    /// GCRO-DR's recycled vectors U, kept between solves (dropped by `Solver::drop_recycle`).
    pub(crate) recycle: Vec<DistVector<T>>,
    /// Where this solve's vectors live (the solution's memory and stream).
    pub(super) loc: Location,
    pub(super) stream: Option<crate::exec::Stream>,
}

impl<T: Scalar> Workspace<T> {
    pub(super) fn new() -> Self {
        Workspace {
            vecs: Vec::new(),
            recycle: Vec::new(),
            loc: Location::Host,
            stream: None,
        }
    }
    /// `n` vectors of `layout` (reused when the layout fits, allocated otherwise), all zero; give
    /// them back with [`Workspace::put`].
    pub(crate) fn take(&mut self, n: usize, layout: &Arc<Layout>) -> Result<Vec<DistVector<T>>> {
        self.take_as(n, layout, true)
    }
    /// [`Workspace::take`]; without `zero`, reused vectors hold what an earlier solve left there
    /// (new ones are zero).
    fn take_as(
        &mut self,
        n: usize,
        layout: &Arc<Layout>,
        zero: bool,
    ) -> Result<Vec<DistVector<T>>> {
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
                    if zero {
                        v.fill(T::zero())?;
                    }
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
    pub(super) monitor: Option<&'a mut MonitorFn>,
    /// The monitor that sees x and r, and the solver's copies handed to it.
    pub(super) watch: Option<(&'a IterateMonitor, &'a mut Option<[AnyVec; 2]>)>,
    pub(super) history: &'a mut Vec<f64>,
    /// Least squares: ||b - A x|| per iteration ([`Ctx::record_residual`]).
    pub(super) residuals: &'a mut Vec<f64>,
    /// What the eigenvalue estimates need, when asked for (`params.compute_eigs`).
    pub(super) eig: Option<&'a mut super::eig::EigRecord>,
    pub(super) print: bool,
    pub name: &'static str,
    /// The tested norm at the first convergence test of this solve (iteration 0).
    pub(super) first: Option<f64>,
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

    /// The convergence the rule gives for a residual norm `rnorm` where it holds (which of its
    /// terms decided), without a monitor's say: None where it does not hold.
    pub fn met(&self, rnorm: f64, bnorm: f64) -> Option<Reason> {
        let r = self.reference(bnorm);
        self.holds(rnorm, r)
            .then_some(if self.p.rtol * r >= self.p.atol {
                Reason::ConvergedRtol
            } else {
                Reason::ConvergedAtol
            })
    }

    /// The end of a solve whose `reason` (a convergence seen on a recurrence residual) was checked
    /// on the true residual's norm `tnorm` at iteration `it`: the convergence where the rule holds
    /// for it, a divergence where it is not finite or no iteration is left, else None (the method
    /// goes on from the true residual).
    pub fn confirmed(&self, it: i64, reason: Reason, tnorm: f64, bnorm: f64) -> Option<Reason> {
        if self.holds(tnorm, bnorm) {
            Some(reason)
        } else if !tnorm.is_finite() {
            Some(Reason::DivergedNan)
        } else if it >= self.p.max_iter {
            Some(Reason::DivergedMaxIter)
        } else {
            None
        }
    }

    /// Record ||b - A x|| of this iteration (least squares, with `keep_history`).
    pub fn record_residual(&mut self, v: f64) {
        if self.p.keep_history {
            self.residuals.push(v);
        }
    }

    /// Is a monitor that sees the iterate set (GMRES forms its iterate only then)?
    pub fn watching(&self) -> bool {
        self.watch.is_some()
    }

    /// The iterate monitor's view of iterate `x` of the system with right-hand side `b`: copies of x
    /// and of b - A x, and what the monitor asks for. The outer error is every rank's (a failed
    /// allocation of the copies); the inner one is this rank's, to be agreed. [collective]
    fn observe(
        &mut self,
        it: i64,
        rnorm: f64,
        b: &DistVector<T>,
        x: &DistVector<T>,
    ) -> Result<Result<MonitorAction>> {
        let op = self.op;
        let Some((f, views)) = self.watch.as_mut() else {
            return Ok(Ok(MonitorAction::Continue));
        };
        let fits = views.as_ref().is_some_and(|[xv, rv]| {
            xv.dtype() == T::DTYPE
                && xv.location() == x.location()
                && xv.layout().compatible(x.layout())
                && rv.layout().compatible(b.layout())
        });
        if !fits {
            **views = None;
            let v = AnyVec::new(x.layout().clone(), T::DTYPE, x.location())
                .and_then(|xv| Ok([xv, AnyVec::new(b.layout().clone(), T::DTYPE, x.location())?]));
            **views = Some(self.comm.agree(v)?);
        }
        let Some([mut xv, mut rv]) = views.take() else {
            crate::bail!(Internal, "the monitor's vectors");
        };
        let (Some(xt), Some(rt)) = (xv.typed_mut::<T>(), rv.typed_mut::<T>()) else {
            crate::bail!(Internal, "the monitor's vectors' dtype");
        };
        // the product is collective: made whatever happened to the copy on this rank
        let e = xt.copy_from(x);
        let e = e.and(op.apply(x, rt));
        let e = e.and(rt.axpby(T::one(), b, -T::one()));
        let e = e.and(xt.settle()).and(rt.settle());
        if let Err(e) = e {
            **views = Some([xv, rv]);
            return Ok(Err(e));
        }
        let f = *f;
        let out = crate::error::catch_panic("the iterate monitor", || Ok(f(it, rnorm, [xv, rv])));
        Ok(out.map(|(action, back)| {
            **views = back;
            action
        }))
    }

    /// The convergence test at iteration `it` with residual norm `rnorm`, against `bnorm` (or, with
    /// [`Reference::InitialResidual`], against the `rnorm` of the first test of the solve), for the
    /// iterate `x` of the system with right-hand side `b` (what an iterate monitor sees): the one
    /// place where a method decides convergence (rnorm <= max(rtol ref, atol)); a non-finite
    /// `rnorm` or `bnorm` is [`Reason::DivergedNan`]. Both are reduced values, so every rank decides
    /// alike. Calls the monitors (their requests are agreed across ranks in one reduction), records
    /// the history, prints with PARLOPS_MONITOR=1.
    pub fn check(
        &mut self,
        it: i64,
        rnorm: f64,
        bnorm: f64,
        b: &DistVector<T>,
        x: &DistVector<T>,
    ) -> Result<Option<Reason>> {
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
        let mut user_converged = false;
        if self.monitor.is_some() || self.watch.is_some() {
            let watched = self.observe(it, rnorm, b, x)?;
            // a monitor that kept its vectors (or panicked) on one rank: all ranks make new ones
            let lost = self.watch.as_ref().is_some_and(|(_, v)| v.is_none());
            let local = watched.map(|action| {
                let stop = self.monitor.as_mut().is_some_and(|m| m(it, rnorm));
                vec![
                    (stop || action == MonitorAction::Stop) as i32 as f64,
                    // every rank must declare convergence: the maximum of "not converged"
                    (action != MonitorAction::Converged) as i32 as f64,
                    lost as i32 as f64,
                ]
            });
            let any = self.comm.allreduce_checked(local, 3, ReduceOp::Max);
            if any.as_ref().map_or(true, |a| a[2] > 0.0)
                && let Some((_, views)) = self.watch.as_mut()
            {
                **views = None;
            }
            let any = any?;
            if any[0] > 0.0 {
                return Ok(Some(Reason::DivergedUser));
            }
            user_converged = self.watch.is_some() && any[1] == 0.0;
        }
        Ok(self.verdict(it, rnorm, bnorm, user_converged))
    }

    /// The decision of [`Ctx::check`] once the monitors have spoken (`bnorm` is the reference).
    fn verdict(&self, it: i64, rnorm: f64, bnorm: f64, user_converged: bool) -> Option<Reason> {
        // NaN or Inf in the residual or the reference norm is a divergence, never a convergence
        if !rnorm.is_finite() || !bnorm.is_finite() {
            return Some(Reason::DivergedNan);
        }
        if user_converged {
            return Some(Reason::ConvergedUser);
        }
        if let Some(reason) = self.met(rnorm, bnorm) {
            return Some(reason);
        }
        if it > 0 && rnorm > self.p.dtol * bnorm.max(f64::MIN_POSITIVE) {
            return Some(Reason::DivergedDtol);
        }
        if it >= self.p.max_iter {
            return Some(Reason::DivergedMaxIter);
        }
        None
    }

    /// Will [`Ctx::check`] at `it` with these norms return `None`, known without collective work
    /// (no monitors, and not the first test of the solve)? Then a method may act on the iteration's
    /// reduced values before it calls `check` (pipelined CG's streamed update).
    pub fn continues(&self, it: i64, rnorm: f64, bnorm: f64) -> bool {
        self.first.is_some()
            && self.monitor.is_none()
            && self.watch.is_none()
            && self
                .verdict(it, rnorm, self.reference(bnorm), false)
                .is_none()
    }
}

/// Run a method with its work vectors of `layout` taken from (and given back to) the workspace.
pub(crate) fn with_vecs<T: Scalar, R>(
    ctx: &mut Ctx<T>,
    work: Work,
    layout: &Arc<Layout>,
    f: impl FnOnce(&mut Ctx<T>, &mut [DistVector<T>]) -> Result<R>,
) -> Result<R> {
    let mut v = ctx.ws.take_as(work.n, layout, work.zero)?;
    let out = f(ctx, &mut v);
    ctx.ws.put(v);
    out
}

/// A method's iteration on a square operator: (ctx, b, x, work vectors of x's layout).
pub(crate) type SquareRun<T> =
    fn(&mut Ctx<T>, &DistVector<T>, &mut DistVector<T>, &mut [DistVector<T>]) -> Result<Info>;

/// The work vectors a method takes.
#[derive(Clone, Copy)]
pub(crate) struct Work {
    n: usize,
    zero: bool,
}

impl Work {
    /// `n` vectors, all zero.
    pub(crate) const fn zeroed(n: usize) -> Self {
        Work { n, zero: true }
    }
    /// `n` vectors as an earlier solve left them (new ones are zero), for a method that zeroes
    /// those it reads before it writes them: the vectors a first step scales by zero (0 * v must
    /// not carry a NaN over from an earlier solve). Each zeroing is a pass over a vector, and a
    /// method that uses some of its vectors only with a preconditioner need not make it.
    pub(crate) const fn unzeroed(n: usize) -> Self {
        Work { n, zero: false }
    }
}

/// The entry of a method on a square operator: its work vectors, then `run`.
pub(crate) fn square<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    work: Work,
    run: SquareRun<T>,
) -> Result<Info> {
    let layout = x.layout().clone();
    with_vecs(ctx, work, &layout, |ctx, v| run(ctx, b, x, v))
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
