//! The restart's basis rotation for vectors in host memory, in place: v[q] = sum_a y[q][a] v[a] for
//! the `p` kept vectors out of `act`. Eight rows at a time: the rows' entries of every vector (one
//! cache line each) are read straight from the vectors and stay in L1 while register blocks of 4
//! outputs by 8 rows sum them; the p outputs then overwrite those rows. One pass over the basis, no
//! copy. (Copying 512-row chunks of every vector into a buffer first put all of them 4 KiB apart, in
//! one L1 set, and ran at a quarter of the speed.)

use super::dense::matrix;
use crate::DType;
use crate::error::Result;
use crate::scalar::Scalar;

/// Rows per block: one 64-byte line of f64.
const TB: usize = 8;
/// Outputs per register block.
const QB: usize = 4;

/// v[q][t] = sum_a y[q * act + a] v[a][t] for q < p, every row t, with the old values of a row read
/// before any is written (act = v.len(), p <= act, y holds p x act coefficients row-major; every
/// slice has the same length).
pub(super) fn rotate_in_place<T: Scalar>(v: &mut [&mut [T]], y: &[f64], p: usize) -> Result<()> {
    let act = v.len();
    assert!(p <= act && y.len() >= p * act, "rotate: p {p}, act {act}");
    let len = v.first().map_or(0, |s| s.len());
    assert!(
        v.iter().all(|s| s.len() == len),
        "rotate: vectors of unequal length"
    );
    if p == 0 || len == 0 {
        return Ok(());
    }
    // complex entries with real coefficients rotate as pairs of reals
    let reals = T::PARTS;
    let ptrs: Vec<*mut T> = v.iter_mut().map(|s| s.as_mut_ptr()).collect();
    #[cfg(target_arch = "x86_64")]
    if matches!(T::DTYPE, DType::F64 | DType::C128)
        && std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
    {
        let pf: Vec<*mut f64> = ptrs.iter().map(|&q| q as *mut f64).collect();
        let mut tmp = matrix(p, TB, 0.0f64, "the restart's rotation")?;
        // SAFETY: T is f64 or Complex<f64> (PARTS f64, repr(C)), so every slice holds len * reals
        // f64; the slices are distinct (borrowed mutably together); the CPU has AVX2 and FMA; tmp
        // holds p x 8
        unsafe { rotate_f64_fma(&pf, len * reals, y, p, &mut tmp) };
        return Ok(());
    }
    if reals == 2 {
        if T::DTYPE == DType::C128 {
            let pf: Vec<*mut f64> = ptrs.iter().map(|&q| q as *mut f64).collect();
            let mut tmp = matrix(p, TB, 0.0f64, "the restart's rotation")?;
            // SAFETY: T is Complex<f64>, two f64 (repr(C)); distinct slices as above
            unsafe { rotate_plain(&pf, 2 * len, y, p, &mut tmp) };
        } else {
            let pf: Vec<*mut f32> = ptrs.iter().map(|&q| q as *mut f32).collect();
            let mut tmp = matrix(p, TB, 0.0f32, "the restart's rotation")?;
            // SAFETY: T is Complex<f32>, two f32 (repr(C)); distinct slices as above
            unsafe { rotate_plain(&pf, 2 * len, y, p, &mut tmp) };
        }
        return Ok(());
    }
    let mut tmp = matrix(p, TB, T::zero(), "the restart's rotation")?;
    // SAFETY: distinct slices of len entries each, borrowed mutably together; tmp holds p x 8
    unsafe { rotate_plain(&ptrs, len, y, p, &mut tmp) };
    Ok(())
}

/// Real double precision with fused multiply-adds: 4 outputs by 8 rows (8 registers) per block.
///
/// # Safety
/// Every pointer addresses `len` f64 that no other pointer overlaps; the CPU has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn rotate_f64_fma(ptrs: &[*mut f64], len: usize, y: &[f64], p: usize, tmp: &mut [f64]) {
    // SAFETY: the caller's contract: every pointer addresses len f64, none overlapping; loads and
    // stores stay below t0 + 8 <= len (or t < len); AVX2 and FMA present
    unsafe {
        use std::arch::x86_64::*;
        let act = ptrs.len();
        let full = len / TB * TB;
        let mut t0 = 0;
        while t0 < full {
            let mut q0 = 0;
            while q0 + QB <= p {
                let mut acc = [_mm256_setzero_pd(); 2 * QB];
                for (a, &src) in ptrs.iter().enumerate() {
                    let b0 = _mm256_loadu_pd(src.add(t0));
                    let b1 = _mm256_loadu_pd(src.add(t0 + 4));
                    for qq in 0..QB {
                        let c = _mm256_set1_pd(*y.get_unchecked((q0 + qq) * act + a));
                        acc[2 * qq] = _mm256_fmadd_pd(c, b0, acc[2 * qq]);
                        acc[2 * qq + 1] = _mm256_fmadd_pd(c, b1, acc[2 * qq + 1]);
                    }
                }
                for qq in 0..QB {
                    let o = tmp.as_mut_ptr().add((q0 + qq) * TB);
                    _mm256_storeu_pd(o, acc[2 * qq]);
                    _mm256_storeu_pd(o.add(4), acc[2 * qq + 1]);
                }
                q0 += QB;
            }
            while q0 < p {
                let (mut s0, mut s1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
                for (a, &src) in ptrs.iter().enumerate() {
                    let c = _mm256_set1_pd(*y.get_unchecked(q0 * act + a));
                    s0 = _mm256_fmadd_pd(c, _mm256_loadu_pd(src.add(t0)), s0);
                    s1 = _mm256_fmadd_pd(c, _mm256_loadu_pd(src.add(t0 + 4)), s1);
                }
                let o = tmp.as_mut_ptr().add(q0 * TB);
                _mm256_storeu_pd(o, s0);
                _mm256_storeu_pd(o.add(4), s1);
                q0 += 1;
            }
            for (q, &dst) in ptrs.iter().enumerate().take(p) {
                std::ptr::copy_nonoverlapping(tmp.as_ptr().add(q * TB), dst.add(t0), TB);
            }
            t0 += TB;
        }
        for t in full..len {
            for (q, o) in tmp.iter_mut().enumerate().take(p) {
                let mut s = 0.0f64;
                for (a, &src) in ptrs.iter().enumerate() {
                    s = y[q * act + a].mul_add(*src.add(t), s);
                }
                *o = s;
            }
            for (q, &dst) in ptrs.iter().enumerate().take(p) {
                *dst.add(t) = tmp[q];
            }
        }
    }
}

/// Any real type, the same blocks in plain code (the compiler vectorises the 8 rows).
///
/// # Safety
/// Every pointer addresses `len` entries that no other pointer overlaps.
unsafe fn rotate_plain<R: Scalar>(ptrs: &[*mut R], len: usize, y: &[f64], p: usize, tmp: &mut [R]) {
    // SAFETY: the caller's contract: every pointer addresses len entries, none overlapping;
    // reads and writes stay below t0 + tn <= len
    unsafe {
        let act = ptrs.len();
        let mut t0 = 0;
        while t0 < len {
            let tn = (len - t0).min(TB);
            let mut q0 = 0;
            while q0 < p {
                let qn = (p - q0).min(QB);
                let mut acc = [[R::zero(); TB]; QB];
                for (a, &src) in ptrs.iter().enumerate() {
                    let b = std::slice::from_raw_parts(src.add(t0), tn);
                    for (qq, row) in acc.iter_mut().enumerate().take(qn) {
                        let c = R::real(y[(q0 + qq) * act + a]);
                        for (e, &bv) in row.iter_mut().zip(b) {
                            *e += c * bv;
                        }
                    }
                }
                for (qq, row) in acc.iter().enumerate().take(qn) {
                    tmp[(q0 + qq) * TB..(q0 + qq) * TB + tn].copy_from_slice(&row[..tn]);
                }
                q0 += qn;
            }
            for (q, &dst) in ptrs.iter().enumerate().take(p) {
                std::ptr::copy_nonoverlapping(tmp.as_ptr().add(q * TB), dst.add(t0), tn);
            }
            t0 += tn;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::Scalar;
    use num_complex::Complex;

    fn check<T: Scalar>(tol: f64) {
        // every block shape: full and short in outputs, full and short in rows, p = act and p < act
        for (act, len, p) in [
            (9usize, 32usize, 5usize),
            (4, 13, 4),
            (1, 3, 1),
            (12, 40, 9),
            (24, 1031, 12),
            (7, 8, 7),
        ] {
            let old: Vec<Vec<T>> = (0..act)
                .map(|a| {
                    (0..len)
                        .map(|i| {
                            let k = a * len + i;
                            T::from_parts_lossy(
                                ((k * 37 % 101) as f64) / 7.0 - 3.0,
                                (k % 5) as f64 - 2.0,
                            )
                        })
                        .collect()
                })
                .collect();
            let y: Vec<f64> = (0..p * act)
                .map(|i| ((i * 53 % 89) as f64) / 11.0 - 4.0)
                .collect();
            let mut v = old.clone();
            let mut refs: Vec<&mut [T]> = v.iter_mut().map(|s| s.as_mut_slice()).collect();
            rotate_in_place(&mut refs, &y, p).unwrap();
            for q in 0..act {
                for t in 0..len {
                    let want = if q < p {
                        (0..act).fold(T::zero(), |s, a| s + T::real(y[q * act + a]) * old[a][t])
                    } else {
                        old[q][t]
                    };
                    let (gr, gi) = v[q][t].to_parts();
                    let (wr, wi) = want.to_parts();
                    let d = (gr - wr).abs() + (gi - wi).abs();
                    assert!(
                        d <= tol * (1.0 + wr.abs() + wi.abs()),
                        "{:?} act {act} len {len} p {p} q {q} t {t}: {gr} {gi} vs {wr} {wi}",
                        T::DTYPE
                    );
                }
            }
        }
    }

    /// Every type and block shape against the plain sums; the vectors past p untouched.
    #[test]
    fn rotation_matches_the_sums() {
        check::<f64>(1e-12);
        check::<Complex<f64>>(1e-12);
        check::<f32>(1e-4);
        check::<Complex<f32>>(1e-4);
    }
}
