//! Stacked layouts (PyLops-MPI's StackedDistributedArray, MFEM's BlockVector) and the parts of their
//! vectors.

use std::ffi::c_int;

use super::handles::{
    arg, arg_array, arg_mut, give, guard, out_ok, parlops_comm, parlops_layout, parlops_vec,
};
use super::types::parlops_status;
use crate::error::Result;
use crate::vector::Layout;

/// The layout of stacked vectors made of `n` >= 1 split layouts of `comm`: on every rank its part of
/// parts[0], then of parts[1], ... (the stacked global order is therefore rank by rank). A vector of
/// it is an ordinary vector: every vector operation covers all parts (a dot product or a norm in one
/// reduction), and every solver accepts it. parlops_op_block's rows and columns are stacked layouts.
/// Every rank passes the same `n` and the same parts in the same order (compared by their global
/// lengths and splits; a difference fails on every rank). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_layout_stack(
    comm: *const parlops_comm,
    n: c_int,
    parts: *const *const parlops_layout,
    out: *mut *mut parlops_layout,
) -> parlops_status {
    guard("parlops_layout_stack", || {
        // SAFETY: `arg` checks `comm` against the handle registry (live parlops_comm) and holds it
        // for this call; the reference stays in this closure.
        let comm = &unsafe { arg(comm, "comm")? }.inner;
        // a bad part on one rank is agreed with the others
        // SAFETY: `parts` holds `n` layout handles when `n` > 0 (header contract); `arg_array`
        // checks the count, NULL and each handle, and the layouts' `Arc`s are cloned out inside
        // this call.
        let list = unsafe { arg_array(n, parts, "n", "parts") }.and_then(|ps| {
            if ps.is_empty() {
                crate::bail!(
                    InvalidArgument,
                    "n is 0: a stacked layout needs at least one part"
                );
            }
            Ok(ps.iter().map(|p| p.inner.clone()).collect::<Vec<_>>())
        });
        let pre = list
            .as_ref()
            .map(|_| ())
            .map_err(|e| e.clone())
            .and(out_ok(out, "out"));
        comm.agree_same(pre, "numbers of parts", &[n as i64])?;
        let l = Layout::stack(comm, &list?)?;
        give(out, parlops_layout { inner: l });
        Ok(())
    })
}

/// This rank's entries of part `i` of the stacked vector `v`: (offset, length), after checking
/// that `part` is a vector of that part's layout and of v's dtype, both in host memory.
fn part_range(v: &parlops_vec, i: c_int, part: &parlops_vec) -> Result<(usize, usize)> {
    let parts = v.inner.layout().parts();
    if parts.is_empty() {
        crate::bail!(
            InvalidArgument,
            "v is not a stacked vector (its layout is not from parlops_layout_stack)"
        );
    }
    if i < 0 || i as usize >= parts.len() {
        crate::bail!(
            InvalidArgument,
            "i is {i}; the stacked layout has {} parts",
            parts.len()
        );
    }
    let p = &parts[i as usize];
    part.inner
        .layout()
        .check_compatible(p, "part", &format!("part {i} of v"))?;
    if part.inner.dtype() != v.inner.dtype() {
        crate::bail!(
            DTypeMismatch,
            "part is {}; v is {}",
            part.inner.dtype().name(),
            v.inner.dtype().name()
        );
    }
    if v.inner.location() != crate::memory::Location::Host
        || part.inner.location() != crate::memory::Location::Host
    {
        crate::bail!(
            NotSupported,
            "stacked parts are copied in host memory; a vector is in device memory"
        );
    }
    let off: i64 = parts[..i as usize].iter().map(|q| q.local_len()).sum();
    Ok((off as usize, p.local_len() as usize))
}

/// Copy part `i` of the stacked vector `v` into `part` (a vector of that part's layout, the same
/// dtype, host memory). Not collective.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_stack_get(
    v: *const parlops_vec,
    i: c_int,
    part: *mut parlops_vec,
) -> parlops_status {
    guard("parlops_vec_stack_get", || {
        if std::ptr::eq(v, part) {
            crate::bail!(InvalidArgument, "part is v itself");
        }
        // SAFETY: `arg` checks `v` (live parlops_vec) and holds it shared for this call.
        let v = unsafe { arg(v, "v")? };
        // SAFETY: `arg_mut` checks `part` and holds it exclusively for this call; `part` is not `v`
        // (checked above), so the `&mut` does not alias the shared `v`.
        let part = unsafe { arg_mut(part, "part")? };
        let (off, len) = part_range(v, i, part)?;
        crate::any_vec2!(&v.inner, &mut part.inner, (a, b) => {
            b.local_mut().copy_from_slice(&a.local()[off..off + len]);
            Ok(())
        })
    })
}

/// Copy `part` (a vector of part i's layout) into part `i` of the stacked vector `v`. Not collective.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_vec_stack_set(
    v: *mut parlops_vec,
    i: c_int,
    part: *const parlops_vec,
) -> parlops_status {
    guard("parlops_vec_stack_set", || {
        if std::ptr::eq(v, part) {
            crate::bail!(InvalidArgument, "part is v itself");
        }
        // SAFETY: as above: `part` is checked and held (shared) by `arg` for this call.
        let part = unsafe { arg(part, "part")? };
        // SAFETY: `arg_mut` checks `v` and holds it exclusively for this call; `v` is not `part`
        // (checked above), so the two references are to different objects.
        let v = unsafe { arg_mut(v, "v")? };
        let (off, len) = part_range(v, i, part)?;
        crate::any_vec2!(&mut v.inner, &part.inner, (a, b) => {
            a.local_mut()[off..off + len].copy_from_slice(b.local());
            Ok(())
        })
    })
}
