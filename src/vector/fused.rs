//! Fused vector passes of the CG family: the updates of one iteration and the partial sums its next
//! reduction needs, in ONE pass over the vectors instead of one pass per axpy and per dot (the
//! vector work is memory-bound: fewer passes move fewer bytes). Each returns this rank's shares of
//! the sums (see [`share`]); the caller reduces them, carrying a failure into the same reduction.
//!
//! Host vectors run the fused loops. The solvers take them on host vectors only: device vectors go
//! through the separate vector kernels. `k_cg_update` and `k_cg_sr_update` (behind [`cg_update`]'s
//! and [`cg_sr_update`]'s device branches) and `k_cg_pipe_update` (`src/gpu/kernels.cu`, partial
//! sums in double) are compiled by NVRTC in `make test` but have not run on a device: the solvers
//! will take them once the device check has. Sums are taken in f64. CG's and single-reduction CG's
//! |r|^2, GMRES' projections and its update's norm, and pipelined CG's sums ([`PipeRows`]) have the
//! bits of [`super::ops::dot`] (eight lanes, or one chain in index order under
//! PARLOPS_SUM_SEQUENTIAL). The solvers' tests (`tests/mpi_solvers.rs`, every CG variant at 1-4
//! ranks) check the results.

use std::borrow::Borrow;

use super::ops::{LANES, add_dot as acc_dot, combine_lanes, sequential_sums};
use super::{DistVector, device, share};
use crate::error::Result;
use crate::scalar::Scalar;

fn check<T: Scalar>(base: &DistVector<T>, others: &[(&DistVector<T>, &str)]) -> Result<()> {
    for (v, name) in others {
        v.layout().check_compatible(base.layout(), name, "x")?;
        base.check_location(v, name, "x")?;
    }
    Ok(())
}

fn device_dots<T: Scalar>(pairs: &[(&DistVector<T>, &DistVector<T>)]) -> Result<Vec<f64>> {
    device::dots(pairs, &|i, v| share(pairs[i].0.layout(), v))
}

/// Sums of `f(j)` over j < n (`f` updates entry j and returns its terms of two sums) with the bits
/// of [`super::ops::dot`]: entry j into lane j mod 8, the last partial group of eight into lane 0,
/// lanes combined pairwise; one chain in index order under PARLOPS_SUM_SEQUENTIAL. Compiled for
/// AVX2 where the CPU has it (the same operations in the same order). An `f` that reads or writes
/// several slices should index them unchecked (their lengths checked once before): the bounds
/// checks kept the compiler from vectorising single-reduction CG's five-vector pass.
#[inline(always)]
fn lanes_over<T: Scalar, const M: usize, F: FnMut(usize) -> [(f64, f64); M]>(
    n: usize,
    f: F,
) -> [(f64, f64); M] {
    let seq = sequential_sums();
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above)
        return unsafe { lanes_avx2::<T, M, F>(n, seq, f) };
    }
    lanes_host::<T, M, F>(n, seq, f)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn lanes_avx2<T: Scalar, const M: usize, F: FnMut(usize) -> [(f64, f64); M]>(
    n: usize,
    seq: bool,
    f: F,
) -> [(f64, f64); M] {
    lanes_host::<T, M, F>(n, seq, f)
}

#[inline(always)]
#[allow(clippy::needless_range_loop)]
fn lanes_host<T: Scalar, const M: usize, F: FnMut(usize) -> [(f64, f64); M]>(
    n: usize,
    seq: bool,
    mut f: F,
) -> [(f64, f64); M] {
    let mut l = [[(0.0f64, 0.0f64); LANES]; M];
    let body = if seq { 0 } else { n / LANES * LANES };
    for c in (0..body).step_by(LANES) {
        for k in 0..LANES {
            let t = f(c + k);
            for m in 0..M {
                l[m][k].0 += t[m].0;
                if T::PARTS == 2 {
                    l[m][k].1 += t[m].1;
                }
            }
        }
    }
    for j in body..n {
        let t = f(j);
        for m in 0..M {
            l[m][0].0 += t[m].0;
            if T::PARTS == 2 {
                l[m][0].1 += t[m].1;
            }
        }
    }
    std::array::from_fn(|m| combine_lanes(l[m]))
}

/// conj(a) b as (re, im) in f64 (the terms of [`acc_dot`]).
#[inline(always)]
fn term<T: Scalar>(a: T, b: T) -> (f64, f64) {
    let mut t = (0.0, 0.0);
    acc_dot(&mut t, a, b);
    t
}

/// CG: x += a p, r -= a q; returns the share of ||r||^2 (new r). 48 bytes per double entry instead
/// of the 56 of two axpys and a dot.
pub fn cg_update<T: Scalar>(
    x: &mut DistVector<T>,
    a: T,
    p: &DistVector<T>,
    r: &mut DistVector<T>,
    q: &DistVector<T>,
) -> Result<f64> {
    check(x, &[(p, "p"), (r, "r"), (q, "q")])?;
    if x.is_device() {
        let v = device::cg_update(x, a, p, r, q)?;
        return Ok(share(x.layout(), v));
    }
    let n = x.local().len();
    let (xl, pl, rl, ql) = (
        &mut x.local_mut()[..n],
        &p.local()[..n],
        &mut r.local_mut()[..n],
        &q.local()[..n],
    );
    let [(acc, _)] = lanes_over::<T, 1, _>(n, |j| unsafe {
        // SAFETY: j < n, the length of every slice (cut to it above)
        *xl.get_unchecked_mut(j) += a * *pl.get_unchecked(j);
        let v = *rl.get_unchecked(j) - a * *ql.get_unchecked(j);
        *rl.get_unchecked_mut(j) = v;
        [term(v, v)]
    });
    Ok(share(x.layout(), acc))
}

/// CG's residual update alone: r -= a q; returns the share of ||r||^2 (new r). 24 bytes per double
/// entry. With [`cg_step`] after it this is [`cg_update`] with x's update moved into the direction's
/// pass: 24 + 40 = 64 bytes per entry instead of 48 + 24 = 72 (p is read once for both).
pub fn cg_residual<T: Scalar>(a: T, r: &mut DistVector<T>, q: &DistVector<T>) -> Result<f64> {
    check(r, &[(q, "q")])?;
    if r.is_device() {
        r.axpy(-a, q)?;
        return Ok(device_dots(&[(r, r)])?[0]);
    }
    let n = r.local().len();
    let (rl, ql) = (&mut r.local_mut()[..n], &q.local()[..n]);
    let [(acc, _)] = lanes_over::<T, 1, _>(n, |j| {
        let v = rl[j] - a * ql[j];
        rl[j] = v;
        [term(v, v)]
    });
    Ok(share(r.layout(), acc))
}

/// CG's step and next direction: x += a p with the old p, then p = r + b p, in one pass (the bits
/// of `x.axpy(a, p)` then `p.axpby(1, r, b)`). 40 bytes per double entry instead of 24 + 24.
pub fn cg_step<T: Scalar>(
    x: &mut DistVector<T>,
    a: T,
    p: &mut DistVector<T>,
    r: &DistVector<T>,
    b: T,
) -> Result<()> {
    check(x, &[(p, "p"), (r, "r")])?;
    if x.is_device() {
        x.axpy(a, p)?;
        return p.axpby(T::one(), r, b);
    }
    let n = x.local().len();
    let (xl, pl, rl) = (
        &mut x.local_mut()[..n],
        &mut p.local_mut()[..n],
        &r.local()[..n],
    );
    step_rows(xl, a, pl, rl, b);
    Ok(())
}

fn step_rows<T: Scalar>(x: &mut [T], a: T, p: &mut [T], r: &[T], b: T) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above)
        return unsafe { step_rows_avx2(x, a, p, r, b) };
    }
    step_rows_host(x, a, p, r, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn step_rows_avx2<T: Scalar>(x: &mut [T], a: T, p: &mut [T], r: &[T], b: T) {
    step_rows_host(x, a, p, r, b)
}

#[inline(always)]
fn step_rows_host<T: Scalar>(x: &mut [T], a: T, p: &mut [T], r: &[T], b: T) {
    let n = x.len().min(p.len()).min(r.len());
    let (x, p, r) = (&mut x[..n], &mut p[..n], &r[..n]);
    for j in 0..n {
        let pv = p[j];
        x[j] += a * pv;
        p[j] = T::one() * r[j] + b * pv;
    }
}

/// Single-reduction CG without a preconditioner (u = r): s = w + b s, r -= a s, and p and x as
/// `step` says ([`XStep`]: p = (r + a s) + b p, x += a p); returns the share of ||r||^2 (new r).
/// 72 bytes per double entry instead of 120; 40 on a pass that leaves p and x alone. Device
/// vectors take [`XStep::Now`] only.
#[allow(clippy::too_many_arguments)]
pub fn cg_sr_update<T: Scalar>(
    x: &mut DistVector<T>,
    r: &mut DistVector<T>,
    p: &mut DistVector<T>,
    s: &mut DistVector<T>,
    w: &DistVector<T>,
    alpha: T,
    beta: T,
    step: XStep<T>,
) -> Result<f64> {
    check(x, &[(r, "r"), (p, "p"), (s, "s"), (w, "w")])?;
    if x.is_device() {
        if step != XStep::Now {
            crate::bail!(Internal, "a deferred step of x on device vectors");
        }
        let v = device::cg_sr_update(x, r, p, s, w, alpha, beta)?;
        return Ok(share(x.layout(), v));
    }
    let n = x.local().len();
    let (xl, rl, pl, sl, wl) = (
        &mut x.local_mut()[..n],
        &mut r.local_mut()[..n],
        &mut p.local_mut()[..n],
        &mut s.local_mut()[..n],
        &w.local()[..n],
    );
    let acc = match step {
        XStep::Now => sr_rows::<T, X_NOW>(xl, rl, pl, sl, wl, (T::zero(), T::zero()), alpha, beta),
        XStep::Later => {
            sr_rows::<T, X_LATER>(xl, rl, pl, sl, wl, (T::zero(), T::zero()), alpha, beta)
        }
        XStep::Both(a0, b0) => sr_rows::<T, X_BOTH>(xl, rl, pl, sl, wl, (a0, b0), alpha, beta),
    };
    Ok(share(x.layout(), acc))
}

#[allow(clippy::too_many_arguments)]
fn sr_rows<T: Scalar, const X: u8>(
    xl: &mut [T],
    rl: &mut [T],
    pl: &mut [T],
    sl: &mut [T],
    wl: &[T],
    lag: (T, T),
    alpha: T,
    beta: T,
) -> f64 {
    // indexed without bounds checks: with them the compiler did not vectorise this loop (1.5x
    // CG's two passes over the same bytes, measured in benches/NOTES.md item 26)
    let n = xl.len();
    assert!(rl.len() == n && pl.len() == n && sl.len() == n && wl.len() == n);
    let [(acc, _)] = lanes_over::<T, 1, _>(n, |j| unsafe {
        // SAFETY: j < n, the length of every slice (checked above)
        let (ro, so) = (*rl.get_unchecked(j), *sl.get_unchecked(j));
        let sv = *wl.get_unchecked(j) + beta * so;
        let rv = ro - alpha * sv;
        *sl.get_unchecked_mut(j) = sv;
        *rl.get_unchecked_mut(j) = rv;
        direction::<T, X>(
            xl.get_unchecked_mut(j),
            pl.get_unchecked_mut(j),
            [ro, so, rv, sv],
            lag,
            alpha,
            beta,
        );
        [term(rv, rv)]
    });
    acc
}

/// Pipelined CG's update without a preconditioner (z = n + b z, s = w + b s, r -= a s, w -= a z,
/// p and x as [`XStep`] says, with the shares of [r^H r, w^H r] of the new r and w) made
/// block by block of rows, as the product n = A w hands them over
/// ([`crate::op::LinearOperator::apply_streamed`]; or all rows at once after a whole product): n
/// never goes to memory, and the new w goes into w itself (the operator hands w's rows over once
/// its product reads them no more, still in the cache). 88 bytes per double entry on top of the
/// product, against 104 + 16 for n; 56 on a pass that leaves p and x alone ([`XStep`]).
///
/// The sums are taken as [`super::ops::dot`] takes them (entry j into lane j mod 8, the last
/// partial group of eight of the whole vector into lane 0, lanes combined pairwise; one chain in
/// index order under PARLOPS_SUM_SEQUENTIAL), whatever the blocks: the same bits however the rows
/// arrive. Compiled for AVX2 where the CPU has it.
pub struct PipeRows<'a, T: Scalar> {
    x: &'a mut [T],
    r: &'a mut [T],
    p: &'a mut [T],
    s: &'a mut [T],
    z: &'a mut [T],
    /// What the pass does to x.
    step: XStep<T>,
    /// Entries below `body` go into lane j mod 8, the others into lane 0.
    body: usize,
    rr: [(f64, f64); LANES],
    wr: [(f64, f64); LANES],
}

/// What a pass of single-reduction or pipelined CG ([`cg_sr_update`], [`PipeRows`]) does to the
/// direction p and to x, which only x's step reads. Every pass makes the direction from the new
/// residual and s: p_i = (r_(i+1) + a_i s_i) + b_i p_(i-1) (r_i = r_(i+1) + a_i s_i in exact
/// arithmetic), so that a pass one iteration later, which still holds r_(i+1) and s_i, forms it
/// with the same bits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum XStep<T> {
    /// p = p_i, x += a_i p_i.
    Now,
    /// p and x are left alone: x still lacks a_i p_i, which [`XStep::owed`] describes.
    Later,
    /// After a [`XStep::Later`] pass with (a0, b0): p_(i-1) formed from the r and s this pass
    /// replaces, then p_i, and x = (x + a0 p_(i-1)) + a_i p_i: the bits of two [`XStep::Now`]
    /// passes.
    Both(T, T),
}

impl<T: Scalar> XStep<T> {
    /// With `defer`, every other pass leaves p and x alone (both are read and written on every
    /// second iteration only), given the step x lacks before this pass; otherwise [`XStep::Now`].
    pub fn pass(defer: bool, owed: Option<(T, T)>) -> Self {
        match (defer, owed) {
            (false, _) => XStep::Now,
            (true, None) => XStep::Later,
            (true, Some((a0, b0))) => XStep::Both(a0, b0),
        }
    }

    /// The step x lacks after a pass with `alpha` and `beta`: (alpha, beta) after a
    /// [`XStep::Later`] pass, made by the next pass or by [`catch_up`].
    pub fn owed(self, alpha: T, beta: T) -> Option<(T, T)> {
        match self {
            XStep::Later => Some((alpha, beta)),
            XStep::Now | XStep::Both(..) => None,
        }
    }
}

/// The step a [`XStep::Later`] pass left x lacking, `owed` = its (a, b), made alone while r and s
/// are still the ones that pass left: p = (r + a s) + b p, x += a p (the bits of that pass made
/// with [`XStep::Now`]). 48 bytes per double entry. Host vectors only (the solvers defer x on the
/// host only).
pub fn catch_up<T: Scalar>(
    x: &mut DistVector<T>,
    p: &mut DistVector<T>,
    r: &DistVector<T>,
    s: &DistVector<T>,
    owed: (T, T),
) -> Result<()> {
    check(x, &[(p, "p"), (r, "r"), (s, "s")])?;
    if x.is_device() {
        crate::bail!(Internal, "a deferred step of x on device vectors");
    }
    let (a, b) = owed;
    let (xl, pl) = (x.local_mut(), p.local_mut());
    for (((xj, pj), &rj), &sj) in xl.iter_mut().zip(pl).zip(r.local()).zip(s.local()) {
        let pv = (rj + a * sj) + b * *pj;
        *pj = pv;
        *xj += a * pv;
    }
    Ok(())
}

/// One entry's direction and x as `X` ([`XStep`]) says, given [r_i, s_(i-1), r_(i+1), s_i] (the
/// residual and s the pass read, and the ones it made) and `lag`, [`XStep::Both`]'s (a0, b0).
#[inline(always)]
fn direction<T: Scalar, const X: u8>(
    x: &mut T,
    p: &mut T,
    [ro, so, rv, sv]: [T; 4],
    lag: (T, T),
    alpha: T,
    beta: T,
) {
    match X {
        X_NOW => {
            let pv = (rv + alpha * sv) + beta * *p;
            *p = pv;
            *x += alpha * pv;
        }
        X_BOTH => {
            let (a0, b0) = lag;
            let pm = (ro + a0 * so) + b0 * *p;
            let pv = (rv + alpha * sv) + beta * pm;
            *p = pv;
            *x = (*x + a0 * pm) + alpha * pv;
        }
        _ => {}
    }
}

impl<'a, T: Scalar> PipeRows<'a, T> {
    /// Host vectors of one layout (checked).
    pub fn new(
        x: &'a mut DistVector<T>,
        r: &'a mut DistVector<T>,
        p: &'a mut DistVector<T>,
        s: &'a mut DistVector<T>,
        z: &'a mut DistVector<T>,
        step: XStep<T>,
    ) -> Result<Self> {
        check(x, &[(r, "r"), (p, "p"), (s, "s"), (z, "z")])?;
        if x.is_device() {
            crate::bail!(Internal, "a row-streamed update of device vectors");
        }
        let n = x.local().len();
        Ok(PipeRows {
            x: x.local_mut(),
            r: r.local_mut(),
            p: p.local_mut(),
            s: s.local_mut(),
            z: z.local_mut(),
            step,
            body: if sequential_sums() {
                0
            } else {
                n / LANES * LANES
            },
            rr: [(0.0, 0.0); LANES],
            wr: [(0.0, 0.0); LANES],
        })
    }

    /// Rows start..start + n.len(), given (A w) there and w's entries there (`w`, updated in
    /// place). Panics outside the vectors or when w's length is not n's.
    pub fn rows(&mut self, start: usize, n: &[T], w: &mut [T], alpha: T, beta: T) {
        let e = start + n.len();
        assert_eq!(w.len(), n.len(), "pipelined CG's update: w and A w rows");
        let (x, r, p) = (
            &mut self.x[start..e],
            &mut self.r[start..e],
            &mut self.p[start..e],
        );
        let (s, z) = (&mut self.s[start..e], &mut self.z[start..e]);
        // whole groups of eight inside the lanes' part: entry j into lane j mod 8
        let g = if start.is_multiple_of(LANES) && start < self.body {
            (e.min(self.body) - start) / LANES * LANES
        } else {
            0
        };
        let v = PipeVecs {
            x: &mut x[..g],
            r: &mut r[..g],
            p: &mut p[..g],
            s: &mut s[..g],
            z: &mut z[..g],
            w: &mut w[..g],
            n: &n[..g],
        };
        let (body, rr, wr) = (self.body, &mut self.rr, &mut self.wr);
        macro_rules! go {
            ($X:ident, $lag:expr) => {{
                pipe_groups::<T, $X>(v, $lag, alpha, beta, rr, wr);
                for i in g..n.len() {
                    let j = start + i;
                    let lane = if j < body { j % LANES } else { 0 };
                    let (a, b) = pipe_one::<T, $X>(
                        n[i], &mut x[i], &mut r[i], &mut p[i], &mut s[i], &mut z[i], &mut w[i],
                        $lag, alpha, beta,
                    );
                    rr[lane].0 += a;
                    wr[lane].0 += b.0;
                    wr[lane].1 += b.1;
                }
            }};
        }
        match self.step {
            XStep::Now => go!(X_NOW, (T::zero(), T::zero())),
            XStep::Later => go!(X_LATER, (T::zero(), T::zero())),
            XStep::Both(a0, b0) => go!(X_BOTH, (a0, b0)),
        }
    }

    /// This rank's shares of [r^H r, w^H r] (new r and w) as (re, im) pairs: [re, 0, re, im].
    pub fn shares(&self, l: &super::Layout) -> Vec<f64> {
        let (rr, wr) = (combine_lanes(self.rr), combine_lanes(self.wr));
        vec![share(l, rr.0), 0.0, share(l, wr.0), share(l, wr.1)]
    }
}

/// [`XStep`] as [`pipe_one`]'s constant.
const X_NOW: u8 = 0;
const X_LATER: u8 = 1;
const X_BOTH: u8 = 2;

/// One entry of pipelined CG's update (p and x as `X` says: `lag` is [`XStep::Both`]'s); returns its
/// terms of r^H r and w^H r.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn pipe_one<T: Scalar, const X: u8>(
    n: T,
    x: &mut T,
    r: &mut T,
    p: &mut T,
    s: &mut T,
    z: &mut T,
    w: &mut T,
    lag: (T, T),
    alpha: T,
    beta: T,
) -> (f64, (f64, f64)) {
    let (wo, ro, so) = (*w, *r, *s);
    let zv = n + beta * *z;
    let sv = wo + beta * so;
    let rv = ro - alpha * sv;
    let wv = wo - alpha * zv;
    *z = zv;
    *s = sv;
    *r = rv;
    *w = wv;
    direction::<T, X>(x, p, [ro, so, rv, sv], lag, alpha, beta);
    (rv.abs2_f64(), term(wv, rv))
}

/// The vectors of [`pipe_groups`], of one length (a multiple of eight).
struct PipeVecs<'a, T> {
    x: &'a mut [T],
    r: &'a mut [T],
    p: &'a mut [T],
    s: &'a mut [T],
    z: &'a mut [T],
    w: &'a mut [T],
    n: &'a [T],
}

/// [`pipe_one`] over whole groups of eight, entry k of a group into lane k.
fn pipe_groups<T: Scalar, const X: u8>(
    v: PipeVecs<'_, T>,
    lag: (T, T),
    alpha: T,
    beta: T,
    rr: &mut [(f64, f64); LANES],
    wr: &mut [(f64, f64); LANES],
) {
    let PipeVecs {
        x,
        r,
        p,
        s,
        z,
        w,
        n,
    } = v;
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above)
        return unsafe { pipe_groups_avx2::<T, X>(x, r, p, s, z, w, n, lag, alpha, beta, rr, wr) };
    }
    pipe_groups_host::<T, X>(x, r, p, s, z, w, n, lag, alpha, beta, rr, wr)
}

// The AVX2 copy repeats the host loop's separate slice arguments on purpose: passing the vectors
// in one struct to it (and taking them apart inside) measured 1.10x slower on pipelined CG: the
// compiler no longer knew the slices do not overlap.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
unsafe fn pipe_groups_avx2<T: Scalar, const X: u8>(
    x: &mut [T],
    r: &mut [T],
    p: &mut [T],
    s: &mut [T],
    z: &mut [T],
    w: &mut [T],
    n: &[T],
    lag: (T, T),
    alpha: T,
    beta: T,
    rr: &mut [(f64, f64); LANES],
    wr: &mut [(f64, f64); LANES],
) {
    pipe_groups_host::<T, X>(x, r, p, s, z, w, n, lag, alpha, beta, rr, wr)
}

/// The slices are separate arguments (so the compiler knows they do not overlap, and vectorises),
/// and the lanes are locals while the loop runs.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn pipe_groups_host<T: Scalar, const X: u8>(
    x: &mut [T],
    r: &mut [T],
    p: &mut [T],
    s: &mut [T],
    z: &mut [T],
    w: &mut [T],
    n: &[T],
    lag: (T, T),
    alpha: T,
    beta: T,
    rr_out: &mut [(f64, f64); LANES],
    wr_out: &mut [(f64, f64); LANES],
) {
    let mut rr = [0.0f64; LANES];
    let (mut wre, mut wim) = ([0.0f64; LANES], [0.0f64; LANES]);
    for k in 0..LANES {
        rr[k] = rr_out[k].0;
        (wre[k], wim[k]) = wr_out[k];
    }
    let g = x
        .chunks_exact_mut(LANES)
        .zip(r.chunks_exact_mut(LANES))
        .zip(p.chunks_exact_mut(LANES))
        .zip(s.chunks_exact_mut(LANES))
        .zip(z.chunks_exact_mut(LANES))
        .zip(w.chunks_exact_mut(LANES))
        .zip(n.chunks_exact(LANES));
    for ((((((xc, rc), pc), sc), zc), wc), nc) in g {
        for k in 0..LANES {
            let (a, b) = pipe_one::<T, X>(
                nc[k], &mut xc[k], &mut rc[k], &mut pc[k], &mut sc[k], &mut zc[k], &mut wc[k], lag,
                alpha, beta,
            );
            rr[k] += a;
            wre[k] += b.0;
            if T::PARTS == 2 {
                wim[k] += b.1;
            }
        }
    }
    for k in 0..LANES {
        rr_out[k].0 = rr[k];
        wr_out[k] = (wre[k], wim[k]);
    }
}

/// Shares of [r^H r, w^H r] (the dots pipelined CG starts its first iteration with), as (re, im)
/// pairs, in one pass.
pub fn rr_wr<T: Scalar>(r: &DistVector<T>, w: &DistVector<T>) -> Result<Vec<f64>> {
    check(r, &[(w, "w")])?;
    if r.is_device() {
        return device_dots(&[(r, r), (w, r)]);
    }
    let (mut rr, mut wr) = (0.0f64, (0.0f64, 0.0f64));
    for (ri, wi) in r.local().iter().zip(w.local()) {
        rr += ri.abs2_f64();
        acc_dot(&mut wr, *wi, *ri);
    }
    let l = r.layout();
    Ok(vec![share(l, rr), 0.0, share(l, wr.0), share(l, wr.1)])
}

/// Entries per block of the multi-vector passes: a block of w stays in the first-level cache while
/// the basis vectors stream past it, so w is read from memory once.
const BLOCK: usize = 16384;

/// GMRES' projections (PETSc's VecMDot): the shares of conj(v_i).w for every v_i of `basis`, as
/// (re, im) pairs, in one pass over w. Each sum has the bits of [`super::ops::dot`] of v_i and w:
/// eight lanes (entry j into lane j mod 8, the last partial group into lane 0) combined pairwise,
/// or one chain in index order under PARLOPS_SUM_SEQUENTIAL; four vectors at a time.
pub fn mdot<T: Scalar, V: Borrow<DistVector<T>>>(
    basis: &[V],
    w: &DistVector<T>,
) -> Result<Vec<f64>> {
    let named: Vec<(&DistVector<T>, &str)> = basis.iter().map(|v| (v.borrow(), "v")).collect();
    check(w, &named)?;
    if w.is_device() {
        let pairs: Vec<_> = basis.iter().map(|v| (v.borrow(), w)).collect();
        return device_dots(&pairs);
    }
    let vs: Vec<&[T]> = basis.iter().map(|v| v.borrow().local()).collect();
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
    let l = w.layout();
    Ok(lanes
        .into_iter()
        .flat_map(|ls| {
            // sequential: the whole sum is in lane 0
            let (re, im) = combine_lanes(ls);
            [share(l, re), share(l, im)]
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
        let b = (a + BLOCK).min(wl.len());
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

/// The checks of an update by a basis: every vector like `w`, one coefficient per vector.
fn check_basis<T: Scalar, V: Borrow<DistVector<T>>>(
    w: &DistVector<T>,
    c: &[T],
    basis: &[V],
) -> Result<()> {
    let named: Vec<(&DistVector<T>, &str)> = basis.iter().map(|v| (v.borrow(), "v")).collect();
    check(w, &named)?;
    if c.len() != basis.len() {
        crate::bail!(
            SizeMismatch,
            "{} coefficients for {} vectors",
            c.len(),
            basis.len()
        );
    }
    Ok(())
}

/// GMRES' update (PETSc's VecMAXPY and VecNorm in one pass): w -= sum_i h_i v_i, subtracting in
/// the order of `basis` for every entry (the bits of successive axpys), returning the share of the
/// new ||w||^2.
pub fn maxpy_norm<T: Scalar, V: Borrow<DistVector<T>>>(
    w: &mut DistVector<T>,
    h: &[T],
    basis: &[V],
) -> Result<f64> {
    check_basis(w, h, basis)?;
    if w.is_device() {
        for (hi, v) in h.iter().zip(basis) {
            w.axpy(-*hi, v.borrow())?;
        }
        return Ok(device_dots(&[(w, w)])?[0]);
    }
    let vs: Vec<&[T]> = basis.iter().map(|v| v.borrow().local()).collect();
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
    Ok(share(w.layout(), acc))
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
pub fn maxpy<T: Scalar, V: Borrow<DistVector<T>>>(
    x: &mut DistVector<T>,
    c: &[T],
    basis: &[V],
) -> Result<()> {
    check_basis(x, c, basis)?;
    if x.is_device() {
        for (ci, v) in c.iter().zip(basis) {
            x.axpy(*ci, v.borrow())?;
        }
        return Ok(());
    }
    let vs: Vec<&[T]> = basis.iter().map(|v| v.borrow().local()).collect();
    let xl = x.local_mut();
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above)
        unsafe { maxpy_plain_avx2(xl, c, &vs) };
        return Ok(());
    }
    for a in (0..xl.len()).step_by(BLOCK) {
        add_block(xl, c, &vs, a);
    }
    Ok(())
}

/// [`maxpy`]'s pass compiled for AVX2 (the same operations in the same order: the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn maxpy_plain_avx2<T: Scalar>(xl: &mut [T], c: &[T], vs: &[&[T]]) {
    for a in (0..xl.len()).step_by(BLOCK) {
        add_block(xl, c, vs, a);
    }
}

/// w[a..a + BLOCK] += sum_i c_i v_i[a..a + BLOCK]: per entry (((w + c0 v0) + c1 v1) + ...), the
/// rounding of successive axpys, with w loaded and stored once per eight vectors.
#[inline(always)]
fn add_block<T: Scalar>(wl: &mut [T], c: &[T], vs: &[&[T]], a: usize) {
    let b = (a + BLOCK).min(wl.len());
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

/// w += sum_i neg_i v_i block by block; ||w||^2 with the bits of [`super::ops::dot`] of w with itself.
#[inline(always)]
fn maxpy_host<T: Scalar>(wl: &mut [T], neg: &[T], vs: &[&[T]], seq: bool) -> f64 {
    let mut lanes = [(0.0f64, 0.0f64); LANES];
    let n = wl.len();
    for a in (0..n).step_by(BLOCK) {
        add_block(wl, neg, vs, a);
        let b = (a + BLOCK).min(n);
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
    combine_lanes(lanes).0
}

#[cfg(test)]
mod tests {
    use super::super::ops::{SumOrder, dot};
    use super::*;

    /// Test vector number `s` of n entries (a smooth pattern, different for each s).
    fn pattern(n: usize, s: usize) -> Vec<f64> {
        (0..n)
            .map(|i| ((i * 7 + s * 13) as f64 * 0.731).sin())
            .collect()
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
                super::super::ops::axpy(&mut want, *ck, v);
            }
            let mut plain = make(77);
            for a in (0..n).step_by(BLOCK) {
                add_block(&mut plain, &c[..m], &refs[..m], a);
            }
            assert!(plain == want, "{m} vectors");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                let mut wide = make(77);
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
                    unsafe { mdot_avx2(&refs, &w, &mut lanes, seq) };
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
