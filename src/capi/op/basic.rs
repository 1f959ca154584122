//! Identity, zero and diagonal operators (not collective).

use super::super::args::{dtype_arg, with_dtype};
use super::super::handles::{arg, give, guard, out_ok, parlops_layout, parlops_op, parlops_vec};
use super::super::types::{parlops_dtype, parlops_status};
use super::{layout_pair, op_of, wrap_derived};
use crate::op::basic::{Diagonal, Identity, Zero};
use crate::scalar::{c32, c64};
use crate::vector::AnyVec;

/// The identity on `layout`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_identity(
    layout: *const parlops_layout,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_identity", || {
        // SAFETY: `arg` checks `layout` against the handle registry (live parlops_layout) and holds
        // it for this call; only its `Arc` is kept.
        let l = unsafe { arg(layout, "layout")? };
        out_ok(out, "out")?;
        let d = dtype_arg(dtype)?;
        let op = with_dtype!(d, T => op_of::<T>(Identity::new(l.inner.clone())));
        give(out, wrap_derived(op, &[9, l.inner.fingerprint()]));
        Ok(())
    })
}

/// The zero operator from `cols` to `rows`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_zero(
    rows: *const parlops_layout,
    cols: *const parlops_layout,
    dtype: parlops_dtype,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_zero", || {
        let (r, c) = layout_pair(rows, cols)?;
        out_ok(out, "out")?;
        let d = dtype_arg(dtype)?;
        let op = with_dtype!(d, T => op_of::<T>(Zero::new(r.clone(), c.clone())));
        give(
            out,
            wrap_derived(op, &[10, r.fingerprint(), c.fingerprint()]),
        );
        Ok(())
    })
}

/// diag(d): y = d .* x (d is copied; its layout is the operator's rows and columns).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_diagonal_matrix(
    d: *const parlops_vec,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_diagonal_matrix", || {
        // SAFETY: `arg` checks `d` (live parlops_vec) and holds it shared for this call;
        // `Diagonal::new` copies its values.
        let d = unsafe { arg(d, "d")? };
        out_ok(out, "out")?;
        let op = match &d.inner {
            AnyVec::F32(v) => op_of::<f32>(Diagonal::new(v)?),
            AnyVec::F64(v) => op_of::<f64>(Diagonal::new(v)?),
            AnyVec::C64(v) => op_of::<c32>(Diagonal::new(v)?),
            AnyVec::C128(v) => op_of::<c64>(Diagonal::new(v)?),
        };
        // (its values differ between ranks by nature: ranks that pass different diagonals of one
        // layout still communicate alike)
        give(out, wrap_derived(op, &[11, d.inner.layout().fingerprint()]));
        Ok(())
    })
}
