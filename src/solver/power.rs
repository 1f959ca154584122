//! Power iteration for the largest eigenvalue (PyLops-MPI's power_iteration): random start (the same
//! for any number of ranks), stops when |lambda_k - lambda_{k-1}| < tol |lambda_k| or after max_iter.

use crate::error::{Result, catch_panic};
use crate::op::{LinearOperator, random_fill};
use crate::scalar::Scalar;
use crate::vector::{DistVector, dots};

/// (largest eigenvalue estimate b^H A b, iterations) for a square operator; `normal` iterates with
/// A^H A instead (whose largest eigenvalue is ||A||_2^2). [collective]
pub fn power_iteration<T: Scalar>(
    op: &dyn LinearOperator<T>,
    max_iter: i64,
    tol: f64,
    seed: u64,
    normal: bool,
) -> Result<(T, i64)> {
    if !normal && !op.rows().compatible(op.cols()) {
        crate::bail!(
            SizeMismatch,
            "power iteration needs a square operator with equal layouts; {} is {}x{}",
            op.describe(),
            op.rows().global_len(),
            op.cols().global_len()
        );
    }
    if max_iter < 1 || tol.is_nan() || tol < 0.0 {
        crate::bail!(
            InvalidArgument,
            "need max_iter >= 1 and tol >= 0, got {max_iter} and {tol}"
        );
    }
    let comm = op.cols().comm().clone();
    // allocations agreed before the first collective, so that one rank's failure stops all
    let (mut bk, mut b1, mut mid) = comm.agree((|| {
        Ok((
            DistVector::<T>::new(op.cols().clone())?,
            DistVector::<T>::new(op.cols().clone())?,
            DistVector::<T>::new(op.rows().clone())?,
        ))
    })())?;
    random_fill(&mut bk, seed);
    let n0 = dots(&comm, &[(&bk, &bk)], Ok(()))?[0].to_parts().0.sqrt();
    bk.scale(T::real(1.0 / n0))?;
    let mut old = T::zero();
    let mut lam = T::zero();
    for it in 1..=max_iter {
        // a local failure or panic is carried into the reduction below
        let e = if normal {
            catch_panic("the operator", || op.apply(&bk, &mut mid))
                .and(catch_panic("the operator's adjoint", || {
                    op.apply_adjoint(&mid, &mut b1)
                }))
        } else {
            catch_panic("the operator", || op.apply(&bk, &mut b1))
        };
        let d = dots(&comm, &[(&bk, &b1), (&b1, &b1)], e)?;
        lam = d[0];
        let nrm = super::root(d[1].to_parts().0);
        if nrm.is_nan() || nrm <= 0.0 {
            return Ok((lam, it));
        }
        bk.copy_from(&b1)?;
        bk.scale(T::real(1.0 / nrm))?;
        if (lam - old).abs_f64() < tol * lam.abs_f64() {
            return Ok((lam, it));
        }
        old = lam;
    }
    Ok((lam, max_iter))
}
