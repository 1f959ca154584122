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
            // the products and their scan in one pass
            let (mx, bad) = products(xc, yc, &mut buf[..m]);
            lanes.push_scanned(&mut acc, &buf[..m], mx, bad);
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

/// A binned sum that takes its terms a block at a time: what a fused pass forms (it makes a block
/// of terms while it updates a vector, then pushes it).
pub struct Sink {
    acc: Binned,
    lanes: Lanes,
}

impl Default for Sink {
    fn default() -> Self {
        Sink::new()
    }
}

impl Sink {
    /// Terms a pass best forms at a time (any number may be pushed).
    pub const BLOCK: usize = BLOCK;

    pub fn new() -> Sink {
        let acc = Binned::new();
        Sink {
            lanes: Lanes::new(acc.top),
            acc,
        }
    }

    pub fn push(&mut self, t: &[f64]) {
        for c in t.chunks(BLOCK) {
            self.lanes.push(&mut self.acc, c);
        }
    }

    pub fn finish(mut self) -> Binned {
        self.lanes.flush(&mut self.acc);
        self.acc
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
        let (mx, bad) = scan(t);
        self.push_scanned(acc, t, mx, bad)
    }

    /// [`Lanes::push`] with the terms' [`scan`] made.
    fn push_scanned(&mut self, acc: &mut Binned, t: &[f64], mx: f64, bad: f64) {
        debug_assert!(t.len() <= BLOCK);
        let lim = limit();
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
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (checked just above)
            unsafe { extract_avx512(&mut self.s, &t[..body]) };
        } else if std::arch::is_x86_feature_detected!("avx2") {
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
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F (checked just above)
        return unsafe { scan_avx512(t) };
    }
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

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn scan_avx512(t: &[f64]) -> (f64, f64) {
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

/// t = x .* y into `t` and the [`scan`] of t, in one pass.
fn products(x: &[f64], y: &[f64], t: &mut [f64]) -> (f64, f64) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F (checked just above)
        return unsafe { products_avx512(x, y, t) };
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above)
        return unsafe { products_avx2(x, y, t) };
    }
    products_lanes(x, y, t)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn products_avx2(x: &[f64], y: &[f64], t: &mut [f64]) -> (f64, f64) {
    products_lanes(x, y, t)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn products_avx512(x: &[f64], y: &[f64], t: &mut [f64]) -> (f64, f64) {
    products_lanes(x, y, t)
}

#[inline(always)]
fn products_lanes(x: &[f64], y: &[f64], t: &mut [f64]) -> (f64, f64) {
    let mut mx = [0.0f64; LANES];
    let mut bad = [0.0f64; LANES];
    let body = t.len() / LANES * LANES;
    for ((tc, xc), yc) in t[..body]
        .chunks_exact_mut(LANES)
        .zip(x.chunks_exact(LANES))
        .zip(y.chunks_exact(LANES))
    {
        for k in 0..LANES {
            let v = xc[k] * yc[k];
            tc[k] = v;
            let a = v.abs();
            mx[k] = if a > mx[k] { a } else { mx[k] };
            bad[k] += v * 0.0;
        }
    }
    for k in body..t.len() {
        let v = x[k] * y[k];
        t[k] = v;
        let a = v.abs();
        let l = k - body;
        mx[l] = if a > mx[l] { a } else { mx[l] };
        bad[l] += v * 0.0;
    }
    (
        mx.iter().fold(0.0f64, |m, &a| if a > m { a } else { m }),
        bad.iter().sum(),
    )
}

/// [`extract`] in AVX-512 registers: the eight lanes of a bin in one register, the same operations
/// (so the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn extract_avx512(s: &mut [[f64; LANES]; K], t: &[f64]) {
    use std::arch::x86_64::*;
    // SAFETY: the CPU has AVX-512F (this fn's contract); each load and store is of eight doubles
    // inside `s[l]` or a chunk of eight of `t`.
    unsafe {
        let one = _mm512_set1_epi64(1);
        let mut sv: [__m512d; K] = std::array::from_fn(|l| _mm512_loadu_pd(s[l].as_ptr()));
        for c in t.chunks_exact(LANES) {
            let mut r = _mm512_loadu_pd(c.as_ptr());
            for v in sv.iter_mut() {
                let tp = _mm512_castsi512_pd(_mm512_or_si512(_mm512_castpd_si512(r), one));
                let s1 = _mm512_add_pd(*v, tp);
                let q = _mm512_sub_pd(s1, *v);
                *v = s1;
                r = _mm512_sub_pd(r, q);
            }
        }
        for (l, v) in sv.iter().enumerate() {
            _mm512_storeu_pd(s[l].as_mut_ptr(), *v);
        }
    }
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
mod tests;
