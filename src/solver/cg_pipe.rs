//! Pipelined preconditioned CG (Ghysels and Vanroose): one non-blocking reduction per iteration
//! ([r^H u, w^H u, r^H r]) overlapped with the preconditioner and the operator apply.
//!
//! The recurrences of pipelined CG drift from the true residual (Cools and Vanroose): every
//! REPLACE iterations the residual and its auxiliary vectors are recomputed from x and p (four extra
//! operator applications, no extra reduction), which keeps the attainable accuracy that of CG.
//!
//! Without a preconditioner on host vectors, u = r, m = w and q = s, and an iteration makes two
//! passes: n = A w (overlapped with the reduction), then the six updates with the next reduction's
//! sums ([`fused::cg_pipe_update`]): 104 + 88 bytes per row, against CG's 160 (the price of the
//! overlap, paid back only where a reduction costs more than about 30 bytes per row of bandwidth:
//! many ranks, slow networks).

use super::{Ctx, Info, Reason, info, initial_residual, re, root};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, dots, dots_finish, dots_start, fused};

/// Iterations between residual replacements.
const REPLACE: i64 = 50;

/// Work vectors of x's layout that [`run`] takes.
pub(crate) const WORK: usize = 9;

pub(crate) fn run<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    v: &mut [DistVector<T>],
) -> Result<Info> {
    let [r, u, w, m, n, z, q, s, p] = v else {
        unreachable!()
    };
    // fused passes: no preconditioner, host vectors (the same on every rank)
    let fuse = ctx.pc.is_none() && !x.is_device();
    let e = initial_residual(ctx, b, x, r);
    let e = if fuse {
        e.and(ctx.op.apply(r, w))
    } else {
        e.and(ctx.precond(r, u)).and(ctx.op.apply(u, w))
    };
    let natural = ctx.p.natural_norm && ctx.pc.is_some();
    let bb = dots(&ctx.comm, &[(b, b), (r, if fuse { &*r } else { &*u })], e)?;
    let bnorm = if natural {
        super::cg::natural_bnorm(ctx, b, u, bb[1])?
    } else {
        re(bb[0]).sqrt()
    };
    if natural && bnorm < 0.0 {
        return Ok(info(
            0,
            Reason::DivergedIndefinite,
            f64::NAN,
            f64::NAN,
            bnorm,
        ));
    }
    let (mut alpha_old, mut gamma_old) = (T::one(), T::one());
    let mut r0 = 0.0;
    let mut pending = Ok(());
    // the fused path's sums for the next reduction, [r^H r, w^H r]
    let mut partials = if fuse {
        fused::rr_wr(r, w)
    } else {
        Ok(Vec::new())
    };
    let mut it = 0;
    loop {
        if it > 0 && it % REPLACE == 0 {
            // residual replacement: r = b - A x, u = M r, w = A u, s = A p, q = M s, z = A q
            let e = ctx.op.apply(x, r);
            r.axpby(T::one(), b, -T::one())?;
            let e = if fuse {
                e.and(ctx.op.apply(r, w))
                    .and(ctx.op.apply(p, s))
                    .and(ctx.op.apply(s, z))
            } else {
                e.and(ctx.precond(r, u))
                    .and(ctx.op.apply(u, w))
                    .and(ctx.op.apply(p, s))
                    .and(ctx.precond(s, q))
                    .and(ctx.op.apply(q, z))
            };
            pending = pending.and(e);
            if fuse {
                partials = fused::rr_wr(r, w);
            }
        }
        let pend = std::mem::replace(&mut pending, Ok(()));
        let red = if fuse {
            let local = pend.and(std::mem::replace(&mut partials, Ok(Vec::new())));
            ctx.comm.iallreduce_checked(local, 4)?
        } else {
            dots_start(&ctx.comm, &[(r, u), (w, u), (r, r)], pend)?
        };
        // overlapped with the reduction
        let e = if fuse {
            ctx.op.apply(w, n)
        } else {
            ctx.precond(w, m).and(ctx.op.apply(m, n))
        };
        let d = if fuse {
            let g = red.finish(&ctx.comm)?;
            let rr = T::from_parts_lossy(g[0], 0.0);
            vec![rr, T::from_parts_lossy(g[2], g[3]), rr]
        } else {
            dots_finish::<T>(&ctx.comm, red)?
        };
        pending = e;
        let (gamma, delta) = (d[0], d[1]);
        let rnorm = root(re(d[if natural { 0 } else { 2 }]));
        if it == 0 {
            r0 = rnorm;
        }
        if natural && re(gamma) < 0.0 {
            ctx.comm.agree(pending)?;
            return Ok(info(it, Reason::DivergedIndefinite, r0, rnorm, bnorm));
        }
        if let Some(reason) = ctx.check(it, rnorm, bnorm, b, x)? {
            // an apply that failed in the overlap must still be reported on every rank
            ctx.comm.agree(pending)?;
            return Ok(info(it, reason, r0, rnorm, bnorm));
        }
        let (beta, denom) = if it == 0 {
            (T::zero(), delta)
        } else {
            let beta = gamma / gamma_old;
            (beta, delta - beta * gamma / alpha_old)
        };
        if !re(denom).is_finite() || re(denom) <= 0.0 || re(gamma) < 0.0 {
            ctx.comm.agree(pending)?;
            let reason = if !re(denom).is_finite() {
                Reason::DivergedNan
            } else if re(denom) < 0.0 || re(gamma) < 0.0 {
                Reason::DivergedIndefinite
            } else {
                Reason::DivergedBreakdown
            };
            return Ok(info(it, reason, r0, rnorm, bnorm));
        }
        let alpha = gamma / denom;
        if fuse {
            partials = fused::cg_pipe_update(x, r, w, p, s, z, n, alpha, beta);
        } else {
            z.axpby(T::one(), n, beta)?;
            q.axpby(T::one(), m, beta)?;
            s.axpby(T::one(), w, beta)?;
            p.axpby(T::one(), u, beta)?;
            x.axpy(alpha, p)?;
            r.axpy(-alpha, s)?;
            u.axpy(-alpha, q)?;
            w.axpy(-alpha, z)?;
        }
        gamma_old = gamma;
        alpha_old = alpha;
        it += 1;
    }
}
