//! The host backend's passes over two sets of vectors at once: every pair's dot product (a small
//! Gram matrix, SLEPc's BVDot) and several combinations of one set (BVMult), each vector read from
//! memory once: a block of entries of every vector is kept in the cache while the pairs use it.
//! Sums have the bits of [`crate::exec::ops::dot`]; combinations the bits of a zero fill followed by
//! successive axpys.

use super::multi::{add_block, mdot_block};
use crate::error::Result;
use crate::exec::Part;
use crate::exec::ops::{LANES, combine_lanes, sequential_sums};
use crate::scalar::Scalar;

/// Entries per block (a multiple of the lanes): 40 vectors' blocks take 640 KiB of doubles.
const BLOCK: usize = 2048;

/// conj(x_i).y_j for every pair, as (re, im) pairs, row-major (`xs.len()` rows of `ys.len()`).
pub(crate) fn block_dot<T: Scalar>(xs: &[&Part<T>], ys: &[&Part<T>]) -> Result<Vec<f64>> {
    let xv: Vec<&[T]> = xs.iter().map(|v| v.local()).collect();
    let yv: Vec<&[T]> = ys.iter().map(|v| v.local()).collect();
    let (nx, ny) = (xv.len(), yv.len());
    let pairs = nx
        .checked_mul(ny)
        .ok_or_else(|| crate::err!(OutOfMemory, "{nx} x {ny} pairs"))?;
    let mut lanes = Vec::new();
    crate::error::try_reserve(&mut lanes, pairs, "the pairs' sums")?;
    lanes.resize(pairs, [(0.0f64, 0.0f64); LANES]);
    let seq = sequential_sums();
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above)
        unsafe { dot_avx2(&xv, &yv, &mut lanes, seq) };
    } else {
        dot_host(&xv, &yv, &mut lanes, seq);
    }
    #[cfg(not(target_arch = "x86_64"))]
    dot_host(&xv, &yv, &mut lanes, seq);
    let mut out = Vec::new();
    crate::error::try_reserve(&mut out, 2 * pairs, "the pairs' sums")?;
    out.resize(2 * pairs, 0.0);
    for j in 0..ny {
        for i in 0..nx {
            let (re, im) = combine_lanes(lanes[j * nx + i]);
            out[2 * (i * ny + j)] = re;
            out[2 * (i * ny + j) + 1] = im;
        }
    }
    Ok(out)
}

/// [`dot_host`] compiled for AVX2 (the same operations in the same order: the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_avx2<T: Scalar>(
    xv: &[&[T]],
    yv: &[&[T]],
    lanes: &mut [[(f64, f64); LANES]],
    seq: bool,
) {
    dot_host(xv, yv, lanes, seq)
}

#[inline(always)]
fn dot_host<T: Scalar>(xv: &[&[T]], yv: &[&[T]], lanes: &mut [[(f64, f64); LANES]], seq: bool) {
    let nx = xv.len();
    let len = yv.first().map_or(0, |y| y.len());
    for a in (0..len).step_by(BLOCK) {
        let b = (a + BLOCK).min(len);
        for (j, y) in yv.iter().enumerate() {
            mdot_block(xv, y, &mut lanes[j * nx..(j + 1) * nx], seq, a, b);
        }
    }
}

/// outs[q] = sum_a c[q * ins.len() + a] ins[a] for every q (per entry, zero plus each term in the
/// order of `ins`); with `add`, outs[q] += the same sum (outs[q] plus each term in turn).
pub(crate) fn combine<T: Scalar>(
    outs: &mut [&mut Part<T>],
    c: &[T],
    ins: &[&Part<T>],
    add: bool,
) -> Result<()> {
    let iv: Vec<&[T]> = ins.iter().map(|v| v.local()).collect();
    let mut ov: Vec<&mut [T]> = outs.iter_mut().map(|v| v.local_mut()).collect();
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above)
        unsafe { combine_avx2(&mut ov, c, &iv, add) };
        return Ok(());
    }
    combine_host(&mut ov, c, &iv, add);
    Ok(())
}

/// [`combine_host`] compiled for AVX2 (the same operations in the same order: the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn combine_avx2<T: Scalar>(ov: &mut [&mut [T]], c: &[T], iv: &[&[T]], add: bool) {
    combine_host(ov, c, iv, add)
}

#[inline(always)]
fn combine_host<T: Scalar>(ov: &mut [&mut [T]], c: &[T], iv: &[&[T]], add: bool) {
    let n = iv.len();
    let len = ov.first().map_or(0, |o| o.len());
    for a in (0..len).step_by(BLOCK) {
        let b = (a + BLOCK).min(len);
        if !add {
            for o in ov.iter_mut() {
                o[a..b].iter_mut().for_each(|v| *v = T::zero());
            }
        }
        // outputs two at a time: each input entry read once for both
        let mut pairs = ov.chunks_exact_mut(2);
        let mut q = 0;
        for pair in &mut pairs {
            let [o0, o1] = pair else { unreachable!() };
            add_block2(
                [o0, o1],
                [&c[q * n..(q + 1) * n], &c[(q + 1) * n..(q + 2) * n]],
                iv,
                a,
                b,
            );
            q += 2;
        }
        for o in pairs.into_remainder() {
            add_block(o, &c[q * n..(q + 1) * n], iv, a, b);
        }
    }
}

/// [`add_block`] into two outputs at once: w_t[j] += c_t[i] v_i[j] for every input i in turn (the
/// same sums, in the same order, as two calls of `add_block`).
#[inline(always)]
fn add_block2<T: Scalar>(w: [&mut [T]; 2], c: [&[T]; 2], vs: &[&[T]], a: usize, b: usize) {
    let [w0, w1] = w;
    let (w0, w1) = (&mut w0[a..b], &mut w1[a..b]);
    let len = w0.len();
    assert!(w1.len() == len && vs.iter().all(|v| v.len() >= b));
    let mut i = 0;
    while i + 8 <= vs.len() {
        let v: [&[T]; 8] = std::array::from_fn(|q| &vs[i + q][a..b]);
        let p0: [T; 8] = std::array::from_fn(|q| c[0][i + q]);
        let p1: [T; 8] = std::array::from_fn(|q| c[1][i + q]);
        for j in 0..len {
            // SAFETY: j < len, and w0, w1 and every v[q] have len entries (sliced a..b above,
            // the inputs at least b long: asserted)
            unsafe {
                let (mut t0, mut t1) = (*w0.get_unchecked(j), *w1.get_unchecked(j));
                for q in 0..8 {
                    let x = *v[q].get_unchecked(j);
                    t0 += p0[q] * x;
                    t1 += p1[q] * x;
                }
                *w0.get_unchecked_mut(j) = t0;
                *w1.get_unchecked_mut(j) = t1;
            }
        }
        i += 8;
    }
    for ((c0, c1), v) in c[0][i..].iter().zip(&c[1][i..]).zip(&vs[i..]) {
        for ((x0, x1), vj) in w0.iter_mut().zip(w1.iter_mut()).zip(&v[a..b]) {
            *x0 += *c0 * *vj;
            *x1 += *c1 * *vj;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::ops::{SumOrder, dot};

    fn pattern(n: usize, s: usize) -> Vec<f64> {
        (0..n)
            .map(|i| ((i * 7 + s * 13) % 29) as f64 * 0.37 - 5.0 + 1e-3 * s as f64)
            .collect()
    }

    fn part(v: Vec<f64>) -> Part<f64> {
        let mut p = Part::<f64>::zeroed(crate::exec::Exec::Host, v.len()).unwrap();
        p.local_mut().copy_from_slice(&v);
        p
    }

    /// Combinations of 7, 8 and 11 inputs into 1 to 4 outputs (the outputs two at a time, the
    /// inputs eight at a time, and the rest of either), written and added: each output has the bits
    /// of axpys in the order of the inputs.
    #[test]
    fn combinations_in_every_grouping_are_axpys() {
        for n in [5, 2049, 5000] {
            for nin in [7, 8, 11] {
                let xs: Vec<Part<f64>> = (0..nin).map(|s| part(pattern(n, s))).collect();
                let xr: Vec<&Part<f64>> = xs.iter().collect();
                for nout in 1..=4 {
                    let c: Vec<f64> = (0..nin * nout).map(|k| 0.3 - 0.07 * k as f64).collect();
                    for add in [false, true] {
                        let mut outs: Vec<Part<f64>> =
                            (0..nout).map(|s| part(pattern(n, s + 50))).collect();
                        {
                            let mut or: Vec<&mut Part<f64>> = outs.iter_mut().collect();
                            combine(&mut or, &c, &xr, add).unwrap();
                        }
                        for (q, o) in outs.iter().enumerate() {
                            let mut want = if add {
                                pattern(n, q + 50)
                            } else {
                                vec![0.0; n]
                            };
                            for (a, x) in xs.iter().enumerate() {
                                crate::exec::ops::axpy(&mut want, c[q * nin + a], x.local());
                            }
                            assert!(
                                o.local() == want.as_slice(),
                                "n {n} {nin} inputs output {q} of {nout} add {add}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn pairs_have_the_bits_of_dot_and_combinations_of_axpys() {
        for n in [0, 5, 2048, 2049, 5000, 40000] {
            let xs: Vec<Part<f64>> = (0..7).map(|s| part(pattern(n, s))).collect();
            let ys: Vec<Part<f64>> = (7..10).map(|s| part(pattern(n, s))).collect();
            let xr: Vec<&Part<f64>> = xs.iter().collect();
            let yr: Vec<&Part<f64>> = ys.iter().collect();
            for seq in [false, true] {
                let _o = SumOrder::set(seq);
                let g = block_dot(&xr, &yr).unwrap();
                for (i, x) in xs.iter().enumerate() {
                    for (j, y) in ys.iter().enumerate() {
                        let want = dot(x.local(), y.local());
                        assert_eq!(g[2 * (i * 3 + j)], want.0, "n {n} pair {i} {j} seq {seq}");
                    }
                }
            }
            let c: Vec<f64> = (0..21).map(|k| 0.3 - 0.07 * k as f64).collect();
            let mut outs: Vec<Part<f64>> = (0..3).map(|s| part(pattern(n, s + 50))).collect();
            {
                let mut or: Vec<&mut Part<f64>> = outs.iter_mut().collect();
                combine(&mut or, &c, &xr, false).unwrap();
            }
            for (q, o) in outs.iter().enumerate() {
                let mut want = vec![0.0; n];
                for (a, x) in xs.iter().enumerate() {
                    crate::exec::ops::axpy(&mut want, c[q * 7 + a], x.local());
                }
                assert!(o.local() == want.as_slice(), "n {n} output {q}");
            }
            // with add: the output plus each term in turn
            let mut more: Vec<Part<f64>> = (0..3).map(|s| part(pattern(n, s + 60))).collect();
            {
                let mut or: Vec<&mut Part<f64>> = more.iter_mut().collect();
                combine(&mut or, &c, &xr, true).unwrap();
            }
            for (q, o) in more.iter().enumerate() {
                let mut want = pattern(n, q + 60);
                for (a, x) in xs.iter().enumerate() {
                    crate::exec::ops::axpy(&mut want, c[q * 7 + a], x.local());
                }
                assert!(o.local() == want.as_slice(), "n {n} added output {q}");
            }
        }
    }
}
