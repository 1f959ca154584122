//! Distributed vectors.

use std::ffi::{c_int, c_void};

use super::args::{dtype_arg, memory_arg, scalar_arg};
use super::handles::{
    arg, arg_mut, create_agreed, destroy, enum_arg, give, guard, null, out_ok, parlops_layout,
    parlops_vec, put_opt,
};
use super::types::{parlops_dtype, parlops_memory, parlops_norm, parlops_scalar, parlops_status};
use crate::error::Result;
use crate::memory::Location;
use crate::scalar::{DType, Scalar};
use crate::vector::random::Distribution;
use crate::vector::{AnyVec, DistVector, NormKind};

/// The distribution of parlops_vec_set_random's entries.
pub type parlops_distribution = i32;
/// Uniform on [0, 1).
pub const PARLOPS_RANDOM_UNIFORM: parlops_distribution = 0;
/// Standard normal (mean 0, variance 1).
pub const PARLOPS_RANDOM_GAUSSIAN: parlops_distribution = 1;
/// +1 or -1 with probability 1/2 each.
pub const PARLOPS_RANDOM_RADEMACHER: parlops_distribution = 2;
use crate::{any_vec, any_vec2, any_vec3};

/// Typed view of a caller's global array of `n` entries; `None` for NULL.
///
/// # Safety
/// `p` is NULL or points to `n` host entries of `T` that nothing else reads or writes while the
/// slice lives.
unsafe fn global_slice<'a, T: Scalar>(
    _: &DistVector<T>,
    p: *mut c_void,
    n: i64,
    what: &str,
) -> Result<Option<&'a mut [T]>> {
    if p.is_null() {
        return Ok(None);
    }
    if !(p as usize).is_multiple_of(std::mem::align_of::<T>()) {
        crate::bail!(
            InvalidArgument,
            "argument '{what}' ({p:p}) is not aligned for {}",
            T::DTYPE.name()
        );
    }
    if crate::gpu::is_device_pointer(p) {
        crate::bail!(
            MemoryLocation,
            "argument '{what}' ({p:p}) is CUDA device memory; the global array must be host memory"
        );
    }
    // SAFETY: `p` is not NULL, aligned for `T` and not device memory (checked above); our caller's
    // contract is that it holds `n` >= 0 host entries of `T` (the vector's global length) that
    // nothing else uses while the slice lives.
    Ok(Some(unsafe {
        std::slice::from_raw_parts_mut(p.cast::<T>(), n as usize)
    }))
}

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
        let s = (!stream.is_null()).then_some(crate::gpu::Stream(stream.cast()));
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
    if crate::gpu::current().is_some() && crate::gpu::is_device_pointer(p) {
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

/// Run `f(x, y)` with `y` writable; when the caller passed the same vector twice, `x` is a copy.
fn in_out(
    x: *const parlops_vec,
    y: *mut parlops_vec,
    f: impl FnOnce(&AnyVec, &mut AnyVec) -> Result<()>,
) -> Result<()> {
    // SAFETY: the callers are exported functions whose C caller passes `x` and `y` as handle
    // arguments; `arg` checks `x` (live parlops_vec) and holds it for this call, and `xr` is used
    // only inside it (and, when `x` is `y`, not after `y` is borrowed mutably).
    let xr = unsafe { arg(x, "x")? };
    if std::ptr::eq(x, y) {
        let copy = xr.inner.clone_values()?;
        // SAFETY: `y` is `x`, and `xr` is not used after this point (its values were copied into
        // `copy`), so the exclusive `y` does not alias a live shared borrow; `arg_mut` checks and
        // holds it.
        let y = unsafe { arg_mut(y, "y")? };
        return f(&copy, &mut y.inner);
    }
    // SAFETY: `y` is not `x` (checked above), so it is another object than `xr`; `arg_mut` checks
    // it and holds it exclusively for this call.
    let y = unsafe { arg_mut(y, "y")? };
    f(&xr.inner, &mut y.inner)
}

/// `x` as an input of a call that writes `w`: borrowed, or an owned copy when it is `w` itself.
enum Input<'a> {
    Borrowed(&'a AnyVec),
    Copy(AnyVec),
}

impl Input<'_> {
    fn get(&self) -> &AnyVec {
        match self {
            Input::Borrowed(v) => v,
            Input::Copy(v) => v,
        }
    }
}

fn unalias<'a>(x: *const parlops_vec, w: *mut parlops_vec, name: &str) -> Result<Input<'a>> {
    // SAFETY: as in `in_out`: `x` comes from a C caller's handle argument and is checked and held
    // by `arg` for this call; when `x` is `w` only a copy is kept, so the reference is not alive
    // when `w` is later borrowed mutably.
    let xr: &'a parlops_vec = unsafe { arg(x, name)? };
    Ok(if std::ptr::eq(x, w) {
        Input::Copy(xr.inner.clone_values()?)
    } else {
        Input::Borrowed(&xr.inner)
    })
}

/// y = x (same layout and dtype).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_copy(
    x: *const parlops_vec,
    y: *mut parlops_vec,
) -> parlops_status {
    guard("parlops_vec_copy", || {
        if std::ptr::eq(x, y) && !x.is_null() {
            // SAFETY: `arg` only checks `x` (live parlops_vec) here: copying a vector onto itself
            // does nothing.
            unsafe { arg(x, "x")? };
            return Ok(());
        }
        in_out(x, y, |x, y| {
            any_vec2!(&mut *y, x, (b, a) => b.copy_from(a))?;
            y.settle()
        })
    })
}

/// Every entry of v = a.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_fill(
    v: *mut parlops_vec,
    a: parlops_scalar,
) -> parlops_status {
    guard("parlops_vec_fill", || {
        // SAFETY: as above: `v` is checked and held exclusively by `arg_mut` for this call.
        let v = unsafe { arg_mut(v, "v")? };
        any_vec!(&mut v.inner, x => { let a = scalar_arg(a, "a")?; x.fill(a) })?;
        v.inner.settle()
    })
}

/// Fill v with seeded random values: PARLOPS_RANDOM_UNIFORM (on [0, 1), PETSc's VecSetRandom),
/// PARLOPS_RANDOM_GAUSSIAN (standard normal) or PARLOPS_RANDOM_RADEMACHER (+1 or -1); complex
/// vectors get independent real and imaginary parts. Each entry depends on the seed and its global
/// index only: a seed gives bitwise the same global vector on any number of ranks with any split.
/// Not collective.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_set_random(
    v: *mut parlops_vec,
    distribution: parlops_distribution,
    seed: u64,
) -> parlops_status {
    guard("parlops_vec_set_random", || {
        // SAFETY: as above: `v` is checked and held exclusively by `arg_mut` for this call.
        let v = unsafe { arg_mut(v, "v")? };
        let d = enum_arg(
            distribution,
            "distribution",
            &Distribution::choices(),
            Distribution::from_code,
        )?;
        any_vec!(&mut v.inner, x => x.set_random(d, seed))?;
        v.inner.settle()
    })
}

/// v = a v.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_scale(
    v: *mut parlops_vec,
    a: parlops_scalar,
) -> parlops_status {
    guard("parlops_vec_scale", || {
        // SAFETY: as above: `v` is checked and held exclusively by `arg_mut` for this call.
        let v = unsafe { arg_mut(v, "v")? };
        any_vec!(&mut v.inner, x => { let a = scalar_arg(a, "a")?; x.scale(a) })?;
        v.inner.settle()
    })
}

/// v = conj(v) (no-op for real dtypes).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_conj(v: *mut parlops_vec) -> parlops_status {
    guard("parlops_vec_conj", || {
        // SAFETY: as above: `v` is checked and held exclusively by `arg_mut` for this call.
        let v = unsafe { arg_mut(v, "v")? };
        any_vec!(&mut v.inner, x => x.conj())?;
        v.inner.settle()
    })
}

/// y = y + a x.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_axpy(
    y: *mut parlops_vec,
    a: parlops_scalar,
    x: *const parlops_vec,
) -> parlops_status {
    guard("parlops_vec_axpy", || {
        in_out(x, y, |x, y| {
            any_vec2!(&mut *y, x, (b, xv) => { let a = scalar_arg(a, "a")?; b.axpy(a, xv) })?;
            y.settle()
        })
    })
}

/// y = a x + b y.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_axpby(
    y: *mut parlops_vec,
    a: parlops_scalar,
    x: *const parlops_vec,
    b: parlops_scalar,
) -> parlops_status {
    guard("parlops_vec_axpby", || {
        in_out(x, y, |x, y| {
            any_vec2!(&mut *y, x, (yv, xv) => {
                let a = scalar_arg(a, "a")?;
                let b = scalar_arg(b, "b")?;
                yv.axpby(a, xv, b)
            })?;
            y.settle()
        })
    })
}

/// w = a x + y (w may be x or y).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_waxpy(
    w: *mut parlops_vec,
    a: parlops_scalar,
    x: *const parlops_vec,
    y: *const parlops_vec,
) -> parlops_status {
    guard("parlops_vec_waxpy", || {
        let xc = unalias(x, w, "x")?;
        let yc = unalias(y, w, "y")?;
        let (xr, yr) = (xc.get(), yc.get());
        // SAFETY: `arg_mut` checks `w` and holds it exclusively for this call; `xr` and `yr` are
        // borrowed only when they are not `w` (`unalias` copied them otherwise), so nothing aliases
        // it.
        let w = unsafe { arg_mut(w, "w")? };
        any_vec3!(&mut w.inner, xr, yr, (wv, xv, yv) => { let a = scalar_arg(a, "a")?; wv.waxpy(a, xv, yv) })?;
        w.inner.settle()
    })
}

/// w = x .* y, entry by entry (w may be x or y).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_pointwise_mult(
    w: *mut parlops_vec,
    x: *const parlops_vec,
    y: *const parlops_vec,
) -> parlops_status {
    guard("parlops_vec_pointwise_mult", || {
        let xc = unalias(x, w, "x")?;
        let yc = unalias(y, w, "y")?;
        let (xr, yr) = (xc.get(), yc.get());
        // SAFETY: as above: `xr` and `yr` are `w` only as copies (`unalias`), so the exclusive `w`
        // aliases nothing.
        let w = unsafe { arg_mut(w, "w")? };
        any_vec3!(&mut w.inner, xr, yr, (wv, xv, yv) => wv.pointwise_mult(xv, yv))?;
        w.inner.settle()
    })
}

/// *out = sum conj(x_i) y_i over the whole vector (a broadcast vector counts once). A NULL `out` or a
/// dtype/layout mismatch on any rank fails on every rank. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_dot(
    x: *const parlops_vec,
    y: *const parlops_vec,
    out: *mut parlops_scalar,
) -> parlops_status {
    guard("parlops_vec_dot", || {
        // With one valid vector this rank can still take part and report the NULL to the others.
        // SAFETY: `arg` checks `x` and `y` (live parlops_vecs) and holds them shared for this call;
        // both are only read, so the same vector twice is fine.
        let (xr, yr) = unsafe { (arg(x, "x"), arg(y, "y")) };
        let (a, b, pre) = match (xr, yr) {
            (Ok(a), Ok(b)) => (a, b, out_ok(out, "out")),
            (Ok(a), Err(e)) => (a, a, Err(e)),
            (Err(e), Ok(b)) => (b, b, Err(e)),
            (Err(e), Err(_)) => return Err(e),
        };
        let (re, im) = AnyVec::dot(&a.inner, &b.inner, pre)?;
        // SAFETY: `out` was checked not NULL by `out_ok` in `pre`, and `AnyVec::dot` fails on every
        // rank when `pre` does, so this runs only with `out` checked; it is writable by the header
        // contract.
        unsafe { *out = parlops_scalar { re, im } };
        Ok(())
    })
}

/// *out = the norm of the whole vector (`p` is used only with `PARLOPS_NORM_P`). A bad `kind` or NULL
/// `out` on any rank fails on every rank. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_norm(
    v: *const parlops_vec,
    kind: parlops_norm,
    p: f64,
    out: *mut f64,
) -> parlops_status {
    guard("parlops_vec_norm", || {
        // SAFETY: as above: `v` is checked and held (shared) by `arg` for this call.
        let v = unsafe { arg(v, "v")? };
        let k = out_ok(out, "out").and_then(|_| NormKind::from_code(kind, p));
        let n = v.inner.norm(k)?;
        // SAFETY: `out_ok(out)` is the first step of `k` and `norm` fails when `k` does, so `out`
        // is not NULL here; it is writable by the header contract.
        unsafe { *out = n };
        Ok(())
    })
}

/// Copy the whole vector (global length entries of its dtype) into `global_out` on rank `root`, or on
/// every rank when `root` is `PARLOPS_ALL_RANKS` (-1). `global_out` may be NULL on ranks that do not
/// receive, and is not looked at there. `global_out` is host memory, also for device vectors (their data is copied through the
/// host). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_gather(
    v: *const parlops_vec,
    root: c_int,
    global_out: *mut c_void,
) -> parlops_status {
    guard("parlops_vec_gather", || {
        // SAFETY: as above: `v` is checked and held (shared) by `arg` for this call.
        let v = unsafe { arg(v, "v")? };
        let n = v.inner.layout().global_len();
        // `global_out` is ignored (not even checked) on ranks that do not receive
        let rank = v.inner.layout().comm().rank();
        let global_out = if root == -1 || root == rank {
            global_out
        } else {
            std::ptr::null_mut()
        };
        any_vec!(&v.inner, x => {
            // SAFETY: `global_out` is NULL except on receiving ranks, where the C caller promises
            // it holds the global length `n` of host entries of the vector's dtype (header contract
            // of parlops_vec_gather); `global_slice` checks alignment and device memory.
            let (out, pre) = match unsafe { global_slice(x, global_out, n, "global_out") } {
                Ok(o) => (o, Ok(())),
                Err(e) => (None, Err(e)),
            };
            x.gather(root, out, pre)
        })
    })
}

/// Set the vector from the whole array `global_in` (global length entries) given on rank `root`;
/// `global_in` is ignored elsewhere (may be NULL; it is not looked at). `global_in` is host memory, also for device
/// vectors. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_scatter(
    v: *mut parlops_vec,
    root: c_int,
    global_in: *const c_void,
) -> parlops_status {
    guard("parlops_vec_scatter", || {
        // SAFETY: as above: `v` is checked and held exclusively by `arg_mut` for this call.
        let v = unsafe { arg_mut(v, "v")? };
        let n = v.inner.layout().global_len();
        // `global_in` is ignored (not even checked) off the root
        let global_in = if root == v.inner.layout().comm().rank() {
            global_in
        } else {
            std::ptr::null()
        };
        any_vec!(&mut v.inner, x => {
            // SAFETY: `global_in` is NULL except on the root, where the C caller promises it holds
            // the global length `n` of host entries of the vector's dtype (header contract of
            // parlops_vec_scatter); the slice is made shared at once and only read.
            let (inp, pre) = match unsafe { global_slice(x, global_in as *mut c_void, n, "global_in") } {
                Ok(o) => (o.map(|s| &*s), Ok(())),
                Err(e) => (None, Err(e)),
            };
            x.scatter_from(root, inp, pre)
        })
    })
}

/// A new vector with layout `to` (same communicator and global length) holding the same entries. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_redistribute(
    v: *const parlops_vec,
    to: *const parlops_layout,
    out: *mut *mut parlops_vec,
) -> parlops_status {
    guard("parlops_vec_redistribute", || {
        // SAFETY: as above: `v` is checked and held (shared) by `arg` for this call.
        let v = unsafe { arg(v, "v")? };
        // SAFETY: `arg` checks `to` (live parlops_layout) and holds it for this call.
        let to_ref = unsafe { arg(to, "to") };
        let pre = out_ok(out, "out").and(to_ref.as_ref().map(|_| ()).map_err(|e| e.clone()));
        let target = to_ref.map_or_else(|_| v.inner.layout().clone(), |t| t.inner.clone());
        let r = v.inner.redistribute(&target, pre)?;
        give(out, parlops_vec { inner: r });
        Ok(())
    })
}

/// After writing into a `PARLOPS_PARTITION_BROADCAST` vector's local data: make every rank's copy equal
/// to rank 0's (other partitions: nothing to do but one small agreement that every rank passes a vector
/// of the same layout). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_assemble(v: *mut parlops_vec) -> parlops_status {
    guard("parlops_vec_assemble", || {
        // SAFETY: as above: `v` is checked and held exclusively by `arg_mut` for this call.
        let v = unsafe { arg_mut(v, "v")? };
        // every rank must pass a vector of the same layout (a broadcast one communicates, others
        // do not): agreed first
        let l = v.inner.layout().clone();
        l.comm().agree_same(
            Ok(()),
            "vectors ([layout, dtype, memory])",
            &[
                l.fingerprint(),
                v.inner.dtype() as i64,
                v.inner.location().code() as i64,
            ],
        )?;
        any_vec!(&mut v.inner, x => x.assemble())
    })
}

/// Release the vector and set `*v` to NULL (NULL `*v` is a no-op; a destroyed or foreign `*v` is
/// PARLOPS_ERR_INVALID_HANDLE and is left as it is). A wrapped caller array is not freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_destroy(v: *mut *mut parlops_vec) -> parlops_status {
    // SAFETY: `destroy` checks `v` for NULL and what it points to against the registry; the C
    // caller promises a non-NULL `v` points to its handle variable.
    guard("parlops_vec_destroy", || unsafe { destroy(v, "v") })
}
