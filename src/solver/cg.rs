//! Preconditioned conjugate gradients (Hestenes-Stiefel): two reductions per iteration, p^H A p and
//! [r^H z, r^H r] together. Stops on the unpreconditioned residual ||r||. Without a preconditioner
//! z is r itself (no copy, one dot). On host vectors the passes are fused: q = A p with p.q in one
//! pass where the operator can (a CSR matrix, [`LinearOperator::apply_dot`]), and, without a
//! preconditioner, r -= a q with r.r in another, then x += a p and p = r + b p in a third (x moves
//! with the old p as the new one is made, so p is read once for both; with an iterate monitor,
//! which reads x at the test, x moves in the second pass): 64 bytes per row of vector work instead
//! of 96. A convergence seen on the recurrence residual is confirmed on the true one, b - A x (one
//! product, one reduction); where the rule does not hold there, CG restarts from it.
//!
//! [`LinearOperator::apply_dot`]: crate::op::LinearOperator::apply_dot

use super::trust::TrustRegion;
use super::{Ctx, Info, Reason, info, initial_residual, re, root};
use crate::comm::ReduceOp;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, dot_partials, dots, fused, sum_partials};

/// Work vectors of x's layout that [`run`] takes.
pub(crate) const WORK: super::Work = super::Work::zeroed(4);

pub(crate) fn run<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    v: &mut [DistVector<T>],
) -> Result<Info> {
    let [r, z, p, q] = v else { unreachable!() };
    if ctx.p.trust_radius > 0.0 && ctx.p.nonzero_guess {
        crate::bail!(
            InvalidArgument,
            "a trust region (radius {}) starts from x = 0: the initial guess must be zero",
            ctx.p.trust_radius
        );
    }
    let plain = ctx.pc.is_none();
    let e = initial_residual(ctx, b, x, r);
    let e = if plain { e } else { e.and(ctx.precond(r, z)) };
    let d = dots(
        &ctx.comm,
        &[(b, b), (r, if plain { &*r } else { &*z }), (r, r)],
        e,
    )?;
    let natural = ctx.p.natural_norm && !plain;
    let mut rz = d[1];
    let bnorm = if natural {
        natural_bnorm(ctx, b, z, rz)?
    } else {
        re(d[0]).sqrt()
    };
    let r0 = root(re(d[if natural { 1 } else { 2 }]));
    if natural
        && (re(rz) < 0.0
            || bnorm < 0.0
            || super::pc_loses(re(rz), re(d[2]))
            || super::pc_loses(bnorm, re(d[0])))
    {
        // r^H M r <= 0 or b^H M b <= 0 for a nonzero r or b: the preconditioner is not positive
        // definite (M = 0 would otherwise meet the natural-norm rule at once)
        return Ok(info(0, Reason::DivergedIndefinite, r0, r0, bnorm));
    }
    if let Some(reason) = ctx.check(0, r0, bnorm, b, x)? {
        return Ok(info(0, reason, r0, r0, bnorm));
    }
    p.copy_from(if plain { &*r } else { &*z })?;
    let mut tr = (ctx.p.trust_radius > 0.0).then(|| TrustRegion::new(ctx.p.trust_radius, re(rz)));
    let mut rnorm = r0;
    let mut it = 0;
    // the fused passes (the executor's steps; the product's fused dot where the operator has one);
    // not in the reproducible mode, whose sums are binned (the plain steps' dots)
    let repro = crate::vector::ops::reproducible_sums();
    let fuse = plain && !repro;
    // x's update waits for the next direction's pass when no iterate monitor reads x at the test
    // (then x += a p is made at every exit; the same bits)
    let defer = (fuse || (repro && plain)) && !ctx.watching();
    loop {
        it += 1;
        let pq = if repro {
            let e = ctx.op.apply(p, q);
            dots(&ctx.comm, &[(&*p, &*q)], e)?[0]
        } else {
            let local = match ctx.op.apply_dot(p, q) {
                Ok(Some((re, im))) => Ok(vec![re, im]),
                Ok(None) => dot_partials(&[(&*p, &*q)], Ok(())),
                Err(e) => Err(e),
            };
            sum_partials::<T>(&ctx.comm, local, 1, p)?[0]
        };
        if !re(pq).is_finite() {
            return Ok(info(it, Reason::DivergedNan, r0, rnorm, bnorm));
        }
        if re(pq) <= 0.0 {
            if let Some(tau) = tr.as_ref().and_then(|t| t.to_boundary()) {
                // negative curvature: the boundary point along p (the model decreases there)
                x.axpy(T::real(tau), p)?;
                return Ok(info(it, Reason::ConvergedNegCurve, r0, rnorm, bnorm));
            }
            let reason = if re(pq) < 0.0 {
                Reason::DivergedIndefinite
            } else {
                Reason::DivergedBreakdown
            };
            return Ok(info(it - 1, reason, r0, rnorm, bnorm));
        }
        let alpha = rz / pq;
        if let Some(t) = &tr
            && t.leaves(re(alpha))
        {
            // the step leaves the region: stop on its boundary
            return Ok(match t.to_boundary() {
                Some(tau) => {
                    x.axpy(T::real(tau), p)?;
                    info(it, Reason::ConvergedStepLength, r0, rnorm, bnorm)
                }
                None => info(it - 1, Reason::DivergedBreakdown, r0, rnorm, bnorm),
            });
        }
        if let Some(e) = ctx.eig.as_mut() {
            e.cg.push((re(alpha), f64::NAN));
        }
        let d = if defer && repro {
            // the reproducible mode's residual pass: r.r as a binned sum formed in the pass
            let local = fused::cg_residual_binned(alpha, r, q).map(|v| vec![v]);
            match ctx.comm.allreduce_binned_checked(local, 1) {
                Ok(v) => {
                    let rr = T::from_parts_lossy(v[0].value(), 0.0);
                    vec![rr, rr]
                }
                Err(e) => {
                    // the step is still x's: the failure is the reduction's (every rank's alike)
                    x.axpy(alpha, p)?;
                    return Err(e);
                }
            }
        } else if defer {
            let local = fused::cg_residual(alpha, r, q).map(|v| vec![v]);
            let rr = ctx.comm.allreduce_checked(local, 1, ReduceOp::Sum);
            let rr = match rr {
                Ok(rr) => rr,
                Err(e) => {
                    // the step is still x's: the failure is the reduction's (every rank's alike)
                    x.axpy(alpha, p)?;
                    return Err(e);
                }
            };
            let rr = T::from_parts_lossy(rr[0], 0.0);
            vec![rr, rr]
        } else if fuse {
            let local = fused::cg_update(x, alpha, p, r, q).map(|v| vec![v]);
            let rr = ctx.comm.allreduce_checked(local, 1, ReduceOp::Sum)?[0];
            let rr = T::from_parts_lossy(rr, 0.0);
            vec![rr, rr]
        } else if plain {
            x.axpy(alpha, p)?;
            r.axpy(-alpha, q)?;
            let rr = dots(&ctx.comm, &[(r, r)], Ok(()))?[0];
            vec![rr, rr]
        } else {
            x.axpy(alpha, p)?;
            r.axpy(-alpha, q)?;
            let e = ctx.precond(r, z);
            dots(&ctx.comm, &[(r, z), (r, r)], e)?
        };
        rnorm = root(re(d[if natural { 0 } else { 1 }]));
        if natural && (re(d[0]) < 0.0 || super::pc_loses(re(d[0]), re(d[1]))) {
            return Ok(info(it, Reason::DivergedIndefinite, r0, rnorm, bnorm));
        }
        let verdict = ctx.check(it, rnorm, bnorm, b, x);
        if defer && !matches!(verdict, Ok(None)) {
            x.axpy(alpha, p)?;
        }
        let mut d = d;
        let mut restart = false;
        if let Some(reason) = verdict? {
            if !matches!(reason, Reason::ConvergedRtol | Reason::ConvergedAtol) {
                return Ok(info(it, reason, r0, rnorm, bnorm));
            }
            // the rule held for the recurrence residual: confirmed on the true one (q is free:
            // this iteration's A p is spent); where it does not hold there, CG restarts from it
            // (local failures join the reduction's agreement: every rank ends together)
            let t = match confirm(ctx, b, x, [q, z], it, reason, (r0, rnorm, bnorm))? {
                Ok(t) => t,
                Err(end) => return Ok(end),
            };
            std::mem::swap(r, q);
            d = t;
            restart = true;
        }
        if re(d[0]) < 0.0 {
            // r^H M r < 0: the preconditioner is not positive definite
            return Ok(info(it, Reason::DivergedIndefinite, r0, rnorm, bnorm));
        }
        // a restart is beta = 0 (p = r), for the eigenvalue estimate and the trust region too
        let beta = if restart { T::zero() } else { d[0] / rz };
        if let Some(t) = tr.as_mut() {
            t.advance(re(alpha), re(beta), re(d[0]));
        }
        if let Some(e) = ctx.eig.as_mut()
            && let Some(last) = e.cg.last_mut()
        {
            last.1 = re(beta);
        }
        rz = d[0];
        if restart {
            // x already holds its step (made before the confirmation)
            p.copy_from(if plain { &*r } else { &*z })?;
        } else if defer {
            fused::cg_step(x, alpha, p, r, beta)?;
        } else {
            p.axpby(T::one(), if plain { &*r } else { &*z }, beta)?;
        }
    }
}

/// sqrt(b^H M b) for the natural-norm test: r^H z itself with a zero initial guess, one more
/// preconditioner application (into `z`, restored after) otherwise. NaN stays NaN; b^H M b < 0 (an
/// indefinite preconditioner) gives -1. [collective]
pub(crate) fn natural_bnorm<T: Scalar>(
    ctx: &Ctx<T>,
    b: &DistVector<T>,
    z: &mut DistVector<T>,
    rz: T,
) -> Result<f64> {
    let norm = |v: f64| if v < 0.0 { -1.0 } else { root(v) };
    if !ctx.p.nonzero_guess {
        return Ok(norm(re(rz)));
    }
    let mut keep = z.duplicate()?;
    keep.copy_from(z)?;
    let e = ctx.precond(b, z);
    let d = dots(&ctx.comm, &[(b, z)], e)?;
    z.copy_from(&keep)?;
    Ok(norm(re(d[0])))
}

/// A convergence `reason` seen at iteration `it` on the recurrence's norm `rnorm`, checked on the
/// true residual: q = b - A x (and z = M q with a preconditioner, whose natural norm then decides).
/// The end where the rule holds there (reporting the norm the rule tested) or a divergence ends it;
/// else [q^H z, q^H q] for the method to go on from q. `r0`: the solve's first residual norm.
/// [collective]
pub(super) fn confirm<T: Scalar>(
    ctx: &Ctx<T>,
    b: &DistVector<T>,
    x: &DistVector<T>,
    [q, z]: [&mut DistVector<T>; 2],
    it: i64,
    reason: Reason,
    (r0, rnorm, bnorm): (f64, f64, f64),
) -> Result<std::result::Result<Vec<T>, Info>> {
    let plain = ctx.pc.is_none();
    let natural = ctx.p.natural_norm && !plain;
    let e = ctx.op.apply(x, q);
    let e = e.and(q.axpby(T::one(), b, -T::one()));
    let e = if plain { e } else { e.and(ctx.precond(q, z)) };
    let t = dots(
        &ctx.comm,
        &[(&*q, if plain { &*q } else { &*z }), (&*q, &*q)],
        e,
    )?;
    let tnorm = root(re(t[if natural { 0 } else { 1 }]));
    if natural && super::pc_loses(re(t[0]), re(t[1])) {
        return Ok(Err(info(it, Reason::DivergedIndefinite, r0, tnorm, bnorm)));
    }
    Ok(match ctx.confirmed(it, reason, tnorm, bnorm) {
        // a confirmed convergence reports the norm its rule tested, an end the true one
        Some(end) => Err(info(
            it,
            end,
            r0,
            if end == reason { rnorm } else { tnorm },
            bnorm,
        )),
        None => Ok(t),
    })
}
