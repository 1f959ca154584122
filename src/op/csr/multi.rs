//! The product of a CSR block and several vectors (a sparse matrix times a multi-vector), in
//! pieces of [`PIECE`] rows: each piece's entries are read from memory once and then from the cache
//! for every vector. Every entry has the bits of [`LocalCsr::mult`] on its vector: double-precision
//! CSR arrays parlops owns go through [`rows_f64_avx2`] (the vectors side by side in the lanes of
//! AVX2 registers, each lane summed in the one-vector loop's order), every other block through the
//! one-vector product of whatever layout it is stored in ([`LocalCsr::mult_rows`]: CSR, SELL,
//! 16-bit columns).

use super::IndexInt;
use super::block::{Arr, Idx, LocalCsr};
use crate::scalar::Scalar;

/// Rows per piece: a multiple of the SELL layout's sorting window (128 rows), and of its chunks;
/// a piece of a 5-point matrix's entries takes about 50 KiB.
pub(super) const PIECE: usize = 1024;

impl<T: Scalar> LocalCsr<T> {
    /// ys[j] = B xs[j] (`add`: ys[j] += B xs[j]) for every j: the block read from memory once;
    /// each entry has the bits of [`LocalCsr::mult`] on that vector.
    pub fn mult_many(&self, xs: &[&[T]], ys: &mut [&mut [T]], add: bool) {
        for p0 in (0..self.nrows).step_by(PIECE) {
            self.mult_many_rows(xs, ys, p0, (p0 + PIECE).min(self.nrows), add);
        }
    }

    /// Rows p0..p1 of [`LocalCsr::mult_many`] (ys[j][r] for r in p0..p1; the rest of each y
    /// untouched).
    pub fn mult_many_rows(
        &self,
        xs: &[&[T]],
        ys: &mut [&mut [T]],
        p0: usize,
        p1: usize,
        add: bool,
    ) {
        assert!(
            xs.len() == ys.len()
                && xs.iter().all(|x| x.len() >= self.ncols)
                && ys.iter().all(|y| y.len() == self.nrows)
                && p0 <= p1
                && p1 <= self.nrows,
            "CSR block {}x{}: rows {p0}..{p1} applied to {} vectors ({} outputs) of other lengths",
            self.nrows,
            self.ncols,
            xs.len(),
            ys.len()
        );
        // the vectors taken four at a time by the lanes' kernel (none where it does not apply)
        let lanes = if add { 0 } else { self.lanes_many(xs, ys) };
        if lanes > 0 {
            self.lanes_piece(&xs[..lanes], &mut ys[..lanes], p0, p1);
        }
        for (x, y) in xs.iter().zip(ys.iter_mut()).skip(lanes) {
            self.mult_rows::<false>(x, &mut y[p0..p1], p0, add, &[]);
        }
    }

    /// How many of the vectors (a multiple of four) the lanes' kernel takes: double precision,
    /// CSR arrays parlops owns (unchecked loops: see [`LocalCsr::mult_rows`]), an AVX2 CPU.
    fn lanes_many(&self, xs: &[&[T]], _ys: &[&mut [T]]) -> usize {
        #[cfg(target_arch = "x86_64")]
        if T::DTYPE == crate::scalar::DType::F64
            && self.compact.is_none()
            && matches!(self.values, Arr::Owned(_))
            && matches!(
                (&self.indptr, &self.indices),
                (Idx::I32(Arr::Owned(_)), Idx::I32(Arr::Owned(_)))
                    | (Idx::I64(Arr::Owned(_)), Idx::I64(Arr::Owned(_)))
            )
            && std::arch::is_x86_feature_detected!("avx2")
        {
            return xs.len() / 4 * 4;
        }
        let _ = xs;
        0
    }

    /// Rows p0..p1 of B x for the vectors of `xs` (a multiple of four, [`Self::lanes_many`] said
    /// so), eight or four at a time.
    fn lanes_piece(&self, xs: &[&[T]], ys: &mut [&mut [T]], p0: usize, p1: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            let split = !crate::vector::ops::sequential_sums();
            let v = self.values.as_slice();
            // SAFETY: T is f64 (`lanes_many` checked it): the same memory, length and alignment
            let vf = unsafe { std::slice::from_raw_parts(v.as_ptr() as *const f64, v.len()) };
            let mut g = 0;
            while g < xs.len() {
                let eight = xs.len() - g >= 8;
                let n = if eight { 8 } else { 4 };
                let xp: Vec<*const f64> = xs[g..g + n]
                    .iter()
                    .map(|x| x.as_ptr() as *const f64)
                    .collect();
                let yp: Vec<*mut f64> = ys[g..g + n]
                    .iter_mut()
                    .map(|y| y.as_mut_ptr() as *mut f64)
                    .collect();
                macro_rules! go {
                    ($p:expr, $i:expr) => {{
                        let (p, i) = ($p.as_slice(), $i.as_slice());
                        // SAFETY: the CPU has AVX2 and the arrays are owned by parlops, checked by
                        // LocalCsr::new and unchanged since (`lanes_many`); rows p0..p1 are rows
                        // of the block; every x holds at least ncols entries and every y nrows
                        // (mult_many_rows' assertion); the y's are distinct `&mut` slices
                        unsafe {
                            if eight {
                                rows_f64_avx2::<_, 8>(p, i, vf, &xp, &yp, p0, p1, split)
                            } else {
                                rows_f64_avx2::<_, 4>(p, i, vf, &xp, &yp, p0, p1, split)
                            }
                        }
                    }};
                }
                match (&self.indptr, &self.indices) {
                    (Idx::I32(p), Idx::I32(i)) => go!(p, i),
                    (Idx::I64(p), Idx::I64(i)) => go!(p, i),
                    _ => unreachable!("validated at construction"),
                }
                g += n;
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        unreachable!("lanes_many takes no vectors here: {xs:p} {ys:p} {p0} {p1}");
    }
}

/// Rows p0..p1 of B x for the N vectors of `xp` at once (into `yp` at the row's own index), in N
/// scalar chains side by side: each entry's value times each vector's x at its column added into
/// that vector's sum, as the one-vector loop multiplies then adds (no fused multiply-add), in one
/// chain in column order, or with `split` and rows of [`super::kernels::SPLIT_ROW`] entries or
/// more in four chains (entry k into chain k mod 4, then (c0 + c1) + (c2 + c3)): each vector has
/// the bits of [`LocalCsr::mult`]. The entry and its column are loaded once for the N vectors.
/// SAFETY: the CPU has AVX2; `p`, `idx` and `v` passed [`LocalCsr::new`]'s checks (row pointers
/// from 0, non-decreasing; every column index of the first p[nrows] entries in 0..ncols); p1 <=
/// nrows; each of the N pointers of `xp` addresses ncols entries and of `yp` p1 entries, the
/// outputs distinct from each other and from the inputs.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
unsafe fn rows_f64_avx2<I: IndexInt, const N: usize>(
    p: &[I],
    idx: &[I],
    v: &[f64],
    xp: &[*const f64],
    yp: &[*mut f64],
    p0: usize,
    p1: usize,
    split: bool,
) {
    use super::kernels::SPLIT_ROW;
    const AHEAD: usize = 32;
    let x: [*const f64; N] = std::array::from_fn(|q| xp[q]);
    let y: [*mut f64; N] = std::array::from_fn(|q| yp[q]);
    // SAFETY: our caller's contract (the doc above): the row pointers of rows p0..=p1 exist and
    // are non-decreasing, so entries a..a + n lie in `idx` and `v`; each index c < ncols, so
    // x_q[c] is an entry of vector q; each output is written at row r < p1
    unsafe {
        for r in p0..p1 {
            let a = p.get_unchecked(r).to_usize();
            let n = p.get_unchecked(r + 1).to_usize() - a;
            // the vectors' entries at the last column of the row AHEAD rows on, asked of the
            // cache now: a banded matrix's leading edge in N vectors at once, more streams than
            // the hardware's prefetcher follows well (block CG of 8 columns at 490,000 rows:
            // 0.66 -> 0.61 of 8 CG solves' time, benches/NOTES.md item 42)
            if r + AHEAD < p1 {
                let e = p.get_unchecked(r + AHEAD + 1).to_usize();
                if e > p.get_unchecked(r + AHEAD).to_usize() {
                    let c = idx.get_unchecked(e - 1).to_usize();
                    for xq in x {
                        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
                        _mm_prefetch::<_MM_HINT_T0>(xq.add(c) as *const i8);
                    }
                }
            }
            let mut s = [0.0f64; N];
            let add = |s: &mut [f64; N], k: usize| {
                let c = idx.get_unchecked(a + k).to_usize();
                let w = *v.get_unchecked(a + k);
                for q in 0..N {
                    s[q] += w * *x[q].add(c);
                }
            };
            if split && n >= SPLIT_ROW {
                let mut c = [[0.0f64; N]; 4];
                let mut k = 0;
                while k + 4 <= n {
                    for (l, cl) in c.iter_mut().enumerate() {
                        add(cl, k + l);
                    }
                    k += 4;
                }
                for (l, q) in (k..n).enumerate() {
                    add(&mut c[l], q);
                }
                for q in 0..N {
                    s[q] = (c[0][q] + c[1][q]) + (c[2][q] + c[3][q]);
                }
            } else {
                for k in 0..n {
                    add(&mut s, k);
                }
            }
            for q in 0..N {
                *y[q].add(r) = s[q];
            }
        }
    }
}
