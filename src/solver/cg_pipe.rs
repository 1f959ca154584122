//! Pipelined preconditioned CG (Ghysels and Vanroose): one non-blocking reduction per iteration
//! ([r^H u, w^H u, r^H r]) overlapped with the preconditioner and the operator apply.
//!
//! The recurrences of pipelined CG drift from the true residual (Cools and Vanroose): now and then
//! the residual and its auxiliary vectors are recomputed from x and p (four extra operator
//! applications and one reduction, which also measures the drift). The first replacement comes
//! after FIRST_EVERY iterations; the interval doubles while the drift stays under GAP_LOW and
//! halves over GAP_HIGH (within MIN_EVERY and MAX_EVERY), and a drift over GAP_HIGH also restarts
//! CG from the replaced residual. A convergence seen on the recurrence is confirmed on the true
//! residual; where it does not hold there, the solve goes on from it, restarted.
//!
//! Without a preconditioner on host vectors, u = r, m = w and q = s, and the update is one fused
//! pass ([`fused::PipeRows`]) that also forms the next reduction's sums. The product n = A w runs
//! through [`crate::op::LinearOperator::apply_streamed`]: while the reduction is in flight the
//! operator forms rows (a host CSR matrix: the rows that need no ghosts first); once it is in, and
//! this iteration's test is known to pass without collective work (no monitor, not converged, not
//! diverged, no breakdown), the update is made block by block of rows as the operator forms them,
//! so n never goes to memory, and the new w goes into w itself as the product hands its rows over
//! (once no later row of the product reads them: a CSR matrix keeps the band below its diagonal
//! in a small buffer). Otherwise (the first iteration, a monitor, an operator that cannot stream)
//! the whole product comes first and the same pass follows: the same bits either way. Only x's
//! step reads the direction p, so without an iterate monitor p and x move on every second
//! iteration only: the pass after one that left them alone forms p_i from the r and s it reads
//! (r_i = r_(i+1) + a_i s_i, as every pass forms it: [`fused::XStep`]), then p_(i+1), and makes
//! x + a_i p_i + a_(i+1) p_(i+1) (the bits of the two steps one after the other). Bytes per row and
//! iteration besides the matrix: w read by the product (8), r, s, z read and written and w written
//! (56), and p's and x's 32 every second iteration: 80 on average, against CG's 88 (both counting
//! the read for ownership of a written entry), plus the replacements.

use std::cell::Cell;

use super::{Ctx, Info, Reason, info, initial_residual, re, root};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, dots, dots_finish, dots_start, fused};

/// Iterations between residual replacements: the first, the fewest and the most.
const FIRST_EVERY: i64 = 100;
const MIN_EVERY: i64 = 10;
const MAX_EVERY: i64 = 800;
/// Relative gaps between the recurrence residual and the true one under which the replacements
/// grow apart, and over which they come closer.
const GAP_LOW: f64 = 1e-6;
const GAP_HIGH: f64 = 1e-3;

/// Work vectors of x's layout that [`run`] takes (as an earlier solve left them: it zeroes those it
/// reads before it writes them).
pub(crate) const WORK: super::Work = super::Work::unzeroed(9);

pub(crate) fn run<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    v: &mut [DistVector<T>],
) -> Result<Info> {
    let [r, u, w, m, n, z, q, s, p] = v else {
        unreachable!()
    };
    // fused passes: no preconditioner (the same on every rank); made row by row during the product
    // where the vectors are host-addressable ([`fused::PipeRows`]), else at once after it
    // (not in the reproducible mode: its sums are binned, the plain steps' dots)
    let fuse = ctx.pc.is_none() && !crate::vector::ops::reproducible_sums();
    // the first step scales z, s, p (and q) by zero; a preconditioner writes u and m (and might
    // read them first); the others are written before they are read (a failure joins the first
    // reduction's agreement: every rank ends together)
    let mut e = Ok(());
    for v in [&mut *z, s, p] {
        e = e.and(v.fill(T::zero()));
    }
    if !fuse {
        for v in [&mut *u, m, q] {
            e = e.and(v.fill(T::zero()));
        }
    }
    let e = e.and(initial_residual(ctx, b, x, r));
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
    if natural && (bnorm < 0.0 || super::pc_loses(bnorm, re(bb[0]))) {
        // M not positive definite (b^H M b <= 0 for a nonzero b: M = 0 would otherwise meet the
        // natural-norm rule at once)
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
    // p and x are read and written on every second iteration only when no iterate monitor reads x
    // at the test: the step x lacks (owed: that pass's a and b) is made with the next one, before
    // a residual replacement, and at every exit (the bits of one step per iteration)
    let defer = fuse && !ctx.watching();
    let mut owed: Option<(T, T)> = None;
    // residual replacements: the iteration of the last one, and the iterations until the next
    let (mut last, mut every) = (0i64, FIRST_EVERY);
    let iterate = || -> Result<Info> {
        loop {
            // a residual replacement in this iteration, and whether it restarts CG
            let (mut replaced, mut drifted) = (false, false);
            // (none at the last iteration allowed: its test stops the solve)
            if it > 0 && it - last >= every && it < ctx.p.max_iter {
                if let Some(lag) = owed.take() {
                    fused::catch_up(x, p, r, s, lag)?;
                }
                let e = std::mem::replace(&mut pending, Ok(()));
                let (gap, _) = measure(ctx, b, x, r, u, q, natural, e)?;
                pending = refresh(ctx, [r, u, w, q, s, z, p], fuse, natural);
                every = next_interval(every, gap);
                last = it;
                replaced = true;
                drifted = !gap.is_finite() || gap > GAP_HIGH;
                if fuse {
                    partials = fused::rr_wr(r, w);
                }
            }
            let pend = std::mem::replace(&mut pending, Ok(()));
            let mut streamed = false;
            let d = if fuse {
                let local = pend.and(std::mem::replace(&mut partials, Ok(Vec::new())));
                let mut red = Some(ctx.comm.iallreduce_checked(local, 4)?);
                let mut got: Option<Result<Vec<f64>>> = None;
                let coef = Cell::new(None::<(T, T)>);
                let layout = x.layout().clone();
                let step = fused::XStep::pass(defer, owed);
                let mut upd = fused::pipe_rows(&mut *x, r, p, s, z, step).ok();
                let may_stream = it > 0 && !replaced && upd.is_some();
                let (op, cx) = (ctx.op, &*ctx);
                // the product n = A w overlaps the reduction; once the reduction is in, and the test
                // of this iteration is known to pass without collective work, the update is made
                // row by row as the product forms them (n never in memory, w's new values into m)
                let e = op.apply_streamed(
                    w,
                    n,
                    &mut |wait| {
                        let Some(pending) = red.as_mut() else {
                            return Ok(Some(false));
                        };
                        if !wait && !pending.test()? {
                            return Ok(None);
                        }
                        let g = red.take().map(|p| p.finish(&cx.comm));
                        let go = match &g {
                            Some(Ok(g)) if may_stream => {
                                let (gamma, delta) = fused_dots::<T>(g);
                                let (beta, denom) =
                                    coefs(it == 0, gamma, delta, gamma_old, alpha_old);
                                let go = cx.continues(it, root(re(gamma)), bnorm)
                                    && !breakdown(gamma, denom);
                                if go {
                                    coef.set(Some((gamma / denom, beta)));
                                }
                                go
                            }
                            _ => false,
                        };
                        got = g;
                        Ok(Some(go))
                    },
                    &mut |start, nv, ws| {
                        if let (Some(u), Some((a, b))) = (upd.as_mut(), coef.get()) {
                            u.rows(start, nv, ws, a, b);
                        }
                    },
                );
                if let (Some(u), Some((a, b))) = (upd, coef.get()) {
                    streamed = true;
                    owed = step.owed(a, b);
                    partials = Ok(fused::pipe_shares(&u, &layout));
                }
                pending = e;
                let g = match (got, red) {
                    (Some(g), _) => g?,
                    (None, Some(red)) => red.finish(&ctx.comm)?,
                    (None, None) => crate::bail!(Internal, "pipelined CG's reduction was lost"),
                };
                let (rr, wr) = fused_dots::<T>(&g);
                vec![rr, wr, rr]
            } else {
                let red = dots_start(&ctx.comm, &[(r, u), (w, u), (r, r)], pend)?;
                // overlapped with the reduction
                let e = ctx.precond(w, m).and(ctx.op.apply(m, n));
                let d = dots_finish::<T>(&ctx.comm, red)?;
                pending = e;
                d
            };
            let gamma = d[0];
            let rnorm = root(re(d[if natural { 0 } else { 2 }]));
            if it == 0 {
                r0 = rnorm;
            }
            if natural && (re(gamma) < 0.0 || super::pc_loses(re(gamma), re(d[2]))) {
                ctx.comm.agree(pending)?;
                return Ok(info(it, Reason::DivergedIndefinite, r0, rnorm, bnorm));
            }
            let mut d = d;
            // CG restarts (p = r) where the recurrences no longer hold between the replaced
            // residual and the old directions: the recurrences had drifted far from the true
            // residual, or the direction they give is not one of descent
            let mut restart = it == 0 || drifted;
            if let Some(reason) = ctx.check(it, rnorm, bnorm, b, x)? {
                if !matches!(reason, Reason::ConvergedRtol | Reason::ConvergedAtol) {
                    // an apply that failed in the overlap must still be reported on every rank
                    ctx.comm.agree(pending)?;
                    return Ok(info(it, reason, r0, rnorm, bnorm));
                }
                // the rule held for the recurrence residual: confirmed on the true one, replaced
                // by it (the iteration goes on from there when the rule does not hold for it)
                if let Some(lag) = owed.take() {
                    fused::catch_up(x, p, r, s, lag)?;
                }
                let e = std::mem::replace(&mut pending, Ok(()));
                let (gap, tnorm) = measure(ctx, b, x, r, u, q, natural, e)?;
                last = it;
                if let Some(end) = ctx.confirmed(it, reason, tnorm, bnorm) {
                    // a confirmed convergence reports the norm its rule tested, an end the true one
                    let shown = if end == reason { rnorm } else { tnorm };
                    return Ok(info(it, end, r0, shown, bnorm));
                }
                // CG restarted from the true residual (the recurrences' relations do not hold
                // between it and the old directions): p = r, s = w, z = n, with w = A M r and this
                // iteration's n = A M w
                let e = if fuse {
                    ctx.op.apply(r, w).and(ctx.op.apply(w, n))
                } else {
                    let e = if natural { Ok(()) } else { ctx.precond(r, u) };
                    e.and(ctx.op.apply(u, w))
                        .and(ctx.precond(w, m))
                        .and(ctx.op.apply(m, n))
                };
                d = if fuse {
                    let g = dots(&ctx.comm, &[(r, r), (w, r)], e)?;
                    vec![g[0], g[1], g[0]]
                } else {
                    dots(&ctx.comm, &[(r, u), (w, u), (r, r)], e)?
                };
                restart = true;
                every = next_interval(every, gap).min(every / 2).max(MIN_EVERY);
            }
            let (gamma, delta) = (d[0], d[1]);
            let (mut beta, mut denom) = coefs(restart, gamma, delta, gamma_old, alpha_old);
            if replaced && !restart && breakdown(gamma, denom) {
                (beta, denom) = coefs(true, gamma, delta, gamma_old, alpha_old);
            }
            if breakdown(gamma, denom) {
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
            if streamed {
                // made row by row during the product
            } else if fuse {
                let step = fused::XStep::pass(defer, owed);
                let set = fused::PipeVectors {
                    x: &mut *x,
                    r: &mut *r,
                    w: &mut *w,
                    p: &mut *p,
                    s: &mut *s,
                    z: &mut *z,
                };
                partials = fused::pipe_update(set, n, alpha, beta, step);
                if partials.is_ok() {
                    owed = step.owed(alpha, beta);
                }
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
    };
    let out = iterate();
    if let Some(lag) = owed {
        fused::catch_up(x, p, r, s, lag)?;
    }
    out
}

/// The first half of a residual replacement: r = b - A x, and u = M r with a preconditioner (q is
/// scratch: formed again by [`refresh`]). One reduction, which also agrees `pending`, gives the gap
/// the recurrences had reached, ||(b - A x) - r|| / ||b - A x||, and the norm of the new r the
/// convergence rule reads (sqrt(r^H u) with `natural`, else ||r||). Without a preconditioner
/// (`fuse`) u is not formed (u = r). [collective]
#[allow(clippy::too_many_arguments)]
fn measure<T: Scalar>(
    ctx: &Ctx<T>,
    b: &DistVector<T>,
    x: &DistVector<T>,
    r: &mut DistVector<T>,
    u: &mut DistVector<T>,
    q: &mut DistVector<T>,
    natural: bool,
    pending: Result<()>,
) -> Result<(f64, f64)> {
    // u = b - A x (u is free: it is r without a preconditioner, and formed again with one)
    // (local failures join the reduction's agreement: every rank ends together)
    let e = pending.and(ctx.op.apply(x, u));
    let e = e.and(u.axpby(T::one(), b, -T::one()));
    let e = e.and(r.axpby(T::one(), u, -T::one()));
    let e = if natural { e.and(ctx.precond(u, q)) } else { e };
    let g = if natural {
        dots(&ctx.comm, &[(&*r, &*r), (&*u, &*u), (&*u, &*q)], e)?
    } else {
        dots(&ctx.comm, &[(&*r, &*r), (&*u, &*u)], e)?
    };
    std::mem::swap(r, u);
    if natural {
        std::mem::swap(u, q);
    }
    let (gap, true_r) = (re(g[0]).sqrt(), re(g[1]).sqrt());
    let rel = if true_r > 0.0 { gap / true_r } else { gap };
    let rule = if natural { root(re(g[2])) } else { true_r };
    Ok((rel, rule))
}

/// The second half of a residual replacement, after [`measure`]: u = M r (unless `natural` formed
/// it), w = A u, s = A p, q = M s, z = A q (without a preconditioner, `fuse`: w = A r, s = A p,
/// z = A s). Returns the outcome of the applies, for the next reduction.
#[allow(clippy::too_many_arguments)]
fn refresh<T: Scalar>(
    ctx: &Ctx<T>,
    [r, u, w, q, s, z, p]: [&mut DistVector<T>; 7],
    fuse: bool,
    natural: bool,
) -> Result<()> {
    if fuse {
        ctx.op
            .apply(r, w)
            .and(ctx.op.apply(p, s))
            .and(ctx.op.apply(s, z))
    } else {
        let e = if natural { Ok(()) } else { ctx.precond(r, u) };
        e.and(ctx.op.apply(u, w))
            .and(ctx.op.apply(p, s))
            .and(ctx.precond(s, q))
            .and(ctx.op.apply(q, z))
    }
}

/// The iterations until the next residual replacement, from the relative gap the last one found:
/// twice as many while the recurrences stay close to the true residual, half as many when they
/// drift, within [MIN_EVERY, MAX_EVERY].
fn next_interval(every: i64, gap: f64) -> i64 {
    let next = if !gap.is_finite() || gap > GAP_HIGH {
        every / 2
    } else if gap < GAP_LOW {
        every * 2
    } else {
        every
    };
    next.clamp(MIN_EVERY, MAX_EVERY)
}

/// beta and the denominator of alpha = gamma / denom; `fresh`: the first iteration, or a restart.
fn coefs<T: Scalar>(fresh: bool, gamma: T, delta: T, gamma_old: T, alpha_old: T) -> (T, T) {
    if fresh {
        (T::zero(), delta)
    } else {
        let beta = gamma / gamma_old;
        (beta, delta - beta * gamma / alpha_old)
    }
}

/// The iteration cannot go on: a non-finite or non-positive denominator, or a negative gamma.
fn breakdown<T: Scalar>(gamma: T, denom: T) -> bool {
    !re(denom).is_finite() || re(denom) <= 0.0 || re(gamma) < 0.0
}

/// (gamma, delta) = (r^H r, w^H r) from the fused path's reduced sums.
fn fused_dots<T: Scalar>(g: &[f64]) -> (T, T) {
    (
        T::from_parts_lossy(g[0], 0.0),
        T::from_parts_lossy(g[2], g[3]),
    )
}
