//! Eigenvalues of a real symmetric tridiagonal matrix by the implicit QL method with Wilkinson-type
//! shifts, and chosen rows of its eigenvector matrix: O(m^2) for the eigenvalues and one row (what
//! Lanczos' convergence test needs: the eigenvectors' last components), O(m^2) more per row kept
//! (all rows, for the Ritz vectors, once at the end). Dense Jacobi on the whole m x m matrix
//! (`dense::hermitian_eig`) cost O(m^3) per test, O(m^4) over a run.

use crate::error::Result;

/// The eigenvalues of the symmetric tridiagonal matrix with diagonal `diag` and off-diagonal `off`
/// (`off[i]` couples i and i + 1; `off.len() + 1 == diag.len()`), in descending order, and rows
/// `rows` of the orthogonal matrix of its eigenvectors (one `Vec` per row asked, its entries in the
/// order of the eigenvalues returned).
pub fn tridiag_eig(diag: &[f64], off: &[f64], rows: &[usize]) -> Result<(Vec<f64>, Vec<Vec<f64>>)> {
    let n = diag.len();
    if n == 0 || off.len() + 1 != n || rows.iter().any(|&r| r >= n) {
        crate::bail!(
            Internal,
            "a tridiagonal matrix of {n} rows with {} off-diagonal entries, rows {rows:?} asked",
            off.len()
        );
    }
    let mut d = diag.to_vec();
    let mut e = off.to_vec();
    // the rows kept, each starting as that row of the identity, stored by column (column c's
    // entries for the rows asked, contiguous)
    let nz = rows.len();
    let mut zt = super::dense::matrix(n, nz, 0.0f64, "the eigenvector rows")?;
    for (k, &r) in rows.iter().enumerate() {
        zt[r * nz + k] = 1.0;
    }
    let order = ql(&mut d, &mut e, &mut zt, nz, "the tridiagonal matrix")?;
    let vals = order.iter().map(|&i| d[i]).collect();
    let out = (0..nz)
        .map(|k| order.iter().map(|&i| zt[i * nz + k]).collect())
        .collect();
    Ok((vals, out))
}

/// sqrt(a^2 + b^2) without overflow or harmful underflow (LAPACK's dlapy2): the squares summed
/// directly where they are safe, scaled by the larger otherwise (glibc's `hypot`, correctly
/// rounded, was a third of the rotations' time).
#[inline]
pub(super) fn pythag(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    let (a, b) = (a.abs(), b.abs());
    let (big, small) = if a >= b { (a, b) } else { (b, a) };
    if small == 0.0 {
        return big;
    }
    if big < 1e150 && small > 1e-150 {
        return (big * big + small * small).sqrt();
    }
    let t = small / big;
    big * (1.0 + t * t).sqrt()
}

/// The implicit QL iteration with Wilkinson-type shifts on the tridiagonal matrix (`d`, `e`; `e`
/// has n - 1 entries) in place: `d` becomes its eigenvalues (unordered), and every rotation is
/// applied to the columns of `zt`, an n-column matrix stored by column (`nz` entries each): from
/// the identity's rows, those rows of the eigenvector matrix; from a matrix Q, Q times it. Returns
/// the eigenvalues' indices in descending order; an eigenvalue that is not finite is an error naming
/// `what`.
fn ql(
    d: &mut [f64],
    e: &mut Vec<f64>,
    zt: &mut [f64],
    nz: usize,
    what: &str,
) -> Result<Vec<usize>> {
    let n = d.len();
    e.push(0.0);
    // An off-diagonal entry is negligible beside its two diagonal entries (the relative test, which
    // keeps the small eigenvalues of a graded matrix) or beside the whole matrix: the sweeps' own
    // rounding is eps ||T||, so a block of eigenvalues near zero inside a matrix of norm 1 (a
    // projected matrix of an operator with a large null space) can never meet the relative test
    // alone, and QL failed there after 60 sweeps.
    let tnorm = d
        .iter()
        .zip(e.iter())
        .fold(0.0f64, |a, (x, y)| a.max(x.abs() + y.abs()));
    let negligible = |e: f64, d0: f64, d1: f64| {
        e.abs() <= f64::EPSILON * (d0.abs() + d1.abs()) || e.abs() <= f64::EPSILON * tnorm
    };
    for l in 0..n {
        let mut iterations = 0;
        loop {
            // the first negligible off-diagonal entry at or after l splits the matrix
            let mut m = l;
            while m + 1 < n && !negligible(e[m], d[m], d[m + 1]) {
                m += 1;
            }
            if m == l {
                break;
            }
            iterations += 1;
            if iterations > 60 {
                crate::bail!(
                    NotConverged,
                    "the tridiagonal eigensolver did not converge at eigenvalue {l} of {n} in 60 QL sweeps"
                );
            }
            // the shift: the eigenvalue of the leading 2 x 2 block nearer d[l]
            let mut g = (d[l + 1] - d[l]) / (2.0 * e[l]);
            let mut r = pythag(g, 1.0);
            g = d[m] - d[l] + e[l] / (g + r.copysign(g));
            let (mut s, mut c, mut p) = (1.0f64, 1.0f64, 0.0f64);
            let mut i = m;
            let mut split = false;
            // chase the bulge from m up to l with plane rotations
            while i > l {
                i -= 1;
                let f = s * e[i];
                let b = c * e[i];
                r = pythag(f, g);
                e[i + 1] = r;
                if r == 0.0 {
                    // an exact split: deflate and start again
                    d[i + 1] -= p;
                    e[m] = 0.0;
                    split = true;
                    break;
                }
                s = f / r;
                c = g / r;
                g = d[i + 1] - p;
                r = (d[i] - g) * s + 2.0 * c * b;
                p = s * r;
                d[i + 1] = g + p;
                g = c * r - b;
                // columns i and i + 1, each contiguous
                let (lo, hi) = zt[i * nz..(i + 2) * nz].split_at_mut(nz);
                for (zi, zj) in lo.iter_mut().zip(hi.iter_mut()) {
                    let t = *zj;
                    *zj = s * *zi + c * t;
                    *zi = c * *zi - s * t;
                }
            }
            if split {
                continue;
            }
            d[l] -= p;
            e[l] = g;
            e[m] = 0.0;
        }
    }
    e.pop();
    if d.iter().any(|v| !v.is_finite()) {
        crate::bail!(
            InvalidArgument,
            "{what} has eigenvalues that are not finite"
        );
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| d[b].total_cmp(&d[a]));
    Ok(order)
}

/// Eigenvalues (descending) and eigenvectors (columns of the row-major n x n result, in the same
/// order) of the real symmetric `a` (n x n, row-major; its lower triangle is used): Householder
/// reduction to tridiagonal form, implicit QL with every row of the eigenvector matrix, and the
/// reflections applied back: O(n^3) with a small constant (Krylov-Schur's projected problem at each
/// restart; Jacobi rotations took several sweeps of that).
pub fn symmetric_eig(a: &[f64], n: usize) -> Result<(Vec<f64>, Vec<f64>)> {
    if a.len() != n * n || n == 0 {
        crate::bail!(
            Internal,
            "a symmetric matrix of {} entries for n = {n}",
            a.len()
        );
    }
    if a.iter().any(|v| !v.is_finite()) {
        crate::bail!(InvalidArgument, "the projected matrix is not finite");
    }
    let mut m = super::dense::matrix(n, n, 0.0f64, "the projected matrix")?;
    for i in 0..n {
        for j in 0..=i {
            m[i * n + j] = a[i * n + j];
            m[j * n + i] = a[i * n + j];
        }
    }
    // Q, the product of the reflections, stored by column (qt[j * n + i] = Q[i][j])
    let mut qt = super::dense::matrix(n, n, 0.0f64, "the reflections")?;
    for i in 0..n {
        qt[i * n + i] = 1.0;
    }
    let mut v = vec![0.0f64; n];
    let mut pv = vec![0.0f64; n];
    let mut sv = vec![0.0f64; n];
    let mut off = vec![0.0f64; n.saturating_sub(1)];
    for k in 0..n.saturating_sub(2) {
        // the reflection H = I - beta v v^T (v on k + 1..n) taking column k below the diagonal to
        // (alpha, 0, ..): only the trailing block k + 1..n of M changes
        let norm = (k + 1..n)
            .map(|i| m[i * n + k] * m[i * n + k])
            .sum::<f64>()
            .sqrt();
        let x0 = m[(k + 1) * n + k];
        if norm == 0.0 {
            continue;
        }
        let alpha = if x0 > 0.0 { -norm } else { norm };
        for i in k + 1..n {
            v[i] = m[i * n + k];
        }
        v[k + 1] -= alpha;
        let vv: f64 = v[k + 1..].iter().map(|e| e * e).sum();
        if vv == 0.0 {
            off[k] = x0;
            continue;
        }
        let beta = 2.0 / vv;
        off[k] = alpha;
        // p = beta M v, q = p - (beta/2)(v.p) v, M -= v q^T + q v^T on the trailing block
        for i in k + 1..n {
            pv[i] = beta * (k + 1..n).map(|j| m[i * n + j] * v[j]).sum::<f64>();
        }
        let kk = 0.5 * beta * (k + 1..n).map(|j| v[j] * pv[j]).sum::<f64>();
        for i in k + 1..n {
            pv[i] -= kk * v[i];
        }
        for i in k + 1..n {
            let (vi, pi) = (v[i], pv[i]);
            let row = &mut m[i * n + k + 1..(i + 1) * n];
            for ((e, vj), pj) in row.iter_mut().zip(&v[k + 1..]).zip(&pv[k + 1..]) {
                *e -= vi * pj + pi * vj;
            }
        }
        // Q <- Q H: s = beta Q v, then each column j > k of Q less v[j] s
        sv.iter_mut().for_each(|e| *e = 0.0);
        for j in k + 1..n {
            let vj = beta * v[j];
            for (s, q) in sv.iter_mut().zip(&qt[j * n..(j + 1) * n]) {
                *s += vj * q;
            }
        }
        for j in k + 1..n {
            let vj = v[j];
            for (q, s) in qt[j * n..(j + 1) * n].iter_mut().zip(&sv) {
                *q -= vj * s;
            }
        }
    }
    if n >= 2 {
        off[n - 2] = m[(n - 1) * n + n - 2];
    }
    let mut d: Vec<f64> = (0..n).map(|i| m[i * n + i]).collect();
    // the QL rotations applied to Q's columns: Q Z, the eigenvectors
    let order = ql(&mut d, &mut off, &mut qt, n, "the projected matrix")?;
    let vals = order.iter().map(|&i| d[i]).collect();
    let mut out = super::dense::matrix(n, n, 0.0f64, "the eigenvectors")?;
    for (c, &j) in order.iter().enumerate() {
        for i in 0..n {
            out[i * n + c] = qt[j * n + i];
        }
    }
    Ok((vals, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uniform numbers in [-0.5, 0.5) from a 64-bit LCG started at `seed`.
    fn uniform(mut seed: u64) -> impl FnMut() -> f64 {
        move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        }
    }

    /// A v = lambda v for every column of `vecs` (n x n, row-major, the eigenvectors of the
    /// row-major `a`) and V^T V = I, each entry to 1e-12.
    fn check_pairs(a: &[f64], n: usize, vals: &[f64], vecs: &[f64]) {
        for c in 0..n {
            for r in 0..n {
                let av: f64 = (0..n).map(|k| a[r * n + k] * vecs[k * n + c]).sum();
                assert!(
                    (av - vals[c] * vecs[r * n + c]).abs() <= 1e-12,
                    "n {n}: A v - lambda v"
                );
            }
            for c2 in 0..=c {
                let d: f64 = (0..n).map(|k| vecs[k * n + c] * vecs[k * n + c2]).sum();
                let want = if c == c2 { 1.0 } else { 0.0 };
                assert!((d - want).abs() <= 1e-12, "n {n}: V^T V");
            }
        }
    }

    /// Against dense Jacobi (`hermitian_eig`) on tridiagonal matrices with random, repeated and
    /// graded entries: the same eigenvalues, the same last components up to sign, and orthonormal
    /// eigenvectors that satisfy T z = lambda z.
    /// The Householder route against Jacobi on random symmetric matrices (and one with repeated
    /// eigenvalues): the same eigenvalues, eigenvectors that satisfy A v = lambda v and are orthonormal.
    /// `pythag` against `hypot` where the squares are safe and where they over- or underflow, and
    /// NaN kept.
    #[test]
    fn pythag_without_overflow() {
        for (a, b) in [
            (3.0, 4.0),
            (0.0, 0.0),
            (-5.0, 0.0),
            (1e200, 3e199),
            (1e-200, -2e-201),
            (1e300, 1e-300),
            (0.0, 1e-310),
            (f64::INFINITY, 1.0),
        ] {
            let (p, h) = (pythag(a, b), f64::hypot(a, b));
            assert!(
                p == h || (p - h).abs() <= 4.0 * f64::EPSILON * h,
                "{a} {b}: {p} vs {h}"
            );
        }
        assert!(pythag(f64::NAN, 0.0).is_nan() && pythag(1.0, f64::NAN).is_nan());
    }

    #[test]
    fn symmetric_eigenpairs() {
        for (n, seed) in [(1usize, 1u64), (2, 2), (7, 3), (24, 4), (40, 5)] {
            let mut rnd = uniform(seed);
            let mut a = vec![0.0f64; n * n];
            for i in 0..n {
                for j in 0..=i {
                    let v = if seed == 5 && i != j { 0.0 } else { rnd() };
                    let v = if seed == 5 { (i % 3) as f64 } else { v };
                    a[i * n + j] = v;
                    a[j * n + i] = v;
                }
            }
            let (vals, vecs) = symmetric_eig(&a, n).unwrap();
            let (jv, _) = crate::eigen::dense::hermitian_eig(&a, n).unwrap();
            for (x, y) in vals.iter().zip(&jv) {
                assert!((x - y).abs() <= 1e-12, "n {n}: {vals:?} vs {jv:?}");
            }
            check_pairs(&a, n, &vals, &vecs);
        }
    }

    /// Q diag(0 x 100, 1..2 x 100) Q^T for a random orthogonal Q (the projected matrix of an
    /// operator with a large null space, as Krylov-Schur with ncv = n forms it): its zero
    /// eigenvalues come out as noise of eps ||A||, which the relative deflation test alone never
    /// accepted (QL failed after 60 sweeps). Every eigenpair to 1e-12, V orthonormal.
    #[test]
    fn symmetric_eig_with_a_large_null_space() {
        let n = 200;
        let mut rnd = uniform(77);
        // Q by modified Gram-Schmidt on random columns (q[c] is column c)
        let mut q: Vec<Vec<f64>> = (0..n).map(|_| (0..n).map(|_| rnd()).collect()).collect();
        for c in 0..n {
            let (done, rest) = q.split_at_mut(c);
            for qp in done.iter() {
                let d: f64 = qp.iter().zip(&rest[0]).map(|(x, y)| x * y).sum();
                for (y, x) in rest[0].iter_mut().zip(qp) {
                    *y -= d * x;
                }
            }
            let nn = q[c].iter().map(|x| x * x).sum::<f64>().sqrt();
            q[c].iter_mut().for_each(|x| *x /= nn);
        }
        let spec: Vec<f64> = (0..n)
            .map(|i| {
                if i < n / 2 {
                    0.0
                } else {
                    1.0 + (i - n / 2) as f64 / (n / 2) as f64
                }
            })
            .collect();
        let mut a = vec![0.0f64; n * n];
        for i in 0..n {
            for j in 0..=i {
                let v: f64 = (0..n).map(|c| q[c][i] * spec[c] * q[c][j]).sum();
                a[i * n + j] = v;
                a[j * n + i] = v;
            }
        }
        let (vals, vecs) = symmetric_eig(&a, n).unwrap();
        let mut want = spec.clone();
        want.sort_by(|x, y| y.total_cmp(x));
        for (x, y) in vals.iter().zip(&want) {
            assert!((x - y).abs() <= 1e-12, "{x} against {y}");
        }
        check_pairs(&a, n, &vals, &vecs);
    }

    #[test]
    fn tridiagonal_eigenpairs() {
        let mut rnd = uniform(12345);
        for (case, m) in [1usize, 2, 3, 7, 30, 61].iter().enumerate() {
            let m = *m;
            let (diag, off): (Vec<f64>, Vec<f64>) = match case % 3 {
                0 => (
                    (0..m).map(|_| rnd()).collect(),
                    (0..m - 1).map(|_| rnd()).collect(),
                ),
                1 => (vec![2.0; m], vec![-1.0; m - 1]),
                _ => (
                    (0..m).map(|i| 10f64.powi(-(i as i32) / 4)).collect(),
                    (0..m - 1)
                        .map(|i| 0.5 * 10f64.powi(-(i as i32) / 4))
                        .collect(),
                ),
            };
            let all: Vec<usize> = (0..m).collect();
            let (vals, z) = tridiag_eig(&diag, &off, &all).unwrap();
            let mut t = vec![0.0; m * m];
            for i in 0..m {
                t[i * m + i] = diag[i];
                if i + 1 < m {
                    t[i * m + i + 1] = off[i];
                    t[(i + 1) * m + i] = off[i];
                }
            }
            let (dv, dz) = crate::eigen::dense::hermitian_eig(&t, m).unwrap();
            let scale = vals.iter().fold(0.0f64, |s, v| s.max(v.abs()));
            for k in 0..m {
                assert!(
                    (vals[k] - dv[k]).abs() <= 1e-12 * scale,
                    "m {m}: eigenvalue {k}"
                );
                let (a, b) = (z[m - 1][k].abs(), dz[(m - 1) * m + k].abs());
                // a repeated eigenvalue has no unique vector: compare where separated
                let gap = (0..m)
                    .filter(|&j| j != k)
                    .fold(f64::MAX, |g, j| g.min((vals[j] - vals[k]).abs()));
                if gap > 1e-6 * scale {
                    assert!(
                        (a - b).abs() <= 1e-9,
                        "m {m}: last component {k}: {a} vs {b}"
                    );
                }
                // T z_k = lambda_k z_k, |z_k| = 1
                let col: Vec<f64> = (0..m).map(|r| z[r][k]).collect();
                let nrm: f64 = col.iter().map(|x| x * x).sum::<f64>().sqrt();
                assert!((nrm - 1.0).abs() <= 1e-12);
                for r in 0..m {
                    let tz: f64 = (0..m).map(|c| t[r * m + c] * col[c]).sum();
                    assert!((tz - vals[k] * col[r]).abs() <= 1e-11 * scale.max(1.0));
                }
            }
            // one row alone gives the same entries as that row of the full matrix
            let (v1, last) = tridiag_eig(&diag, &off, &[m - 1]).unwrap();
            assert_eq!(v1, vals);
            assert_eq!(last[0], z[m - 1]);
        }
        assert!(tridiag_eig(&[1.0, 2.0], &[], &[0]).is_err());
        assert!(tridiag_eig(&[1.0], &[], &[1]).is_err());
    }
}
