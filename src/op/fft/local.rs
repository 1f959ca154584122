//! The local kernels of the distributed FFT ([`super::Fft`]): the transform of every line along one
//! axis of a row-major block (contiguous lines as they lie, strided ones by cache-sized blocks of
//! lines), and the per-axis truncation, padding, roll and scaling.

use num_complex::Complex;
use rustfft::{Fft as Plan, FftNum};

fn prod(s: &[usize]) -> usize {
    s.iter().product()
}

/// Complex entries a strided axis' block of lines may hold (256 KiB of c128: within L2), so that
/// the lines are gathered, transformed and put back while they are in cache.
const BLOCK_ENTRIES: usize = 16384;

/// The FFT of every line along axis `a` of the row-major block `buf` of shape `sh`, in place. A
/// contiguous axis goes to rustfft's batched kernel as it lies; a strided one by blocks of lines:
/// `w` neighbouring lines gathered into `tmp` (each row of the block read as `w` consecutive
/// entries), transformed, and put back, so the data crosses memory once each way.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fft_axis<R: FftNum>(
    buf: &mut [Complex<R>],
    src: Option<&[Complex<R>]>,
    sh: &[usize],
    a: usize,
    plan: &dyn Plan<R>,
    tmp: &mut Vec<Complex<R>>,
    scratch: &mut [Complex<R>],
) {
    let n = sh[a];
    if let (true, Some(x)) = (n <= 1, src) {
        buf.copy_from_slice(x);
    }
    if n <= 1 || buf.is_empty() {
        return;
    }
    let inner = prod(&sh[a + 1..]);
    let outer = prod(&sh[..a]);
    let scratch = &mut scratch[..plan.get_inplace_scratch_len()];
    if inner == 1 {
        match src {
            None => plan.process_with_scratch(&mut buf[..outer * n], scratch),
            Some(x) => {
                // copy a cache-sized run of lines, then transform it while it is there
                let step = (BLOCK_ENTRIES / n).max(1) * n;
                let mut s0 = 0;
                while s0 < outer * n {
                    let e = (s0 + step).min(outer * n);
                    buf[s0..e].copy_from_slice(&x[s0..e]);
                    plan.process_with_scratch(&mut buf[s0..e], scratch);
                    s0 = e;
                }
            }
        }
        return;
    }
    let bw = (BLOCK_ENTRIES / n).clamp(1, inner);
    tmp.resize(n * bw, Complex::new(R::zero(), R::zero()));
    for o in 0..outer {
        let range = o * n * inner..(o + 1) * n * inner;
        let from = src.map(|x| &x[range.clone()]);
        let blk = &mut buf[range];
        let mut c0 = 0;
        while c0 < inner {
            let w = bw.min(inner - c0);
            let t = &mut tmp[..n * w];
            match from {
                Some(x) => tiles(n, w, |i, j| t[j * n + i] = x[i * inner + c0 + j]),
                None => tiles(n, w, |i, j| t[j * n + i] = blk[i * inner + c0 + j]),
            }
            plan.process_with_scratch(t, scratch);
            tiles(n, w, |i, j| blk[i * inner + c0 + j] = t[j * n + i]);
            c0 += w;
        }
    }
}

/// `f(i, j)` for i < n, j < w, by 8 x 8 tiles: a gather or scatter between rows of a block (stride
/// `inner`) and lines (stride n) touches 16 cache lines at a time, where a row-by-row loop touches w
/// lines of the same cache set when n is a power of two, and misses on every write.
#[inline(always)]
fn tiles(n: usize, w: usize, mut f: impl FnMut(usize, usize)) {
    const TB: usize = 8;
    let mut i0 = 0;
    while i0 < n {
        let ie = (i0 + TB).min(n);
        let mut j0 = 0;
        while j0 < w {
            let je = (j0 + TB).min(w);
            for i in i0..ie {
                for j in j0..je {
                    f(i, j);
                }
            }
            j0 = je;
        }
        i0 = ie;
    }
}

/// Change the extent of axis `a` to `m` (keep the first entries, or pad with zeros), in place
/// (within `buf`'s capacity, which [`Fft::new`] made for the largest shape).
pub(super) fn resize_axis<R: FftNum>(
    buf: &mut Vec<Complex<R>>,
    sh: &mut [usize],
    a: usize,
    m: usize,
    zero: Complex<R>,
) {
    let n = sh[a];
    let inner = prod(&sh[a + 1..]);
    let outer = prod(&sh[..a]);
    let (bn, bm) = (n * inner, m * inner);
    if m < n {
        for o in 1..outer {
            buf.copy_within(o * bn..o * bn + bm, o * bm);
        }
        buf.truncate(outer * bm);
    } else if m > n {
        buf.resize(outer * bm, zero);
        for o in (0..outer).rev() {
            buf.copy_within(o * bn..(o + 1) * bn, o * bm);
            buf[o * bm + bn..(o + 1) * bm].fill(zero);
        }
    }
    sh[a] = m;
}

/// Roll axis `a` by `shift` (entry i goes to (i + shift) mod n: NumPy's roll), through `b`.
pub(super) fn roll<R: FftNum>(
    buf: &mut [Complex<R>],
    sh: &[usize],
    a: usize,
    shift: i64,
    b: &mut Vec<Complex<R>>,
) {
    let n = sh[a];
    if n <= 1 || shift.rem_euclid(n as i64) == 0 {
        return;
    }
    let inner = prod(&sh[a + 1..]);
    let outer = prod(&sh[..a]);
    b.clear();
    b.extend_from_slice(buf);
    for o in 0..outer {
        for i in 0..n {
            let j = (i as i64 + shift).rem_euclid(n as i64) as usize;
            let (s, d) = ((o * n + i) * inner, (o * n + j) * inner);
            buf[d..d + inner].copy_from_slice(&b[s..s + inner]);
        }
    }
}

/// Entries with index lo..hi along axis `a` times `f` (one contiguous range per outer index).
pub(super) fn scale_bins<R: FftNum>(
    buf: &mut [Complex<R>],
    sh: &[usize],
    a: usize,
    lo: usize,
    hi: usize,
    f: R,
) {
    let n = sh[a];
    let inner = prod(&sh[a + 1..]);
    let outer = prod(&sh[..a]);
    let hi = hi.min(n);
    if lo >= hi {
        return;
    }
    for o in 0..outer {
        buf[(o * n + lo) * inner..(o * n + hi) * inner]
            .iter_mut()
            .for_each(|v| *v = v.scale(f));
    }
}
