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

use super::IndexInt;
use super::kernels::SPLIT_ROW;
use crate::scalar::{DType, Scalar};
use crate::vector::ops::add_dot;

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

/// A fallible, huge-page advised vector of `n` copies of `v`, or None.
fn filled<X: Clone>(n: usize, v: X) -> Option<Vec<X>> {
    let mut out = Vec::new();
    out.try_reserve_exact(n).ok()?;
    crate::memory::advise_huge(&out);
    out.resize(n, v);
    Some(out)
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
    fn padded<I: IndexInt>(p: &[I], i: &[I], v: &[T], ncols: usize, pad: usize) -> Option<Self> {
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

    /// Row r's entries as (column, value), in column order.
    fn row(&self, r: usize) -> impl Iterator<Item = (usize, T)> + '_ {
        let base = self.chunk[r / C] + r % C;
        (0..self.len[r] as usize).map(move |k| {
            let e = base + C * k;
            (self.idx[e] as usize, self.val[e])
        })
    }

    /// Sum of the entries (row r, column c), or zero.
    pub(super) fn entry(&self, r: usize, c: usize) -> T {
        let mut s = T::zero();
        for (j, v) in self.row(r) {
            if j == c {
                s += v;
            }
        }
        s
    }

    /// `f(row, column, value)` for every entry, row by row, in column order.
    pub(super) fn for_each(&self, f: &mut impl FnMut(usize, usize, T)) {
        for r in 0..self.nrows {
            for (c, v) in self.row(r) {
                f(r, c, v);
            }
        }
    }

    /// x += B^H y, entry by entry in the CSR loop's order.
    pub(super) fn mult_adjoint_add(&self, y: &[T], x: &mut [T]) {
        for (r, yr) in y.iter().enumerate().take(self.nrows) {
            for (c, a) in self.row(r) {
                x[c] += a.conj() * *yr;
            }
        }
    }

    /// One row of B x in the CSR loop's order. SAFETY: r < nrows, and x has at least the block's
    /// columns (every stored index is below them, checked when the CSR block was made).
    #[inline(always)]
    unsafe fn row_sum(&self, x: &[T], r: usize, split: bool) -> T {
        unsafe {
            let base = *self.chunk.get_unchecked(r / C) + r % C;
            let n = *self.len.get_unchecked(r) as usize;
            let term = |k: usize| {
                let e = base + C * k;
                *self.val.get_unchecked(e) * *x.get_unchecked(*self.idx.get_unchecked(e) as usize)
            };
            if split && n >= SPLIT_ROW {
                let mut c = [T::zero(); 4];
                for k in 0..n {
                    c[k % 4] += term(k);
                }
                return (c[0] + c[1]) + (c[2] + c[3]);
            }
            let mut s = T::zero();
            for k in 0..n {
                s += term(k);
            }
            s
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
        let mut acc = (0.0, 0.0);
        let n = y.len();
        let put = |acc: &mut (f64, f64), y: &mut [T], i: usize, s: T| {
            y[i] = if add { y[i] + s } else { s };
            if DOT {
                add_dot(acc, w[i], s);
            }
        };
        if let Some(rows) = rows {
            for &r in rows {
                // SAFETY: the listed rows lie in r0..r0 + n <= nrows (see mult_rows)
                let s = unsafe { self.row_sum(x, r, split) };
                put(&mut acc, y, r - r0, s);
            }
            return acc;
        }
        // whole chunks inside the range go eight rows at a time; the rows around them one by one
        let (mut ca, mut cb) = (r0.div_ceil(C), (r0 + n) / C);
        if !Self::pays() || ca >= cb {
            (ca, cb) = (0, 0);
        }
        let head = if cb > ca { ca * C - r0 } else { n };
        for i in 0..head {
            // SAFETY: r0 + i < r0 + n <= nrows
            let s = unsafe { self.row_sum(x, r0 + i, split) };
            put(&mut acc, y, i, s);
        }
        if cb > ca {
            #[cfg(target_arch = "x86_64")]
            {
                // SAFETY: T is f64 (pays()), so the slices are f64 slices; AVX-512F is present
                // (pays()); chunks ca..cb hold rows inside r0..r0 + n.
                let f = |s: &[T]| unsafe {
                    std::slice::from_raw_parts(s.as_ptr() as *const f64, s.len())
                };
                let yf =
                    unsafe { std::slice::from_raw_parts_mut(y.as_mut_ptr() as *mut f64, y.len()) };
                let sell = unsafe { &*(self as *const Sell<T> as *const Sell<f64>) };
                acc.0 = unsafe {
                    chunks_f64_avx512::<DOT>(sell, f(x), yf, ca, cb, r0, add, f(w), split, acc.0)
                };
            }
            for i in cb * C - r0..n {
                // SAFETY: as above
                let s = unsafe { self.row_sum(x, r0 + i, split) };
                put(&mut acc, y, i, s);
            }
        }
        acc
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

#[cfg(test)]
mod tests {
    use super::super::{Arr, Idx, LocalCsr};
    use super::Sell;
    use crate::scalar::Scalar;
    use crate::vector::ops::SumOrder;

    /// A small generator (splitmix64) for reproducible test data.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        }
    }

    /// A block of `nrows` x `ncols` whose row lengths vary from 0 to `maxlen` (runs of equal
    /// lengths, as in a mesh, and isolated long rows), with sorted distinct columns.
    fn block(rng: &mut Rng, nrows: usize, ncols: usize, maxlen: usize) -> LocalCsr<f64> {
        let (mut p, mut i, mut v) = (vec![0i32], Vec::new(), Vec::new());
        let mut len = 0;
        for _ in 0..nrows {
            if rng.below(6) == 0 {
                len = rng.below(maxlen + 1).min(ncols);
            }
            let mut cols: Vec<i32> = (0..len).map(|_| rng.below(ncols) as i32).collect();
            cols.sort_unstable();
            cols.dedup();
            for c in cols {
                i.push(c);
                v.push(rng.unit() * 8.0);
            }
            p.push(i.len() as i32);
        }
        let b = LocalCsr::new(
            nrows,
            ncols,
            Idx::I32(Arr::Owned(p)),
            Idx::I32(Arr::Owned(i)),
            Arr::Owned(v),
            "test block",
        )
        .unwrap();
        assert!(b.sell.is_none());
        b
    }

    /// The same block in SELL-8 storage (whatever this CPU prefers).
    fn chunked(b: &LocalCsr<f64>) -> LocalCsr<f64> {
        let c = b.to_csr().unwrap();
        let s = match (&c.indptr, &c.indices) {
            (Idx::I32(p), Idx::I32(i)) => {
                Sell::padded(p.as_slice(), i.as_slice(), c.values.as_slice(), c.ncols, 0)
            }
            _ => unreachable!(),
        };
        let mut c = c;
        c.sell = Some(s.expect("memory for a small block"));
        c.indptr = Idx::I32(Arr::Owned(Vec::new()));
        c.indices = Idx::I32(Arr::Owned(Vec::new()));
        c.values = Arr::Owned(Vec::new());
        c
    }

    /// Every product of the chunked block (whole, blocks of rows that start and end inside a
    /// chunk, adding, with the dot, one chain or split sums) has the CSR block's bits.
    #[test]
    fn chunked_products_have_the_csr_bits() {
        let mut rng = Rng(7);
        for (nrows, ncols, maxlen) in [
            (203, 190, 9),
            (96, 300, 40),
            (37, 37, 20),
            (8, 5, 5),
            (1, 3, 3),
        ] {
            let a = block(&mut rng, nrows, ncols, maxlen);
            let s = chunked(&a);
            assert_eq!(s.nnz(), a.nnz());
            let x: Vec<f64> = (0..ncols).map(|_| rng.unit()).collect();
            let w: Vec<f64> = (0..nrows).map(|_| rng.unit()).collect();
            let y0: Vec<f64> = (0..nrows).map(|_| rng.unit()).collect();
            for sequential in [false, true] {
                let _order = SumOrder::set(sequential);
                for (r0, r1) in [
                    (0, nrows),
                    (3.min(nrows), nrows),
                    (0, nrows - nrows / 3),
                    (nrows / 5, nrows - nrows / 7),
                ] {
                    for add in [false, true] {
                        let (mut ya, mut ys) = (y0[r0..r1].to_vec(), y0[r0..r1].to_vec());
                        let da = a.mult_rows::<true>(&x, &mut ya, r0, add, &w[r0..r1]);
                        let ds = s.mult_rows::<true>(&x, &mut ys, r0, add, &w[r0..r1]);
                        let bits = |v: &[f64]| v.iter().map(|z| z.to_bits()).collect::<Vec<_>>();
                        assert_eq!(
                            bits(&ya),
                            bits(&ys),
                            "{nrows}x{ncols} rows {r0}..{r1} add {add} sequential {sequential}"
                        );
                        assert_eq!(da.0.to_bits(), ds.0.to_bits(), "dot, rows {r0}..{r1}");
                        let (mut yb, mut yt) = (y0[r0..r1].to_vec(), y0[r0..r1].to_vec());
                        a.mult_rows::<false>(&x, &mut yb, r0, add, &[]);
                        s.mult_rows::<false>(&x, &mut yt, r0, add, &[]);
                        assert_eq!(bits(&yb), bits(&ya));
                        assert_eq!(bits(&yt), bits(&ya));
                    }
                }
            }
            // the entries, the diagonal, the adjoint and the CSR copy
            let (mut ea, mut es) = (Vec::new(), Vec::new());
            a.for_each(|r, c, v| ea.push((r, c, v.to_bits())));
            s.for_each(|r, c, v| es.push((r, c, v.to_bits())));
            assert_eq!(ea, es);
            for r in 0..nrows.min(ncols) {
                assert_eq!(a.entry(r, r).to_bits(), s.entry(r, r).to_bits());
            }
            let (mut xa, mut xs) = (vec![0.5; ncols], vec![0.5; ncols]);
            a.mult_adjoint_add(&w, &mut xa);
            s.mult_adjoint_add(&w, &mut xs);
            assert_eq!(
                xa.iter().map(|z| z.to_bits()).collect::<Vec<_>>(),
                xs.iter().map(|z| z.to_bits()).collect::<Vec<_>>()
            );
            let mut back = Vec::new();
            s.to_csr()
                .unwrap()
                .for_each(|r, c, v| back.push((r, c, v.to_bits())));
            assert_eq!(back, ea);
            assert_eq!(a.lower_reach(), s.lower_reach());
        }
    }

    /// Rows of very different lengths side by side would pad too much: CSR stays.
    #[test]
    fn uneven_rows_stay_csr() {
        let mut p = vec![0i32];
        let mut i = Vec::new();
        for r in 0..64 {
            let n = if r % 8 == 0 { 50 } else { 1 };
            i.extend(0..n);
            p.push(i.len() as i32);
        }
        let v = vec![1.0f64; i.len()];
        assert!(Sell::from_csr(&p, &i, &v, 50).is_none());
        assert!(Sell::<f64>::from_csr(&[0i32, 0], &[], &[], 0).is_some());
        let _ = f64::zero();
    }
}
