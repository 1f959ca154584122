//! Finite-difference operators on N-D arrays distributed along axis 0 (PyLops-MPI's
//! MPIFirstDerivative, MPISecondDerivative, MPILaplacian, MPIGradient), with PyLops' stencils and
//! edge rules. They are assembled as distributed CSR matrices: the halo plan then brings the ghost
//! rows of axis 0 from neighbouring ranks (whatever their sizes, including empty ranks), and the
//! adjoint is the transposed scatter.

use std::sync::Arc;

use super::csr::CsrOp;
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

fn strides(shape: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; shape.len()];
    for a in (0..shape.len().saturating_sub(1)).rev() {
        s[a] = s[a + 1] * shape[a + 1];
    }
    s
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
    if axis < 0 || axis >= nd {
        crate::bail!(
            InvalidArgument,
            "{what}: argument 'axis' is {axis}; the layout has {nd} axes"
        );
    }
    let n = l.shape()[axis as usize];
    if n < min_len {
        crate::bail!(
            InvalidArgument,
            "{what}: axis {axis} has {n} samples; this stencil needs at least {min_len}"
        );
    }
    Ok(axis as usize)
}

/// Assemble rows `out_offset..` of a CSR whose output entry for input position `g` is
/// sum over (axis, coefficients) of coefficient * x[g + offset * stride].
type Terms<'a> = dyn Fn(&[i64]) -> Vec<(usize, i64, f64)> + 'a;

fn entries(shape: &[i64], g: i64, terms: &Terms) -> Vec<(i64, f64)> {
    let st = strides(shape);
    let idx: Vec<i64> = st
        .iter()
        .zip(shape)
        .map(|(s, n)| (g / s) % n.max(&1))
        .collect();
    let mut e: Vec<(i64, f64)> = terms(&idx)
        .into_iter()
        .map(|(a, o, w)| (g + o * st[a], w))
        .collect();
    e.sort_by_key(|x| x.0);
    let mut out: Vec<(i64, f64)> = Vec::with_capacity(e.len());
    for (c, w) in e {
        match out.last_mut() {
            Some(l) if l.0 == c => l.1 += w,
            _ => out.push((c, w)),
        }
    }
    out
}

/// Build the CSR: `blocks` output blocks on each rank, block b holding terms_b for each local input
/// position (Gradient stacks one block per axis; the others have one).
fn assemble<T: Scalar>(
    rows: Arc<Layout>,
    cols: Arc<Layout>,
    blocks: &[&Terms],
    pre: Result<()>,
) -> Result<CsrOp<T>> {
    let shape = cols.shape().to_vec();
    let (s, len) = (cols.local_start(), cols.local_len());
    let (mut p, mut ix, mut v) = (vec![0i64], Vec::new(), Vec::new());
    // sized by the caller's shape: every allocation fallible, a failure agreed by from_local_rows
    let mut fill = || -> Result<()> {
        let nrows = (len as usize).saturating_mul(blocks.len());
        crate::error::try_reserve(&mut p, nrows, "the stencil's row pointer")?;
        for terms in blocks {
            for g in s..s + len {
                for (c, w) in entries(&shape, g, terms) {
                    if ix.len() == ix.capacity() {
                        let more = ix.len().max(16);
                        crate::error::try_reserve(&mut ix, more, "the stencil's column indices")?;
                        crate::error::try_reserve(&mut v, more, "the stencil's values")?;
                    }
                    ix.push(c);
                    v.push(T::from_parts_lossy(w, 0.0));
                }
                p.push(ix.len() as i64);
            }
        }
        Ok(())
    };
    let pre = pre.and_then(|_| fill());
    if pre.is_err() {
        (p, ix, v) = (vec![0i64], Vec::new(), Vec::new());
    }
    CsrOp::from_local_rows(rows, cols, &p, &ix, &v, pre)
}

/// Stencil offsets and weights at position i of n (first_coeffs, second_coeffs).
type Coeffs = fn(i64, i64, Kind, bool, f64) -> Vec<(i64, f64)>;

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
) -> Result<CsrOp<T>> {
    let pre = check_nd(l, axis, min_len, what).and_then(|a| check_dx(dx).map(|_| a));
    let a = *pre.as_ref().unwrap_or(&0);
    let n = l.shape().get(a).copied().unwrap_or(1);
    let f = move |idx: &[i64]| -> Vec<(usize, i64, f64)> {
        coeffs(idx[a], n, kind, edge, dx)
            .into_iter()
            .map(|(o, w)| (a, o, w))
            .collect()
    };
    assemble(l.clone(), l.clone(), &[&f], pre.map(|_| ()))
}

/// First derivative along `axis` of an N-D array. [collective]
pub fn first_derivative<T: Scalar>(
    l: &Arc<Layout>,
    axis: i32,
    dx: f64,
    kind: Kind,
    edge: bool,
) -> Result<CsrOp<T>> {
    derivative(l, axis, dx, kind, edge, first_coeffs, 2, "first derivative")
}

/// Second derivative along `axis` of an N-D array. [collective]
pub fn second_derivative<T: Scalar>(
    l: &Arc<Layout>,
    axis: i32,
    dx: f64,
    kind: Kind,
    edge: bool,
) -> Result<CsrOp<T>> {
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

/// sum over axes of weights[a] * (centered second derivative along a, sampling[a]); axes with a zero
/// weight are left out (PyLops' Laplacian over all axes, edge = false). [collective]
pub fn laplacian<T: Scalar>(
    l: &Arc<Layout>,
    weights: &[f64],
    sampling: &[f64],
) -> Result<CsrOp<T>> {
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
    let shape = l.shape().to_vec();
    let (w, dxs) = (weights.to_vec(), sampling.to_vec());
    let ok = pre.is_ok();
    let f = move |idx: &[i64]| -> Vec<(usize, i64, f64)> {
        let mut t = Vec::new();
        if ok {
            for a in 0..idx.len() {
                if w[a] != 0.0 {
                    for (o, c) in second_coeffs(idx[a], shape[a], Kind::Centered, false, dxs[a]) {
                        t.push((a, o, w[a] * c));
                    }
                }
            }
        }
        t
    };
    assemble(l.clone(), l.clone(), &[&f], pre)
}

/// The gradient: first derivatives along every axis (PyLops' Gradient). The output is split like the
/// input, rank r holding [d/dx_0 of its part, d/dx_1 of its part, ...] one after the other; its layout
/// is returned with the operator. [collective]
pub fn gradient<T: Scalar>(
    l: &Arc<Layout>,
    sampling: &[f64],
    kind: Kind,
    edge: bool,
) -> Result<CsrOp<T>> {
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
    let out_local = if pre.is_ok() {
        l.local_len() * nd as i64
    } else {
        0
    };
    let rows = Layout::new_checked(comm, pre.clone().map(|_| Partition::Scatter), -1, out_local)?;
    let shape = l.shape().to_vec();
    let fs: Vec<Box<Terms>> = (0..nd)
        .map(|a| {
            let (n, dx) = (shape[a], sampling[a]);
            Box::new(move |idx: &[i64]| -> Vec<(usize, i64, f64)> {
                first_coeffs(idx[a], n, kind, edge, dx)
                    .into_iter()
                    .map(|(o, w)| (a, o, w))
                    .collect()
            }) as Box<Terms>
        })
        .collect();
    let refs: Vec<&Terms> = fs.iter().map(|b| b.as_ref()).collect();
    assemble(rows, l.clone(), &refs, pre)
}
