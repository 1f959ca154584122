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

#[cfg(test)]
mod tests {
    use super::*;

    /// Against dense Jacobi (`hermitian_eig`) on tridiagonal matrices with random, repeated and
    /// graded entries: the same eigenvalues, the same last components up to sign, and orthonormal
    /// eigenvectors that satisfy T z = lambda z.
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
