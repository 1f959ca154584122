//! Fused vector passes of the CG family: the updates of one iteration and the partial sums its next
//! reduction needs, in ONE pass over the vectors instead of one pass per axpy and per dot (the
//! vector work is memory-bound: fewer passes move fewer bytes). Each returns this rank's shares of
//! the sums (see [`share`]); the caller reduces them, carrying a failure into the same reduction.
//!
//! Host vectors run the fused loop; device vectors the same arithmetic as one kernel each
//! (`k_cg_update`, `k_cg_sr_update`, `k_cg_pipe_update` in `src/gpu/kernels.cu`, partial sums in
//! double; compiled by NVRTC in `make test`, not yet run on a device). Sums are taken in f64, in index order:
//! for double-precision data a sum |r_i|^2 has the bits of [`super::ops::dot`] of r with itself, and
//! the solvers' tests (`tests/mpi_solvers.rs`, every CG variant at 1-4 ranks) check the results.

use std::borrow::Borrow;

use super::ops::add_dot as acc_dot;
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
    let mut acc = 0.0f64;
    let (p, q) = (p.local(), q.local());
    for (((xi, pi), ri), qi) in x.local_mut().iter_mut().zip(p).zip(r.local_mut()).zip(q) {
        *xi += a * *pi;
        let v = *ri - a * *qi;
        *ri = v;
        acc += v.abs2_f64();
    }
    Ok(share(x.layout(), acc))
}

/// Single-reduction CG without a preconditioner (u = r): p = r + b p, s = w + b s, x += a p,
/// r -= a s; returns the share of ||r||^2 (new r). 72 bytes per double entry instead of 120.
#[allow(clippy::too_many_arguments)]
pub fn cg_sr_update<T: Scalar>(
    x: &mut DistVector<T>,
    r: &mut DistVector<T>,
    p: &mut DistVector<T>,
    s: &mut DistVector<T>,
    w: &DistVector<T>,
    alpha: T,
    beta: T,
) -> Result<f64> {
    check(x, &[(r, "r"), (p, "p"), (s, "s"), (w, "w")])?;
    if x.is_device() {
        let v = device::cg_sr_update(x, r, p, s, w, alpha, beta)?;
        return Ok(share(x.layout(), v));
    }
    let mut acc = 0.0f64;
    let it = x
        .local_mut()
        .iter_mut()
        .zip(r.local_mut())
        .zip(p.local_mut())
        .zip(s.local_mut())
        .zip(w.local());
    for ((((xi, ri), pi), si), wi) in it {
        let pv = *ri + beta * *pi;
        let sv = *wi + beta * *si;
        *pi = pv;
        *si = sv;
        *xi += alpha * pv;
        let rv = *ri - alpha * sv;
        *ri = rv;
        acc += rv.abs2_f64();
    }
    Ok(share(x.layout(), acc))
}

/// Pipelined CG without a preconditioner (u = r, m = w, q = s): z = n + b z, s = w + b s,
/// p = r + b p, x += a p, r -= a s, w -= a z; returns the shares of [r^H r, w^H r] (new r and w:
/// the next iteration's reduction) as (re, im) pairs. 104 bytes per double entry instead of 216.
#[allow(clippy::too_many_arguments)]
pub fn cg_pipe_update<T: Scalar>(
    x: &mut DistVector<T>,
    r: &mut DistVector<T>,
    w: &mut DistVector<T>,
    p: &mut DistVector<T>,
    s: &mut DistVector<T>,
    z: &mut DistVector<T>,
    n: &DistVector<T>,
    alpha: T,
    beta: T,
) -> Result<Vec<f64>> {
    check(
        x,
        &[(r, "r"), (w, "w"), (p, "p"), (s, "s"), (z, "z"), (n, "n")],
    )?;
    if x.is_device() {
        let v = device::cg_pipe_update(x, r, w, p, s, z, n, alpha, beta)?;
        let l = x.layout();
        return Ok(v.into_iter().map(|v| share(l, v)).collect());
    }
    let (mut rr, mut wr) = ((0.0f64, 0.0f64), (0.0f64, 0.0f64));
    let it = x
        .local_mut()
        .iter_mut()
        .zip(r.local_mut())
        .zip(w.local_mut())
        .zip(p.local_mut())
        .zip(s.local_mut())
        .zip(z.local_mut())
        .zip(n.local());
    for ((((((xi, ri), wi), pi), si), zi), ni) in it {
        let zv = *ni + beta * *zi;
        let sv = *wi + beta * *si;
        let pv = *ri + beta * *pi;
        *zi = zv;
        *si = sv;
        *pi = pv;
        *xi += alpha * pv;
        let rv = *ri - alpha * sv;
        let wv = *wi - alpha * zv;
        *ri = rv;
        *wi = wv;
        rr.0 += rv.abs2_f64();
        acc_dot(&mut wr, wv, rv);
    }
    let l = x.layout();
    Ok(vec![share(l, rr.0), 0.0, share(l, wr.0), share(l, wr.1)])
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
/// (re, im) pairs, in one pass over w. Each sum runs in index order (the bits of sequential dots),
/// eight of them interleaved.
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
    let wl = w.local();
    let mut acc = vec![(0.0f64, 0.0f64); basis.len()];
    let vs: Vec<&[T]> = basis.iter().map(|v| v.borrow().local()).collect();
    for a in (0..wl.len()).step_by(BLOCK) {
        let b = (a + BLOCK).min(wl.len());
        let wb = &wl[a..b];
        let len = wb.len();
        let mut i = 0;
        // eight sums at a time (eight independent chains), then four, then one
        while i + 8 <= vs.len() {
            let mut s: [(f64, f64); 8] = std::array::from_fn(|q| acc[i + q]);
            let v: [&[T]; 8] = std::array::from_fn(|q| &vs[i + q][a..b]);
            for j in 0..len {
                // SAFETY: j < len, and every v[q] and wb have len entries (sliced a..b above)
                let wj = unsafe { *wb.get_unchecked(j) };
                for q in 0..8 {
                    acc_dot(&mut s[q], unsafe { *v[q].get_unchecked(j) }, wj);
                }
            }
            acc[i..i + 8].copy_from_slice(&s);
            i += 8;
        }
        while i + 4 <= vs.len() {
            let mut s: [(f64, f64); 4] = std::array::from_fn(|q| acc[i + q]);
            let v: [&[T]; 4] = std::array::from_fn(|q| &vs[i + q][a..b]);
            for j in 0..len {
                // SAFETY: as above
                let wj = unsafe { *wb.get_unchecked(j) };
                for q in 0..4 {
                    acc_dot(&mut s[q], unsafe { *v[q].get_unchecked(j) }, wj);
                }
            }
            acc[i..i + 4].copy_from_slice(&s);
            i += 4;
        }
        for (s, v) in acc[i..].iter_mut().zip(&vs[i..]) {
            for (vj, wj) in v[a..b].iter().zip(wb) {
                acc_dot(s, *vj, *wj);
            }
        }
    }
    let l = w.layout();
    Ok(acc
        .iter()
        .flat_map(|&(re, im)| [share(l, re), share(l, im)])
        .collect())
}

/// GMRES' update (PETSc's VecMAXPY and VecNorm in one pass): w -= sum_i h_i v_i, subtracting in
/// the order of `basis` for every entry (the bits of successive axpys), returning the share of the
/// new ||w||^2.
pub fn maxpy_norm<T: Scalar, V: Borrow<DistVector<T>>>(
    w: &mut DistVector<T>,
    h: &[T],
    basis: &[V],
) -> Result<f64> {
    let named: Vec<(&DistVector<T>, &str)> = basis.iter().map(|v| (v.borrow(), "v")).collect();
    check(w, &named)?;
    if h.len() != basis.len() {
        crate::bail!(
            SizeMismatch,
            "{} coefficients for {} vectors",
            h.len(),
            basis.len()
        );
    }
    if w.is_device() {
        for (hi, v) in h.iter().zip(basis) {
            w.axpy(-*hi, v.borrow())?;
        }
        return Ok(device_dots(&[(w, w)])?[0]);
    }
    let vs: Vec<&[T]> = basis.iter().map(|v| v.borrow().local()).collect();
    let wl = w.local_mut();
    let mut acc = 0.0f64;
    for a in (0..wl.len()).step_by(BLOCK) {
        let b = (a + BLOCK).min(wl.len());
        let wb = &mut wl[a..b];
        let len = wb.len();
        let neg: Vec<T> = h.iter().map(|hi| -*hi).collect();
        // w = (((w - h0 v0) - h1 v1) - ...) per entry: the rounding of successive axpys, with w
        // loaded and stored once per eight vectors
        let mut i = 0;
        while i + 8 <= vs.len() {
            let v: [&[T]; 8] = std::array::from_fn(|q| &vs[i + q][a..b]);
            let c: [T; 8] = std::array::from_fn(|q| neg[i + q]);
            for j in 0..len {
                // SAFETY: j < len, and every v[q] and wb have len entries (sliced a..b above)
                unsafe {
                    let mut t = *wb.get_unchecked(j);
                    for q in 0..8 {
                        t += c[q] * *v[q].get_unchecked(j);
                    }
                    *wb.get_unchecked_mut(j) = t;
                }
            }
            i += 8;
        }
        for (ci, v) in neg[i..].iter().zip(&vs[i..]) {
            for (wj, vj) in wb.iter_mut().zip(&v[a..b]) {
                *wj += *ci * *vj;
            }
        }
        for wj in wb.iter() {
            acc += wj.abs2_f64();
        }
    }
    Ok(share(w.layout(), acc))
}
