//! BiCGStab (van der Vorst) with right preconditioning: three reductions per iteration, the last
//! one carrying both ||r|| and the next rho. The residual tested is the recurrence residual (s or
//! r, the residual of b - A x in exact arithmetic); a convergence seen on it is confirmed on the
//! true ||b - A x|| (one product, one reduction), and where the rule does not hold there BiCGStab
//! starts again from the true residual (the recurrences drift from it in single precision).

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
            // ctx.check's, which agrees since the same rule holds), confirmed on the true one
            x.axpy(alpha, phat)?;
            let reason = ctx
                .check(it, snorm, bnorm, b, x)?
                .unwrap_or(Reason::DivergedBreakdown);
            match confirm(ctx, it, reason, b, x, t, bnorm)? {
                Some(end) => {
                    let shown = if end.0 == reason { snorm } else { end.1 };
                    return Ok(info(it, end.0, r0, shown, bnorm));
                }
                None => {
                    (rho, rnorm) = restart(ctx, r, rhat, p, v, t)?;
                    (rho_old, alpha, omega) = (T::one(), T::one(), T::one());
                    continue;
                }
            }
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
            match confirm(ctx, it, reason, b, x, t, bnorm)? {
                Some(end) => {
                    let shown = if end.0 == reason { rnorm } else { end.1 };
                    return Ok(info(it, end.0, r0, shown, bnorm));
                }
                None => {
                    (rho, rnorm) = restart(ctx, r, rhat, p, v, t)?;
                    (rho_old, alpha, omega) = (T::one(), T::one(), T::one());
                    continue;
                }
            }
        }
        if omega.is_zero() {
            return Ok(info(it, Reason::DivergedBreakdown, r0, rnorm, bnorm));
        }
        rho_old = rho;
        rho = d[1];
    }
}

/// A convergence seen on the recurrence residual, confirmed on the true one (formed into `t`): the
/// end and the true norm, or None where the rule does not hold there (the method starts again from
/// it: [`restart`]). Reasons other than a convergence end at once. [collective]
fn confirm<T: Scalar>(
    ctx: &Ctx<T>,
    it: i64,
    reason: Reason,
    b: &DistVector<T>,
    x: &DistVector<T>,
    t: &mut DistVector<T>,
    bnorm: f64,
) -> Result<Option<(Reason, f64)>> {
    if !matches!(reason, Reason::ConvergedRtol | Reason::ConvergedAtol) {
        return Ok(Some((reason, f64::NAN)));
    }
    // (local failures join the reduction's agreement: every rank ends together)
    let e = ctx.op.apply(x, t);
    let e = e.and(t.axpby(T::one(), b, -T::one()));
    let tnorm = root(re(dots(&ctx.comm, &[(&*t, &*t)], e)?[0]));
    Ok(ctx
        .confirmed(it, reason, tnorm, bnorm)
        .map(|end| (end, tnorm)))
}

/// BiCGStab again from the true residual in `t`: r = rhat = t, p = v = 0; the new rho and ||r||.
fn restart<T: Scalar>(
    ctx: &Ctx<T>,
    r: &mut DistVector<T>,
    rhat: &mut DistVector<T>,
    p: &mut DistVector<T>,
    v: &mut DistVector<T>,
    t: &DistVector<T>,
) -> Result<(T, f64)> {
    r.copy_from(t)?;
    rhat.copy_from(t)?;
    p.fill(T::zero())?;
    v.fill(T::zero())?;
    let d = dots(&ctx.comm, &[(&*r, &*r)], Ok(()))?[0];
    Ok((d, root(re(d))))
}
