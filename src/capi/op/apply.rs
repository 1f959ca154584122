//! Applying operators and asking them about themselves.

use super::super::handles::{
    arg, arg_mut, destroy, give, guard, out_ok, parlops_layout, parlops_op, parlops_vec, put_opt,
};
use super::super::types::{parlops_dtype, parlops_scalar, parlops_status};
use crate::error::Result;
use crate::memory::Location;
use crate::vector::AnyVec;

/// Input and output vectors from handles; the same vector for both is an error.
fn in_out<'a>(
    x: *const parlops_vec,
    y: *mut parlops_vec,
    xn: &str,
    yn: &str,
) -> (Result<&'a AnyVec>, Result<&'a mut AnyVec>) {
    if !x.is_null() && std::ptr::eq(x, y) {
        let e = crate::err!(
            InvalidArgument,
            "arguments '{xn}' and '{yn}' are the same vector; they must differ"
        );
        return (Err(e.clone()), Err(e));
    }
    // SAFETY: `x` and `y` are handle arguments of the exported call using this; `arg` checks `x`
    // (live parlops_vec) and holds it shared for that call.
    let xr = unsafe { arg(x, xn) }.map(|v| &v.inner);
    // SAFETY: `arg_mut` checks `y` and holds it exclusively for this call; `y` is not `x` (checked
    // above), so the `&mut` aliases nothing else borrowed here.
    let yr = unsafe { arg_mut(y, yn) }.map(|v| &mut v.inner);
    (xr, yr)
}

/// y = A x. `x` must have the operator's column layout and `y` its row layout, and they must be
/// different vectors. A failure on any rank (including a user callback's) fails on every rank. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_apply(
    a: *const parlops_op,
    x: *const parlops_vec,
    y: *mut parlops_vec,
) -> parlops_status {
    guard("parlops_op_apply", || {
        // SAFETY: `arg` checks `a` (live parlops_op, never one of the vectors) and holds it shared
        // for this call.
        let a = unsafe { arg(a, "A")? };
        let (xr, yr) = in_out(x, y, "x", "y");
        a.inner.apply_checked(xr, yr, false, a.ident as i64)
    })
}

/// x = A^H y (conjugate transpose). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_apply_adjoint(
    a: *const parlops_op,
    y: *const parlops_vec,
    x: *mut parlops_vec,
) -> parlops_status {
    guard("parlops_op_apply_adjoint", || {
        // SAFETY: as above: `a` is checked and held (shared) by `arg` for this call.
        let a = unsafe { arg(a, "A")? };
        let (yr, xr) = in_out(y, x, "y", "x");
        a.inner.apply_checked(yr, xr, true, a.ident as i64)
    })
}

/// Shared by multadd and multadd_adjoint: out = alpha op(A) inp + beta out.
fn multadd(
    a: *const parlops_op,
    alpha: parlops_scalar,
    x: *const parlops_vec,
    beta: parlops_scalar,
    y: *mut parlops_vec,
    adjoint: bool,
) -> Result<()> {
    // SAFETY: as above: `a` is a handle argument of the exported multadd calls, checked and held
    // (shared) by `arg` for that call; its work vectors are behind their own lock.
    let a = unsafe { arg(a, "A")? };
    let (xn, yn) = if adjoint { ("y", "x") } else { ("x", "y") };
    let (xr, yr) = in_out(x, y, xn, yn);
    let parts = |s: parlops_scalar| (s.re, s.im);
    a.inner.multadd(
        &a.work,
        parts(alpha),
        xr,
        parts(beta),
        yr,
        adjoint,
        a.ident as i64,
    )
}

/// y = alpha A x + beta y (a work vector is allocated at the first call and kept). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_multadd(
    a: *const parlops_op,
    alpha: parlops_scalar,
    x: *const parlops_vec,
    beta: parlops_scalar,
    y: *mut parlops_vec,
) -> parlops_status {
    guard("parlops_op_multadd", || {
        multadd(a, alpha, x, beta, y, false)
    })
}

/// x = alpha A^H y + beta x (a work vector is allocated at the first call and kept). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_multadd_adjoint(
    a: *const parlops_op,
    alpha: parlops_scalar,
    y: *const parlops_vec,
    beta: parlops_scalar,
    x: *mut parlops_vec,
) -> parlops_status {
    guard("parlops_op_multadd_adjoint", || {
        multadd(a, alpha, y, beta, x, true)
    })
}

// ------------------------------------------------------------------------------------------ queries

/// Global number of rows and columns. Either output may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_size(
    a: *const parlops_op,
    rows: *mut i64,
    cols: *mut i64,
) -> parlops_status {
    guard("parlops_op_size", || {
        // SAFETY: as above: `a` is checked and held (shared) by `arg` for this call.
        let a = unsafe { arg(a, "A")? };
        // SAFETY: `rows` and `cols` are each NULL or a writable int64 (header contract), as
        // `put_opt` requires.
        unsafe {
            put_opt(rows, a.inner.rows().global_len());
            put_opt(cols, a.inner.cols().global_len());
        }
        Ok(())
    })
}

/// The operator's element type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_dtype(
    a: *const parlops_op,
    dtype: *mut parlops_dtype,
) -> parlops_status {
    guard("parlops_op_dtype", || {
        // SAFETY: as above: `a` is checked and held (shared) by `arg` for this call.
        let a = unsafe { arg(a, "A")? };
        out_ok(dtype, "dtype")?;
        // SAFETY: `dtype` was checked not NULL by `out_ok` just above and is writable by the header
        // contract.
        unsafe { *dtype = a.inner.dtype().code() };
        Ok(())
    })
}

/// New references to the row (range) and column (domain) layouts; either output may be NULL.
/// Release them with parlops_layout_destroy.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_layouts(
    a: *const parlops_op,
    rows: *mut *mut parlops_layout,
    cols: *mut *mut parlops_layout,
) -> parlops_status {
    guard("parlops_op_layouts", || {
        // SAFETY: as above: `a` is checked and held (shared) by `arg` for this call.
        let a = unsafe { arg(a, "A")? };
        if !rows.is_null() {
            give(
                rows,
                parlops_layout {
                    inner: a.inner.rows().clone(),
                },
            );
        }
        if !cols.is_null() {
            give(
                cols,
                parlops_layout {
                    inner: a.inner.cols().clone(),
                },
            );
        }
        Ok(())
    })
}

/// New zeroed host vectors fitting the operator: `x_like` of its column layout, `y_like` of its row
/// layout (either may be NULL). For device vectors use `parlops_op_layouts` and `parlops_vec_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_create_vecs(
    a: *const parlops_op,
    x_like: *mut *mut parlops_vec,
    y_like: *mut *mut parlops_vec,
) -> parlops_status {
    guard("parlops_op_create_vecs", || {
        // SAFETY: as above: `a` is checked and held (shared) by `arg` for this call.
        let a = unsafe { arg(a, "A")? };
        let x = if x_like.is_null() {
            None
        } else {
            Some(AnyVec::new(
                a.inner.cols().clone(),
                a.inner.dtype(),
                Location::Host,
            )?)
        };
        let y = if y_like.is_null() {
            None
        } else {
            Some(AnyVec::new(
                a.inner.rows().clone(),
                a.inner.dtype(),
                Location::Host,
            )?)
        };
        if let Some(x) = x {
            give(x_like, parlops_vec { inner: x });
        }
        if let Some(y) = y {
            give(y_like, parlops_vec { inner: y });
        }
        Ok(())
    })
}

/// d = diag(A) for a square operator whose row and column layouts are equal (CSR, dense, diagonal,
/// identity and sums/scalings/adjoints of them). Not collective.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_diagonal(
    a: *const parlops_op,
    d: *mut parlops_vec,
) -> parlops_status {
    guard("parlops_op_diagonal", || {
        // SAFETY: as above: `a` is checked and held (shared) by `arg` for this call.
        let a = unsafe { arg(a, "A")? };
        // SAFETY: `arg_mut` checks `d` (live parlops_vec, so not the operator `a`) and holds it
        // exclusively for this call.
        let d = unsafe { arg_mut(d, "d")? };
        a.inner.diagonal_into(&mut d.inner)
    })
}

/// The dot test on random vectors (seeded; the same for any number of ranks):
/// *relative_error = |<A x, y> - <x, A^H y>| / max(|<A x, y>|, |<x, A^H y>|), of the real parts
/// where the operator is only real-linear (an FFT with `real` or of a real model, or an operator
/// built from one: its adjoint is that of a real-linear map, for which the imaginary parts do not
/// agree; a shell operator cannot say it is real-linear: its products are compared whole).
/// [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_dottest(
    a: *const parlops_op,
    seed: u64,
    relative_error: *mut f64,
) -> parlops_status {
    guard("parlops_op_dottest", || {
        // SAFETY: as above: `a` is checked and held (shared) by `arg` for this call.
        let a = unsafe { arg(a, "A")? };
        let comm = a.inner.rows().comm().clone();
        comm.agree_same(
            out_ok(relative_error, "relative_error"),
            "operators or seeds ([the operator's identity, seed])",
            &[a.ident as i64, seed as i64],
        )?;
        let r = a.inner.dottest(seed);
        let e = comm.agree(r)?;
        // SAFETY: `out_ok(relative_error)` was agreed above (a NULL on any rank fails every rank
        // before this), so it is not NULL here and writable by the header contract.
        unsafe { *relative_error = e };
        Ok(())
    })
}

/// Release the operator and set `*A` to NULL (NULL `*A` is a no-op; a destroyed or foreign `*A` is
/// PARLOPS_ERR_INVALID_HANDLE and is left as it is). Compositions that use it keep their own
/// reference.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_destroy(a: *mut *mut parlops_op) -> parlops_status {
    // SAFETY: `destroy` checks `a` for NULL and what it points to against the registry; the C
    // caller promises a non-NULL `a` points to its handle variable.
    guard("parlops_op_destroy", || unsafe { destroy(a, "A") })
}
