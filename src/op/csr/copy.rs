//! A block's entries copied out row by row into flat arrays with global columns (the copy of a
//! matrix to hypre), without a call per entry through a `dyn` closure.

use super::block::{Idx, IndexInt, LocalCsr};
use crate::scalar::Scalar;

/// How [`LocalCsr::scatter`] turns a block's column into a global one.
#[derive(Clone, Copy)]
pub(crate) enum ColMap<'a> {
    /// The block's column plus this offset (a diag block: the rank's first column).
    Offset(i64),
    /// The block's column looked up in this table (an offd block: its column map).
    Table(&'a [i64]),
}

/// [`LocalCsr::scatter`] over any row layout (`row(r)`: row r's entries in storage order): one
/// monomorphic loop per map.
pub(super) fn scatter_rows<T: Scalar, It: Iterator<Item = (usize, T)>>(
    nrows: usize,
    row: impl Fn(usize) -> It,
    fill: &mut [usize],
    map: ColMap<'_>,
    cols: &mut [i64],
    vals: &mut [T],
) {
    for (r, f) in fill.iter_mut().enumerate().take(nrows) {
        let mut k = *f;
        match map {
            ColMap::Offset(o) => {
                for (c, v) in row(r) {
                    cols[k] = o + c as i64;
                    vals[k] = v;
                    k += 1;
                }
            }
            ColMap::Table(t) => {
                for (c, v) in row(r) {
                    cols[k] = t[c];
                    vals[k] = v;
                    k += 1;
                }
            }
        }
        *f = k;
    }
}

impl<T: Scalar> LocalCsr<T> {
    /// Add each row's stored entry count to `counts[row]`.
    pub(crate) fn add_row_counts(&self, counts: &mut [usize]) {
        fn go<I: IndexInt>(p: &[I], counts: &mut [usize]) {
            for (r, n) in counts
                .iter_mut()
                .enumerate()
                .take(p.len().saturating_sub(1))
            {
                *n += p[r + 1].to_usize() - p[r].to_usize();
            }
        }
        match (&self.compact, &self.indptr) {
            (Some(c), _) => c.rows().add_row_counts_dyn(counts),
            (None, Idx::I32(p)) => go(p.as_slice(), counts),
            (None, Idx::I64(p)) => go(p.as_slice(), counts),
        }
    }

    /// Row r's entries written from `fill[r]` on (which moves past them), in storage order: the
    /// global column through `map` into `cols`, the value into `vals`. What [`Self::for_each`]
    /// visits, without a call per entry through a `dyn` closure (a copy of a million-row matrix
    /// to hypre).
    pub(crate) fn scatter(
        &self,
        fill: &mut [usize],
        map: ColMap<'_>,
        cols: &mut [i64],
        vals: &mut [T],
    ) {
        fn go<T: Scalar, I: IndexInt>(
            p: &[I],
            idx: &[I],
            v: &[T],
            args: (&mut [usize], ColMap<'_>, &mut [i64], &mut [T]),
        ) {
            let row = |r: usize| {
                (p[r].to_usize()..p[r + 1].to_usize()).map(|k| (idx[k].to_usize(), v[k]))
            };
            let (fill, map, cols, vals) = args;
            scatter_rows(p.len().saturating_sub(1), row, fill, map, cols, vals)
        }
        if let Some(c) = &self.compact {
            return c.rows().scatter_dyn(fill, map, cols, vals);
        }
        let args = (fill, map, cols, vals);
        match (&self.indptr, &self.indices) {
            (Idx::I32(p), Idx::I32(i)) => {
                go(p.as_slice(), i.as_slice(), self.values.as_slice(), args)
            }
            (Idx::I64(p), Idx::I64(i)) => {
                go(p.as_slice(), i.as_slice(), self.values.as_slice(), args)
            }
            _ => unreachable!("validated at construction"),
        }
    }
}
