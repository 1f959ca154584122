//! Stencil operators on N-D layouts (PyLops' derivatives, Laplacian and gradient).

use std::ffi::c_int;

use super::super::args::{array_arg, stencil_arg, value_slice, with_dtype};
use super::super::handles::{arg, guard, parlops_layout, parlops_op};
use super::super::types::{parlops_dtype, parlops_status, parlops_stencil};
use super::{create_op, op_of};
use crate::error::Result;
use crate::op::poisson::Poisson;
use crate::op::stencil;

/// Shared by the first and second derivative constructors.
#[allow(clippy::too_many_arguments)]
fn derivative(
    layout: *const parlops_layout,
    axis: c_int,
    sampling: f64,
    kind: parlops_stencil,
    edge: bool,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
    second: bool,
) -> Result<()> {
    // SAFETY: `layout` is the handle argument of the exported derivative call using this; `arg`
    // checks it (live parlops_layout) and holds it for that call.
    let l = &unsafe { arg(layout, "layout")? }.inner;
    let k = stencil_arg(kind);
    let pre = k.as_ref().map(|_| ()).map_err(|e| e.clone());
    create_op(l.comm(), dtype, out, pre, |d| {
        let k = k?;
        with_dtype!(d, T => if second {
            stencil::second_derivative::<T>(l, axis, sampling, k, edge).map(op_of::<T>)
        } else {
            stencil::first_derivative::<T>(l, axis, sampling, k, edge).map(op_of::<T>)
        })
    })
}

/// `n` values of the caller's f64 array, copied.
fn f64_array(p: *const f64, n: usize, name: &str) -> Result<Vec<f64>> {
    // SAFETY: `f64_array` is called only with the C caller's `weights` and `sampling`, which hold
    // one double per axis of the layout, `n` (header contracts of parlops_op_laplacian and
    // _gradient); `value_slice` checks NULL, alignment and device memory, and the values are copied
    // at once.
    Ok(unsafe { value_slice::<f64>(p.cast(), n, name)? }.to_vec())
}

/// First derivative along `axis` of an N-D array (layout from parlops_layout_create_nd, split along
/// axis 0; a negative `axis` counts from the last, as in NumPy and PyLops), PyLops' stencils: centered (3-point; `edge` uses one-sided differences at the ends),
/// forward or backward; `sampling` is the grid step.
///
/// The stencil operators (the derivatives, the Laplacian and the gradient) are matrix-free: nothing
/// is assembled, a product reads x once and writes y once (16 bytes per double entry), and the halo
/// is the stencil's width (1 or 2 slabs of the faster axes, for axis 0) from the neighbouring ranks,
/// brought while the rows that need no ghosts are computed. Their adjoints are the mirrored stencils.
/// Every rank must pass the same axis, sampling, kind and edge; a difference fails on every rank.
/// Vectors in device memory are staged through host copies. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_first_derivative(
    layout: *const parlops_layout,
    axis: c_int,
    sampling: f64,
    kind: parlops_stencil,
    edge: bool,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_first_derivative", || {
        derivative(layout, axis, sampling, kind, edge, dtype, out, false)
    })
}

/// Second derivative along `axis` (PyLops' SecondDerivative; `edge` for centered stencils). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_second_derivative(
    layout: *const parlops_layout,
    axis: c_int,
    sampling: f64,
    kind: parlops_stencil,
    edge: bool,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_second_derivative", || {
        derivative(layout, axis, sampling, kind, edge, dtype, out, true)
    })
}

/// Laplacian: sum over all axes of weights[a] times the centered second derivative with step
/// sampling[a] (arrays of ndim entries, the same on every rank; a zero weight leaves the axis out;
/// a weight must be finite). Matrix-free, with its diagonal (Jacobi). PyLops' edge rule (edge =
/// false): each axis' second derivative is zero on that axis' first and last slab. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_laplacian(
    layout: *const parlops_layout,
    weights: *const f64,
    sampling: *const f64,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_laplacian", || {
        // SAFETY: `arg` checks `layout` (live parlops_layout) and holds it for this call.
        let l = &unsafe { arg(layout, "layout")? }.inner;
        let nd = l.shape().len();
        let arrays = f64_array(weights, nd, "weights")
            .and_then(|w| Ok((w, f64_array(sampling, nd, "sampling")?)));
        let pre = arrays.as_ref().map(|_| ()).map_err(|e| e.clone());
        create_op(l.comm(), dtype, out, pre, |d| {
            let (w, s) = arrays?;
            with_dtype!(d, T => stencil::laplacian::<T>(l, &w, &s).map(op_of::<T>))
        })
    })
}

/// Gradient: first derivatives along every axis (sampling has ndim entries). The output layout is
/// split like the input with rank r holding [d/dx_0 of its slab, d/dx_1 of its slab, ...]; get it with
/// parlops_op_layouts or parlops_op_create_vecs. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_gradient(
    layout: *const parlops_layout,
    sampling: *const f64,
    kind: parlops_stencil,
    edge: bool,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_gradient", || {
        // SAFETY: as above: `layout` is checked and held by `arg` for this call.
        let l = &unsafe { arg(layout, "layout")? }.inner;
        let nd = l.shape().len();
        let args = stencil_arg(kind).and_then(|k| Ok((k, f64_array(sampling, nd, "sampling")?)));
        let pre = args.as_ref().map(|_| ()).map_err(|e| e.clone());
        create_op(l.comm(), dtype, out, pre, |d| {
            let (k, s) = args?;
            with_dtype!(d, T => stencil::gradient::<T>(l, &s, k, edge).map(op_of::<T>))
        })
    })
}

/// The matrix-free Laplacian of a 1-, 2- or 3-D grid (3-, 5- or 7-point: 2 ndim on the diagonal,
/// -1 for each neighbour inside the grid; Dirichlet boundaries eliminated, unit spacing), the
/// constant-coefficient Poisson operator PDE codes benchmark with. No matrix is stored: a product
/// moves 16 bytes per double row, against about 80 for the assembled 5-point matrix. `dims` holds
/// `ndim` extents, slowest first (C order: point (i, j) of an ny x nx grid is row i nx + j); their
/// product is the layout's global length. The layout is any split (scatter) layout: ranks may hold
/// parts of grid lines, or nothing. Every rank must pass the same ndim and dims. Symmetric (its
/// adjoint is itself); it has a diagonal (Jacobi, Chebyshev); vectors in device memory are staged
/// through host copies. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_poisson(
    layout: *const parlops_layout,
    ndim: c_int,
    dims: *const i64,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_poisson", || {
        // SAFETY: as above: `layout` is checked and held by `arg` for this call.
        let l = &unsafe { arg(layout, "layout")? }.inner;
        let d: Result<Vec<i64>> = (|| {
            if !(1..=3).contains(&ndim) {
                crate::bail!(
                    InvalidArgument,
                    "argument 'ndim' is {ndim}; the Poisson operator has 1, 2 or 3 dimensions"
                );
            }
            // SAFETY: `ndim` is 1..=3 (checked above) and the C caller promises `ndim` extents at
            // `dims` (header contract of parlops_op_poisson); `array_arg` checks NULL, alignment
            // and device memory, and the extents are copied at once.
            Ok(unsafe { array_arg::<i64>(dims.cast(), ndim as usize, "dims")? }.to_vec())
        })();
        let pre = d.as_ref().map(|_| ()).map_err(|e| e.clone());
        let dd = d.clone().unwrap_or_default();
        create_op(
            l.comm(),
            dtype,
            out,
            pre.clone(),
            |t| with_dtype!(t, T => Poisson::<T>::new(l.clone(), &dd, pre).map(op_of::<T>)),
        )
    })
}
