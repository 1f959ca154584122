//! Local (per-rank) kernels over slices, written with ndarray views. No communication here.

use crate::binned::Binned;
use ndarray::{ArrayView1, ArrayViewMut1, Zip};

use crate::comm::ReduceOp;
use crate::error::Result;
use crate::scalar::Scalar;

/// Which norm: PyLops-MPI/NumPy `ord` values 0, 1, 2, inf, -inf, or any p.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NormKind {
    /// Number of non-zero entries.
    Zero,
    One,
    Two,
    Inf,
    NegInf,
    /// (sum |x_i|^p)^(1/p), p finite and non-zero.
    P(f64),
}

impl NormKind {
    /// From the C enum value and the `p` argument (used only for `PARLOPS_NORM_P`).
    pub fn from_code(code: i32, p: f64) -> Result<NormKind> {
        Ok(match code {
            0 => NormKind::Zero,
            1 => NormKind::One,
            2 => NormKind::Two,
            3 => NormKind::Inf,
            4 => NormKind::NegInf,
            5 => {
                if p.is_nan() {
                    crate::bail!(InvalidArgument, "argument 'p' is NaN");
                } else if p == f64::INFINITY {
                    NormKind::Inf
                } else if p == f64::NEG_INFINITY {
                    NormKind::NegInf
                } else if p == 0.0 {
                    NormKind::Zero
                } else if p == 1.0 {
                    NormKind::One
                } else if p == 2.0 {
                    NormKind::Two
                } else {
                    NormKind::P(p)
                }
            }
            _ => crate::bail!(
                InvalidArgument,
                "argument 'kind' is {code}, not a parlops_norm value (PARLOPS_NORM_0..PARLOPS_NORM_P = 0..5)"
            ),
        })
    }

    /// This rank's partial value and the reduction that combines partials.
    pub fn partial<T: Scalar>(self, x: &[T]) -> (f64, ReduceOp) {
        let v = ArrayView1::from(x);
        match self {
            NormKind::Zero => (
                v.iter().filter(|a| !a.is_zero()).count() as f64,
                ReduceOp::Sum,
            ),
            NormKind::One => (v.iter().map(|a| a.abs_f64()).sum(), ReduceOp::Sum),
            NormKind::Two => (v.iter().map(|a| a.abs2_f64()).sum(), ReduceOp::Sum),
            NormKind::Inf => (
                v.iter()
                    .map(|a| a.abs_f64())
                    .fold(f64::NEG_INFINITY, nan_max),
                ReduceOp::Max,
            ),
            NormKind::NegInf => (
                v.iter()
                    .map(|a| -a.abs_f64())
                    .fold(f64::NEG_INFINITY, nan_max),
                ReduceOp::Max,
            ),
            NormKind::P(p) => (v.iter().map(|a| a.abs_f64().powf(p)).sum(), ReduceOp::Sum),
        }
    }

    /// The norm from the reduced partials.
    pub fn finish(self, r: f64) -> f64 {
        match self {
            NormKind::Zero | NormKind::One => r,
            NormKind::Two => r.sqrt(),
            // An empty vector: max over nothing is 0, min over nothing is +inf (the identities).
            NormKind::Inf => {
                if r == f64::NEG_INFINITY {
                    0.0
                } else {
                    r
                }
            }
            NormKind::NegInf => -r,
            NormKind::P(p) => r.powf(1.0 / p),
        }
    }
}

/// Scales between which the plain sum of squares in f64 is safe (BLAS nrm2's reasoning): with the
/// largest |component| in [2^-300, 2^300], n (2^300)^2 stays finite for any n below 2^400, and the
/// squares that underflow (of entries below 2^-537) are under 2^-474 of the largest square.
const SAFE_LO: f64 = 1.0 / (1u128 << 100) as f64 / (1u128 << 100) as f64 / (1u128 << 100) as f64;
const SAFE_HI: f64 = 1.0 / SAFE_LO;

/// Is `mx` (the largest |entry|, positive and finite) in the range where squares may be summed plainly?
pub fn safe_scale(mx: f64) -> bool {
    (SAFE_LO..=SAFE_HI).contains(&mx)
}

/// This rank's part of a scaled 2-norm (as BLAS nrm2): (scale, ssq) with the local 2-norm equal to
/// scale * sqrt(ssq), scale the largest |component|. One pass when the scale is moderate (the usual
/// case: the plain sum of squares divided by scale^2), a second, scaled pass otherwise. NaN anywhere
/// gives (NaN, NaN), Inf (without NaN) gives (Inf, 1).
pub fn two_partial<T: Scalar>(x: &[T]) -> (f64, f64) {
    let (mut mx, mut sum) = (0.0f64, 0.0f64);
    for a in x {
        let (re, im) = a.to_parts();
        mx = nan_max(mx, nan_max(re.abs(), im.abs()));
        sum += re * re + im * im;
    }
    two_from(mx, sum, || {
        x.iter()
            .map(|a| {
                let (re, im) = a.to_parts();
                let (re, im) = (re / mx, im / mx);
                re * re + im * im
            })
            .sum()
    })
}

/// (scale, ssq) from the largest |component| `mx`, the plain sum of squares `sum`, and a scaled pass
/// sum |x_i / mx|^2 run only when `mx` is outside the safe range (shared with device vectors).
pub fn two_from(mx: f64, sum: f64, scaled: impl FnOnce() -> f64) -> (f64, f64) {
    if mx.is_nan() || sum.is_nan() {
        (f64::NAN, f64::NAN)
    } else if mx == f64::INFINITY {
        (mx, 1.0)
    } else if mx <= 0.0 {
        // nothing but zeros (or no entries: the max identity)
        (0.0, 0.0)
    } else if safe_scale(mx) {
        (mx, sum / mx / mx)
    } else {
        (mx, scaled())
    }
}

/// The 2-norm from every rank's (scale, ssq), combined in the order given (so that every rank that
/// combines the same list gets the same bits).
pub fn two_combine(parts: &[(f64, f64)]) -> f64 {
    if parts.iter().any(|(s, q)| s.is_nan() || q.is_nan()) {
        return f64::NAN;
    }
    let scale = parts.iter().fold(0.0f64, |a, &(s, _)| a.max(s));
    if scale == 0.0 || scale == f64::INFINITY {
        return scale;
    }
    let ssq: f64 = parts
        .iter()
        .map(|&(s, q)| {
            if s == 0.0 {
                0.0
            } else {
                let r = s / scale;
                q * r * r
            }
        })
        .sum();
    scale * ssq.sqrt()
}

/// max that lets NaN win, so a NaN entry shows in the inf-norm.
fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

thread_local! {
    static SEQUENTIAL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Are local sums on this thread taken with one accumulator in index order (a solver's
/// PARLOPS_SUM_SEQUENTIAL, set for the duration of its solve by [`SumOrder`])?
pub fn sequential_sums() -> bool {
    SEQUENTIAL.with(|c| c.get())
}

/// Sets this thread's sum order until dropped (then the previous one comes back).
pub struct SumOrder(bool, bool);

impl SumOrder {
    pub fn set(sequential: bool) -> SumOrder {
        SumOrder(
            SEQUENTIAL.with(|c| c.replace(sequential)),
            REPRODUCIBLE.with(|c| c.get()),
        )
    }

    /// The reproducible mode (PARLOPS_SUM_REPRODUCIBLE): dot products and norms as binned sums
    /// ([`crate::binned`]) merged over the ranks exactly, and every local sum that decides an
    /// iterate (a sparse row) in one chain in index order.
    pub fn reproducible() -> SumOrder {
        SumOrder(
            SEQUENTIAL.with(|c| c.replace(true)),
            REPRODUCIBLE.with(|c| c.replace(true)),
        )
    }
}

impl Drop for SumOrder {
    fn drop(&mut self) {
        SEQUENTIAL.with(|c| c.set(self.0));
        REPRODUCIBLE.with(|c| c.set(self.1));
    }
}

thread_local! {
    static REPRODUCIBLE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Is this thread in a solve of the reproducible mode ([`SumOrder::reproducible`])?
pub fn reproducible_sums() -> bool {
    REPRODUCIBLE.with(|c| c.get())
}

/// conj(x).y as binned sums (real part, imaginary part): bits that do not depend on how the
/// entries are split or ordered. Each entry's term is formed as [`add_dot`] forms it.
pub fn dot_binned<T: Scalar>(x: &[T], y: &[T]) -> (Binned, Binned) {
    let n = x.len().min(y.len());
    let (x, y) = (&x[..n], &y[..n]);
    if T::DTYPE == crate::scalar::DType::F64 {
        // SAFETY: T is f64 (its DTYPE says so), so the slices are f64 slices of their length.
        let (xf, yf) = unsafe {
            (
                std::slice::from_raw_parts(x.as_ptr() as *const f64, n),
                std::slice::from_raw_parts(y.as_ptr() as *const f64, n),
            )
        };
        return (Binned::sum_products(xf, yf), Binned::new());
    }
    if T::PARTS == 1 {
        let re = Binned::sum(n, |i| {
            let (a, b) = (x[i].to_parts().0, y[i].to_parts().0);
            a * b
        });
        return (re, Binned::new());
    }
    let re = Binned::sum(n, |i| {
        let ((ar, ai), (br, bi)) = (x[i].to_parts(), y[i].to_parts());
        ar * br + ai * bi
    });
    let im = Binned::sum(n, |i| {
        let ((ar, ai), (br, bi)) = (x[i].to_parts(), y[i].to_parts());
        ar * bi - ai * br
    });
    (re, im)
}

/// Accumulators of the blocked sums.
pub(crate) const LANES: usize = 8;

/// sum conj(x_i) y_i, as (re, im). Each product is formed in f64 (exact for single-precision
/// operands, the vector's own rounding for double) and summed in f64, so single-precision dots do
/// not saturate (a sum kept in f32 stops growing at 2^24 ones).
///
/// Blocked (default): eight accumulators over consecutive groups of eight entries, added in a fixed
/// order at the end: no single dependency chain (one chain of adds cannot keep up with memory), the
/// same bits for the same local array on every run. Sequential ([`SumOrder`]): one accumulator in
/// index order, the rounding of MFEM's and of textbook sequential dots (what parlops::mfem's drop-in
/// sets to match MFEM bit for bit).
pub fn dot<T: Scalar>(x: &[T], y: &[T]) -> (f64, f64) {
    let n = x.len().min(y.len());
    let (x, y) = (&x[..n], &y[..n]);
    if sequential_sums() {
        let mut acc = (0.0, 0.0);
        for (a, b) in x.iter().zip(y) {
            add_dot(&mut acc, *a, *b);
        }
        return acc;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above)
        return unsafe { dot_blocked_avx2(x, y) };
    }
    dot_blocked(x, y)
}

/// conj(a) b added to `acc` in f64 parts: the one accumulation step of every dot product (here,
/// in the fused passes and in the operators that return a dot with their product).
#[inline(always)]
pub fn add_dot<T: Scalar>(acc: &mut (f64, f64), a: T, b: T) {
    let ((ar, ai), (br, bi)) = (a.to_parts(), b.to_parts());
    if T::PARTS == 1 {
        acc.0 += ar * br;
    } else {
        acc.0 += ar * br + ai * bi;
        acc.1 += ar * bi - ai * br;
    }
}

/// [`dot_blocked`] compiled for AVX2 (wider registers for the same eight lanes: the same
/// operations in the same order, so the same bits; no fused multiply-add).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_blocked_avx2<T: Scalar>(x: &[T], y: &[T]) -> (f64, f64) {
    dot_blocked(x, y)
}

/// The blocked sum of [`dot`]: lane k takes the entries k, k + 8, k + 16, ...
#[inline(always)]
fn dot_blocked<T: Scalar>(x: &[T], y: &[T]) -> (f64, f64) {
    let n = x.len();
    let add = add_dot::<T>;
    let mut lanes = [(0.0f64, 0.0f64); LANES];
    let body = n / LANES * LANES;
    for (xc, yc) in x[..body]
        .chunks_exact(LANES)
        .zip(y[..body].chunks_exact(LANES))
    {
        for k in 0..LANES {
            add(&mut lanes[k], xc[k], yc[k]);
        }
    }
    for (a, b) in x[body..].iter().zip(&y[body..]) {
        add(&mut lanes[0], *a, *b);
    }
    combine_lanes(lanes)
}

/// The eight lanes of a blocked sum added in a fixed pairwise order.
pub fn combine_lanes(mut lanes: [(f64, f64); LANES]) -> (f64, f64) {
    let mut w = LANES;
    while w > 1 {
        w /= 2;
        for k in 0..w {
            lanes[k].0 += lanes[k + w].0;
            lanes[k].1 += lanes[k + w].1;
        }
    }
    lanes[0]
}

pub fn fill<T: Scalar>(y: &mut [T], a: T) {
    ArrayViewMut1::from(y).fill(a);
}

pub fn scale<T: Scalar>(y: &mut [T], a: T) {
    ArrayViewMut1::from(y).map_inplace(|v| *v = a * *v);
}

pub fn conj<T: Scalar>(y: &mut [T]) {
    ArrayViewMut1::from(y).map_inplace(|v| *v = v.conj());
}

/// y = a x + b y
pub fn axpby<T: Scalar>(y: &mut [T], a: T, x: &[T], b: T) {
    Zip::from(ArrayViewMut1::from(y))
        .and(&ArrayView1::from(x))
        .for_each(|yv, &xv| *yv = a * xv + b * *yv);
}

/// y += a x
pub fn axpy<T: Scalar>(y: &mut [T], a: T, x: &[T]) {
    Zip::from(ArrayViewMut1::from(y))
        .and(&ArrayView1::from(x))
        .for_each(|yv, &xv| *yv += a * xv);
}

/// w = a x + y
pub fn waxpy<T: Scalar>(w: &mut [T], a: T, x: &[T], y: &[T]) {
    Zip::from(ArrayViewMut1::from(w))
        .and(&ArrayView1::from(x))
        .and(&ArrayView1::from(y))
        .for_each(|wv, &xv, &yv| *wv = a * xv + yv);
}

/// w = x .* y
pub fn pointwise_mult<T: Scalar>(w: &mut [T], x: &[T], y: &[T]) {
    Zip::from(ArrayViewMut1::from(w))
        .and(&ArrayView1::from(x))
        .and(&ArrayView1::from(y))
        .for_each(|wv, &xv, &yv| *wv = xv * yv);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::c64;

    #[test]
    fn kernels() {
        let mut y = vec![1.0f64, 2.0, 3.0];
        axpy(&mut y, 2.0, &[1.0, 1.0, 1.0]);
        assert_eq!(y, vec![3.0, 4.0, 5.0]);
        axpby(&mut y, 1.0, &[1.0, 1.0, 1.0], 0.5);
        assert_eq!(y, vec![2.5, 3.0, 3.5]);
        let mut w = vec![0.0; 3];
        waxpy(&mut w, -1.0, &[1.0, 2.0, 3.0], &[1.0, 1.0, 1.0]);
        assert_eq!(w, vec![0.0, -1.0, -2.0]);
        pointwise_mult(&mut w, &[1.0, 2.0, 3.0], &[2.0, 2.0, 2.0]);
        assert_eq!(w, vec![2.0, 4.0, 6.0]);
        let x = [c64::new(0.0, 1.0), c64::new(2.0, 0.0)];
        assert_eq!(dot(&x, &x), (5.0, 0.0));
        let (re, im) = dot(&[c64::new(0.0, 1.0)], &[c64::new(1.0, 0.0)]);
        assert_eq!((re, im), (0.0, -1.0));
    }

    #[test]
    fn sum_orders() {
        // blocked and sequential sums agree where no rounding happens, and on a long
        // ill-conditioned sum each stays within its error bound of the exact value
        let x: Vec<f64> = (0..1003).map(|i| (i % 7) as f64 - 3.0).collect();
        let exact: f64 = x.iter().map(|v| v * v).sum();
        assert_eq!(dot(&x, &x).0, exact);
        {
            let _s = SumOrder::set(true);
            assert!(sequential_sums());
            assert_eq!(dot(&x, &x).0, exact);
        }
        assert!(!sequential_sums(), "the guard restores the order");
        // 1 + 1e-16 * n: the sequential sum loses every small term, the blocked one fewer
        let mut y = vec![1e-16f64; 4096];
        y[0] = 1.0;
        let ones = vec![1.0f64; 4096];
        let truth = 1.0 + 4095e-16;
        let blocked = dot(&y, &ones).0;
        let seq = {
            let _s = SumOrder::set(true);
            dot(&y, &ones).0
        };
        assert_eq!(seq, 1.0);
        assert!((blocked - truth).abs() < (seq - truth).abs());
    }

    #[test]
    fn norms() {
        let x = [3.0f64, -4.0, 0.0];
        let n = |k: NormKind| k.finish(k.partial(&x).0);
        assert_eq!(n(NormKind::Zero), 2.0);
        assert_eq!(n(NormKind::One), 7.0);
        assert_eq!(n(NormKind::Two), 5.0);
        assert_eq!(n(NormKind::Inf), 4.0);
        assert_eq!(n(NormKind::NegInf), 0.0);
        assert!((n(NormKind::P(3.0)) - 91f64.powf(1.0 / 3.0)).abs() < 1e-12);
        assert_eq!(
            NormKind::from_code(5, f64::INFINITY).unwrap(),
            NormKind::Inf
        );
        assert!(NormKind::from_code(6, 0.0).is_err());
        assert!(NormKind::from_code(5, f64::NAN).is_err());
        let empty: [f64; 0] = [];
        let m = |k: NormKind| k.finish(k.partial(&empty).0);
        assert_eq!(m(NormKind::Inf), 0.0);
        assert_eq!(m(NormKind::NegInf), f64::INFINITY);
        assert_eq!(m(NormKind::Two), 0.0);
    }

    #[test]
    fn scaled_two_norm() {
        let n2 = |x: &[f64]| two_combine(&[two_partial(x)]);
        let close = |a: f64, b: f64| (a - b).abs() <= 4.0 * f64::EPSILON * b.abs();
        assert_eq!(n2(&[3.0, -4.0, 0.0]), 5.0);
        assert!(close(n2(&[3e200, -4e200]), 5e200));
        assert!(close(n2(&[3e-200, -4e-200]), 5e-200));
        assert_eq!(n2(&[]), 0.0);
        assert!(n2(&[1.0, f64::NAN, f64::INFINITY]).is_nan());
        assert_eq!(n2(&[1.0, f64::INFINITY, -f64::INFINITY]), f64::INFINITY);
        // ranks with very different scales
        let parts = [
            two_partial(&[3e200]),
            two_partial::<f64>(&[]),
            two_partial(&[4e200, 1e-300]),
        ];
        assert!(close(two_combine(&parts), 5e200));
        let z = [c64::new(3e200, 4e200)];
        assert!(close(two_combine(&[two_partial(&z)]), 5e200));
    }
}
