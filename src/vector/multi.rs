//! Multi-vectors as slices of vectors (PETSc's VecMDot/VecMAXPY, SLEPc's BV, hIPPYlib's
//! MultiVector): every pair's dot product in one reduction and `y += sum_k a_k x_k` in one pass
//! (orthonormalisation, which may take an operator, is `eigen::orth`).

use super::{DistVector, fused, sum_partials};
use crate::error::Result;
use crate::scalar::Scalar;

/// x_i^H y_j for every pair, in ONE reduction: row-major, `nx` rows of `ny` (one pass over both sets
/// on the host, one pass over the x's per y on a device). Vectors must share a layout and memory. [collective]
pub fn block_dot<T: Scalar>(
    xs: &[&DistVector<T>],
    ys: &[&DistVector<T>],
    pre: Result<()>,
) -> Result<Vec<T>> {
    pairs(xs, ys, pre, fused::block_dot)
}

/// This rank's sums of every pair of two sets (`fused::block_dot`, `fused::gram`).
type LocalPairs<T> = fn(&[&DistVector<T>], &[&DistVector<T>]) -> Result<Vec<f64>>;

/// Every pair's local sums by `local`, reduced in one reduction.
fn pairs<T: Scalar>(
    xs: &[&DistVector<T>],
    ys: &[&DistVector<T>],
    pre: Result<()>,
    local: LocalPairs<T>,
) -> Result<Vec<T>> {
    let (nx, ny) = (xs.len(), ys.len());
    let Some(first) = xs.first().or(ys.first()) else {
        return Ok(Vec::new());
    };
    let comm = first.layout().comm().clone();
    let local = pre.and_then(|_| {
        let mut parts = Vec::new();
        parts
            .try_reserve_exact(2 * nx * ny)
            .map_err(|_| crate::err!(OutOfMemory, "{nx} x {ny} dot products"))?;
        parts.extend(local(xs, ys)?);
        Ok(parts)
    });
    if nx * ny == 0 {
        comm.agree(local)?;
        return Ok(Vec::new());
    }
    sum_partials::<T>(&comm, local, nx * ny, first)
}

/// The pairs of [`block_dot`] in ONE reduction, each local sum in whatever order is fastest
/// ([`fused::gram`]: not the bits of a dot product; block methods' small matrices). [collective]
pub fn gram<T: Scalar>(
    xs: &[&DistVector<T>],
    ys: &[&DistVector<T>],
    pre: Result<()>,
) -> Result<Vec<T>> {
    pairs(xs, ys, pre, fused::gram)
}

/// outs[q] += sum_a c[q * ins.len() + a] ins[a] for every q (a block method's update, each sum in
/// whatever order is fastest), then the pairs of [`gram`] of [ins, outs] against the new outs in
/// ONE reduction (row-major, ins.len() + outs.len() rows of outs.len()): on the host one pass, each
/// block of entries summed while it is in the cache. `pre`, the caller's pending outcome, joins the
/// reduction (nothing is updated where it failed). [collective]
pub fn update_gram<T: Scalar>(
    outs: &mut [&mut DistVector<T>],
    c: &[T],
    ins: &[&DistVector<T>],
    pre: Result<()>,
) -> Result<Vec<T>> {
    let Some(first) = ins.first() else {
        crate::bail!(
            InvalidArgument,
            "an update with its Gram matrix of no vectors"
        );
    };
    let n = (ins.len() + outs.len()) * outs.len();
    let comm = first.layout().comm().clone();
    let local = pre.and_then(|_| fused::update_gram(outs, c, ins));
    sum_partials::<T>(&comm, local, n, first)
}

/// y += sum_k a_k x_k in one pass (entry by entry in the order of `xs`). Not collective.
pub fn maxpy<T: Scalar>(y: &mut DistVector<T>, a: &[T], xs: &[&DistVector<T>]) -> Result<()> {
    let neg: Vec<T> = a.iter().map(|v| -*v).collect();
    fused::maxpy_norm(y, &neg, xs).map(|_| ())
}
