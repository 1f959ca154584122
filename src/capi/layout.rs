//! Layouts.

use std::ffi::c_int;

use super::args::{array_arg, ndim_arg, partition_arg};
use super::handles::{arg, destroy, give, guard, out_ok, parlops_comm, parlops_layout, put_opt};
use super::types::{parlops_partition, parlops_status};
use crate::error::Result;
use crate::vector::Layout;

/// Create a layout of `global_len` entries over the ranks of `comm`. `local_len` is this rank's length,
/// or `PARLOPS_DECIDE` (-1) to let the partition decide (scatter: the first `global_len % P` ranks get
/// one more). `global_len` may be -1 when every rank gives `local_len` (the sum is taken). Ranks must
/// pass the same partition and global length; a disagreement fails on every rank. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_layout_create(
    comm: *const parlops_comm,
    partition: parlops_partition,
    global_len: i64,
    local_len: i64,
    out: *mut *mut parlops_layout,
) -> parlops_status {
    guard("parlops_layout_create", || {
        // SAFETY: `arg` checks `comm` against the handle registry (live parlops_comm) and holds it
        // for this call; the reference stays in this closure.
        let c = unsafe { arg(comm, "comm")? };
        let p = out_ok(out, "out").and_then(|_| partition_arg(partition));
        let l = Layout::new_checked(c.inner.clone(), p, global_len, local_len)?;
        give(out, parlops_layout { inner: l });
        Ok(())
    })
}

/// An N-D layout: an array of `ndim` axes with extents `global_shape` (C order), distributed along
/// `axis` (0 only, so each rank's part is contiguous: PyLops-MPI's default). `local_len_along_axis` is
/// this rank's extent along the axis, or `PARLOPS_DECIDE` (-1) to split it like PyLops-MPI. Ranks must
/// pass the same shape. Vectors of this layout hold the local slab, C-ordered. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_layout_create_nd(
    comm: *const parlops_comm,
    partition: parlops_partition,
    ndim: c_int,
    global_shape: *const i64,
    axis: c_int,
    local_len_along_axis: i64,
    out: *mut *mut parlops_layout,
) -> parlops_status {
    guard("parlops_layout_create_nd", || {
        // SAFETY: as above: `comm` is checked and held by `arg` for this call.
        let c = unsafe { arg(comm, "comm")? };
        let shape: Result<Vec<i64>> = (|| {
            out_ok(out, "out")?;
            let nd = ndim_arg(ndim)?;
            // SAFETY: `nd` is the validated `ndim`, and the C caller promises `ndim` readable
            // extents at `global_shape` (header contract); `array_arg` checks NULL and alignment,
            // and the values are copied out at once.
            Ok(unsafe { array_arg::<i64>(global_shape.cast(), nd, "global_shape")? }.to_vec())
        })();
        let p = shape
            .as_ref()
            .map_err(|e| e.clone())
            .and_then(|_| partition_arg(partition));
        let sh = shape.unwrap_or_else(|_| vec![0]);
        let l = Layout::new_nd(c.inner.clone(), p, &sh, axis, local_len_along_axis)?;
        give(out, parlops_layout { inner: l });
        Ok(())
    })
}

/// Number of axes and global extents: `*ndim` gets the number of axes (1 for 1-D layouts) and, when
/// `shape` is not NULL, up to `max_ndim` extents are written to it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_layout_shape(
    layout: *const parlops_layout,
    ndim: *mut c_int,
    shape: *mut i64,
    max_ndim: c_int,
) -> parlops_status {
    guard("parlops_layout_shape", || {
        // SAFETY: `arg` checks `layout` (live parlops_layout) and holds it for this call.
        let l = unsafe { arg(layout, "layout")? };
        out_ok(ndim, "ndim")?;
        let s = l.inner.shape();
        // SAFETY: `ndim` was checked not NULL by `out_ok` above; `shape`, when not NULL, has room
        // for `max_ndim` extents (header contract) and at most that many (clamped at 0) are
        // written.
        unsafe {
            *ndim = s.len() as c_int;
            if !shape.is_null() {
                for (k, &d) in s.iter().take(max_ndim.max(0) as usize).enumerate() {
                    *shape.add(k) = d;
                }
            }
        }
        Ok(())
    })
}

/// Global number of entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_layout_global_len(
    layout: *const parlops_layout,
    n: *mut i64,
) -> parlops_status {
    guard("parlops_layout_global_len", || {
        // SAFETY: as above: `layout` is checked and held by `arg` for this call.
        let l = unsafe { arg(layout, "layout")? };
        out_ok(n, "n")?;
        // SAFETY: `n` was checked not NULL by `out_ok` just above and is writable by the header
        // contract.
        unsafe { *n = l.inner.global_len() };
        Ok(())
    })
}

/// This rank's first global index and length (start is 0 for replicated partitions). Either may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_layout_local_range(
    layout: *const parlops_layout,
    start: *mut i64,
    len: *mut i64,
) -> parlops_status {
    guard("parlops_layout_local_range", || {
        // SAFETY: as above: `layout` is checked and held by `arg` for this call.
        let l = unsafe { arg(layout, "layout")? };
        // SAFETY: `start` and `len` are each NULL or a writable `i64` (header contract), as
        // `put_opt` requires.
        unsafe {
            put_opt(start, l.inner.local_start());
            put_opt(len, l.inner.local_len());
        }
        Ok(())
    })
}

/// Any rank's first global index and length. Either output may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_layout_rank_range(
    layout: *const parlops_layout,
    rank: c_int,
    start: *mut i64,
    len: *mut i64,
) -> parlops_status {
    guard("parlops_layout_rank_range", || {
        // SAFETY: as above: `layout` is checked and held by `arg` for this call.
        let l = unsafe { arg(layout, "layout")? };
        let p = l.inner.local_lens().len();
        if rank < 0 || rank as usize >= p {
            crate::bail!(
                InvalidArgument,
                "argument 'rank' is {rank}; the communicator has {p} rank(s)"
            );
        }
        // SAFETY: as above: `start` and `len` are each NULL or a writable `i64` (header contract).
        unsafe {
            put_opt(start, l.inner.offsets()[rank as usize]);
            put_opt(len, l.inner.local_lens()[rank as usize]);
        }
        Ok(())
    })
}

/// The partition the layout was created with.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_layout_partition(
    layout: *const parlops_layout,
    partition: *mut parlops_partition,
) -> parlops_status {
    guard("parlops_layout_partition", || {
        // SAFETY: as above: `layout` is checked and held by `arg` for this call.
        let l = unsafe { arg(layout, "layout")? };
        out_ok(partition, "partition")?;
        // SAFETY: `partition` was checked not NULL by `out_ok` just above and is writable by the
        // header contract.
        unsafe { *partition = l.inner.partition().code() };
        Ok(())
    })
}

/// `*equal` = true when vectors of the two layouts can be combined entry by entry (same
/// communicator, same split, same replication). The answer is the same on every rank.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_layout_equal(
    a: *const parlops_layout,
    b: *const parlops_layout,
    equal: *mut bool,
) -> parlops_status {
    guard("parlops_layout_equal", || {
        // SAFETY: `arg` checks `a` and `b` (live parlops_layouts) and holds them for this call;
        // both are only read, so the same layout twice is fine.
        let a = unsafe { arg(a, "a")? };
        // SAFETY: as above.
        let b = unsafe { arg(b, "b")? };
        out_ok(equal, "equal")?;
        // SAFETY: `equal` was checked not NULL by `out_ok` just above and is writable by the header
        // contract.
        unsafe { *equal = a.inner.compatible(&b.inner) };
        Ok(())
    })
}

/// Release the handle and set `*layout` to NULL (NULL `*layout` is a no-op; a destroyed or foreign
/// `*layout` is PARLOPS_ERR_INVALID_HANDLE and is left as it is). Vectors keep their own reference.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_layout_destroy(
    layout: *mut *mut parlops_layout,
) -> parlops_status {
    // SAFETY: `destroy` checks `layout` for NULL and what it points to against the registry; the C
    // caller promises a non-NULL `layout` points to its handle variable.
    guard("parlops_layout_destroy", || unsafe {
        destroy(layout, "layout")
    })
}
