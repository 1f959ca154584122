//! Finite-difference operators on N-D arrays distributed along axis 0 (PyLops-MPI's
//! MPIFirstDerivative, MPISecondDerivative, MPILaplacian, MPIGradient), with PyLops' stencils and
//! edge rules. They are applied matrix-free ([`super::stencil_op`]): the halo brings the stencil's
//! width of ghost rows from neighbouring ranks (whatever their sizes, including empty ranks), and
//! the adjoint is the mirrored stencil.

use std::sync::Arc;

use super::stencil_op::{Block, Rule, Stencil};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{Layout, Partition};

/// Stencil direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Centered,
    Forward,
    Backward,
}

impl Kind {
    pub fn from_code(c: i32) -> Option<Kind> {
        match c {
            0 => Some(Kind::Centered),
            1 => Some(Kind::Forward),
            2 => Some(Kind::Backward),
            _ => None,
        }
    }
}

/// Offsets and weights of the first derivative at position `i` of `n` (PyLops' FirstDerivative,
/// order 3 when centered; `edge` gives one-sided differences at the ends of a centered stencil).
pub fn first_coeffs(i: i64, n: i64, kind: Kind, edge: bool, dx: f64) -> Vec<(i64, f64)> {
    match kind {
        Kind::Centered if i >= 1 && i <= n - 2 => vec![(-1, -0.5 / dx), (1, 0.5 / dx)],
        Kind::Centered if edge && i == 0 => vec![(0, -1.0 / dx), (1, 1.0 / dx)],
        Kind::Centered if edge && i == n - 1 => vec![(-1, -1.0 / dx), (0, 1.0 / dx)],
        Kind::Forward if i <= n - 2 => vec![(0, -1.0 / dx), (1, 1.0 / dx)],
        Kind::Backward if i >= 1 => vec![(-1, -1.0 / dx), (0, 1.0 / dx)],
        _ => vec![],
    }
}

/// Offsets and weights of the second derivative at position `i` of `n` (PyLops' SecondDerivative).
pub fn second_coeffs(i: i64, n: i64, kind: Kind, edge: bool, dx: f64) -> Vec<(i64, f64)> {
    let h = 1.0 / (dx * dx);
    match kind {
        Kind::Centered if i >= 1 && i <= n - 2 => vec![(-1, h), (0, -2.0 * h), (1, h)],
        Kind::Centered if edge && i == 0 => vec![(0, h), (1, -2.0 * h), (2, h)],
        Kind::Centered if edge && i == n - 1 => vec![(-2, h), (-1, -2.0 * h), (0, h)],
        Kind::Forward if i <= n - 3 => vec![(0, h), (1, -2.0 * h), (2, h)],
        Kind::Backward if i >= 2 => vec![(-2, h), (-1, -2.0 * h), (0, h)],
        _ => vec![],
    }
}

fn check_nd(l: &Layout, axis: i32, min_len: i64, what: &str) -> Result<usize> {
    if l.partition().is_replicated() {
        crate::bail!(
            NotSupported,
            "{what}: the layout must be split (scatter), not {}",
            l.partition().name()
        );
    }
    let nd = l.shape().len() as i32;
    if axis < -nd || axis >= nd {
        crate::bail!(
            InvalidArgument,
            "{what}: argument 'axis' is {axis}; the layout has {nd} axes (valid: -{nd}..{})",
            nd - 1
        );
    }
    // a negative axis counts from the last, as in NumPy and PyLops
    let axis = if axis < 0 { axis + nd } else { axis };
    let n = l.shape()[axis as usize];
    if n < min_len {
        crate::bail!(
            InvalidArgument,
            "{what}: axis {axis} has {n} samples; this stencil needs at least {min_len}"
        );
    }
    Ok(axis as usize)
}

/// Stencil offsets and weights at position i of n (first_coeffs, second_coeffs).
type Coeffs = fn(i64, i64, Kind, bool, f64) -> Vec<(i64, f64)>;

/// The rule of `coeffs` along axis `a` of `l`, each weight times `scale` (axis length 1 when `a`
/// is out of range: the arguments were refused and the operator is only built to agree on that).
fn rule(l: &Layout, a: usize, coeffs: Coeffs, kind: Kind, edge: bool, dx: f64, scale: f64) -> Rule {
    let n = l.shape().get(a).copied().unwrap_or(1);
    Rule::from_fn(n, |i| {
        coeffs(i, n, kind, edge, dx)
            .into_iter()
            .map(|(o, w)| (o, scale * w))
            .collect()
    })
}

/// Bits of an f64 as an i64 (agreed across ranks).
fn bits(v: f64) -> i64 {
    v.to_bits() as i64
}

fn kind_code(k: Kind) -> i64 {
    match k {
        Kind::Centered => 0,
        Kind::Forward => 1,
        Kind::Backward => 2,
    }
}

/// One derivative along `axis`; `coeffs` is first_coeffs or second_coeffs.
#[allow(clippy::too_many_arguments)]
fn derivative<T: Scalar>(
    l: &Arc<Layout>,
    axis: i32,
    dx: f64,
    kind: Kind,
    edge: bool,
    coeffs: Coeffs,
    min_len: i64,
    what: &str,
) -> Result<Stencil<T>> {
    let pre = check_nd(l, axis, min_len, what).and_then(|a| check_dx(dx).map(|_| a));
    let ok = pre.is_ok();
    let a = *pre.as_ref().unwrap_or(&0);
    let block: Block = if ok {
        vec![(a, rule(l, a, coeffs, kind, edge, dx, 1.0))]
    } else {
        Vec::new()
    };
    Stencil::new(
        l.clone(),
        l.clone(),
        vec![block],
        pre.map(|_| ()),
        &format!("{what} arguments (axis, kind, edge, sampling bits)"),
        &[
            if ok { a as i64 } else { axis as i64 },
            kind_code(kind),
            edge as i64,
            bits(dx),
        ],
        format!("{what} along axis {a} ({kind:?}, edge {edge}, sampling {dx})"),
    )
}

/// First derivative along `axis` of an N-D array. [collective]
pub fn first_derivative<T: Scalar>(
    l: &Arc<Layout>,
    axis: i32,
    dx: f64,
    kind: Kind,
    edge: bool,
) -> Result<Stencil<T>> {
    derivative(l, axis, dx, kind, edge, first_coeffs, 2, "first derivative")
}

/// Second derivative along `axis` of an N-D array. [collective]
pub fn second_derivative<T: Scalar>(
    l: &Arc<Layout>,
    axis: i32,
    dx: f64,
    kind: Kind,
    edge: bool,
) -> Result<Stencil<T>> {
    derivative(
        l,
        axis,
        dx,
        kind,
        edge,
        second_coeffs,
        3,
        "second derivative",
    )
}

fn check_dx(dx: f64) -> Result<()> {
    if !(dx.is_finite() && dx != 0.0) {
        crate::bail!(
            InvalidArgument,
            "argument 'sampling' is {dx}; it must be finite and non-zero"
        );
    }
    Ok(())
}

/// `nd` entries of `v` as bits, NaN's for missing ones (every rank agrees on nd values).
fn all_bits(v: &[f64], nd: usize) -> impl Iterator<Item = i64> + '_ {
    (0..nd).map(move |a| bits(v.get(a).copied().unwrap_or(f64::NAN)))
}

/// sum over axes of weights[a] * (centered second derivative along a, sampling[a]); axes with a zero
/// weight are left out (PyLops' Laplacian over all axes, edge = false). [collective]
pub fn laplacian<T: Scalar>(
    l: &Arc<Layout>,
    weights: &[f64],
    sampling: &[f64],
) -> Result<Stencil<T>> {
    let nd = l.shape().len();
    let pre = (|| {
        if weights.len() != nd || sampling.len() != nd {
            crate::bail!(
                SizeMismatch,
                "laplacian: 'weights' has {} and 'sampling' {} entries; the layout has {nd} axes",
                weights.len(),
                sampling.len()
            );
        }
        for a in 0..nd {
            if !weights[a].is_finite() {
                crate::bail!(
                    InvalidArgument,
                    "laplacian: weights[{a}] is {}; it must be finite",
                    weights[a]
                );
            }
            if weights[a] != 0.0 {
                check_nd(l, a as i32, 3, "laplacian")?;
                check_dx(sampling[a])?;
            }
        }
        if l.partition().is_replicated() {
            crate::bail!(
                NotSupported,
                "laplacian: the layout must be split (scatter)"
            );
        }
        Ok(())
    })();
    let block: Block = if pre.is_ok() {
        (0..nd)
            .filter(|&a| weights[a] != 0.0)
            .map(|a| {
                let r = rule(
                    l,
                    a,
                    second_coeffs,
                    Kind::Centered,
                    false,
                    sampling[a],
                    weights[a],
                );
                (a, r)
            })
            .collect()
    } else {
        Vec::new()
    };
    let same: Vec<i64> = all_bits(weights, nd)
        .chain(all_bits(sampling, nd))
        .collect();
    Stencil::new(
        l.clone(),
        l.clone(),
        vec![block],
        pre,
        "laplacian arguments (weights and sampling bits)",
        &same,
        format!(
            "Laplacian {:?} (weights {weights:?}, sampling {sampling:?})",
            l.shape()
        ),
    )
}

/// The gradient: first derivatives along every axis (PyLops' Gradient). The output is split like the
/// input, rank r holding [d/dx_0 of its part, d/dx_1 of its part, ...] one after the other; its layout
/// is returned with the operator. [collective]
pub fn gradient<T: Scalar>(
    l: &Arc<Layout>,
    sampling: &[f64],
    kind: Kind,
    edge: bool,
) -> Result<Stencil<T>> {
    let nd = l.shape().len();
    let pre = (|| {
        if sampling.len() != nd {
            crate::bail!(
                SizeMismatch,
                "gradient: 'sampling' has {} entries; the layout has {nd} axes",
                sampling.len()
            );
        }
        for (a, &dx) in sampling.iter().enumerate() {
            check_nd(l, a as i32, 2, "gradient")?;
            check_dx(dx)?;
        }
        Ok(())
    })();
    let comm = l.comm().clone();
    let ok = pre.is_ok();
    let out_local = if ok { l.local_len() * nd as i64 } else { 0 };
    let rows = Layout::new_checked(comm, pre.clone().map(|_| Partition::Scatter), -1, out_local)?;
    let blocks: Vec<Block> = if ok {
        (0..nd)
            .map(|a| vec![(a, rule(l, a, first_coeffs, kind, edge, sampling[a], 1.0))])
            .collect()
    } else {
        vec![Vec::new()]
    };
    let mut same = vec![kind_code(kind), edge as i64];
    same.extend(all_bits(sampling, nd));
    Stencil::new(
        rows,
        l.clone(),
        blocks,
        pre,
        "gradient arguments (kind, edge, sampling bits)",
        &same,
        format!(
            "gradient {:?} ({kind:?}, edge {edge}, sampling {sampling:?})",
            l.shape()
        ),
    )
}
