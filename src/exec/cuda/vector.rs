//! The CUDA backend's vector kernels and fused passes. Work is queued on the output vector's stream.
//! When an input lives on another stream, that stream is waited for first and the operation finishes
//! before returning (so neither stream can overwrite what the other still reads). Reductions return
//! to the host (they end in MPI or NCCL and in the solver's control flow).
//!
//! What every launch here relies on (the SAFETY comments below name the rest): each vector pointer
//! is the device address of a CUDA part (`kern`/`stream`/`after` fail on any other executor) that
//! holds `n` entries, n being the output's length: vectors passed together share a layout (the
//! contract of [`crate::exec::Backend`], checked by `crate::vector`). Scalars travel by value as
//! the kernel's `T` for `T::DTYPE` (f32, f64, or num_complex's `#[repr(C)]` {re, im} pairs, as
//! `struct T` in kernels.cu), lengths as i64, flags and modes as i32 (`int`), partial sums as
//! device addresses of doubles. Work is queued on the output's stream after the inputs' streams.

use super::{place, stream};
use crate::comm::ReduceOp;
use crate::error::Result;
use crate::exec::ops::NormKind;
use crate::exec::{Part, PipeSet, XStep};
use crate::gpu::scratch::{RedScratch, with_scratch};
use crate::gpu::{self, BLOCK, Kernels, RED_BLOCKS, Stream, grid, launch};
use crate::karg;
use crate::scalar::Scalar;

fn n_of<T: Scalar>(v: &Part<T>) -> i64 {
    v.len() as i64
}

fn kern<T: Scalar>(v: &Part<T>) -> Result<std::sync::Arc<Kernels>> {
    let g = &place(v)?.gpu;
    g.bind()?;
    g.kernels::<T>()
}

/// Wait for `x`'s stream when it is not `s`; says whether it was another stream.
pub(crate) fn after<T: Scalar>(x: &Part<T>, s: Stream) -> Result<bool> {
    let xs = stream(x)?;
    if xs != s {
        gpu::sync(xs)?;
        Ok(true)
    } else {
        Ok(false)
    }
}

/// End of an operation on `s`: with inputs from other streams, wait for it.
pub(crate) fn done(r: Result<()>, mixed: bool, s: Stream) -> Result<()> {
    r?;
    if mixed { gpu::sync(s) } else { Ok(()) }
}

/// Launch an element-wise kernel over `out`'s entries on its stream, after the inputs' streams
/// (`go(kernels, stream, grid)` does the launch); nothing for an empty part.
fn elementwise<T: Scalar>(
    out: &Part<T>,
    inputs: &[&Part<T>],
    go: impl FnOnce(&Kernels, Stream, u32) -> Result<()>,
) -> Result<()> {
    let k = kern(out)?;
    let s = stream(out)?;
    let mut mixed = false;
    for x in inputs {
        mixed |= after(x, s)?;
    }
    let n = n_of(out);
    if n == 0 {
        return Ok(());
    }
    done(go(&k, s, grid(n as usize)), mixed, s)
}

pub fn fill<T: Scalar>(y: &mut Part<T>, a: T) -> Result<()> {
    let (p, n) = (y.dptr(), n_of(y));
    elementwise(y, &[], |k, s, g| {
        // SAFETY: the arguments are k_fill's (T *y, T a, i64 n); `p` holds y's n entries, which
        // the kernel writes.
        unsafe { launch(k.k_fill, g, BLOCK, s, &mut [karg!(p), karg!(a), karg!(n)]) }
    })
}

pub fn scale<T: Scalar>(y: &mut Part<T>, a: T) -> Result<()> {
    let (p, n) = (y.dptr(), n_of(y));
    elementwise(y, &[], |k, s, g| {
        // SAFETY: the arguments are k_scale's (T *y, T a, i64 n); `p` holds y's n entries.
        unsafe { launch(k.k_scale, g, BLOCK, s, &mut [karg!(p), karg!(a), karg!(n)]) }
    })
}

pub fn conj<T: Scalar>(y: &mut Part<T>) -> Result<()> {
    if T::PARTS == 1 {
        return Ok(());
    }
    let (p, n) = (y.dptr(), n_of(y));
    elementwise(y, &[], |k, s, g| {
        // SAFETY: the arguments are k_conj's (T *y, i64 n); `p` holds y's n entries.
        unsafe { launch(k.k_conj, g, BLOCK, s, &mut [karg!(p), karg!(n)]) }
    })
}

pub fn copy<T: Scalar>(y: &mut Part<T>, x: &Part<T>) -> Result<()> {
    let s = stream(y)?;
    let mixed = after(x, s)?;
    let bytes = n_of(y) as usize * std::mem::size_of::<T>();
    // SAFETY: y and x are CUDA parts (`stream`/`after` checked their executors) of one layout (the
    // Backend contract), so both addresses hold n entries, `bytes` bytes; x's stream was waited for.
    done(unsafe { gpu::dtod(y.dptr(), x.dptr(), bytes, s) }, mixed, s)
}

/// y = a x + y
pub fn axpy<T: Scalar>(y: &mut Part<T>, a: T, x: &Part<T>) -> Result<()> {
    let (p, n, xp) = (y.dptr(), n_of(y), x.dptr());
    elementwise(y, &[x], |k, s, g| {
        // SAFETY: the arguments are k_axpy's (T *y, T a, const T *x, i64 n); `p` and `xp` hold
        // the n entries of y and x.
        unsafe {
            launch(
                k.k_axpy,
                g,
                BLOCK,
                s,
                &mut [karg!(p), karg!(a), karg!(xp), karg!(n)],
            )
        }
    })
}

/// y = a x + b y
pub fn axpby<T: Scalar>(y: &mut Part<T>, a: T, x: &Part<T>, b: T) -> Result<()> {
    let (p, n, xp) = (y.dptr(), n_of(y), x.dptr());
    elementwise(y, &[x], |k, s, g| {
        let args = &mut [karg!(p), karg!(a), karg!(xp), karg!(b), karg!(n)];
        // SAFETY: `args` are k_axpby's (T *y, T a, const T *x, T b, i64 n); `p` and `xp` hold the
        // n entries of y and x.
        unsafe { launch(k.k_axpby, g, BLOCK, s, args) }
    })
}

/// w = a x + y
pub fn waxpy<T: Scalar>(w: &mut Part<T>, a: T, x: &Part<T>, y: &Part<T>) -> Result<()> {
    let (p, n, xp, yp) = (w.dptr(), n_of(w), x.dptr(), y.dptr());
    elementwise(w, &[x, y], |k, s, g| {
        let args = &mut [karg!(p), karg!(a), karg!(xp), karg!(yp), karg!(n)];
        // SAFETY: `args` are k_waxpy's (T *w, T a, const T *x, const T *y, i64 n); `p`, `xp`
        // and `yp` hold the n entries of w, x and y.
        unsafe { launch(k.k_waxpy, g, BLOCK, s, args) }
    })
}

/// w = (conj x if `cx`) .* y
pub fn pmult<T: Scalar>(w: &mut Part<T>, x: &Part<T>, y: &Part<T>, cx: bool) -> Result<()> {
    let (p, n, xp, yp, c) = (w.dptr(), n_of(w), x.dptr(), y.dptr(), cx as i32);
    elementwise(w, &[x, y], |k, s, g| {
        let args = &mut [karg!(p), karg!(xp), karg!(yp), karg!(c), karg!(n)];
        // SAFETY: `args` are k_pmult's (T *w, const T *x, const T *y, int cx, i64 n), `c` an i32;
        // `p`, `xp` and `yp` hold the n entries of w, x and y.
        unsafe { launch(k.k_pmult, g, BLOCK, s, args) }
    })
}

/// Queue the per-block reduction of the `nb * ncomp` partials in `sc.part` (written by a kernel
/// queued earlier on `s`) into `sc.out[at..at + ncomp]`.
fn finish(
    k: &Kernels,
    sc: &RedScratch,
    nb: u32,
    ncomp: i32,
    is_max: bool,
    at: usize,
    s: Stream,
) -> Result<()> {
    // what k_finish reads and writes lies in the scratch (at most 8 components: block_reduce's)
    assert!(
        (1..=8).contains(&ncomp)
            && nb as usize * ncomp as usize <= sc.part.len
            && at + ncomp as usize <= sc.out.len,
        "reduction scratch too small"
    );
    let (pp, op) = (sc.part.ptr, sc.out.ptr + (at * 8) as u64);
    let (nb, m) = (nb as i32, is_max as i32);
    // SAFETY: the arguments are k_finish's (const double *part, int nb, int ncomp, int is_max,
    // double *out), the ints as i32; it reads part[0..nb * ncomp] and writes out[at..at + ncomp],
    // inside the scratch's arrays (asserted above); one block of BLOCK threads, as block_reduce
    // needs.
    unsafe {
        launch(
            k.k_finish,
            1,
            BLOCK,
            s,
            &mut [karg!(pp), karg!(nb), karg!(ncomp), karg!(m), karg!(op)],
        )
    }
}

/// The first `m` reduced values of `sc.out` (queued on `s`), on the host, after the stream's work.
fn read_out(sc: &RedScratch, m: usize, s: Stream) -> Result<Vec<f64>> {
    assert!(m <= sc.out.len, "reduction scratch too small");
    // SAFETY: `sc.out` and `sc.host` hold at least m doubles (asserted; with_scratch(m) made them
    // so); the pinned buffer is read only after the sync below.
    unsafe { gpu::dtoh(sc.host.ptr(), sc.out.ptr, m * 8, s)? };
    gpu::sync(s)?;
    Ok(sc.host.as_slice::<f64>()[..m].to_vec())
}

fn red_blocks(n: i64) -> u32 {
    (grid(n.max(1) as usize)).min(RED_BLOCKS)
}

/// Local conj(x).y for several pairs, as (re, im) pairs.
pub fn dots<T: Scalar>(pairs: &[(&Part<T>, &Part<T>)]) -> Result<Vec<f64>> {
    let Some((x0, _)) = pairs.first() else {
        return Ok(Vec::new());
    };
    let k = kern(*x0)?;
    let s = stream(*x0)?;
    with_scratch(2 * pairs.len(), s, |sc| {
        for (i, (x, y)) in pairs.iter().enumerate() {
            after(x, s)?;
            after(y, s)?;
            let n = n_of(x);
            let nb = red_blocks(n);
            let (xp, yp, pp) = (x.dptr(), y.dptr(), sc.part.ptr);
            // SAFETY: the arguments are k_dot's (const T *x, const T *y, i64 n, double *part);
            // `xp` and `yp` hold the n entries of x and y (CUDA parts: `after` checked them), and
            // `part` takes 2 doubles per block, nb <= RED_BLOCKS blocks of BLOCK threads: within
            // the scratch's 8 * RED_BLOCKS.
            unsafe {
                launch(
                    k.k_dot,
                    nb,
                    BLOCK,
                    s,
                    &mut [karg!(xp), karg!(yp), karg!(n), karg!(pp)],
                )?;
            }
            finish(&k, sc, nb, 2, false, 2 * i, s)?;
        }
        read_out(sc, 2 * pairs.len(), s)
    })
}

/// Local conj(v_j).w for every v_j of `basis`, as (re, im) pairs: one pass over w for each four
/// vectors (k_mdot4, then one k_finish for the four), each pair with the bits of [`dots`]'.
pub fn mdot<T: Scalar>(basis: &[&Part<T>], w: &Part<T>) -> Result<Vec<f64>> {
    if basis.is_empty() {
        return Ok(Vec::new());
    }
    let k = kern(w)?;
    let s = stream(w)?;
    with_scratch(2 * basis.len(), s, |sc| {
        after(w, s)?;
        let n = n_of(w);
        let nb = red_blocks(n);
        for (c, vs) in basis.chunks(4).enumerate() {
            for v in vs {
                after(v, s)?;
            }
            let p = |j: usize| vs.get(j).unwrap_or(&vs[0]).dptr();
            let (wp, p0, p1, p2, p3, pp) = (w.dptr(), p(0), p(1), p(2), p(3), sc.part.ptr);
            let kk = vs.len() as i32;
            // SAFETY: the arguments are k_mdot4's (const T *w, const T *v0..v3, int k, i64 n,
            // double *part), `kk` an i32 of 1..=4; `wp` and the first kk of p0..p3 hold n entries
            // (CUDA parts of w's layout: `after` checked their executors; the others repeat v_0 and
            // are not read); `part` takes 2 kk <= 8 doubles per block, nb <= RED_BLOCKS blocks of
            // BLOCK threads: within the scratch's 8 * RED_BLOCKS.
            unsafe {
                launch(
                    k.k_mdot4,
                    nb,
                    BLOCK,
                    s,
                    &mut [
                        karg!(wp),
                        karg!(p0),
                        karg!(p1),
                        karg!(p2),
                        karg!(p3),
                        karg!(kk),
                        karg!(n),
                        karg!(pp),
                    ],
                )?;
            }
            finish(&k, sc, nb, 2 * kk, false, 8 * c, s)?;
        }
        read_out(sc, 2 * basis.len(), s)
    })
}

/// w = w + c_0 v_0 + c_1 v_1 + ...: one pass over w for each four vectors (k_maxpy4), the terms added
/// in order, so the bits of successive [`axpy`]s.
pub fn maxpy<T: Scalar>(w: &mut Part<T>, c: &[T], basis: &[&Part<T>]) -> Result<()> {
    let (wp, n) = (w.dptr(), n_of(w));
    for (cs, vs) in c.chunks(4).zip(basis.chunks(4)) {
        let kk = cs.len().min(vs.len());
        if kk == 0 {
            continue;
        }
        let p = |j: usize| vs[..kk].get(j).unwrap_or(&vs[0]).dptr();
        let a = |j: usize| if j < kk { cs[j] } else { T::zero() };
        let (p0, p1, p2, p3) = (p(0), p(1), p(2), p(3));
        let (a0, a1, a2, a3) = (a(0), a(1), a(2), a(3));
        let kk = kk as i32;
        elementwise(w, vs, |k, s, g| {
            let args = &mut [
                karg!(wp),
                karg!(a0),
                karg!(p0),
                karg!(a1),
                karg!(p1),
                karg!(a2),
                karg!(p2),
                karg!(a3),
                karg!(p3),
                karg!(kk),
                karg!(n),
            ];
            // SAFETY: `args` are k_maxpy4's (T *w, T a0, const T *v0, ..., T a3, const T *v3, int
            // k, i64 n), `kk` an i32 of 1..=4; `wp` and the first kk of p0..p3 hold the n entries
            // of w and of basis vectors of its layout (the others repeat v_0 and are not read).
            unsafe { launch(k.k_maxpy4, g, BLOCK, s, args) }
        })?;
    }
    Ok(())
}

/// This rank's partial of a norm (see [`NormKind::partial`]).
pub fn norm_partial<T: Scalar>(x: &Part<T>, kind: NormKind) -> Result<(f64, ReduceOp)> {
    let (code, p, op) = match kind {
        NormKind::Zero => (0, 0.0, ReduceOp::Sum),
        NormKind::One => (1, 0.0, ReduceOp::Sum),
        NormKind::Two => (2, 0.0, ReduceOp::Sum),
        NormKind::Inf => (3, 0.0, ReduceOp::Max),
        NormKind::NegInf => (4, 0.0, ReduceOp::Max),
        NormKind::P(p) => (5, p, ReduceOp::Sum),
    };
    let k = kern(x)?;
    let s = stream(x)?;
    with_scratch(1, s, |sc| {
        let n = n_of(x);
        let nb = red_blocks(n);
        let (xp, pp) = (x.dptr(), sc.part.ptr);
        let code: i32 = code;
        // SAFETY: the arguments are k_norm's (const T *x, i64 n, int kind, double p, double
        // *part), `p` an f64; `xp` holds x's n entries, and `part` takes one double per block,
        // nb <= RED_BLOCKS blocks of BLOCK threads.
        unsafe {
            launch(
                k.k_norm,
                nb,
                BLOCK,
                s,
                &mut [karg!(xp), karg!(n), karg!(code), karg!(p), karg!(pp)],
            )?;
        }
        finish(&k, sc, nb, 1, op == ReduceOp::Max, 0, s)?;
        Ok((read_out(sc, 1, s)?[0], op))
    })
}

/// This rank's part of the scaled 2-norm (see [`crate::exec::ops::two_partial`]): the largest |entry|
/// and the plain sum of squares by the norm kernel (two launches); when the largest entry is outside
/// the safe range, the scaled sum is taken on a host copy (rare: entries beyond about 1e90 or below
/// 1e-90), so host and device vectors give the same norms.
pub fn two_partial<T: Scalar>(x: &Part<T>) -> Result<(f64, f64)> {
    let (mx, _) = norm_partial(x, NormKind::Inf)?;
    if mx.is_nan() || mx == f64::INFINITY || mx <= 0.0 {
        // NaN, Inf, all zeros, or no entries (the max identity -inf)
        return Ok(crate::exec::ops::two_from(mx, 0.0, || 0.0));
    }
    if !crate::exec::ops::safe_scale(mx) {
        let mut h = crate::error::try_vec(x.len(), T::zero(), "a host copy of a vector's entries")?;
        // SAFETY: `h` holds x's entries.
        unsafe { download(&mut h, x.dptr(), stream(x)?)? };
        return Ok(crate::exec::ops::two_partial(&h));
    }
    let (sum, _) = norm_partial(x, NormKind::Two)?;
    Ok(crate::exec::ops::two_from(mx, sum, || f64::NAN))
}

/// Copy `n` entries between host and device on `s` and wait.
///
/// # Safety
/// `src` must be a device address holding `dst.len()` entries.
pub unsafe fn download<T: Scalar>(dst: &mut [T], src: u64, s: Stream) -> Result<()> {
    // SAFETY: `src` holds dst.len() entries, size_of_val(dst) bytes (our caller's contract), and
    // `dst` is borrowed mutably until the sync below has run the copy.
    unsafe { gpu::dtoh(dst.as_mut_ptr().cast(), src, std::mem::size_of_val(dst), s)? };
    gpu::sync(s)
}

/// # Safety
/// `dst` must be a device address holding `src.len()` entries.
pub unsafe fn upload<T: Scalar>(dst: u64, src: &[T], s: Stream) -> Result<()> {
    // SAFETY: `dst` holds src.len() entries, size_of_val(src) bytes (our caller's contract), and
    // `src` stays borrowed until the sync below has run the copy.
    unsafe { gpu::htod(dst, src.as_ptr().cast(), std::mem::size_of_val(src), s)? };
    gpu::sync(s)
}

/// A fused pass of the CG family (see `crate::vector::fused`): `go(kernels, stream, blocks, partials)`
/// launches it over `out`'s entries after the inputs' streams, with `ncomp` (at most 4) per-block
/// partial sums, which are then reduced; returns this rank's `ncomp` sums.
fn fused_reduce<T: Scalar>(
    out: &Part<T>,
    inputs: &[&Part<T>],
    ncomp: i32,
    go: impl FnOnce(&Kernels, Stream, u32, u64) -> Result<()>,
) -> Result<Vec<f64>> {
    let k = kern(out)?;
    let s = stream(out)?;
    for x in inputs {
        after(x, s)?;
    }
    let m = ncomp as usize;
    with_scratch(m, s, |sc| {
        let nb = red_blocks(n_of(out));
        go(&k, s, nb, sc.part.ptr)?;
        finish(&k, sc, nb, ncomp, false, 0, s)?;
        read_out(sc, m, s)
    })
}

/// x += a p, r -= a q in one pass; this rank's |r|^2.
pub fn cg_update<T: Scalar>(
    x: &mut Part<T>,
    a: T,
    p: &Part<T>,
    r: &mut Part<T>,
    q: &Part<T>,
) -> Result<f64> {
    let (xp, pp, rp, qp, n) = (x.dptr(), p.dptr(), r.dptr(), q.dptr(), n_of(x));
    let v = fused_reduce(x, &[p, r, q], 1, |k, s, nb, part| {
        let args = &mut [
            karg!(xp),
            karg!(a),
            karg!(pp),
            karg!(rp),
            karg!(qp),
            karg!(n),
            karg!(part),
        ];
        // SAFETY: `args` are k_cg_update's (T *x, T a, const T *p, T *r, const T *q, i64 n,
        // double *part); x, p, r and q hold n entries, and `part` one double per block (nb <=
        // RED_BLOCKS blocks of BLOCK threads, within the scratch's 8 * RED_BLOCKS).
        unsafe { launch(k.k_cg_update, nb, BLOCK, s, args) }
    })?;
    Ok(v[0])
}

/// r -= a q in one pass; this rank's |r|^2.
pub fn cg_residual<T: Scalar>(a: T, r: &mut Part<T>, q: &Part<T>) -> Result<f64> {
    let (rp, qp, n) = (r.dptr(), q.dptr(), n_of(r));
    let v = fused_reduce(r, &[q], 1, |k, s, nb, part| {
        let args = &mut [karg!(a), karg!(rp), karg!(qp), karg!(n), karg!(part)];
        // SAFETY: `args` are k_cg_residual's (T a, T *r, const T *q, i64 n, double *part); r and
        // q hold n entries, and `part` one double per block (nb <= RED_BLOCKS blocks of BLOCK
        // threads).
        unsafe { launch(k.k_cg_residual, nb, BLOCK, s, args) }
    })?;
    Ok(v[0])
}

/// x += a p, then p = r + b p, in one pass.
pub fn cg_step<T: Scalar>(x: &mut Part<T>, a: T, p: &mut Part<T>, r: &Part<T>, b: T) -> Result<()> {
    let (xp, pp, rp, n) = (x.dptr(), p.dptr(), r.dptr(), n_of(x));
    elementwise(x, &[p, r], |k, s, g| {
        let args = &mut [
            karg!(xp),
            karg!(a),
            karg!(pp),
            karg!(rp),
            karg!(b),
            karg!(n),
        ];
        // SAFETY: `args` are k_cg_step's (T *x, T a, T *p, const T *r, T b, i64 n); x, p and r
        // hold n entries.
        unsafe { launch(k.k_cg_step, g, BLOCK, s, args) }
    })
}

/// p = (r + a s) + b p, x += a p in one pass (the step a deferred pass left x lacking).
pub fn catch_up<T: Scalar>(
    x: &mut Part<T>,
    p: &mut Part<T>,
    r: &Part<T>,
    s: &Part<T>,
    owed: (T, T),
) -> Result<()> {
    let (a, b) = owed;
    let (xp, pp, rp, sp, n) = (x.dptr(), p.dptr(), r.dptr(), s.dptr(), n_of(x));
    elementwise(x, &[p, r, s], |k, st, g| {
        let args = &mut [
            karg!(xp),
            karg!(pp),
            karg!(rp),
            karg!(sp),
            karg!(a),
            karg!(b),
            karg!(n),
        ];
        // SAFETY: `args` are k_catch_up's (T *x, T *p, const T *r, const T *s, T a, T b, i64 n);
        // x, p, r and s hold n entries.
        unsafe { launch(k.k_catch_up, g, BLOCK, st, args) }
    })
}

/// [`XStep`] as the kernels' (mode, a0, b0).
fn mode<T: Scalar>(step: XStep<T>) -> (i32, T, T) {
    match step {
        XStep::Now => (0, T::zero(), T::zero()),
        XStep::Later => (1, T::zero(), T::zero()),
        XStep::Both(a0, b0) => (2, a0, b0),
    }
}

/// s = w + b s, r -= a s, p and x as `step` says, in one pass; this rank's |r|^2.
#[allow(clippy::too_many_arguments)]
pub fn cg_sr_update<T: Scalar>(
    x: &mut Part<T>,
    r: &mut Part<T>,
    p: &mut Part<T>,
    s: &mut Part<T>,
    w: &Part<T>,
    a: T,
    b: T,
    step: XStep<T>,
) -> Result<f64> {
    let (xp, rp, pp, sp, wp, n) = (x.dptr(), r.dptr(), p.dptr(), s.dptr(), w.dptr(), n_of(x));
    let (m, a0, b0) = mode(step);
    let v = fused_reduce(x, &[r, p, s, w], 1, |k, st, nb, part| {
        let args = &mut [
            karg!(xp),
            karg!(rp),
            karg!(pp),
            karg!(sp),
            karg!(wp),
            karg!(a),
            karg!(b),
            karg!(m),
            karg!(a0),
            karg!(b0),
            karg!(n),
            karg!(part),
        ];
        // SAFETY: `args` are k_cg_sr_update's (T *x, T *r, T *p, T *s, const T *w, T a, T b, int
        // mode, T a0, T b0, i64 n, double *part), `m` an i32; the five vectors hold n entries,
        // and `part` one double per block (nb <= RED_BLOCKS blocks of BLOCK threads).
        unsafe { launch(k.k_cg_sr_update, nb, BLOCK, st, args) }
    })?;
    Ok(v[0])
}

/// z = m + b z, s = w + b s, r -= a s, w -= a z, p and x as `step` says, in one pass (`m` = A w, a
/// whole product); this rank's [|r|^2, 0, re(w^H r), im(w^H r)].
pub fn cg_pipe_update<T: Scalar>(
    v: PipeSet<'_, T>,
    m: &Part<T>,
    a: T,
    b: T,
    step: XStep<T>,
) -> Result<Vec<f64>> {
    let PipeSet { x, r, w, p, s, z } = v;
    let (xp, rp, wp, pp, sp, zp, mp) = (
        x.dptr(),
        r.dptr(),
        w.dptr(),
        p.dptr(),
        s.dptr(),
        z.dptr(),
        m.dptr(),
    );
    let n = n_of(x);
    let (md, a0, b0) = mode(step);
    fused_reduce(x, &[r, w, p, s, z, m], 4, |k, st, nb, part| {
        let args = &mut [
            karg!(xp),
            karg!(rp),
            karg!(wp),
            karg!(pp),
            karg!(sp),
            karg!(zp),
            karg!(mp),
            karg!(a),
            karg!(b),
            karg!(md),
            karg!(a0),
            karg!(b0),
            karg!(n),
            karg!(part),
        ];
        // SAFETY: `args` are k_cg_pipe_update's (T *x, T *r, T *w, T *p, T *s, T *z, const T *m,
        // T a, T b, int mode, T a0, T b0, i64 n, double *part), `md` an i32; the seven vectors
        // hold n entries, and `part` four doubles per block (nb <= RED_BLOCKS blocks of BLOCK
        // threads: within the scratch's 8 * RED_BLOCKS).
        unsafe { launch(k.k_cg_pipe_update, nb, BLOCK, st, args) }
    })
}
