//! MINRES for Hermitian, possibly indefinite operators, with an optional Hermitian positive
//! definite preconditioner M, in van der Vorst's short-recurrence form ("Iterative Krylov Methods
//! for Large Linear Systems", 2003, Fig. 6.9, extended to M; the form MFEM's MINRESSolver uses, so
//! that the two agree to rounding): Lanczos on M A in M^{-1}'s inner product, Givens rotations on
//! the tridiagonal, and the residual norm ||r||_M (||r|| without preconditioner) as the running
//! product of the rotations' sines. Two reductions per iteration. The reference for rtol is the
//! same norm of b. A convergence of that estimate is confirmed on the true residual's norm (it can
//! drift far from it on an ill-conditioned A); where the rule does not hold there, MINRES starts
//! again from the true residual (where MFEM's would have stopped).

use super::{Ctx, Info, Reason, info, initial_residual, pc_loses, re, root};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, dots};

/// Work vectors of x's layout that [`run`] takes.
pub(crate) const WORK: super::Work = super::Work::zeroed(6);

pub(crate) fn run<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    vs: &mut [DistVector<T>],
) -> Result<Info> {
    let [v0, v1, u1, q, w0, w1] = vs else {
        unreachable!()
    };
    let pc = ctx.pc.is_some();
    // ||b||_M with its own preconditioner application (x may start nonzero)
    let e = ctx.precond(b, q);
    let db = dots(&ctx.comm, &[(b, &*q), (b, b)], e)?;
    let bm = re(db[0]);
    // v1 = b - A x, u1 = M v1; the residual norm is sqrt(u1^H v1)
    let e = initial_residual(ctx, b, x, v1);
    let e = e.and(ctx.precond(v1, u1));
    let dr = dots(&ctx.comm, &[(&*u1, &*v1), (&*v1, &*v1)], e)?;
    let ry = re(dr[0]);
    let bnorm = if bm < 0.0 { 0.0 } else { root(bm) };
    if !bm.is_finite() || !ry.is_finite() {
        return Ok(info(0, Reason::DivergedNan, f64::NAN, f64::NAN, bnorm));
    }
    if bm < 0.0 || ry < 0.0 || (pc && (pc_loses(bm, re(db[1])) || pc_loses(ry, re(dr[1])))) {
        // b^H M b or r^H M r <= 0 for a nonzero b or r: M is not positive definite (M = 0 would
        // otherwise meet the rule at once)
        return Ok(info(0, Reason::DivergedIndefinite, 0.0, 0.0, bnorm));
    }
    let beta1 = ry.sqrt();
    if let Some(reason) = ctx.check(0, beta1, bnorm, b, x)? {
        return Ok(info(0, reason, beta1, beta1, bnorm));
    }
    let mut it = 0;
    let mut start = beta1;
    loop {
        let out = lanczos(
            ctx,
            b,
            x,
            [v0, v1, u1, q, w0, w1],
            start,
            &mut it,
            (beta1, bnorm),
        )?;
        if !matches!(out.reason, Reason::ConvergedRtol | Reason::ConvergedAtol) {
            return Ok(out);
        }
        // the rule held for the recurrence's norm: confirmed on the true residual's (its M-norm
        // with a preconditioner), in v1 and u1 as at the start; where it does not hold there,
        // MINRES starts again from it
        let e = ctx.op.apply(x, v1);
        let e = e.and(v1.axpby(T::one(), b, -T::one()));
        let e = e.and(ctx.precond(v1, u1));
        let dr = dots(&ctx.comm, &[(&*u1, &*v1), (&*v1, &*v1)], e)?;
        let ry = re(dr[0]);
        if !ry.is_finite() {
            return Ok(info(it, Reason::DivergedNan, beta1, ry, bnorm));
        }
        if ry < 0.0 || (pc && pc_loses(ry, re(dr[1]))) {
            return Ok(info(
                it,
                Reason::DivergedIndefinite,
                beta1,
                out.final_residual_norm,
                bnorm,
            ));
        }
        let tnorm = ry.sqrt();
        if let Some(end) = ctx.confirmed(it, out.reason, tnorm, bnorm) {
            // a confirmed convergence reports the norm its rule tested, an end the true one
            let shown = if end == out.reason {
                out.final_residual_norm
            } else {
                tnorm
            };
            return Ok(info(it, end, beta1, shown, bnorm));
        }
        start = tnorm;
    }
}

/// MINRES's iteration from the residual in v1 (u1 = M v1; `beta` its norm), counting in `it`, until
/// the rule or a divergence ends it. `beta1`: the solve's first residual norm.
#[allow(clippy::too_many_arguments)]
fn lanczos<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    [v0, v1, u1, q, w0, w1]: [&mut DistVector<T>; 6],
    beta: f64,
    it: &mut i64,
    (beta1, bnorm): (f64, f64),
) -> Result<Info> {
    let pc = ctx.pc.is_some();
    let (mut beta, mut eta) = (beta, beta);
    let (mut gamma0, mut gamma1, mut sigma0, mut sigma1) = (1.0f64, 1.0f64, 0.0f64, 0.0f64);
    let mut step = 0;
    loop {
        *it += 1;
        step += 1;
        let it = *it;
        // the Lanczos vector v1 and z = M v1 (z is v1 itself without preconditioner)
        v1.scale(T::real(1.0 / beta))?;
        if pc {
            u1.scale(T::real(1.0 / beta))?;
        }
        let z: &DistVector<T> = if pc { u1 } else { v1 };
        let e = ctx.op.apply(z, q);
        let alpha = re(dots(&ctx.comm, &[(z, &*q)], e)?[0]);
        if step > 1 {
            q.axpy(T::real(-beta), v0)?;
        }
        // v0 = q - alpha v1: the next Lanczos vector (unnormalised)
        v0.copy_from(q)?;
        v0.axpy(T::real(-alpha), v1)?;
        let delta = gamma1 * alpha - gamma0 * sigma1 * beta;
        let rho3 = sigma0 * beta;
        let rho2 = sigma1 * alpha + gamma0 * gamma1 * beta;
        let b2 = if pc {
            let e = ctx.precond(v0, q);
            re(dots(&ctx.comm, &[(&*v0, &*q)], e)?[0])
        } else {
            re(dots(&ctx.comm, &[(&*v0, &*v0)], Ok(()))?[0])
        };
        if !b2.is_finite() || !alpha.is_finite() {
            return Ok(info(it - 1, Reason::DivergedNan, beta1, eta.abs(), bnorm));
        }
        if b2 < 0.0 {
            return Ok(info(
                it - 1,
                Reason::DivergedIndefinite,
                beta1,
                eta.abs(),
                bnorm,
            ));
        }
        beta = b2.sqrt();
        let rho1 = delta.hypot(beta);
        if rho1 == 0.0 {
            // A z = 0 for the Lanczos vector (the zero operator, or b in the null space): x cannot
            // move, and no residual reduction is possible. Decided from reduced values.
            return Ok(info(
                it - 1,
                Reason::DivergedBreakdown,
                beta1,
                eta.abs(),
                bnorm,
            ));
        }
        // the search direction w0 = (z - rho2 w1 - rho3 w0) / rho1
        let z: &DistVector<T> = if pc { u1 } else { v1 };
        match step {
            1 => {
                w0.copy_from(z)?;
                w0.scale(T::real(1.0 / rho1))?;
            }
            2 => {
                w0.copy_from(w1)?;
                w0.axpby(T::real(1.0 / rho1), z, T::real(-rho2 / rho1))?;
            }
            _ => {
                w0.axpby(T::real(-rho2 / rho1), w1, T::real(-rho3 / rho1))?;
                w0.axpy(T::real(1.0 / rho1), z)?;
            }
        }
        gamma0 = gamma1;
        gamma1 = delta / rho1;
        x.axpy(T::real(gamma1 * eta), w0)?;
        sigma0 = sigma1;
        sigma1 = beta / rho1;
        eta *= -sigma1;
        if let Some(reason) = ctx.check(it, eta.abs(), bnorm, b, x)? {
            return Ok(info(it, reason, beta1, eta.abs(), bnorm));
        }
        if beta == 0.0 {
            // the Krylov space is invariant, so eta is 0 and the test above has converged,
            // unless it could not (a stopping rule below 0): nothing more can be done
            return Ok(info(it, Reason::DivergedBreakdown, beta1, eta.abs(), bnorm));
        }
        if pc {
            std::mem::swap(u1, q);
        }
        std::mem::swap(v0, v1);
        std::mem::swap(w0, w1);
    }
}
