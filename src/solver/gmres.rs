//! Restarted GMRES(m) with right preconditioning, and flexible GMRES (the preconditioner may change
//! from one iteration to the next: its outputs are kept). Classical Gram-Schmidt: one reduction for
//! the projections and one for the norm per iteration; complex Givens rotations. The residual norm
//! tested is the true ||b - A x|| (right preconditioning leaves it unchanged): the Arnoldi estimate
//! during a cycle, and a convergence seen on it is confirmed on the recomputed residual (one operator
//! apply and one reduction); when the latter does not meet the rule, the solve goes on from it.

use super::{Ctx, Info, Reason, info, initial_residual, re, root};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, dots};

pub(crate) fn solve<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    flexible: bool,
) -> Result<Info> {
    let m = ctx.p.restart.max(1);
    let n = m + 1 + if flexible { m } else { 1 } + 1;
    let mut v = ctx.ws.take(n, x.layout())?;
    let out = run(ctx, b, x, &mut v, m, flexible);
    ctx.ws.put(v);
    out
}

/// (c, s, r) with [c s; -conj(s) c] [a; b] = [r; 0], c real.
fn givens<T: Scalar>(a: T, b: T) -> (f64, T, T) {
    if b.is_zero() {
        return (1.0, T::zero(), a);
    }
    if a.is_zero() {
        return (0.0, T::one(), b);
    }
    let (na, nb) = (a.abs_f64(), b.abs_f64());
    let nrm = na.hypot(nb);
    let alpha = a * T::real(1.0 / na);
    (
        na / nrm,
        alpha * b.conj() * T::real(1.0 / nrm),
        alpha * T::real(nrm),
    )
}

fn run<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    vs: &mut [DistVector<T>],
    m: usize,
    flexible: bool,
) -> Result<Info> {
    let (basis, rest) = vs.split_at_mut(m + 1);
    let (zs, rest) = rest.split_at_mut(if flexible { m } else { 1 });
    let w = &mut rest[0];
    let e = initial_residual(ctx, b, x, w);
    let d = dots(&ctx.comm, &[(b, b), (w, w)], e)?;
    let bnorm = re(d[0]).sqrt();
    let mut beta = root(re(d[1]));
    let r0 = beta;
    if let Some(reason) = ctx.check(0, beta, bnorm)? {
        return Ok(info(0, reason, r0, r0, bnorm));
    }
    let mut h = vec![T::zero(); (m + 1) * m]; // column-major: h[i + j*(m+1)]
    let mut g = vec![T::zero(); m + 1];
    let mut rot: Vec<(f64, T)> = vec![(1.0, T::zero()); m];
    let mut total = 0i64;
    let mut pending = Ok(());
    loop {
        // a new cycle: v0 = r / ||r||
        basis[0].copy_from(w)?;
        basis[0].scale(T::real(1.0 / beta))?;
        g.iter_mut().for_each(|v| *v = T::zero());
        g[0] = T::real(beta);
        let mut k = 0;
        let mut stop = None;
        let mut resid = beta;
        while k < m {
            // z = M v_k (kept for flexible), w = A z
            let zi = if flexible { k } else { 0 };
            let e = ctx.precond(&basis[k], &mut zs[zi]);
            let e = e.and(ctx.op.apply(&zs[zi], w));
            let pairs: Vec<(&DistVector<T>, &DistVector<T>)> =
                (0..=k).map(|i| (&basis[i], &*w)).collect();
            let proj = dots(
                &ctx.comm,
                &pairs,
                std::mem::replace(&mut pending, Ok(())).and(e),
            )?;
            for (i, hv) in proj.iter().enumerate() {
                h[i + k * (m + 1)] = *hv;
                w.axpy(-*hv, &basis[i])?;
            }
            let hn = root(re(dots(&ctx.comm, &[(w, w)], Ok(()))?[0]));
            h[k + 1 + k * (m + 1)] = T::real(hn);
            // previous rotations on the new column, then a new one
            for (i, &(c, s)) in rot.iter().enumerate().take(k) {
                let (a, bb) = (h[i + k * (m + 1)], h[i + 1 + k * (m + 1)]);
                h[i + k * (m + 1)] = T::real(c) * a + s * bb;
                h[i + 1 + k * (m + 1)] = -s.conj() * a + T::real(c) * bb;
            }
            let (c, s, r) = givens(h[k + k * (m + 1)], h[k + 1 + k * (m + 1)]);
            rot[k] = (c, s);
            h[k + k * (m + 1)] = r;
            h[k + 1 + k * (m + 1)] = T::zero();
            let gk = g[k];
            g[k] = T::real(c) * gk;
            g[k + 1] = -s.conj() * gk;
            resid = g[k + 1].abs_f64();
            total += 1;
            k += 1;
            if hn > 0.0 {
                basis[k].copy_from(w)?;
                basis[k].scale(T::real(1.0 / hn))?;
            }
            if r.is_zero() {
                stop = Some(Reason::DivergedBreakdown);
                k -= 1;
                break;
            }
            if let Some(reason) = ctx.check(total, resid, bnorm)? {
                stop = Some(reason);
                break;
            }
            if hn == 0.0 {
                // lucky breakdown: the Krylov space holds the solution (checked on the true
                // residual below, as every convergence)
                stop = Some(Reason::ConvergedAtol);
                break;
            }
        }
        // x += Z y with H y = g (upper triangular k x k)
        let mut y = vec![T::zero(); k];
        for i in (0..k).rev() {
            let mut s = g[i];
            for j in i + 1..k {
                s = s - h[i + j * (m + 1)] * y[j];
            }
            y[i] = s / h[i + i * (m + 1)];
        }
        if flexible {
            for (i, yi) in y.iter().enumerate() {
                x.axpy(*yi, &zs[i])?;
            }
        } else {
            // x += M (V y)
            w.fill(T::zero())?;
            for (i, yi) in y.iter().enumerate() {
                w.axpy(*yi, &basis[i])?;
            }
            let e = ctx.precond(w, &mut zs[0]);
            pending = e;
            x.axpy(T::one(), &zs[0])?;
        }
        if let Some(reason) = stop
            && !reason.converged()
        {
            ctx.comm.agree(pending)?;
            return Ok(info(total, reason, r0, resid, bnorm));
        }
        // the true residual: to restart from, or to confirm a convergence seen on the estimate
        let e = ctx.op.apply(x, w);
        w.axpby(T::one(), b, -T::one())?;
        beta = root(re(dots(
            &ctx.comm,
            &[(w, w)],
            std::mem::replace(&mut pending, Ok(())).and(e),
        )?[0]));
        if let Some(reason) = stop {
            if ctx.holds(beta, bnorm) {
                return Ok(info(total, reason, r0, beta, bnorm));
            }
            if !beta.is_finite() {
                return Ok(info(total, Reason::DivergedNan, r0, beta, bnorm));
            }
            if total >= ctx.p.max_iter {
                return Ok(info(total, Reason::DivergedMaxIter, r0, beta, bnorm));
            }
            // the estimate was ahead of the true residual: go on from the latter
        }
    }
}
