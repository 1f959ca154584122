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
        let cast = |v: &&Part<T>| {
            let l = v.local();
            // SAFETY: T is f64 (checked above): the same memory, length and alignment
            unsafe { std::slice::from_raw_parts(l.as_ptr() as *const f64, l.len()) }
        };
        let xv: Vec<&[f64]> = xs.iter().map(cast).collect();
        let yv: Vec<&[f64]> = ys.iter().map(cast).collect();
        let len = xv.first().or(yv.first()).map_or(0, |v| v.len());
        if xv.iter().chain(&yv).any(|v| v.len() != len) {
            return None;
        }
        let (nx, ny) = (xv.len(), yv.len());
        let mut sums = vec![0.0f64; nx * ny];
        // SAFETY: the CPU has AVX2 and FMA (checked above); every vector holds `len` entries
        unsafe { gram_avx2(&xv, &yv, len, &mut sums) };
        let mut out = Vec::new();
        out.try_reserve_exact(2 * nx * ny).ok()?;
        for s in sums {
            out.push(s);
            out.push(0.0);
        }
        return Some(out);
    }
    let _ = (xs, ys);
    None
}

/// The sums of every pair into `out` (row-major). SAFETY: AVX2 and FMA present; every vector of
/// `xv` and `yv` has `len` entries.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn gram_avx2(xv: &[&[f64]], yv: &[&[f64]], len: usize, out: &mut [f64]) {
    use std::arch::x86_64::*;
    let (nx, ny) = (xv.len(), yv.len());
    // four-lane accumulators of every pair, kept between blocks
    let mut acc = vec![[0.0f64; 4]; nx * ny];
    let body = len / 4 * 4;
    for a in (0..body).step_by(BLOCK) {
        let b = (a + BLOCK).min(body);
        let mut i0 = 0;
        while i0 < nx {
            let ni = (nx - i0).min(4);
            let mut j0 = 0;
            while j0 < ny {
                let nj = (ny - j0).min(2);
                // SAFETY: our caller's contract: AVX2/FMA present, every vector has len >= b
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
                        let x: [*const f64; 4] = std::array::from_fn(|p| xv[i0 + p].as_ptr());
                        let y: [*const f64; 2] = std::array::from_fn(|q| yv[j0 + q].as_ptr());
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
                                let yq = _mm256_loadu_pd(yv[j0 + q].as_ptr().add(e));
                                for p in 0..ni {
                                    let xp = _mm256_loadu_pd(xv[i0 + p].as_ptr().add(e));
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
    for i in 0..nx {
        for j in 0..ny {
            let l = acc[i * ny + j];
            let mut t = (l[0] + l[1]) + (l[2] + l[3]);
            for e in body..len {
                t += xv[i][e] * yv[j][e];
            }
            out[i * ny + j] = t;
        }
    }
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
    let n = iv.len();
    let body = len / 8 * 8;
    for a in (0..body).step_by(BLOCK) {
        let b = (a + BLOCK).min(body);
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
    for (q, o) in ov.iter().enumerate() {
        let from = bv.map_or(*o as *const f64, |b| b[q]);
        for e in body..len {
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
}
