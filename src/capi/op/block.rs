//! Block operators of per-rank local operators: block diagonal, vertical and horizontal stacks.

use std::ffi::c_int;

use super::super::args::with_dtype;
use super::super::handles::{arg, guard, parlops_comm, parlops_op};
use super::super::types::{parlops_dtype, parlops_status};
use super::{create_op, local_ops as checked_ops, op_of, typed_list};
use crate::error::Result;
use crate::op::block::{BlockDiag, VStack, hstack};

enum Kind {
    Diag,
    VStack,
    HStack,
}

fn block_common(
    comm: *const parlops_comm,
    dtype: parlops_dtype,
    n_local: c_int,
    ops: *const *const parlops_op,
    out: *mut *mut parlops_op,
    kind: Kind,
) -> Result<()> {
    // SAFETY: `comm` is the handle argument of the exported block constructor calling this; `arg`
    // checks it (live parlops_comm) and holds it for that call.
    let c = unsafe { arg(comm, "comm")? };
    let comm = &c.inner;
    // every rank takes part in the collective construction: the list is agreed with the dtype
    let list = checked_ops(n_local, ops, dtype);
    let pre = list.as_ref().map(|_| ()).map_err(|e| e.clone());
    create_op(comm, dtype, out, pre, |d| {
        let list = list?;
        with_dtype!(d, T => {
            let list = typed_list::<T>(&list)?;
            match kind {
                Kind::Diag => BlockDiag::<T>::new(comm, list).map(op_of::<T>),
                Kind::VStack => VStack::<T>::new(comm, list).map(op_of::<T>),
                Kind::HStack => hstack::<T>(comm, list).map(op_of::<T>),
            }
        })
    })
}

/// Block diagonal of per-rank local operators (created on MPI_COMM_SELF layouts): rank r's
/// `n_local` blocks (0 allowed) act on its part of x. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_block_diag(
    comm: *const parlops_comm,
    dtype: parlops_dtype,
    n_local: c_int,
    local_ops: *const *const parlops_op,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_block_diag", || {
        block_common(comm, dtype, n_local, local_ops, out, Kind::Diag)
    })
}

/// Vertical stack [A_1; A_2; ...] of per-rank local operators, all with the same number of columns:
/// x is replicated (broadcast layout), y split (rank r holds its blocks' rows). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_vstack(
    comm: *const parlops_comm,
    dtype: parlops_dtype,
    n_local: c_int,
    local_ops: *const *const parlops_op,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_vstack", || {
        block_common(comm, dtype, n_local, local_ops, out, Kind::VStack)
    })
}

/// Horizontal stack [A_1, A_2, ...] of per-rank local operators, all with the same number of rows:
/// x split (rank r holds its blocks' columns), y replicated (broadcast layout). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_hstack(
    comm: *const parlops_comm,
    dtype: parlops_dtype,
    n_local: c_int,
    local_ops: *const *const parlops_op,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_hstack", || {
        block_common(comm, dtype, n_local, local_ops, out, Kind::HStack)
    })
}
