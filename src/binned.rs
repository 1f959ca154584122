//! Binned sums: the arithmetic of the reproducible mode (`PARLOPS_SUM_REPRODUCIBLE`). A sum of
//! doubles whose bits do not depend on the order of its terms, so not on the number of ranks, the
//! partition or the reduction tree.
//!
//! The method is Demmel and Nguyen's (ReproBLAS' "indexed" sums), written here from their papers:
//! the exponent range is cut into fixed bins of [`W`] bits, bin j with the grid g_j =
//! 2^(j W + [`G_MIN`]). A set of terms is summed in the [`K`] bins from the "top" one, the lowest j
//! with every |t| < 2^(W-1) g_j: each term is rounded to the grid of the top bin (the rest carried to
//! the next bin), so each bin receives multiples of its grid, which it sums exactly; what is left
//! below the K-th bin is dropped. Rounding a term to a grid is done by adding it to an accumulator
//! S = 1.5 2^52 g + (multiples of g) whose last bit is g, with the term's last bit set (t | 1), so
//! that no tie can occur and the rounding does not depend on S; a term below half the grid rounds to
//! zero there, so a term's parts in each bin are the same whichever top it was summed under. Hence
//! the kept value of every term depends only on the term and on the final top bin (that of the
//! largest term of the whole sum), and the exact sums of the bins only on the multiset of terms.
//! Accumulators with different tops merge by moving the lower one's bins down (dropping those that
//! fall off): exactly, in any order. The bins carry into integer counts every block so they never
//! overflow; the final value is formed from the bins' canonical state in a fixed order.
//!
//! Terms that are NaN or infinite, or of magnitude 2^1007 or more (within 2^17 of the largest
//! double: their bin's constant would not be representable), are summed apart as plain doubles
//! (+-inf for the huge ones): a sum with any of them is NaN or infinite.
//! Accuracy: the error is at most n 2^-80 max|t| or so (K = 3 bins of 40 bits), far below a
//! double's own summation error for the sums of a solver.

/// Bits per bin.
pub(crate) const W: i32 = 40;
/// Bins summed.
pub(crate) const K: usize = 3;
/// log2 of bin 0's grid: its constant 1.5 2^52 g_0 is a normal double, and every term's last bit
/// (2^-1074 at least) is at most a quarter of the finest grid.
pub(crate) const G_MIN: i32 = -1072;
/// The lowest top bin (its lowest kept bin is bin 0).
const J_LOW: i32 = K as i32 - 1;
/// The highest top bin whose constant is a double.
const J_HIGH: i32 = (1022 - 52 - G_MIN) / W;
/// Doubles per record of [`Binned::to_record`].
pub(crate) const RECORD: usize = 2 + 2 * K;
/// Terms summed between two carries of a lane's bins (each adds at most 2^(W-1) g to a bin, which
/// may hold 2^51 g after a carry leaves at most 2^49 g: 3072 terms).
const BLOCK_LANE: usize = 128;
/// Lanes of the local sum (independent accumulators, merged exactly at the end).
const LANES: usize = 8;
const BLOCK: usize = BLOCK_LANE * LANES;

/// 2^k for k in -1074..=1023, exactly.
fn pow2(k: i32) -> f64 {
    debug_assert!((-1074..=1023).contains(&k));
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (k + 1074))
    }
}

/// Bin j's grid, constant (1.5 2^52 g) and carry unit (2^50 g).
fn grid(j: i32) -> (f64, f64, f64) {
    let e = j * W + G_MIN;
    (pow2(e), 1.5 * pow2(e + 52), pow2(e + 50))
}

/// The magnitude from which a term is summed apart (as +-inf).
pub fn limit() -> f64 {
    pow2(J_HIGH * W + G_MIN + W - 1)
}

/// The top bin for terms of magnitude below `mx` (finite, under [`limit`]).
fn top_for(mx: f64) -> i32 {
    if mx < pow2(J_LOW * W + G_MIN + W - 1) {
        return J_LOW;
    }
    // mx in [2^e, 2^(e+1)): the lowest j with 2^(e+1) <= 2^(jW + G_MIN + W - 1)
    let e = ((mx.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let need = e + 2 - G_MIN - W;
    (need + W - 1).div_euclid(W).clamp(J_LOW, J_HIGH)
}

/// The state of a binned sum: the top bin, each bin's exact sum as (count of carry units, rest in
/// [-unit/2, unit/2)), and the sum of the terms summed apart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Binned {
    top: i32,
    rest: [f64; K],
    carry: [f64; K],
    apart: f64,
}

impl Default for Binned {
    fn default() -> Self {
        Binned::new()
    }
}

impl Binned {
    pub const fn new() -> Binned {
        Binned {
            top: J_LOW,
            rest: [0.0; K],
            carry: [0.0; K],
            apart: 0.0,
        }
    }

    /// Move the bins down to top bin `j` (>= the current one), dropping those that fall off.
    fn lift(&mut self, j: i32) {
        let s = (j - self.top) as usize;
        if s == 0 {
            return;
        }
        for l in (0..K).rev() {
            let (r, c) = if l >= s {
                (self.rest[l - s], self.carry[l - s])
            } else {
                (0.0, 0.0)
            };
            self.rest[l] = r;
            self.carry[l] = c;
        }
        self.top = j;
    }

    /// Bin l's rest back into [-unit/2, unit/2), the whole units into its count (all exact).
    fn carry_bin(&mut self, l: usize) {
        let (_, _, u) = grid(self.top - l as i32);
        let m = (self.rest[l] / u + 0.5).floor();
        self.rest[l] -= m * u;
        self.carry[l] += m;
    }

    /// Add another sum's state (exact; the same state in any order of merging).
    pub fn merge(&mut self, o: &Binned) {
        self.apart += o.apart;
        let mut o = *o;
        let j = self.top.max(o.top);
        self.lift(j);
        o.lift(j);
        for l in 0..K {
            self.rest[l] += o.rest[l];
            self.carry[l] += o.carry[l];
            self.carry_bin(l);
        }
    }

    /// Add one term.
    pub fn add(&mut self, t: f64) {
        let mut one = Lanes::new(self.top);
        one.push(self, &[t]);
        one.flush(self);
    }

    /// The sum, rounded from the canonical state in a fixed order (so the same bits for the same
    /// state).
    pub fn value(&self) -> f64 {
        if self.apart != 0.0 || self.apart.is_nan() {
            return self.apart;
        }
        let mut v = 0.0f64;
        for l in 0..K {
            let (_, _, u) = grid(self.top - l as i32);
            v += self.carry[l] * u;
            v += self.rest[l];
        }
        v
    }

    /// The state as doubles, for a reduction: top, rests, carries, the terms summed apart.
    pub fn to_record(&self, out: &mut [f64]) {
        out[0] = self.top as f64;
        out[1..1 + K].copy_from_slice(&self.rest);
        out[1 + K..1 + 2 * K].copy_from_slice(&self.carry);
        out[1 + 2 * K] = self.apart;
    }

    /// [`Binned::to_record`]'s inverse (a record from another rank of the same build).
    pub fn from_record(r: &[f64]) -> Binned {
        let mut rest = [0.0; K];
        let mut carry = [0.0; K];
        rest.copy_from_slice(&r[1..1 + K]);
        carry.copy_from_slice(&r[1 + K..1 + 2 * K]);
        Binned {
            top: (r[0] as i32).clamp(J_LOW, J_HIGH),
            rest,
            carry,
            apart: r[1 + 2 * K],
        }
    }

    /// Merge two arrays of records (`into` += `from`, record by record): the reduction's operation.
    pub fn merge_records(into: &mut [f64], from: &[f64]) {
        for (a, b) in into.chunks_exact_mut(RECORD).zip(from.chunks_exact(RECORD)) {
            let mut x = Binned::from_record(a);
            x.merge(&Binned::from_record(b));
            x.to_record(a);
        }
    }

    /// The sum of x_i y_i over two slices of one length (each product rounded once).
    pub fn sum_products(x: &[f64], y: &[f64]) -> Binned {
        let n = x.len().min(y.len());
        let mut acc = Binned::new();
        let mut lanes = Lanes::new(acc.top);
        let mut buf = [0.0f64; BLOCK];
        for (xc, yc) in x[..n].chunks(BLOCK).zip(y[..n].chunks(BLOCK)) {
            let m = xc.len();
            for ((b, a), c) in buf[..m].iter_mut().zip(xc).zip(yc) {
                *b = a * c;
            }
            lanes.push(&mut acc, &buf[..m]);
        }
        lanes.flush(&mut acc);
        acc
    }

    /// The sum of `n` terms `term(i)`, i in 0..n.
    pub fn sum(n: usize, term: impl Fn(usize) -> f64) -> Binned {
        let mut acc = Binned::new();
        let mut lanes = Lanes::new(acc.top);
        let mut buf = [0.0f64; BLOCK];
        let mut start = 0;
        while start < n {
            let m = BLOCK.min(n - start);
            for (i, b) in buf[..m].iter_mut().enumerate() {
                *b = term(start + i);
            }
            lanes.push(&mut acc, &buf[..m]);
            start += m;
        }
        lanes.flush(&mut acc);
        acc
    }
}

/// The local accumulators: K bins by [`LANES`] lanes, each holding 1.5 2^52 g plus its sum, for the
/// current top bin of the [`Binned`] they flush into.
struct Lanes {
    top: i32,
    s: [[f64; LANES]; K],
    sigma: [f64; K],
}

impl Lanes {
    fn new(top: i32) -> Lanes {
        let sigma = std::array::from_fn(|l| grid(top - l as i32).1);
        Lanes {
            top,
            s: std::array::from_fn(|l| [sigma[l]; LANES]),
            sigma,
        }
    }

    /// Move the lanes' sums into `acc` (which has this top bin) and start them again.
    fn flush(&mut self, acc: &mut Binned) {
        debug_assert_eq!(acc.top, self.top);
        for l in 0..K {
            for k in 0..LANES {
                acc.rest[l] += self.s[l][k] - self.sigma[l];
                acc.carry_bin(l);
            }
            self.s[l] = [self.sigma[l]; LANES];
        }
    }

    /// Sum up to [`BLOCK`] terms into the lanes (raising the top bin first where they need it),
    /// then carry.
    fn push(&mut self, acc: &mut Binned, t: &[f64]) {
        debug_assert!(t.len() <= BLOCK);
        let lim = limit();
        let (mx, bad) = scan(t);
        if bad != 0.0 || bad.is_nan() || mx >= lim {
            // the block with terms summed apart: one at a time
            let mut rest = [0.0f64; BLOCK];
            let mut m = 0;
            for &v in t {
                if v.is_finite() && v.abs() < lim {
                    rest[m] = v;
                    m += 1;
                } else {
                    acc.apart += if v.is_nan() {
                        v
                    } else {
                        v.signum() * f64::INFINITY
                    };
                }
            }
            return self.push(acc, &rest[..m]);
        }
        let j = top_for(mx);
        if j > self.top {
            self.flush(acc);
            acc.lift(j);
            *self = Lanes::new(j);
        } else if acc.top != self.top {
            acc.lift(self.top);
        }
        let body = t.len() / LANES * LANES;
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above)
            unsafe { extract_avx2(&mut self.s, &t[..body]) };
        } else {
            extract(&mut self.s, &t[..body]);
        }
        #[cfg(not(target_arch = "x86_64"))]
        extract(&mut self.s, &t[..body]);
        for (k, &v) in t[body..].iter().enumerate() {
            let mut r = v;
            for l in 0..K {
                let s0 = self.s[l][k];
                let s1 = s0 + f64::from_bits(r.to_bits() | 1);
                let q = s1 - s0;
                self.s[l][k] = s1;
                r -= q;
            }
        }
        // carry each lane's bins (exact: whole units of each bin move into its count)
        for l in 0..K {
            let (_, sigma, u) = grid(self.top - l as i32);
            for k in 0..LANES {
                let d = self.s[l][k] - sigma;
                let m = (d / u + 0.5).floor();
                if m != 0.0 {
                    self.s[l][k] -= m * u;
                    acc.carry[l] += m;
                }
            }
        }
    }
}

/// The largest |term| and a sum that is NaN when some term is NaN or infinite (0 otherwise), in
/// [`LANES`] independent lanes (one chain of additions would bound the pass).
fn scan(t: &[f64]) -> (f64, f64) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above)
        return unsafe { scan_avx2(t) };
    }
    scan_lanes(t)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn scan_avx2(t: &[f64]) -> (f64, f64) {
    scan_lanes(t)
}

#[inline(always)]
fn scan_lanes(t: &[f64]) -> (f64, f64) {
    let mut mx = [0.0f64; LANES];
    let mut bad = [0.0f64; LANES];
    let body = t.len() / LANES * LANES;
    for c in t[..body].chunks_exact(LANES) {
        for k in 0..LANES {
            let a = c[k].abs();
            mx[k] = if a > mx[k] { a } else { mx[k] };
            bad[k] += c[k] * 0.0;
        }
    }
    for (k, &v) in t[body..].iter().enumerate() {
        let a = v.abs();
        mx[k] = if a > mx[k] { a } else { mx[k] };
        bad[k] += v * 0.0;
    }
    (
        mx.iter().fold(0.0f64, |m, &a| if a > m { a } else { m }),
        bad.iter().sum(),
    )
}

/// [`extract`] compiled for AVX2 (the same operations on wider registers: the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn extract_avx2(s: &mut [[f64; LANES]; K], t: &[f64]) {
    extract(s, t)
}

/// Each term of `t` (a multiple of [`LANES`] long) into its lane's bins: rounded to each bin's grid
/// in turn (the rest carried to the next bin), the last rest dropped.
#[inline(always)]
fn extract(s: &mut [[f64; LANES]; K], t: &[f64]) {
    for c in t.chunks_exact(LANES) {
        let mut r: [f64; LANES] = std::array::from_fn(|k| c[k]);
        for sl in s.iter_mut() {
            for k in 0..LANES {
                let s1 = sl[k] + f64::from_bits(r[k].to_bits() | 1);
                let q = s1 - sl[k];
                sl[k] = s1;
                r[k] -= q;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A simple xorshift for test data.
    fn rng(seed: u64) -> impl FnMut() -> f64 {
        let mut s = seed | 1;
        move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    fn binned(t: &[f64]) -> Binned {
        Binned::sum(t.len(), |i| t[i])
    }

    #[test]
    fn order_and_split_do_not_change_the_bits() {
        let mut r = rng(7);
        // terms over many scales, both signs, with cancellation
        let t: Vec<f64> = (0..10_007)
            .map(|i| {
                let m = r() - 0.5;
                let e = ((r() * 60.0) as i32) - 30;
                m * 2f64.powi(e) * if i % 97 == 0 { 1e12 } else { 1.0 }
            })
            .collect();
        let whole = binned(&t);
        let v = whole.value();
        // reversed, shuffled, split into uneven pieces merged in several orders
        let mut rev = t.clone();
        rev.reverse();
        assert_eq!(binned(&rev).value().to_bits(), v.to_bits());
        let mut sh = t.clone();
        let mut rr = rng(3);
        for i in (1..sh.len()).rev() {
            let j = (rr() * (i + 1) as f64) as usize;
            sh.swap(i, j);
        }
        assert_eq!(binned(&sh).value().to_bits(), v.to_bits());
        for cuts in [[1usize, 2, 3000], [17, 5000, 9000], [0, 0, 10_006]] {
            let parts = [
                &t[..cuts[0]],
                &t[cuts[0]..cuts[1]],
                &t[cuts[1]..cuts[2]],
                &t[cuts[2]..],
            ];
            let mut a = Binned::new();
            for p in parts {
                a.merge(&binned(p));
            }
            assert_eq!(a.value().to_bits(), v.to_bits());
            let mut b = Binned::new();
            for p in parts.iter().rev() {
                b.merge(&binned(p));
            }
            assert_eq!(a, b, "the merged states are equal, not only their values");
            // through records, as the reduction sends them
            let mut rec = vec![0.0; RECORD];
            binned(parts[3]).to_record(&mut rec);
            let mut other = vec![0.0; RECORD];
            binned(parts[0]).to_record(&mut other);
            Binned::merge_records(&mut rec, &other);
            let mut c = Binned::from_record(&rec);
            c.merge(&binned(parts[1]));
            c.merge(&binned(parts[2]));
            assert_eq!(c.value().to_bits(), v.to_bits());
        }
        // one term at a time
        let mut one = Binned::new();
        for &x in &sh {
            one.add(x);
        }
        assert_eq!(one.value().to_bits(), v.to_bits());
        // accurate: against an exact sum of the same terms (i128 fixed point at 2^-1100 is too
        // wide; compare with a compensated sum instead)
        let (mut s, mut c) = (0.0f64, 0.0f64);
        for &x in &t {
            let y = x - c;
            let z = s + y;
            c = (z - s) - y;
            s = z;
        }
        assert!((v - s).abs() <= 1e-15 * t.iter().map(|x| x.abs()).sum::<f64>());
    }

    #[test]
    fn exact_where_doubles_are_exact_and_cancellation() {
        assert_eq!(binned(&[]).value(), 0.0);
        assert_eq!(binned(&[1.0, 2.0, 3.0]).value(), 6.0);
        assert_eq!(binned(&[-0.0]).value().to_bits(), 0.0f64.to_bits());
        // 1e16 + 1 - 1e16: exact here, 0 or 2 in plain doubles depending on order
        assert_eq!(binned(&[1e16, 1.0, -1e16]).value(), 1.0);
        assert_eq!(binned(&[1.0, 1e16, -1e16]).value(), 1.0);
        // tiny terms under a huge one are dropped the same way in any order
        let t = [1e300, 1e-300, -1e300, 3.0];
        assert_eq!(binned(&t).value(), 0.0, "3 is below the kept bins of 1e300");
        assert_eq!(binned(&[3.0, -1e300, 1e-300, 1e300]).value(), 0.0);
        // within 120 bits of the largest term: kept
        assert_eq!(binned(&[1e20, 3.0, -1e20]).value(), 3.0);
        // subnormals
        let d = f64::from_bits(1);
        assert_eq!(binned(&[d * 8.0, d * 4.0]).value(), d * 12.0);
        // many equal terms: the carries
        let ones = vec![1.0f64; 1 << 20];
        assert_eq!(binned(&ones).value(), (1u64 << 20) as f64);
        let big = vec![1e300f64; 5000];
        let v = binned(&big).value();
        assert!(
            (v - 5000.0 * 1e300).abs() <= 2.0 * f64::EPSILON * v,
            "{v:e}"
        );
    }

    #[test]
    fn nonfinite_and_huge_terms() {
        assert!(binned(&[1.0, f64::NAN, 2.0]).value().is_nan());
        assert_eq!(binned(&[1.0, f64::INFINITY]).value(), f64::INFINITY);
        assert!(binned(&[f64::INFINITY, f64::NEG_INFINITY]).value().is_nan());
        assert_eq!(binned(&[f64::MAX, 1.0]).value(), f64::INFINITY);
        assert_eq!(binned(&[-f64::MAX]).value(), f64::NEG_INFINITY);
        // just below the limit: summed in the bins
        let below = limit() / 2.0;
        assert_eq!(binned(&[below, below / 2.0]).value(), 1.5 * below);
        let mut a = binned(&[1.0]);
        a.merge(&binned(&[f64::NAN]));
        assert!(a.value().is_nan());
    }

    #[test]
    fn top_bins() {
        assert_eq!(top_for(0.0), J_LOW);
        for e in [-1000, -500, -1, 0, 1, 52, 500, 1000] {
            let x = 2f64.powi(e);
            for v in [x, x * 1.999] {
                let j = top_for(v);
                let cap = pow2(j * W + G_MIN + W - 1);
                assert!(v < cap, "{v:e} under bin {j}'s capacity");
                if j > J_LOW {
                    assert!(
                        v >= pow2((j - 1) * W + G_MIN + W - 1),
                        "{v:e}: bin {j} is the lowest"
                    );
                }
            }
        }
    }
}
