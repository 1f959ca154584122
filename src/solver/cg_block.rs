//! Block conjugate gradients for several right-hand sides of one Hermitian positive definite
//! operator (O'Leary 1980), breakdown-free: each iteration applies the operator (and the
//! preconditioner) to a block of k directions at once (a CSR matrix reads its entries once for all
//! of them, [`LinearOperator::apply_many`]), and the iterates move in the space the whole block has
//! found, so each column converges in fewer iterations than alone.
//!
//! The directions are kept as a block W of k vectors with P = W T, T from a pivoted Cholesky
//! factorisation of W's Gram matrix scaled to a unit diagonal: a direction (nearly) in the span of
//! the others is left out (rank-deficient blocks: equal or dependent right-hand sides, columns that
//! converged), so P has s <= k orthonormal columns (Ji and Li's breakdown-free block CG, 2017,
//! without forming P); where P^H A P is then not positive definite by rounding, the least
//! independent directions are left out too ([`directions`]). Per iteration: Q = A W; the Gram
//! matrix of W against [W, Q] in one pass (W^H R follows from the small matrices); X += W c and
//! R -= Q c; the Gram matrix of [Q, R] against [Z, R] in one pass (its diagonal the residual
//! norms; without a preconditioner formed in R's update pass, block by block while it is in the
//! cache); W = Z + W d into a second block. Two reductions per iteration, as CG. The small
//! problems (k x k) are solved in complex double precision on every rank from reduced values.
//!
//! Each column is tested on its own rule ||r_j|| <= max(rtol ||b_j||, atol); the solve stops when
//! every column meets its rule on the recurrence residual, then confirms it on the true residuals
//! B - A X (a column that does not meet it there restarts the block from the true residuals).
//! The monitors and the history see the column farthest from its rule.
//!
//! [`LinearOperator::apply_many`]: crate::op::LinearOperator::apply_many

use super::harmonic::{C, cholesky, cholesky_solve, cx, tx};
use super::{Ctx, Info, Reason, info, re, root};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::multi::{gram, update_gram};
use crate::vector::{DistVector, dots, fused, sum_partials};

/// The most right-hand sides one block holds (more are solved block after block).
pub(crate) const MAX_BLOCK: usize = 16;

/// T (k x s, column-major) with (W T)^H (W T) = I for the Gram matrix `g` = W^H W (k x k,
/// column-major): a Cholesky factorisation of D g D (D = diag(g)^-1/2: each column scaled to unit
/// norm) with the largest remaining pivot first, stopping where it falls to `tol` (the rest lie in
/// the span of those taken, to sin^2 of their angle <= tol) or where `max_s` are taken; zero
/// columns are left out.
#[allow(clippy::needless_range_loop)] // the factor's rows and columns: index form reads as the math
pub(crate) fn orthonormalizer(g: &[C], k: usize, tol: f64, max_s: usize) -> (Vec<C>, usize) {
    let d: Vec<f64> = (0..k)
        .map(|i| {
            let v = g[i + i * k].re;
            if v > 0.0 && v.is_finite() {
                1.0 / v.sqrt()
            } else {
                0.0
            }
        })
        .collect();
    let a = |i: usize, j: usize| g[i + j * k] * d[i] * d[j];
    let mut perm: Vec<usize> = (0..k).collect();
    // l[i][t]: row i (in pivot order) of the factor
    let mut l = vec![vec![C::new(0.0, 0.0); k]; k];
    let mut s = 0;
    while s < k.min(max_s) {
        let rem = |i: usize, l: &[Vec<C>]| {
            let p = perm[i];
            a(p, p).re - (0..s).map(|t| l[i][t].norm_sqr()).sum::<f64>()
        };
        let (best, piv) = (s..k)
            .map(|i| (i, rem(i, &l)))
            .fold((s, f64::NEG_INFINITY), |m, c| if c.1 > m.1 { c } else { m });
        if piv.is_nan() || piv <= tol || d[perm[best]] == 0.0 {
            break;
        }
        perm.swap(s, best);
        l.swap(s, best);
        let dd = piv.sqrt();
        l[s][s] = C::new(dd, 0.0);
        for i in s + 1..k {
            let mut v = a(perm[i], perm[s]);
            for t in 0..s {
                v -= l[i][t] * l[s][t].conj();
            }
            l[i][s] = v / dd;
        }
        s += 1;
    }
    // W D Pi_s = Q L_s^H: T = D Pi_s L_s^-H, L_s^-H upper triangular (back substitution per column)
    let mut t = vec![C::new(0.0, 0.0); k * s];
    for c in 0..s {
        // column c of L_s^-H: solve L_s^H y = e_c
        let mut y = vec![C::new(0.0, 0.0); s];
        for i in (0..=c).rev() {
            let mut v = if i == c {
                C::new(1.0, 0.0)
            } else {
                C::new(0.0, 0.0)
            };
            for j in i + 1..=c {
                v -= l[j][i].conj() * y[j];
            }
            y[i] = v / l[i][i].conj();
        }
        for (i, yi) in y.iter().enumerate() {
            t[perm[i] + c * k] = *yi * d[perm[i]];
        }
    }
    (t, s)
}

/// The block's search directions P = W T (s of them) and the Cholesky factor of H = P^H A P (s x
/// s, made Hermitian) from W's Gram matrices `gw` = W^H W and `gq` = W^H A W. Where H is not
/// positive definite with s > 1 directions, the least independent one (the last pivot) is left out
/// and H formed again: nearly dependent directions (sin^2 of their angle a little above `tol`) make
/// T's entries large, and H's rounding (eps ||A|| |T|^2) can then exceed its smallest eigenvalue on
/// a positive definite A. A single direction w with w^H A w <= 0 proves A indefinite (as in CG).
fn directions(
    gw: &[C],
    gq: &[C],
    k: usize,
    tol: f64,
) -> std::result::Result<(Vec<C>, usize, Vec<C>), Reason> {
    let mut max_s = k;
    loop {
        let (t, s) = orthonormalizer(gw, k, tol, max_s);
        if s == 0 {
            return Err(Reason::DivergedBreakdown);
        }
        let mut h = th_mul(&t, k, s, &mul(gq, k, k, &t, s), s);
        for i in 0..s {
            for j in 0..i {
                let m = (h[i + j * s] + h[j + i * s].conj()) * 0.5;
                h[i + j * s] = m;
                h[j + i * s] = m.conj();
            }
            h[i + i * s] = C::new(h[i + i * s].re, 0.0);
        }
        if let Some(lh) = cholesky(&h, s) {
            return Ok((t, s, lh));
        }
        if s == 1 {
            return Err(if h[0].re <= 0.0 {
                Reason::DivergedIndefinite
            } else {
                Reason::DivergedBreakdown
            });
        }
        max_s = s - 1;
    }
}

/// T^H M (s x m) for T (k x s) and M (k x m), column-major.
fn th_mul(t: &[C], k: usize, s: usize, m: &[C], cols: usize) -> Vec<C> {
    let mut out = vec![C::new(0.0, 0.0); s * cols];
    for j in 0..cols {
        for i in 0..s {
            out[i + j * s] = (0..k).map(|a| t[a + i * k].conj() * m[a + j * k]).sum();
        }
    }
    out
}

/// T M (k x m) for T (k x s) and M (s x m), column-major.
fn t_mul(t: &[C], k: usize, s: usize, m: &[C], cols: usize) -> Vec<C> {
    let mut out = vec![C::new(0.0, 0.0); k * cols];
    for j in 0..cols {
        for a in 0..k {
            out[a + j * k] = (0..s).map(|i| t[a + i * k] * m[i + j * s]).sum();
        }
    }
    out
}

/// Work vectors [`solve`] takes for k columns.
pub(crate) fn work_len(k: usize, plain: bool) -> usize {
    k * if plain { 4 } else { 5 }
}

/// Solve A X = B for the columns of `bs` into `xs` (k <= [`MAX_BLOCK`]) with the work vectors `v`
/// ([`work_len`], x's layout). Each column's outcome. [collective]
pub(crate) fn solve<T: Scalar>(
    ctx: &mut Ctx<T>,
    bs: &[&DistVector<T>],
    xs: &mut [&mut DistVector<T>],
    v: &mut [DistVector<T>],
) -> Result<Vec<Info>> {
    let k = bs.len();
    let plain = ctx.pc.is_none();
    let (w, rest) = v.split_at_mut(k);
    let (w2, rest) = rest.split_at_mut(k);
    let (q, rest) = rest.split_at_mut(k);
    let (r, z) = rest.split_at_mut(k);
    // the tolerance of the Gram matrix's pivots (sin^2 of a direction's angle to the others' span):
    // P = W T orthonormalises W through its Gram matrix (a Cholesky QR), which loses eps / tol of
    // orthogonality and makes H = P^H A P that much off. At 1e4 eps (a loss of 1e-4) two right-hand
    // sides b and b + 1e-8 d ran apart as their residuals fell through that band (DTOL at 1e5 x
    // ||b||); 1e8 eps (directions within 1.5e-4 rad of the others' span left out) loses 1e-8, and
    // at most 1e-2 in single precision (1e-5 lost)
    let single = matches!(T::DTYPE, crate::DType::F32 | crate::DType::C64);
    let eps = if single {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    let tol = (1e8 * eps).min(1e-2);
    let params = ctx.p;
    let e = residuals(ctx, bs, xs, q, r);
    let pairs: Vec<_> = bs
        .iter()
        .map(|b| (*b, *b))
        .chain(r.iter().map(|r| (r, r)))
        .collect();
    let d = dots(&ctx.comm, &pairs, e)?;
    let bnorm: Vec<f64> = d[..k].iter().map(|v| root(re(*v))).collect();
    let mut rn: Vec<f64> = d[k..].iter().map(|v| root(re(*v))).collect();
    let r0 = rn.clone();
    let ends = |it: i64, reason: Reason, rn: &[f64]| -> Vec<Info> {
        (0..k)
            .map(|j| info(it, reason, r0[j], rn[j], bnorm[j]))
            .collect()
    };
    let worst = |rn: &[f64]| worst_column(params, rn, &bnorm);
    // a column with NaN or Inf in b (or its initial residual) ends DIVERGED_NAN on its own, and
    // the others are solved as a block of their own (every column is tested on its own rule; its
    // NaN would fill every Gram matrix of the block)
    let bad: Vec<bool> = (0..k)
        .map(|j| !bnorm[j].is_finite() || !rn[j].is_finite())
        .collect();
    if bad.iter().any(|b| *b) && !bad.iter().all(|b| *b) {
        let kb: Vec<&DistVector<T>> = (0..k).filter(|&j| !bad[j]).map(|j| bs[j]).collect();
        let mut kx: Vec<&mut DistVector<T>> = xs
            .iter_mut()
            .enumerate()
            .filter(|(j, _)| !bad[*j])
            .map(|(_, x)| &mut **x)
            .collect();
        // (the work vectors the smaller block takes: `z` is the rest of `v`, so no more than that)
        let need = work_len(kb.len(), plain);
        let mut sub = solve(ctx, &kb, &mut kx, &mut v[..need])?.into_iter();
        return Ok((0..k)
            .map(|j| match bad[j] {
                true => info(0, Reason::DivergedNan, r0[j], rn[j], bnorm[j]),
                false => sub.next().expect("one outcome a kept column"),
            })
            .collect());
    }
    let c = worst(&rn);
    if let Some(reason) = ctx.check(0, rn[c], bnorm[c], bs[c], xs[c])? {
        return Ok(ends(0, reason, &rn));
    }
    // W = Z, and W^H R = Z^H R
    let e = precond_all(ctx, r, z);
    let mut gr = restart(ctx, w, r, z, e)?;
    let mut it = 0i64;
    loop {
        it += 1;
        // Q = A W and W^H [W, Q] (in the product's pass where the operator can), one reduction
        let g = {
            let wr: Vec<&DistVector<T>> = w.iter().collect();
            let mut qr: Vec<&mut DistVector<T>> = q.iter_mut().collect();
            let local = ctx.op.apply_many_gram(&wr, &mut qr);
            sum_partials::<T>(&ctx.comm, local, 2 * k * k, &w[0])?
        };
        if g.iter()
            .any(|v| !re(*v).is_finite() || !v.to_parts().1.is_finite())
        {
            return Ok(ends(it - 1, Reason::DivergedNan, &rn));
        }
        let (gw, gq) = (square(&g, 2 * k, 0, 0, k), square(&g, 2 * k, 0, k, k));
        let (t, s, lh) = match directions(&gw, &gq, k, tol) {
            Ok(d) => d,
            Err(reason) => return Ok(ends(it - 1, reason, &rn)),
        };
        // X += W T H^-1 T^H W^H R, R -= Q (the same)
        let step = solve_cols(&lh, s, &th_mul(&t, k, s, &gr, k), k);
        let cm = t_mul(&t, k, s, &step, k);
        let minus: Vec<T> = cm.iter().map(|v| tx(-*v)).collect();
        {
            // combine's layout, output q's coefficients of the inputs a at c[q * k + a]: cm itself
            let plus: Vec<T> = cm.iter().map(|v| tx(*v)).collect();
            let wr: Vec<&DistVector<T>> = w.iter().collect();
            let mut xr: Vec<&mut DistVector<T>> = xs.iter_mut().map(|x| &mut **x).collect();
            fused::update(&mut xr, None, &plus, &wr)?;
        }
        // R -= Q cm, and [Q, R]^H Z in one pass (with a preconditioner R^H R too, for the norms;
        // without one, Z = R: the update and its Gram matrix in the same pass)
        let g2 = {
            let qr: Vec<&DistVector<T>> = q.iter().collect();
            let mut rr: Vec<&mut DistVector<T>> = r.iter_mut().collect();
            if plain {
                update_gram(&mut rr, &minus, &qr, Ok(()))?
            } else {
                fused::update(&mut rr, None, &minus, &qr)?;
                let e = precond_all(ctx, r, z);
                let xs_: Vec<&DistVector<T>> = q.iter().chain(r.iter()).collect();
                let ys: Vec<&DistVector<T>> = z.iter().chain(r.iter()).collect();
                gram(&xs_, &ys, e)?
            }
        };
        let ny = if plain { k } else { 2 * k };
        let rr_at = if plain { 0 } else { k };
        for (j, n) in rn.iter_mut().enumerate() {
            *n = root(re(g2[(k + j) * ny + rr_at + j]));
        }
        let c = worst(&rn);
        if let Some(reason) = ctx.check(it, rn[c], bnorm[c], bs[c], xs[c])? {
            if !matches!(reason, Reason::ConvergedRtol | Reason::ConvergedAtol) {
                return Ok(ends(it, reason, &rn));
            }
            // confirmed on the true residuals (Q is free); else the block restarts from them
            let e = residuals_nonzero(ctx, bs, xs, q);
            let pairs: Vec<_> = q.iter().map(|v| (v, v)).collect();
            let t = dots(&ctx.comm, &pairs, e)?;
            let tn: Vec<f64> = t.iter().map(|v| root(re(*v))).collect();
            let c = worst(&tn);
            if let Some(end) = ctx.confirmed(it, reason, tn[c], bnorm[c]) {
                let shown = if end == reason { &rn } else { &tn };
                return Ok(ends(it, end, shown));
            }
            r.swap_with_slice(q);
            let e = precond_all(ctx, r, z);
            gr = restart(ctx, w, r, z, e)?;
            rn = tn;
            continue;
        }
        // W = Z + W D with D = -T H^-1 T^H Q^H Z (A-conjugate to P); and its W^H R, from
        // Z^H R and W_old^H R = G_R - G_Q cm, without a pass: W^H R = Z^H R + D^H (G_R - G_Q cm)
        let qz = square(&g2, ny, 0, 0, k);
        let dir = solve_cols(&lh, s, &th_mul(&t, k, s, &qz, k), k);
        let dm: Vec<C> = t_mul(&t, k, s, &dir, k).iter().map(|v| -*v).collect();
        let rz = square(&g2, ny, k, 0, k);
        let old = mul(&gq, k, k, &cm, k);
        let mut next = vec![C::new(0.0, 0.0); k * k];
        for j in 0..k {
            for i in 0..k {
                // (Z^H R)_ij = conj((R^H Z)_ji)
                let mut v = rz[j + i * k].conj();
                for a in 0..k {
                    v += dm[a + i * k].conj() * (gr[a + j * k] - old[a + j * k]);
                }
                next[i + j * k] = v;
            }
        }
        gr = next;
        {
            let zs: Vec<&DistVector<T>> = if plain { r.iter() } else { z.iter() }.collect();
            let c: Vec<T> = dm.iter().map(|v| tx(*v)).collect();
            let wr: Vec<&DistVector<T>> = w.iter().collect();
            let mut outs: Vec<&mut DistVector<T>> = w2.iter_mut().collect();
            fused::update(&mut outs, Some(&zs), &c, &wr)?;
        }
        w.swap_with_slice(w2);
    }
}

/// W = Z (R without a preconditioner; `e` the pending outcome of Z = M R) and W^H R (k x k,
/// column-major) in one reduction. [collective]
fn restart<T: Scalar>(
    ctx: &Ctx<T>,
    w: &mut [DistVector<T>],
    r: &[DistVector<T>],
    z: &[DistVector<T>],
    e: Result<()>,
) -> Result<Vec<C>> {
    let k = r.len();
    let zs: &[DistVector<T>] = if ctx.pc.is_none() { r } else { z };
    let e = e.and_then(|_| copy_all(w, zs));
    let xs: Vec<&DistVector<T>> = zs.iter().collect();
    let ys: Vec<&DistVector<T>> = r.iter().collect();
    let g = gram(&xs, &ys, e)?;
    Ok(square(&g, k, 0, 0, k))
}

/// The k x k block at row `r0` and column `c0` of a row-major matrix of `cols` columns, as a
/// column-major matrix.
fn square<T: Scalar>(g: &[T], cols: usize, r0: usize, c0: usize, k: usize) -> Vec<C> {
    let mut m = vec![C::new(0.0, 0.0); k * k];
    for i in 0..k {
        for j in 0..k {
            m[i + j * k] = cx(g[(r0 + i) * cols + c0 + j]);
        }
    }
    m
}

/// A B (n x m) for A (n x p) and B (p x m), column-major.
fn mul(a: &[C], n: usize, p: usize, b: &[C], m: usize) -> Vec<C> {
    let mut out = vec![C::new(0.0, 0.0); n * m];
    for j in 0..m {
        for i in 0..n {
            out[i + j * n] = (0..p).map(|t| a[i + t * n] * b[t + j * p]).sum();
        }
    }
    out
}

/// H^-1 M (s x m) for the Cholesky factor of H, column by column.
fn solve_cols(l: &[C], s: usize, m: &[C], cols: usize) -> Vec<C> {
    let mut out = Vec::with_capacity(s * cols);
    for j in 0..cols {
        out.extend(cholesky_solve(l, s, &m[j * s..(j + 1) * s]));
    }
    out
}

/// The column farthest from its rule: the largest ||r_j|| / max(rtol ||b_j||, atol) (a non-finite
/// norm first).
fn worst_column(p: &super::Params, rn: &[f64], bnorm: &[f64]) -> usize {
    let ratio = |j: usize| {
        let tol = (p.rtol * bnorm[j]).max(p.atol);
        if !rn[j].is_finite() || !bnorm[j].is_finite() {
            f64::INFINITY
        } else if tol > 0.0 {
            rn[j] / tol
        } else if rn[j] > 0.0 {
            f64::MAX
        } else {
            0.0
        }
    };
    (0..rn.len()).fold(0, |m, j| if ratio(j) > ratio(m) { j } else { m })
}

/// R = B - A X (with a nonzero initial guess; `q` takes A X), or X = 0 and R = B. The pending local
/// outcome. [collective]
fn residuals<T: Scalar>(
    ctx: &Ctx<T>,
    bs: &[&DistVector<T>],
    xs: &mut [&mut DistVector<T>],
    q: &mut [DistVector<T>],
    r: &mut [DistVector<T>],
) -> Result<()> {
    if ctx.p.nonzero_guess {
        let e = residuals_nonzero(ctx, bs, xs, q);
        return e.and_then(|_| copy_all(r, q));
    }
    let mut out = Ok(());
    for (j, x) in xs.iter_mut().enumerate() {
        let e = x.fill(T::zero()).and_then(|_| r[j].copy_from(bs[j]));
        out = out.and(e);
    }
    out
}

/// q = B - A X. The pending local outcome. [collective]
fn residuals_nonzero<T: Scalar>(
    ctx: &Ctx<T>,
    bs: &[&DistVector<T>],
    xs: &[&mut DistVector<T>],
    q: &mut [DistVector<T>],
) -> Result<()> {
    let xr: Vec<&DistVector<T>> = xs.iter().map(|x| &**x).collect();
    let mut qr: Vec<&mut DistVector<T>> = q.iter_mut().collect();
    let mut e = ctx.op.apply_many(&xr, &mut qr);
    for (j, v) in q.iter_mut().enumerate() {
        let f = v.axpby(T::one(), bs[j], -T::one());
        e = e.and(f);
    }
    e
}

/// z_j = M r_j for every column (none without a preconditioner), each applied whatever failed
/// before. The pending local outcome. [collective]
fn precond_all<T: Scalar>(
    ctx: &Ctx<T>,
    r: &[DistVector<T>],
    z: &mut [DistVector<T>],
) -> Result<()> {
    let Some(m) = ctx.pc else {
        return Ok(());
    };
    let rr: Vec<&DistVector<T>> = r.iter().collect();
    let mut zr: Vec<&mut DistVector<T>> = z.iter_mut().collect();
    m.apply_many(&rr, &mut zr)
}

fn copy_all<T: Scalar>(dst: &mut [DistVector<T>], src: &[DistVector<T>]) -> Result<()> {
    for (d, s) in dst.iter_mut().zip(src) {
        d.copy_from(s)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two nearly parallel directions of a positive definite A = diag(1e8, 1), with W^H A W carrying
    /// the rounding (eps ||A|| per entry) a distributed product leaves: H = P^H A P over both
    /// directions is then not positive definite, and the block goes on with the one direction that
    /// is (before, the solve ended with "indefinite").
    #[test]
    fn nearly_dependent_directions_of_a_definite_operator() {
        let (sin, a) = (1e-5f64, [1e8, 1.0]);
        let cos = (1.0 - sin * sin).sqrt();
        let w = [[1.0, 0.0], [cos, sin]];
        let g = |f: &dyn Fn(usize) -> f64| -> Vec<C> {
            let mut m = vec![C::new(0.0, 0.0); 4];
            for i in 0..2 {
                for j in 0..2 {
                    m[i + 2 * j] = C::new((0..2).map(|r| w[i][r] * f(r) * w[j][r]).sum(), 0.0);
                }
            }
            m
        };
        let gw = g(&|_| 1.0);
        let mut gq = g(&|r| a[r]);
        gq[1] += C::new(2.0 * f64::EPSILON * 1e8, 0.0);
        gq[2] += C::new(2.0 * f64::EPSILON * 1e8, 0.0);
        let tol = 1e4 * f64::EPSILON;
        // both directions are taken, and their H is not positive definite
        let (t, s) = orthonormalizer(&gw, 2, tol, 2);
        assert_eq!(s, 2);
        let h = th_mul(&t, 2, 2, &mul(&gq, 2, 2, &t, 2), 2);
        assert!(cholesky(&h, 2).is_none(), "H = {h:?}");
        let (t, s, l) = directions(&gw, &gq, 2, tol).expect("one direction of a definite A");
        assert_eq!(s, 1);
        let h = th_mul(&t, 2, 1, &mul(&gq, 2, 2, &t, 1), 1);
        assert!(h[0].re > 0.0 && (l[0].re * l[0].re - h[0].re).abs() <= 1e-12 * h[0].re);
        // a direction of negative curvature still proves A indefinite
        let one = [C::new(1.0, 0.0)];
        assert_eq!(
            directions(&one, &[C::new(-2.0, 0.0)], 1, tol).err(),
            Some(Reason::DivergedIndefinite)
        );
        assert_eq!(
            directions(&[C::new(0.0, 0.0)], &one, 1, tol).err(),
            Some(Reason::DivergedBreakdown)
        );
    }
}
