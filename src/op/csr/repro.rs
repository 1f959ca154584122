//! A CSR product in the reproducible mode (`PARLOPS_SUM_REPRODUCIBLE`): every row summed in one
//! chain in the order of its global columns, so that its bits do not depend on how the rows and
//! columns are split over the ranks. The diag product already sums a row of the diag block in one
//! chain in entry order (the mode sets the sequential order); the rows that also have entries in
//! the offd block, and those whose diag entries are not in column order, are formed again after the
//! ghosts arrive, from their entries sorted by global column: the same chain a rank holding the
//! whole row forms. The adjoint is the product of the conjugate transpose, made as a CSR matrix of
//! its own at the first adjoint of the mode ([`transpose`]): each x_j = sum_i conj(a_ij) y_i is then a
//! row in global order too (the ordinary adjoint adds each rank's share of x_j in turn).

use std::sync::Arc;

use super::{Blocks, CsrOp};
use crate::error::{Result, try_reserve, try_vec};
use crate::scalar::Scalar;
use crate::vector::Layout;

/// The rows formed again, with their entries in global column order; each entry's operand is
/// x[i] for i < `nloc`, else the ghost i - `nloc`.
pub(super) struct ReproRows<T> {
    /// The values version of the blocks these were made from.
    pub version: u64,
    rows: Vec<usize>,
    ptr: Vec<usize>,
    src: Vec<usize>,
    val: Vec<T>,
    nloc: usize,
}

impl<T: Scalar> ReproRows<T> {
    /// From the blocks: `first_col` is this rank's first global column, `col_map` the offd block's
    /// global columns; `every` takes every row (the device's product, whose own diag product does
    /// not sum a row in one chain), else only the rows with offd entries or unsorted ones. [local]
    pub fn new(
        blk: &Blocks<T>,
        first_col: i64,
        col_map: &[i64],
        version: u64,
        every: bool,
    ) -> Result<Self> {
        let nrows = blk.diag.nrows;
        let nloc = blk.diag.ncols;
        let what = "the reproducible product's row list";
        let mut mark = Vec::new();
        try_reserve(&mut mark, nrows, what)?;
        mark.resize(nrows, every);
        blk.offd.for_each(|r, _, _| mark[r] = true);
        // rows whose diag entries are not in increasing column order
        let mut last: Vec<i64> = Vec::new();
        try_reserve(&mut last, nrows, what)?;
        last.resize(nrows, -1);
        blk.diag.for_each(|r, c, _| {
            if (c as i64) < last[r] {
                mark[r] = true;
            }
            last[r] = c as i64;
        });
        drop(last);
        let mut rows = Vec::new();
        try_reserve(&mut rows, mark.iter().filter(|&&m| m).count(), what)?;
        rows.extend((0..nrows).filter(|&r| mark[r]));
        // position of each marked row in `rows`, then its entries (global column, operand, value)
        let mut pos = Vec::new();
        try_reserve(&mut pos, nrows, what)?;
        pos.resize(nrows, usize::MAX);
        for (k, &r) in rows.iter().enumerate() {
            pos[r] = k;
        }
        let mut ents: Vec<(usize, i64, usize, T)> = Vec::new();
        let mut count = 0usize;
        blk.diag
            .for_each(|r, _, _| count += (pos[r] != usize::MAX) as usize);
        blk.offd
            .for_each(|r, _, _| count += (pos[r] != usize::MAX) as usize);
        try_reserve(&mut ents, count, what)?;
        blk.diag.for_each(|r, c, v| {
            if pos[r] != usize::MAX {
                ents.push((pos[r], first_col + c as i64, c, v));
            }
        });
        blk.offd.for_each(|r, c, v| {
            ents.push((pos[r], col_map[c], nloc + c, v));
        });
        // stable: entries of one column (duplicates) keep the caller's order
        ents.sort_by_key(|e| (e.0, e.1));
        let mut ptr = Vec::new();
        try_reserve(&mut ptr, rows.len() + 1, what)?;
        ptr.push(0);
        let (mut src, mut val) = (Vec::new(), Vec::new());
        try_reserve(&mut src, ents.len(), what)?;
        try_reserve(&mut val, ents.len(), what)?;
        let mut k = 0;
        for i in 0..rows.len() {
            while k < ents.len() && ents[k].0 == i {
                src.push(ents[k].2);
                val.push(ents[k].3);
                k += 1;
            }
            ptr.push(src.len());
        }
        Ok(ReproRows {
            version,
            rows,
            ptr,
            src,
            val,
            nloc,
        })
    }

    /// The rows as CSR arrays over the operand [x | ghosts] (row pointers, operand indices, values,
    /// x's length), for a backend that copies them; made with `every`, row i is this rank's row i.
    pub fn into_arrays(self) -> (Vec<usize>, Vec<usize>, Vec<T>, usize) {
        (self.ptr, self.src, self.val, self.nloc)
    }

    /// The marked rows of y = A x formed again from x and the ghosts (the chain of the CSR loop:
    /// from zero, each value times its operand added in column order).
    pub fn apply(&self, x: &[T], ghost: &[T], y: &mut [T]) {
        for (i, &r) in self.rows.iter().enumerate() {
            let mut s = T::zero();
            for k in self.ptr[i]..self.ptr[i + 1] {
                let j = self.src[k];
                let xj = if j < self.nloc {
                    x[j]
                } else {
                    ghost[j - self.nloc]
                };
                s += self.val[k] * xj;
            }
            y[r] = s;
        }
    }
}

/// The conjugate transpose of the matrix whose blocks are `blk` (rows `rows`, columns `cols`,
/// offd columns `col_map`): every entry sent to the owner of its column, which makes its rows.
/// [collective]
pub(super) fn transpose<T: Scalar>(
    blk: &Blocks<T>,
    rows: &Arc<Layout>,
    cols: &Arc<Layout>,
    col_map: &[i64],
) -> Result<CsrOp<T>> {
    let comm = rows.comm();
    let (p, me) = (comm.size() as usize, comm.rank() as usize);
    let (row0, col0) = (rows.offsets()[me], cols.offsets()[me]);
    let coff = cols.offsets();
    // the owner of global column j: the last rank whose first column is at most j (empty ranks
    // share their offset with the next one)
    let owner = |j: i64| coff.partition_point(|&o| o <= j).saturating_sub(1);
    let what = "the transpose of the reproducible adjoint";
    let mut counts = try_vec(p, 0i64, what)?;
    blk.diag
        .for_each(|_, c, _| counts[owner(col0 + c as i64)] += 1);
    blk.offd.for_each(|_, c, _| counts[owner(col_map[c])] += 1);
    let mut displs = try_vec(p, 0i64, what)?;
    for q in 1..p {
        displs[q] = displs[q - 1] + counts[q - 1];
    }
    let total = (displs[p - 1] + counts[p - 1]) as usize;
    let mut idx = try_vec(2 * total, 0i64, what)?;
    let mut val = try_vec(total, T::zero(), what)?;
    let mut at = displs.clone();
    let mut put = |i: i64, j: i64, v: T| {
        let q = owner(j);
        let k = at[q] as usize;
        at[q] += 1;
        idx[2 * k] = j;
        idx[2 * k + 1] = i;
        val[k] = v.conj();
    };
    blk.diag
        .for_each(|r, c, v| put(row0 + r as i64, col0 + c as i64, v));
    blk.offd
        .for_each(|r, c, v| put(row0 + r as i64, col_map[c], v));
    let rcounts = comm.alltoall_i64(&counts)?;
    let two = |v: &[i64]| v.iter().map(|c| 2 * c).collect::<Vec<_>>();
    let ridx = comm.alltoallv_i64(&idx, &two(&counts), &two(&rcounts))?;
    let mut rdispls = try_vec(p, 0i64, what)?;
    for q in 1..p {
        rdispls[q] = rdispls[q - 1] + rcounts[q - 1];
    }
    let rtotal = ridx.len() / 2;
    let mut rval = try_vec(rtotal, T::zero(), what)?;
    comm.alltoallv(&val, &counts, &displs, &mut rval, &rcounts, &rdispls)?;
    // this rank's rows of the transpose: by local row, then by column
    let mut order: Vec<usize> = Vec::new();
    try_reserve(&mut order, rtotal, what)?;
    order.extend(0..rtotal);
    order.sort_by_key(|&k| (ridx[2 * k], ridx[2 * k + 1]));
    let nrows = cols.local_len() as usize;
    let mut ip = try_vec(nrows + 1, 0i64, what)?;
    let mut ix = try_vec(rtotal, 0i64, what)?;
    let mut v = try_vec(rtotal, T::zero(), what)?;
    for (n, &k) in order.iter().enumerate() {
        let r = (ridx[2 * k] - col0) as usize;
        ip[r + 1] += 1;
        ix[n] = ridx[2 * k + 1];
        v[n] = rval[k];
    }
    for r in 0..nrows {
        ip[r + 1] += ip[r];
    }
    CsrOp::from_local_rows(cols.clone(), rows.clone(), &ip, &ix, &v, Ok(()))
}
