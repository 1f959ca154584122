//! Krylov-Schur's Gram-Schmidt ([`super::krylov_schur`]): a new vector orthogonalised against the
//! basis in the Euclidean or the B inner product, and the M-norm of a vector.

use super::krylov_schur::Ctx;
use crate::comm::ReduceOp;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, fused, sum_partials};

/// A reduced square norm's rounding below zero taken to zero; NaN kept (`f64::max` would drop it, and
/// the norm of a vector holding a NaN would read as an invariant subspace instead of a failure).
fn clamp0(n2: f64) -> f64 {
    if n2 < 0.0 { 0.0 } else { n2 }
}

/// Second Gram-Schmidt pass when the first left less than this fraction of the norm (DGKS).
const ETA: f64 = std::f64::consts::FRAC_1_SQRT_2;

impl<T: Scalar> Ctx<'_, T> {
    /// Orthogonalise `w` against `basis` in M, returning the projections V^H M w and the M-norm
    /// left (`z` is scratch for M w). `pending` is this rank's outcome of the work that made `w`
    /// (not yet agreed): its failure fails every rank, in the first reduction. [collective]
    pub(super) fn orth(
        &self,
        basis: &[DistVector<T>],
        w: &mut DistVector<T>,
        z: &mut DistVector<T>,
        pending: Result<()>,
    ) -> Result<(Vec<T>, f64)> {
        let k = basis.len();
        let Some(b) = self.p.b else {
            // the projections and ||w||^2 in one reduction, the update and its norm in one pass
            let local = pending.and_then(|_| {
                let mut xs: Vec<&DistVector<T>> = basis.iter().collect();
                xs.push(w);
                fused::mdot(&xs, w)
            });
            let p = sum_partials::<T>(&self.comm, local, k + 1, w)?;
            let w2 = clamp0(p[k].to_parts().0);
            let nu0 = w2.sqrt();
            let mut h = p[..k].to_vec();
            // DGKS: where the projections remove less than half of ||w||^2, one pass is enough and
            // the norm left is ||w||^2 - |h|^2 (Pythagoras, SLEPc's estimate; relative error a few
            // eps here), so the step makes one reduction (reduced values: every rank alike)
            let left = w2 - h.iter().map(|v| v.abs2_f64()).sum::<f64>();
            if left > ETA * ETA * w2 && left.is_finite() {
                let neg: Vec<T> = h.iter().map(|v| -*v).collect();
                fused::maxpy(w, &neg, basis)?;
                return Ok((h, left.sqrt()));
            }
            // the update with its norm and the second pass's projections in one pass, one reduction
            let local = fused::maxpy_norm_mdot(w, &h, basis).map(|(n2, mut d)| {
                d.extend([n2, 0.0]);
                d
            });
            let q = sum_partials::<T>(&self.comm, local, k + 1, w)?;
            let q2 = clamp0(q[k].to_parts().0);
            let mut nu = q2.sqrt();
            let h2 = &q[..k];
            // the second pass removes rounding only (< half of what is left): its norm after, by
            // Pythagoras again, without the third reduction
            let left = q2 - h2.iter().map(|v| v.abs2_f64()).sum::<f64>();
            if nu > ETA * nu0 {
                // (one pass was enough after all: the estimate above lost to rounding)
            } else if left > ETA * ETA * q2 && left.is_finite() {
                let neg: Vec<T> = h2.iter().map(|v| -*v).collect();
                fused::maxpy(w, &neg, basis)?;
                for (a, c) in h.iter_mut().zip(h2) {
                    *a += *c;
                }
                nu = left.sqrt();
            } else {
                let local = fused::maxpy_norm(w, h2, basis).map(|v| vec![v]);
                nu = clamp0(self.comm.allreduce_checked(local, 1, ReduceOp::Sum)?[0]).sqrt();
                for (a, c) in h.iter_mut().zip(h2) {
                    *a += *c;
                }
            }
            return Ok((h, nu));
        };
        // B-inner product: two passes, then the B-norm
        self.comm.agree(pending)?;
        let mut h = vec![T::zero(); k];
        for _ in 0..2 {
            self.apply(b, w, z, "the operator b")?;
            let local = fused::mdot(basis, z);
            let hp = sum_partials::<T>(&self.comm, local, k, w)?;
            let local = fused::maxpy_norm(w, &hp, basis).map(|_| ());
            self.comm.agree(local)?;
            for (a, c) in h.iter_mut().zip(&hp) {
                *a += *c;
            }
        }
        self.apply(b, w, z, "the operator b")?;
        let local = fused::mdot(&[&*z], w);
        let n2 = sum_partials::<T>(&self.comm, local, 1, w)?[0].to_parts().0;
        // what was removed, |h|^2, is the B-norm^2 of w before: a negative remainder beyond its
        // rounding is a B that is not positive definite (reduced values: every rank alike)
        let hh: f64 = h.iter().map(|v| v.abs2_f64()).sum();
        if n2 < -1e-8 * hh || n2.is_nan() {
            crate::bail!(
                InvalidArgument,
                "b is not positive definite: w^H B w = {n2:e} for a vector orthogonalised against the basis"
            );
        }
        Ok((h, n2.max(0.0).sqrt()))
    }

    /// ||v||_M (`z` is scratch).
    pub(super) fn mnorm(&self, v: &DistVector<T>, z: &mut DistVector<T>) -> Result<f64> {
        let local = match self.p.b {
            Some(b) => {
                self.apply(b, v, z, "the operator b")?;
                fused::mdot(&[&*z], v)
            }
            None => fused::mdot(&[v], v),
        };
        let n2 = sum_partials::<T>(&self.comm, local, 1, v)?[0].to_parts().0;
        if self.p.b.is_some() && n2 < 0.0 {
            crate::bail!(
                InvalidArgument,
                "b is not positive definite: v^H B v = {n2:e} < 0 (the generalized problem needs B Hermitian positive definite)"
            );
        }
        Ok(n2)
    }
}
