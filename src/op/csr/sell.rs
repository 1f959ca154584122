//! SELL-8 storage for a diag block parlops owns: rows in chunks of eight, each chunk's entries stored
//! column by column (entry k of the chunk's slot l at `chunk[c] + 8 k + l`), padded to the chunk's
//! longest row. On a CPU with AVX-512 a chunk's product is one gather of x per column for eight
//! rows at once, where the CSR loop spends a scalar load, multiply and add per entry: on this
//! project's machine the 2D 5-point product at 1M rows took 0.80x the CSR loop's time (measured in
//! `benches/NOTES.md`, item 17).
//!
//! Rows of very different lengths side by side (a finite-element matrix: vertex, edge, face and
//! interior rows of 27 to 125 entries) would pad a chunk to its longest row; such a block is
//! sorted by row length within windows of [`SIGMA`] rows (SELL-C-sigma), so that a chunk holds
//! rows of like lengths, and a window's rows are formed in a small buffer and written (and their
//! dot summed) in row order. Where every row spans at most 65,535 columns, a slot keeps its row's
//! smallest column and each entry a 16-bit offset from it (as [`super::narrow`] does), so an entry
//! moves 10 bytes instead of 12.
//!
//! Each row's sum is formed in exactly the CSR loop's order ([`super::kernels`]: one chain in column
//! order, or four interleaved chains for rows of [`SPLIT_ROW`] entries or more), so a product, a
//! block of rows of it, or a row from the scalar path here has the CSR block's bits.

use super::IndexInt;
use super::block::{filled, row_span};
use super::kernels::{Rows, SPLIT_ROW, drive, sum_row};
use crate::scalar::{DType, Scalar};

/// Rows per chunk.
const C: usize = 8;

/// Rows per sorting window: a multiple of [`C`], at most 256 (a row's place in its window is a
/// byte). Padding of the MFEM benchmark matrix (order-2 hexahedra): 28% unsorted, 5.3% sorted in
/// windows of 64 rows, 1.3% in windows of 128.
const SIGMA: usize = 128;

/// The columns of the stored entries.
enum Cols {
    /// One 32-bit column per entry (padding: 0, never read).
    Wide(Vec<i32>),
    /// Per slot its row's smallest column; per entry its column minus that (padding: 0).
    Narrow { base: Vec<u32>, off: Vec<u16> },
}

pub(super) struct Sell<T> {
    pub(super) nrows: usize,
    pub(super) nnz: usize,
    /// Start of chunk c in the entry arrays; one more entry than chunks.
    chunk: Vec<usize>,
    /// Each slot's entry count (0 in the slots past the last row).
    len: Vec<u32>,
    /// Sorted blocks: slot s holds row w + at[s], w the first row of its window (s / SIGMA *
    /// SIGMA); a slot past the last row holds its own place. Empty when unsorted: slot s holds row
    /// s.
    at: Vec<u8>,
    /// Sorted blocks: row r sits in slot w + slot_of[r]. Empty when unsorted.
    slot_of: Vec<u8>,
    cols: Cols,
    /// Values (padding: 0, never read).
    val: Vec<T>,
}

/// How [`Sell::build`] lays a block out: `None` lets it choose.
#[derive(Clone, Copy, Default)]
pub(super) struct Shape {
    /// Sort rows by length within windows.
    pub(super) sort: Option<bool>,
    /// 16-bit columns.
    pub(super) narrow: Option<bool>,
}

/// Rows a SELL layout is made from: CSR arrays, or the caller's rows read in place.
pub(super) trait RowSource<T> {
    fn nrows(&self) -> usize;
    fn nnz(&self) -> usize;
    fn row_len(&self, r: usize) -> usize;
    /// f(k, column, value) for row r's entries in order (k from 0).
    fn row_each<F: FnMut(usize, usize, T)>(&self, r: usize, f: F);
    /// Row r's smallest column and its largest minus it ((0, 0) when empty).
    fn row_span(&self, r: usize) -> (usize, usize) {
        let (mut lo, mut hi) = (usize::MAX, 0);
        self.row_each(r, |_, c, _| {
            lo = lo.min(c);
            hi = hi.max(c);
        });
        if lo == usize::MAX {
            (0, 0)
        } else {
            (lo, hi - lo)
        }
    }
}

/// Validated CSR arrays as a [`RowSource`].
struct CsrRows<'a, T, I> {
    p: &'a [I],
    i: &'a [I],
    v: &'a [T],
}

impl<T: Scalar, I: IndexInt> RowSource<T> for CsrRows<'_, T, I> {
    fn nrows(&self) -> usize {
        self.p.len() - 1
    }
    fn nnz(&self) -> usize {
        self.p[self.nrows()].to_usize()
    }
    fn row_len(&self, r: usize) -> usize {
        self.p[r + 1].to_usize() - self.p[r].to_usize()
    }
    fn row_each<F: FnMut(usize, usize, T)>(&self, r: usize, mut f: F) {
        let a = self.p[r].to_usize();
        for (k, (c, v)) in self.i[a..self.p[r + 1].to_usize()]
            .iter()
            .zip(&self.v[a..])
            .enumerate()
        {
            f(k, c.to_usize(), *v);
        }
    }
    fn row_span(&self, r: usize) -> (usize, usize) {
        row_span(self.p, self.i, r)
    }
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

    /// The block `p`, `i`, `v` (validated CSR, `ncols` columns) in chunks, sorted and with 16-bit
    /// columns where that pays; None when its columns do not fit 32-bit gathers, padding would
    /// still add over a quarter to its entries, or memory is short: the caller keeps CSR then.
    pub(super) fn from_csr<I: IndexInt>(p: &[I], i: &[I], v: &[T], ncols: usize) -> Option<Self> {
        Self::build(p, i, v, ncols, 4, Shape::default())
    }

    /// [`Sell::from_csr`] from any [`RowSource`].
    pub(super) fn from_rows<S: RowSource<T>>(src: &S, ncols: usize) -> Option<Self> {
        Self::build_src(src, ncols, 4, Shape::default())
    }

    /// [`Sell::from_csr`], refusing when padding would add more than 1 / `pad` of the entries (0:
    /// never refuse), laid out as `shape` says. Unsorted where that pads by at most a sixteenth,
    /// else sorted where that pads less; 16-bit columns where every row spans at most 65,535
    /// columns and that moves fewer bytes. A `shape.narrow` that the rows do not allow gives None.
    pub(super) fn build<I: IndexInt>(
        p: &[I],
        i: &[I],
        v: &[T],
        ncols: usize,
        pad: usize,
        shape: Shape,
    ) -> Option<Self> {
        p.len().checked_sub(1)?;
        Self::build_src(&CsrRows { p, i, v }, ncols, pad, shape)
    }

    /// [`Sell::build`] from any [`RowSource`].
    fn build_src<S: RowSource<T>>(src: &S, ncols: usize, pad: usize, shape: Shape) -> Option<Self> {
        let nrows = src.nrows();
        if ncols > i32::MAX as usize {
            return None;
        }
        let nnz = src.nnz();
        let nchunks = nrows.div_ceil(C);
        let nslots = nchunks.checked_mul(C)?;
        let row_len = |r: usize| if r < nrows { src.row_len(r) } else { 0 };
        // the entries each order stores: chunk by chunk, eight times its longest row
        let stored = |row: &dyn Fn(usize) -> usize| -> Option<usize> {
            let mut t = 0usize;
            for c in 0..nchunks {
                let w = (c * C..c * C + C)
                    .map(|s| row_len(row(s)))
                    .max()
                    .unwrap_or(0);
                t = t.checked_add(w.checked_mul(C)?)?;
            }
            Some(t)
        };
        let natural = stored(&|s| s)?;
        let want_sort = match shape.sort {
            Some(s) => s,
            None => natural > nnz + nnz / 16 + C,
        };
        let mut at = Vec::new();
        let mut slot_of = Vec::new();
        if want_sort {
            at = filled(nslots, 0u8)?;
            slot_of = filled(nrows, 0u8)?;
            let mut loc: Vec<u8> = Vec::new();
            loc.try_reserve_exact(SIGMA).ok()?;
            for w0 in (0..nslots).step_by(SIGMA) {
                let wl = nrows.saturating_sub(w0).min(SIGMA);
                loc.clear();
                loc.extend((0..wl).map(|l| l as u8));
                // longest first; equal lengths keep their order
                loc.sort_by_key(|&l| std::cmp::Reverse(row_len(w0 + l as usize)));
                for (k, &l) in loc.iter().enumerate() {
                    at[w0 + k] = l;
                    slot_of[w0 + l as usize] = k as u8;
                }
                let end = nslots.min(w0 + SIGMA);
                for (k, a) in at[w0 + wl..end].iter_mut().enumerate() {
                    *a = (wl + k) as u8;
                }
            }
        }
        let row_at = |s: usize| {
            if at.is_empty() {
                s
            } else {
                s / SIGMA * SIGMA + at[s] as usize
            }
        };
        let sorted = if want_sort { stored(&row_at)? } else { natural };
        if want_sort && shape.sort.is_none() && sorted >= natural {
            // sorting does not help this block
            return Self::build_src(
                src,
                ncols,
                pad,
                Shape {
                    sort: Some(false),
                    ..shape
                },
            );
        }
        let total = sorted;
        if pad > 0 && total > nnz + nnz / pad + C {
            return None;
        }
        let span_ok = (0..nrows).all(|r| src.row_span(r).1 <= u16::MAX as usize);
        // 16-bit columns read 4 bytes a slot and 2 an entry, against 4 an entry
        let narrow = match shape.narrow {
            Some(true) if !span_ok => return None,
            Some(n) => n,
            None => span_ok && 4 * nslots + 2 * total < 4 * total,
        };
        let mut chunk = filled(nchunks + 1, 0usize)?;
        let mut len = filled(nslots, 0u32)?;
        for c in 0..nchunks {
            let mut w = 0;
            for (l, n) in len[c * C..c * C + C].iter_mut().enumerate() {
                let k = row_len(row_at(c * C + l));
                *n = u32::try_from(k).ok()?;
                w = w.max(k);
            }
            chunk[c + 1] = chunk[c].checked_add(w.checked_mul(C)?)?;
        }
        let mut val = filled(total, T::zero())?;
        let mut cols = if narrow {
            Cols::Narrow {
                base: filled(nslots, 0u32)?,
                off: filled(total, 0u16)?,
            }
        } else {
            Cols::Wide(filled(total, 0i32)?)
        };
        for s in 0..nslots {
            let r = row_at(s);
            if r >= nrows {
                continue;
            }
            let e0 = chunk[s / C] + s % C;
            let lo = if narrow { src.row_span(r).0 } else { 0 };
            src.row_each(r, |k, col, x| {
                let e = e0 + C * k;
                val[e] = x;
                match &mut cols {
                    Cols::Wide(idx) => idx[e] = col as i32,
                    Cols::Narrow { off, .. } => off[e] = (col - lo) as u16,
                }
            });
            if let Cols::Narrow { base, .. } = &mut cols {
                base[s] = lo as u32;
            }
        }
        Some(Sell {
            nrows,
            nnz,
            chunk,
            len,
            at,
            slot_of,
            cols,
            val,
        })
    }

    pub(super) fn values_ptr(&self) -> *const T {
        self.val.as_ptr()
    }

    /// Are the rows sorted within windows; are the columns 16-bit?
    #[cfg(test)]
    pub(super) fn shape(&self) -> (bool, bool) {
        (
            !self.at.is_empty(),
            matches!(self.cols, Cols::Narrow { .. }),
        )
    }

    /// Row r's slot.
    #[inline(always)]
    fn slot(&self, r: usize) -> usize {
        if self.slot_of.is_empty() {
            r
        } else {
            r / SIGMA * SIGMA + self.slot_of[r] as usize
        }
    }

    /// One row of B x in the CSR loop's order. SAFETY: r < nrows, and x has at least the block's
    /// columns (every stored column is below them, checked when the CSR block was made).
    #[inline(always)]
    unsafe fn row_sum(&self, x: &[T], r: usize, split: bool) -> T {
        // SAFETY: our caller's contract (the doc above): `r` < nrows, so its slot `s` is a slot of
        // the block, with `chunk[s / C]` and `len[s]` present; the slot's `n` entries sit at `e0 +
        // C * k` (k < n) inside `val` and `idx`/`off` (chunk-major storage, padded to whole
        // chunks), and each column (`idx`, or `base[s]` + `off`) is below the block's columns <=
        // `x.len()`, as built from the validated CSR block.
        unsafe {
            let s = self.slot(r);
            let e0 = *self.chunk.get_unchecked(s / C) + s % C;
            let n = *self.len.get_unchecked(s) as usize;
            let v = self.val.as_ptr().add(e0);
            match &self.cols {
                Cols::Wide(idx) => {
                    let ip = idx.as_ptr().add(e0);
                    sum_row(n, split, |k| {
                        *v.add(C * k) * *x.get_unchecked(*ip.add(C * k) as usize)
                    })
                }
                Cols::Narrow { base, off } => {
                    let xb = x.as_ptr().add(*base.get_unchecked(s) as usize);
                    let op = off.as_ptr().add(e0);
                    sum_row(n, split, |k| {
                        *v.add(C * k) * *xb.add(*op.add(C * k) as usize)
                    })
                }
            }
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
        // SAFETY: (each row_sum below) the rows lie in r0..r0 + y.len() <= nrows (the caller's
        // check; listed rows: see mult_rows), and x has at least the block's columns (checked by
        // `LocalCsr::mult`, this fn's only caller)
        let row = |r: usize| unsafe { self.row_sum(x, r, split) };
        let n = y.len();
        let end = r0 + n;
        // whole chunks (unsorted) or windows (sorted; the last may end at the last row) inside the
        // range go eight rows at a time; the rows around them one by one
        let sorted = !self.at.is_empty();
        let unit = if sorted { SIGMA } else { C };
        let ua = r0.div_ceil(unit);
        let ub = if sorted && end == self.nrows {
            end.div_ceil(unit)
        } else {
            end / unit
        };
        if rows.is_some() || !Self::pays() || ua >= ub {
            return drive::<T, DOT>(y, r0, add, rows, w, (0.0, 0.0), row);
        }
        let (head, tail) = (ua * unit - r0, (ub * unit).min(end) - r0);
        let dw = |a: usize, b: usize| if DOT { &w[a..b] } else { &[] };
        let mut acc = drive::<T, DOT>(&mut y[..head], r0, add, None, dw(0, head), (0.0, 0.0), row);
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: T is f64 (pays()), so the slices are f64 slices; AVX-512F is present
            // (pays()); the chunks or windows ua..ub hold rows inside r0..r0 + n.
            let f =
                |s: &[T]| unsafe { std::slice::from_raw_parts(s.as_ptr() as *const f64, s.len()) };
            // SAFETY: as above: `T` is f64, so `y` is the same memory, length and alignment as an
            // f64 slice; `yf` is the only access to `y` until its last use in `units_f64` below
            // (`y` itself is used again only after).
            let yf = unsafe { std::slice::from_raw_parts_mut(y.as_mut_ptr() as *mut f64, y.len()) };
            // SAFETY: as above: `T` is f64 (`pays()`; `Scalar`'s F64 is `f64` only), so `Sell<T>`
            // is `Sell<f64>`, the same type, borrowed for no longer than `self`.
            let sell = unsafe { &*(self as *const Sell<T> as *const Sell<f64>) };
            let (x, w) = (f(x), f(w));
            let narrow = matches!(self.cols, Cols::Narrow { .. });
            // SAFETY: AVX-512F is present and `T` is f64 (`pays()`); the units `ua..ub` lie inside
            // the rows r0..r0 + n (computed above from the range the caller checked against the
            // block: `LocalCsr::mult` asserts r0 + y.len() <= nrows, `x` at least ncols, `w` as
            // long as `y` under DOT); `sorted` and `narrow` are this block's own storage kinds, as
            // `units_f64` requires.
            acc = unsafe {
                match (sorted, narrow) {
                    (false, false) => {
                        units_f64::<DOT, false, false>(sell, x, yf, ua, ub, r0, add, w, split, acc)
                    }
                    (false, true) => {
                        units_f64::<DOT, true, false>(sell, x, yf, ua, ub, r0, add, w, split, acc)
                    }
                    (true, false) => {
                        units_f64::<DOT, false, true>(sell, x, yf, ua, ub, r0, add, w, split, acc)
                    }
                    (true, true) => {
                        units_f64::<DOT, true, true>(sell, x, yf, ua, ub, r0, add, w, split, acc)
                    }
                }
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
        let s = self.slot(r);
        let e0 = self.chunk[s / C] + s % C;
        (0..self.len[s] as usize).map(move |k| {
            let e = e0 + C * k;
            let c = match &self.cols {
                Cols::Wide(idx) => idx[e] as usize,
                Cols::Narrow { base, off } => base[s] as usize + off[e] as usize,
            };
            (c, self.val[e])
        })
    }
}

/// Chunk c of a double-precision block, its eight slots at once: per column of the chunk, one
/// masked gather of x (at the 32-bit columns, or at the slots' bases plus the 16-bit offsets under
/// `NARROW`); a slot's sum in one chain, or in four chains for rows of [`SPLIT_ROW`] entries or
/// more (with `split`), as the CSR loop forms it.
///
/// SAFETY: AVX-512F present; c is a chunk of the block, whose columns are `NARROW`'s kind; x holds
/// every column the block stores.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn chunk_f64<const NARROW: bool>(
    s: &Sell<f64>,
    x: &[f64],
    c: usize,
    split: bool,
) -> std::arch::x86_64::__m512d {
    use std::arch::x86_64::*;
    // SAFETY: our caller's contract (the doc above): `c` is a chunk of the block, so `chunk[c]` and
    // `chunk[c + 1]` exist and the chunk's `width * C` entries from `e0` lie in `val` and
    // `idx`/`off`; `len` and `base` hold `C` entries per chunk at `c * C` (eight 4-byte lanes per
    // load); the gather reads `x` only in lanes with a real entry (mask `m`: `len > k`), at columns
    // below the block's columns <= `x.len()`; AVX-512F is present (this fn enables it).
    unsafe {
        let xp = x.as_ptr();
        let e0 = *s.chunk.get_unchecked(c);
        let width = (*s.chunk.get_unchecked(c + 1) - e0) / C;
        let lens = _mm512_cvtepi32_epi64(_mm256_loadu_si256(
            s.len.as_ptr().add(c * C) as *const __m256i
        ));
        let long: __mmask8 = if split {
            _mm512_cmpgt_epi64_mask(lens, _mm512_set1_epi64(SPLIT_ROW as i64 - 1))
        } else {
            0
        };
        let (ip, bases, op) = match &s.cols {
            Cols::Wide(idx) => (
                idx.as_ptr().add(e0),
                _mm256_setzero_si256(),
                std::ptr::null(),
            ),
            Cols::Narrow { base, off } => (
                std::ptr::null(),
                _mm256_loadu_si256(base.as_ptr().add(c * C) as *const __m256i),
                off.as_ptr().add(e0),
            ),
        };
        let vp = s.val.as_ptr().add(e0);
        // column k of the chunk times x, and the lanes (rows) it holds entries for
        let term = |k: usize| {
            let m = _mm512_cmpgt_epi64_mask(lens, _mm512_set1_epi64(k as i64));
            let cols = if NARROW {
                let o = _mm_loadu_si128(op.add(C * k) as *const __m128i);
                _mm256_add_epi32(bases, _mm256_cvtepu16_epi32(o))
            } else {
                _mm256_loadu_si256(ip.add(C * k) as *const __m256i)
            };
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
            // rows of SPLIT_ROW entries or more: entry k into chain k mod 4; shorter rows of the
            // chunk (if any) in one chain
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
        sum
    }
}

/// The chunks (unsorted) or windows (`SORTED`) ua..ub of a double-precision block
/// ([`chunk_f64`]) into y (`add`: y += B x); with `DOT`, goes on adding w[i] (B x)[i] over these
/// rows, in row order, to the running sum `acc`, and returns it. Unsorted, a chunk's eight rows go
/// straight from the registers; sorted, each window's chunks go into a buffer at their rows'
/// places, then the window's rows in row order into y, as [`drive`] does.
///
/// SAFETY: as [`chunk_f64`]; the units lie inside the rows r0..r0 + y.len() (a last window may end
/// at the block's last row); `SORTED` is the block's; under DOT w is as long as y.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[allow(clippy::too_many_arguments)]
unsafe fn units_f64<const DOT: bool, const NARROW: bool, const SORTED: bool>(
    s: &Sell<f64>,
    x: &[f64],
    y: &mut [f64],
    ua: usize,
    ub: usize,
    r0: usize,
    add: bool,
    w: &[f64],
    split: bool,
    mut acc: (f64, f64),
) -> (f64, f64) {
    use std::arch::x86_64::*;
    // SAFETY: our caller's contract (the doc above): the chunks visited are the units `ua..ub` (a
    // window's chunks `w0 / C..ceil((w0 + wl) / C)`), inside the block, as `chunk_f64` needs; `at`
    // holds one place < SIGMA per slot (8 bytes at `c * C`), so the scatter stays in `buf`, and
    // `drive` reads `buf` at `r - w0` < `wl` <= SIGMA; the unsorted rows `c * C..c * C + C` lie in
    // r0..r0 + y.len(), so the eight-lane loads of `w` (as long as `y` under DOT) and the
    // load/store at `yp` stay in bounds.
    unsafe {
        if SORTED {
            let mut buf = [0.0f64; SIGMA];
            for win in ua..ub {
                let w0 = win * SIGMA;
                let wl = (s.nrows - w0).min(SIGMA);
                // a window's slots (including the padding of a last, partial chunk) hold places
                // 0..SIGMA
                for c in w0 / C..(w0 + wl).div_ceil(C) {
                    let sum = chunk_f64::<NARROW>(s, x, c, split);
                    let at = _mm_loadl_epi64(s.at.as_ptr().add(c * C) as *const __m128i);
                    _mm512_i32scatter_pd::<8>(buf.as_mut_ptr(), _mm256_cvtepu8_epi32(at), sum);
                }
                let i = w0 - r0;
                let ww = if DOT { &w[i..i + wl] } else { &[] };
                acc = drive::<f64, DOT>(&mut y[i..i + wl], w0, add, None, ww, acc, |r| {
                    *buf.get_unchecked(r - w0)
                });
            }
            return acc;
        }
        for c in ua..ub {
            let mut sum = chunk_f64::<NARROW>(s, x, c, split);
            let i = c * C - r0;
            if DOT {
                // w[i] (B x)[i] for the eight rows (the scalar products' bits), then added to the
                // running sum one by one in row order, straight from the registers
                let t = _mm512_mul_pd(_mm512_loadu_pd(w.as_ptr().add(i)), sum);
                for h in [_mm512_castpd512_pd256(t), _mm512_extractf64x4_pd::<1>(t)] {
                    for q in [_mm256_castpd256_pd128(h), _mm256_extractf128_pd::<1>(h)] {
                        acc.0 += _mm_cvtsd_f64(q);
                        acc.0 += _mm_cvtsd_f64(_mm_unpackhi_pd(q, q));
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
    acc
}
