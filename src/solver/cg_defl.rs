//! Deflated CG for sequences of Hermitian positive definite systems (def-CG(k, l) of Saad, Yeung,
//! Erhel and Guyomarc'h, SIAM J. Sci. Comput. 21, 2000): CG run in the A-orthogonal complement of k
//! kept vectors W, whose part of the solution is taken directly (x += W (W^H A W)^-1 W^H r). Each
//! solve keeps its first l = 2 k directions p_j and their products A p_j (l = k took 13% fewer
//! operator applications than CG on the sequence of tests/mpi_solvers/recycle.rs, l = 2 k 20%); at
//! its end the new W are the Ritz vectors of the k smallest Ritz values of A on [W, p_0 .. p_l-1]
//! (a Rayleigh-Ritz step from the products already made: no operator application). The next solve applies its own A to W
//! (k applications, not iterations), so the operator and the preconditioner may change between
//! solves. With a preconditioner M (Hermitian positive definite) the directions are
//! p = M r + beta p - W mu, W^H r = 0 throughout.
//!
//! Per iteration: one product, one preconditioner application, two reductions (p^H A p; r^H z,
//! r^H r and (A W)^H z together), and k more vectors read by the direction's update and its
//! projections. Stops on ||r||; a convergence seen on the recurrence residual is confirmed on the
//! true one, and where it does not hold CG restarts from it (projected again).

use super::harmonic::{self, C, cx, tx};
use super::{Ctx, Info, Reason, info, initial_residual, re, root};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, dots, fused, multi, sum_partials};

pub(crate) fn solve<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
) -> Result<Info> {
    let k = super::gcrodr::recycle_len(ctx.p, super::Method::CgDeflated);
    let l = 2 * k;
    let layout = x.layout().clone();
    super::gcrodr::with_kept(ctx, &layout, k, 4 + 2 * k + 2 * l, |ctx, vs, w, kc| {
        run(ctx, b, x, vs, w, kc, k, l)
    })
}

/// The deflation's data for today's operator: A W, and the Cholesky factor of W^H A W.
struct Deflation<'v, T: Scalar> {
    w: &'v [DistVector<T>],
    aw: &'v [DistVector<T>],
    chol: Vec<C>,
}

impl<T: Scalar> Deflation<'_, T> {
    fn k(&self) -> usize {
        self.w.len()
    }
    /// (W^H A W)^-1 g.
    fn solve(&self, g: &[T]) -> Vec<T> {
        let gc: Vec<C> = g.iter().map(|v| cx(*v)).collect();
        harmonic::cholesky_solve(&self.chol, self.k(), &gc)
            .into_iter()
            .map(tx)
            .collect()
    }
    /// x += W mu, r -= A W mu for mu = (W^H A W)^-1 W^H r: r orthogonal to W. [collective]
    fn project(
        &self,
        ctx: &Ctx<T>,
        x: &mut DistVector<T>,
        r: &mut DistVector<T>,
        pending: Result<()>,
    ) -> Result<()> {
        if self.k() == 0 {
            return ctx.comm.agree(pending);
        }
        let local = pending.and_then(|_| fused::mdot(self.w, r));
        let g = sum_partials::<T>(&ctx.comm, local, self.k(), r)?;
        let mu = self.solve(&g);
        let neg: Vec<T> = mu.iter().map(|v| -*v).collect();
        fused::maxpy(x, &mu, self.w)?;
        fused::maxpy(r, &neg, self.aw)
    }
}

/// r^H z, r^H r and (A W)^H z in one reduction (z is r without a preconditioner). [collective]
fn sums<T: Scalar>(
    ctx: &Ctx<T>,
    r: &DistVector<T>,
    z: &DistVector<T>,
    d: &Deflation<'_, T>,
    pending: Result<()>,
) -> Result<(T, f64, Vec<T>)> {
    let local = pending.and_then(|_| {
        let mut v = fused::mdot(&[r], z)?;
        v.extend(fused::mdot(&[r], r)?);
        v.extend(fused::mdot(d.aw, z)?);
        Ok(v)
    });
    let s = sum_partials::<T>(&ctx.comm, local, 2 + d.k(), r)?;
    Ok((s[0], re(s[1]), s[2..].to_vec()))
}

#[allow(clippy::too_many_arguments)]
fn run<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    vs: &mut [DistVector<T>],
    w: &mut [DistVector<T>],
    mut kc: usize,
    k: usize,
    l: usize,
) -> Result<(Info, usize)> {
    let (head, rest) = vs.split_at_mut(4);
    let [r, z, p, q] = head else {
        crate::bail!(Internal, "deflated CG's work vectors");
    };
    let (aw, rest) = rest.split_at_mut(k);
    let (ps, rest) = rest.split_at_mut(l);
    let (qs, wn) = rest.split_at_mut(l);
    let e = initial_residual(ctx, b, x, r);
    let d = dots(&ctx.comm, &[(b, b), (&*r, &*r)], e)?;
    let bnorm = root(re(d[0]));
    let r0 = root(re(d[1]));
    if let Some(reason) = ctx.check(0, r0, bnorm, b, x)? {
        return Ok((info(0, reason, r0, r0, bnorm), kc));
    }
    // A W and W^H A W for today's A (a W that is no longer positive definite is not deflated)
    let mut chol = Vec::new();
    if kc > 0 {
        let mut e = Ok(());
        for (wi, awi) in w.iter().zip(aw.iter_mut()).take(kc) {
            e = e.and(ctx.op.apply(wi, awi));
        }
        let wr: Vec<&DistVector<T>> = w[..kc].iter().collect();
        let ar: Vec<&DistVector<T>> = aw[..kc].iter().collect();
        let em = multi::block_dot(&wr, &ar, e)?;
        let mut ec = harmonic::zeros(kc, kc, "W^H A W")?;
        for i in 0..kc {
            for j in 0..kc {
                ec[i + j * kc] = (cx(em[i * kc + j]) + cx(em[j * kc + i]).conj()) * 0.5;
            }
        }
        match harmonic::cholesky(&ec, kc) {
            Some(c) => chol = c,
            None => kc = 0,
        }
    }
    let (out, stored) = {
        let defl = Deflation {
            w: &w[..kc],
            aw: &aw[..kc],
            chol,
        };
        let mut dirs = Directions {
            ps,
            qs,
            stored: 0,
            l,
        };
        let out = iterate(ctx, b, x, [r, z, p, q], &defl, &mut dirs, (r0, bnorm))?;
        (out, dirs.stored)
    };
    if out.reason == Reason::DivergedNan {
        return Ok((out, 0));
    }
    let kept = update(w, &aw[..kc], &ps[..stored], &qs[..stored], wn, kc, k)?;
    Ok((out, kept))
}

/// The first l directions of a solve and their products.
struct Directions<'v, T: Scalar> {
    ps: &'v mut [DistVector<T>],
    qs: &'v mut [DistVector<T>],
    stored: usize,
    l: usize,
}

/// The CG iteration from x with the deflation `d`: its info.
fn iterate<T: Scalar>(
    ctx: &mut Ctx<T>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    [r, z, p, q]: [&mut DistVector<T>; 4],
    d: &Deflation<'_, T>,
    dirs: &mut Directions<'_, T>,
    (r0, bnorm): (f64, f64),
) -> Result<Info> {
    let plain = ctx.pc.is_none();
    let mut it = 0i64;
    let mut rnorm = r0;
    // W^H r = 0, then the first direction p = z - W mu
    d.project(ctx, x, r, Ok(()))?;
    let mut restart = true;
    let mut rz = T::zero();
    loop {
        if restart {
            let e = if plain { Ok(()) } else { ctx.precond(r, z) };
            let (rz0, rr, awz) = sums(ctx, r, if plain { &*r } else { &*z }, d, e)?;
            rz = rz0;
            // the kept space's part alone may meet the rule (W spans the solution's error, as
            // where k reaches the operator's size): confirmed on the true residual, it ends the
            // solve; CG would go on in a complement of rounding errors and diverge
            if d.k() > 0
                && let Some(reason) = ctx.met(root(rr), bnorm)
                && ctx.holds(true_norm(ctx, b, x, q)?, bnorm)
            {
                return Ok(info(it, reason, r0, root(rr), bnorm));
            }
            p.copy_from(if plain { &*r } else { &*z })?;
            let mu: Vec<T> = d.solve(&awz).iter().map(|v| -*v).collect();
            fused::maxpy(p, &mu, d.w)?;
            restart = false;
        }
        it += 1;
        let e = ctx.op.apply(p, q);
        let pq = dots(&ctx.comm, &[(&*p, &*q)], e)?[0];
        if !re(pq).is_finite() {
            return Ok(info(it, Reason::DivergedNan, r0, rnorm, bnorm));
        }
        if re(pq) <= 0.0 {
            let reason = if re(pq) < 0.0 {
                Reason::DivergedIndefinite
            } else {
                Reason::DivergedBreakdown
            };
            return Ok(info(it - 1, reason, r0, rnorm, bnorm));
        }
        if dirs.stored < dirs.l {
            dirs.ps[dirs.stored].copy_from(p)?;
            dirs.qs[dirs.stored].copy_from(q)?;
            dirs.stored += 1;
        }
        let alpha = rz / pq;
        x.axpy(alpha, p)?;
        r.axpy(-alpha, q)?;
        let e = if plain { Ok(()) } else { ctx.precond(r, z) };
        let (rz1, rr, awz) = sums(ctx, r, if plain { &*r } else { &*z }, d, e)?;
        rnorm = root(rr);
        if let Some(reason) = ctx.check(it, rnorm, bnorm, b, x)? {
            if !matches!(reason, Reason::ConvergedRtol | Reason::ConvergedAtol) {
                return Ok(info(it, reason, r0, rnorm, bnorm));
            }
            // confirmed on the true residual; where the rule does not hold there, CG restarts
            // from it (projected again)
            let tnorm = true_norm(ctx, b, x, q)?;
            if let Some(end) = ctx.confirmed(it, reason, tnorm, bnorm) {
                let shown = if end == reason { rnorm } else { tnorm };
                return Ok(info(it, end, r0, shown, bnorm));
            }
            std::mem::swap(r, q);
            d.project(ctx, x, r, Ok(()))?;
            restart = true;
            continue;
        }
        if re(rz1) < 0.0 {
            // r^H M r < 0: the preconditioner is not positive definite
            return Ok(info(it, Reason::DivergedIndefinite, r0, rnorm, bnorm));
        }
        let beta = rz1 / rz;
        rz = rz1;
        // p = z + beta p - W mu, mu = (W^H A W)^-1 (A W)^H z
        p.axpby(T::one(), if plain { &*r } else { &*z }, beta)?;
        let mu: Vec<T> = d.solve(&awz).iter().map(|v| -*v).collect();
        fused::maxpy(p, &mu, d.w)?;
    }
}

/// ||b - A x||, the true residual left in `q`. [collective]
fn true_norm<T: Scalar>(
    ctx: &Ctx<T>,
    b: &DistVector<T>,
    x: &DistVector<T>,
    q: &mut DistVector<T>,
) -> Result<f64> {
    let e = ctx.op.apply(x, q);
    let e = e.and(q.axpby(T::one(), b, -T::one()));
    Ok(root(re(dots(&ctx.comm, &[(&*q, &*q)], e)?[0])))
}

/// The next W: the Ritz vectors of the k smallest Ritz values of A on Z = [W, P], from
/// G = Z^H (A Z) and F = Z^H Z (A Z = [A W, A P] is at hand). Returns the number kept (the old
/// count when the problem has no answer). [collective]
#[allow(clippy::too_many_arguments)]
fn update<T: Scalar>(
    w: &mut [DistVector<T>],
    aw: &[DistVector<T>],
    ps: &[DistVector<T>],
    qs: &[DistVector<T>],
    wn: &mut [DistVector<T>],
    kc: usize,
    k: usize,
) -> Result<usize> {
    let n = kc + ps.len();
    if k == 0 || n == 0 {
        return Ok(kc);
    }
    let zr: Vec<&DistVector<T>> = w[..kc].iter().chain(ps).collect();
    let ar: Vec<&DistVector<T>> = aw.iter().chain(qs).collect();
    let g = multi::block_dot(&zr, &ar, Ok(()))?;
    let f = multi::block_dot(&zr, &zr, Ok(()))?;
    let colmajor = |m: &[T]| -> Vec<C> {
        let mut c = vec![C::new(0.0, 0.0); n * n];
        for i in 0..n {
            for j in 0..n {
                c[i + j * n] = cx(m[i * n + j]);
            }
        }
        c
    };
    let Some((y, kk)) = harmonic::ritz_smallest(&colmajor(&g), &colmajor(&f), n, k) else {
        return Ok(kc);
    };
    let coef: Vec<T> = (0..kk)
        .flat_map(|c| (0..n).map(move |i| (i, c)))
        .map(|(i, c)| tx(y[i + c * n]))
        .collect();
    {
        let mut outs: Vec<&mut DistVector<T>> = wn[..kk].iter_mut().collect();
        fused::combine(&mut outs, &coef, &zr)?;
    }
    for (a, b) in w.iter_mut().zip(wn.iter_mut()).take(kk) {
        std::mem::swap(a, b);
    }
    Ok(kk)
}
