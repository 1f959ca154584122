//! Eigensolvers for the low-rank models of inverse problems (hIPPYlib's randomized eigensolvers)
//! and for spectral bounds (Lanczos): all collective, built on the multi-vector operations
//! ([`crate::vector::multi`]) with the small dense work ([`dense`]) done alike on every rank from
//! reduced values.

pub mod dense;
pub mod krylov_schur;
mod ks_finish;
mod ks_orth;
pub mod lanczos;
pub mod orth;
pub mod randomized;
mod rotate;
pub mod tridiag;

use std::sync::Arc;

use crate::comm::Comm;
use crate::error::Result;
use crate::op::LinearOperator;
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout};

/// `n` zero vectors like `like` (its layout and memory); a failure on any rank fails on every rank.
/// [collective]
pub(crate) fn alloc<T: Scalar>(
    comm: &Comm,
    n: usize,
    like: &DistVector<T>,
) -> Result<Vec<DistVector<T>>> {
    let v = (|| {
        let mut out = Vec::new();
        out.try_reserve_exact(n)
            .map_err(|_| crate::err!(OutOfMemory, "{n} vectors"))?;
        for _ in 0..n {
            let mut v = like.duplicate()?;
            v.fill(T::zero())?;
            out.push(v);
        }
        Ok(out)
    })();
    comm.agree(v)
}

/// ys[i] = op xs[i] for every i, the failures agreed. [collective]
pub(crate) fn apply_all<T: Scalar>(
    comm: &Comm,
    op: &dyn LinearOperator<T>,
    xs: &[DistVector<T>],
    ys: &mut [DistVector<T>],
) -> Result<()> {
    let mut e = Ok(());
    for (x, y) in xs.iter().zip(ys.iter_mut()) {
        let r = crate::error::catch_panic("the operator", || op.apply(x, y));
        e = e.and(r);
    }
    comm.agree(e)
}

/// Is `op` square on `l`'s index space? An error naming `what` otherwise.
pub(crate) fn check_square<T: Scalar>(
    op: &dyn LinearOperator<T>,
    l: &Arc<Layout>,
    what: &str,
) -> Result<()> {
    if !op.rows().compatible(l) || !op.cols().compatible(l) {
        crate::bail!(
            SizeMismatch,
            "{what} ({}, {} x {}) must be square on the vectors' layout ({} entries, split alike)",
            op.describe(),
            op.rows().global_len(),
            op.cols().global_len(),
            l.global_len()
        );
    }
    Ok(())
}
