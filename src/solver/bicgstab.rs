//! BiCGStab (van der Vorst) with right preconditioning: three reductions per iteration, the last
//! one carrying both ||r|| and the next rho. The residual tested is the true ||b - A x||.

use super::{Ctx, Info, Reason, info, initial_residual, re, root};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, dots};

/// Work vectors of x's layout that [`run`] takes.
pub(crate) const WORK: super::Work = super::Work::zeroed(8);

pub(crate) fn run<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    vs: &mut [DistVector<T>],
) -> Result<Info> {
    let [r, rhat, p, v, phat, s, shat, t] = vs else {
        unreachable!()
    };
    let e = initial_residual(ctx, b, x, r);
    rhat.copy_from(r)?;
    let d = dots(&ctx.comm, &[(b, b), (r, r)], e)?;
    let bnorm = re(d[0]).sqrt();
    let r0 = root(re(d[1]));
    if let Some(reason) = ctx.check(0, r0, bnorm, b, x)? {
        return Ok(info(0, reason, r0, r0, bnorm));
    }
    let mut rho = d[1];
    let (mut rho_old, mut alpha, mut omega) = (T::one(), T::one(), T::one());
    let mut rnorm = r0;
    let mut it = 0;
    loop {
        it += 1;
        if rho.is_zero() {
            return Ok(info(it - 1, Reason::DivergedBreakdown, r0, rnorm, bnorm));
        }
        let beta = (rho / rho_old) * (alpha / omega);
        // p = r + beta (p - omega v)
        p.axpy(-omega, v)?;
        p.axpby(T::one(), r, beta)?;
        let e = ctx.precond(p, phat).and(ctx.op.apply(phat, v));
        let rv = dots(&ctx.comm, &[(rhat, v)], e)?[0];
        if rv.is_zero() || !re(rv).is_finite() {
            let reason = if re(rv).is_finite() {
                Reason::DivergedBreakdown
            } else {
                Reason::DivergedNan
            };
            return Ok(info(it - 1, reason, r0, rnorm, bnorm));
        }
        alpha = rho / rv;
        s.copy_from(r)?;
        s.axpy(-alpha, v)?;
        let e = ctx.precond(s, shat).and(ctx.op.apply(shat, t));
        let d = dots(&ctx.comm, &[(t, s), (t, t), (s, s)], e)?;
        let snorm = root(re(d[2]));
        if !snorm.is_finite() {
            return Ok(info(it - 1, Reason::DivergedNan, r0, rnorm, bnorm));
        }
        if ctx.holds(snorm, bnorm) {
            // s = r - alpha v is the residual of x + alpha M p: converged on it (the decision is
            // ctx.check's, which agrees since the same rule holds)
            x.axpy(alpha, phat)?;
            let reason = ctx
                .check(it, snorm, bnorm, b, x)?
                .unwrap_or(Reason::DivergedBreakdown);
            return Ok(info(it, reason, r0, snorm, bnorm));
        }
        if !re(d[0]).is_finite() || !re(d[1]).is_finite() {
            return Ok(info(it - 1, Reason::DivergedNan, r0, rnorm, bnorm));
        }
        if re(d[1]) <= 0.0 {
            return Ok(info(it - 1, Reason::DivergedBreakdown, r0, rnorm, bnorm));
        }
        omega = d[0] / d[1];
        x.axpy(alpha, phat)?;
        x.axpy(omega, shat)?;
        r.copy_from(s)?;
        r.axpy(-omega, t)?;
        let d = dots(&ctx.comm, &[(r, r), (rhat, r)], Ok(()))?;
        rnorm = root(re(d[0]));
        if let Some(reason) = ctx.check(it, rnorm, bnorm, b, x)? {
            return Ok(info(it, reason, r0, rnorm, bnorm));
        }
        if omega.is_zero() {
            return Ok(info(it, Reason::DivergedBreakdown, r0, rnorm, bnorm));
        }
        rho_old = rho;
        rho = d[1];
    }
}
