//! The distributed block diagonal of distributed operators (PyLops-MPI's MPIStackedBlockDiag). Its
//! own file (not `block`) so that its function keeps its place in the generated header.

use std::ffi::c_int;

use super::super::args::with_dtype;
use super::super::handles::{arg, guard, parlops_comm, parlops_op};
use super::super::types::{parlops_dtype, parlops_status};
use super::{create_op, local_ops, op_of, typed_list};
use crate::op::block::BlockDiag;

/// diag(A_1, ..., A_n) of distributed operators on `comm` (PyLops-MPI's MPIStackedBlockDiag): every
/// rank passes the same n operators; the stacked vectors hold, on each rank, its part of x_1, then
/// of x_2, and so on. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_stacked_block_diag(
    comm: *const parlops_comm,
    dtype: parlops_dtype,
    n: c_int,
    ops: *const *const parlops_op,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_stacked_block_diag", || {
        let c = &unsafe { arg(comm, "comm")? }.inner;
        let list = local_ops(n, ops, dtype);
        let pre = list.as_ref().map(|_| ()).map_err(|e| e.clone());
        create_op(c, dtype, out, pre, |d| {
            let list = list?;
            with_dtype!(d, T => BlockDiag::<T>::stacked(c, typed_list::<T>(&list)?).map(op_of::<T>))
        })
    })
}
