//! The solve driver: the checks, the preconditioner's set-up, the pins on what the solve reads, the
//! null space and the method's context, shared by a solve of one right-hand side
//! ([`Solver::solve`]) and of several ([`Solver::solve_many`]).

use super::{
    FINAL_CHECK, Guarded, Info, LinearOperator, Location, Op, Reason, Scalar, Solver, cg_block,
    ctx::Ctx, nonfinite_anywhere, nullspace,
};
use crate::error::Result;
use crate::vector::DistVector;

impl<T: Scalar> Solver<T> {
    /// The operator of a solve, checked against x and b.
    fn operator_for(&self, b: &DistVector<T>, x: &DistVector<T>) -> Result<Op<T>> {
        let op = self.op.clone().ok_or_else(|| {
            crate::err!(
                InvalidArgument,
                "no operator: call set_operator before solve"
            )
        })?;
        crate::op::check_apply(op.as_ref(), x, b, false)?;
        Ok(op)
    }

    pub(super) fn solve_untimed(
        &mut self,
        b: &DistVector<T>,
        x: &mut DistVector<T>,
    ) -> Result<Info> {
        let _order = self.params.sum_order.enter();
        let op = self.operator_for(b, x)?;
        if !x.host_addressable() && self.method.host_only() {
            // the soft-thresholding step runs on the host: solve on host copies
            let hb = b.to_location(Location::Host)?;
            let mut hx = x.to_location(Location::Host)?;
            let info = self.solve(&hb, &mut hx)?;
            x.copy_any(&hx)?;
            x.settle()?;
            return Ok(info);
        }
        let method = self.method;
        let (loc, stream) = (x.location(), x.caller_stream());
        let mut info = self.drive(&op, loc, stream, |ctx, ns| match ns {
            Some(bs) => nullspace::solve(ctx, bs, b, x, |c, b, x| method.run(c, b, x)),
            None => method.run(ctx, b, x),
        })?;
        // the last safeguard: a converged reason needs a finite reported residual and a finite x on
        // every rank (one reduction). The methods decide this themselves; this catches what one misses.
        if info.reason.converged()
            && FINAL_CHECK.load(std::sync::atomic::Ordering::Relaxed)
            && (!info.final_residual_norm.is_finite() || nonfinite_anywhere(op.rows().comm(), x)?)
        {
            info.reason = Reason::DivergedNan;
        }
        self.finish(&op, info);
        x.settle()?;
        Ok(info)
    }

    /// Record the outcome of a solve (and print it with PARLOPS_MONITOR=1).
    fn finish(&mut self, op: &Op<T>, info: Info) {
        if self.printing() && op.rows().comm().rank() == 0 {
            println!(
                "  {} {} in {} iterations",
                self.method.name(),
                info.reason.name(),
                info.iterations
            );
        }
        self.info = info;
        self.infos = vec![info];
        self.reuse.solved(info.iterations);
    }

    /// Solve A x_j = b_j for every j: as one block where [`Solver::blocked`] says so (block CG,
    /// at most [`cg_block::MAX_BLOCK`] columns a block), else one solve per column. Each column's
    /// outcome; [`Solver::info`] then holds the column farthest from its rule (the first that did
    /// not converge, else the largest ||r_j|| / ||b_j||). [collective]
    pub fn solve_many(
        &mut self,
        bs: &[&DistVector<T>],
        xs: &mut [&mut DistVector<T>],
    ) -> Result<Vec<Info>> {
        self.timed(|s| s.solve_many_untimed(bs, xs))
    }

    /// Does a solve of `k` right-hand sides run as a block? With CG (and k > 1), unless a setting
    /// block CG does not offer is set: the natural norm, a trust region, rtol relative to the
    /// initial residual, a null space, an iterate monitor, the reproducible sum order (its Gram
    /// matrices are not binned) (all agreed across ranks; eigenvalue estimates, which ranks may ask
    /// for alone, are not recorded by a block solve and do not decide).
    pub fn blocked(&self, k: usize) -> bool {
        let p = &self.params;
        k > 1
            && self.method == super::Method::Cg
            && p.sum_order != super::SumOrder::Reproducible
            && !p.natural_norm
            && p.trust_radius == 0.0
            && p.reference == super::Reference::Rhs
            && self.null_space.is_none()
            && self.watch.is_none()
    }

    fn solve_many_untimed(
        &mut self,
        bs: &[&DistVector<T>],
        xs: &mut [&mut DistVector<T>],
    ) -> Result<Vec<Info>> {
        if bs.len() != xs.len() {
            crate::bail!(
                SizeMismatch,
                "{} right-hand sides for {} solutions",
                bs.len(),
                xs.len()
            );
        }
        let (Some(b0), Some(x0)) = (bs.first(), xs.first()) else {
            self.infos.clear();
            return Ok(Vec::new());
        };
        let _order = self.params.sum_order.enter();
        let op = self.operator_for(b0, x0)?;
        let (loc, stream) = (x0.location(), x0.caller_stream());
        for (j, (b, x)) in bs.iter().zip(xs.iter()).enumerate() {
            crate::op::check_apply(op.as_ref(), x, b, false)?;
            if x.location() != loc || x.caller_stream() != stream {
                crate::bail!(
                    InvalidArgument,
                    "x[{j}] lives in {} with {:?} but x[0] in {} with {:?}: the columns of a solve share one memory and stream",
                    x.location().name(),
                    x.caller_stream(),
                    loc.name(),
                    stream
                );
            }
        }
        let mut infos = Vec::new();
        if !self.blocked(bs.len()) {
            for (b, x) in bs.iter().zip(xs.iter_mut()) {
                infos.push(self.solve_untimed(b, x)?);
            }
        } else {
            for (bc, xc) in bs
                .chunks(cg_block::MAX_BLOCK)
                .zip(xs.chunks_mut(cg_block::MAX_BLOCK))
            {
                let layout = xc[0].layout().clone();
                let got = self.drive(&op, loc, stream, |ctx, _| {
                    let n = cg_block::work_len(bc.len(), ctx.pc.is_none());
                    let mut v = ctx.ws.take(n, &layout)?;
                    let out = cg_block::solve(ctx, bc, xc, &mut v);
                    ctx.ws.put(v);
                    out
                })?;
                infos.extend(got);
            }
            // the driver's last safeguard, column by column
            for (i, x) in infos.iter_mut().zip(xs.iter()) {
                if i.reason.converged()
                    && FINAL_CHECK.load(std::sync::atomic::Ordering::Relaxed)
                    && (!i.final_residual_norm.is_finite()
                        || nonfinite_anywhere(op.rows().comm(), x)?)
                {
                    i.reason = Reason::DivergedNan;
                }
            }
        }
        let far = (0..infos.len())
            .find(|&j| !infos[j].reason.converged())
            .unwrap_or_else(|| {
                let rel = |i: &Info| i.final_residual_norm / i.rhs_norm.max(f64::MIN_POSITIVE);
                (0..infos.len()).fold(0, |m, j| {
                    if rel(&infos[j]) > rel(&infos[m]) {
                        j
                    } else {
                        m
                    }
                })
            });
        if self.blocked(bs.len()) {
            // one solve for the preconditioner's reuse policy (the column by column solves
            // counted themselves)
            self.finish(&op, infos[far]);
        } else {
            self.info = infos[far];
        }
        self.infos = infos.clone();
        for x in xs.iter_mut() {
            x.settle()?;
        }
        Ok(infos)
    }

    fn printing(&self) -> bool {
        crate::config::env()
            .get("PARLOPS_MONITOR")
            .is_some_and(|v| v != "0")
    }

    /// Prepare a solve of `op` on vectors in `loc` (the tolerances checked, the preconditioner set
    /// up where its policy says, the operators pinned, the null space's basis made) and run `run`
    /// with the method's context and that basis. [collective]
    pub(super) fn drive<R>(
        &mut self,
        op: &Op<T>,
        loc: Location,
        stream: Option<crate::exec::Stream>,
        run: impl FnOnce(&mut Ctx<T>, Option<&[DistVector<T>]>) -> Result<R>,
    ) -> Result<R> {
        self.ws.loc = loc;
        self.ws.stream = stream;
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
        if p.sum_order == super::SumOrder::Reproducible {
            // (the method and the vectors' memory are agreed: every rank alike)
            if !self.method.reproducible() {
                crate::bail!(
                    NotSupported,
                    "sum order PARLOPS_SUM_REPRODUCIBLE: {} does not keep it (CG, pipelined CG, GMRES, \
                     FGMRES, BiCGStab, MINRES, Richardson, CGLS and LSQR do)",
                    self.method.name()
                );
            }
        }
        let pc = crate::timing::timed_n(crate::timing::Phase::Setup, 0, 0, || {
            Ok::<_, crate::error::Error>(if self.jacobi {
                Some(self.jacobi_pc(op)?)
            } else {
                if let Some(m) = self.pc.clone() {
                    self.follow(&m)?;
                }
                self.pc.clone()
            })
        })?;
        // the values of what the solve reads cannot change under it
        let _pins = crate::op::tree::Pins::new(&[Some(op), pc.as_ref()]);
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
        self.residual_history.clear();
        self.eig.clear();
        let print = self.printing();
        let method = self.method;
        let ns = match &self.null_space {
            Some((c, vs)) => Some(nullspace::basis(op.cols(), loc, *c, vs)?),
            None => None,
        };
        let proj = match (&pc, &ns) {
            (Some(m), Some(bs)) => Some(nullspace::Projected {
                inner: m.as_ref(),
                basis: bs,
            }),
            _ => None,
        };
        let gop = Guarded(op.as_ref(), crate::timing::Phase::Operator);
        let pcp = crate::timing::Phase::Preconditioner;
        let gpc = match &proj {
            Some(p) => Some(Guarded(p as &dyn LinearOperator<T>, pcp)),
            None => pc.as_deref().map(|m| Guarded(m, pcp)),
        };
        let mut ctx = Ctx {
            op: &gop,
            pc: gpc.as_ref().map(|g| g as &dyn LinearOperator<T>),
            p: &self.params,
            comm: op.rows().comm().clone(),
            ws: &mut self.ws,
            monitor: self.monitor.as_mut(),
            watch: self.watch.as_ref().map(|w| (w, &mut self.views)),
            history: &mut self.history,
            residuals: &mut self.residual_history,
            eig: if self.params.compute_eigs {
                Some(&mut self.eig)
            } else {
                None
            },
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
        run(&mut ctx, ns.as_deref())
    }
}
