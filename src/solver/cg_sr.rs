//! Single-reduction preconditioned CG (Chronopoulos and Gear): [r^H u, w^H u, r^H r] in ONE
//! reduction per iteration, u = M r and w = A u computed before it. Without a preconditioner on host
//! vectors, u is r itself and the iteration makes two passes: the four updates with r^H r
//! ([`fused::cg_sr_update`]), then w = A r with r^H w ([`LinearOperator::apply_dot`]). Only x's
//! step reads the direction p, so without an iterate monitor p and x move on every second
//! iteration only: the pass after one that left them alone forms p_i from the r and s it reads
//! (r_i = r_(i+1) + a_i s_i, as every pass forms it: [`fused::XStep`]), then p_(i+1), and makes
//! x + a_i p_i + a_(i+1) p_(i+1), the bits of the two steps one after the other. 56 bytes per row
//! on average besides the product, against CG's 64 with its p.q in the product. A convergence seen
//! on the recurrence residual is confirmed on the true one (x made whole first), and where the rule
//! does not hold there CG starts again from it.
//!
//! [`LinearOperator::apply_dot`]: crate::op::LinearOperator::apply_dot

use super::{Ctx, Info, Reason, info, initial_residual, re, root};
use crate::comm::ReduceOp;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, dot_partials, dots, fused};

/// Work vectors of x's layout that [`run`] takes (as an earlier solve left them: it zeroes those it
/// reads before it writes them).
pub(crate) const WORK: super::Work = super::Work::unzeroed(5);

pub(crate) fn run<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    v: &mut [DistVector<T>],
) -> Result<Info> {
    let [r, u, w, p, s] = v else { unreachable!() };
    // fused passes: no preconditioner (host vectors, or the device's k_cg_sr_update)
    let fuse = ctx.pc.is_none();
    // the first step scales p and s by zero; a preconditioner writes u (and might read it first)
    // (a failure joins the first reduction's agreement: every rank ends together)
    let e = p.fill(T::zero()).and(s.fill(T::zero()));
    let e = if fuse { e } else { e.and(u.fill(T::zero())) };
    let e = e.and(initial_residual(ctx, b, x, r));
    let e = e.and(ctx.precond(r, u)).and(ctx.op.apply(u, w));
    let d = dots(&ctx.comm, &[(b, b), (r, u), (u, w), (r, r)], e)?;
    let natural = ctx.p.natural_norm && ctx.pc.is_some();
    let (mut gamma, mut delta) = (d[1], d[2]);
    let bnorm = if natural {
        super::cg::natural_bnorm(ctx, b, u, gamma)?
    } else {
        re(d[0]).sqrt()
    };
    let r0 = root(re(d[if natural { 1 } else { 3 }]));
    if natural
        && (re(gamma) < 0.0
            || bnorm < 0.0
            || super::pc_loses(re(gamma), re(d[3]))
            || super::pc_loses(bnorm, re(d[0])))
    {
        // M not positive definite (r^H M r or b^H M b <= 0 for a nonzero r or b: M = 0 would
        // otherwise meet the natural-norm rule at once)
        return Ok(info(0, Reason::DivergedIndefinite, r0, r0, bnorm));
    }
    if let Some(reason) = ctx.check(0, r0, bnorm, b, x)? {
        return Ok(info(0, reason, r0, r0, bnorm));
    }
    let (mut alpha_old, mut gamma_old) = (T::one(), T::one());
    let mut rnorm = r0;
    // p and x are read and written on every second iteration only when no iterate monitor reads x
    // at the test: the step x lacks (owed: that pass's a and b) is made with the next one, and at
    // every exit (the bits of one step per iteration)
    let defer = fuse && !ctx.watching();
    let mut owed: Option<(T, T)> = None;
    let mut it = 0;
    // the first step from a residual (the solve's, or a true one CG starts again from)
    let mut first = true;
    let mut iterate = || -> Result<Info> {
        loop {
            it += 1;
            let (beta, denom) = if std::mem::take(&mut first) {
                (T::zero(), delta)
            } else {
                let beta = gamma / gamma_old;
                (beta, delta - beta * gamma / alpha_old)
            };
            // denom is p^H A p in exact arithmetic
            if !re(denom).is_finite() {
                return Ok(info(it - 1, Reason::DivergedNan, r0, rnorm, bnorm));
            }
            if re(denom) <= 0.0 {
                let reason = if re(denom) < 0.0 {
                    Reason::DivergedIndefinite
                } else {
                    Reason::DivergedBreakdown
                };
                return Ok(info(it - 1, reason, r0, rnorm, bnorm));
            }
            let alpha = gamma / denom;
            let d = if fuse {
                let step = fused::XStep::pass(defer, owed);
                let rr = fused::cg_sr_update(&mut *x, r, p, s, w, alpha, beta, step);
                if rr.is_ok() {
                    owed = step.owed(alpha, beta);
                }
                let rw = rr.and_then(|rr| match ctx.op.apply_dot(r, w) {
                    Ok(Some((re, im))) => Ok(vec![rr, 0.0, re, im]),
                    Ok(None) => dot_partials(&[(&*r, &*w)], Ok(())).map(|d| {
                        let mut v = vec![rr, 0.0];
                        v.extend(d);
                        v
                    }),
                    Err(e) => Err(e),
                });
                let g = ctx.comm.allreduce_checked(rw, 4, ReduceOp::Sum)?;
                let rr = T::from_parts_lossy(g[0], 0.0);
                vec![rr, T::from_parts_lossy(g[2], g[3]), rr]
            } else {
                p.axpby(T::one(), u, beta)?;
                s.axpby(T::one(), w, beta)?;
                x.axpy(alpha, p)?;
                r.axpy(-alpha, s)?;
                let e = ctx.precond(r, u).and(ctx.op.apply(u, w));
                dots(&ctx.comm, &[(r, u), (u, w), (r, r)], e)?
            };
            rnorm = root(re(d[if natural { 0 } else { 2 }]));
            if natural && (re(d[0]) < 0.0 || super::pc_loses(re(d[0]), re(d[2]))) {
                return Ok(info(it, Reason::DivergedIndefinite, r0, rnorm, bnorm));
            }
            let mut d = d;
            if let Some(reason) = ctx.check(it, rnorm, bnorm, b, x)? {
                if !matches!(reason, Reason::ConvergedRtol | Reason::ConvergedAtol) {
                    return Ok(info(it, reason, r0, rnorm, bnorm));
                }
                // the rule held for the recurrence residual: confirmed on the true one (x made
                // whole first; w and u are free), and where it does not hold there, CG starts
                // again from it with p = s = 0
                if let Some(lag) = owed.take() {
                    fused::catch_up(x, p, r, s, lag)?;
                }
                let t = match super::cg::confirm(ctx, b, x, [w, u], it, reason, (r0, rnorm, bnorm))?
                {
                    Ok(t) => t,
                    Err(end) => return Ok(end),
                };
                std::mem::swap(r, w);
                let e = p.fill(T::zero()).and(s.fill(T::zero()));
                let e = if fuse {
                    e.and(ctx.op.apply(r, w))
                } else {
                    e.and(ctx.precond(r, u)).and(ctx.op.apply(u, w))
                };
                let (ur, uw): (&DistVector<T>, &DistVector<T>) = if fuse { (r, w) } else { (u, w) };
                d = dots(&ctx.comm, &[(&*r, ur), (ur, uw), (&*r, &*r)], e)?;
                rnorm = root(re(t[if natural { 0 } else { 1 }]));
                first = true;
            }
            if re(d[0]) < 0.0 {
                return Ok(info(it, Reason::DivergedIndefinite, r0, rnorm, bnorm));
            }
            gamma_old = gamma;
            alpha_old = alpha;
            gamma = d[0];
            delta = d[1];
        }
    };
    let out = iterate();
    if let Some(lag) = owed {
        fused::catch_up(x, p, r, s, lag)?;
    }
    out
}
