//! The inner loops of the CSR product: y = B x (optionally with the dot of y against another
//! vector in the same pass, and over the compressed list of non-empty rows), x += B^H y, and the
//! compressed row list itself.

use super::IndexInt;
use crate::scalar::Scalar;
use crate::vector::ops::add_dot as acc_dot;

/// The rows of a row pointer that hold entries, when they are under 60% of the rows.
pub(super) fn nonempty_rows<I: IndexInt>(p: &[I]) -> Option<Vec<usize>> {
    let n = p.len().saturating_sub(1);
    let count = p
        .windows(2)
        .filter(|w| w[1].to_i64() > w[0].to_i64())
        .count();
    if count * 10 >= n * 6 {
        return None;
    }
    let mut rows = Vec::new();
    if rows.try_reserve_exact(count).is_err() {
        return None;
    }
    rows.extend((0..n).filter(|&r| p[r + 1].to_i64() > p[r].to_i64()));
    Some(rows)
}

/// Rows with at least this many entries are summed in four interleaved chains (entry k into chain
/// k mod 4, then (s0 + s1) + (s2 + s3)): one chain of additions would otherwise bound a long row
/// (a finite-element row of 60 or more entries) below the memory bandwidth. Shorter rows, and every
/// row under PARLOPS_SUM_SEQUENTIAL, are summed in one chain in column order.
pub(super) const SPLIT_ROW: usize = 16;

/// One row of B x, with bounds checks (`CHECKED`) or without. SAFETY (unchecked): `r` < nrows and
/// the arrays passed [`super::LocalCsr::new`]'s checks and cannot have changed since (parlops owns them: row pointers
/// from 0, non-decreasing; every column index of the first p[nrows] entries in 0..ncols; at least
/// that many values), and x has ncols entries: every access below is in bounds.
#[inline(always)]
unsafe fn row_sum<T: Scalar, I: IndexInt, const CHECKED: bool>(
    p: &[I],
    idx: &[I],
    v: &[T],
    x: &[T],
    r: usize,
    split: bool,
) -> T {
    if CHECKED {
        let (a, b) = (p[r].to_usize(), p[r + 1].to_usize());
        let mut s = T::zero();
        for (j, c) in idx[a..b].iter().zip(&v[a..b]) {
            s += *c * x[j.to_usize()];
        }
        return s;
    }
    unsafe {
        let (a, b) = (
            p.get_unchecked(r).to_usize(),
            p.get_unchecked(r + 1).to_usize(),
        );
        let term =
            |k: usize| *v.get_unchecked(k) * *x.get_unchecked(idx.get_unchecked(k).to_usize());
        if split && b - a >= SPLIT_ROW {
            let mut c = [T::zero(); 4];
            let mut k = a;
            while k + 4 <= b {
                for (l, cl) in c.iter_mut().enumerate() {
                    *cl += term(k + l);
                }
                k += 4;
            }
            for (l, q) in (k..b).enumerate() {
                c[l] += term(q);
            }
            return (c[0] + c[1]) + (c[2] + c[3]);
        }
        let mut s = T::zero();
        for k in a..b {
            s += term(k);
        }
        s
    }
}

/// y = B x over the rows r0..r0 + y.len() (y[i] is row r0 + i; `add`: y += B x), and with `DOT`
/// the sum of conj(w[i]) (B x)[i] (w indexed like y). With `rows` (row numbers in that range, in
/// order) only those rows are visited, and added into y.
#[allow(clippy::too_many_arguments)]
pub(super) fn spmv<T: Scalar, I: IndexInt, const DOT: bool, const CHECKED: bool>(
    p: &[I],
    idx: &[I],
    v: &[T],
    x: &[T],
    y: &mut [T],
    r0: usize,
    add: bool,
    rows: Option<&[usize]>,
    w: &[T],
) -> (f64, f64) {
    let mut acc = (0.0, 0.0);
    let split = !crate::vector::ops::sequential_sums();
    // SAFETY: see row_sum; the caller checked x, y and w against the block's shape (r0 + y.len()
    // <= nrows), and `rows` holds row numbers in r0..r0 + y.len() (nonempty_rows, then cut).
    unsafe {
        match rows {
            Some(rows) => {
                for &r in rows {
                    let s = row_sum::<T, I, CHECKED>(p, idx, v, x, r, split);
                    let yr = y.get_unchecked_mut(r - r0);
                    *yr += s;
                    if DOT {
                        acc_dot(&mut acc, *w.get_unchecked(r - r0), s);
                    }
                }
            }
            None => {
                for i in 0..y.len() {
                    let s = row_sum::<T, I, CHECKED>(p, idx, v, x, r0 + i, split);
                    let yr = y.get_unchecked_mut(i);
                    *yr = if add { *yr + s } else { s };
                    if DOT {
                        acc_dot(&mut acc, *w.get_unchecked(i), s);
                    }
                }
            }
        }
    }
    acc
}

pub(super) fn spmv_h<T: Scalar, I: IndexInt>(p: &[I], idx: &[I], v: &[T], y: &[T], x: &mut [T]) {
    for (r, yr) in y.iter().enumerate() {
        let (a, b) = (p[r].to_usize(), p[r + 1].to_usize());
        for (j, a) in idx[a..b].iter().zip(&v[a..b]) {
            x[j.to_usize()] += a.conj() * *yr;
        }
    }
}
