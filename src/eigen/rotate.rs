//! The restart's basis rotation for vectors in host memory: out = Y^T B for a chunk of rows, B the
//! `act` basis vectors' entries (act x ch, row-major) and Y the kept Ritz vectors' coordinates, in
//! register blocks of 4 outputs by 8 rows (a small matrix product: the rotation of a basis of 40
//! vectors to 20 does 800 multiply-adds per row, where one axpy per pair left it load-bound).

use crate::scalar::Scalar;

/// out[q * ch + t] = sum_a yq[q * act + a] * buf[a * ch + t] for q < p, t < c.
pub(super) fn rotate_chunk<T: Scalar>(
    buf: &[T],
    act: usize,
    ch: usize,
    c: usize,
    yq: &[T],
    p: usize,
    out: &mut [T],
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        if T::DTYPE == crate::DType::F64 {
            let f = |v: &[T]| {
                // SAFETY: DTYPE F64 is the Scalar impl of f64 alone, so T is f64: the same size,
                // alignment and values
                unsafe { std::slice::from_raw_parts(v.as_ptr() as *const f64, v.len()) }
            };
            let (b, y) = (f(buf), f(yq));
            // SAFETY: as above, T is f64; `out` is borrowed mutably for this call only
            let o =
                unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut f64, out.len()) };
            // SAFETY: the CPU has AVX2 and FMA (checked just above)
            unsafe { rotate_f64_fma(b, act, ch, c, y, p, o) };
            return;
        }
        // SAFETY: the CPU has AVX2 and FMA (checked just above)
        unsafe { rotate_avx2(buf, act, ch, c, yq, p, out) };
        return;
    }
    rotate(buf, act, ch, c, yq, p, out)
}

/// Real double precision with fused multiply-adds: 4 outputs by 8 rows in registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn rotate_f64_fma(
    buf: &[f64],
    act: usize,
    ch: usize,
    c: usize,
    yq: &[f64],
    p: usize,
    out: &mut [f64],
) {
    let full_q = p / 4 * 4;
    let full_t = c / 8 * 8;
    let mut q0 = 0;
    while q0 < full_q {
        let mut t0 = 0;
        while t0 < full_t {
            let mut acc = [[0.0f64; 8]; 4];
            for a in 0..act {
                let b: &[f64; 8] = buf[a * ch + t0..a * ch + t0 + 8]
                    .try_into()
                    .expect("8 rows");
                for (qq, row) in acc.iter_mut().enumerate() {
                    let y = yq[(q0 + qq) * act + a];
                    for t in 0..8 {
                        row[t] = y.mul_add(b[t], row[t]);
                    }
                }
            }
            for (qq, row) in acc.iter().enumerate() {
                out[(q0 + qq) * ch + t0..(q0 + qq) * ch + t0 + 8].copy_from_slice(row);
            }
            t0 += 8;
        }
        q0 += 4;
    }
    // the outputs and rows left over, one sum at a time
    for q in 0..p {
        let t_from = if q < full_q { full_t } else { 0 };
        for t in t_from..c {
            let mut s = 0.0f64;
            for a in 0..act {
                s = yq[q * act + a].mul_add(buf[a * ch + t], s);
            }
            out[q * ch + t] = s;
        }
    }
}

/// [`rotate`] compiled for AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn rotate_avx2<T: Scalar>(
    buf: &[T],
    act: usize,
    ch: usize,
    c: usize,
    yq: &[T],
    p: usize,
    out: &mut [T],
) {
    rotate(buf, act, ch, c, yq, p, out)
}

#[inline(always)]
fn rotate<T: Scalar>(
    buf: &[T],
    act: usize,
    ch: usize,
    c: usize,
    yq: &[T],
    p: usize,
    out: &mut [T],
) {
    const QB: usize = 4;
    const TB: usize = 8;
    let mut q0 = 0;
    while q0 < p {
        let qn = (p - q0).min(QB);
        let mut t0 = 0;
        while t0 < c {
            let tn = (c - t0).min(TB);
            let mut acc = [[T::zero(); TB]; QB];
            if qn == QB && tn == TB {
                for a in 0..act {
                    let b: &[T; TB] = buf[a * ch + t0..a * ch + t0 + TB]
                        .try_into()
                        .expect("a block of 8 rows");
                    for (qq, row) in acc.iter_mut().enumerate() {
                        let y = yq[(q0 + qq) * act + a];
                        for (e, bv) in row.iter_mut().zip(b) {
                            *e += y * *bv;
                        }
                    }
                }
            } else {
                for a in 0..act {
                    let b = &buf[a * ch + t0..a * ch + t0 + tn];
                    for (qq, row) in acc.iter_mut().enumerate().take(qn) {
                        let y = yq[(q0 + qq) * act + a];
                        for (e, bv) in row.iter_mut().zip(b) {
                            *e += y * *bv;
                        }
                    }
                }
            }
            for (qq, row) in acc.iter().enumerate().take(qn) {
                out[(q0 + qq) * ch + t0..(q0 + qq) * ch + t0 + tn].copy_from_slice(&row[..tn]);
            }
            t0 += TB;
        }
        q0 += QB;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every block shape (full, short in outputs, short in rows) against the plain sums.
    #[test]
    fn rotation_matches_the_sums() {
        for (act, ch, c, p) in [
            (9usize, 32usize, 32usize, 5usize),
            (4, 16, 13, 4),
            (1, 8, 3, 1),
            (12, 40, 40, 9),
        ] {
            let buf: Vec<f64> = (0..act * ch)
                .map(|i| ((i * 37 % 101) as f64) / 7.0 - 3.0)
                .collect();
            let yq: Vec<f64> = (0..p * act)
                .map(|i| ((i * 53 % 89) as f64) / 11.0 - 4.0)
                .collect();
            let mut out = vec![0.0; p * ch];
            rotate_chunk(&buf, act, ch, c, &yq, p, &mut out);
            for q in 0..p {
                for t in 0..c {
                    let want: f64 = (0..act).map(|a| yq[q * act + a] * buf[a * ch + t]).sum();
                    assert!(
                        (out[q * ch + t] - want).abs() <= 1e-12 * (1.0 + want.abs()),
                        "q {q} t {t}"
                    );
                }
            }
        }
    }
}
