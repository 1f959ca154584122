//! LSQR (Paige and Saunders) for min ||b - A x||^2 + damp^2 ||x||^2. Two reductions per iteration
//! (||u|| and ||v||). The monitored residual is LSQR's estimate of ||A^H r - damp^2 x||, tested
//! against max(rtol ||A^H b||, atol); r1norm and r2norm are computed exactly at the end.

use super::cgls::lsq_info;
use super::{Ctx, Info, Reason, re, root};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, dots};

pub(crate) fn solve<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
) -> Result<Info> {
    let (rl, cl) = (b.layout().clone(), x.layout().clone());
    super::with_vecs2(ctx, 2, &rl, 3, &cl, |ctx, r, c| run(ctx, b, x, r, c))
}

fn run<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    rows: &mut [DistVector<T>],
    cols: &mut [DistVector<T>],
) -> Result<Info> {
    let [u, t] = rows else { unreachable!() };
    let [v, w, s] = cols else { unreachable!() };
    let damp = ctx.p.damp;
    let e = super::initial_residual(ctx, b, x, u);
    let d = dots(&ctx.comm, &[(b, b), (u, u)], e)?;
    let bnorm = re(d[0]).sqrt();
    let mut beta = root(re(d[1]));
    if beta > 0.0 {
        u.scale(T::real(1.0 / beta))?;
    }
    let e = ctx.op.apply_adjoint(u, v);
    let mut alfa = root(re(dots(&ctx.comm, &[(v, v)], e)?[0]));
    if alfa > 0.0 {
        v.scale(T::real(1.0 / alfa))?;
    }
    // ||A^H b||: from the first step with a zero guess, its own product otherwise
    let ahb = if ctx.p.nonzero_guess {
        let e = ctx.op.apply_adjoint(b, w);
        root(re(dots(&ctx.comm, &[(w, w)], e)?[0]))
    } else {
        alfa * beta
    };
    w.copy_from(v)?;
    let (mut rhobar, mut phibar) = (alfa, beta);
    let r0 = alfa * beta;
    let finish = |ctx: &Ctx<T>, x: &DistVector<T>, u: &mut DistVector<T>, it, reason, rn| {
        lsq_info(ctx, b, x, u, it, reason, r0, rn, bnorm)
    };
    if !bnorm.is_finite() {
        return finish(ctx, x, u, 0, Reason::DivergedNan, r0);
    }
    ctx.record_residual(phibar);
    if let Some(reason) = ctx.check(0, r0, ahb, b, x)? {
        return finish(ctx, x, u, 0, reason, r0);
    }
    let mut it = 0;
    loop {
        it += 1;
        // bidiagonalisation: u = A v - alfa u, v = A^H u - beta v
        let e = ctx.op.apply(v, t);
        u.axpby(T::one(), t, T::real(-alfa))?;
        beta = root(re(dots(&ctx.comm, &[(u, u)], e)?[0]));
        if beta > 0.0 {
            u.scale(T::real(1.0 / beta))?;
        }
        let e = ctx.op.apply_adjoint(u, s);
        v.axpby(T::one(), s, T::real(-beta))?;
        alfa = root(re(dots(&ctx.comm, &[(v, v)], e)?[0]));
        if alfa > 0.0 {
            v.scale(T::real(1.0 / alfa))?;
        }
        // eliminate the damping, then the subdiagonal
        let rhobar1 = rhobar.hypot(damp);
        let cs1 = rhobar / rhobar1;
        let sn1 = damp / rhobar1;
        phibar *= cs1;
        let rho = rhobar1.hypot(beta);
        if rho.is_nan() || rho <= 0.0 {
            let reason = if rho.is_nan() {
                Reason::DivergedNan
            } else {
                Reason::DivergedBreakdown
            };
            return finish(ctx, x, u, it - 1, reason, 0.0);
        }
        let (cs, sn) = (rhobar1 / rho, beta / rho);
        let theta = sn * alfa;
        rhobar = -cs * alfa;
        let phi = cs * phibar;
        phibar *= sn;
        let tau = sn * phi;
        x.axpy(T::real(phi / rho), w)?;
        w.axpby(T::one(), v, T::real(-theta / rho))?;
        let _ = sn1;
        // ||A^H r - damp^2 x|| estimate
        let normar = alfa * tau.abs();
        ctx.record_residual(phibar);
        if let Some(reason) = ctx.check(it, normar, ahb, b, x)? {
            return finish(ctx, x, u, it, reason, normar);
        }
    }
}
