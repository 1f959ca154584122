//! Distributed vectors: creation, storage, host copies and properties (arithmetic, reductions,
//! gather/scatter, redistribution and destroy: `vec_ops.rs`).

use std::ffi::c_void;

use super::args::{dtype_arg, memory_arg};
use super::handles::{
    arg, arg_mut, create_agreed, give, guard, null, out_ok, parlops_layout, parlops_vec, put_opt,
};
use super::types::{parlops_dtype, parlops_memory, parlops_status};
use crate::error::Result;
use crate::memory::Location;
use crate::scalar::{DType, Scalar};
use crate::vector::{AnyVec, DistVector};

/// The distribution of parlops_vec_set_random's entries.
pub type parlops_distribution = i32;
/// Uniform on [0, 1).
pub const PARLOPS_RANDOM_UNIFORM: parlops_distribution = 0;
/// Standard normal (mean 0, variance 1).
pub const PARLOPS_RANDOM_GAUSSIAN: parlops_distribution = 1;
/// +1 or -1 with probability 1/2 each.
pub const PARLOPS_RANDOM_RADEMACHER: parlops_distribution = 2;
use crate::any_vec;

/// Shared by create and create_with_array: [`create_agreed`] on the dtype and memory.
fn create_common(
    layout: &parlops_layout,
    dtype: parlops_dtype,
    memory: parlops_memory,
    out: *mut *mut parlops_vec,
    build: impl FnOnce(DType, Location) -> Result<AnyVec>,
) -> Result<()> {
    let args = dtype_arg(dtype).and_then(|t| Ok((t, memory_arg(memory)?)));
    create_agreed(
        layout.inner.comm(),
        out,
        args.as_ref().map(|_| ()).map_err(|e| e.clone()),
        "dtypes or memory locations ([dtype, memory] codes)",
        &[dtype as i64, memory as i64],
        || {
            let (t, m) = args?;
            Ok(parlops_vec {
                inner: build(t, m)?,
            })
        },
    )
}

/// Create a zeroed vector owned by parlops. [collective]: ranks must pass the same dtype and memory.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_create(
    layout: *const parlops_layout,
    dtype: parlops_dtype,
    memory: parlops_memory,
    out: *mut *mut parlops_vec,
) -> parlops_status {
    guard("parlops_vec_create", || {
        // SAFETY: `arg` checks `layout` against the handle registry (live parlops_layout) and holds
        // it for this call; the reference stays in this closure.
        let l = unsafe { arg(layout, "layout")? };
        create_common(l, dtype, memory, out, |t, m| {
            AnyVec::new(l.inner.clone(), t, m)
        })
    })
}

/// Create a vector that uses the caller's array of this rank's local length as its storage: no copy,
/// the caller keeps it alive and frees it after destroying the vector. `local_data` may be NULL only
/// on ranks whose local length is 0. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_create_with_array(
    layout: *const parlops_layout,
    dtype: parlops_dtype,
    memory: parlops_memory,
    local_data: *mut c_void,
    out: *mut *mut parlops_vec,
) -> parlops_status {
    guard("parlops_vec_create_with_array", || {
        // SAFETY: as above: `layout` is checked and held by `arg` for this call.
        let l = unsafe { arg(layout, "layout")? };
        // SAFETY: the C caller promises `local_data` holds this rank's local length of entries of
        // `dtype` in `memory` (or is NULL with local length 0) and outlives the vector (header
        // contract of parlops_vec_create_with_array), which is what `AnyVec::wrap` requires.
        create_common(l, dtype, memory, out, |t, m| unsafe {
            AnyVec::wrap(l.inner.clone(), t, m, local_data.cast())
        })
    })
}

/// Use the caller's array as storage until `parlops_vec_reset_array` (no copy; PETSc's VecPlaceArray).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_place_array(
    v: *mut parlops_vec,
    local_data: *mut c_void,
) -> parlops_status {
    guard("parlops_vec_place_array", || {
        // SAFETY: `arg_mut` checks `v` (live parlops_vec) and holds it exclusively for this call.
        let v = unsafe { arg_mut(v, "v")? };
        // SAFETY: the C caller promises `local_data` holds the vector's local length of entries of
        // its dtype in its memory, kept alive until `parlops_vec_reset_array` or destroy (header
        // contract of parlops_vec_place_array), as `place_array` requires.
        any_vec!(&mut v.inner, x => unsafe { x.place_array(local_data.cast()) })
    })
}

/// Return to the storage the vector had before `parlops_vec_place_array`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_reset_array(v: *mut parlops_vec) -> parlops_status {
    guard("parlops_vec_reset_array", || {
        // SAFETY: as above: `v` is checked and held exclusively by `arg_mut` for this call.
        let v = unsafe { arg_mut(v, "v")? };
        any_vec!(&mut v.inner, x => x.reset_array());
        Ok(())
    })
}

/// A new zeroed vector with the same layout, dtype and memory (owned by parlops).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_duplicate(
    v: *const parlops_vec,
    out: *mut *mut parlops_vec,
) -> parlops_status {
    guard("parlops_vec_duplicate", || {
        // SAFETY: `arg` checks `v` (live parlops_vec) and holds it shared for this call.
        let v = unsafe { arg(v, "v")? };
        out_ok(out, "out")?;
        let d = v.inner.duplicate()?;
        give(out, parlops_vec { inner: d });
        Ok(())
    })
}

/// Pointer to this rank's entries (the caller's array when wrapped or placed) and their number.
/// Writes go straight into the vector. Either output may be NULL. For a PARLOPS_MEMORY_CUDA vector the
/// pointer is device memory (as PETSc's VecCUDAGetArray); parlops' queued work on it is finished
/// when this returns, unless the vector has a caller stream (then order your work on that stream).
/// Work you queue on the device yourself must be finished (or on that stream) before the next parlops
/// call on the vector.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_local_array(
    v: *mut parlops_vec,
    data: *mut *mut c_void,
    local_len: *mut i64,
) -> parlops_status {
    guard("parlops_vec_local_array", || {
        // SAFETY: as above: `v` is checked and held exclusively by `arg_mut` for this call.
        let v = unsafe { arg_mut(v, "v")? };
        v.inner.settle()?;
        let (p, n) =
            any_vec!(&mut v.inner, x => (x.local_ptr().cast::<c_void>(), x.layout().local_len()));
        // SAFETY: `data` and `local_len` are each NULL or a writable pointer / int64 (header
        // contract), as `put_opt` requires.
        unsafe {
            put_opt(data, p);
            put_opt(local_len, n);
        }
        Ok(())
    })
}

/// Order all of parlops' work on this PARLOPS_MEMORY_CUDA vector on the caller's CUDA stream
/// (`cudaStream_t` passed as a pointer); NULL goes back to parlops' own stream. With a caller stream,
/// parlops' calls may return once the work is queued on it (reductions, host copies, staged
/// operators and operations mixing vectors of different streams still wait for it); without one,
/// every call returns with its device work finished. Vectors made by `duplicate` share the stream.
/// A host vector gives PARLOPS_ERR_MEMORY_LOCATION. Not collective.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_set_stream(
    v: *mut parlops_vec,
    stream: *mut c_void,
) -> parlops_status {
    guard("parlops_vec_set_stream", || {
        // SAFETY: as above: `v` is checked and held exclusively by `arg_mut` for this call.
        let v = unsafe { arg_mut(v, "v")? };
        let s = (!stream.is_null()).then_some(crate::exec::Stream(stream.cast()));
        any_vec!(&mut v.inner, x => x.set_stream(s))
    })
}

/// Copy this rank's entries into the caller's host array `host_out` (local length entries of the
/// vector's dtype), from host or device memory. Not collective.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_copy_to_host(
    v: *const parlops_vec,
    host_out: *mut c_void,
) -> parlops_status {
    guard("parlops_vec_copy_to_host", || {
        // SAFETY: as above: `v` is checked and held (shared) by `arg` for this call.
        let v = unsafe { arg(v, "v")? };
        any_vec!(&v.inner, x => {
            let n = x.layout().local_len();
            // SAFETY: the C caller promises `host_out` holds the local length `n` of entries of the
            // vector's dtype in host memory (header contract of parlops_vec_copy_to_host);
            // `local_host_slice` checks NULL, alignment and (with a device) device memory.
            let Some(dst) = (unsafe { local_host_slice(x, host_out, n, "host_out")? }) else {
                return Ok(());
            };
            let mut h = DistVector::new(x.layout().clone())?;
            h.copy_any(x)?;
            dst.copy_from_slice(h.local());
            Ok(())
        })
    })
}

/// Set this rank's entries from the caller's host array `host_in` (local length entries of the
/// vector's dtype), into host or device memory. Not collective.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_copy_from_host(
    v: *mut parlops_vec,
    host_in: *const c_void,
) -> parlops_status {
    guard("parlops_vec_copy_from_host", || {
        // SAFETY: as above: `v` is checked and held exclusively by `arg_mut` for this call.
        let v = unsafe { arg_mut(v, "v")? };
        any_vec!(&mut v.inner, x => {
            let n = x.layout().local_len();
            // SAFETY: the C caller promises `host_in` holds the local length `n` of entries of the
            // vector's dtype in host memory (header contract of parlops_vec_copy_from_host); the
            // slice is only read (into `h`), and its last use comes before `x` is written.
            let Some(src) = (unsafe { local_host_slice(x, host_in as *mut c_void, n, "host_in")? }) else {
                return Ok(());
            };
            let mut h = DistVector::new(x.layout().clone())?;
            h.local_mut().copy_from_slice(src);
            x.copy_any(&h)?;
            x.settle()
        })
    })
}

/// *out = a new vector with the same layout, dtype and entries in `memory` (a host<->device copy, or
/// a plain copy when `memory` is the vector's own), on parlops' own stream (set one with
/// `parlops_vec_set_stream`). Not collective, but every rank must ask for the same memory: collective
/// calls check that the vectors' memory agrees across ranks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_to_memory(
    v: *const parlops_vec,
    memory: parlops_memory,
    out: *mut *mut parlops_vec,
) -> parlops_status {
    guard("parlops_vec_to_memory", || {
        // SAFETY: as above: `v` is checked and held (shared) by `arg` for this call.
        let v = unsafe { arg(v, "v")? };
        out_ok(out, "out")?;
        let m = memory_arg(memory)?;
        let made = match &v.inner {
            AnyVec::F32(x) => AnyVec::F32(x.to_location(m)?),
            AnyVec::F64(x) => AnyVec::F64(x.to_location(m)?),
            AnyVec::C64(x) => AnyVec::C64(x.to_location(m)?),
            AnyVec::C128(x) => AnyVec::C128(x.to_location(m)?),
        };
        made.settle()?;
        give(out, parlops_vec { inner: made });
        Ok(())
    })
}

/// The caller's host array of this rank's `n` entries; `None` when `n` is 0 (NULL allowed then).
///
/// # Safety
/// When `n` > 0, `p` is NULL or points to `n` host entries of `T` that nothing else reads or
/// writes while the slice lives.
unsafe fn local_host_slice<'a, T: Scalar>(
    _: &DistVector<T>,
    p: *mut c_void,
    n: i64,
    what: &str,
) -> Result<Option<&'a mut [T]>> {
    if n == 0 {
        return Ok(None);
    }
    if p.is_null() {
        return Err(null(what));
    }
    if !(p as usize).is_multiple_of(std::mem::align_of::<T>()) {
        crate::bail!(
            InvalidArgument,
            "argument '{what}' ({p:p}) is not aligned for {}",
            T::DTYPE.name()
        );
    }
    if crate::exec::device_in_use() && crate::exec::is_device_pointer(p) {
        crate::bail!(
            MemoryLocation,
            "argument '{what}' ({p:p}) is CUDA device memory; it must be a host array"
        );
    }
    // SAFETY: `p` is not NULL, aligned for `T` and (with a device present) not device memory, all
    // checked above; our caller's contract is that it holds `n` > 0 host entries of `T` that
    // nothing else uses while the slice lives.
    Ok(Some(unsafe {
        std::slice::from_raw_parts_mut(p.cast::<T>(), n as usize)
    }))
}

/// A new reference to the vector's layout; release it with `parlops_layout_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_layout(
    v: *const parlops_vec,
    out: *mut *mut parlops_layout,
) -> parlops_status {
    guard("parlops_vec_layout", || {
        // SAFETY: as above: `v` is checked and held (shared) by `arg` for this call.
        let v = unsafe { arg(v, "v")? };
        out_ok(out, "out")?;
        give(
            out,
            parlops_layout {
                inner: v.inner.layout().clone(),
            },
        );
        Ok(())
    })
}

/// The vector's element type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_dtype(
    v: *const parlops_vec,
    dtype: *mut parlops_dtype,
) -> parlops_status {
    guard("parlops_vec_dtype", || {
        // SAFETY: as above: `v` is checked and held (shared) by `arg` for this call.
        let v = unsafe { arg(v, "v")? };
        out_ok(dtype, "dtype")?;
        // SAFETY: `dtype` was checked not NULL by `out_ok` just above and is writable by the header
        // contract.
        unsafe { *dtype = v.inner.dtype().code() };
        Ok(())
    })
}

/// Where the vector's data lives.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_memory(
    v: *const parlops_vec,
    memory: *mut parlops_memory,
) -> parlops_status {
    guard("parlops_vec_memory", || {
        // SAFETY: as above: `v` is checked and held (shared) by `arg` for this call.
        let v = unsafe { arg(v, "v")? };
        out_ok(memory, "memory")?;
        // SAFETY: `memory` was checked not NULL by `out_ok` just above and is writable by the
        // header contract.
        unsafe { *memory = v.inner.location().code() };
        Ok(())
    })
}
