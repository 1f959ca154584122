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
/// otherwise, where rows hold 16 entries or more on average, rows with 16-bit column offsets where
/// the rows span at most 65,535 columns (shorter rows stay CSR: they gain too little). Each row's
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
/// when num_offd_cols is 0. With PARLOPS_WRAP the arrays are used in place (no copy: keep them alive while
/// the operator lives, the row pointers and column indices unchanged; the values may change between
/// parlops calls that use the operator, announced with parlops_op_csr_update_values); with PARLOPS_COPY
/// they are copied. [collective]
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
    let b = c.blocks();
    Some((b.diag.values_ptr().cast(), b.offd.values_ptr().cast()))
}

/// Stage new values for a typed CSR operator on this rank (see parlops_op_csr_update_values).
///
/// # Safety
/// `values` and `offd_values` are NULL or hold `nnz` and `offd_nnz` values of A's dtype (header
/// contract of parlops_op_csr_update_values).
unsafe fn stage_values<T: Scalar>(
    op: &Op<T>,
    (nnz, values): (i64, *const c_void),
    (offd_nnz, offd_values): (i64, *const c_void),
) -> Result<Box<dyn FnOnce() + '_>> {
    use crate::op::csr::{NewValues, Origin};
    let c = op.as_any().downcast_ref::<CsrOp<T>>().ok_or_else(|| {
        crate::err!(
            InvalidArgument,
            "argument 'A' ({}) is not a CSR operator: only a matrix made by parlops_op_create_csr or parlops_op_create_parcsr takes new values",
            op.describe()
        )
    })?;
    let (dn, on) = c.local_nnz();
    let count = |v: i64, name: &str| {
        usize::try_from(v)
            .map_err(|_| crate::err!(InvalidArgument, "argument '{name}' is {v}; it must be >= 0"))
    };
    let (n, m) = (count(nnz, "nnz")?, count(offd_nnz, "offd_nnz")?);
    let origin = c.origin();
    let want = match origin {
        Origin::Rows => (dn + on, 0),
        _ => (dn, on),
    };
    if (n, m) != want {
        crate::bail!(
            SizeMismatch,
            "arguments 'nnz' and 'offd_nnz' are {n} and {m}, but A holds {} and {} entries on this rank ({}): the pattern may not change; a new pattern needs a new operator",
            want.0,
            want.1,
            origin.describe()
        );
    }
    // SAFETY: our caller's contract: each pointer is NULL or holds its count of values of A's
    // dtype; `value_slice` checks NULL, alignment and device memory, and the slices are read
    // before this call returns.
    let slice = |p: *const c_void, k: usize, name: &str| unsafe { value_slice::<T>(p, k, name) };
    // (an array of no values may be NULL: a rank without entries)
    let given = |p: *const c_void, k: usize| !p.is_null() || k == 0;
    let new = match (origin, values.is_null(), offd_values.is_null()) {
        (Origin::Rows, _, true) if given(values, n) => NewValues::Rows(slice(values, n, "values")?),
        (Origin::ParCsr, _, _) if given(values, n) && given(offd_values, m) => NewValues::Blocks(
            slice(values, n, "values")?,
            slice(offd_values, m, "offd_values")?,
        ),
        (Origin::Wrapped(_), true, true) => NewValues::InPlace,
        (Origin::Wrapped(_), _, _) => crate::bail!(
            InvalidArgument,
            "arguments 'values' ({values:p}) and 'offd_values' ({offd_values:p}) are not NULL, but A wraps the caller's arrays and parlops never writes a caller's arrays: A was {}",
            origin.describe()
        ),
        _ => crate::bail!(
            InvalidArgument,
            "arguments 'values' ({values:p}) and 'offd_values' ({offd_values:p}) do not fit A, which was {}",
            origin.describe()
        ),
    };
    let p = c.prepare_values(new)?;
    Ok(Box::new(move || c.commit_values(p)))
}

/// New values for a CSR operator with the same pattern (the matrix of the next time step or Newton
/// step), swapped in at once on every rank; what the pattern alone decides (the halo plan, the
/// layouts) is kept, and device copies are made again at their next use. What to pass depends on
/// how A was made:
///  - parlops_op_create_csr: `values` holds this rank's `nnz` values in the order of the row_ptr and
///    col_idx given then (nnz = row_ptr[local rows]); `offd_nnz` = 0, `offd_values` = NULL;
///  - parlops_op_create_parcsr with PARLOPS_COPY: `values` the diag block's `nnz` values and
///    `offd_values` the offd block's `offd_nnz` (each in the order of its arrays then; offd_values
///    may be NULL when offd_nnz is 0);
///  - parlops_op_create_parcsr with PARLOPS_WRAP: change the values in the wrapped arrays (only while
///    no parlops call uses A), then call this with both NULL and the blocks' counts, to say so.
///
/// Counts that differ from A's, or (WRAP) row pointers or column indices changed since A was made, are
/// a changed pattern: refused (a new pattern needs a new operator). Refused (PARLOPS_ERR_BUSY) while a
/// running solve holds A (as its operator or in its preconditioner) or another call uses it.
/// Preconditioners built on A follow through parlops_op_refresh, or a solver's reuse policy
/// (parlops_solver_set_pc_reuse). A failure on any rank leaves A unchanged on every rank (with
/// PARLOPS_WRAP, the arrays hold the new values already, but A's preconditioners and device copies do
/// not follow them until a call succeeds). [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_csr_update_values(
    a: *mut parlops_op,
    nnz: i64,
    values: *const c_void,
    offd_nnz: i64,
    offd_values: *const c_void,
) -> parlops_status {
    guard("parlops_op_csr_update_values", || {
        // SAFETY: `arg_mut` checks `a` (live parlops_op) and holds it exclusively for this call.
        let a = unsafe { super::super::handles::arg_mut(a, "A")? };
        let comm = a.inner.rows().comm().clone();
        // SAFETY: the C caller's arrays under the header contract above, as `stage_values` needs.
        let staged = crate::any_op!(&a.inner, op => unsafe {
            stage_values(op, (nnz, values), (offd_nnz, offd_values))
        });
        comm.agree_same(
            staged.as_ref().map(|_| ()).map_err(|e| e.clone()),
            "operators ([the operator's identity])",
            &[a.ident as i64],
        )?;
        staged?();
        Ok(())
    })
}
