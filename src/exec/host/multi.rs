//! The host backend's multi-vector passes of GMRES (PETSc's VecMDot and VecMAXPY): one pass over w
//! for all the basis vectors, a block of w kept in the first-level cache while they stream past it.
//! Sums have the bits of [`crate::exec::ops::dot`]; updates the bits of successive axpys.

use crate::error::Result;
use crate::exec::Part;
use crate::exec::ops::{LANES, add_dot as acc_dot, combine_lanes, sequential_sums};
use crate::scalar::Scalar;

/// Entries per block of the multi-vector passes: a block of w stays in the first-level cache while
/// the basis vectors stream past it, so w is read from memory once.
const BLOCK: usize = 16384;

/// GMRES' projections (PETSc's VecMDot): this rank's sums of conj(v_i).w for every v_i of `basis`, as
/// (re, im) pairs, in one pass over w. Each sum has the bits of [`crate::exec::ops::dot`] of v_i and w:
/// eight lanes (entry j into lane j mod 8, the last partial group into lane 0) combined pairwise,
/// or one chain in index order under PARLOPS_SUM_SEQUENTIAL; four vectors at a time.
pub(crate) fn mdot<T: Scalar>(basis: &[&Part<T>], w: &Part<T>) -> Result<Vec<f64>> {
    let vs: Vec<&[T]> = basis.iter().map(|v| v.local()).collect();
    let mut lanes = Vec::new();
    crate::error::try_reserve(&mut lanes, vs.len(), "the projections' sums")?;
    lanes.resize(vs.len(), [(0.0f64, 0.0f64); LANES]);
    let seq = sequential_sums();
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above)
        unsafe { mdot_avx2(&vs, w.local(), &mut lanes, seq) };
    } else {
        mdot_host(&vs, w.local(), &mut lanes, seq);
    }
    #[cfg(not(target_arch = "x86_64"))]
    mdot_host(&vs, w.local(), &mut lanes, seq);
    Ok(lanes
        .into_iter()
        .flat_map(|ls| {
            // sequential: the whole sum is in lane 0
            let (re, im) = combine_lanes(ls);
            [re, im]
        })
        .collect())
}

/// [`mdot_host`] compiled for AVX2 (the same operations in the same order: the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn mdot_avx2<T: Scalar>(
    vs: &[&[T]],
    wl: &[T],
    lanes: &mut [[(f64, f64); LANES]],
    seq: bool,
) {
    mdot_host(vs, wl, lanes, seq)
}

#[inline(always)]
fn mdot_host<T: Scalar>(vs: &[&[T]], wl: &[T], lanes: &mut [[(f64, f64); LANES]], seq: bool) {
    for a in (0..wl.len()).step_by(BLOCK) {
        mdot_block(vs, wl, lanes, seq, a, (a + BLOCK).min(wl.len()));
    }
}

/// The projections' sums over the block a..a + BLOCK of w, four vectors at a time.
#[inline(always)]
pub(super) fn mdot_block<T: Scalar>(
    vs: &[&[T]],
    wl: &[T],
    lanes: &mut [[(f64, f64); LANES]],
    seq: bool,
    a: usize,
    b: usize,
) {
    {
        let mut i = 0;
        while i < vs.len() {
            let g = (vs.len() - i).min(4);
            let (v, l) = (&vs[i..i + g], &mut lanes[i..i + g]);
            match (g, seq) {
                (4, false) => group::<T, 4, false>(v, wl, a, b, l),
                (4, true) => group::<T, 4, true>(v, wl, a, b, l),
                (3, false) => group::<T, 3, false>(v, wl, a, b, l),
                (3, true) => group::<T, 3, true>(v, wl, a, b, l),
                (2, false) => group::<T, 2, false>(v, wl, a, b, l),
                (2, true) => group::<T, 2, true>(v, wl, a, b, l),
                (_, false) => group::<T, 1, false>(v, wl, a, b, l),
                (_, true) => group::<T, 1, true>(v, wl, a, b, l),
            }
            i += g;
        }
    }
}

/// Entries a..b of G projections: eight lanes each (`SEQ`: one chain, in lane 0).
#[inline(always)]
fn group<T: Scalar, const G: usize, const SEQ: bool>(
    vs: &[&[T]],
    wl: &[T],
    a: usize,
    b: usize,
    lanes: &mut [[(f64, f64); LANES]],
) {
    let mut s: [[(f64, f64); LANES]; G] = std::array::from_fn(|q| lanes[q]);
    let v: [&[T]; G] = std::array::from_fn(|q| &vs[q][a..b]);
    let wb = &wl[a..b];
    let len = wb.len();
    if SEQ {
        for j in 0..len {
            for q in 0..G {
                acc_dot(&mut s[q][0], v[q][j], wb[j]);
            }
        }
    } else {
        // a..b starts at a multiple of BLOCK (of LANES): lane j - a mod 8 is lane j mod 8; only
        // the vector's last partial group of eight is left over
        let body = len / LANES * LANES;
        for j in (0..body).step_by(LANES) {
            let wc = &wb[j..j + LANES];
            for q in 0..G {
                let vc = &v[q][j..j + LANES];
                for k in 0..LANES {
                    acc_dot(&mut s[q][k], vc[k], wc[k]);
                }
            }
        }
        for j in body..len {
            for q in 0..G {
                acc_dot(&mut s[q][0], v[q][j], wb[j]);
            }
        }
    }
    lanes[..G].copy_from_slice(&s);
}

/// GMRES' update (PETSc's VecMAXPY and VecNorm in one pass): w -= sum_i h_i v_i, subtracting in
/// the order of `basis` for every entry (the bits of successive axpys), returning this rank's
/// new ||w||^2.
pub(crate) fn maxpy_norm<T: Scalar>(w: &mut Part<T>, h: &[T], basis: &[&Part<T>]) -> Result<f64> {
    let vs: Vec<&[T]> = basis.iter().map(|v| v.local()).collect();
    let mut neg = Vec::new();
    crate::error::try_reserve(&mut neg, h.len(), "the update's coefficients")?;
    neg.extend(h.iter().map(|hi| -*hi));
    let seq = sequential_sums();
    let wl = w.local_mut();
    #[cfg(target_arch = "x86_64")]
    let acc = if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above)
        unsafe { maxpy_avx2(wl, &neg, &vs, seq) }
    } else {
        maxpy_host(wl, &neg, &vs, seq)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let acc = maxpy_host(wl, &neg, &vs, seq);
    Ok(acc)
}

/// [`maxpy_host`] compiled for AVX2 (the same operations in the same order: the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn maxpy_avx2<T: Scalar>(wl: &mut [T], neg: &[T], vs: &[&[T]], seq: bool) -> f64 {
    maxpy_host(wl, neg, vs, seq)
}

/// x += sum_i c_i v_i (PETSc's VecMAXPY): one pass over x for all the vectors, adding in the order
/// of `basis` for every entry (the bits of successive axpys: GMRES' solution update, which moved x
/// once per basis vector).
pub(crate) fn maxpy<T: Scalar>(x: &mut Part<T>, c: &[T], basis: &[&Part<T>]) -> Result<()> {
    let vs: Vec<&[T]> = basis.iter().map(|v| v.local()).collect();
    let xl = x.local_mut();
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above)
        unsafe { maxpy_plain_avx2(xl, c, &vs) };
        return Ok(());
    }
    for a in (0..xl.len()).step_by(BLOCK) {
        add_block(xl, c, &vs, a, (a + BLOCK).min(xl.len()));
    }
    Ok(())
}

/// [`maxpy`]'s pass compiled for AVX2 (the same operations in the same order: the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn maxpy_plain_avx2<T: Scalar>(xl: &mut [T], c: &[T], vs: &[&[T]]) {
    for a in (0..xl.len()).step_by(BLOCK) {
        add_block(xl, c, vs, a, (a + BLOCK).min(xl.len()));
    }
}

/// w[a..a + BLOCK] += sum_i c_i v_i[a..a + BLOCK]: per entry (((w + c0 v0) + c1 v1) + ...), the
/// rounding of successive axpys, with w loaded and stored once per eight vectors.
#[inline(always)]
pub(super) fn add_block<T: Scalar>(wl: &mut [T], c: &[T], vs: &[&[T]], a: usize, b: usize) {
    let wb = &mut wl[a..b];
    let len = wb.len();
    let mut i = 0;
    while i + 8 <= vs.len() {
        let v: [&[T]; 8] = std::array::from_fn(|q| &vs[i + q][a..b]);
        let cq: [T; 8] = std::array::from_fn(|q| c[i + q]);
        for j in 0..len {
            // SAFETY: j < len, and every v[q] and wb have len entries (sliced a..b above)
            unsafe {
                let mut t = *wb.get_unchecked(j);
                for q in 0..8 {
                    t += cq[q] * *v[q].get_unchecked(j);
                }
                *wb.get_unchecked_mut(j) = t;
            }
        }
        i += 8;
    }
    for (ci, v) in c[i..].iter().zip(&vs[i..]) {
        for (wj, vj) in wb.iter_mut().zip(&v[a..b]) {
            *wj += *ci * *vj;
        }
    }
}

/// w += sum_i neg_i v_i block by block; ||w||^2 with the bits of [`crate::exec::ops::dot`] of w with itself.
#[inline(always)]
fn maxpy_host<T: Scalar>(wl: &mut [T], neg: &[T], vs: &[&[T]], seq: bool) -> f64 {
    let mut lanes = [(0.0f64, 0.0f64); LANES];
    let n = wl.len();
    for a in (0..n).step_by(BLOCK) {
        add_block(wl, neg, vs, a, (a + BLOCK).min(wl.len()));
        norm_block(wl, &mut lanes, seq, a);
    }
    combine_lanes(lanes).0
}

/// ||w||^2's lanes over the block a..a + BLOCK.
#[inline(always)]
fn norm_block<T: Scalar>(wl: &[T], lanes: &mut [(f64, f64); LANES], seq: bool, a: usize) {
    let b = (a + BLOCK).min(wl.len());
    let wb = &wl[a..b];
    let len = wb.len();
    if seq {
        for wj in wb.iter() {
            acc_dot(&mut lanes[0], *wj, *wj);
        }
    } else {
        // a starts at a multiple of BLOCK (of LANES); the last partial group into lane 0
        let body = len / LANES * LANES;
        for c in wb[..body].chunks_exact(LANES) {
            for k in 0..LANES {
                acc_dot(&mut lanes[k], c[k], c[k]);
            }
        }
        for wj in &wb[body..] {
            acc_dot(&mut lanes[0], *wj, *wj);
        }
    }
}

/// A Gram-Schmidt update and the next pass's projections in one pass over the basis (DGKS'
/// second pass reads the basis once for both): w -= sum_i h_i v_i, then this rank's ||w||^2 and
/// the sums of conj(v_i).w, block by block while the block of w is in cache. The bits of
/// [`maxpy_norm`] followed by [`mdot`].
pub(crate) fn maxpy_norm_mdot<T: Scalar>(
    w: &mut Part<T>,
    h: &[T],
    basis: &[&Part<T>],
) -> Result<(f64, Vec<f64>)> {
    let vs: Vec<&[T]> = basis.iter().map(|v| v.local()).collect();
    let mut neg = Vec::new();
    crate::error::try_reserve(&mut neg, h.len(), "the update's coefficients")?;
    neg.extend(h.iter().map(|hi| -*hi));
    let mut lanes = Vec::new();
    crate::error::try_reserve(&mut lanes, vs.len(), "the projections' sums")?;
    lanes.resize(vs.len(), [(0.0f64, 0.0f64); LANES]);
    let seq = sequential_sums();
    let wl = w.local_mut();
    #[cfg(target_arch = "x86_64")]
    let nrm = if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above)
        unsafe { maxpy_mdot_avx2(wl, &neg, &vs, &mut lanes, seq) }
    } else {
        maxpy_mdot_host(wl, &neg, &vs, &mut lanes, seq)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let nrm = maxpy_mdot_host(wl, &neg, &vs, &mut lanes, seq);
    let dots = lanes
        .into_iter()
        .flat_map(|ls| {
            let (re, im) = combine_lanes(ls);
            [re, im]
        })
        .collect();
    Ok((nrm, dots))
}

/// [`maxpy_mdot_host`] compiled for AVX2 (the same operations in the same order: the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn maxpy_mdot_avx2<T: Scalar>(
    wl: &mut [T],
    neg: &[T],
    vs: &[&[T]],
    lanes: &mut [[(f64, f64); LANES]],
    seq: bool,
) -> f64 {
    maxpy_mdot_host(wl, neg, vs, lanes, seq)
}

#[inline(always)]
fn maxpy_mdot_host<T: Scalar>(
    wl: &mut [T],
    neg: &[T],
    vs: &[&[T]],
    lanes: &mut [[(f64, f64); LANES]],
    seq: bool,
) -> f64 {
    let mut nl = [(0.0f64, 0.0f64); LANES];
    for a in (0..wl.len()).step_by(BLOCK) {
        add_block(wl, neg, vs, a, (a + BLOCK).min(wl.len()));
        norm_block(wl, &mut nl, seq, a);
        mdot_block(vs, wl, lanes, seq, a, (a + BLOCK).min(wl.len()));
    }
    combine_lanes(nl).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::ops::{SumOrder, dot};

    /// Test vector number `s` of n entries (a smooth pattern, different for each s).
    fn pattern(n: usize, s: usize) -> Vec<f64> {
        (0..n)
            .map(|i| ((i * 7 + s * 13) as f64 * 0.731).sin())
            .collect()
    }

    /// The fused update and projections have the bits of maxpy_norm followed by mdot (several
    /// blocks, 0 to 13 vectors).
    #[test]
    fn fused_update_and_projections_have_the_bits_of_the_two_passes() {
        let n = 2 * BLOCK + 37;
        let vs: Vec<Vec<f64>> = (0..13).map(|s| pattern(n, s)).collect();
        let h: Vec<f64> = (0..13).map(|k| 0.2 - 0.05 * k as f64).collect();
        for m in [0usize, 1, 4, 6, 13] {
            let part = |v: &[f64]| {
                let mut p = Part::<f64>::zeroed(crate::exec::Exec::Host, n).unwrap();
                p.local_mut().copy_from_slice(v);
                p
            };
            let parts: Vec<Part<f64>> = vs[..m].iter().map(|v| part(v)).collect();
            let refs: Vec<&Part<f64>> = parts.iter().collect();
            let mut w1 = part(&pattern(n, 91));
            let mut w2 = part(&pattern(n, 91));
            let n1 = maxpy_norm(&mut w1, &h[..m], &refs).unwrap();
            let d1 = mdot(&refs, &w1).unwrap();
            let (n2, d2) = maxpy_norm_mdot(&mut w2, &h[..m], &refs).unwrap();
            assert!(
                w1.local() == w2.local() && n1 == n2 && d1 == d2,
                "{m} vectors"
            );
        }
    }

    /// maxpy moves x by successive axpys' bits, for 0 to 19 vectors (none, part of a group of
    /// eight, groups and a rest) over several blocks, with and without AVX2.
    #[test]
    fn maxpy_has_the_bits_of_successive_axpys() {
        let n = 2 * BLOCK + 29;
        let make = |s: usize| pattern(n, s);
        let vs: Vec<Vec<f64>> = (0..19).map(make).collect();
        let refs: Vec<&[f64]> = vs.iter().map(|v| v.as_slice()).collect();
        let c: Vec<f64> = (0..19).map(|k| 0.3 - 0.07 * k as f64).collect();
        for m in [0, 1, 5, 8, 13, 19] {
            let mut want = make(77);
            for (ck, v) in c[..m].iter().zip(&vs) {
                crate::exec::ops::axpy(&mut want, *ck, v);
            }
            let mut plain = make(77);
            for a in (0..n).step_by(BLOCK) {
                add_block(&mut plain, &c[..m], &refs[..m], a, (a + BLOCK).min(n));
            }
            assert!(plain == want, "{m} vectors");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                let mut wide = make(77);
                // SAFETY: the CPU has AVX2 (checked just above)
                unsafe { maxpy_plain_avx2(&mut wide, &c[..m], &refs[..m]) };
                assert!(wide == want, "{m} vectors, AVX2");
            }
        }
    }

    /// The projections and the update's norm have the bits of `dot`, in both sum orders, over
    /// several blocks and a last partial group of eight, with and without AVX2.
    #[test]
    fn mdot_and_maxpy_norm_have_the_bits_of_dot() {
        let n = 2 * BLOCK + 8 * 3 + 5;
        let make = |s: usize| pattern(n, s);
        let vs: Vec<Vec<f64>> = (0..7).map(make).collect();
        let refs: Vec<&[f64]> = vs.iter().map(|v| v.as_slice()).collect();
        let w = make(99);
        let neg: Vec<f64> = (0..7).map(|k| -0.1 * (k + 1) as f64).collect();
        for seq in [false, true] {
            let _order = SumOrder::set(seq);
            for avx in [false, true] {
                #[cfg(target_arch = "x86_64")]
                let avx = avx && std::arch::is_x86_feature_detected!("avx2");
                let mut lanes = vec![[(0.0f64, 0.0f64); LANES]; refs.len()];
                let mut w2 = w.clone();
                #[cfg(target_arch = "x86_64")]
                let nrm = if avx {
                    // SAFETY: `avx` is true only where the CPU has AVX2 (checked above)
                    unsafe { mdot_avx2(&refs, &w, &mut lanes, seq) };
                    // SAFETY: as above
                    unsafe { maxpy_avx2(&mut w2, &neg, &refs, seq) }
                } else {
                    mdot_host(&refs, &w, &mut lanes, seq);
                    maxpy_host(&mut w2, &neg, &refs, seq)
                };
                #[cfg(not(target_arch = "x86_64"))]
                let nrm = {
                    mdot_host(&refs, &w, &mut lanes, seq);
                    maxpy_host(&mut w2, &neg, &refs, seq)
                };
                for (k, v) in vs.iter().enumerate() {
                    let got = combine_lanes(lanes[k]).0;
                    assert_eq!(
                        got.to_bits(),
                        dot(v, &w).0.to_bits(),
                        "seq {seq} avx {avx} v{k}"
                    );
                }
                let mut w3 = w.clone();
                for (c, v) in neg.iter().zip(&vs) {
                    for (a, b) in w3.iter_mut().zip(v) {
                        *a += *c * *b;
                    }
                }
                assert!(
                    w2 == w3,
                    "the update is successive axpys (seq {seq} avx {avx})"
                );
                assert_eq!(
                    nrm.to_bits(),
                    dot(&w2, &w2).0.to_bits(),
                    "seq {seq} avx {avx}"
                );
            }
        }
    }
}
