//! GCRO-DR's small dense problems, run redundantly on every rank on reduced (hence equal) data, in
//! complex double precision whatever the solve's element type: the eigenpairs of a general square
//! matrix (Householder reduction to Hessenberg form, shifted complex QR to the Schur form, the
//! eigenvectors by back substitution), a Gram-Schmidt QR of a tall matrix, and the harmonic Ritz
//! vectors of a GCRO-DR cycle. Matrices are column-major.

use num_complex::Complex;

use crate::error::Result;

pub(crate) type C = Complex<f64>;

const EPS: f64 = f64::EPSILON;

/// A solve's scalar as a complex double.
pub(crate) fn cx<T: crate::scalar::Scalar>(v: T) -> C {
    let (a, b) = v.to_parts();
    C::new(a, b)
}

/// A complex double as the solve's scalar (the imaginary part dropped for real types).
pub(crate) fn tx<T: crate::scalar::Scalar>(v: C) -> T {
    T::from_parts_lossy(v.re, v.im)
}

/// A column-major `rows` x `cols` matrix of zeros, allocated fallibly.
pub(crate) fn zeros(rows: usize, cols: usize, what: &str) -> Result<Vec<C>> {
    let len = rows
        .checked_mul(cols)
        .ok_or_else(|| crate::err!(OutOfMemory, "{what}: {rows} x {cols} entries overflow"))?;
    let mut v = Vec::new();
    crate::error::try_reserve(&mut v, len, what)?;
    v.resize(len, C::new(0.0, 0.0));
    Ok(v)
}

/// (c, s, r) with [c s; -conj(s) c] [a; b] = [r; 0], c real and >= 0.
pub(crate) fn rotation(a: C, b: C) -> (f64, C, C) {
    if b == C::new(0.0, 0.0) {
        return (1.0, C::new(0.0, 0.0), a);
    }
    let (na, nb) = (a.norm(), b.norm());
    if na == 0.0 {
        return (0.0, b.conj() / nb, C::new(nb, 0.0));
    }
    let nrm = na.hypot(nb);
    let alpha = a / na;
    (na / nrm, alpha * b.conj() / nrm, alpha * nrm)
}

/// Eigenvalues and unit eigenvectors (columns, column-major n x n) of the n x n column-major `a`.
/// An eigenvalue of multiplicity above one gets eigenvectors that may be (nearly) parallel.
/// Err when the QR iteration does not converge or `a` is not finite.
pub(crate) fn eig(a: &[C], n: usize) -> Result<(Vec<C>, Vec<C>)> {
    if a.iter().any(|v| !v.re.is_finite() || !v.im.is_finite()) {
        crate::bail!(InvalidArgument, "the harmonic Ritz matrix is not finite");
    }
    let mut h = a.to_vec();
    let mut z = zeros(n, n, "the Schur vectors")?;
    for i in 0..n {
        z[i + i * n] = C::new(1.0, 0.0);
    }
    hessenberg(&mut h, &mut z, n);
    schur(&mut h, &mut z, n)?;
    let vals: Vec<C> = (0..n).map(|i| h[i + i * n]).collect();
    let scale = h
        .iter()
        .map(|v| v.norm())
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let mut vecs = zeros(n, n, "the eigenvectors")?;
    let mut x = vec![C::new(0.0, 0.0); n];
    for k in 0..n {
        // T x = lambda_k x with x_k = 1, x_j = 0 below k, by back substitution (a tiny divisor is
        // raised to eps ||T||, as LAPACK's ztrevc does)
        x.iter_mut().for_each(|v| *v = C::new(0.0, 0.0));
        x[k] = C::new(1.0, 0.0);
        for i in (0..k).rev() {
            let mut s = h[i + k * n];
            for j in i + 1..k {
                s += h[i + j * n] * x[j];
            }
            let mut d = h[i + i * n] - vals[k];
            if d.norm() < EPS * scale {
                d = C::new(EPS * scale, 0.0);
            }
            x[i] = -s / d;
        }
        let col = &mut vecs[k * n..(k + 1) * n];
        for (r, out) in col.iter_mut().enumerate() {
            *out = (0..=k).map(|j| z[r + j * n] * x[j]).sum();
        }
        let nrm = col.iter().map(|v| v.norm_sqr()).sum::<f64>().sqrt();
        if nrm > 0.0 && nrm.is_finite() {
            col.iter_mut().for_each(|v| *v /= nrm);
        }
    }
    Ok((vals, vecs))
}

/// Householder reduction of `h` to upper Hessenberg form, H <- Q^H H Q, Z <- Z Q.
fn hessenberg(h: &mut [C], z: &mut [C], n: usize) {
    for k in 0..n.saturating_sub(2) {
        // the reflector I - tau v v^H that maps h[k+1.., k] to a multiple of e_1
        let alpha = h[k + 1 + k * n];
        let xnorm = (k + 2..n).map(|i| h[i + k * n].norm_sqr()).sum::<f64>();
        if xnorm == 0.0 {
            continue;
        }
        let norm = (alpha.norm_sqr() + xnorm).sqrt();
        let phase = if alpha.norm() == 0.0 {
            C::new(1.0, 0.0)
        } else {
            alpha / alpha.norm()
        };
        let beta = -phase * norm;
        let mut v = vec![C::new(0.0, 0.0); n];
        v[k + 1] = alpha - beta;
        for i in k + 2..n {
            v[i] = h[i + k * n];
        }
        let vv: f64 = v.iter().map(|e| e.norm_sqr()).sum();
        let tau = 2.0 / vv;
        // from the left: rows k+1.., every column from k
        for j in k..n {
            let s: C = (k + 1..n).map(|i| v[i].conj() * h[i + j * n]).sum::<C>() * tau;
            for i in k + 1..n {
                h[i + j * n] -= v[i] * s;
            }
        }
        // from the right: columns k+1.., every row
        for i in 0..n {
            let s: C = (k + 1..n).map(|j| h[i + j * n] * v[j]).sum::<C>() * tau;
            for j in k + 1..n {
                h[i + j * n] -= s * v[j].conj();
            }
        }
        for i in 0..n {
            let s: C = (k + 1..n).map(|j| z[i + j * n] * v[j]).sum::<C>() * tau;
            for j in k + 1..n {
                z[i + j * n] -= s * v[j].conj();
            }
        }
        for i in k + 2..n {
            h[i + k * n] = C::new(0.0, 0.0);
        }
    }
}

/// The Schur form of the Hessenberg `h` by single-shift complex QR (Wilkinson shifts, an
/// exceptional shift after 10 sweeps without a deflation), H <- G^H H G, Z <- Z G.
fn schur(h: &mut [C], z: &mut [C], n: usize) -> Result<()> {
    let mut hi = n.saturating_sub(1);
    let mut sweeps = 0usize;
    let mut total = 0usize;
    while hi > 0 {
        let mut l = hi;
        while l > 0 {
            let sub = h[l + (l - 1) * n].norm();
            let diag = h[l + l * n].norm() + h[l - 1 + (l - 1) * n].norm();
            if sub <= EPS * diag || sub < f64::MIN_POSITIVE {
                h[l + (l - 1) * n] = C::new(0.0, 0.0);
                break;
            }
            l -= 1;
        }
        if l == hi {
            hi -= 1;
            sweeps = 0;
            continue;
        }
        sweeps += 1;
        total += 1;
        if total > 100 * n.max(1) {
            crate::bail!(
                NotConverged,
                "the QR iteration of a {n} x {n} harmonic Ritz problem did not converge"
            );
        }
        let (a, b) = (h[hi - 1 + (hi - 1) * n], h[hi - 1 + hi * n]);
        let (c, d) = (h[hi + (hi - 1) * n], h[hi + hi * n]);
        let mu = if sweeps.is_multiple_of(10) {
            d + C::new(1.5 * c.norm(), 0.0)
        } else {
            let half = (a - d) * 0.5;
            let disc = (half * half + b * c).sqrt();
            let (m1, m2) = ((a + d) * 0.5 + disc, (a + d) * 0.5 - disc);
            if (m1 - d).norm() <= (m2 - d).norm() {
                m1
            } else {
                m2
            }
        };
        for k in l..hi {
            let (x, y) = if k == l {
                (h[l + l * n] - mu, h[l + 1 + l * n])
            } else {
                (h[k + (k - 1) * n], h[k + 1 + (k - 1) * n])
            };
            let (cs, s, _) = rotation(x, y);
            let first = if k == l { l } else { k - 1 };
            for j in first..n {
                let (p, q) = (h[k + j * n], h[k + 1 + j * n]);
                h[k + j * n] = p * cs + s * q;
                h[k + 1 + j * n] = -s.conj() * p + q * cs;
            }
            if k > l {
                h[k + 1 + (k - 1) * n] = C::new(0.0, 0.0);
            }
            let last = (k + 2).min(hi);
            for i in 0..=last {
                let (p, q) = (h[i + k * n], h[i + (k + 1) * n]);
                h[i + k * n] = p * cs + q * s.conj();
                h[i + (k + 1) * n] = -p * s + q * cs;
            }
            for i in 0..n {
                let (p, q) = (z[i + k * n], z[i + (k + 1) * n]);
                z[i + k * n] = p * cs + q * s.conj();
                z[i + (k + 1) * n] = -p * s + q * cs;
            }
        }
    }
    Ok(())
}

/// Q R = A for the column-major `rows` x `cols` matrix `a` by Gram-Schmidt twice, dropping the
/// columns that depend on the earlier ones (their norm falls below 1e-12 of what it was): Q with
/// orthonormal columns and the kept columns' indices; R is upper triangular on the kept columns
/// (R[i, j] for the i-th kept and the j-th kept, column-major `kept` x `kept`).
pub(crate) fn qr(a: &[C], rows: usize, cols: usize) -> (Vec<C>, Vec<C>, Vec<usize>) {
    let mut q: Vec<C> = Vec::new();
    let mut kept = Vec::new();
    let mut rcols: Vec<Vec<C>> = Vec::new();
    for j in 0..cols {
        let mut v = a[j * rows..(j + 1) * rows].to_vec();
        let n0 = v.iter().map(|e| e.norm_sqr()).sum::<f64>().sqrt();
        let mut r = vec![C::new(0.0, 0.0); kept.len() + 1];
        for _pass in 0..2 {
            for (i, ri) in r.iter_mut().enumerate().take(kept.len()) {
                let qi = &q[i * rows..(i + 1) * rows];
                let d: C = qi.iter().zip(&v).map(|(x, y)| x.conj() * y).sum();
                *ri += d;
                v.iter_mut().zip(qi).for_each(|(y, x)| *y -= d * x);
            }
        }
        let nv = v.iter().map(|e| e.norm_sqr()).sum::<f64>().sqrt();
        if nv.is_nan() || nv <= 1e-12 * n0 || !nv.is_finite() {
            continue;
        }
        r[kept.len()] = C::new(nv, 0.0);
        v.iter_mut().for_each(|e| *e /= nv);
        q.extend(v);
        kept.push(j);
        rcols.push(r);
    }
    let k = kept.len();
    let mut rm = vec![C::new(0.0, 0.0); k * k];
    for (j, col) in rcols.iter().enumerate() {
        rm[j * k..j * k + col.len()].copy_from_slice(col);
    }
    (q, rm, kept)
}

/// X = B R^-1 for the column-major `rows` x `k` B and the k x k upper triangular R.
pub(crate) fn right_solve(b: &[C], r: &[C], rows: usize, k: usize) -> Vec<C> {
    let mut x = b.to_vec();
    for j in 0..k {
        for i in 0..j {
            let f = r[i + j * k];
            for t in 0..rows {
                let v = x[t + i * rows];
                x[t + j * rows] -= v * f;
            }
        }
        let d = r[j + j * k];
        for t in 0..rows {
            x[t + j * rows] /= d;
        }
    }
    x
}

/// The harmonic Ritz vectors of a GCRO-DR cycle: with G ((mm + 1) x mm, column-major, full column
/// rank) and F = W^H V^ ((mm + 1) x mm), the generalized problem G^H G z = theta G^H F z, solved as
/// R^-1 Q^H F z = (1 / theta) z with G = Q R (no normal equations); the `k` vectors z of smallest
/// |theta| as the columns of P (mm x kk, column-major). For a real problem (`real`) P is real: a
/// complex pair gives its real and imaginary parts, and a pair that the count would split is left
/// out (kk = k - 1 then). None when G is rank deficient or the iteration fails (the caller keeps
/// its space).
pub(crate) fn harmonic_ritz(
    g: &[C],
    f: &[C],
    mm: usize,
    k: usize,
    real: bool,
) -> Option<(Vec<C>, usize)> {
    let rows = mm + 1;
    let (q, r, kept) = qr(g, rows, mm);
    if kept.len() < mm {
        return None;
    }
    // S = Q^H F, then R^-1 S by back substitution, column by column
    let mut s = zeros(mm, mm, "the harmonic Ritz matrix").ok()?;
    for j in 0..mm {
        for i in 0..mm {
            s[i + j * mm] = (0..rows)
                .map(|t| q[t + i * rows].conj() * f[t + j * rows])
                .sum();
        }
        for i in (0..mm).rev() {
            let mut v = s[i + j * mm];
            for t in i + 1..mm {
                v -= r[i + t * mm] * s[t + j * mm];
            }
            s[i + j * mm] = v / r[i + i * mm];
        }
    }
    let (mu, vecs) = eig(&s, mm).ok()?;
    // the largest |mu| = 1 / |theta| first
    let mut order: Vec<usize> = (0..mm).collect();
    order.sort_by(|&a, &b| mu[b].norm().total_cmp(&mu[a].norm()));
    let k = k.min(mm);
    let mut p: Vec<C> = Vec::new();
    if !real {
        for &i in order.iter().take(k) {
            p.extend_from_slice(&vecs[i * mm..(i + 1) * mm]);
        }
        return Some((p, k));
    }
    // real data: eigenvalues with a (relative) imaginary part come in conjugate pairs
    let tol = 1e-10;
    let mut taken = vec![false; mm];
    let mut cols = 0;
    for (pos, &i) in order.iter().enumerate() {
        if cols >= k || taken[i] {
            continue;
        }
        let v = &vecs[i * mm..(i + 1) * mm];
        if mu[i].im.abs() <= tol * mu[i].norm() {
            taken[i] = true;
            p.extend(v.iter().map(|e| C::new(e.re, 0.0)));
            cols += 1;
            continue;
        }
        // its partner: the nearest to conj(mu_i) among the rest
        let partner = order[pos + 1..]
            .iter()
            .copied()
            .filter(|&j| !taken[j])
            .min_by(|&a, &b| {
                (mu[a] - mu[i].conj())
                    .norm()
                    .total_cmp(&(mu[b] - mu[i].conj()).norm())
            });
        if cols + 2 > k {
            break;
        }
        taken[i] = true;
        if let Some(j) = partner {
            taken[j] = true;
        }
        p.extend(v.iter().map(|e| C::new(e.re, 0.0)));
        p.extend(v.iter().map(|e| C::new(e.im, 0.0)));
        cols += 2;
    }
    Some((p, cols))
}

/// The Cholesky factor L (lower, column-major) of the Hermitian n x n `a`, or None where a pivot is
/// not positive (relative to the largest diagonal entry).
pub(crate) fn cholesky(a: &[C], n: usize) -> Option<Vec<C>> {
    let dmax = (0..n).map(|i| a[i + i * n].re).fold(0.0, f64::max);
    let mut l = vec![C::new(0.0, 0.0); n * n];
    for j in 0..n {
        let mut d = a[j + j * n].re;
        for t in 0..j {
            d -= l[j + t * n].norm_sqr();
        }
        if d.is_nan() || d <= 1e-14 * dmax || !d.is_finite() {
            return None;
        }
        let d = d.sqrt();
        l[j + j * n] = C::new(d, 0.0);
        for i in j + 1..n {
            let mut v = a[i + j * n];
            for t in 0..j {
                v -= l[i + t * n] * l[j + t * n].conj();
            }
            l[i + j * n] = v / d;
        }
    }
    Some(l)
}

/// x with L L^H x = b for the Cholesky factor `l` of [`cholesky`].
pub(crate) fn cholesky_solve(l: &[C], n: usize, b: &[C]) -> Vec<C> {
    let mut y = b.to_vec();
    for i in 0..n {
        for t in 0..i {
            let v = l[i + t * n] * y[t];
            y[i] -= v;
        }
        y[i] /= l[i + i * n];
    }
    for i in (0..n).rev() {
        for t in i + 1..n {
            let v = l[t + i * n].conj() * y[t];
            y[i] -= v;
        }
        y[i] /= l[i + i * n];
    }
    y
}

/// The Ritz vectors of the `k` smallest Ritz values of the pencil (G, F), both Hermitian n x n
/// (column-major), F positive semi-definite (a Gram matrix): F's null directions (below 1e-12 of its
/// largest eigenvalue) are left out, then G restricted to the rest is diagonalised. Returns Y
/// (n x kk, column-major, kk <= k) with Y^H F Y = I; None when nothing is left or the iteration
/// fails.
pub(crate) fn ritz_smallest(g: &[C], f: &[C], n: usize, k: usize) -> Option<(Vec<C>, usize)> {
    let herm = |a: &[C]| -> Vec<C> {
        let mut h = a.to_vec();
        for i in 0..n {
            for j in 0..n {
                h[i + j * n] = (a[i + j * n] + a[j + i * n].conj()) * 0.5;
            }
        }
        h
    };
    let (lam, v) = eig(&herm(f), n).ok()?;
    let lmax = lam.iter().map(|l| l.re).fold(0.0, f64::max);
    let keep: Vec<usize> = (0..n).filter(|&i| lam[i].re > 1e-12 * lmax).collect();
    let r = keep.len();
    if r == 0 {
        return None;
    }
    // T = V_keep diag(lambda^-1/2): T^H F T = I
    let mut t = vec![C::new(0.0, 0.0); n * r];
    for (c, &i) in keep.iter().enumerate() {
        let s = 1.0 / lam[i].re.sqrt();
        for row in 0..n {
            t[row + c * n] = v[row + i * n] * s;
        }
    }
    // G' = T^H G T
    let gh = herm(g);
    let mut gt = vec![C::new(0.0, 0.0); n * r];
    for c in 0..r {
        for row in 0..n {
            gt[row + c * n] = (0..n).map(|q| gh[row + q * n] * t[q + c * n]).sum();
        }
    }
    let mut gp = vec![C::new(0.0, 0.0); r * r];
    for c in 0..r {
        for row in 0..r {
            gp[row + c * r] = (0..n).map(|q| t[q + row * n].conj() * gt[q + c * n]).sum();
        }
    }
    let gp = herm_r(&gp, r);
    let (theta, y) = eig(&gp, r).ok()?;
    let mut order: Vec<usize> = (0..r).collect();
    order.sort_by(|&a, &b| theta[a].re.total_cmp(&theta[b].re));
    let kk = k.min(r);
    let mut out = vec![C::new(0.0, 0.0); n * kk];
    for (c, &i) in order.iter().take(kk).enumerate() {
        for row in 0..n {
            out[row + c * n] = (0..r).map(|q| t[row + q * n] * y[q + i * r]).sum();
        }
    }
    Some((out, kk))
}

fn herm_r(a: &[C], r: usize) -> Vec<C> {
    let mut h = a.to_vec();
    for i in 0..r {
        for j in 0..r {
            h[i + j * r] = (a[i + j * r] + a[j + i * r].conj()) * 0.5;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn residual(a: &[C], n: usize, vals: &[C], vecs: &[C]) -> f64 {
        let mut worst: f64 = 0.0;
        for k in 0..n {
            for i in 0..n {
                let av: C = (0..n).map(|j| a[i + j * n] * vecs[j + k * n]).sum();
                worst = worst.max((av - vals[k] * vecs[i + k * n]).norm());
            }
        }
        worst
    }

    #[test]
    fn eigenpairs_of_general_matrices() {
        // a real matrix with complex pairs, a complex one, a Jordan-like one, a diagonal one
        let mut seed = 7u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        for n in [1, 2, 3, 7, 20, 41] {
            let real: Vec<C> = (0..n * n).map(|_| C::new(rnd(), 0.0)).collect();
            let cplx: Vec<C> = (0..n * n).map(|_| C::new(rnd(), rnd())).collect();
            for a in [real, cplx] {
                let (vals, vecs) = eig(&a, n).unwrap();
                let scale = a.iter().map(|v| v.norm()).fold(0.0, f64::max);
                assert!(
                    residual(&a, n, &vals, &vecs) < 1e-12 * scale * n as f64,
                    "n {n}"
                );
                let tr: C = (0..n).map(|i| a[i + i * n]).sum();
                let sv: C = vals.iter().sum();
                assert!((tr - sv).norm() < 1e-12 * scale * n as f64);
            }
        }
        // diag(3, 1, 2) with an upper part: eigenvalues 3, 1, 2
        let n = 3;
        let mut a = vec![C::new(0.0, 0.0); 9];
        for (i, d) in [3.0, 1.0, 2.0].iter().enumerate() {
            a[i + i * n] = C::new(*d, 0.0);
        }
        a[3] = C::new(5.0, 0.0);
        let (vals, vecs) = eig(&a, n).unwrap();
        let mut re: Vec<f64> = vals.iter().map(|v| v.re).collect();
        re.sort_by(f64::total_cmp);
        assert_eq!(re, [1.0, 2.0, 3.0]);
        assert!(residual(&a, n, &vals, &vecs) < 1e-14);
        let nan = vec![C::new(f64::NAN, 0.0); 4];
        assert!(eig(&nan, 2).is_err());
    }

    #[test]
    fn cholesky_and_ritz() {
        // A = diag(1, 2, 3, 4) in the basis Z = [e0 + e1, e1, e2, e3, e0] (dependent columns):
        // G = Z^T A Z, F = Z^T Z; the two smallest Ritz values are 1 and 2
        let n = 5;
        let z: [[f64; 4]; 5] = [
            [1.0, 1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
            [1.0, 0.0, 0.0, 0.0],
        ];
        let a = [1.0, 2.0, 3.0, 4.0];
        let mut g = vec![C::new(0.0, 0.0); n * n];
        let mut f = vec![C::new(0.0, 0.0); n * n];
        for i in 0..n {
            for j in 0..n {
                g[i + j * n] = C::new((0..4).map(|t| z[i][t] * a[t] * z[j][t]).sum(), 0.0);
                f[i + j * n] = C::new((0..4).map(|t| z[i][t] * z[j][t]).sum(), 0.0);
            }
        }
        assert!(cholesky(&f, n).is_none());
        let (y, kk) = ritz_smallest(&g, &f, n, 2).unwrap();
        assert_eq!(kk, 2);
        for (c, want) in [1.0, 2.0].iter().enumerate() {
            let yc = &y[c * n..(c + 1) * n];
            let q = |m: &[C]| -> f64 {
                (0..n)
                    .flat_map(|i| (0..n).map(move |j| (i, j)))
                    .map(|(i, j)| (yc[i].conj() * m[i + j * n] * yc[j]).re)
                    .sum()
            };
            assert!((q(&f) - 1.0).abs() < 1e-12 && (q(&g) - want).abs() < 1e-12);
        }
        // Cholesky solves an SPD system
        let spd: Vec<C> = [4.0, 1.0, 1.0, 3.0]
            .iter()
            .map(|&v| C::new(v, 0.0))
            .collect();
        let l = cholesky(&spd, 2).unwrap();
        let x = cholesky_solve(&l, 2, &[C::new(1.0, 0.0), C::new(2.0, 0.0)]);
        assert!((x[0].re - 1.0 / 11.0).abs() < 1e-15 && (x[1].re - 7.0 / 11.0).abs() < 1e-15);
    }

    #[test]
    fn qr_drops_dependent_columns() {
        let rows = 4;
        let a: Vec<C> = [1.0, 2.0, 0.0, 1.0, 2.0, 4.0, 0.0, 2.0, 0.0, 1.0, 1.0, 0.0]
            .iter()
            .map(|&v| C::new(v, 0.0))
            .collect();
        let (q, r, kept) = qr(&a, rows, 3);
        assert_eq!(kept, [0, 2]);
        // Q R reproduces the kept columns
        for (jj, &j) in kept.iter().enumerate() {
            for t in 0..rows {
                let v: C = (0..2).map(|i| q[t + i * rows] * r[i + jj * 2]).sum();
                assert!((v - a[t + j * rows]).norm() < 1e-14);
            }
        }
        let x = right_solve(&q, &r, rows, 2);
        // X R = Q
        for j in 0..2 {
            for t in 0..rows {
                let v: C = (0..2).map(|i| x[t + i * rows] * r[i + j * 2]).sum();
                assert!((v - q[t + j * rows]).norm() < 1e-14);
            }
        }
    }
}
