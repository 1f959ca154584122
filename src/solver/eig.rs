//! Extreme eigenvalue (singular value) estimates from a solve (PETSc's
//! KSPComputeExtremeSingularValues): the Lanczos tridiagonal matrix that CG's coefficients define
//! (its eigenvalues estimate those of the preconditioned operator M A), and the Hessenberg matrix of
//! GMRES's last restart cycle (its singular values estimate those of A M, or M A).

/// Do `m`'s solves record estimates (CG, GMRES, FGMRES)? `NotSupported` otherwise.
pub(crate) fn supported(m: super::Method) -> crate::error::Result<()> {
    if !m.arnoldi() && m != super::Method::Cg {
        crate::bail!(
            NotSupported,
            "eigenvalue estimates come from CG and GMRES/FGMRES; {} records none",
            m.name()
        );
    }
    Ok(())
}

/// What a solve recorded for the estimates.
#[derive(Clone, Debug, Default)]
pub(crate) struct EigRecord {
    /// CG: (alpha_j, beta_j) of each iteration (beta of the last one may be missing: NaN).
    pub cg: Vec<(f64, f64)>,
    /// GMRES/FGMRES: the columns (h_0j .. h_j+1,j) of the last cycle's Hessenberg matrix, before
    /// the rotations (real data only).
    pub hess: Vec<Vec<f64>>,
    /// The Hessenberg matrix was complex: no estimate.
    pub complex: bool,
}

/// The extreme eigenvalues of the symmetric tridiagonal matrix with diagonal `a` and off-diagonal
/// `b` (b.len() = a.len() - 1), by Sturm-sequence bisection.
fn tridiag_extremes(a: &[f64], b: &[f64]) -> (f64, f64) {
    let n = a.len();
    // Gershgorin interval
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for i in 0..n {
        let r = if i > 0 { b[i - 1].abs() } else { 0.0 } + if i + 1 < n { b[i].abs() } else { 0.0 };
        lo = lo.min(a[i] - r);
        hi = hi.max(a[i] + r);
    }
    // number of eigenvalues below x
    let count = |x: f64| {
        let mut c = 0;
        let mut q = 1.0f64;
        for i in 0..n {
            let bb = if i > 0 { b[i - 1] * b[i - 1] } else { 0.0 };
            q = a[i] - x - if i > 0 { bb / q } else { 0.0 };
            if q == 0.0 {
                q = f64::EPSILON * (a[i].abs() + x.abs()).max(f64::MIN_POSITIVE);
            }
            if q < 0.0 {
                c += 1;
            }
        }
        c
    };
    let kth = |k: usize| {
        let (mut l, mut h) = (lo, hi);
        for _ in 0..200 {
            let m = 0.5 * (l + h);
            if m <= l || m >= h {
                break;
            }
            if count(m) > k {
                h = m;
            } else {
                l = m;
            }
        }
        0.5 * (l + h)
    };
    (kth(0), kth(n - 1))
}

/// The extreme eigenvalues of a small symmetric matrix (cyclic Jacobi rotations).
#[allow(clippy::needless_range_loop)] // rows and columns rotated in place: index form reads as the math
fn sym_extremes(mut s: Vec<Vec<f64>>) -> (f64, f64) {
    let n = s.len();
    for _sweep in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| s[i][j] * s[i][j])
            .sum();
        let scale: f64 = (0..n)
            .map(|i| s[i][i] * s[i][i])
            .sum::<f64>()
            .max(f64::MIN_POSITIVE);
        if off <= 1e-30 * scale {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                if s[p][q] == 0.0 {
                    continue;
                }
                let theta = (s[q][q] - s[p][p]) / (2.0 * s[p][q]);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let sn = t * c;
                for k in 0..n {
                    let (skp, skq) = (s[k][p], s[k][q]);
                    s[k][p] = c * skp - sn * skq;
                    s[k][q] = sn * skp + c * skq;
                }
                for k in 0..n {
                    let (spk, sqk) = (s[p][k], s[q][k]);
                    s[p][k] = c * spk - sn * sqk;
                    s[q][k] = sn * spk + c * sqk;
                }
            }
        }
    }
    let d: Vec<f64> = (0..n).map(|i| s[i][i]).collect();
    (
        d.iter().cloned().fold(f64::INFINITY, f64::min),
        d.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
    )
}

impl EigRecord {
    pub fn clear(&mut self) {
        self.cg.clear();
        self.hess.clear();
        self.complex = false;
    }

    /// (smallest, largest) estimate, or why there is none.
    pub fn extremes(&self) -> std::result::Result<(f64, f64), String> {
        if !self.cg.is_empty() {
            // T_jj = 1/alpha_j + beta_{j-1}/alpha_{j-1}, T_j,j+1 = sqrt(beta_j)/alpha_j
            let k = self.cg.len();
            let mut a = Vec::with_capacity(k);
            let mut b = Vec::with_capacity(k.saturating_sub(1));
            for j in 0..k {
                let (al, _) = self.cg[j];
                let prev = if j > 0 {
                    self.cg[j - 1].1 / self.cg[j - 1].0
                } else {
                    0.0
                };
                a.push(1.0 / al + prev);
                if j + 1 < k {
                    b.push(self.cg[j].1.max(0.0).sqrt() / al);
                }
            }
            if a.iter().chain(&b).any(|v| !v.is_finite()) {
                return Err("the recorded CG coefficients are not finite".into());
            }
            return Ok(tridiag_extremes(&a, &b));
        }
        if self.complex {
            return Err("GMRES on complex data: estimates are computed for real data only".into());
        }
        if !self.hess.is_empty() {
            // singular values of the (k+1) x k Hessenberg matrix: square roots of H^T H's eigenvalues
            let k = self.hess.len();
            let col = |j: usize, i: usize| self.hess[j].get(i).copied().unwrap_or(0.0);
            let hth: Vec<Vec<f64>> = (0..k)
                .map(|p| {
                    (0..k)
                        .map(|q| (0..=k).map(|i| col(p, i) * col(q, i)).sum())
                        .collect()
                })
                .collect();
            if hth.iter().flatten().any(|v| !v.is_finite()) {
                return Err("the recorded Hessenberg matrix is not finite".into());
            }
            let (lo, hi) = sym_extremes(hth);
            return Ok((lo.max(0.0).sqrt(), hi.max(0.0).sqrt()));
        }
        Err("no iteration was recorded: call parlops_solver_set_compute_eigenvalues before a solve that iterates (CG or GMRES/FGMRES)".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn extremes_of_known_matrices() {
        // tridiagonal 2, -1: eigenvalues 2 - 2 cos(k pi / (n+1))
        let n = 20;
        let (lo, hi) = tridiag_extremes(&vec![2.0; n], &vec![-1.0; n - 1]);
        let f = |k: f64| 2.0 - 2.0 * (k * std::f64::consts::PI / (n as f64 + 1.0)).cos();
        assert!(
            (lo - f(1.0)).abs() < 1e-12 && (hi - f(n as f64)).abs() < 1e-12,
            "{lo} {hi}"
        );
        let s = vec![
            vec![4.0, 1.0, 0.0],
            vec![1.0, 3.0, 1.0],
            vec![0.0, 1.0, 2.0],
        ];
        let (lo, hi) = sym_extremes(s);
        // eigenvalues 3 - sqrt(3), 3, 3 + sqrt(3)
        assert!(
            (lo - (3.0 - 3f64.sqrt())).abs() < 1e-12 && (hi - (3.0 + 3f64.sqrt())).abs() < 1e-12
        );
    }
}
