//! The executor's steps over two sets of vectors (a small Gram matrix, several combinations of one
//! set): one pass on the host ([`super::host::block`]); on a device, one multi-vector step per
//! vector of the second set (the same sums and combinations, each reading the set again).

use super::{Exec, Part, fill, maxpy, mdot};

/// A Gram matrix formed range of rows by range of rows while each is in the cache (a product's
/// rows just written): [`super::host::gram::GramRows`].
pub(crate) use super::host::gram::GramRows;
use crate::error::Result;
use crate::scalar::Scalar;

fn on_host<T: Scalar>(parts: &[&Part<T>]) -> bool {
    parts.iter().all(|p| matches!(p.exec(), Exec::Host))
}

/// conj(x_i).y_j for every pair as (re, im) pairs, row-major (`xs.len()` rows of `ys.len()`); each
/// sum has the bits of [`super::ops::dot`] (host) or of the backend's [`mdot`].
pub fn block_dot<T: Scalar>(xs: &[&Part<T>], ys: &[&Part<T>]) -> Result<Vec<f64>> {
    if on_host(xs) && on_host(ys) {
        let f = || super::host::block::block_dot(xs, ys);
        return crate::timing::timed(crate::timing::Phase::Vector, 0, f);
    }
    let (nx, ny) = (xs.len(), ys.len());
    let len = nx
        .checked_mul(ny)
        .and_then(|p| p.checked_mul(2))
        .ok_or_else(|| crate::err!(OutOfMemory, "{nx} x {ny} pairs"))?;
    let mut out = Vec::new();
    crate::error::try_reserve(&mut out, len, "the pairs' sums")?;
    out.resize(len, 0.0);
    for (j, y) in ys.iter().enumerate() {
        let col = mdot(xs, y)?;
        for i in 0..nx {
            out[2 * (i * ny + j)] = col[2 * i];
            out[2 * (i * ny + j) + 1] = col[2 * i + 1];
        }
    }
    Ok(out)
}

/// The pairs of [`block_dot`], each sum in whatever order is fastest (on the host, double precision:
/// register tiles with fused multiply-adds, [`super::host::gram`]; elsewhere `block_dot`'s): for a
/// block method's small matrices, not for sums that must have the bits of a dot product.
pub fn gram<T: Scalar>(xs: &[&Part<T>], ys: &[&Part<T>]) -> Result<Vec<f64>> {
    if on_host(xs) && on_host(ys) {
        let f = || Ok(super::host::gram::gram(xs, ys));
        if let Some(g) = crate::timing::timed(crate::timing::Phase::Vector, 0, f)? {
            return Ok(g);
        }
    }
    block_dot(xs, ys)
}

/// outs[q] = sum_a c[q * ins.len() + a] ins[a] for every q (per entry, zero plus each term in the
/// order of `ins`: the bits of a fill with zero then [`maxpy`]); with `add`, outs[q] += that sum
/// (the bits of [`maxpy`] alone).
pub fn combine<T: Scalar>(
    outs: &mut [&mut Part<T>],
    c: &[T],
    ins: &[&Part<T>],
    add: bool,
) -> Result<()> {
    let n = ins.len();
    if c.len() != outs.len() * n {
        crate::bail!(
            SizeMismatch,
            "{} coefficients for {} outputs of {n} vectors",
            c.len(),
            outs.len()
        );
    }
    if outs.iter().all(|o| matches!(o.exec(), Exec::Host)) && on_host(ins) {
        let f = || super::host::block::combine(outs, c, ins, add);
        return crate::timing::timed(crate::timing::Phase::Vector, 0, f);
    }
    for (q, o) in outs.iter_mut().enumerate() {
        if !add {
            fill(o, T::zero())?;
        }
        maxpy(o, &c[q * n..(q + 1) * n], ins)?;
    }
    Ok(())
}

/// outs[q] = base[q] + sum_a c[q * ins.len() + a] ins[a] for every q (no `base`: outs[q] +=), each
/// sum in whatever order is fastest (on the host, double precision: fused multiply-adds in
/// register tiles, [`super::host::gram`]; elsewhere a copy and [`combine`]'s): for a block method's
/// updates, not where the bits of axpys matter.
pub fn update<T: Scalar>(
    outs: &mut [&mut Part<T>],
    base: Option<&[&Part<T>]>,
    c: &[T],
    ins: &[&Part<T>],
) -> Result<()> {
    let host = |p: &Part<T>| matches!(p.exec(), Exec::Host);
    if outs.iter().all(|o| host(o)) && on_host(ins) && base.is_none_or(on_host) {
        let f = || Ok(super::host::gram::update(outs, base, c, ins));
        if crate::timing::timed(crate::timing::Phase::Vector, 0, f)? {
            return Ok(());
        }
    }
    if let Some(b) = base {
        if b.len() != outs.len() {
            crate::bail!(SizeMismatch, "{} bases for {} outputs", b.len(), outs.len());
        }
        for (o, b) in outs.iter_mut().zip(b) {
            super::copy(o, b)?;
        }
    }
    combine(outs, c, ins, true)
}

/// outs[q] += sum_a c[q * ins.len() + a] ins[a] for every q (as [`update`] without bases), then
/// the pairs of [`gram`] of [ins, outs] against the new outs: on the host in double precision in
/// one pass ([`super::host::gram::update_gram`], the same bits as the two steps), elsewhere the
/// two steps.
pub fn update_gram<T: Scalar>(
    outs: &mut [&mut Part<T>],
    c: &[T],
    ins: &[&Part<T>],
) -> Result<Vec<f64>> {
    let host = |p: &Part<T>| matches!(p.exec(), Exec::Host);
    if outs.iter().all(|o| host(o)) && on_host(ins) {
        let f = || Ok(super::host::gram::update_gram(outs, c, ins));
        if let Some(g) = crate::timing::timed(crate::timing::Phase::Vector, 0, f)? {
            return Ok(g);
        }
    }
    update(outs, None, c, ins)?;
    let xs: Vec<&Part<T>> = ins
        .iter()
        .copied()
        .chain(outs.iter().map(|o| &**o))
        .collect();
    let ys: Vec<&Part<T>> = outs.iter().map(|o| &**o).collect();
    gram(&xs, &ys)
}

/// conj(x).y of each pair as binned sums (re, im): the reproducible mode's dot products
/// ([`super::ops::dot_binned`]; on device vectors through host copies). A step of the backend of
/// the first vector.
pub fn dots_binned<T: Scalar>(
    pairs: &[(&Part<T>, &Part<T>)],
) -> Result<Vec<crate::binned::Binned>> {
    use super::Backend;
    crate::timing::timed(crate::timing::Phase::Vector, 0, || {
        match pairs.first().map(|(x, _)| x.exec()) {
            None => Ok(Vec::new()),
            Some(Exec::Host) => <super::host::Host as Backend>::dots_binned(pairs),
            Some(Exec::Cuda(_)) => <super::cuda::Cuda as Backend>::dots_binned(pairs),
        }
    })
}
