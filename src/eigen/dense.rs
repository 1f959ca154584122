//! Small dense kernels of the eigensolvers, run redundantly on every rank on reduced (hence equal)
//! data: a Hermitian eigen-decomposition by cyclic Jacobi rotations and a solve with partial
//! pivoting. Matrices are row-major n x n.

use crate::error::Result;
use crate::scalar::Scalar;

/// An n x m matrix of `fill`, allocated fallibly (sizes come from the caller).
pub(crate) fn matrix<T: Clone>(n: usize, m: usize, fill: T, what: &str) -> Result<Vec<T>> {
    let len = n
        .checked_mul(m)
        .ok_or_else(|| crate::err!(OutOfMemory, "{what}: {n} x {m} entries overflow"))?;
    let mut v = Vec::new();
    crate::error::try_reserve(&mut v, len, what)?;
    v.resize(len, fill);
    Ok(v)
}

/// Eigenvalues (descending) and eigenvectors (columns of the row-major n x n result, in the same
/// order) of the Hermitian matrix `h` (its Hermitian part is used), by cyclic Jacobi rotations,
/// each making one off-diagonal entry zero: accurate to a few eps of ||h|| for every eigenvalue.
pub fn hermitian_eig<T: Scalar>(h: &[T], n: usize) -> Result<(Vec<f64>, Vec<T>)> {
    let mut a = matrix(n, n, T::zero(), "the projected matrix")?;
    for (k, e) in a.iter_mut().enumerate() {
        let (i, j) = (k / n, k % n);
        *e = (h[i * n + j] + h[j * n + i].conj()) * T::real(0.5);
    }
    let mut v = matrix(n, n, T::zero(), "the eigenvectors")?;
    for i in 0..n {
        v[i * n + i] = T::one();
    }
    let total: f64 = a.iter().map(|x| x.abs2_f64()).sum::<f64>().sqrt();
    if !total.is_finite() {
        crate::bail!(InvalidArgument, "the projected matrix is not finite");
    }
    for _sweep in 0..60 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| a[i * n + j].abs2_f64())
            .sum::<f64>()
            .sqrt();
        if off <= 1e-17 * total || off == 0.0 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                let hpq = a[p * n + q];
                let g = hpq.abs_f64();
                // an entry negligible against the matrix is left alone (the sweeps stop far above
                // it): in single precision its reciprocal below would overflow to Inf, then NaN
                if g <= 1e-300 || g <= 1e-20 * total {
                    continue;
                }
                // D = diag(1, d) makes the (p, q) entry real (= g); then a real rotation R
                let d = hpq.conj() * T::real(1.0 / g);
                let (app, aqq) = (a[p * n + p].to_parts().0, a[q * n + q].to_parts().0);
                let tau = (aqq - app) / (2.0 * g);
                let t = tau.signum() / (tau.abs() + (1.0 + tau * tau).sqrt());
                let t = if tau == 0.0 { 1.0 } else { t };
                let c = 1.0 / (1.0 + t * t).sqrt();
                let s = t * c;
                // U = D R = [[c, s], [-s d, c d]] on coordinates (p, q)
                let (upp, upq, uqp, uqq) =
                    (T::real(c), T::real(s), -d * T::real(s), d * T::real(c));
                for k in 0..n {
                    let (x, y) = (a[k * n + p], a[k * n + q]);
                    a[k * n + p] = x * upp + y * uqp;
                    a[k * n + q] = x * upq + y * uqq;
                    let (x, y) = (v[k * n + p], v[k * n + q]);
                    v[k * n + p] = x * upp + y * uqp;
                    v[k * n + q] = x * upq + y * uqq;
                }
                for k in 0..n {
                    let (x, y) = (a[p * n + k], a[q * n + k]);
                    a[p * n + k] = upp.conj() * x + uqp.conj() * y;
                    a[q * n + k] = upq.conj() * x + uqq.conj() * y;
                }
                a[p * n + q] = T::zero();
                a[q * n + p] = T::zero();
            }
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    let ev: Vec<f64> = (0..n).map(|i| a[i * n + i].to_parts().0).collect();
    if ev.iter().any(|e| !e.is_finite()) || v.iter().any(|x| !x.abs_f64().is_finite()) {
        crate::bail!(
            Internal,
            "the eigenvalues of the projected {n} x {n} matrix did not come out finite ({ev:?})"
        );
    }
    order.sort_by(|&i, &j| ev[j].total_cmp(&ev[i]));
    let vals = order.iter().map(|&i| ev[i]).collect();
    let mut vecs = matrix(n, n, T::zero(), "the sorted eigenvectors")?;
    for (col, &i) in order.iter().enumerate() {
        for k in 0..n {
            vecs[k * n + col] = v[k * n + i];
        }
    }
    Ok((vals, vecs))
}

/// X with A X = B (A n x n, B n x m, both row-major), by Gaussian elimination with partial
/// pivoting; a zero pivot is an error naming `what`.
pub fn solve<T: Scalar>(a: &[T], b: &[T], n: usize, m: usize, what: &str) -> Result<Vec<T>> {
    let mut a = {
        let mut c = matrix(n, n, T::zero(), "a copy of the system")?;
        c.copy_from_slice(&a[..n * n]);
        c
    };
    let mut x = {
        let mut c = matrix(n, m, T::zero(), "the solution")?;
        c.copy_from_slice(&b[..n * m]);
        c
    };
    for k in 0..n {
        let piv = (k..n)
            .max_by(|&i, &j| a[i * n + k].abs_f64().total_cmp(&a[j * n + k].abs_f64()))
            .unwrap_or(k);
        let pivot = a[piv * n + k].abs_f64();
        if pivot.is_nan() || pivot <= 0.0 {
            crate::bail!(InvalidArgument, "{what} is singular (pivot {k} is zero)");
        }
        if piv != k {
            for j in 0..n {
                a.swap(k * n + j, piv * n + j);
            }
            for j in 0..m {
                x.swap(k * m + j, piv * m + j);
            }
        }
        for i in k + 1..n {
            let f = a[i * n + k] / a[k * n + k];
            for j in k..n {
                let v = a[k * n + j];
                a[i * n + j] = a[i * n + j] - f * v;
            }
            for j in 0..m {
                let v = x[k * m + j];
                x[i * m + j] = x[i * m + j] - f * v;
            }
        }
    }
    for i in (0..n).rev() {
        for j in 0..m {
            let mut s = x[i * m + j];
            for k in i + 1..n {
                s = s - a[i * n + k] * x[k * m + j];
            }
            x[i * m + j] = s / a[i * n + i];
        }
    }
    Ok(x)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::c64;

    #[test]
    fn hermitian_eig_of_a_known_matrix() {
        // H = U diag(3, 1, -2) U^H with U from a unit complex rotation
        let n = 3;
        let (c, s) = (0.6, 0.8);
        let ph = c64::new(0.0, 1.0);
        let u = [
            c64::new(c, 0.0),
            ph * s,
            c64::new(0.0, 0.0),
            -ph.conj() * s,
            c64::new(c, 0.0),
            c64::new(0.0, 0.0),
            c64::new(0.0, 0.0),
            c64::new(0.0, 0.0),
            c64::new(1.0, 0.0),
        ];
        let d = [3.0, 1.0, -2.0];
        let mut h = vec![c64::new(0.0, 0.0); 9];
        for i in 0..n {
            for j in 0..n {
                for k in 0..n {
                    h[i * n + j] += u[i * n + k] * c64::new(d[k], 0.0) * u[j * n + k].conj();
                }
            }
        }
        let (vals, vecs) = hermitian_eig(&h, n).unwrap();
        for (a, b) in vals.iter().zip([3.0, 1.0, -2.0]) {
            assert!((a - b).abs() < 1e-14, "{vals:?}");
        }
        // H v = lambda v for every column
        for col in 0..n {
            for i in 0..n {
                let hv: c64 = (0..n).map(|k| h[i * n + k] * vecs[k * n + col]).sum();
                assert!((hv - vecs[i * n + col] * vals[col]).norm() < 1e-14);
            }
        }
    }
}
