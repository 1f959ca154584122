//! Distributed sparse matrices: CSR rows with global columns, and hypre's ParCSR split.

use std::ffi::c_void;
use std::sync::Arc;

use super::super::args::{array_arg, index_arg, ownership_arg, value_slice, with_dtype};
use super::super::handles::{arg, guard, parlops_layout, parlops_op, put_opt};
use super::super::types::{parlops_dtype, parlops_index, parlops_ownership, parlops_status};
use super::{create_op_on, op_of};
use crate::error::Result;
use crate::op::csr::{Arr, CsrOp, Idx, IndexInt, LocalCsr};
use crate::op::{AnyOp, IntoAnyOp, Op};
use crate::scalar::Scalar;
use crate::vector::Layout;

/// Number of entries of a CSR block from its row pointer.
///
/// # Safety
/// `indptr` is NULL or holds `nrows + 1` entries of `I` (see [`array_arg`]).
unsafe fn nnz_of<I: IndexInt>(indptr: *const c_void, nrows: usize, name: &str) -> Result<usize> {
    // SAFETY: our caller's contract: `indptr` holds `nrows + 1` index entries of type `I` (the row
    // pointer of a CSR block, by the header contract of the constructor); `array_arg` checks NULL,
    // alignment and device memory.
    let p = unsafe { array_arg::<I>(indptr, nrows + 1, name)? };
    let n = p[nrows].to_i64();
    if n < 0 {
        crate::bail!(
            InvalidArgument,
            "argument '{name}' ends at {n}, a negative entry count"
        );
    }
    Ok(n as usize)
}

/// The CSR operator from this rank's rows; a failure reading the arrays joins the constructor's
/// agreement. [collective]
fn from_rows<T: Scalar, I: IndexInt>(
    r: &Arc<Layout>,
    c: &Arc<Layout>,
    [p, j, v]: [*const c_void; 3],
) -> Result<AnyOp>
where
    Op<T>: IntoAnyOp,
{
    let nrows = r.local_len() as usize;
    // SAFETY: `from_rows` is called by parlops_op_create_csr with the C caller's arrays, which by
    // its header contract hold `nrows + 1` row pointers and then `row_ptr[nrows]` = `nnz` column
    // indices and values of the index type and dtype given; `array_arg`/`value_slice` check NULL,
    // alignment and device memory, and `from_local_rows` copies them before this call returns.
    let arrays = unsafe {
        nnz_of::<I>(p, nrows, "row_ptr").and_then(|nnz| {
            Ok((
                array_arg::<I>(p, nrows + 1, "row_ptr")?,
                array_arg::<I>(j, nnz, "col_idx")?,
                value_slice::<T>(v, nnz, "values")?,
            ))
        })
    };
    let (pp, jj, vv, pre) = match arrays {
        Ok((a, b, c)) => (a, b, c, Ok(())),
        Err(e) => (&[][..], &[][..], &[][..], Err(e)),
    };
    CsrOp::<T>::from_local_rows(r.clone(), c.clone(), pp, jj, vv, pre).map(op_of::<T>)
}

/// A distributed sparse matrix from this rank's rows in CSR form with GLOBAL column indices
/// (`row_ptr` has local rows + 1 entries starting at 0; column indices strictly increasing within each
/// row). The arrays are copied (split into hypre's diag and offd blocks), and the diag block is
/// stored in whichever layout moves fewer bytes or gathers faster on this CPU: for double precision
/// on a CPU with AVX-512, chunks of eight rows (SELL-8; rows sorted by length within windows of 128
/// rows where neighbouring rows differ in length), whose product gathers x for eight rows at once;
/// otherwise rows with 16-bit column offsets where the rows span at most 65,535 columns. Each row's
/// sum keeps the row-by-row order, so the results have the same bits as the plain CSR loop. Setting
/// the environment variable PARLOPS_CSR_LAYOUT=rows before the call keeps the CSR rows.
/// [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_create_csr(
    rows: *const parlops_layout,
    cols: *const parlops_layout,
    dtype: parlops_dtype,
    index_type: parlops_index,
    row_ptr: *const c_void,
    col_idx: *const c_void,
    values: *const c_void,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_create_csr", || {
        let it = index_arg(index_type);
        let arrays = [row_ptr, col_idx, values];
        let pre = it.clone().map(|_| ());
        create_op_on(rows, cols, dtype, out, pre, |d, r, c| {
            with_dtype!(d, T => if it? == 0 {
                from_rows::<T, i32>(r, c, arrays)
            } else {
                from_rows::<T, i64>(r, c, arrays)
            })
        })
    })
}

/// Borrow (WRAP) or copy (COPY) a caller's array.
fn arr<X: Copy>(s: &[X], wrap_it: bool) -> Arr<X> {
    if wrap_it {
        Arr::Borrowed {
            ptr: s.as_ptr(),
            len: s.len(),
        }
    } else {
        Arr::Owned(s.to_vec())
    }
}

/// One CSR block (diag or offd) of `nrows` x `ncols` from the caller's arrays `[i, j, a]`.
///
/// # Safety
/// `p`, `j`, `v` are a CSR block of `nrows` rows of index type `I` and scalar `T` (`nrows + 1` row
/// pointers, then `p[nrows]` column indices and values), alive and unchanged while the result
/// lives when `wrap_it`.
unsafe fn block<T: Scalar, I: IndexInt>(
    (nrows, ncols): (usize, usize),
    [p, j, v]: [*const c_void; 3],
    wrap_it: bool,
    what: &str,
) -> Result<LocalCsr<T>>
where
    Idx: From<Arr<I>>,
{
    let name = |s: &str| format!("{what}_{s}");
    // SAFETY: our caller's contract: `p`, `j`, `v` are a CSR block of `nrows` rows (header contract
    // of parlops_op_create_parcsr: `nrows + 1` row pointers, then `nnz` = `p[nrows]` indices and
    // values), kept alive and unchanged while the operator lives when `wrap_it` (PARLOPS_WRAP),
    // which is what the borrowed `Arr`s rely on; NULL, alignment and device memory are checked by
    // `array_arg`.
    unsafe {
        let nnz = nnz_of::<I>(p, nrows, &name("i"))?;
        let pp = array_arg::<I>(p, nrows + 1, &name("i"))?;
        let jj = array_arg::<I>(j, nnz, &name("j"))?;
        let vv = value_slice::<T>(v, nnz, &name("a"))?;
        LocalCsr::new(
            nrows,
            ncols,
            Idx::from(arr(pp, wrap_it)),
            Idx::from(arr(jj, wrap_it)),
            arr(vv, wrap_it),
            what,
        )
    }
}

/// The ParCSR operator from this rank's diag and offd blocks; a failure reading them joins the
/// constructor's agreement. [collective]
fn from_parcsr<T: Scalar, I: IndexInt>(
    r: &Arc<Layout>,
    c: &Arc<Layout>,
    diag: [*const c_void; 3],
    offd: [*const c_void; 3],
    wrap_it: bool,
    col_map: Vec<i64>,
) -> Result<AnyOp>
where
    Op<T>: IntoAnyOp,
    Idx: From<Arr<I>>,
{
    let nrows = r.local_len() as usize;
    let ncols = c.local_len() as usize;
    let nofd = col_map.len();
    // SAFETY: `diag` are the C caller's diag arrays of parlops_op_create_parcsr, a CSR block of
    // this rank's rows and columns as `block` requires (header contract, including their lifetime
    // under PARLOPS_WRAP).
    let dg = unsafe { block::<T, I>((nrows, ncols), diag, wrap_it, "diag") };
    let od = if offd[0].is_null() && nofd == 0 {
        Ok(None)
    } else {
        // SAFETY: as above: `offd` is not NULL here or `num_offd_cols` > 0, and then the C caller's
        // offd arrays are a CSR block of this rank's rows and `nofd` columns (header contract).
        unsafe { block::<T, I>((nrows, nofd), offd, wrap_it, "offd") }.map(Some)
    };
    let (dg, od) = match dg.and_then(|d| Ok((d, od?))) {
        Ok((a, b)) => (Ok(a), Ok(b)),
        Err(e) => (Err(e.clone()), Err(e)),
    };
    CsrOp::<T>::from_parcsr(r.clone(), c.clone(), dg, od, col_map).map(op_of::<T>)
}

/// A distributed sparse matrix from hypre's ParCSR split (as in hypre_ParCSRMatrix and MFEM's
/// HypreParMatrix): `diag_*` is the CSR block of this rank's rows and owned columns (LOCAL column
/// indices, any order within a row), `offd_*` the block of other columns with compressed indices
/// 0..num_offd_cols-1, and `col_map_offd` their strictly increasing GLOBAL indices. `offd_*` may be NULL
/// when num_offd_cols is 0. With PARLOPS_WRAP the arrays are used in place (no copy: keep them alive and
/// unchanged while the operator lives); with PARLOPS_COPY they are copied. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_create_parcsr(
    rows: *const parlops_layout,
    cols: *const parlops_layout,
    dtype: parlops_dtype,
    index_type: parlops_index,
    diag_i: *const c_void,
    diag_j: *const c_void,
    diag_a: *const c_void,
    offd_i: *const c_void,
    offd_j: *const c_void,
    offd_a: *const c_void,
    num_offd_cols: i64,
    col_map_offd: *const i64,
    ownership: parlops_ownership,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_create_parcsr", || {
        let args = index_arg(index_type).and_then(|it| {
            let wrap_it = ownership_arg(ownership)?;
            if num_offd_cols < 0 {
                crate::bail!(
                    InvalidArgument,
                    "argument 'num_offd_cols' is {num_offd_cols}; it must be >= 0"
                );
            }
            let n = num_offd_cols as usize;
            // SAFETY: `n` = `num_offd_cols` >= 0 (checked above) and the C caller promises that
            // many global indices at `col_map_offd` (header contract); they are copied at once.
            let cm = unsafe { array_arg::<i64>(col_map_offd.cast(), n, "col_map_offd")? };
            Ok((it, wrap_it, cm.to_vec()))
        });
        let pre = args.as_ref().map(|_| ()).map_err(|e| e.clone());
        let (diag, offd) = ([diag_i, diag_j, diag_a], [offd_i, offd_j, offd_a]);
        create_op_on(rows, cols, dtype, out, pre, |d, r, c| {
            let (it, wrap_it, col_map) = args?;
            with_dtype!(d, T => if it == 0 {
                from_parcsr::<T, i32>(r, c, diag, offd, wrap_it, col_map)
            } else {
                from_parcsr::<T, i64>(r, c, diag, offd, wrap_it, col_map)
            })
        })
    })
}

/// Addresses of the value arrays a CSR operator reads (diag and offd): with PARLOPS_WRAP they are the
/// caller's own pointers. For checking zero-copy use; either output may be NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_csr_arrays(
    a: *const parlops_op,
    diag_values: *mut *const c_void,
    offd_values: *mut *const c_void,
) -> parlops_status {
    guard("parlops_op_csr_arrays", || {
        // SAFETY: `arg` checks `a` (live parlops_op) and holds it shared for this call.
        let a = unsafe { arg(a, "A")? };
        let ptrs = crate::any_op!(&a.inner, op => csr_ptrs(op));
        let Some((d, o)) = ptrs else {
            crate::bail!(
                InvalidArgument,
                "argument 'A' ({}) is not a CSR operator",
                a.inner.describe()
            );
        };
        // SAFETY: `diag_values` and `offd_values` are each NULL or a writable pointer (header
        // contract), as `put_opt` requires.
        unsafe {
            put_opt(diag_values, d);
            put_opt(offd_values, o);
        }
        Ok(())
    })
}

/// The addresses of a CSR operator's value arrays (diag, offd); `None` for other operators.
fn csr_ptrs<T: Scalar>(op: &Op<T>) -> Option<(*const c_void, *const c_void)> {
    let c = op.as_any().downcast_ref::<CsrOp<T>>()?;
    Some((
        c.diag_block().values_ptr().cast(),
        c.offd_block().values_ptr().cast(),
    ))
}
