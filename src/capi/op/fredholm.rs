//! Fredholm integral of the first kind (PyLops-MPI's MPIFredholm1).

use std::ffi::c_void;

use super::super::args::{value_slice, with_dtype};
use super::super::handles::{arg, guard, parlops_comm, parlops_op};
use super::super::types::{parlops_dtype, parlops_status};
use super::{create_op, op_of};
use crate::op::fredholm::{Fredholm1, g_local_len};
use crate::op::mdc::{Mdc, MdcSpec, g_local_len as mdc_g_len};
use crate::scalar::DType;

/// Fredholm integral of the first kind (PyLops-MPI's MPIFredholm1): y[s] = G[s] x[s] for slices s,
/// G[s] nx x ny, x[s] ny x nz. This rank passes its `nsl_local` slices of G (row-major, nx*ny each; the
/// slices of all ranks in rank order make the whole G). x and y are replicated (broadcast layouts of
/// nsl*ny*nz and nsl*nx*nz entries). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_fredholm1(
    comm: *const parlops_comm,
    dtype: parlops_dtype,
    nsl_local: i64,
    nx: i64,
    ny: i64,
    nz: i64,
    g_local: *const c_void,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_fredholm1", || {
        // SAFETY: `arg` checks `comm` (live parlops_comm) and holds it for this call.
        let c = &unsafe { arg(comm, "comm")? }.inner;
        let n = g_local_len(nsl_local, nx, ny);
        create_op(c, dtype, out, Ok(()), |d| {
            with_dtype!(d, T => {
                // read and copy the caller's G; a failure here joins the constructor's agreement
                let g = n.and_then(|n| {
                    // SAFETY: the C caller promises `g_local` holds its `nsl_local` slices of nx *
                    // ny entries of `dtype`, the `n` that `g_local_len` computed (header contract
                    // of parlops_op_fredholm1); `value_slice` checks NULL, alignment and device
                    // memory, and the entries are copied at once.
                    let src = unsafe { value_slice::<T>(g_local, n, "g_local")? };
                    crate::op::copied(src, "a copy of 'g_local'")
                });
                let (g, pre) = split(g);
                Fredholm1::<T>::new_checked(c, nsl_local, nx, ny, nz, g, pre).map(op_of::<T>)
            })
        })
    })
}

/// This rank's slices of G as complex numbers of the operator's precision (a real G's entries with
/// zero imaginary parts), copied fallibly.
fn g_complex<T: crate::scalar::Scalar, R: rustfft::FftNum>(
    src: &[T],
) -> crate::error::Result<Vec<num_complex::Complex<R>>> {
    let mut v = Vec::new();
    crate::error::try_reserve(&mut v, src.len(), "a copy of 'g_local'")?;
    let r = |x: f64| R::from_f64(x).unwrap_or_else(R::zero);
    v.extend(src.iter().map(|e| {
        let (re, im) = e.to_parts();
        num_complex::Complex::new(r(re), r(im))
    }));
    Ok(v)
}

/// Multi-dimensional convolution (PyLops-MPI's MPIMDC, the operator of multi-dimensional
/// deconvolution): y(t, s, v) = F^-1 ( sum_r G(f, s, r) F(x(t, r, v)) ), F PyLops' real FFT along
/// time (norm "ortho", the bins between zero and Nyquist scaled by sqrt(2)) keeping the first nfmax
/// frequencies, G scaled by dr dt sqrt(nt) unless `prescaled` and conjugated if `conj`. The model x
/// (nt x nr x nv) and the data y (nt x ns x nv), time slowest, are real and replicated: broadcast
/// layouts of nt*nr*nv and nt*ns*nv entries of the real type of `dtype` (f32 for f32 and c64, f64
/// for f64 and c128), so the operator works with real vectors as PyLops-MPI's MDC does.
///
/// G is split over the ranks by frequency: this rank passes its `nfreq_local` slices (ns x nr each,
/// row-major, entries of `dtype`; a real G is taken as complex with zero imaginary parts), the
/// slices of all ranks in rank order being frequencies 0, 1, ... nfmax - 1 (nfmax, their sum, at
/// most nt / 2 + 1). `twosided` (PyLops' default): x holds negative and positive times, nt is odd
/// (2 nt_positive - 1), and the forward transform starts with NumPy's ifftshift along time (the
/// adjoint ends with the fftshift). Every rank transforms the whole model or data along time, as
/// PyLops-MPI does; each applies its own frequencies and the results are allgathered (nfmax ns nv
/// complex values, nfmax nr nv for the adjoint). Every rank must pass the same ns, nr, nt, nv, dt,
/// dr and flags; a difference fails on every rank. Vectors in device memory are staged through host
/// copies. [collective]
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn parlops_op_mdc(
    comm: *const parlops_comm,
    dtype: parlops_dtype,
    nfreq_local: i64,
    ns: i64,
    nr: i64,
    nt: i64,
    nv: i64,
    dt: f64,
    dr: f64,
    twosided: bool,
    conj: bool,
    prescaled: bool,
    g_local: *const c_void,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_mdc", || {
        // SAFETY: `arg` checks `comm` (live parlops_comm) and holds it for this call.
        let c = &unsafe { arg(comm, "comm")? }.inner;
        let n = mdc_g_len(nfreq_local, ns, nr);
        let spec = MdcSpec {
            nt,
            ns,
            nr,
            nv,
            dt,
            dr,
            twosided,
            conj,
            prescaled,
        };
        create_op(c, dtype, out, Ok(()), |d| {
            with_dtype!(d, T => {
                // SAFETY: the C caller promises `g_local` holds its `nfreq_local` slices of ns * nr
                // entries of `dtype`, the `n` that `mdc_g_len` computed (header contract of
                // parlops_op_mdc); `value_slice` checks NULL, alignment and device memory, and the
                // entries are copied at once.
                let read = |n: usize| unsafe { value_slice::<T>(g_local, n, "g_local") };
                match d {
                    DType::F32 | DType::C64 => {
                        let g = n.and_then(read).and_then(g_complex::<T, f32>);
                        let (g, pre) = split(g);
                        Mdc::<f32>::new(c, nfreq_local, spec, g, pre).map(op_of::<f32>)
                    }
                    DType::F64 | DType::C128 => {
                        let g = n.and_then(read).and_then(g_complex::<T, f64>);
                        let (g, pre) = split(g);
                        Mdc::<f64>::new(c, nfreq_local, spec, g, pre).map(op_of::<f64>)
                    }
                }
            })
        })
    })
}

/// The caller's G, or nothing and this rank's failure (joining the constructor's agreement).
fn split<V>(g: crate::error::Result<Vec<V>>) -> (Vec<V>, crate::error::Result<()>) {
    match g {
        Ok(g) => (g, Ok(())),
        Err(e) => (Vec::new(), Err(e)),
    }
}
