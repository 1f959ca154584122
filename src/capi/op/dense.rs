//! Dense matrices distributed by block rows.

use std::ffi::c_void;

use super::super::args::{value_slice, with_dtype};
use super::super::handles::{guard, parlops_layout, parlops_op};
use super::super::types::{parlops_dtype, parlops_status};
use super::{create_op_on, op_of};
use crate::op::dense::DenseBlockRow;

/// A dense matrix distributed by block rows (PyLops-MPI's MatrixMult): `local_rows` holds this rank's
/// rows of the layout `rows`, all global columns, row-major (copied). The forward gathers x; the
/// adjoint sums over ranks. `cols` may be split or replicated. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_create_dense(
    rows: *const parlops_layout,
    cols: *const parlops_layout,
    dtype: parlops_dtype,
    local_rows: *const c_void,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_create_dense", || {
        create_op_on(rows, cols, dtype, out, Ok(()), |d, r, c| {
            with_dtype!(d, T => {
                let n = DenseBlockRow::<T>::local_entries(r, c)?;
                // SAFETY: the C caller promises `local_rows` holds this rank's rows of `rows` times
                // the global columns, `n` entries of `dtype` (header contract of
                // parlops_op_create_dense); `value_slice` checks NULL, alignment and device memory,
                // and `from_slice` copies them.
                let vals = unsafe { value_slice::<T>(local_rows, n, "local_rows")? };
                DenseBlockRow::<T>::from_slice(r.clone(), c.clone(), vals).map(op_of::<T>)
            })
        })
    })
}
