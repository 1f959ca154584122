//! hIPPYlib's randomized eigensolvers (Halko, Martinsson and Tropp; Saibaba, Lee and Kitanidis) for
//! the leading eigenpairs of a Hermitian operator A, or of the pencil A u = lambda B u with B^-1
//! given as an operator (the prior-preconditioned Hessian of a Laplace approximation): from k + p
//! random vectors Omega, `power` applications of A (or B^-1 A), an orthonormal (B-orthonormal) basis
//! Q of the result, the projected matrix T, its eigenpairs, and U = Q V. The double-pass variant
//! forms T = Q^H A Q (A once more); the single-pass one solves (Omega^H Q) T = Y^H Q instead.

use super::dense::{hermitian_eig, solve};
use super::orth::{Dependent, orthonormalize};
use super::{alloc, apply_all, check_square};
use crate::error::Result;
use crate::op::LinearOperator;
use crate::scalar::Scalar;
use crate::vector::DistVector;
use crate::vector::multi::{block_dot, maxpy};

/// The most products with A per random vector accepted (hIPPYlib uses 1 to 3; each is a pass of
/// n_omega products).
pub const MAX_POWER: i32 = 100;

/// Which variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// hIPPYlib's doublePass / doublePassG.
    Double,
    /// hIPPYlib's singlePass / singlePassG.
    Single,
}

/// The `k` leading eigenvalues (descending) of A, or of (A, B) with `pencil` = (B, B^-1), written with
/// their eigenvectors into `u` (k vectors of A's layout; B-orthonormal for the pencil), from the
/// random vectors `omega` (k + oversampling of them; not modified; beyond A's size n only the first
/// n are used, which span the whole space: the eigenpairs are then exact). k must not exceed n.
/// [collective]
pub fn randomized<T: Scalar>(
    a: &dyn LinearOperator<T>,
    pencil: Option<(&dyn LinearOperator<T>, &dyn LinearOperator<T>)>,
    omega: &[&DistVector<T>],
    power: usize,
    pass: Pass,
    u: &mut [&mut DistVector<T>],
) -> Result<Vec<f64>> {
    let (m, k) = (omega.len(), u.len());
    let Some(first) = omega.first() else {
        crate::bail!(InvalidArgument, "no random vectors (n_omega is 0)");
    };
    let comm = first.layout().comm().clone();
    let size = first.layout().global_len();
    let pre = (|| {
        if k == 0 || k > m {
            crate::bail!(
                InvalidArgument,
                "k = {k} eigenpairs from n_omega = {m} random vectors: 1 <= k <= n_omega"
            );
        }
        if k as i64 > size {
            crate::bail!(
                InvalidArgument,
                "k = {k} eigenpairs of an operator of size {size}: k must be at most its size"
            );
        }
        if power == 0 {
            crate::bail!(
                InvalidArgument,
                "power must be >= 1 (the number of products with A)"
            );
        }
        let l = first.layout();
        check_square(a, l, "A")?;
        if let Some((b, binv)) = pencil {
            check_square(b, l, "B")?;
            check_square(binv, l, "B^-1")?;
        }
        for v in omega.iter().map(|v| &**v).chain(u.iter().map(|v| &**v)) {
            v.layout().check_compatible(l, "a vector", "omega[0]")?;
            first.check_location(v, "a vector", "omega[0]")?;
        }
        Ok(())
    })();
    comm.agree(pre)?;
    // more random vectors than the size: the first `size` of them already span the whole space (no
    // more than `size` vectors can be orthonormal), and the projected problem is then exact
    let omega = &omega[..m.min(size.max(1) as usize)];
    let m = omega.len();
    // the power iteration: Y = A Q (and Q = B^-1 Y), `power` times; Y_pr is the last input
    let mut q = alloc(&comm, m, first)?;
    for (qi, o) in q.iter_mut().zip(omega) {
        qi.copy_from(o)?;
    }
    let mut y = alloc(&comm, m, first)?;
    let mut y_pr = alloc(&comm, if pass == Pass::Single { m } else { 0 }, first)?;
    for _ in 0..power {
        if pass == Pass::Single {
            for (p, qi) in y_pr.iter_mut().zip(&q) {
                p.copy_from(qi)?;
            }
        }
        apply_all(&comm, a, &q, &mut y)?;
        match pencil {
            Some((_, binv)) => apply_all(&comm, binv, &y, &mut q)?,
            None => {
                for (qi, yi) in q.iter_mut().zip(&y) {
                    qi.copy_from(yi)?;
                }
            }
        }
    }
    let b = pencil.map(|g| g.0);
    {
        let mut refs: Vec<&mut DistVector<T>> = q.iter_mut().collect();
        orthonormalize(&mut refs, b, Dependent::Complete).map_err(|e| {
            crate::error::Error::new(
                e.kind,
                format!(
                    "the range of the random vectors under A: {} (n_omega = {m})",
                    e.msg
                ),
            )
        })?;
    }
    let qr: Vec<&DistVector<T>> = q.iter().collect();
    let t = match pass {
        Pass::Double => {
            // T = Q^H A Q
            let mut aq = alloc(&comm, m, first)?;
            apply_all(&comm, a, &q, &mut aq)?;
            let aqr: Vec<&DistVector<T>> = aq.iter().collect();
            block_dot(&qr, &aqr, Ok(()))?
        }
        Pass::Single => {
            // (Y_pr^H B Q) T = Y^H Q, B Q from one more product with B for the pencil
            let left = match b {
                Some(bop) => {
                    let mut bq = alloc(&comm, m, first)?;
                    apply_all(&comm, bop, &q, &mut bq)?;
                    let bqr: Vec<&DistVector<T>> = bq.iter().collect();
                    let ypr: Vec<&DistVector<T>> = y_pr.iter().collect();
                    block_dot(&ypr, &bqr, Ok(()))?
                }
                None => {
                    let ypr: Vec<&DistVector<T>> = y_pr.iter().collect();
                    block_dot(&ypr, &qr, Ok(()))?
                }
            };
            let yr: Vec<&DistVector<T>> = y.iter().collect();
            let right = block_dot(&yr, &qr, Ok(()))?;
            comm.agree(solve(
                &left,
                &right,
                m,
                m,
                "Omega^H Q (the single-pass system)",
            ))?
        }
    };
    // dense work on reduced values: a failed allocation on one rank fails on all
    let (vals, vecs) = comm.agree(hermitian_eig(&t, m))?;
    for (j, uj) in u.iter_mut().enumerate() {
        uj.fill(T::zero())?;
        let coef: Vec<T> = (0..m).map(|i| vecs[i * m + j]).collect();
        maxpy(uj, &coef, &qr)?;
    }
    Ok(vals[..k].to_vec())
}
