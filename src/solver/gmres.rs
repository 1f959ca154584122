//! Restarted GMRES(m) with right (default) or left preconditioning, and flexible GMRES (right; the
//! preconditioner may change from one iteration to the next: its outputs are kept). Classical
//! Gram-Schmidt (default): one reduction for the projections and one for the norm per iteration,
//! and one pass for all the projections ([`fused::mdot`], PETSc's VecMDot) and one
//! for the update with the norm ([`fused::maxpy_norm`]), the same bits as one pass per vector; the
//! solution moves once per cycle in one pass over all the basis vectors ([`fused::maxpy`]);
//! modified Gram-Schmidt (MFEM's): one reduction per projection. Complex Givens rotations. The residual norm tested is ||b - A x|| with right preconditioning (which leaves
//! it unchanged) and ||M (b - A x)|| against ||M b|| with left: the Arnoldi estimate during a cycle.
//! A convergence seen on the estimate is confirmed on the recomputed residual (one operator apply,
//! one preconditioner apply when left, one reduction); when the latter does not meet the rule, the
//! solve goes on from it. The final norm reported is the one the rule last tested (the estimate
//! when a cycle converged, as PETSc and MFEM report it); the recomputed one is then within the
//! tolerance too. A cycle's end recomputes the residual to restart from and stops when that meets
//! the rule.

use super::{Ctx, Info, Orthog, PcSide, Reason, info, initial_residual, re, root};
use crate::comm::ReduceOp;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, dots, fused, sum_partials};

pub(crate) fn solve<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    flexible: bool,
) -> Result<Info> {
    let m = ctx.p.restart.max(1);
    // the preconditioned vectors: m kept (flexible), or one scratch; none without a preconditioner
    let zs = match (ctx.pc.is_some(), flexible) {
        (false, _) => 0,
        (true, true) => m,
        (true, false) => 1,
    };
    let n = m + 1 + zs + 1;
    let mut v = ctx.ws.take(n, x.layout())?;
    let out = run(ctx, b, x, &mut v, m, flexible);
    ctx.ws.put(v);
    out
}

/// (c, s, r) with [c s; -conj(s) c] [a; b] = [r; 0], c real. Real data: the textbook rotation
/// (Saad; the SIAM Templates' GeneratePlaneRotation, which MFEM uses), c of either sign; complex
/// data: c >= 0 and the phase of a carried by s and r.
fn givens<T: Scalar>(a: T, b: T) -> (f64, T, T) {
    if b.is_zero() {
        return (1.0, T::zero(), a);
    }
    if T::PARTS == 1 {
        let (x, y) = (a.to_parts().0, b.to_parts().0);
        let (c, s) = if y.abs() > x.abs() {
            let t = x / y;
            let s = 1.0 / (1.0 + t * t).sqrt();
            (t * s, s)
        } else {
            let t = y / x;
            let c = 1.0 / (1.0 + t * t).sqrt();
            (c, t * c)
        };
        return (c, T::real(s), T::real(c * x + s * y));
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
    let left = ctx.p.pc_side == PcSide::Left && ctx.pc.is_some() && !flexible;
    let (basis, rest) = vs.split_at_mut(m + 1);
    let (zs, rest) = rest.split_at_mut(rest.len() - 1);
    let w = &mut rest[0];
    let d = if left {
        // ||M b|| and M (b - A x0)
        let (b0, b1) = basis.split_at_mut(1);
        let e = ctx.precond(b, &mut b1[0]);
        let e = e.and(initial_residual(ctx, b, x, &mut b0[0]));
        let e = e.and(ctx.precond(&b0[0], w));
        let d = dots(
            &ctx.comm,
            &[(&b1[0], &b1[0]), (w, w), (b, b), (&b0[0], &b0[0])],
            e,
        )?;
        if super::pc_loses(re(d[0]), re(d[2])) || super::pc_loses(re(d[1]), re(d[3])) {
            // M b = 0 or M r = 0 for a nonzero b or r: the left-preconditioned rule would hold
            // for a residual that is not small (M = 0)
            let (bn, rn) = (root(re(d[0])), root(re(d[1])));
            return Ok(info(0, Reason::DivergedBreakdown, rn, rn, bn));
        }
        d
    } else {
        let e = initial_residual(ctx, b, x, w);
        dots(&ctx.comm, &[(b, b), (w, w)], e)?
    };
    let bnorm = root(re(d[0]));
    let mut beta = root(re(d[1]));
    let r0 = beta;
    if let Some(reason) = ctx.check(0, beta, bnorm, b, x)? {
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
        if let Some(e) = ctx.eig.as_mut() {
            e.hess.clear();
        }
        let mut k = 0;
        let mut stop = None;
        let mut resid = beta;
        while k < m {
            // right: z = M v_k (kept for flexible), w = A z; left: z = A v_k, w = M z
            let zi = if flexible { k } else { 0 };
            let e = if left {
                let e = ctx.op.apply(&basis[k], &mut zs[0]);
                e.and(ctx.precond(&zs[0], w))
            } else if ctx.pc.is_none() {
                // no preconditioner: Z = V, nothing to copy
                ctx.op.apply(&basis[k], w)
            } else {
                let e = ctx.precond(&basis[k], &mut zs[zi]);
                e.and(ctx.op.apply(&zs[zi], w))
            };
            let pending_e = std::mem::replace(&mut pending, Ok(())).and(e);
            // ||w|| after the projections, when the fused pass took it
            let mut hn = None;
            // a failure of the update, carried into the norm's reduction
            let mut upd_e = Ok(());
            if crate::vector::ops::reproducible_sums() && ctx.p.orthog != Orthog::Modified {
                // the reproducible mode: the projections as binned sums in one reduction, the
                // update in one pass, its norm from its own binned sum
                let pairs: Vec<_> = basis[..=k].iter().map(|v| (v, &*w)).collect();
                let proj = dots(&ctx.comm, &pairs, pending_e)?;
                h[k * (m + 1)..k * (m + 1) + k + 1].copy_from_slice(&proj);
                upd_e = fused::maxpy_norm(w, &proj, &basis[..=k]).map(|_| ());
            } else if ctx.p.orthog == Orthog::Modified {
                // one projection at a time, each against the updated w (k + 1 reductions)
                let mut e = pending_e;
                for i in 0..=k {
                    let hv = dots(
                        &ctx.comm,
                        &[(&basis[i], &*w)],
                        std::mem::replace(&mut e, Ok(())),
                    )?[0];
                    h[i + k * (m + 1)] = hv;
                    w.axpy(-hv, &basis[i])?;
                }
            } else {
                // all projections in one pass and one reduction, the update and its norm in one pass
                let local = pending_e.and_then(|_| fused::mdot(&basis[..=k], w));
                let proj = sum_partials::<T>(&ctx.comm, local, k + 1, w)?;
                h[k * (m + 1)..k * (m + 1) + k + 1].copy_from_slice(&proj);
                let local = fused::maxpy_norm(w, &proj, &basis[..=k]).map(|v| vec![v]);
                hn = Some(root(
                    ctx.comm.allreduce_checked(local, 1, ReduceOp::Sum)?[0],
                ));
            }
            let hn = match hn {
                Some(v) => v,
                None => root(re(dots(&ctx.comm, &[(w, w)], upd_e)?[0])),
            };
            h[k + 1 + k * (m + 1)] = T::real(hn);
            if let Some(e) = ctx.eig.as_mut() {
                let col: Vec<T> = h[k * (m + 1)..k * (m + 1) + k + 2].to_vec();
                e.complex |= col.iter().any(|v| v.to_parts().1 != 0.0);
                e.hess.push(col.iter().map(|v| v.to_parts().0).collect());
            }
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
                // the next basis vector is w scaled in place (w's old storage becomes scratch)
                std::mem::swap(&mut basis[k], w);
                basis[k].scale(T::real(1.0 / hn))?;
            }
            if r.is_zero() {
                stop = Some(Reason::DivergedBreakdown);
                k -= 1;
                break;
            }
            let reason = if ctx.watching() {
                // the iterate of the cycle, for the monitor that sees it (w and, when it is
                // scratch, zs[0] are free here)
                let y = triangular(&h, &g, k, m);
                let mut xt = ctx.ws.take(1, x.layout())?;
                let e = xt[0].copy_from(x);
                let e = e.and(add_update(
                    ctx, &mut xt[0], &y, basis, zs, w, flexible, left,
                ));
                let e = ctx.comm.agree(e);
                let out = e.and_then(|_| ctx.check(total, resid, bnorm, b, &xt[0]));
                ctx.ws.put(xt);
                out?
            } else {
                ctx.check(total, resid, bnorm, b, x)?
            };
            if let Some(reason) = reason {
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
        let y = triangular(&h, &g, k, m);
        pending = add_update(ctx, x, &y, basis, zs, w, flexible, left);
        if let Some(reason) = stop
            && !reason.converged()
        {
            ctx.comm.agree(pending)?;
            return Ok(info(total, reason, r0, resid, bnorm));
        }
        // the true residual: to restart from, or to confirm a convergence seen on the estimate
        let e = if left {
            let e = ctx.op.apply(x, &mut zs[0]);
            zs[0].axpby(T::one(), b, -T::one())?;
            e.and(ctx.precond(&zs[0], w))
        } else {
            let e = ctx.op.apply(x, w);
            w.axpby(T::one(), b, -T::one())?;
            e
        };
        beta = root(re(dots(
            &ctx.comm,
            &[(w, w)],
            std::mem::replace(&mut pending, Ok(())).and(e),
        )?[0]));
        if !beta.is_finite() {
            return Ok(info(total, Reason::DivergedNan, r0, beta, bnorm));
        }
        match stop {
            // confirmed: the reported norm is the estimate the rule tested
            Some(reason) if ctx.holds(beta, bnorm) => {
                return Ok(info(total, reason, r0, resid, bnorm));
            }
            // the cycle ended (restart) and the residual to restart from meets the rule
            None if ctx.holds(beta, bnorm) => {
                let reason = if ctx.p.rtol * ctx.reference(bnorm) >= ctx.p.atol {
                    Reason::ConvergedRtol
                } else {
                    Reason::ConvergedAtol
                };
                return Ok(info(total, reason, r0, beta, bnorm));
            }
            _ => {}
        }
        if stop.is_some() && total >= ctx.p.max_iter {
            return Ok(info(total, Reason::DivergedMaxIter, r0, beta, bnorm));
        }
        // the estimate was ahead of the true residual: go on from the latter
    }
}

/// y with H y = g: the leading k x k upper triangle of the rotated Hessenberg matrix `h` (column-major,
/// m + 1 rows), solved column by column.
fn triangular<T: Scalar>(h: &[T], g: &[T], k: usize, m: usize) -> Vec<T> {
    let mut y = g[..k].to_vec();
    for i in (0..k).rev() {
        y[i] = y[i] / h[i + i * (m + 1)];
        for j in (0..i).rev() {
            y[j] = y[j] - h[j + i * (m + 1)] * y[i];
        }
    }
    y
}

/// x += Z y (flexible), x += V y (left or no preconditioner) or x += M (V y) (right; `w` and `zs[0]`
/// are scratch then). Returns the preconditioner's error, for the next reduction.
#[allow(clippy::too_many_arguments)]
fn add_update<T: Scalar>(
    ctx: &Ctx<T>,
    x: &mut DistVector<T>,
    y: &[T],
    basis: &[DistVector<T>],
    zs: &mut [DistVector<T>],
    w: &mut DistVector<T>,
    flexible: bool,
    left: bool,
) -> Result<()> {
    // one pass over x (or w) for all the vectors (PETSc's VecMAXPY), with the bits of one axpy
    // per vector
    if flexible && ctx.pc.is_some() {
        fused::maxpy(x, y, &zs[..y.len()])
    } else if left || ctx.pc.is_none() {
        fused::maxpy(x, y, &basis[..y.len()])
    } else {
        w.fill(T::zero())?;
        fused::maxpy(w, y, &basis[..y.len()])?;
        let e = ctx.precond(w, &mut zs[0]);
        x.axpy(T::one(), &zs[0])?;
        e
    }
}
