//! CGLS for min ||b - A x||^2 + damp^2 ||x||^2 (PyLops-MPI's cgls, whose `damp` enters squared).
//! Two reductions per iteration. The monitored residual is the normal-equations residual
//! ||A^H (b - A x) - damp^2 x||, tested against max(rtol ||A^H b||, atol); the info's r1norm is
//! ||b - A x|| and r2norm is sqrt(r1norm^2 + damp^2 ||x||^2), computed exactly at the end.

use super::{Ctx, Info, Reason, info, re, root};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, dots};

pub(crate) fn solve<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
) -> Result<Info> {
    let (rl, cl) = (b.layout().clone(), x.layout().clone());
    super::with_vecs2(ctx, 2, &rl, 2, &cl, |ctx, r, c| run(ctx, b, x, r, c))
}

/// r1 = ||b - A x||, r2 = sqrt(r1^2 + damp^2 ||x||^2), with `s` as work (rows). Shared with LSQR.
pub(crate) fn final_norms<T: Scalar>(
    ctx: &Ctx<T>,
    b: &DistVector<T>,
    x: &DistVector<T>,
    s: &mut DistVector<T>,
) -> Result<(f64, f64)> {
    let e = ctx.op.apply(x, s);
    s.axpby(T::one(), b, -T::one())?;
    let d = dots(&ctx.comm, &[(s, s), (x, x)], e)?;
    let (ss, xx) = (re(d[0]), re(d[1]));
    let damp = ctx.p.damp;
    Ok((root(ss), root(ss + damp * damp * xx)))
}

/// Info of a least-squares solve, with r1norm and r2norm computed exactly (`work` of the rows layout).
#[allow(clippy::too_many_arguments)]
pub(crate) fn lsq_info<T: Scalar>(
    ctx: &Ctx<T>,
    b: &DistVector<T>,
    x: &DistVector<T>,
    work: &mut DistVector<T>,
    it: i64,
    reason: Reason,
    r0: f64,
    rn: f64,
    bnorm: f64,
) -> Result<Info> {
    let (r1, r2) = final_norms(ctx, b, x, work)?;
    let mut i = info(it, reason, r0, rn, bnorm);
    i.r1norm = r1;
    i.r2norm = r2;
    Ok(i)
}

fn run<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    rows: &mut [DistVector<T>],
    cols: &mut [DistVector<T>],
) -> Result<Info> {
    let [s, q] = rows else { unreachable!() };
    let [r, c] = cols else { unreachable!() };
    let d2 = T::real(ctx.p.damp * ctx.p.damp);
    // s = b - A x; r = A^H s - damp^2 x; with a nonzero guess ||A^H b|| needs its own product
    let mut e = super::initial_residual(ctx, b, x, s);
    e = e.and(ctx.op.apply_adjoint(s, r));
    r.axpy(-d2, x)?;
    let ahb = if ctx.p.nonzero_guess {
        let e2 = ctx.op.apply_adjoint(b, c);
        let d = dots(&ctx.comm, &[(c, c)], e2.and(e.clone()))?;
        root(re(d[0]))
    } else {
        -1.0
    };
    c.copy_from(r)?;
    let e = e.and(ctx.op.apply(c, q));
    let d = dots(&ctx.comm, &[(b, b), (r, r), (s, s)], e)?;
    ctx.record_residual(root(re(d[2])));
    let bnorm = re(d[0]).sqrt();
    let mut k = re(d[1]);
    let r0 = root(k);
    let ahb = if ahb < 0.0 { r0 } else { ahb };
    let finish = |ctx: &Ctx<T>, x: &DistVector<T>, s: &mut DistVector<T>, it, reason, rn| {
        lsq_info(ctx, b, x, s, it, reason, r0, rn, bnorm)
    };
    if !bnorm.is_finite() {
        return finish(ctx, x, s, 0, Reason::DivergedNan, r0);
    }
    if let Some(reason) = ctx.check(0, r0, ahb, b, x)? {
        return finish(ctx, x, s, 0, reason, r0);
    }
    let mut it = 0;
    let mut pending = Ok(());
    loop {
        it += 1;
        // an apply that failed on some rank arrives with this reduction, on every rank
        let d = dots(
            &ctx.comm,
            &[(q, q), (c, c)],
            std::mem::replace(&mut pending, Ok(())),
        )?;
        let denom = re(d[0]) + ctx.p.damp * ctx.p.damp * re(d[1]);
        if denom.is_nan() || denom <= 0.0 {
            let reason = if denom.is_nan() {
                Reason::DivergedNan
            } else {
                Reason::DivergedBreakdown
            };
            return finish(ctx, x, s, it - 1, reason, root(k));
        }
        let a = T::real(k / denom);
        x.axpy(a, c)?;
        s.axpy(-a, q)?;
        let e = ctx.op.apply_adjoint(s, r);
        r.axpy(-d2, x)?;
        // ||s|| = ||b - A x|| joins the same reduction when the history is kept
        let kn = if ctx.p.keep_history {
            let d = dots(&ctx.comm, &[(r, r), (s, s)], e)?;
            ctx.record_residual(root(re(d[1])));
            re(d[0])
        } else {
            re(dots(&ctx.comm, &[(r, r)], e)?[0])
        };
        let rn = root(kn);
        if let Some(reason) = ctx.check(it, rn, ahb, b, x)? {
            return finish(ctx, x, s, it, reason, rn);
        }
        let beta = T::real(kn / k);
        k = kn;
        c.axpby(T::one(), r, beta)?;
        pending = ctx.op.apply(c, q);
    }
}
