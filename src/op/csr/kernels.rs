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
    // SAFETY: our caller's contract (the doc above): `r` < nrows and the arrays passed
    // `LocalCsr::new`'s checks unchanged, so `p[r]` and `p[r + 1]` exist and are non-decreasing (no
    // underflow), entries `a..a + n` lie inside `idx` and `v`, and every index among them is <
    // ncols <= `x.len()`.
    unsafe {
        let a = p.get_unchecked(r).to_usize();
        let n = p.get_unchecked(r + 1).to_usize() - a;
        sum_row(n, split, |k| {
            *v.get_unchecked(a + k) * *x.get_unchecked(idx.get_unchecked(a + k).to_usize())
        })
    }
}

/// [`sum_row`] of a double-precision row of n >= [`SPLIT_ROW`] entries (its four chains) with the
/// chains as the four lanes of one AVX2 register: entry k (value v[k], x at `xb` + its index) into
/// lane k mod 4, multiplied then added as the scalar loop does (no fused multiply-add), lanes
/// combined as (c0 + c1) + (c2 + c3): the same bits, with one gather of x for four entries.
/// `idx4(k)` gives the indices of entries k..k + 4, `idx(k)` that of entry k. SAFETY: the CPU has
/// AVX2; v holds n values and every index is in bounds of `xb`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub(super) unsafe fn sum4_f64_avx2(
    n: usize,
    v: *const f64,
    xb: *const f64,
    idx4: impl Fn(usize) -> std::arch::x86_64::__m128i,
    idx: impl Fn(usize) -> usize,
) -> f64 {
    use std::arch::x86_64::*;
    // SAFETY: our caller's contract (the doc above): the CPU has AVX2 (this fn enables it); `v`
    // holds `n` values, so the loads at `k..k + 4` (`k + 4 <= n`) and at `q < n` are in bounds;
    // `idx4`/`idx` give non-negative indices in bounds of `xb`, so each gathered and scalar read of
    // `xb` is too; `l` is a local array of four.
    unsafe {
        let mut c = _mm256_setzero_pd();
        let mut k = 0;
        while k + 4 <= n {
            let xv = _mm256_i32gather_pd::<8>(xb, idx4(k));
            c = _mm256_add_pd(c, _mm256_mul_pd(_mm256_loadu_pd(v.add(k)), xv));
            k += 4;
        }
        let mut l = [0.0f64; 4];
        _mm256_storeu_pd(l.as_mut_ptr(), c);
        for (j, q) in (k..n).enumerate() {
            l[j] += *v.add(q) * *xb.add(idx(q));
        }
        (l[0] + l[1]) + (l[2] + l[3])
    }
}

/// The rows of a double-precision block with 32-bit indices, through [`sum4_f64_avx2`] where they
/// have [`SPLIT_ROW`] entries or more. SAFETY: as [`row_sum`] (unchecked); the CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn row_sum_f64_i32_avx2(p: &[i32], idx: &[i32], v: &[f64], x: &[f64], r: usize) -> f64 {
    use std::arch::x86_64::*;
    // SAFETY: our caller's contract (the doc above): as for `row_sum` (unchecked), `p[r]`, `p[r +
    // 1]` exist and entries `a..a + n` lie in `idx` and `v` with indices < `x.len()`; so `ip` and
    // `v.add(a)` point at `n` entries and the loads `idx4`/`idx` make (at `k + 4 <= n`, at `q < n`)
    // stay inside them; the CPU has AVX2, which `row_sum` and `sum4_f64_avx2` need.
    unsafe {
        let a = *p.get_unchecked(r) as usize;
        let n = *p.get_unchecked(r + 1) as usize - a;
        if n < SPLIT_ROW {
            return row_sum::<f64, i32, false>(p, idx, v, x, r, true);
        }
        let ip = idx.as_ptr().add(a);
        sum4_f64_avx2(
            n,
            v.as_ptr().add(a),
            x.as_ptr(),
            |k| _mm_loadu_si128(ip.add(k) as *const __m128i),
            |k| *ip.add(k) as usize,
        )
    }
}

/// [`spmv`]'s row loop for f64 values and 32-bit indices compiled for AVX2 as a whole, so that each
/// row's sum is inlined into it (called once per row, it cost as much as a five-entry row's sum).
/// SAFETY: every row `drive` visits is one [`row_sum_f64_i32_avx2`] may read (its contract); the CPU
/// has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
unsafe fn spmv_f64_i32_avx2<T: Scalar, const DOT: bool>(
    p: &[i32],
    idx: &[i32],
    v: &[f64],
    x: &[f64],
    y: &mut [T],
    r0: usize,
    add: bool,
    rows: Option<&[usize]>,
    w: &[T],
) -> (f64, f64) {
    // SAFETY: our caller's contract (the doc above) for every row drive asks for
    drive::<T, DOT>(y, r0, add, rows, w, (0.0, 0.0), |r| unsafe {
        T::from_parts_lossy(row_sum_f64_i32_avx2(p, idx, v, x, r), 0.0)
    })
}

/// The sum of `term(0) + .. + term(n - 1)` as every stored layout forms a row of the product: in
/// four interleaved chains (term k into chain k mod 4, then (s0 + s1) + (s2 + s3)) when `split` and
/// n >= [`SPLIT_ROW`], otherwise in one chain in order.
#[inline(always)]
pub(super) fn sum_row<T: Scalar>(n: usize, split: bool, term: impl Fn(usize) -> T) -> T {
    if split && n >= SPLIT_ROW {
        let mut c = [T::zero(); 4];
        let mut k = 0;
        while k + 4 <= n {
            for (l, cl) in c.iter_mut().enumerate() {
                *cl += term(k + l);
            }
            k += 4;
        }
        for (l, q) in (k..n).enumerate() {
            c[l] += term(q);
        }
        return (c[0] + c[1]) + (c[2] + c[3]);
    }
    let mut s = T::zero();
    for k in 0..n {
        s += term(k);
    }
    s
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
    let split = !crate::vector::ops::sequential_sums();
    #[cfg(target_arch = "x86_64")]
    if !CHECKED
        && split
        && T::DTYPE == crate::scalar::DType::F64
        && std::mem::size_of::<I>() == 4
        && std::arch::is_x86_feature_detected!("avx2")
    {
        // SAFETY: T is f64 and I is i32 (the only 4-byte index type), so these are the same
        // slices; the CPU has AVX2; the rest as below
        let f = |s: &[T]| unsafe { std::slice::from_raw_parts(s.as_ptr() as *const f64, s.len()) };
        // SAFETY: as above: `I` is 4 bytes, so it is `i32` (`LocalCsr::mult` instantiates this with
        // its `Idx` arrays, i32 or i64 only), and the slice is the same memory, length and
        // alignment read as `i32`.
        let g = |s: &[I]| unsafe { std::slice::from_raw_parts(s.as_ptr() as *const i32, s.len()) };
        let (pf, inf, vf, xf) = (g(p), g(idx), f(v), f(x));
        // SAFETY: every row `drive` asks for is in r0..r0 + y.len() <= nrows (the caller checked y
        // against the block's shape, and `rows` lists rows of that range), the arrays passed
        // `LocalCsr::new`'s checks and `x` has ncols entries (the caller's check), as
        // `row_sum_f64_i32_avx2` needs; the CPU has AVX2 (detected above).
        return unsafe { spmv_f64_i32_avx2::<T, DOT>(pf, inf, vf, xf, y, r0, add, rows, w) };
    }
    // SAFETY: see row_sum; the caller checked x, y and w against the block's shape (r0 + y.len()
    // <= nrows), and `rows` holds row numbers in r0..r0 + y.len() (nonempty_rows, then cut).
    drive::<T, DOT>(y, r0, add, rows, w, (0.0, 0.0), |r| unsafe {
        row_sum::<T, I, CHECKED>(p, idx, v, x, r, split)
    })
}

/// The row loop of a product over any stored layout, `row(r)` giving row r of B x: rows r0..r0 +
/// y.len() into y (y[i] is row r0 + i; `add`: y += B x), or only the listed `rows` (in that range,
/// in order), added into y; with `DOT` also the sum of conj(w[i]) (B x)[i] in row order. The caller
/// checked y and w (under DOT as long as y) and the listed rows. The dot goes on from `acc`.
#[inline(always)]
pub(super) fn drive<T: Scalar, const DOT: bool>(
    y: &mut [T],
    r0: usize,
    add: bool,
    rows: Option<&[usize]>,
    w: &[T],
    mut acc: (f64, f64),
    row: impl Fn(usize) -> T,
) -> (f64, f64) {
    match rows {
        Some(rows) => {
            for &r in rows {
                let s = row(r);
                y[r - r0] += s;
                if DOT {
                    acc_dot(&mut acc, w[r - r0], s);
                }
            }
        }
        None => {
            for (i, yr) in y.iter_mut().enumerate() {
                let s = row(r0 + i);
                *yr = if add { *yr + s } else { s };
                if DOT {
                    // SAFETY: under DOT w is as long as y
                    acc_dot(&mut acc, unsafe { *w.get_unchecked(i) }, s);
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

/// A stored layout of a block, row by row: the helpers every layout shares (entries, the adjoint
/// product) read it through `row`.
pub(super) trait Rows<T: Scalar> {
    fn nrows(&self) -> usize;
    /// Row r's entries as (column, value), in storage order (the CSR arrays' order).
    fn row(&self, r: usize) -> impl Iterator<Item = (usize, T)> + '_;

    /// Sum of the entries (row r, column c), or zero.
    fn entry(&self, r: usize, c: usize) -> T {
        let mut s = T::zero();
        for (j, v) in self.row(r) {
            if j == c {
                s += v;
            }
        }
        s
    }

    /// `f(row, column, value)` for every entry, row by row, in storage order.
    fn for_each(&self, f: &mut impl FnMut(usize, usize, T)) {
        for r in 0..self.nrows() {
            for (c, v) in self.row(r) {
                f(r, c, v);
            }
        }
    }

    /// x += B^H y, entry by entry in the CSR loop's order.
    fn mult_adjoint_add(&self, y: &[T], x: &mut [T]) {
        for (r, yr) in y.iter().enumerate().take(self.nrows()) {
            for (c, a) in self.row(r) {
                x[c] += a.conj() * *yr;
            }
        }
    }
}
