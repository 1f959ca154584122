//! Block operators of distributed operators: the block diagonal (PyLops-MPI's MPIStackedBlockDiag),
//! the general block operator (MFEM's BlockOperator) and the block lower-triangular preconditioner.
//! Their own file (not `block`) so that their functions keep their place in the generated header.

use std::ffi::c_int;

use super::super::args::with_dtype;
use super::super::handles::{arg, arg_array, guard, opt_arg, parlops_comm, parlops_op};
use super::super::types::{parlops_dtype, parlops_status};
use super::{create_op_of, local_ops, op_of, typed_list};
use crate::error::Result;
use crate::op::AnyOp;
use crate::op::block::BlockDiag;
use crate::op::blockop::{BlockLower, BlockOp};

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
        // SAFETY: `arg` checks `comm` (live parlops_comm) and holds it for this call.
        let c = &unsafe { arg(comm, "comm")? }.inner;
        let list = local_ops(n, ops, dtype);
        let pre = list.as_ref().map(|_| ()).map_err(|e| e.clone());
        let idents = super::idents_of_array(n, ops);
        create_op_of(
            c,
            dtype,
            out,
            pre,
            Some((
                "numbers or operators (their number, order and identity)",
                idents,
            )),
            |d| {
                let list = list?;
                with_dtype!(d, T => BlockDiag::<T>::stacked(c, typed_list::<T>(&list)?).map(op_of::<T>))
            },
        )
    })
}

/// This rank's operators of an optional list (NULL entries allowed), each checked to be `dtype`.
fn optional_ops(
    count: usize,
    ops: *const *const parlops_op,
    name: &str,
    dtype: crate::scalar::DType,
) -> Result<Vec<Option<AnyOp>>> {
    if count > 0 && ops.is_null() {
        return Err(super::super::handles::null(name));
    }
    (0..count)
        .map(|k| {
            // SAFETY: `ops` is not NULL when `count` > 0 (checked above) and the callers pass the C
            // caller's array with its count, `count` readable handle pointers (header contract);
            // `k` < `count`. `opt_arg` takes NULL as `None` and checks anything else, holding it
            // shared for this call; only the `AnyOp`s (`Arc`s) are kept.
            let h = unsafe { opt_arg(*ops.add(k), &format!("{name}[{k}]"))? };
            match h {
                None => Ok(None),
                Some(o) if o.inner.dtype() == dtype => Ok(Some(o.inner.clone())),
                Some(o) => crate::bail!(
                    DTypeMismatch,
                    "{name}[{k}] is {}; the operator's dtype is {}",
                    o.inner.dtype().name(),
                    dtype.name()
                ),
            }
        })
        .collect()
}

/// The general block operator (MFEM's BlockOperator; PyLops-MPI's MPIStackedVStack,
/// MPIStackedHStack and MPIStackedBlockDiag are its one-column, one-row and diagonal cases): `m` x
/// `n` distributed operators on `comm`, row-major in `blocks`, NULL for a zero block. Every block
/// row and every block column needs at least one operator; the operators of a block row share their
/// rows, those of a block column their columns. Its rows and columns are stacked layouts
/// (parlops_layout_stack) of those parts: get them with parlops_op_layouts or
/// parlops_op_create_vecs, and move parts in and out with parlops_vec_stack_get/_set. The adjoint
/// is the block adjoint; the diagonal is the blocks' diagonals (zero for a NULL diagonal block), so
/// parlops_solver_set_jacobi works on it. Every rank passes the same pattern. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_block(
    comm: *const parlops_comm,
    dtype: parlops_dtype,
    m: c_int,
    n: c_int,
    blocks: *const *const parlops_op,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_block", || {
        // SAFETY: as above: `comm` is checked and held by `arg` for this call.
        let c = &unsafe { arg(comm, "comm")? }.inner;
        let list = (|| {
            if m < 1 || n < 1 {
                crate::bail!(
                    InvalidArgument,
                    "m = {m}, n = {n}: a block operator needs m, n >= 1"
                );
            }
            let count = (m as usize)
                .checked_mul(n as usize)
                .ok_or_else(|| crate::err!(InvalidArgument, "m * n overflows"))?;
            optional_ops(
                count,
                blocks,
                "blocks",
                super::super::args::dtype_arg(dtype)?,
            )
        })();
        let pre = list.as_ref().map(|_| ()).map_err(|e| e.clone());
        let count = if m > 0 && n > 0 {
            m.saturating_mul(n)
        } else {
            0
        };
        let idents = super::idents_of_array(count, blocks);
        create_op_of(
            c,
            dtype,
            out,
            pre,
            Some((
                "block patterns or blocks (m, n, which blocks are given and their identity)",
                idents,
            )),
            |d| {
                let list = list?;
                with_dtype!(d, T => {
                    let typed: Vec<Option<crate::op::Op<T>>> = list
                        .iter()
                        .map(|o| o.as_ref().map(|a| a.typed::<T>().ok_or_else(|| crate::err!(Internal, "block dtype"))).transpose())
                        .collect::<Result<_>>()?;
                    BlockOp::<T>::new(c, m as usize, n as usize, typed).map(op_of::<T>)
                })
            },
        )
    })
}

/// MFEM's BlockLowerTriangularPreconditioner: x_i = M_i (b_i - sum_{j<i} A_ij x_j), from a square
/// block operator `a` (parlops_op_block) and `n` preconditioners M_i (square on part i: a Jacobi
/// diagonal, an AMG, a parlops_op_create_inverse). The block-diagonal preconditioner is
/// parlops_op_block with only diagonal blocks. No adjoint. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_block_lower_triangular(
    a: *const parlops_op,
    n: c_int,
    diag: *const *const parlops_op,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_block_lower_triangular", || {
        // SAFETY: `arg` checks `a` (live parlops_op) and holds it shared for this call.
        let a = unsafe { arg(a, "a")? };
        let comm = a.inner.rows().comm().clone();
        let dtype = a.inner.dtype();
        // SAFETY: `diag` holds `n` operator handles when `n` > 0 (header contract); `arg_array`
        // checks the count, NULL and each handle (shared; `a` may be among them, all are only
        // read), keeping only `Arc`s.
        let list = unsafe { arg_array(n, diag, "n", "diag") }.and_then(|v| {
            v.iter()
                .enumerate()
                .map(|(i, o)| {
                    if o.inner.dtype() != dtype {
                        crate::bail!(
                            DTypeMismatch,
                            "diag[{i}] is {}; a is {}",
                            o.inner.dtype().name(),
                            dtype.name()
                        );
                    }
                    Ok(o.inner.clone())
                })
                .collect::<Result<Vec<AnyOp>>>()
        });
        let pre = list.as_ref().map(|_| ()).map_err(|e| e.clone());
        let idents = super::idents_of_values(&[a.ident as i64, super::idents_of_array(n, diag)]);
        create_op_of(
            &comm,
            dtype as parlops_dtype,
            out,
            pre,
            Some(("operators (a and the diagonal preconditioners)", idents)),
            |d| {
                let list = list?;
                with_dtype!(d, T => {
                    let at = a.inner.typed::<T>().ok_or_else(|| crate::err!(Internal, "dtype"))?;
                    BlockLower::<T>::new(at, typed_list::<T>(&list)?).map(op_of::<T>)
                })
            },
        )
    })
}
