//! The host backend's passes of the CG family (see `crate::vector::fused` for what each does):
//! loops over this rank's slices, sums in f64 with the bits of [`crate::exec::ops::dot`], compiled
//! for AVX2 where the CPU has it. They return this rank's raw sums (the caller takes the layout's
//! share).

use crate::error::Result;
use crate::exec::ops::{LANES, add_dot as acc_dot, combine_lanes, sequential_sums};
use crate::exec::{Part, XStep};
use crate::scalar::Scalar;

/// Sums of `f(j)` over j < n (`f` updates entry j and returns its terms of two sums) with the bits
/// of [`crate::exec::ops::dot`]: entry j into lane j mod 8, the last partial group of eight into lane 0,
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
pub(crate) fn cg_update<T: Scalar>(
    x: &mut Part<T>,
    a: T,
    p: &Part<T>,
    r: &mut Part<T>,
    q: &Part<T>,
) -> Result<f64> {
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
    Ok(acc)
}

/// CG's residual update alone: r -= a q; returns the share of ||r||^2 (new r). 24 bytes per double
/// entry. With [`cg_step`] after it this is [`cg_update`] with x's update moved into the direction's
/// pass: 24 + 40 = 64 bytes per entry instead of 48 + 24 = 72 (p is read once for both).
pub(crate) fn cg_residual<T: Scalar>(a: T, r: &mut Part<T>, q: &Part<T>) -> Result<f64> {
    let n = r.local().len();
    let (rl, ql) = (&mut r.local_mut()[..n], &q.local()[..n]);
    let [(acc, _)] = lanes_over::<T, 1, _>(n, |j| {
        let v = rl[j] - a * ql[j];
        rl[j] = v;
        [term(v, v)]
    });
    Ok(acc)
}

/// CG's step and next direction: x += a p with the old p, then p = r + b p, in one pass (the bits
/// of `x.axpy(a, p)` then `p.axpby(1, r, b)`). 40 bytes per double entry instead of 24 + 24.
pub(crate) fn cg_step<T: Scalar>(
    x: &mut Part<T>,
    a: T,
    p: &mut Part<T>,
    r: &Part<T>,
    b: T,
) -> Result<()> {
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
pub(crate) fn cg_sr_update<T: Scalar>(
    x: &mut Part<T>,
    r: &mut Part<T>,
    p: &mut Part<T>,
    s: &mut Part<T>,
    w: &Part<T>,
    alpha: T,
    beta: T,
    step: XStep<T>,
) -> Result<f64> {
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
    Ok(acc)
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
/// The sums are taken as [`crate::exec::ops::dot`] takes them (entry j into lane j mod 8, the last
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

/// The step a [`XStep::Later`] pass left x lacking, `owed` = its (a, b), made alone while r and s
/// are still the ones that pass left: p = (r + a s) + b p, x += a p (the bits of that pass made
/// with [`XStep::Now`]). 48 bytes per double entry. Host vectors only (the solvers defer x on the
/// host only).
pub(crate) fn catch_up<T: Scalar>(
    x: &mut Part<T>,
    p: &mut Part<T>,
    r: &Part<T>,
    s: &Part<T>,
    owed: (T, T),
) -> Result<()> {
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
    /// Host-addressable parts of one length (checked).
    pub fn new(
        x: &'a mut Part<T>,
        r: &'a mut Part<T>,
        p: &'a mut Part<T>,
        s: &'a mut Part<T>,
        z: &'a mut Part<T>,
        step: XStep<T>,
    ) -> Result<Self> {
        if !x.host_addressable() {
            crate::bail!(
                Internal,
                "a row-streamed update of vectors not in host memory"
            );
        }
        for (v, name) in [(&*r, "r"), (&*p, "p"), (&*s, "s"), (&*z, "z")] {
            if v.len() != x.len() || v.location() != x.location() {
                crate::bail!(
                    Internal,
                    "pipelined CG's update: '{name}' ({} entries in {} memory) is not like x ({} in {})",
                    v.len(),
                    v.location().name(),
                    x.len(),
                    x.location().name()
                );
            }
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

    /// This rank's raw sums [r^H r, 0, re(w^H r), im(w^H r)] (new r and w).
    pub fn sums(&self) -> Vec<f64> {
        let (rr, wr) = (combine_lanes(self.rr), combine_lanes(self.wr));
        vec![rr.0, 0.0, wr.0, wr.1]
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
pub(crate) fn rr_wr<T: Scalar>(r: &Part<T>, w: &Part<T>) -> Result<Vec<f64>> {
    let (mut rr, mut wr) = (0.0f64, (0.0f64, 0.0f64));
    for (ri, wi) in r.local().iter().zip(w.local()) {
        rr += ri.abs2_f64();
        acc_dot(&mut wr, *wi, *ri);
    }
    Ok(vec![rr, 0.0, wr.0, wr.1])
}
