//! Argument parsers shared by the C entry points: each C enum, scalar and array argument is read in
//! one place, with one message.

use std::ffi::{c_int, c_void};

use super::handles::{enum_arg, null};
use super::types::{
    parlops_dtype, parlops_index, parlops_memory, parlops_ownership, parlops_partition,
    parlops_scalar, parlops_stencil,
};
use crate::error::Result;
use crate::memory::Location;
use crate::scalar::{DType, Scalar};
use crate::vector::Partition;

/// `with_dtype!(dtype, T => expr)`: `expr` evaluated with `T` the Rust type of `dtype`.
macro_rules! with_dtype {
    ($d:expr, $t:ident => $body:expr) => {
        match $d {
            $crate::scalar::DType::F32 => {
                type $t = f32;
                $body
            }
            $crate::scalar::DType::F64 => {
                type $t = f64;
                $body
            }
            $crate::scalar::DType::C64 => {
                type $t = $crate::scalar::c32;
                $body
            }
            $crate::scalar::DType::C128 => {
                type $t = $crate::scalar::c64;
                $body
            }
        }
    };
}
pub(crate) use with_dtype;

pub(crate) fn dtype_arg(t: parlops_dtype) -> Result<DType> {
    enum_arg(
        t,
        "dtype",
        "PARLOPS_F32, PARLOPS_F64, PARLOPS_C64 or PARLOPS_C128 = 0..3",
        DType::from_code,
    )
}

pub(crate) fn memory_arg(m: parlops_memory) -> Result<Location> {
    enum_arg(
        m,
        "memory",
        "PARLOPS_MEMORY_HOST = 0 or PARLOPS_MEMORY_CUDA = 1",
        Location::from_code,
    )
}

pub(crate) fn partition_arg(p: parlops_partition) -> Result<Partition> {
    enum_arg(
        p,
        "partition",
        "PARLOPS_PARTITION_SCATTER, _BROADCAST or _UNSAFE_BROADCAST",
        Partition::from_code,
    )
}

/// The index width of CSR arrays: 0 (32-bit) or 1 (64-bit).
pub(crate) fn index_arg(it: parlops_index) -> Result<i32> {
    match it {
        0 | 1 => Ok(it),
        _ => crate::bail!(
            InvalidArgument,
            "argument 'index_type' is {it}; use PARLOPS_INDEX_I32 (0) or PARLOPS_INDEX_I64 (1)"
        ),
    }
}

/// Whether arrays are wrapped (used in place) rather than copied.
pub(crate) fn ownership_arg(o: parlops_ownership) -> Result<bool> {
    match o {
        0 => Ok(false),
        1 => Ok(true),
        _ => crate::bail!(
            InvalidArgument,
            "argument 'ownership' is {o}; use PARLOPS_COPY (0) or PARLOPS_WRAP (1)"
        ),
    }
}

pub(crate) fn stencil_arg(k: parlops_stencil) -> Result<crate::op::stencil::Kind> {
    enum_arg(
        k,
        "kind",
        "PARLOPS_CENTERED, PARLOPS_FORWARD or PARLOPS_BACKWARD = 0..2",
        crate::op::stencil::Kind::from_code,
    )
}

/// The number of axes of an N-D array argument.
pub(crate) fn ndim_arg(ndim: c_int) -> Result<usize> {
    if !(1..=32).contains(&ndim) {
        crate::bail!(
            InvalidArgument,
            "argument 'ndim' is {ndim}; it must be in 1..=32"
        );
    }
    Ok(ndim as usize)
}

/// A scalar argument as `T` (a complex value for a real dtype is an error naming `what`).
pub(crate) fn scalar_arg<T: Scalar>(s: parlops_scalar, what: &str) -> Result<T> {
    T::from_parts(s.re, s.im, what)
}

/// The caller's array of `n` values of type `T` (NULL allowed when `n` is 0).
///
/// # Safety
/// When `n` > 0 and `p` is not NULL, `p` points to `n` readable values of type `T` (host memory)
/// that nothing writes while the returned slice is used.
pub(crate) unsafe fn array_arg<'a, T>(p: *const c_void, n: usize, name: &str) -> Result<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(null(name));
    }
    if !(p as usize).is_multiple_of(std::mem::align_of::<T>()) {
        crate::bail!(
            InvalidArgument,
            "argument '{name}' ({p:p}) is not aligned for its element type"
        );
    }
    // a device array (a GPU build of hypre or MFEM) must not be read as a host one
    if crate::exec::is_device_only_pointer(p) {
        crate::bail!(
            MemoryLocation,
            "argument '{name}' ({p:p}) is CUDA device memory; this argument must be a host array"
        );
    }
    // SAFETY: `p` is not NULL, aligned for `T` (both checked above) and not device-only memory; the
    // C caller promises `n` readable `T`s there that it leaves unchanged while the slice is used
    // (header contract of every array argument, passed on by this fn's callers).
    Ok(unsafe { std::slice::from_raw_parts(p.cast::<T>(), n) })
}

/// The caller's array of `n` values of the scalar type `T` (message names the dtype).
///
/// # Safety
/// As [`array_arg`].
pub(crate) unsafe fn value_slice<'a, T: Scalar>(
    p: *const c_void,
    n: usize,
    name: &str,
) -> Result<&'a [T]> {
    if n > 0 && !p.is_null() && !(p as usize).is_multiple_of(std::mem::align_of::<T>()) {
        crate::bail!(
            InvalidArgument,
            "argument '{name}' ({p:p}) is not aligned for {}",
            T::DTYPE.name()
        );
    }
    // SAFETY: the extra alignment check above only sharpens the message; `array_arg`'s contract
    // (`n` readable `T`s at `p`, unchanged while used) is our caller's, passed on unchanged.
    unsafe { array_arg(p, n, name) }
}
