//! Operations on distributed vectors: copies and arithmetic, dot products and norms, gather and
//! scatter of the whole vector, redistribution, assembly of broadcast vectors, and destroy.

use std::ffi::{c_int, c_void};

use super::args::scalar_arg;
use super::handles::{
    arg, arg_mut, destroy, enum_arg, give, guard, out_ok, parlops_layout, parlops_vec,
};
use super::types::{parlops_norm, parlops_scalar, parlops_status};
use super::vec::parlops_distribution;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::random::Distribution;
use crate::vector::{AnyVec, DistVector, NormKind};
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
    if crate::exec::is_device_pointer(p) {
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
