//! SELL-8 storage for a diag block parlops owns: rows in chunks of eight, each chunk's entries stored
//! column by column (entry k of the chunk's row l at `chunk[c] + 8 k + l`), padded to the chunk's
//! longest row. On a CPU with AVX-512 a chunk's product is one gather of x per column for eight
//! rows at once, where the CSR loop spends a scalar load, multiply and add per entry: on this
//! project's machine the 2D 5-point product at 1M rows took 0.80x the CSR loop's time (measured in
//! `benches/NOTES.md`, item 17).
//!
//! Each row's sum is formed in exactly the CSR loop's order ([`super::kernels`]: one chain in column
//! order, or four interleaved chains for rows of [`SPLIT_ROW`] entries or more), so a product, a
//! block of rows of it, or a row from the scalar path here has the CSR block's bits.

use super::kernels::{Rows, SPLIT_ROW, drive, sum_row};
use super::{IndexInt, filled};
use crate::scalar::{DType, Scalar};

/// Rows per chunk.
const C: usize = 8;

pub(super) struct Sell<T> {
    pub(super) nrows: usize,
    pub(super) nnz: usize,
    /// Start of chunk c in `idx` / `val`; one more entry than chunks.
    chunk: Vec<usize>,
    /// Each row's entry count (padded with zeros to whole chunks).
    len: Vec<u32>,
    /// Column indices (padding: 0, never read).
    idx: Vec<i32>,
    /// Values (padding: 0, never read).
    val: Vec<T>,
}

impl<T: Scalar> Sell<T> {
    /// Is the chunked product the faster one here? Double precision on a CPU with AVX-512F.
    pub(super) fn pays() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            T::DTYPE == DType::F64 && std::arch::is_x86_feature_detected!("avx512f")
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }

    /// The block `p`, `i`, `v` (validated CSR, `ncols` columns) in chunks; None when its columns do
    /// not fit 32-bit gathers, padding would add over a quarter to its entries (rows of very
    /// different lengths next to each other), or memory is short: the caller keeps CSR then.
    pub(super) fn from_csr<I: IndexInt>(p: &[I], i: &[I], v: &[T], ncols: usize) -> Option<Self> {
        Self::padded(p, i, v, ncols, 4)
    }

    /// [`Sell::from_csr`], refusing when padding would add more than 1 / `pad` of the entries (0:
    /// never refuse).
    pub(super) fn padded<I: IndexInt>(
        p: &[I],
        i: &[I],
        v: &[T],
        ncols: usize,
        pad: usize,
    ) -> Option<Self> {
        let nrows = p.len().checked_sub(1)?;
        if ncols > i32::MAX as usize {
            return None;
        }
        let nnz = p[nrows].to_usize();
        let nchunks = nrows.div_ceil(C);
        let row_len = |r: usize| {
            if r < nrows {
                p[r + 1].to_usize() - p[r].to_usize()
            } else {
                0
            }
        };
        let mut chunk = filled(nchunks + 1, 0usize)?;
        for c in 0..nchunks {
            let w = (c * C..c * C + C).map(row_len).max().unwrap_or(0);
            chunk[c + 1] = chunk[c].checked_add(w.checked_mul(C)?)?;
        }
        let total = chunk[nchunks];
        if pad > 0 && total > nnz + nnz / pad + C {
            return None;
        }
        let mut len = filled(nchunks * C, 0u32)?;
        let mut idx = filled(total, 0i32)?;
        let mut val = filled(total, T::zero())?;
        for r in 0..nrows {
            let (a, n) = (p[r].to_usize(), row_len(r));
            len[r] = u32::try_from(n).ok()?;
            let base = chunk[r / C] + r % C;
            for k in 0..n {
                idx[base + C * k] = i[a + k].to_usize() as i32;
                val[base + C * k] = v[a + k];
            }
        }
        Some(Sell {
            nrows,
            nnz,
            chunk,
            len,
            idx,
            val,
        })
    }

    pub(super) fn values_ptr(&self) -> *const T {
        self.val.as_ptr()
    }

    /// One row of B x in the CSR loop's order. SAFETY: r < nrows, and x has at least the block's
    /// columns (every stored index is below them, checked when the CSR block was made).
    #[inline(always)]
    unsafe fn row_sum(&self, x: &[T], r: usize, split: bool) -> T {
        unsafe {
            let base = *self.chunk.get_unchecked(r / C) + r % C;
            let n = *self.len.get_unchecked(r) as usize;
            sum_row(n, split, |k| {
                let e = base + C * k;
                *self.val.get_unchecked(e) * *x.get_unchecked(*self.idx.get_unchecked(e) as usize)
            })
        }
    }

    /// [`super::kernels::spmv`] on this storage: rows r0..r0 + y.len() (y[i] is row r0 + i; `add`:
    /// y += B x), with `DOT` the sum of conj(w[i]) (B x)[i] in row order; with `rows`, only those
    /// rows, added into y. The caller checked the shapes (x at least ncols, r0 + y.len() <= nrows,
    /// w like y under DOT).
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
        // SAFETY (each row_sum below): the rows lie in r0..r0 + y.len() <= nrows (the caller's
        // check; listed rows: see mult_rows)
        let row = |r: usize| unsafe { self.row_sum(x, r, split) };
        let n = y.len();
        // whole chunks inside the range go eight rows at a time; the rows around them one by one
        let (ca, cb) = (r0.div_ceil(C), (r0 + n) / C);
        if rows.is_some() || !Self::pays() || ca >= cb {
            return drive::<T, DOT>(y, r0, add, rows, w, (0.0, 0.0), row);
        }
        let (head, tail) = (ca * C - r0, cb * C - r0);
        let dw = |a: usize, b: usize| if DOT { &w[a..b] } else { &[] };
        let mut acc = drive::<T, DOT>(&mut y[..head], r0, add, None, dw(0, head), (0.0, 0.0), row);
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: T is f64 (pays()), so the slices are f64 slices; AVX-512F is present
            // (pays()); chunks ca..cb hold rows inside r0..r0 + n.
            let f =
                |s: &[T]| unsafe { std::slice::from_raw_parts(s.as_ptr() as *const f64, s.len()) };
            let yf = unsafe { std::slice::from_raw_parts_mut(y.as_mut_ptr() as *mut f64, y.len()) };
            let sell = unsafe { &*(self as *const Sell<T> as *const Sell<f64>) };
            acc.0 = unsafe {
                chunks_f64_avx512::<DOT>(sell, f(x), yf, ca, cb, r0, add, f(w), split, acc.0)
            };
        }
        drive::<T, DOT>(&mut y[tail..], r0 + tail, add, None, dw(tail, n), acc, row)
    }
}

impl<T: Scalar> Rows<T> for Sell<T> {
    fn nrows(&self) -> usize {
        self.nrows
    }
    fn row(&self, r: usize) -> impl Iterator<Item = (usize, T)> + '_ {
        let base = self.chunk[r / C] + r % C;
        (0..self.len[r] as usize).map(move |k| {
            let e = base + C * k;
            (self.idx[e] as usize, self.val[e])
        })
    }
}

/// Chunks ca..cb of a double-precision block, eight rows at once: per column of the chunk, one
/// masked gather of x; a row's sum in one chain, or in four chains for rows of [`SPLIT_ROW`]
/// entries or more (with `split`), as the CSR loop forms it. With `DOT`, goes on adding w[i] (B x)[i]
/// over these rows, in row order, to the running sum `dot`, and returns it.
///
/// SAFETY: AVX-512F present; chunks ca..cb lie inside the rows r0..r0 + y.len() and the block; x
/// holds every column the block stores; under DOT w is as long as y.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[allow(clippy::too_many_arguments)]
unsafe fn chunks_f64_avx512<const DOT: bool>(
    s: &Sell<f64>,
    x: &[f64],
    y: &mut [f64],
    ca: usize,
    cb: usize,
    r0: usize,
    add: bool,
    w: &[f64],
    split: bool,
    mut dot: f64,
) -> f64 {
    use std::arch::x86_64::*;
    unsafe {
        let xp = x.as_ptr();
        for c in ca..cb {
            let base = *s.chunk.get_unchecked(c);
            let width = (*s.chunk.get_unchecked(c + 1) - base) / C;
            let lens = _mm512_cvtepi32_epi64(_mm256_loadu_si256(
                s.len.as_ptr().add(c * C) as *const __m256i
            ));
            let long: __mmask8 = if split {
                _mm512_cmpgt_epi64_mask(lens, _mm512_set1_epi64(SPLIT_ROW as i64 - 1))
            } else {
                0
            };
            let ip = s.idx.as_ptr().add(base);
            let vp = s.val.as_ptr().add(base);
            // column k of the chunk times x, and the lanes (rows) it holds entries for
            let term = |k: usize| {
                let m = _mm512_cmpgt_epi64_mask(lens, _mm512_set1_epi64(k as i64));
                let cols = _mm256_loadu_si256(ip.add(C * k) as *const __m256i);
                let xv = _mm512_mask_i32gather_pd::<8>(_mm512_setzero_pd(), m, cols, xp);
                (m, _mm512_mul_pd(_mm512_loadu_pd(vp.add(C * k)), xv))
            };
            let mut sum = _mm512_setzero_pd();
            if long == 0 {
                for k in 0..width {
                    let (m, t) = term(k);
                    sum = _mm512_mask_add_pd(sum, m, sum, t);
                }
            } else {
                // rows of SPLIT_ROW entries or more: entry k into chain k mod 4; shorter rows of
                // the chunk (if any) in one chain
                let short = !long;
                let mut ch = [_mm512_setzero_pd(); 4];
                let mut k = 0;
                while k < width {
                    for (j, q) in ch.iter_mut().enumerate() {
                        if k + j < width {
                            let (m, t) = term(k + j);
                            *q = _mm512_mask_add_pd(*q, m & long, *q, t);
                            if short != 0 {
                                sum = _mm512_mask_add_pd(sum, m & short, sum, t);
                            }
                        }
                    }
                    k += 4;
                }
                let l = _mm512_add_pd(_mm512_add_pd(ch[0], ch[1]), _mm512_add_pd(ch[2], ch[3]));
                sum = _mm512_mask_blend_pd(long, sum, l);
            }
            let i = c * C - r0;
            if DOT {
                // w[i] (B x)[i] for the eight rows (the scalar products' bits), then added to the
                // running sum one by one in row order, straight from the registers
                let t = _mm512_mul_pd(_mm512_loadu_pd(w.as_ptr().add(i)), sum);
                for h in [_mm512_castpd512_pd256(t), _mm512_extractf64x4_pd::<1>(t)] {
                    for q in [_mm256_castpd256_pd128(h), _mm256_extractf128_pd::<1>(h)] {
                        dot += _mm_cvtsd_f64(q);
                        dot += _mm_cvtsd_f64(_mm_unpackhi_pd(q, q));
                    }
                }
            }
            let yp = y.as_mut_ptr().add(i);
            if add {
                sum = _mm512_add_pd(_mm512_loadu_pd(yp), sum);
            }
            _mm512_storeu_pd(yp, sum);
        }
    }
    dot
}
