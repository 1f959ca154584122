//! Single-reduction preconditioned CG (Chronopoulos and Gear): [r^H u, w^H u, r^H r] in ONE
//! reduction per iteration, u = M r and w = A u computed before it.

use super::{Ctx, Info, Reason, info, initial_residual, re, root};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, dots};

/// Work vectors of x's layout that [`run`] takes.
pub(crate) const WORK: usize = 5;

pub(crate) fn run<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    v: &mut [DistVector<T>],
) -> Result<Info> {
    let [r, u, w, p, s] = v else { unreachable!() };
    let e = initial_residual(ctx, b, x, r);
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
    if natural && (re(gamma) < 0.0 || bnorm < 0.0) {
        return Ok(info(0, Reason::DivergedIndefinite, r0, r0, bnorm));
    }
    if let Some(reason) = ctx.check(0, r0, bnorm)? {
        return Ok(info(0, reason, r0, r0, bnorm));
    }
    let (mut alpha_old, mut gamma_old) = (T::one(), T::one());
    let mut rnorm = r0;
    let mut it = 0;
    loop {
        it += 1;
        let (beta, denom) = if it == 1 {
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
        p.axpby(T::one(), u, beta)?;
        s.axpby(T::one(), w, beta)?;
        x.axpy(alpha, p)?;
        r.axpy(-alpha, s)?;
        let e = ctx.precond(r, u).and(ctx.op.apply(u, w));
        let d = dots(&ctx.comm, &[(r, u), (u, w), (r, r)], e)?;
        rnorm = root(re(d[if natural { 0 } else { 2 }]));
        if natural && re(d[0]) < 0.0 {
            return Ok(info(it, Reason::DivergedIndefinite, r0, rnorm, bnorm));
        }
        if let Some(reason) = ctx.check(it, rnorm, bnorm)? {
            return Ok(info(it, reason, r0, rnorm, bnorm));
        }
        if re(d[0]) < 0.0 {
            return Ok(info(it, Reason::DivergedIndefinite, r0, rnorm, bnorm));
        }
        gamma_old = gamma;
        alpha_old = alpha;
        gamma = d[0];
        delta = d[1];
    }
}
