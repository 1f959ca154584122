//! Dense products by SUMMA on a square process grid (PyLops-MPI's MatrixMult, kind "summa").

use std::ffi::{c_int, c_void};

use super::super::args::{value_slice, with_dtype};
use super::super::handles::{arg, guard, parlops_comm, parlops_op, put_opt};
use super::super::types::{parlops_dtype, parlops_status};
use super::{create_op, op_of};
use crate::op::summa::{Summa, local_a_len, tile_checked};

/// Tile `index` of an extent `n` split over `grid` process rows or columns as the SUMMA operator
/// splits it: [index*b, min((index+1)*b, n)) with b = ceil(n / grid). Not collective.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_summa_tile(
    n: i64,
    grid: c_int,
    index: c_int,
    start: *mut i64,
    len: *mut i64,
) -> parlops_status {
    guard("parlops_summa_tile", || {
        let (s, l) = tile_checked(n, grid as i64, index as i64)?;
        // SAFETY: `start` and `len` are each NULL or a writable int64 (header contract), as
        // `put_opt` requires.
        unsafe {
            put_opt(start, s);
            put_opt(len, l);
        }
        Ok(())
    })
}

/// Dense product Y = A X by SUMMA on a square p x p process grid (PyLops-MPI's MatrixMult, kind
/// "summa"; rank = row * p + col): A is N x K, X is K x M, Y is N x M, each split in tiles
/// (parlops_summa_tile); `a_local` is this rank's tile of A, row-major. Vectors hold this rank's tile
/// of X (columns) or Y (rows), row-major. Needs a square number of ranks. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_create_dense_summa(
    comm: *const parlops_comm,
    dtype: parlops_dtype,
    n: i64,
    k: i64,
    m: i64,
    a_local: *const c_void,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_create_dense_summa", || {
        // SAFETY: `arg` checks `comm` (live parlops_comm) and holds it for this call.
        let c = &unsafe { arg(comm, "comm")? }.inner;
        let want = local_a_len(c, n, k);
        create_op(c, dtype, out, Ok(()), |d| {
            with_dtype!(d, T => {
                // this rank's tile is read with the dtype known: agreed before SUMMA's collectives
                // SAFETY: the C caller promises `a_local` holds this rank's tile of A, `want` =
                // `local_a_len` entries of `dtype` (header contract of
                // parlops_op_create_dense_summa); `value_slice` checks NULL, alignment and device
                // memory, and `Summa::new` copies the tile within this call.
                let (tile, pre) = match unsafe { value_slice::<T>(a_local, want, "a_local") } {
                    Ok(s) => (s, Ok(())),
                    Err(e) => (&[][..], Err(e)),
                };
                c.agree(pre)?;
                Summa::<T>::new(c, n, k, m, tile).map(op_of::<T>)
            })
        })
    })
}
