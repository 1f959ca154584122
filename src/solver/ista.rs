//! ISTA and FISTA for min 1/2 ||b - A x||^2 + eps R(x), with PyLops' thresholds: soft (R = ||x||_1),
//! hard (||x||_0) and half (||x||_{1/2}^{1/2}); threshold eps * step / 2, step = 1 / lambda_max(A^H A)
//! from power iteration unless given. The residual tested is the update ||x_k - x_{k-1}|| against
//! max(rtol, atol) (PyLops' `tol`); r1norm is ||b - A x|| at the end. With cost tolerances, the cost
//! J = 1/2 ||b - A x||^2 + eps ||x||_1 of each new iterate is formed (one product, two reductions)
//! and tested as PyLops' CostToInitialCallback and CostToDataCallback do; a NaN or Inf cost is a
//! divergence (CostNanInfCallback).

use super::cgls::lsq_info;
use super::power::power_iteration;
use super::{Ctx, Info, Reason, Threshold, info, re, root};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, NormKind, dots};

pub(crate) fn solve<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    fast: bool,
) -> Result<Info> {
    let (rl, cl) = (b.layout().clone(), x.layout().clone());
    super::with_vecs2(ctx, 2, &rl, 3, &cl, |ctx, r, c| run(ctx, b, x, r, c, fast))
}

/// PyLops' thresholding of one entry.
fn threshold<T: Scalar>(v: T, th: f64, kind: Threshold) -> T {
    let a = v.abs_f64();
    match kind {
        Threshold::Soft => {
            if a <= th {
                T::zero()
            } else {
                v * T::real((a - th) / a)
            }
        }
        Threshold::Hard => {
            if a <= (2.0 * th).sqrt() {
                T::zero()
            } else {
                v
            }
        }
        Threshold::Half => {
            if a <= 54f64.powf(1.0 / 3.0) / 4.0 * th.powf(2.0 / 3.0) {
                return T::zero();
            }
            let arg = ((th / 8.0) * (a / 3.0).powf(-1.5)).clamp(-1.0, 1.0);
            let phi = 2.0 / 3.0 * arg.acos();
            v * T::real(2.0 / 3.0 * (1.0 + (2.0 * std::f64::consts::PI / 3.0 - phi).cos()))
        }
    }
}

fn run<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    rows: &mut [DistVector<T>],
    cols: &mut [DistVector<T>],
    fast: bool,
) -> Result<Info> {
    let [res, res2] = rows else { unreachable!() };
    let [g, z, xold] = cols else { unreachable!() };
    if let Some(s) = ctx.p.step
        && !(s > 0.0 && s.is_finite())
    {
        crate::bail!(
            InvalidArgument,
            "the ISTA/FISTA step is {s}; it must be positive and finite"
        );
    }
    if !ctx.p.nonzero_guess {
        x.fill(T::zero())?;
    }
    let bb = re(dots(&ctx.comm, &[(b, b)], Ok(()))?[0]);
    let bnorm = root(bb);
    if !bnorm.is_finite() {
        return Ok(info(0, Reason::DivergedNan, f64::NAN, f64::NAN, bnorm));
    }
    if ctx.p.max_iter == 0 {
        return lsq_info(ctx, b, x, res, 0, Reason::DivergedMaxIter, 0.0, 0.0, bnorm);
    }
    let step = match ctx.p.step {
        Some(s) => s,
        None => {
            let (lam, _) = power_iteration(ctx.op, 30, 1e-8, 7, true)?;
            let l = lam.abs_f64();
            if !l.is_finite() {
                // NaN or Inf in the operator
                return Ok(info(0, Reason::DivergedNan, f64::NAN, f64::NAN, bnorm));
            }
            if l <= 0.0 {
                crate::bail!(
                    InvalidArgument,
                    "the operator's largest eigenvalue of A^H A is {l}: no step can be derived"
                );
            }
            1.0 / l
        }
    };
    let th = ctx.p.eps * step * 0.5;
    z.copy_from(x)?;
    let mut t = 1.0f64;
    let mut pending = Ok(());
    let mut it = 0;
    let mut upd0 = 0.0;
    let (cost_rtol, cost_rtol1) = (ctx.p.cost_rtol, ctx.p.cost_rtol1);
    let mut cost1 = 0.0;
    loop {
        it += 1;
        // gradient step from z (FISTA) or x (ISTA), then the threshold
        let from: &DistVector<T> = if fast { z } else { x };
        let e = ctx.op.apply(from, res);
        res.axpby(T::one(), b, -T::one())?;
        let e = e.and(ctx.op.apply_adjoint(res, g));
        xold.copy_from(x)?;
        let base: &DistVector<T> = if fast { z } else { xold };
        let sv = T::real(step);
        for ((xv, bv), gv) in x.local_mut().iter_mut().zip(base.local()).zip(g.local()) {
            *xv = threshold(*bv + sv * *gv, th, ctx.p.threshold);
        }
        if fast {
            let tn = (1.0 + (1.0 + 4.0 * t * t).sqrt()) / 2.0;
            // z = x + (t - 1)/tn (x - xold)
            let c = T::real((t - 1.0) / tn);
            z.copy_from(x)?;
            z.axpy(c, x)?;
            z.axpy(-c, xold)?;
            t = tn;
        }
        xold.axpy(-T::one(), x)?;
        let upd = root(re(dots(
            &ctx.comm,
            &[(xold, xold)],
            std::mem::replace(&mut pending, Ok(())).and(e),
        )?[0]));
        if it == 1 {
            upd0 = upd;
        }
        let cost_reason = if cost_rtol > 0.0 || cost_rtol1 > 0.0 {
            // the cost of the new iterate, J = 1/2 ||b - A x||^2 + eps ||x||_1
            let e = ctx.op.apply(x, res2);
            res2.axpby(T::one(), b, -T::one())?;
            let rr = re(dots(&ctx.comm, &[(res2, res2)], e)?[0]);
            let l1 = x.norm_checked(Ok(NormKind::One))?;
            let j = 0.5 * rr + ctx.p.eps * l1;
            if it == 1 {
                cost1 = j;
            }
            if !j.is_finite() {
                Some(Reason::DivergedNan)
            } else if cost_rtol > 0.0 && j < cost_rtol * cost1 {
                Some(Reason::ConvergedCostInitial)
            } else if cost_rtol1 > 0.0 && j < cost_rtol1 * bnorm {
                Some(Reason::ConvergedCostData)
            } else {
                None
            }
        } else {
            None
        };
        let checked = ctx.check(it, upd, 1.0, b, x)?;
        // a cost that is not finite wins over any other reason; a cost rule over running out of
        // iterations
        let reason = match (checked, cost_reason) {
            (_, Some(Reason::DivergedNan)) => Some(Reason::DivergedNan),
            (Some(Reason::DivergedMaxIter) | None, Some(c)) => Some(c),
            (r, _) => r,
        };
        if let Some(reason) = reason {
            return lsq_info(ctx, b, x, res, it, reason, upd0, upd, bnorm);
        }
    }
}
