//! MINRES (Paige and Saunders) for Hermitian, possibly indefinite operators, with an optional
//! Hermitian positive definite preconditioner. Two reductions per iteration. The residual tested is
//! MINRES's estimate of ||r|| in the M^{-1} norm (||r|| itself without preconditioner), against the
//! same norm of b.

use super::{Ctx, Info, Reason, info, initial_residual, re, root};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, dots};

/// Work vectors of x's layout that [`run`] takes.
pub(crate) const WORK: usize = 7;

pub(crate) fn run<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    vs: &mut [DistVector<T>],
) -> Result<Info> {
    let [r1, r2, y, v, w, w1, w2] = vs else {
        unreachable!()
    };
    // ||b||_M with its own preconditioner application (x may start nonzero)
    let e = ctx.precond(b, y);
    let bm = re(dots(&ctx.comm, &[(b, y)], e)?[0]);
    let e = initial_residual(ctx, b, x, r1);
    let e = e.and(ctx.precond(r1, y));
    let ry = re(dots(&ctx.comm, &[(r1, y)], e)?[0]);
    let bnorm = if bm < 0.0 { 0.0 } else { root(bm) };
    if !bm.is_finite() || !ry.is_finite() {
        return Ok(info(0, Reason::DivergedNan, f64::NAN, f64::NAN, bnorm));
    }
    if bm < 0.0 || ry < 0.0 {
        return Ok(info(0, Reason::DivergedIndefinite, 0.0, 0.0, bnorm));
    }
    let beta1 = ry.sqrt();
    if let Some(reason) = ctx.check(0, beta1, bnorm)? {
        return Ok(info(0, reason, beta1, beta1, bnorm));
    }
    r2.copy_from(r1)?;
    let (mut oldb, mut beta, mut dbar, mut epsln, mut phibar) =
        (0.0f64, beta1, 0.0f64, 0.0f64, beta1);
    let (mut cs, mut sn) = (-1.0f64, 0.0f64);
    let mut it = 0;
    loop {
        it += 1;
        v.copy_from(y)?;
        v.scale(T::real(1.0 / beta))?;
        let e = ctx.op.apply(v, y);
        if it >= 2 {
            y.axpy(T::real(-beta / oldb), r1)?;
        }
        let alfa = re(dots(&ctx.comm, &[(v, y)], e)?[0]);
        y.axpy(T::real(-alfa / beta), r2)?;
        std::mem::swap(r1, r2);
        r2.copy_from(y)?;
        let e = ctx.precond(r2, y);
        oldb = beta;
        let b2 = re(dots(&ctx.comm, &[(r2, y)], e)?[0]);
        if !b2.is_finite() || !alfa.is_finite() {
            return Ok(info(it - 1, Reason::DivergedNan, beta1, phibar, bnorm));
        }
        if b2 < 0.0 {
            return Ok(info(
                it - 1,
                Reason::DivergedIndefinite,
                beta1,
                phibar,
                bnorm,
            ));
        }
        beta = b2.sqrt();
        // QR of the tridiagonal
        let oldeps = epsln;
        let delta = cs * dbar + sn * alfa;
        let gbar = sn * dbar - cs * alfa;
        epsln = sn * beta;
        dbar = -cs * beta;
        let gamma = gbar.hypot(beta);
        if gamma == 0.0 {
            // A v = 0 for the Lanczos vector (the zero operator, or b in the null space): x cannot
            // move, and no residual reduction is possible. Decided from reduced values (alfa, beta).
            return Ok(info(
                it - 1,
                Reason::DivergedBreakdown,
                beta1,
                phibar,
                bnorm,
            ));
        }
        cs = gbar / gamma;
        sn = beta / gamma;
        let phi = cs * phibar;
        phibar *= sn;
        // w = (v - oldeps w1 - delta w2) / gamma, x += phi w
        std::mem::swap(w1, w2);
        std::mem::swap(w2, w);
        w.copy_from(v)?;
        w.axpy(T::real(-oldeps), w1)?;
        w.axpy(T::real(-delta), w2)?;
        w.scale(T::real(1.0 / gamma))?;
        x.axpy(T::real(phi), w)?;
        if let Some(reason) = ctx.check(it, phibar, bnorm)? {
            return Ok(info(it, reason, beta1, phibar, bnorm));
        }
        if beta == 0.0 {
            // the Krylov space is invariant, so phibar is 0 and the test above has converged,
            // unless it could not (a stopping rule below 0): nothing more can be done
            return Ok(info(it, Reason::DivergedBreakdown, beta1, phibar, bnorm));
        }
    }
}
