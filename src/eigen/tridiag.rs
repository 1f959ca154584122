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
    e.push(0.0);
    // the rows kept, each starting as that row of the identity
    let mut z = super::dense::matrix(rows.len(), n, 0.0f64, "the eigenvector rows")?;
    for (k, &r) in rows.iter().enumerate() {
        z[k * n + r] = 1.0;
    }
    for l in 0..n {
        let mut iterations = 0;
        loop {
            // the first negligible off-diagonal entry at or after l splits the matrix
            let mut m = l;
            while m + 1 < n && e[m].abs() > f64::EPSILON * (d[m].abs() + d[m + 1].abs()) {
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
            let mut r = g.hypot(1.0);
            g = d[m] - d[l] + e[l] / (g + r.copysign(g));
            let (mut s, mut c, mut p) = (1.0f64, 1.0f64, 0.0f64);
            let mut i = m;
            let mut split = false;
            // chase the bulge from m up to l with plane rotations
            while i > l {
                i -= 1;
                let f = s * e[i];
                let b = c * e[i];
                r = f.hypot(g);
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
                for row in z.chunks_mut(n) {
                    let t = row[i + 1];
                    row[i + 1] = s * row[i] + c * t;
                    row[i] = c * row[i] - s * t;
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
    if d.iter().any(|v| !v.is_finite()) {
        crate::bail!(
            InvalidArgument,
            "the tridiagonal matrix has eigenvalues that are not finite"
        );
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| d[b].total_cmp(&d[a]));
    let vals = order.iter().map(|&i| d[i]).collect();
    let out = z
        .chunks(n)
        .map(|row| order.iter().map(|&i| row[i]).collect())
        .collect();
    Ok((vals, out))
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
    let mut q = super::dense::matrix(n, n, 0.0f64, "the reflections")?;
    for i in 0..n {
        q[i * n + i] = 1.0;
    }
    let mut v = vec![0.0f64; n];
    let mut pv = vec![0.0f64; n];
    for k in 0..n.saturating_sub(2) {
        let norm = (k + 1..n)
            .map(|i| m[i * n + k] * m[i * n + k])
            .sum::<f64>()
            .sqrt();
        if norm == 0.0 {
            continue;
        }
        let x0 = m[(k + 1) * n + k];
        let alpha = if x0 > 0.0 { -norm } else { norm };
        v.iter_mut().for_each(|e| *e = 0.0);
        for i in k + 1..n {
            v[i] = m[i * n + k];
        }
        v[k + 1] -= alpha;
        let vv: f64 = v[k + 1..].iter().map(|e| e * e).sum();
        if vv == 0.0 {
            continue;
        }
        let beta = 2.0 / vv;
        // M <- H M H with H = I - beta v v^T: p = beta M v, q = p - (beta/2)(v.p) v, M -= v q^T + q v^T
        for i in 0..n {
            pv[i] = beta * (k + 1..n).map(|j| m[i * n + j] * v[j]).sum::<f64>();
        }
        let kk = 0.5 * beta * (k + 1..n).map(|j| v[j] * pv[j]).sum::<f64>();
        for i in 0..n {
            pv[i] -= kk * v[i];
        }
        for i in 0..n {
            for j in 0..n {
                m[i * n + j] -= v[i] * pv[j] + pv[i] * v[j];
            }
        }
        // Q <- Q H
        for i in 0..n {
            let s = beta * (k + 1..n).map(|j| q[i * n + j] * v[j]).sum::<f64>();
            for j in k + 1..n {
                q[i * n + j] -= s * v[j];
            }
        }
    }
    let d: Vec<f64> = (0..n).map(|i| m[i * n + i]).collect();
    let e: Vec<f64> = (0..n.saturating_sub(1))
        .map(|i| m[(i + 1) * n + i])
        .collect();
    let rows: Vec<usize> = (0..n).collect();
    let (vals, z) = tridiag_eig(&d, &e, &rows)?;
    // the eigenvectors: Q Z (z[r] is row r of Z, in the order of `vals`)
    let mut out = super::dense::matrix(n, n, 0.0f64, "the eigenvectors")?;
    for i in 0..n {
        for (k, zk) in z.iter().enumerate() {
            let qik = q[i * n + k];
            if qik == 0.0 {
                continue;
            }
            for (c, zv) in zk.iter().enumerate() {
                out[i * n + c] += qik * zv;
            }
        }
    }
    Ok((vals, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against dense Jacobi (`hermitian_eig`) on tridiagonal matrices with random, repeated and
    /// graded entries: the same eigenvalues, the same last components up to sign, and orthonormal
    /// eigenvectors that satisfy T z = lambda z.
    /// The Householder route against Jacobi on random symmetric matrices (and one with repeated
    /// eigenvalues): the same eigenvalues, eigenvectors that satisfy A v = lambda v and are orthonormal.
    #[test]
    fn symmetric_eigenpairs() {
        for (n, seed) in [(1usize, 1u64), (2, 2), (7, 3), (24, 4), (40, 5)] {
            let mut st = seed;
            let mut rnd = || {
                st = st
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((st >> 11) as f64 / (1u64 << 53) as f64) - 0.5
            };
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
            for c in 0..n {
                for r in 0..n {
                    let av: f64 = (0..n).map(|k| a[r * n + k] * vecs[k * n + c]).sum();
                    assert!(
                        (av - vals[c] * vecs[r * n + c]).abs() <= 1e-12,
                        "n {n}: A v - lambda v"
                    );
                }
                for c2 in 0..n {
                    let d: f64 = (0..n).map(|k| vecs[k * n + c] * vecs[k * n + c2]).sum();
                    let want = if c == c2 { 1.0 } else { 0.0 };
                    assert!((d - want).abs() <= 1e-12, "n {n}: V^T V");
                }
            }
        }
    }

    #[test]
    fn tridiagonal_eigenpairs() {
        let mut seed = 12345u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64) / ((1u64 << 53) as f64) - 0.5
        };
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
