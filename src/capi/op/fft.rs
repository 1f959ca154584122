//! The distributed FFT (PyLops-MPI's MPIFFTND and MPIFFT2D).

use std::ffi::c_int;

use super::super::args::array_arg;
use super::super::handles::{arg, guard, parlops_layout, parlops_op};
use super::super::types::{parlops_dtype, parlops_status};
use super::{create_op, op_of};
use crate::error::Result;
use crate::op::fft::{Fft, Spec, normalise_axes};
use crate::op::nsconv::{NsConv, NsSpec};
use crate::scalar::{DType, c32, c64};

/// The FFT without scaling (PyLops' norm="none"): the adjoint is the unscaled inverse transform.
pub const PARLOPS_FFT_NORM_NONE: c_int = 0;
/// Forward and adjoint both scaled by 1/N, N the product of the transformed lengths (PyLops'
/// norm="1/n").
pub const PARLOPS_FFT_NORM_1_OVER_N: c_int = 1;

/// `n` flags of the caller's bool array (NULL: all false), read as bytes (any non-zero is true).
fn flags(p: *const bool, n: usize, name: &str) -> Result<Vec<bool>> {
    if p.is_null() {
        return Ok(vec![false; n]);
    }
    // SAFETY: `p` is not NULL and the C caller promises `naxes` bools there (header contract of
    // parlops_op_fft); they are read as bytes, so a byte other than 0 or 1 is not undefined
    // behaviour, and copied at once. `array_arg` checks alignment and device memory.
    let b = unsafe { array_arg::<u8>(p.cast(), n, name)? };
    Ok(b.iter().map(|&v| v != 0).collect())
}

/// N-D FFT of an array (layout from parlops_layout_create_nd, split along axis 0 with any extents
/// by rank, or a 1-D split layout) along the `naxes` axes in `axes` (negative counts from the end,
/// as NumPy's; no axis twice), PyLops-MPI's MPIFFTND (and MPIFFT2D with two axes):
/// y = FFT(x) unscaled (`norm` PARLOPS_FFT_NORM_NONE; the adjoint is the unscaled inverse) or
/// scaled by 1/N both ways (PARLOPS_FFT_NORM_1_OVER_N), N the product of the transformed lengths.
/// `ifftshift_before` and `fftshift_after` (NULL: none) hold one flag per entry of `axes`: NumPy's
/// ifftshift of x and fftshift of y along that axis (the adjoint undoes them).
///
/// `dtype` is the type of the model as PyLops takes it; the operator's vectors are always complex
/// (c64 for f32 and c64, c128 for f64 and c128), as PyLops' operator dtype is. A real `dtype`
/// transforms the real part of x and its adjoint returns a real vector (zero imaginary parts).
/// `real` (PyLops' real=True, any dtype) also keeps only the n/2 + 1 non-negative frequencies of
/// the last entry of `axes`, those strictly between zero and Nyquist scaled by sqrt(2) (so that the
/// adjoint is PyLops' inverse real FFT with its 1/sqrt(2)); that axis then has n/2 + 1 entries in
/// the output. Such operators are real-linear only: their dot test holds for real parts.
///
/// The output is split along axis 0 like x (get its layout with parlops_op_layouts or
/// parlops_op_create_vecs); when `real` shortens axis 0 itself, by the default split (the first
/// n0 % P ranks one more), as PyLops-MPI's. The axes other than 0 are transformed where they lie;
/// when axis 0 is transformed, the array moves to a split along the longest other axis by one
/// all-to-all and back by another (a 1-D array is gathered on every rank). Local transforms by
/// rustfft (every length, mixed radix; AVX where the CPU has it). Vectors in device memory are
/// staged through host copies. Every rank must pass the same axes, norm, real and flags; a
/// difference fails on every rank. [collective]
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn parlops_op_fft(
    layout: *const parlops_layout,
    naxes: c_int,
    axes: *const c_int,
    norm: c_int,
    real: bool,
    ifftshift_before: *const bool,
    fftshift_after: *const bool,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_fft", || {
        // SAFETY: `layout` is the handle argument of this call; `arg` checks it (live
        // parlops_layout) and holds it for the call.
        let l = &unsafe { arg(layout, "layout")? }.inner;
        let nd = l.shape().len();
        let spec: Result<Spec> = (|| {
            if !(1..=64).contains(&naxes) {
                crate::bail!(
                    InvalidArgument,
                    "argument 'naxes' is {naxes}; it must be 1..{nd} (the layout's axes)"
                );
            }
            let n = naxes as usize;
            // SAFETY: `naxes` is 1..=64 (checked above) and the C caller promises `naxes` ints at
            // `axes` (header contract); `array_arg` checks NULL, alignment and device memory, and
            // the values are copied at once.
            let a: Vec<i64> = unsafe { array_arg::<c_int>(axes.cast(), n, "axes")? }
                .iter()
                .map(|&v| v as i64)
                .collect();
            let axes = normalise_axes(&a, nd)?;
            let norm_1n = match norm {
                PARLOPS_FFT_NORM_NONE => false,
                PARLOPS_FFT_NORM_1_OVER_N => true,
                _ => crate::bail!(
                    InvalidArgument,
                    "argument 'norm' is {norm}; it must be PARLOPS_FFT_NORM_NONE (0) or \
                     PARLOPS_FFT_NORM_1_OVER_N (1)"
                ),
            };
            let complex_model = matches!(
                super::super::args::dtype_arg(dtype),
                Ok(DType::C64) | Ok(DType::C128)
            );
            Ok(Spec {
                axes,
                norm_1n,
                real,
                clinear: complex_model && !real,
                ifftshift_before: flags(ifftshift_before, n, "ifftshift_before")?,
                fftshift_after: flags(fftshift_after, n, "fftshift_after")?,
            })
        })();
        let pre = spec.as_ref().map(|_| ()).map_err(|e| e.clone());
        create_op(l.comm(), dtype, out, pre, |d| match d {
            DType::F32 | DType::C64 => Fft::<f32>::new(l.clone(), spec).map(op_of::<c32>),
            DType::F64 | DType::C128 => Fft::<f64>::new(l.clone(), spec).map(op_of::<c64>),
        })
    })
}

/// Non-stationary 1-D convolution (PyLops' NonStationaryConvolve1D, PyLops-MPI's
/// MPINonStationaryConvolve1D) along `axis` of the array of `layout` (a 1-D split layout, or an N-D
/// one from parlops_layout_create_nd split along axis 0; negative axes count from the end): `nfilts`
/// filters of `hsize` taps (odd; `hs`, row-major, entries of `dtype`) at the positions `ih` along the
/// axis (at least two, increasing with a constant step, inside the axis), linearly interpolated in
/// between and held beyond the first and last. Each input sample i spreads its filter h_i around
/// it: y[j] = sum_i h_i[j - i + hsize/2] x[i] over |j - i| <= hsize/2, the terms added in order of
/// i (as PyLops adds them). The adjoint gathers with conj(h_i) (PyLops' rmatvec, which does not
/// conjugate: the same for real filters). Square, on `layout`. Along axis 0 each rank exchanges a
/// halo of hsize/2 slabs with whichever ranks hold them (any split, empty ranks included; PyLops-MPI
/// needs an even split with filters on every rank); along another axis nothing moves. Vectors in
/// device memory are staged through host copies. Every rank must pass the same axis and filters; a
/// difference fails on every rank. [collective]
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn parlops_op_nonstationary_convolve1d(
    layout: *const parlops_layout,
    axis: c_int,
    hsize: i64,
    nfilts: i64,
    hs: *const std::ffi::c_void,
    ih: *const i64,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_nonstationary_convolve1d", || {
        // SAFETY: `layout` is the handle argument of this call; `arg` checks it (live
        // parlops_layout) and holds it for the call.
        let l = &unsafe { arg(layout, "layout")? }.inner;
        let sizes = (|| {
            if nfilts < 0 || hsize < 0 {
                crate::bail!(
                    InvalidArgument,
                    "arguments 'nfilts' and 'hsize' must not be negative; got {nfilts} and {hsize}"
                );
            }
            Ok(crate::error::checked_product(
                "argument 'hs'",
                &[("nfilts", nfilts), ("hsize", hsize)],
            )? as usize)
        })();
        create_op(l.comm(), dtype, out, Ok(()), |d| {
            crate::capi::args::with_dtype!(d, T => {
                let spec = sizes.and_then(|n| {
                    // SAFETY: the C caller promises `nfilts` * `hsize` entries of `dtype` at `hs`
                    // and `nfilts` int64 at `ih` (header contract); `value_slice` and `array_arg`
                    // check NULL, alignment and device memory, and the values are copied at once.
                    let h = unsafe { crate::capi::args::value_slice::<T>(hs, n, "hs")? };
                    // SAFETY: as above, `nfilts` int64 values at `ih`.
                    let p = unsafe { array_arg::<i64>(ih.cast(), nfilts as usize, "ih")? };
                    Ok(NsSpec {
                        axis: axis as i64,
                        hsize,
                        hs: crate::op::copied(h, "a copy of 'hs'")?,
                        ih: crate::op::copied(p, "a copy of 'ih'")?,
                    })
                });
                NsConv::<T>::new(l.clone(), spec).map(op_of::<T>)
            })
        })
    })
}
