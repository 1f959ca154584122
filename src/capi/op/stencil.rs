//! Stencil operators on N-D layouts (PyLops' derivatives, Laplacian and gradient).

use std::ffi::c_int;

use super::super::args::{stencil_arg, value_slice, with_dtype};
use super::super::handles::{arg, guard, parlops_layout, parlops_op};
use super::super::types::{parlops_dtype, parlops_status, parlops_stencil};
use super::{create_op, op_of};
use crate::error::Result;
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
    Ok(unsafe { value_slice::<f64>(p.cast(), n, name)? }.to_vec())
}

/// First derivative along `axis` of an N-D array (layout from parlops_layout_create_nd, split along
/// axis 0), PyLops' stencils: centered (3-point; `edge` uses one-sided differences at the ends),
/// forward or backward; `sampling` is the grid step. [collective]
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
/// sampling[a] (arrays of ndim entries; a zero weight leaves the axis out). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_laplacian(
    layout: *const parlops_layout,
    weights: *const f64,
    sampling: *const f64,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_laplacian", || {
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
