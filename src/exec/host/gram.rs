//! Block methods' passes over two sets of double-precision host vectors in register tiles, with
//! fused multiply-adds: a Gram matrix (four x's against two y's at a time, four entries a step,
//! over blocks of entries that stay in the cache while every tile uses them) and several
//! combinations added into their outputs (two outputs at a time, each input entry loaded once for
//! both). Faster than [`super::block`]'s passes where the sets are wide (block Krylov methods: 8 x
//! 16 pairs), but each sum is formed in its own order: not the bits of a dot product or of axpys.
//! Other element types and CPUs without AVX2 and FMA take `super::block`'s.

use crate::exec::Part;
use crate::scalar::Scalar;

/// Entries per block: 24 vectors' blocks take 96 KiB.
const BLOCK: usize = 512;

/// conj(x_i).y_j for every pair as (re, im) pairs, row-major (`xs.len()` rows of `ys.len()`), or
/// None where this kernel does not apply (then `block_dot`).
pub(crate) fn gram<T: Scalar>(xs: &[&Part<T>], ys: &[&Part<T>]) -> Option<Vec<f64>> {
    #[cfg(target_arch = "x86_64")]
    if T::DTYPE == crate::scalar::DType::F64
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
    {
        let len = xs.first().or(ys.first()).map_or(0, |v| v.local().len());
        if xs.iter().chain(ys).any(|v| v.local().len() != len) {
            return None;
        }
        // (T is f64, checked above: the same memory)
        let xv: Vec<*const f64> = xs
            .iter()
            .map(|v| v.local().as_ptr() as *const f64)
            .collect();
        let yv: Vec<*const f64> = ys
            .iter()
            .map(|v| v.local().as_ptr() as *const f64)
            .collect();
        let mut acc = Tiles::new(xv.len(), yv.len())?;
        let body = len / 4 * 4;
        // SAFETY: the CPU has AVX2 and FMA (checked above); every vector holds `len` entries
        // (checked above) and is only read while the pointers live
        unsafe {
            gram_blocks(&xv, &yv, 0, body, &mut acc);
            return acc.finish(&xv, &yv, body, len);
        }
    }
    let _ = (xs, ys);
    None
}

/// The sums of [`gram`] formed range of entries by range of entries, each range while it is in the
/// cache (a product's rows just written): ranges that follow each other from entry 0, each but
/// the last a multiple of four long, give the bits of `gram` on the whole vectors.
pub(crate) struct GramRows {
    tiles: Tiles,
    /// The next entry a range must start at.
    next: usize,
    /// Past the multiples of four of the last range (its leftover entries are summed at the end).
    body: usize,
}

impl GramRows {
    /// For `nx` x's against `ny` y's of type T; None where [`gram`]'s kernel does not apply (not
    /// double precision, no AVX2 and FMA) or the accumulators cannot be had.
    pub(crate) fn new<T: Scalar>(nx: usize, ny: usize) -> Option<GramRows> {
        #[cfg(target_arch = "x86_64")]
        if T::DTYPE == crate::scalar::DType::F64
            && std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
        {
            return Some(GramRows {
                tiles: Tiles::new(nx, ny)?,
                next: 0,
                body: 0,
            });
        }
        let _ = (nx, ny);
        None
    }

    /// Adds entries a..b of every pair (a the end of the previous range, 0 at first; after a
    /// range whose length is not a multiple of four, none).
    pub(crate) fn add<T: Scalar>(&mut self, xs: &[&[T]], ys: &[&[T]], a: usize, b: usize) {
        assert!(
            a == self.next
                && self.body == self.next
                && a <= b
                && xs.len() * ys.len() == self.tiles.acc.len()
                && xs.iter().chain(ys).all(|v| v.len() >= b)
                && T::DTYPE == crate::scalar::DType::F64,
            "a Gram matrix's range {a}..{b} after {}",
            self.next
        );
        let body = a + (b - a) / 4 * 4;
        #[cfg(target_arch = "x86_64")]
        {
            let xv: Vec<*const f64> = xs.iter().map(|v| v.as_ptr() as *const f64).collect();
            let yv: Vec<*const f64> = ys.iter().map(|v| v.as_ptr() as *const f64).collect();
            // SAFETY: AVX2 and FMA present (`new` checked them), T is f64 (asserted above: the
            // same memory), every vector holds at least b entries (asserted above) and is only
            // read while these pointers live
            unsafe { gram_blocks(&xv, &yv, a, body, &mut self.tiles) };
        }
        self.next = b;
        self.body = body;
    }

    /// The sums (row-major (re, 0) pairs, as [`gram`]'s) over entries 0..len, the ranges added
    /// having covered them (the vectors as given to [`GramRows::add`]).
    pub(crate) fn finish<T: Scalar>(self, xs: &[&[T]], ys: &[&[T]]) -> Option<Vec<f64>> {
        let len = self.next;
        assert!(
            xs.len() * ys.len() == self.tiles.acc.len()
                && xs.iter().chain(ys).all(|v| v.len() >= len)
                && T::DTYPE == crate::scalar::DType::F64,
            "a Gram matrix's end over {len} entries"
        );
        let xv: Vec<*const f64> = xs.iter().map(|v| v.as_ptr() as *const f64).collect();
        let yv: Vec<*const f64> = ys.iter().map(|v| v.as_ptr() as *const f64).collect();
        // SAFETY: every vector holds at least len entries (asserted above), T is f64
        unsafe { self.tiles.finish(&xv, &yv, self.body, len) }
    }
}

/// Four-lane accumulators of every pair of a Gram matrix (row-major), kept between blocks.
struct Tiles {
    acc: Vec<[f64; 4]>,
    ny: usize,
}

impl Tiles {
    fn new(nx: usize, ny: usize) -> Option<Tiles> {
        let mut acc = Vec::new();
        acc.try_reserve_exact(nx.checked_mul(ny)?).ok()?;
        acc.resize(nx * ny, [0.0; 4]);
        Some(Tiles { acc, ny })
    }

    /// Every pair's sum, as (re, 0) pairs, row-major: the lanes combined as (l0 + l1) + (l2 +
    /// l3), then entries body..len added in order. SAFETY: every pointer addresses `len` entries.
    unsafe fn finish(
        self,
        xv: &[*const f64],
        yv: &[*const f64],
        body: usize,
        len: usize,
    ) -> Option<Vec<f64>> {
        let mut out = Vec::new();
        out.try_reserve_exact(2 * self.acc.len()).ok()?;
        for (k, l) in self.acc.iter().enumerate() {
            let (i, j) = (k / self.ny, k % self.ny);
            let mut t = (l[0] + l[1]) + (l[2] + l[3]);
            for e in body..len {
                // SAFETY: e < len (our caller's contract)
                t += unsafe { *xv[i].add(e) * *yv[j].add(e) };
            }
            out.push(t);
            out.push(0.0);
        }
        Some(out)
    }
}

/// Entries a..b (b - a a multiple of four) of every pair's sum into its accumulator, block by
/// block of [`BLOCK`] entries (counted from a), entry e into lane (e - a) mod 4: ranges that
/// follow each other from a multiple of four add each entry into the same lane in the same order
/// as one range. SAFETY: AVX2 and FMA present; every vector of `xv` and `yv` has at least b
/// entries.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn gram_blocks(xv: &[*const f64], yv: &[*const f64], a: usize, b: usize, t: &mut Tiles) {
    use std::arch::x86_64::*;
    let (nx, ny) = (xv.len(), yv.len());
    let acc = &mut t.acc;
    for a in (a..b).step_by(BLOCK) {
        let b = (a + BLOCK).min(b);
        let mut i0 = 0;
        while i0 < nx {
            let ni = (nx - i0).min(4);
            let mut j0 = 0;
            while j0 < ny {
                let nj = (ny - j0).min(2);
                // SAFETY: our caller's contract: AVX2/FMA present, every vector has at least b
                // entries, so the loads at e..e + 4 (e + 4 <= b) are in bounds; the accumulator
                // rows i0..i0 + ni, columns j0..j0 + nj exist
                unsafe {
                    let mut s = [[_mm256_setzero_pd(); 2]; 4];
                    for p in 0..ni {
                        for q in 0..nj {
                            s[p][q] = _mm256_loadu_pd(acc[(i0 + p) * ny + j0 + q].as_ptr());
                        }
                    }
                    if ni == 4 && nj == 2 {
                        let x: [*const f64; 4] = std::array::from_fn(|p| xv[i0 + p]);
                        let y: [*const f64; 2] = std::array::from_fn(|q| yv[j0 + q]);
                        let mut e = a;
                        while e < b {
                            let y0 = _mm256_loadu_pd(y[0].add(e));
                            let y1 = _mm256_loadu_pd(y[1].add(e));
                            for p in 0..4 {
                                let xp = _mm256_loadu_pd(x[p].add(e));
                                s[p][0] = _mm256_fmadd_pd(xp, y0, s[p][0]);
                                s[p][1] = _mm256_fmadd_pd(xp, y1, s[p][1]);
                            }
                            e += 4;
                        }
                    } else {
                        let mut e = a;
                        while e < b {
                            for q in 0..nj {
                                let yq = _mm256_loadu_pd(yv[j0 + q].add(e));
                                for p in 0..ni {
                                    let xp = _mm256_loadu_pd(xv[i0 + p].add(e));
                                    s[p][q] = _mm256_fmadd_pd(xp, yq, s[p][q]);
                                }
                            }
                            e += 4;
                        }
                    }
                    for p in 0..ni {
                        for q in 0..nj {
                            _mm256_storeu_pd(acc[(i0 + p) * ny + j0 + q].as_mut_ptr(), s[p][q]);
                        }
                    }
                }
                j0 += nj;
            }
            i0 += ni;
        }
    }
}

/// outs[q] += sum_a c[q * ins.len() + a] ins[a] for every q ([`update`] without bases), then the
/// Gram matrix of [ins, outs] against outs (the pairs of [`gram`] on the new outs, row-major
/// (re, 0) pairs), in one pass: each block of entries is updated, then its sums are formed while
/// it is in the cache. The same bits as `update` then `gram`; None where the kernels do not apply.
pub(crate) fn update_gram<T: Scalar>(
    outs: &mut [&mut Part<T>],
    c: &[T],
    ins: &[&Part<T>],
) -> Option<Vec<f64>> {
    #[cfg(target_arch = "x86_64")]
    if T::DTYPE == crate::scalar::DType::F64
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
    {
        let n = ins.len();
        let len = outs.first().map_or(0, |o| o.local().len());
        if n == 0
            || outs.is_empty()
            || c.len() != outs.len() * n
            || ins.iter().any(|v| v.local().len() != len)
            || outs.iter().any(|v| v.local().len() != len)
        {
            return None;
        }
        // SAFETY: T is f64 (checked above): the same memory, length and alignment
        let cf: &[f64] = unsafe { std::slice::from_raw_parts(c.as_ptr() as *const f64, c.len()) };
        let iv: Vec<*const f64> = ins
            .iter()
            .map(|v| v.local().as_ptr() as *const f64)
            .collect();
        let mut ov: Vec<*mut f64> = outs
            .iter_mut()
            .map(|v| v.local_mut().as_mut_ptr() as *mut f64)
            .collect();
        let xv: Vec<*const f64> = iv
            .iter()
            .copied()
            .chain(ov.iter().map(|p| *p as *const f64))
            .collect();
        let yv: Vec<*const f64> = ov.iter().map(|p| *p as *const f64).collect();
        let mut acc = Tiles::new(xv.len(), yv.len())?;
        let (body8, body4) = (len / 8 * 8, len / 4 * 4);
        // SAFETY: AVX2 and FMA present (checked above); every input and output holds `len`
        // entries; the outputs are distinct `&mut` parts, so they alias neither each other nor
        // the inputs; each block is updated before its sums read it, and nothing else touches the
        // vectors while the pointers live
        unsafe {
            for a in (0..body8).step_by(BLOCK) {
                let b = (a + BLOCK).min(body8);
                update_blocks(&mut ov, None, cf, &iv, a, b);
                gram_blocks(&xv, &yv, a, b, &mut acc);
            }
            update_tail(&mut ov, None, cf, &iv, body8, len);
            gram_blocks(&xv, &yv, body8, body4, &mut acc);
            return acc.finish(&xv, &yv, body4, len);
        }
    }
    let _ = (outs, c, ins);
    None
}

/// outs[q] = base[q] + sum_a c[q * ins.len() + a] ins[a] for every q (no `base`: outs[q] itself),
/// with fused multiply-adds; false where this kernel does not apply (then
/// [`super::block::combine`]).
pub(crate) fn update<T: Scalar>(
    outs: &mut [&mut Part<T>],
    base: Option<&[&Part<T>]>,
    c: &[T],
    ins: &[&Part<T>],
) -> bool {
    #[cfg(target_arch = "x86_64")]
    if T::DTYPE == crate::scalar::DType::F64
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
    {
        let n = ins.len();
        let len = outs.first().map_or(0, |o| o.local().len());
        if n == 0
            || c.len() != outs.len() * n
            || ins.iter().any(|v| v.local().len() != len)
            || outs.iter().any(|v| v.local().len() != len)
            || base
                .is_some_and(|b| b.len() != outs.len() || b.iter().any(|v| v.local().len() != len))
        {
            return false;
        }
        let bv: Option<Vec<*const f64>> =
            base.map(|b| b.iter().map(|v| v.local().as_ptr() as *const f64).collect());
        // SAFETY: T is f64 (checked above): the same memory, length and alignment
        let cf: &[f64] = unsafe { std::slice::from_raw_parts(c.as_ptr() as *const f64, c.len()) };
        let iv: Vec<*const f64> = ins
            .iter()
            .map(|v| v.local().as_ptr() as *const f64)
            .collect();
        let mut ov: Vec<*mut f64> = outs
            .iter_mut()
            .map(|v| v.local_mut().as_mut_ptr() as *mut f64)
            .collect();
        // SAFETY: AVX2 and FMA present (checked above); every input, base and output holds `len`
        // entries; the outputs are distinct `&mut` parts, so they alias neither each other nor
        // the inputs and bases
        unsafe { update_avx2(&mut ov, bv.as_deref(), cf, &iv, len) };
        return true;
    }
    let _ = (outs, base, c, ins);
    false
}

/// SAFETY: AVX2 and FMA present; every pointer of `ov`, `bv` and `iv` addresses `len` entries,
/// the outputs distinct from each other and from the inputs and bases; `c` holds outs x ins
/// coefficients; `bv` (one per output) where given.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn update_avx2(
    ov: &mut [*mut f64],
    bv: Option<&[*const f64]>,
    c: &[f64],
    iv: &[*const f64],
    len: usize,
) {
    let body = len / 8 * 8;
    // SAFETY: our caller's contract, with body <= len
    unsafe {
        update_blocks(ov, bv, c, iv, 0, body);
        update_tail(ov, bv, c, iv, body, len);
    }
}

/// Entries a..b (b - a a multiple of eight) of [`update_avx2`], block by block. SAFETY: as
/// `update_avx2`, with every pointer addressing at least b entries.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn update_blocks(
    ov: &mut [*mut f64],
    bv: Option<&[*const f64]>,
    c: &[f64],
    iv: &[*const f64],
    a: usize,
    b: usize,
) {
    let n = iv.len();
    for a in (a..b).step_by(BLOCK) {
        let b = (a + BLOCK).min(b);
        let mut q = 0;
        while q < ov.len() {
            let nq = (ov.len() - q).min(2);
            let mut g = 0;
            while g < n {
                let ng = (n - g).min(4);
                // SAFETY: our caller's contract, with q + nq <= outputs, g + ng <= inputs and
                // a..b within the first `body` <= len entries
                unsafe {
                    // the first group of inputs starts from the bases, the others from the
                    // outputs
                    let src: [*const f64; 2] = std::array::from_fn(|t| match bv {
                        Some(b) if g == 0 && t < nq => b[q + t],
                        _ if t < nq => ov[q + t] as *const f64,
                        _ => std::ptr::null(),
                    });
                    match (nq, ng) {
                        (2, 4) => tile::<2, 4>(ov, &src, c, iv, n, q, g, a, b),
                        (2, 3) => tile::<2, 3>(ov, &src, c, iv, n, q, g, a, b),
                        (2, 2) => tile::<2, 2>(ov, &src, c, iv, n, q, g, a, b),
                        (2, _) => tile::<2, 1>(ov, &src, c, iv, n, q, g, a, b),
                        (_, 4) => tile::<1, 4>(ov, &src, c, iv, n, q, g, a, b),
                        (_, 3) => tile::<1, 3>(ov, &src, c, iv, n, q, g, a, b),
                        (_, 2) => tile::<1, 2>(ov, &src, c, iv, n, q, g, a, b),
                        _ => tile::<1, 1>(ov, &src, c, iv, n, q, g, a, b),
                    }
                }
                g += ng;
            }
            q += nq;
        }
    }
}

/// Entries from..len of [`update_avx2`], one at a time. SAFETY: as `update_avx2`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn update_tail(
    ov: &mut [*mut f64],
    bv: Option<&[*const f64]>,
    c: &[f64],
    iv: &[*const f64],
    from_entry: usize,
    len: usize,
) {
    let n = iv.len();
    for (q, o) in ov.iter().enumerate() {
        let from = bv.map_or(*o as *const f64, |b| b[q]);
        for e in from_entry..len {
            // SAFETY: e < len: every pointer addresses len entries (our caller's contract)
            unsafe {
                let mut v = *from.add(e);
                for (a, x) in iv.iter().enumerate() {
                    v = c[q * n + a].mul_add(*x.add(e), v);
                }
                *o.add(e) = v;
            }
        }
    }
}

/// Outputs q..q + NQ += inputs g..g + NG times their coefficients over entries a..b (eight a
/// step, b - a a multiple of eight), the coefficients in registers. SAFETY: as `update_avx2`,
/// and the ranges exist.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
#[inline]
unsafe fn tile<const NQ: usize, const NG: usize>(
    ov: &[*mut f64],
    src: &[*const f64; 2],
    c: &[f64],
    iv: &[*const f64],
    n: usize,
    q: usize,
    g: usize,
    a: usize,
    b: usize,
) {
    use std::arch::x86_64::*;
    // SAFETY: our caller's contract: outputs q..q + NQ and inputs g..g + NG address at least b
    // entries, b - a a multiple of eight, the outputs alias nothing read
    unsafe {
        let cc: [[__m256d; NG]; NQ] = std::array::from_fn(|t| {
            std::array::from_fn(|u| _mm256_set1_pd(c[(q + t) * n + g + u]))
        });
        let o: [*mut f64; NQ] = std::array::from_fn(|t| ov[q + t]);
        let x: [*const f64; NG] = std::array::from_fn(|u| iv[g + u]);
        let mut e = a;
        while e < b {
            let mut s: [[__m256d; 2]; NQ] = std::array::from_fn(|t| {
                [
                    _mm256_loadu_pd(src[t].add(e)),
                    _mm256_loadu_pd(src[t].add(e + 4)),
                ]
            });
            for u in 0..NG {
                let x0 = _mm256_loadu_pd(x[u].add(e));
                let x1 = _mm256_loadu_pd(x[u].add(e + 4));
                for t in 0..NQ {
                    s[t][0] = _mm256_fmadd_pd(cc[t][u], x0, s[t][0]);
                    s[t][1] = _mm256_fmadd_pd(cc[t][u], x1, s[t][1]);
                }
            }
            for t in 0..NQ {
                _mm256_storeu_pd(o[t].add(e), s[t][0]);
                _mm256_storeu_pd(o[t].add(e + 4), s[t][1]);
            }
            e += 8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gram_tiles_are_the_dot_products() {
        for n in [0, 3, 4, 511, 512, 513, 2100] {
            for (nx, ny) in [(1, 1), (4, 2), (5, 3), (8, 16), (3, 7)] {
                let mk = |s: usize| {
                    let v: Vec<f64> = (0..n)
                        .map(|i| ((i * 7 + s * 13) % 29) as f64 * 0.37 - 5.0)
                        .collect();
                    let mut p = Part::<f64>::zeroed(crate::exec::Exec::Host, n).unwrap();
                    p.local_mut().copy_from_slice(&v);
                    p
                };
                let xs: Vec<Part<f64>> = (0..nx).map(mk).collect();
                let ys: Vec<Part<f64>> = (0..ny).map(|s| mk(s + 40)).collect();
                let xr: Vec<&Part<f64>> = xs.iter().collect();
                let yr: Vec<&Part<f64>> = ys.iter().collect();
                let Some(g) = gram(&xr, &yr) else { return };
                for i in 0..nx {
                    for j in 0..ny {
                        let want: f64 = xs[i]
                            .local()
                            .iter()
                            .zip(ys[j].local())
                            .map(|(a, b)| a * b)
                            .sum();
                        let got = g[2 * (i * ny + j)];
                        assert!(
                            (got - want).abs() <= 1e-12 * (1.0 + want.abs()),
                            "n {n} {nx}x{ny} pair {i} {j}: {got} against {want}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    #[allow(clippy::needless_range_loop)]
    fn updates_are_the_combinations() {
        for n in [0, 3, 4, 9, 1001, 1030] {
            for (nout, nin) in [(1, 1), (2, 8), (3, 5), (8, 8), (5, 11)] {
                let mk = |s: usize| {
                    let v: Vec<f64> = (0..n)
                        .map(|i| ((i * 5 + s * 11) % 23) as f64 * 0.41 - 4.0)
                        .collect();
                    let mut p = Part::<f64>::zeroed(crate::exec::Exec::Host, n).unwrap();
                    p.local_mut().copy_from_slice(&v);
                    p
                };
                let ins: Vec<Part<f64>> = (0..nin).map(mk).collect();
                let mut outs: Vec<Part<f64>> = (0..nout).map(|s| mk(s + 30)).collect();
                let want: Vec<Vec<f64>> = outs.iter().map(|o| o.local().to_vec()).collect();
                let c: Vec<f64> = (0..nout * nin).map(|k| 0.25 - 0.03 * k as f64).collect();
                let ir: Vec<&Part<f64>> = ins.iter().collect();
                // from bases: outputs that start as anything
                let bases: Vec<Part<f64>> = (0..nout).map(|s| mk(s + 30)).collect();
                let br: Vec<&Part<f64>> = bases.iter().collect();
                let mut junk: Vec<Part<f64>> = (0..nout).map(|s| mk(s + 70)).collect();
                let done = {
                    let mut jr: Vec<&mut Part<f64>> = junk.iter_mut().collect();
                    update(&mut jr, Some(&br), &c, &ir)
                };
                let done = done && {
                    let mut or: Vec<&mut Part<f64>> = outs.iter_mut().collect();
                    update(&mut or, None, &c, &ir)
                };
                assert!(
                    !done || junk.iter().zip(&outs).all(|(j, o)| j.local() == o.local()),
                    "bases: n {n}"
                );
                if !done {
                    return;
                }
                for q in 0..nout {
                    for e in 0..n {
                        let w = want[q][e]
                            + (0..nin)
                                .map(|a| c[q * nin + a] * ins[a].local()[e])
                                .sum::<f64>();
                        let got = outs[q].local()[e];
                        assert!(
                            (got - w).abs() <= 1e-12 * (1.0 + w.abs()),
                            "n {n} output {q} entry {e}"
                        );
                    }
                }
            }
        }
    }

    /// The update and its Gram matrix in one pass have the bits of `update` then `gram`.
    #[test]
    fn update_then_gram_in_one_pass() {
        for n in [0, 3, 4, 9, 511, 512, 1030, 2100] {
            for (nout, nin) in [(1, 1), (8, 8), (3, 5), (16, 16)] {
                let mk = |s: usize| {
                    let v: Vec<f64> = (0..n)
                        .map(|i| ((i * 5 + s * 11) % 23) as f64 * 0.41 - 4.0)
                        .collect();
                    let mut p = Part::<f64>::zeroed(crate::exec::Exec::Host, n).unwrap();
                    p.local_mut().copy_from_slice(&v);
                    p
                };
                let ins: Vec<Part<f64>> = (0..nin).map(mk).collect();
                let c: Vec<f64> = (0..nout * nin).map(|k| 0.25 - 0.03 * k as f64).collect();
                let ir: Vec<&Part<f64>> = ins.iter().collect();
                let mut a: Vec<Part<f64>> = (0..nout).map(|s| mk(s + 30)).collect();
                let mut b: Vec<Part<f64>> = (0..nout).map(|s| mk(s + 30)).collect();
                let fused = {
                    let mut ar: Vec<&mut Part<f64>> = a.iter_mut().collect();
                    update_gram(&mut ar, &c, &ir)
                };
                let Some(fused) = fused else { return };
                let two = {
                    let mut br: Vec<&mut Part<f64>> = b.iter_mut().collect();
                    assert!(update(&mut br, None, &c, &ir));
                    let xs: Vec<&Part<f64>> = ins.iter().chain(b.iter()).collect();
                    let ys: Vec<&Part<f64>> = b.iter().collect();
                    gram(&xs, &ys).unwrap()
                };
                let bits = |v: &[f64]| v.iter().map(|z| z.to_bits()).collect::<Vec<_>>();
                for (p, q) in a.iter().zip(&b) {
                    assert_eq!(bits(p.local()), bits(q.local()), "n {n} {nout}x{nin}");
                }
                assert_eq!(bits(&fused), bits(&two), "n {n} {nout}x{nin}: the sums");
                assert_eq!(fused.len(), 2 * (nin + nout) * nout);
            }
        }
    }
}
