//! CSR with 16-bit columns: each row keeps its smallest column as a base and its entries' columns
//! as 16-bit offsets from it, so an entry moves its value and 2 bytes of index instead of 4. A
//! finite-element or stencil matrix whose rows are numbered with locality (a mesh split into
//! compact pieces, a bandwidth-reducing order) has every row within 65,535 columns: the product of
//! MFEM's order-2 hexahedra (62 entries a row) moves 628 bytes a row instead of 748, where it is
//! bound by memory (`benches/NOTES.md`, item 25).
//!
//! Rows that span more keep 32-bit columns in a side list; a block where they would hold more than
//! an eighth of the entries, or where the narrow form would not move fewer bytes, stays CSR. Values
//! keep the CSR order, and each row's sum is formed as the CSR loop forms it
//! ([`super::kernels::sum_row`]), so every product has the CSR block's bits.

use super::IndexInt;
use super::block::{filled, row_span};
#[cfg(target_arch = "x86_64")]
use super::kernels::sum4_f64_avx2;
use super::kernels::{Rows, SPLIT_ROW, drive, sum_row};
use crate::scalar::DType;
use crate::scalar::Scalar;

/// The base of a row whose columns are in the side list.
const WIDE: u32 = u32::MAX;

pub(super) struct Narrow<T> {
    pub(super) nrows: usize,
    pub(super) nnz: usize,
    /// Row pointer into `off` and `val`.
    ptr: Vec<u32>,
    /// Each row's smallest column, or WIDE.
    base: Vec<u32>,
    /// Column minus the row's base (0 in wide rows, never read).
    off: Vec<u16>,
    val: Vec<T>,
    /// The wide rows, ascending; row wide[k]'s columns are wide_col[wide_at[k]..wide_at[k + 1]].
    pub(super) wide: Vec<u32>,
    wide_at: Vec<usize>,
    wide_col: Vec<u32>,
}

impl<T: Scalar> Narrow<T> {
    /// The block `p`, `i`, `v` (validated CSR, `ncols` columns) with 16-bit columns; None when the
    /// narrow form would not move fewer bytes than 32-bit CSR (short rows, or wide rows over an
    /// eighth of the entries), the sizes do not fit 32 bits, or memory is short: the caller keeps
    /// CSR then.
    pub(super) fn from_csr<I: IndexInt>(p: &[I], i: &[I], v: &[T], ncols: usize) -> Option<Self> {
        let nrows = p.len().checked_sub(1)?;
        let nnz = p[nrows].to_usize();
        if nnz >= u32::MAX as usize || ncols >= WIDE as usize || nrows >= u32::MAX as usize {
            return None;
        }
        let span = |r: usize| row_span(p, i, r);
        let mut nwide = 0usize;
        let mut wide_nnz = 0usize;
        for r in 0..nrows {
            if span(r).1 > u16::MAX as usize {
                nwide += 1;
                wide_nnz += p[r + 1].to_usize() - p[r].to_usize();
            }
        }
        // bytes a product reads beyond the values: 8 a row and 2 an entry (4 more in wide rows)
        // against 32-bit CSR's 4 a row and 4 an entry
        let narrow = 8 * nrows + 2 * nnz + 4 * wide_nnz + 12 * nwide;
        if wide_nnz > nnz / 8 || narrow >= 4 * nrows + 4 * nnz {
            return None;
        }
        let mut ptr = filled(nrows + 1, 0u32)?;
        let mut base = filled(nrows, 0u32)?;
        let mut off = filled(nnz, 0u16)?;
        let mut val = filled(nnz, T::zero())?;
        let mut wide = filled(nwide, 0u32)?;
        let mut wide_at = filled(nwide + 1, 0usize)?;
        let mut wide_col = filled(wide_nnz, 0u32)?;
        let mut k = 0;
        for r in 0..nrows {
            let (a, b) = (p[r].to_usize(), p[r + 1].to_usize());
            ptr[r + 1] = b as u32;
            val[a..b].copy_from_slice(&v[a..b]);
            let (lo, s) = span(r);
            if s > u16::MAX as usize {
                base[r] = WIDE;
                wide[k] = r as u32;
                let at = wide_at[k];
                for (j, c) in i[a..b].iter().enumerate() {
                    wide_col[at + j] = c.to_usize() as u32;
                }
                wide_at[k + 1] = at + (b - a);
                k += 1;
            } else {
                base[r] = lo as u32;
                for (o, c) in off[a..b].iter_mut().zip(&i[a..b]) {
                    *o = (c.to_usize() - lo) as u16;
                }
            }
        }
        Some(Narrow {
            nrows,
            nnz,
            ptr,
            base,
            off,
            val,
            wide,
            wide_at,
            wide_col,
        })
    }

    pub(super) fn values_ptr(&self) -> *const T {
        self.val.as_ptr()
    }

    /// The side list's columns of wide row r.
    fn wide_cols(&self, r: usize) -> &[u32] {
        let k = self.wide.partition_point(|&w| (w as usize) < r);
        &self.wide_col[self.wide_at[k]..self.wide_at[k + 1]]
    }

    /// Row r of B x in the CSR loop's order. SAFETY: r < nrows, and x has at least the block's
    /// columns (every base + offset and side-list column is below them: they were made from the
    /// validated CSR block).
    #[inline(always)]
    unsafe fn row_sum(&self, x: &[T], r: usize, split: bool) -> T {
        // SAFETY: our caller's contract (the doc above): `r` < nrows, so `ptr[r]`, `ptr[r + 1]` and
        // `base[r]` exist, `ptr` is non-decreasing and entries `a..a + n` lie inside `val` and
        // `off`; a narrow row's `base + off[k]` (a wide row goes to `wide_sum`) is below the
        // block's columns <= `x.len()`, all as built from the validated CSR block.
        unsafe {
            let a = *self.ptr.get_unchecked(r) as usize;
            let n = *self.ptr.get_unchecked(r + 1) as usize - a;
            let v = self.val.as_ptr().add(a);
            let base = *self.base.get_unchecked(r);
            if base == WIDE {
                return self.wide_sum(x, r, split);
            }
            let o = self.off.as_ptr().add(a);
            let xb = x.as_ptr().add(base as usize);
            sum_row(n, split, |k| *v.add(k) * *xb.add(*o.add(k) as usize))
        }
    }

    /// [`Narrow::row_sum`] of a wide row, out of line. SAFETY: as there.
    #[cold]
    #[inline(never)]
    unsafe fn wide_sum(&self, x: &[T], r: usize, split: bool) -> T {
        let a = self.ptr[r] as usize;
        let cols = self.wide_cols(r);
        let v = &self.val[a..a + cols.len()];
        // SAFETY: `cols` and `v` have the same length (`v` sliced to it, checked), so `k` <
        // `cols.len()` is in bounds of both; every side-list column is below the block's columns <=
        // `x.len()` (our caller's contract, as `row_sum`'s).
        sum_row(cols.len(), split, |k| unsafe {
            *v.get_unchecked(k) * *x.get_unchecked(*cols.get_unchecked(k) as usize)
        })
    }

    /// [`super::kernels::spmv`] on this storage (the same arguments and checks).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn mult<const DOT: bool>(
        &self,
        x: &[T],
        y: &mut [T],
        r0: usize,
        add: bool,
        rows: Option<&[usize]>,
        w: &[T],
        split: bool,
    ) -> (f64, f64) {
        // SAFETY: the rows lie in r0..r0 + y.len() <= nrows (the caller's check; listed rows: see
        // mult_rows), and x holds the block's columns
        #[cfg(target_arch = "x86_64")]
        if split && T::DTYPE == DType::F64 && std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: T is f64, so x is an f64 slice and self a Narrow<f64>; the CPU has AVX2
            let xf = unsafe { std::slice::from_raw_parts(x.as_ptr() as *const f64, x.len()) };
            // SAFETY: `T::DTYPE` is F64 only for `T` = `f64` (`Scalar` is implemented for f32, f64,
            // c32 and c64 in src/scalar.rs), so `Narrow<T>` is `Narrow<f64>`, the same type, and
            // `self` is a live reference for the borrow's length.
            let me = unsafe { &*(self as *const Narrow<T> as *const Narrow<f64>) };
            // SAFETY: every row `drive` asks for is in r0..r0 + y.len() <= nrows and `x` holds the
            // block's columns (checked by `LocalCsr::mult`, this fn's only caller; listed rows come
            // from that range), as `row_sum_f64_avx2` needs; the CPU has AVX2 (detected above).
            return unsafe { me.mult_f64_avx2::<T, DOT>(xf, y, r0, add, rows, w) };
        }
        // SAFETY: as above: the rows are < nrows and `x` holds the block's columns (checked by
        // `LocalCsr::mult`), as `row_sum` needs.
        drive::<T, DOT>(y, r0, add, rows, w, (0.0, 0.0), |r| unsafe {
            self.row_sum(x, r, split)
        })
    }
}

impl Narrow<f64> {
    /// [`Narrow::row_sum`] for f64 where the CPU has AVX2: a short narrow row (under
    /// [`SPLIT_ROW`] entries: the boundary rows of a long-row matrix) summed here in one chain, so
    /// that it inlines into the row loop ([`Narrow::mult_f64_avx2`], its only caller); longer and
    /// wide rows out of line ([`Narrow::long_row_f64_avx2`]). The same bits. SAFETY: as
    /// [`Narrow::row_sum`]; the CPU has AVX2.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn row_sum_f64_avx2(&self, x: &[f64], r: usize) -> f64 {
        // SAFETY: our caller's contract (the doc above): as in `row_sum`, `ptr[r]`, `ptr[r + 1]`,
        // `base[r]` exist and the row's `n` entries lie in `val` and `off`, and a narrow row's
        // `base + off[k]` is below the block's columns <= `x.len()`
        unsafe {
            let a = *self.ptr.get_unchecked(r) as usize;
            let n = *self.ptr.get_unchecked(r + 1) as usize - a;
            let base = *self.base.get_unchecked(r);
            if n >= SPLIT_ROW || base == WIDE {
                return self.long_row_f64_avx2(x, r);
            }
            let (v, o) = (self.val.as_ptr().add(a), self.off.as_ptr().add(a));
            let xb = x.as_ptr().add(base as usize);
            // `sum_row`'s one chain: 0 + t0 + t1 + ...
            let mut s = 0.0f64;
            for k in 0..n {
                s += *v.add(k) * *xb.add(*o.add(k) as usize);
            }
            s
        }
    }

    /// A long or wide row of [`Narrow::row_sum_f64_avx2`]: a long narrow row's four chains in one
    /// AVX2 register ([`sum4_f64_avx2`]). SAFETY: as [`Narrow::row_sum`]; the CPU has AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline(never)]
    unsafe fn long_row_f64_avx2(&self, x: &[f64], r: usize) -> f64 {
        use std::arch::x86_64::*;
        // SAFETY: our caller's contract (the doc above): as in `row_sum`, `ptr[r]`, `ptr[r + 1]`,
        // `base[r]` exist and the row's `n` entries lie in `val` and `off`; for a narrow row of `n`
        // >= SPLIT_ROW entries the loads `sum4_f64_avx2` asks for (4 u16 offsets, 8 bytes, at `k +
        // 4 <= n`; one at `q < n`) stay inside them, and `base + off` is below the block's columns
        // <= `x.len()`; the CPU has AVX2 (this fn enables it), and `row_sum` of a wide row is
        // covered by the same contract.
        unsafe {
            let a = *self.ptr.get_unchecked(r) as usize;
            let n = *self.ptr.get_unchecked(r + 1) as usize - a;
            let base = *self.base.get_unchecked(r);
            if n < SPLIT_ROW || base == WIDE {
                return self.row_sum(x, r, true);
            }
            let o = self.off.as_ptr().add(a);
            sum4_f64_avx2(
                n,
                self.val.as_ptr().add(a),
                x.as_ptr().add(base as usize),
                |k| _mm_cvtepu16_epi32(_mm_loadl_epi64(o.add(k) as *const __m128i)),
                |k| *o.add(k) as usize,
            )
        }
    }

    /// The row loop of [`Narrow::mult`] compiled for AVX2 as a whole, with each short row's sum
    /// inlined into it (called once per row, a five-entry row cost twice its sum). SAFETY:
    /// every row `drive` visits is < nrows and `x` holds the block's columns, as
    /// [`Narrow::row_sum_f64_avx2`] needs; the CPU has AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn mult_f64_avx2<T: Scalar, const DOT: bool>(
        &self,
        x: &[f64],
        y: &mut [T],
        r0: usize,
        add: bool,
        rows: Option<&[usize]>,
        w: &[T],
    ) -> (f64, f64) {
        // SAFETY: our caller's contract (the doc above) for every row drive asks for
        drive::<T, DOT>(y, r0, add, rows, w, (0.0, 0.0), |r| unsafe {
            T::from_parts_lossy(self.row_sum_f64_avx2(x, r), 0.0)
        })
    }
}

impl<T: Scalar> Rows<T> for Narrow<T> {
    fn nrows(&self) -> usize {
        self.nrows
    }
    fn row(&self, r: usize) -> impl Iterator<Item = (usize, T)> + '_ {
        let (a, b) = (self.ptr[r] as usize, self.ptr[r + 1] as usize);
        let base = self.base[r];
        let cols: Option<&[u32]> = (base == WIDE).then(|| self.wide_cols(r));
        (a..b).map(move |e| {
            let c = match cols {
                Some(c) => c[e - a] as usize,
                None => base as usize + self.off[e] as usize,
            };
            (c, self.val[e])
        })
    }
}
