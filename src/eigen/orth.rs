//! Orthonormalisation of multi-vectors (hIPPYlib's MultiVector.orthogonalize/Borthogonalize,
//! SLEPc's BVOrthogonalize): classical Gram-Schmidt twice, in the Euclidean or a B inner product.

use crate::error::Result;
use crate::op::LinearOperator;
use crate::scalar::Scalar;
use crate::vector::DistVector;
use crate::vector::multi::{block_dot, maxpy};

/// How [`orthonormalize`] treats a vector that the projections reduce to rounding noise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dependent {
    /// An error naming it (the caller's vectors should be independent).
    Fail,
    /// Keep what remains, orthogonalised again until it stops shrinking (a randomized range finder's
    /// columns are numerically dependent when the spectrum decays fast: any orthonormal completion
    /// serves).
    Complete,
}

/// Orthonormalise `vs` in place, in order, by classical Gram-Schmidt applied twice ("twice is
/// enough": CGS2; a third to fifth pass while a pass still shrinks the vector tenfold), in the inner
/// product <u, v> = u^H B v when `b` is given (B Hermitian positive definite; one application of B
/// per vector: B v is kept for the vectors done). Returns R (n x n, row-major, upper triangular) with
/// V_in = V_out R. With [`Dependent::Fail`], a vector that loses all but 1e-10 of its norm to the
/// projections (1e-4 in single precision) fails on every rank, naming it; a vector reduced to zero, a
/// non-finite value, or u^H B u <= 0 always does. [collective]
pub fn orthonormalize<T: Scalar>(
    vs: &mut [&mut DistVector<T>],
    b: Option<&dyn LinearOperator<T>>,
    dependent: Dependent,
) -> Result<Vec<T>> {
    let n = vs.len();
    let Some(first) = vs.first() else {
        return Ok(Vec::new());
    };
    let comm = first.layout().comm().clone();
    let single = T::DTYPE.size() / T::PARTS < 8;
    let drop_tol = if single { 1e-4 } else { 1e-10 };
    let mut r = comm.agree(super::dense::matrix(n, n, T::zero(), "R"))?;
    // B v of the vectors done (with B), allocated as needed: failures agreed
    let mut bv: Vec<DistVector<T>> = Vec::new();
    let mut w_b = match b {
        Some(_) => Some(comm.agree(first.duplicate())?),
        None => None,
    };
    for k in 0..n {
        let (done, rest) = vs.split_at_mut(k);
        let w = &mut *rest[0];
        let before = block_dot(&[&*w], &[&*w], Ok(()))?[0].to_parts().0.sqrt();
        let mut now = before;
        let mut pass = 0;
        while k > 0 && pass < 5 {
            let basis: Vec<&DistVector<T>> = match b {
                Some(_) => bv.iter().collect(),
                None => done.iter().map(|v| &**v).collect(),
            };
            let h = block_dot(&basis, &[&*w], Ok(()))?;
            let done_refs: Vec<&DistVector<T>> = done.iter().map(|v| &**v).collect();
            let neg: Vec<T> = h.iter().map(|v| -*v).collect();
            maxpy(w, &neg, &done_refs)?;
            for (i, hi) in h.iter().enumerate() {
                r[i * n + k] += *hi;
            }
            pass += 1;
            let prev = now;
            now = block_dot(&[&*w], &[&*w], Ok(()))?[0].to_parts().0.sqrt();
            if pass >= 2 && (now.is_nan() || now >= 0.1 * prev) {
                break;
            }
        }
        let scale_ref = now;
        // the norm, in the B inner product with B w (kept as B v_k)
        let nrm2 = match (b, w_b.as_mut()) {
            (Some(bop), Some(bw)) => {
                let e = bop.apply(w, bw);
                block_dot(&[&*w], &[&*bw], e)?[0].to_parts().0
            }
            _ => block_dot(&[&*w], &[&*w], Ok(()))?[0].to_parts().0,
        };
        if !nrm2.is_finite() || !before.is_finite() {
            crate::bail!(
                InvalidArgument,
                "vector {k} has a value that is not finite (its norm is {before})"
            );
        }
        if nrm2 <= 0.0 && b.is_some() && before > 0.0 {
            crate::bail!(
                InvalidArgument,
                "u^H B u = {nrm2} <= 0 for vector {k} after the projections: B must be positive definite"
            );
        }
        let nrm = nrm2.max(0.0).sqrt();
        // compared in the Euclidean norm: ||w|| after the projections against ||v_k|| before
        let lost = match dependent {
            Dependent::Fail => scale_ref <= drop_tol * before,
            Dependent::Complete => nrm.is_nan() || nrm <= 0.0,
        };
        if before == 0.0 || lost {
            crate::bail!(
                InvalidArgument,
                "vector {k} depends on vectors 0..{k}: its norm fell from {before:e} to {scale_ref:e} in the projections"
            );
        }
        r[k * n + k] = T::real(nrm);
        w.scale(T::real(1.0 / nrm))?;
        if let Some(bw) = w_b.as_mut() {
            bw.scale(T::real(1.0 / nrm))?;
            if k + 1 < n {
                let fresh = comm.agree(bw.duplicate())?;
                bv.push(std::mem::replace(bw, fresh));
            }
        }
    }
    Ok(r)
}
