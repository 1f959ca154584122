//! A CSR matrix's rows with global column indices split into its local blocks: diag (the rank's
//! own columns, local indices) and offd (the other ranks' columns, compressed), the diag block
//! laid out in SELL-8 chunks straight from the caller's rows where that layout applies.

use super::IndexInt;
use super::block::{Arr, LocalCsr, room, rows_only};
use super::kernels::nonempty_rows;
use super::sell::{RowSource, Sell};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::Layout;

/// The diag block of the caller's rows, read in place: row r's entries in the rank's own columns
/// (in the caller's order), mapped to local columns; `dptr` their row pointers.
struct DiagRows<'a, T, I> {
    dptr: &'a [i64],
    p: &'a [I],
    i: &'a [I],
    v: &'a [T],
    c0: i64,
    cl: i64,
}

impl<T: Scalar, I: IndexInt> RowSource<T> for DiagRows<'_, T, I> {
    fn nrows(&self) -> usize {
        self.dptr.len() - 1
    }
    fn nnz(&self) -> usize {
        self.dptr[self.nrows()] as usize
    }
    fn row_len(&self, r: usize) -> usize {
        (self.dptr[r + 1] - self.dptr[r]) as usize
    }
    fn row_each<F: FnMut(usize, usize, T)>(&self, r: usize, mut f: F) {
        let mut k = 0;
        for q in self.p[r].to_usize()..self.p[r + 1].to_usize() {
            let j = self.i[q].to_i64() - self.c0;
            if j >= 0 && j < self.cl {
                f(k, j as usize, self.v[q]);
                k += 1;
            }
        }
    }
}

/// Split rows with global column indices into diag (own columns, local indices), offd (compressed)
/// and the sorted ghost list. Each block's arrays are allocated once, at their final size, with
/// 32-bit indices when its entries and columns fit.
pub(in crate::op::csr) fn split_rows<T: Scalar, I: IndexInt>(
    rows: &Layout,
    cols: &Layout,
    indptr: &[I],
    indices: &[I],
    values: &[T],
) -> Result<(LocalCsr<T>, LocalCsr<T>, Vec<i64>)> {
    let (c0, cl) = (cols.local_start(), cols.local_len());
    let own = |j: i64| j >= c0 && j < c0 + cl;
    let nrows = rows.local_len() as usize;
    let nnz = indptr[nrows].to_usize();
    // each row's own entries (the diag block's row pointers)
    let mut dptr: Vec<i64> = room(nrows + 1, "the diag block's row pointers")?;
    dptr.push(0);
    for r in 0..nrows {
        let row = &indices[indptr[r].to_usize()..indptr[r + 1].to_usize()];
        let k = row.iter().filter(|j| own(j.to_i64())).count();
        dptr.push(dptr[r] + k as i64);
    }
    let n_own = dptr[nrows] as usize;
    let mut ghosts: Vec<i64> = room(nnz - n_own, "ghost column list")?;
    // the rows with entries in other ranks' columns (the offd block visits only them)
    let mut grows: Vec<usize> = Vec::new();
    if n_own < nnz {
        for r in 0..nrows {
            let before = ghosts.len();
            ghosts.extend(
                indices[indptr[r].to_usize()..indptr[r + 1].to_usize()]
                    .iter()
                    .map(|j| j.to_i64())
                    .filter(|&j| !own(j)),
            );
            if ghosts.len() > before {
                grows.try_reserve(1).map_err(|_| {
                    crate::err!(
                        OutOfMemory,
                        "cannot allocate the list of rows with ghost columns"
                    )
                })?;
                grows.push(r);
            }
        }
    }
    ghosts.sort_unstable();
    ghosts.dedup();
    // one block: the entries whose global column `pick` maps to a block column (`pick` a type
    // parameter, not `dyn`: it runs once per entry and is inlined); `only`: the rows that may
    // hold picked entries, in order (None: every row); `make` below picks 32- or 64-bit indices
    fn block<T: Scalar, I: IndexInt, J: IndexInt, F: Fn(i64) -> Option<usize>>(
        indptr: &[I],
        indices: &[I],
        values: &[T],
        count: usize,
        ncols: usize,
        pick: F,
        only: Option<&[usize]>,
    ) -> Result<LocalCsr<T>> {
        let nrows = indptr.len() - 1;
        let (mut p, mut i, mut v) = (
            room::<J>(nrows + 1, "CSR row pointers")?,
            room::<J>(count, "CSR column indices")?,
            room::<T>(count, "CSR values")?,
        );
        p.push(J::from_usize(0));
        let mut next = 0;
        for r in 0..nrows {
            let visit = match only {
                None => true,
                Some(rows) => {
                    let hit = rows.get(next) == Some(&r);
                    next += hit as usize;
                    hit
                }
            };
            if visit {
                for k in indptr[r].to_usize()..indptr[r + 1].to_usize() {
                    if let Some(c) = pick(indices[k].to_i64()) {
                        i.push(J::from_usize(c));
                        v.push(values[k]);
                    }
                }
            }
            p.push(J::from_usize(i.len()));
        }
        let nz_rows = nonempty_rows(&p);
        Ok(LocalCsr {
            nrows,
            ncols,
            indptr: J::idx(Arr::Owned(p)),
            indices: J::idx(Arr::Owned(i)),
            values: Arr::Owned(v),
            nz_rows,
            compact: None,
        })
    }
    #[allow(clippy::too_many_arguments)]
    fn make<T: Scalar, I: IndexInt, F: Fn(i64) -> Option<usize>>(
        indptr: &[I],
        indices: &[I],
        values: &[T],
        count: usize,
        ncols: usize,
        pick: F,
        only: Option<&[usize]>,
    ) -> Result<LocalCsr<T>> {
        if count < i32::MAX as usize && ncols < i32::MAX as usize {
            block::<T, I, i32, F>(indptr, indices, values, count, ncols, pick, only)
        } else {
            block::<T, I, i64, F>(indptr, indices, values, count, ncols, pick, only)
        }
    }
    let p = &indptr[..nrows + 1];
    // the diag block straight into SELL-8 chunks where that layout applies (no CSR copy between:
    // one copy of the entries, and the peak memory of a creation is the caller's arrays and it),
    // else as CSR arrays, made compact later where that pays
    let direct = if Sell::<T>::pays() && !rows_only() {
        let src = DiagRows {
            dptr: &dptr,
            p,
            i: indices,
            v: values,
            c0,
            cl,
        };
        Sell::from_rows(&src, cl as usize)
            .map(|s| LocalCsr::compact_sell(nrows, cl as usize, s, nonempty_rows(&dptr)))
    } else {
        None
    };
    drop(dptr);
    let diag = match direct {
        Some(d) => d,
        None => make(
            p,
            indices,
            values,
            n_own,
            cl as usize,
            |j| own(j).then(|| (j - c0) as usize),
            None,
        )?,
    };
    let offd = make(
        p,
        indices,
        values,
        nnz - n_own,
        ghosts.len(),
        |j| (!own(j)).then(|| ghosts.binary_search(&j).unwrap_or(0)),
        Some(&grows),
    )?;
    Ok((diag, offd, ghosts))
}
