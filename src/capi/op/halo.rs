//! Halo (ghost cells) over a Cartesian process grid (PyLops-MPI's MPIHalo).

use std::ffi::{c_int, c_void};

use super::super::args::{array_arg, ndim_arg, with_dtype};
use super::super::handles::{arg, guard, out_ok, parlops_comm, parlops_op};
use super::super::types::{parlops_dtype, parlops_status};
use super::{create_op, op_of};
use crate::error::Result;

/// The caller's array of `n` i64 values.
fn i64_array<'a>(p: *const i64, n: usize, name: &str) -> Result<&'a [i64]> {
    // SAFETY: `i64_array` is called only with the C caller's `dims`, `proc_grid` and `halo` arrays
    // and the lengths their header contracts give them (`ndim`, `ndim`, `n_halo`); `array_arg`
    // checks NULL, alignment and device memory.
    unsafe { array_arg::<i64>(p.cast::<c_void>(), n, name) }
}

/// This rank's block of an N-D array split over a Cartesian process grid as parlops_op_halo splits it
/// (PyLops-MPI's halo_block_split; `proc_grid` NULL puts all ranks on the last axis; ranks map to grid
/// coordinates row-major): `start` and `shape` get `ndim` entries each. Not collective.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_halo_block(
    ndim: c_int,
    dims: *const i64,
    proc_grid: *const i64,
    nranks: c_int,
    rank: c_int,
    start: *mut i64,
    shape: *mut i64,
) -> parlops_status {
    guard("parlops_halo_block", || {
        let nd = ndim_arg(ndim)?;
        let dims = i64_array(dims, nd, "dims")?;
        out_ok(start, "start")?;
        out_ok(shape, "shape")?;
        let grid = if proc_grid.is_null() {
            None
        } else {
            Some(i64_array(proc_grid, nd, "proc_grid")?)
        };
        let (s, sh) = crate::op::halo::block_of(dims, grid, nranks as i64, rank as i64)?;
        // SAFETY: `start` and `shape` were checked not NULL (`out_ok`) and hold `ndim` entries each
        // (header contract); `block_of` returns one entry per axis (`dims` has `nd` entries and the
        // grid was checked to have as many), so `s` and `sh` have `nd` entries; our fresh `Vec`s
        // cannot overlap the caller's arrays.
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr(), start, nd);
            std::ptr::copy_nonoverlapping(sh.as_ptr(), shape, nd);
        }
        Ok(())
    })
}

/// Halo (ghost cells) over a Cartesian process grid (PyLops-MPI's MPIHalo): the input is split by
/// blocks (parlops_halo_block; the vector holds this rank's block row-major), the output holds this
/// rank's block padded by `halo` cells per side with its neighbours' values (zeros outside the array).
/// `halo` has 1 value (the same on every side, trimmed to 0 at the global boundary), ndim values
/// (both sides of each axis) or 2*ndim values (minus, plus per axis); with ndim or 2*ndim values the
/// ghost cells at the global boundary stay, zero-padded. PyLops-MPI's MPIHalo `halo` maps as: an int
/// h -> n_halo = 1, {h}; a tuple (h,) -> n_halo = 2*ndim, every value h (not {h}: PyLops-MPI does not
/// trim a tuple); a tuple of ndim values -> n_halo = ndim (for ndim = 1, give {h, h}); a tuple of
/// 2*ndim values -> as it is. So dims (12,) with halo (2,) on 3 ranks is {2, 2}: 8 values per rank,
/// the first and last two zeros. The adjoint adds ghost values back to their owners (the true
/// transpose; PyLops-MPI's rmatvec drops them). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_halo(
    comm: *const parlops_comm,
    dtype: parlops_dtype,
    ndim: c_int,
    dims: *const i64,
    proc_grid: *const i64,
    n_halo: c_int,
    halo: *const i64,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_halo", || {
        // SAFETY: `arg` checks `comm` (live parlops_comm) and holds it for this call.
        let c = &unsafe { arg(comm, "comm")? }.inner;
        let args = ndim_arg(ndim).and_then(|nd| {
            if !(1..=64).contains(&n_halo) {
                crate::bail!(
                    InvalidArgument,
                    "argument 'n_halo' is {n_halo}; give 1, ndim or 2*ndim widths"
                );
            }
            let d = i64_array(dims, nd, "dims")?.to_vec();
            let h = i64_array(halo, n_halo as usize, "halo")?.to_vec();
            let g = if proc_grid.is_null() {
                None
            } else {
                Some(i64_array(proc_grid, nd, "proc_grid")?.to_vec())
            };
            Ok((d, g, h))
        });
        let pre = args.as_ref().map(|_| ()).map_err(|e| e.clone());
        create_op(c, dtype, out, pre, |dt| {
            let (d, g, h) = args?;
            with_dtype!(dt, T => crate::op::halo::halo::<T>(c, &d, g.as_deref(), &h).map(op_of::<T>))
        })
    })
}
