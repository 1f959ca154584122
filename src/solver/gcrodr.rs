//! GCRO-DR(m, k) (Parks, de Sturler, Mackey, Johnson and Maiti, SIAM J. Sci. Comput. 28, 2006):
//! restarted GMRES that keeps k vectors U with A M U = C, C orthonormal, from one cycle to the next
//! and from one solve to the next (a sequence of systems, Krylov subspace recycling). Each cycle
//! runs m - k Arnoldi steps on (I - C C^H) A M (classical Gram-Schmidt, a second pass where the
//! first removed most of the vector: C's orthonormality rests on it), minimises the residual over
//! range(U) + the Krylov space, and takes the new U from the k harmonic Ritz vectors of smallest
//! harmonic Ritz values of that space (the eigenvectors that hold GMRES back). The first cycle of a solve without a kept
//! space is GMRES(m).
//!
//! Right preconditioning (x = x0 + M t, U lives in t): the tested norm is ||b - A x||. A solve
//! starts from the true residual, recomputes C = A M U (k operator and preconditioner
//! applications: the operator or the preconditioner may have changed since the space was kept),
//! orthonormalises C (U alongside, dependent vectors dropped) and projects the residual on C. Every
//! cycle ends on the true residual, as GMRES's do; a convergence seen on the estimate is confirmed
//! there. The space kept is the last cycle's, in the solve's memory; a solve whose layout or memory
//! differs is refused on every rank (`parlops_solver_set_recycle` drops the space).
//!
//! Work vectors: m + 1 (the Arnoldi basis) + 3 k (C and the next U and C) + 2, with the k vectors of
//! U kept between solves. The small dense problems (`harmonic`) are solved in complex double
//! precision on every rank from reduced values, so every rank takes the same decisions.

use super::harmonic::{self, C, cx, tx};
use super::{Ctx, Info, Reason, info, initial_residual, re, root};
use crate::comm::ReduceOp;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, dots, fused, multi, sum_partials};

/// The number of vectors a recycling solve keeps: k, or (none set) m / 3 for GCRO-DR(m, k) and 8
/// for deflated CG.
pub(crate) fn recycle_len(p: &super::Params, method: super::Method) -> usize {
    match (p.recycle, method) {
        (Some(k), _) => k,
        (None, super::Method::Gcrodr) => p.restart / 3,
        (None, _) => 8,
    }
}

pub(crate) fn solve<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
) -> Result<Info> {
    let m = ctx.p.restart.max(1);
    let k = recycle_len(ctx.p, super::Method::Gcrodr);
    if k >= m {
        crate::bail!(
            InvalidArgument,
            "GCRO-DR keeps k = {k} vectors in cycles of m = {m}: it needs k < m (parlops_solver_set_recycle, parlops_solver_set_restart)"
        );
    }
    let layout = x.layout().clone();
    with_kept(ctx, &layout, k, m + 1 + 3 * k + 2, |ctx, vs, u, kc| {
        run(ctx, b, x, vs, u, kc, m, k)
    })
}

/// Run `f` with the space this solver kept (`k` slots, the first `kc` valid) and `n` work vectors of
/// `layout` (x's);
/// `f` returns how many of the slots to keep for the next solve (none after a failure). A kept
/// space whose layout or memory is not x's fails on every rank (the space stays). [collective]
pub(super) fn with_kept<T: Scalar>(
    ctx: &mut Ctx<T>,
    layout: &std::sync::Arc<crate::vector::Layout>,
    k: usize,
    n: usize,
    f: impl FnOnce(
        &mut Ctx<T>,
        &mut [DistVector<T>],
        &mut [DistVector<T>],
        usize,
    ) -> Result<(Info, usize)>,
) -> Result<Info> {
    let mut u = std::mem::take(&mut ctx.ws.recycle);
    let (loc, stream) = (ctx.ws.loc, ctx.ws.stream);
    let misfit = u.iter().find(|v| {
        !v.layout().compatible(layout) || v.location() != loc || v.caller_stream() != stream
    });
    let fits = match misfit {
        None => Ok(()),
        Some(v) => Err(crate::err!(
            InvalidArgument,
            "the recycle space this solver kept ({} vectors of {} rows split as {:?}, in {:?}) does not fit this solve's x ({} rows split as {:?}, in {:?}); parlops_solver_set_recycle drops it",
            u.len(),
            v.layout().global_len(),
            v.layout().local_lens(),
            v.location(),
            layout.global_len(),
            layout.local_lens(),
            loc
        )),
    };
    if let Err(e) = ctx.comm.agree(fits) {
        ctx.ws.recycle = u;
        return Err(e);
    }
    if u.len() > k {
        ctx.ws.put(u.split_off(k));
    }
    let kc = u.len();
    let more = match ctx.ws.take(k - kc, layout) {
        Ok(v) => v,
        Err(e) => {
            ctx.ws.recycle = u;
            return Err(e);
        }
    };
    u.extend(more);
    let mut vs = match ctx.ws.take(n, layout) {
        Ok(v) => v,
        Err(e) => {
            u.truncate(kc);
            ctx.ws.recycle = u;
            return Err(e);
        }
    };
    let out = f(ctx, &mut vs, &mut u, kc);
    ctx.ws.put(vs);
    let kept = match &out {
        Ok((_, kc)) => *kc,
        Err(_) => 0,
    };
    ctx.ws.put(u.split_off(kept));
    ctx.ws.recycle = u;
    out.map(|(i, _)| i)
}

/// out = A M v (A v without a preconditioner; `z` is scratch). The local error, for the next reduction.
fn apply_am<T: Scalar>(
    ctx: &Ctx<T>,
    v: &DistVector<T>,
    z: &mut DistVector<T>,
    out: &mut DistVector<T>,
) -> Result<()> {
    if ctx.pc.is_none() {
        return ctx.op.apply(v, out);
    }
    let e = ctx.precond(v, z);
    e.and(ctx.op.apply(z, out))
}

/// x += M (sum_i cu_i U_i + sum_j cv_j V_j) (`t` and `mt` are scratch). The local error.
#[allow(clippy::too_many_arguments)]
fn add_update<T: Scalar>(
    ctx: &Ctx<T>,
    x: &mut DistVector<T>,
    cu: &[T],
    us: &[DistVector<T>],
    cv: &[T],
    vs: &[DistVector<T>],
    t: &mut DistVector<T>,
    mt: &mut DistVector<T>,
) -> Result<()> {
    let coef: Vec<T> = cu.iter().chain(cv).copied().collect();
    let basis: Vec<&DistVector<T>> = us[..cu.len()].iter().chain(&vs[..cv.len()]).collect();
    if coef.is_empty() {
        return Ok(());
    }
    if ctx.pc.is_none() {
        return fused::maxpy(x, &coef, &basis);
    }
    t.fill(T::zero())?;
    fused::maxpy(t, &coef, &basis)?;
    let e = ctx.precond(t, mt);
    x.axpy(T::one(), mt)?;
    e
}

/// Orthonormalise C[..kc] (Gram-Schmidt twice), applying the same triangular transformation to U
/// (so that A M U = C still holds); a vector that depends on the earlier ones is dropped with its
/// U. Returns the number kept. `pending` is carried into the first reduction. [collective]
fn orthonormalise<T: Scalar>(
    ctx: &Ctx<T>,
    cs: &mut [DistVector<T>],
    u: &mut [DistVector<T>],
    kc: usize,
    pending: Result<()>,
) -> Result<usize> {
    let mut pending = pending;
    let mut kept = 0;
    for j in 0..kc {
        cs.swap(kept, j);
        u.swap(kept, j);
        let mut n0 = None;
        let mut nrm = 0.0;
        for _pass in 0..2 {
            // the projections on the kept vectors, and ||c||^2 on the first pass
            let upto = if n0.is_none() { kept + 1 } else { kept };
            let local = std::mem::replace(&mut pending, Ok(()))
                .and_then(|_| fused::mdot(&cs[..upto], &cs[kept]));
            let d = sum_partials::<T>(&ctx.comm, local, upto, &cs[kept])?;
            if n0.is_none() {
                n0 = Some(root(re(d[kept])));
            }
            let proj = &d[..kept];
            let (done, rest) = cs.split_at_mut(kept);
            let local = fused::maxpy_norm(&mut rest[0], proj, done).map(|v| vec![v]);
            let neg: Vec<T> = proj.iter().map(|v| -*v).collect();
            let (ud, ur) = u.split_at_mut(kept);
            let local = local.and_then(|v| fused::maxpy(&mut ur[0], &neg, ud).map(|_| v));
            nrm = root(ctx.comm.allreduce_checked(local, 1, ReduceOp::Sum)?[0]);
        }
        let n0 = n0.unwrap_or(0.0);
        if !(nrm > 1e-12 * n0 && nrm.is_finite()) {
            continue;
        }
        cs[kept].scale(T::real(1.0 / nrm))?;
        u[kept].scale(T::real(1.0 / nrm))?;
        kept += 1;
    }
    Ok(kept)
}

/// y with R y = g for the leading `n` x `n` upper triangle of `r` (column-major, leading dimension `ld`).
fn triangular(r: &[C], g: &[C], n: usize, ld: usize) -> Vec<C> {
    let mut y = g[..n].to_vec();
    for i in (0..n).rev() {
        y[i] /= r[i + i * ld];
        for j in 0..i {
            let f = r[j + i * ld] * y[i];
            y[j] -= f;
        }
    }
    y
}

/// The vectors of a cycle: the Arnoldi basis, C, the next U and C, and two scratch vectors.
struct Cycle<'v, T: Scalar> {
    v: &'v mut [DistVector<T>],
    c: &'v mut [DistVector<T>],
    cn: &'v mut [DistVector<T>],
    un: &'v mut [DistVector<T>],
    z: &'v mut DistVector<T>,
    w: &'v mut DistVector<T>,
}

#[allow(clippy::too_many_arguments)]
fn run<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    vs: &mut [DistVector<T>],
    u: &mut [DistVector<T>],
    mut kc: usize,
    m: usize,
    k: usize,
) -> Result<(Info, usize)> {
    let (v, rest) = vs.split_at_mut(m + 1);
    let (c, rest) = rest.split_at_mut(k);
    let (cn, rest) = rest.split_at_mut(k);
    let (un, rest) = rest.split_at_mut(k);
    let (z, w) = rest.split_at_mut(1);
    let mut cy = Cycle {
        v,
        c,
        cn,
        un,
        z: &mut z[0],
        w: &mut w[0],
    };
    let e = initial_residual(ctx, b, x, cy.w);
    let d = dots(&ctx.comm, &[(b, b), (&*cy.w, &*cy.w)], e)?;
    let bnorm = root(re(d[0]));
    let r0 = root(re(d[1]));
    if let Some(reason) = ctx.check(0, r0, bnorm, b, x)? {
        return Ok((info(0, reason, r0, r0, bnorm), kc));
    }
    let pending = Ok(());
    if kc > 0 {
        // C = A M U for today's A and M, orthonormalised
        let mut e = Ok(());
        for (ui, ci) in u.iter().zip(cy.c.iter_mut()).take(kc) {
            e = e.and(apply_am(ctx, ui, cy.z, ci));
        }
        kc = orthonormalise(ctx, cy.c, u, kc, e)?;
    }
    // r -= C (C^H r), x += M U (C^H r), with ||U_i|| (the scaling of G's first block) in the same
    // reduction. Later cycles need no projection: the residual a cycle leaves is orthogonal to
    // W G, which holds the next C.
    let mut dscale = vec![1.0; kc];
    let mut beta = if kc > 0 {
        let mut pairs: Vec<(&DistVector<T>, &DistVector<T>)> =
            cy.c[..kc].iter().map(|ci| (ci, &*cy.w)).collect();
        pairs.extend(u[..kc].iter().map(|ui| (ui, ui)));
        let d = dots(&ctx.comm, &pairs, pending)?;
        let yp = d[..kc].to_vec();
        for (s, v) in dscale.iter_mut().zip(&d[kc..]) {
            *s = 1.0 / root(re(*v));
        }
        let local = fused::maxpy_norm(cy.w, &yp, &cy.c[..kc]).map(|v| vec![v]);
        let (t, rest) = cy.v.split_at_mut(1);
        let e = add_update(ctx, x, &yp, u, &[], rest, &mut t[0], cy.z);
        root(ctx.comm.allreduce_checked(e.and(local), 1, ReduceOp::Sum)?[0])
    } else {
        pending?;
        r0
    };
    if !beta.is_finite() || dscale.iter().any(|s| !s.is_finite()) {
        return Ok((info(0, Reason::DivergedNan, r0, beta, bnorm), 0));
    }
    if kc > 0 && ctx.holds(beta, bnorm) {
        // the kept space holds the solution: confirmed on the true residual
        let e = ctx.op.apply(x, cy.w);
        cy.w.axpby(T::one(), b, -T::one())?;
        beta = root(re(dots(&ctx.comm, &[(&*cy.w, &*cy.w)], e)?[0]));
        if ctx.holds(beta, bnorm) {
            let reason = if ctx.p.rtol * ctx.reference(bnorm) >= ctx.p.atol {
                Reason::ConvergedRtol
            } else {
                Reason::ConvergedAtol
            };
            return Ok((info(0, reason, r0, beta, bnorm), kc));
        }
        if !beta.is_finite() {
            return Ok((info(0, Reason::DivergedNan, r0, beta, bnorm), 0));
        }
    }
    let mut total = 0i64;
    loop {
        let out = cycle(
            ctx,
            b,
            x,
            &mut cy,
            u,
            kc,
            &dscale,
            (beta, bnorm),
            m,
            &mut total,
        )?;
        let (stop, resid, mm, hn, g) = match out {
            CycleEnd::Stopped(i) => {
                // the space of the cycle's start still holds A M U = C, unless the data is not finite
                let keep = if i.1 == Reason::DivergedNan { 0 } else { kc };
                return Ok((i.with(r0, bnorm), keep));
            }
            CycleEnd::Done {
                stop,
                resid,
                mm,
                hn,
                g,
            } => (stop, resid, mm, hn, g),
        };
        // the true residual: to restart from, or to confirm a convergence seen on the estimate
        let e = ctx.op.apply(x, cy.w);
        cy.w.axpby(T::one(), b, -T::one())?;
        beta = root(re(dots(&ctx.comm, &[(&*cy.w, &*cy.w)], e)?[0]));
        if !beta.is_finite() {
            return Ok((info(total, Reason::DivergedNan, r0, beta, bnorm), 0));
        }
        let end = match stop {
            Some(reason) if ctx.holds(beta, bnorm) => Some(info(total, reason, r0, resid, bnorm)),
            None if ctx.holds(beta, bnorm) => {
                let reason = if ctx.p.rtol * ctx.reference(bnorm) >= ctx.p.atol {
                    Reason::ConvergedRtol
                } else {
                    Reason::ConvergedAtol
                };
                Some(info(total, reason, r0, beta, bnorm))
            }
            _ if stop.is_some() && total >= ctx.p.max_iter => {
                Some(info(total, Reason::DivergedMaxIter, r0, beta, bnorm))
            }
            _ => None,
        };
        // the next space from this cycle, at every cycle (Parks et al.'s choice: cheaper updates
        // only at the end of a solve took 21% more operator applications on the sequence of
        // make bench-recycle), and for the next solve
        if k > 0 {
            kc = recycle(&mut cy, u, kc, &dscale, &g, mm, hn, m, k)?;
            if end.is_none() {
                let pairs: Vec<(&DistVector<T>, &DistVector<T>)> =
                    u[..kc].iter().map(|ui| (ui, ui)).collect();
                let d = dots(&ctx.comm, &pairs, Ok(()))?;
                dscale = d.iter().map(|v| 1.0 / root(re(*v))).collect();
                if dscale.iter().any(|s| !s.is_finite()) {
                    return Ok((info(total, Reason::DivergedNan, r0, beta, bnorm), 0));
                }
            }
        }
        if let Some(i) = end {
            return Ok((i, kc));
        }
    }
}

/// How a cycle ended.
enum CycleEnd {
    /// A divergence (the iteration count, reason and last norm; the caller adds r0 and ||b||).
    Stopped(Partial),
    /// The cycle ran `mm` columns (kc + its Arnoldi steps): the unrotated G (leading dimension
    /// m + 1), the last subdiagonal `hn`, and a convergence seen on the estimate `resid`.
    Done {
        stop: Option<Reason>,
        resid: f64,
        mm: usize,
        hn: f64,
        g: Vec<C>,
    },
}

struct Partial(i64, Reason, f64);

impl Partial {
    fn with(self, r0: f64, bnorm: f64) -> Info {
        info(self.0, self.1, r0, self.2, bnorm)
    }
}

/// One cycle from the residual in `cy.w` (orthogonal to C, norm `beta`): m - kc Arnoldi steps,
/// then x += M V^ y for the least-squares y.
#[allow(clippy::too_many_arguments)]
fn cycle<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    cy: &mut Cycle<'_, T>,
    u: &[DistVector<T>],
    kc: usize,
    dscale: &[f64],
    (beta, bnorm): (f64, f64),
    m: usize,
    total: &mut i64,
) -> Result<CycleEnd> {
    let ld = m + 1;
    cy.v[0].copy_from(cy.w)?;
    cy.v[0].scale(T::real(1.0 / beta))?;
    let mut g = harmonic::zeros(ld, m, "GCRO-DR's G")?;
    for (i, s) in dscale.iter().enumerate() {
        g[i + i * ld] = C::new(*s, 0.0);
    }
    let mut h = g.clone();
    let mut rhs = vec![C::new(0.0, 0.0); ld];
    rhs[kc] = C::new(beta, 0.0);
    let mut rot = vec![(1.0, C::new(0.0, 0.0)); m];
    let mut j = 0;
    let mut stop = None;
    let mut resid = beta;
    let mut hn = 0.0;
    let mut pending = Ok(());
    while j < m - kc {
        let col = kc + j;
        let e = apply_am(ctx, &cy.v[j], cy.z, cy.w);
        let e = std::mem::replace(&mut pending, Ok(())).and(e);
        {
            // classical Gram-Schmidt against [C, V], ||w||^2 in the same reduction; a second pass
            // where the first removed most of w (hn < ||w|| / sqrt 2, Daniel, Gragg, Kaufman and
            // Stewart's test): one pass leaves V's orthogonality to C at eps ||w|| / hn, and C' = W Q
            // inherits it, so C's orthonormality (which the cycles' least-squares problem assumes)
            // decayed tenfold a cycle and the residual grew
            let n = kc + j + 1;
            let basis: Vec<&DistVector<T>> = cy.c[..kc].iter().chain(&cy.v[..=j]).collect();
            let local = e.and_then(|_| {
                let mut d = fused::mdot(&basis, cy.w)?;
                d.extend(fused::mdot(&[&*cy.w], cy.w)?);
                Ok(d)
            });
            let mut proj = sum_partials::<T>(&ctx.comm, local, n + 1, cy.w)?;
            let before = root(re(proj[n]));
            proj.truncate(n);
            let local = fused::maxpy_norm(cy.w, &proj, &basis).map(|v| vec![v]);
            hn = root(ctx.comm.allreduce_checked(local, 1, ReduceOp::Sum)?[0]);
            if hn > 0.0 && hn < before * std::f64::consts::FRAC_1_SQRT_2 {
                let local = fused::mdot(&basis, cy.w);
                let again = sum_partials::<T>(&ctx.comm, local, n, cy.w)?;
                let local = fused::maxpy_norm(cy.w, &again, &basis).map(|v| vec![v]);
                hn = root(ctx.comm.allreduce_checked(local, 1, ReduceOp::Sum)?[0]);
                for (p, a) in proj.iter_mut().zip(&again) {
                    *p += *a;
                }
            }
            for (i, p) in proj.iter().enumerate() {
                g[i + col * ld] = cx(*p);
            }
        }
        g[col + 1 + col * ld] = C::new(hn, 0.0);
        h[col * ld..(col + 1) * ld].copy_from_slice(&g[col * ld..(col + 1) * ld]);
        for (i, &(c, s)) in rot.iter().enumerate().take(col).skip(kc) {
            let (a, bb) = (h[i + col * ld], h[i + 1 + col * ld]);
            h[i + col * ld] = a * c + s * bb;
            h[i + 1 + col * ld] = -s.conj() * a + bb * c;
        }
        let (c, s, r) = harmonic::rotation(h[col + col * ld], h[col + 1 + col * ld]);
        rot[col] = (c, s);
        h[col + col * ld] = r;
        h[col + 1 + col * ld] = C::new(0.0, 0.0);
        let gk = rhs[col];
        rhs[col] = gk * c;
        rhs[col + 1] = -s.conj() * gk;
        resid = rhs[col + 1].norm();
        *total += 1;
        j += 1;
        if hn > 0.0 && hn.is_finite() {
            std::mem::swap(&mut cy.v[j], cy.w);
            cy.v[j].scale(T::real(1.0 / hn))?;
        }
        if r == C::new(0.0, 0.0) || !resid.is_finite() {
            let reason = if resid.is_finite() {
                Reason::DivergedBreakdown
            } else {
                Reason::DivergedNan
            };
            return Ok(CycleEnd::Stopped(Partial(*total, reason, resid)));
        }
        let reason = if ctx.watching() {
            // the iterate of the cycle, for the monitor that sees it (w and z are free here)
            let y = triangular(&h, &rhs, kc + j, ld);
            let (yu, yv) = coefficients::<T>(&y, dscale, kc);
            let mut xt = ctx.ws.take(1, x.layout())?;
            let e = xt[0].copy_from(x);
            let e = e.and(add_update(ctx, &mut xt[0], &yu, u, &yv, cy.v, cy.z, cy.w));
            let e = ctx.comm.agree(e);
            let out = e.and_then(|_| ctx.check(*total, resid, bnorm, b, &xt[0]));
            ctx.ws.put(xt);
            out?
        } else {
            ctx.check(*total, resid, bnorm, b, x)?
        };
        if let Some(reason) = reason {
            stop = Some(reason);
            break;
        }
        if hn == 0.0 {
            // lucky breakdown: the space holds the solution (confirmed on the true residual)
            stop = Some(Reason::ConvergedAtol);
            break;
        }
    }
    let mm = kc + j;
    let y = triangular(&h, &rhs, mm, ld);
    let (yu, yv) = coefficients::<T>(&y, dscale, kc);
    let e = add_update(ctx, x, &yu, u, &yv, cy.v, cy.z, cy.w);
    if let Some(reason) = stop
        && !reason.converged()
    {
        ctx.comm.agree(e)?;
        return Ok(CycleEnd::Stopped(Partial(*total, reason, resid)));
    }
    ctx.comm.agree(e)?;
    Ok(CycleEnd::Done {
        stop,
        resid,
        mm,
        hn,
        g,
    })
}

/// The coefficients of V^ = [U D, V] as those of U and of V: (y_i d_i for i < kc, y_kc..).
fn coefficients<T: Scalar>(y: &[C], dscale: &[f64], kc: usize) -> (Vec<T>, Vec<T>) {
    let yu = y[..kc]
        .iter()
        .zip(dscale)
        .map(|(v, d)| tx::<T>(*v * *d))
        .collect();
    let yv = y[kc..].iter().map(|v| tx::<T>(*v)).collect();
    (yu, yv)
}

/// The next recycled space from a cycle of `mm` columns (G unrotated, leading dimension m + 1):
/// the harmonic Ritz vectors P of the k smallest harmonic Ritz values, G P = Q R, then C' = W Q and
/// U' = V^ P R^-1 (so that A M U' = C' with C' orthonormal), written over C and U. Returns the
/// number of vectors kept (the old count when the problem has no answer). [collective]
#[allow(clippy::too_many_arguments)]
fn recycle<T: Scalar>(
    cy: &mut Cycle<'_, T>,
    u: &mut [DistVector<T>],
    kc: usize,
    dscale: &[f64],
    g: &[C],
    mm: usize,
    hn: f64,
    m: usize,
    k: usize,
) -> Result<usize> {
    let (ld, rows, j) = (m + 1, mm + 1, mm - kc);
    // W = [C, V_0 .. V_j]; its last vector only after a nonzero subdiagonal (G's last row is zero
    // otherwise)
    let wn = if hn > 0.0 && hn.is_finite() {
        rows
    } else {
        rows - 1
    };
    let mut gs = harmonic::zeros(rows, mm, "GCRO-DR's G")?;
    for col in 0..mm {
        gs[col * rows..(col + 1) * rows].copy_from_slice(&g[col * ld..col * ld + rows]);
    }
    // F = W^H V^, V^ = [U D, V_0 .. V_j-1]
    let mut f = harmonic::zeros(rows, mm, "GCRO-DR's W^H V")?;
    for t in 0..j {
        f[kc + t + (kc + t) * rows] = C::new(1.0, 0.0);
    }
    if kc > 0 {
        let ws: Vec<&DistVector<T>> = cy.c[..kc].iter().chain(&cy.v[..wn - kc]).collect();
        let us: Vec<&DistVector<T>> = u[..kc].iter().collect();
        let d = multi::block_dot(&ws, &us, Ok(()))?;
        for i in 0..wn {
            for l in 0..kc {
                f[i + l * rows] = cx(d[i * kc + l]) * dscale[l];
            }
        }
    }
    let Some((p, kn)) = harmonic::harmonic_ritz(&gs, &f, mm, k, T::PARTS == 1) else {
        return Ok(kc);
    };
    if kn == 0 {
        return Ok(kc);
    }
    let mut gp = harmonic::zeros(rows, kn, "GCRO-DR's G P")?;
    for l in 0..kn {
        for col in 0..mm {
            let pv = p[col + l * mm];
            for i in 0..rows {
                gp[i + l * rows] += gs[i + col * rows] * pv;
            }
        }
    }
    let (q, r, kept) = harmonic::qr(&gp, rows, kn);
    let kq = kept.len();
    if kq == 0 {
        return Ok(kc);
    }
    let pk: Vec<C> = kept
        .iter()
        .flat_map(|&l| p[l * mm..(l + 1) * mm].iter().copied())
        .collect();
    let s = harmonic::right_solve(&pk, &r, mm, kq);
    {
        // C' = W Q and U' = V^ S, each input read once (row-major coefficients, one row per output)
        let ws: Vec<&DistVector<T>> = cy.c[..kc].iter().chain(&cy.v[..wn - kc]).collect();
        let vh: Vec<&DistVector<T>> = u[..kc].iter().chain(&cy.v[..j]).collect();
        let qc: Vec<T> = (0..kq)
            .flat_map(|l| (0..wn).map(move |i| (i, l)))
            .map(|(i, l)| tx(q[i + l * rows]))
            .collect();
        let sc: Vec<T> = (0..kq)
            .flat_map(|l| (0..mm).map(move |i| (i, l)))
            .map(|(i, l)| {
                let v = s[i + l * mm];
                tx(if i < kc { v * dscale[i] } else { v })
            })
            .collect();
        let mut outs: Vec<&mut DistVector<T>> = cy.cn[..kq].iter_mut().collect();
        fused::combine(&mut outs, &qc, &ws)?;
        let mut outs: Vec<&mut DistVector<T>> = cy.un[..kq].iter_mut().collect();
        fused::combine(&mut outs, &sc, &vh)?;
    }
    for ((c, cn), (ul, un)) in
        cy.c.iter_mut()
            .zip(cy.cn.iter_mut())
            .zip(u.iter_mut().zip(cy.un.iter_mut()))
            .take(kq)
    {
        std::mem::swap(c, cn);
        std::mem::swap(ul, un);
    }
    Ok(kq)
}
