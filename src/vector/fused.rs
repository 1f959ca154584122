//! Fused vector passes of the CG family and of GMRES: the updates of one iteration and the partial
//! sums its next reduction needs, in ONE pass over the vectors instead of one pass per axpy and per
//! dot (the vector work is memory-bound: fewer passes move fewer bytes). Each returns this rank's
//! shares of the sums (see [`share`]); the caller reduces them, carrying a failure into the same
//! reduction.
//!
//! Each pass is a step of the executor ([`crate::exec::Backend`]): the host backend runs the loops
//! of `src/exec/host/` (sums in f64 with the bits of [`super::ops::dot`]: eight lanes, or one chain
//! in index order under PARLOPS_SUM_SEQUENTIAL), the CUDA backend its kernels
//! (`src/gpu/kernels.cu`, partial sums in double). Pipelined CG's update can also be made row by
//! row while the product forms them ([`PipeRows`]), on host-addressable vectors. The solvers' tests
//! (`tests/mpi_solvers.rs`, every CG variant at 1-4 ranks) and the device suite
//! (`tests/gpu_check.rs`) check the results.

use std::borrow::Borrow;

use super::{DistVector, share};
use crate::error::Result;
use crate::exec;
use crate::scalar::Scalar;

pub use crate::exec::PipeRows;

fn check<T: Scalar>(base: &DistVector<T>, others: &[(&DistVector<T>, &str)]) -> Result<()> {
    for (v, name) in others {
        v.layout().check_compatible(base.layout(), name, "x")?;
        base.check_location(v, name, "x")?;
    }
    Ok(())
}

/// The reproducible mode's CG residual pass: r -= a q (the bits of r.axpy(-a, q)), and this rank's
/// binned sum of |r_i|^2 of the new r, formed block by block in the same pass (on device vectors:
/// the update by the executor, the sum on a host copy); a replicated r counts rank 0's entries.
pub fn cg_residual_binned<T: Scalar>(
    a: T,
    r: &mut DistVector<T>,
    q: &DistVector<T>,
) -> Result<crate::binned::Binned> {
    use crate::binned::Sink;
    check(r, &[(q, "q")])?;
    let na = -a;
    // the term of an entry of the new r
    let abs2 = |v: T| {
        let (re, im) = v.to_parts();
        if T::PARTS == 1 {
            re * re
        } else {
            re * re + im * im
        }
    };
    let mut sink = Sink::new();
    let mut buf = [0.0f64; Sink::BLOCK];
    // a replicated r counts rank 0's entries (as the binned dots do)
    let layout = r.layout().clone();
    if layout.partition() != crate::vector::Partition::Scatter && layout.comm().rank() != 0 {
        r.axpy(na, q)?;
        return Ok(sink.finish());
    }
    if !(r.host_addressable() && q.host_addressable()) {
        // device vectors: the update by the executor (an axpy kernel: the same bits), the sum on a
        // host copy of the new r
        r.axpy(na, q)?;
        let h = r.to_location(crate::memory::Location::Host)?;
        for rc in h.local().chunks(Sink::BLOCK) {
            for (rv, t) in rc.iter().zip(buf.iter_mut()) {
                *t = abs2(*rv);
            }
            sink.push(&buf[..rc.len()]);
        }
        return Ok(sink.finish());
    }
    let ql = q.local();
    let rl = r.local_mut();
    for (rc, qc) in rl.chunks_mut(Sink::BLOCK).zip(ql.chunks(Sink::BLOCK)) {
        for ((rv, qv), t) in rc.iter_mut().zip(qc).zip(buf.iter_mut()) {
            *rv += na * *qv;
            *t = abs2(*rv);
        }
        sink.push(&buf[..rc.len()]);
    }
    Ok(sink.finish())
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
    let v = exec::cg_update(&mut x.part, a, &p.part, &mut r.part, &q.part)?;
    Ok(share(x.layout(), v))
}

/// CG's residual update alone: r -= a q; returns the share of ||r||^2 (new r). 24 bytes per double
/// entry. With [`cg_step`] after it this is [`cg_update`] with x's update moved into the direction's
/// pass: 24 + 40 = 64 bytes per entry instead of 48 + 24 = 72 (p is read once for both).
pub fn cg_residual<T: Scalar>(a: T, r: &mut DistVector<T>, q: &DistVector<T>) -> Result<f64> {
    check(r, &[(q, "q")])?;
    let v = exec::cg_residual(a, &mut r.part, &q.part)?;
    Ok(share(r.layout(), v))
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
    exec::cg_step(&mut x.part, a, &mut p.part, &r.part, b)
}

/// Single-reduction CG without a preconditioner (u = r): s = w + b s, r -= a s, and p and x as
/// `step` says ([`XStep`]: p = (r + a s) + b p, x += a p); returns the share of ||r||^2 (new r).
/// 72 bytes per double entry instead of 120; 40 on a pass that leaves p and x alone.
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
    let v = exec::cg_sr_update(
        &mut x.part,
        &mut r.part,
        &mut p.part,
        &mut s.part,
        &w.part,
        alpha,
        beta,
        step,
    )?;
    Ok(share(x.layout(), v))
}

pub use crate::exec::XStep;

/// The step a [`XStep::Later`] pass left x lacking, `owed` = its (a, b), made alone while r and s
/// are still the ones that pass left: p = (r + a s) + b p, x += a p (the bits of that pass made
/// with [`XStep::Now`]). 48 bytes per double entry.
pub fn catch_up<T: Scalar>(
    x: &mut DistVector<T>,
    p: &mut DistVector<T>,
    r: &DistVector<T>,
    s: &DistVector<T>,
    owed: (T, T),
) -> Result<()> {
    check(x, &[(p, "p"), (r, "r"), (s, "s")])?;
    exec::catch_up(&mut x.part, &mut p.part, &r.part, &s.part, owed)
}

/// The vectors of pipelined CG's update ([`pipe_update`]).
pub struct PipeVectors<'a, T: Scalar> {
    pub x: &'a mut DistVector<T>,
    pub r: &'a mut DistVector<T>,
    pub w: &'a mut DistVector<T>,
    pub p: &'a mut DistVector<T>,
    pub s: &'a mut DistVector<T>,
    pub z: &'a mut DistVector<T>,
}

/// Pipelined CG's update without a preconditioner after a whole product `n` = A w (z = n + b z,
/// s = w + b s, r -= a s, w -= a z, p and x as `step` says), with the shares of [r^H r, w^H r] of
/// the new r and w as (re, im) pairs: [re, 0, re, im]. On host-addressable vectors the solver
/// rather makes it row by row during the product ([`pipe_rows`]); this is the same pass at once.
pub fn pipe_update<T: Scalar>(
    v: PipeVectors<'_, T>,
    n: &DistVector<T>,
    alpha: T,
    beta: T,
    step: XStep<T>,
) -> Result<Vec<f64>> {
    let PipeVectors { x, r, w, p, s, z } = v;
    check(
        n,
        &[(x, "x"), (r, "r"), (w, "w"), (p, "p"), (s, "s"), (z, "z")],
    )?;
    let l = n.layout().clone();
    let set = exec::PipeSet {
        x: &mut x.part,
        r: &mut r.part,
        w: &mut w.part,
        p: &mut p.part,
        s: &mut s.part,
        z: &mut z.part,
    };
    let g = exec::pipe_update(set, &n.part, alpha, beta, step)?;
    Ok(g.into_iter().map(|v| share(&l, v)).collect())
}

/// Pipelined CG's update made row by row as the product hands the rows over (host-addressable
/// vectors of one layout: checked; others get an error and take [`pipe_update`]).
pub fn pipe_rows<'a, T: Scalar>(
    x: &'a mut DistVector<T>,
    r: &'a mut DistVector<T>,
    p: &'a mut DistVector<T>,
    s: &'a mut DistVector<T>,
    z: &'a mut DistVector<T>,
    step: XStep<T>,
) -> Result<PipeRows<'a, T>> {
    check(x, &[(r, "r"), (p, "p"), (s, "s"), (z, "z")])?;
    PipeRows::new(
        &mut x.part,
        &mut r.part,
        &mut p.part,
        &mut s.part,
        &mut z.part,
        step,
    )
}

/// This rank's shares of [r^H r, w^H r] after a row-streamed update, as (re, im) pairs:
/// [re, 0, re, im].
pub fn pipe_shares<T: Scalar>(u: &PipeRows<'_, T>, l: &super::Layout) -> Vec<f64> {
    u.sums().into_iter().map(|v| share(l, v)).collect()
}

/// Shares of [r^H r, w^H r] (the dots pipelined CG starts its first iteration with), as (re, im)
/// pairs, in one pass.
pub fn rr_wr<T: Scalar>(r: &DistVector<T>, w: &DistVector<T>) -> Result<Vec<f64>> {
    check(r, &[(w, "w")])?;
    let g = exec::rr_wr(&r.part, &w.part)?;
    Ok(g.into_iter().map(|v| share(r.layout(), v)).collect())
}

/// GMRES' projections (PETSc's VecMDot): the shares of conj(v_i).w for every v_i of `basis`, as
/// (re, im) pairs, in one pass over w. Each sum has the bits of [`super::ops::dot`] of v_i and w.
pub fn mdot<T: Scalar, V: Borrow<DistVector<T>>>(
    basis: &[V],
    w: &DistVector<T>,
) -> Result<Vec<f64>> {
    let vs: Vec<&DistVector<T>> = basis.iter().map(|v| v.borrow()).collect();
    let named: Vec<(&DistVector<T>, &str)> = vs.iter().map(|v| (*v, "v")).collect();
    check(w, &named)?;
    let parts: Vec<&exec::Part<T>> = vs.iter().map(|v| &v.part).collect();
    let g = exec::mdot(&parts, &w.part)?;
    Ok(g.into_iter().map(|v| share(w.layout(), v)).collect())
}

/// The checks of an update by a basis: every vector like `w`, one coefficient per vector.
fn check_basis<'a, T: Scalar, V: Borrow<DistVector<T>>>(
    w: &DistVector<T>,
    c: &[T],
    basis: &'a [V],
) -> Result<Vec<&'a DistVector<T>>> {
    let vs: Vec<&DistVector<T>> = basis.iter().map(|v| v.borrow()).collect();
    let named: Vec<(&DistVector<T>, &str)> = vs.iter().map(|v| (*v, "v")).collect();
    check(w, &named)?;
    if c.len() != basis.len() {
        crate::bail!(
            SizeMismatch,
            "{} coefficients for {} vectors",
            c.len(),
            basis.len()
        );
    }
    Ok(vs)
}

/// GMRES' update (PETSc's VecMAXPY and VecNorm in one pass): w -= sum_i h_i v_i, subtracting in
/// the order of `basis` for every entry (the bits of successive axpys), returning the share of the
/// new ||w||^2.
pub fn maxpy_norm<T: Scalar, V: Borrow<DistVector<T>>>(
    w: &mut DistVector<T>,
    h: &[T],
    basis: &[V],
) -> Result<f64> {
    let vs = check_basis(w, h, basis)?;
    let parts: Vec<&exec::Part<T>> = vs.iter().map(|v| &v.part).collect();
    let v = exec::maxpy_norm(&mut w.part, h, &parts)?;
    Ok(share(w.layout(), v))
}

/// DGKS' second look (a Gram-Schmidt update and the next pass's projections in one pass over the
/// basis): w -= sum_i h_i v_i, returning the shares of the new ||w||^2 and of conj(v_i).w for every
/// v_i as (re, im) pairs; the bits of [`maxpy_norm`] followed by [`mdot`].
pub fn maxpy_norm_mdot<T: Scalar, V: Borrow<DistVector<T>>>(
    w: &mut DistVector<T>,
    h: &[T],
    basis: &[V],
) -> Result<(f64, Vec<f64>)> {
    let vs = check_basis(w, h, basis)?;
    let parts: Vec<&exec::Part<T>> = vs.iter().map(|v| &v.part).collect();
    let (n, d) = exec::maxpy_norm_mdot(&mut w.part, h, &parts)?;
    let l = w.layout();
    Ok((share(l, n), d.into_iter().map(|v| share(l, v)).collect()))
}

/// x += sum_i c_i v_i (PETSc's VecMAXPY): one pass over x for all the vectors, adding in the order
/// of `basis` for every entry (the bits of successive axpys: GMRES' solution update, which moved x
/// once per basis vector).
pub fn maxpy<T: Scalar, V: Borrow<DistVector<T>>>(
    x: &mut DistVector<T>,
    c: &[T],
    basis: &[V],
) -> Result<()> {
    let vs = check_basis(x, c, basis)?;
    let parts: Vec<&exec::Part<T>> = vs.iter().map(|v| &v.part).collect();
    exec::maxpy(&mut x.part, c, &parts)
}

/// This rank's shares of conj(x_i).y_j for every pair, as (re, im) pairs, row-major (`xs.len()`
/// rows of `ys.len()`), in one pass over both sets on the host (each sum the bits of
/// [`super::ops::dot`]).
pub fn block_dot<T: Scalar>(xs: &[&DistVector<T>], ys: &[&DistVector<T>]) -> Result<Vec<f64>> {
    pair_shares(xs, ys, exec::multi::block_dot)
}

/// This rank's shares of the pairs of [`block_dot`], each sum in whatever order is fastest
/// ([`exec::multi::gram`]: not the bits of a dot product; a block method's small matrices).
pub fn gram<T: Scalar>(xs: &[&DistVector<T>], ys: &[&DistVector<T>]) -> Result<Vec<f64>> {
    pair_shares(xs, ys, exec::multi::gram)
}

/// An executor step giving every pair's local sums (`exec::multi::block_dot`, `gram`).
type PairStep<T> = fn(&[&exec::Part<T>], &[&exec::Part<T>]) -> Result<Vec<f64>>;

/// The executor's sums of every pair (`step`), checked and with the layout's share.
fn pair_shares<T: Scalar>(
    xs: &[&DistVector<T>],
    ys: &[&DistVector<T>],
    step: PairStep<T>,
) -> Result<Vec<f64>> {
    let Some(first) = xs.first().or(ys.first()) else {
        return Ok(Vec::new());
    };
    let named: Vec<(&DistVector<T>, &str)> = xs
        .iter()
        .map(|v| (*v, "x"))
        .chain(ys.iter().map(|v| (*v, "y")))
        .collect();
    check(first, &named)?;
    let xp: Vec<&exec::Part<T>> = xs.iter().map(|v| &v.part).collect();
    let yp: Vec<&exec::Part<T>> = ys.iter().map(|v| &v.part).collect();
    let g = step(&xp, &yp)?;
    Ok(g.into_iter().map(|v| share(first.layout(), v)).collect())
}

/// outs[q] = sum_a c[q * ins.len() + a] ins[a] for every q (SLEPc's BVMult; a basis rotated into
/// new vectors), reading each input once on the host. Not collective.
pub fn combine<T: Scalar>(
    outs: &mut [&mut DistVector<T>],
    c: &[T],
    ins: &[&DistVector<T>],
) -> Result<()> {
    let Some(first) = ins.first() else {
        for o in outs.iter_mut() {
            o.fill(T::zero())?;
        }
        return Ok(());
    };
    let named: Vec<(&DistVector<T>, &str)> = ins.iter().map(|v| (*v, "v")).collect();
    check(first, &named)?;
    for o in outs.iter() {
        check(first, &[(&**o, "out")])?;
    }
    let ip: Vec<&exec::Part<T>> = ins.iter().map(|v| &v.part).collect();
    let mut op: Vec<&mut exec::Part<T>> = outs.iter_mut().map(|v| &mut v.part).collect();
    exec::multi::combine(&mut op, c, &ip, false)
}

/// outs[q] = base[q] + sum_a c[q * ins.len() + a] ins[a] for every q (no `base`: outs[q] +=; a block
/// of iterates moved along a block of directions), reading each input once on the host, each sum
/// in whatever order is fastest ([`exec::multi::update`]: not the bits of axpys). Not collective.
pub fn update<T: Scalar>(
    outs: &mut [&mut DistVector<T>],
    base: Option<&[&DistVector<T>]>,
    c: &[T],
    ins: &[&DistVector<T>],
) -> Result<()> {
    let Some(first) = ins.first() else {
        // no terms: the bases themselves
        for (o, b) in outs.iter_mut().zip(base.unwrap_or(&[])) {
            o.copy_from(b)?;
        }
        return Ok(());
    };
    let named: Vec<(&DistVector<T>, &str)> = ins.iter().map(|v| (*v, "v")).collect();
    check(first, &named)?;
    for o in outs.iter() {
        check(first, &[(&**o, "out")])?;
    }
    for b in base.unwrap_or(&[]) {
        check(first, &[(*b, "base")])?;
    }
    coefficients(
        c.len(),
        outs.len(),
        ins.len(),
        base.is_none_or(|b| b.len() == outs.len()),
    )?;
    let ip: Vec<&exec::Part<T>> = ins.iter().map(|v| &v.part).collect();
    let mut op: Vec<&mut exec::Part<T>> = outs.iter_mut().map(|v| &mut v.part).collect();
    let bp: Option<Vec<&exec::Part<T>>> = base.map(|b| b.iter().map(|v| &v.part).collect());
    exec::multi::update(&mut op, bp.as_deref(), c, &ip)
}

/// An update's `nc` coefficients for `nout` outputs of `nin` inputs (and its bases, `bases_ok`).
fn coefficients(nc: usize, nout: usize, nin: usize, bases_ok: bool) -> Result<()> {
    if nc != nout * nin || !bases_ok {
        crate::bail!(
            SizeMismatch,
            "{nc} coefficients for {nout} outputs of {nin} vectors"
        );
    }
    Ok(())
}

/// outs[q] += sum_a c[q * ins.len() + a] ins[a] for every q ([`update`] without bases), then this
/// rank's sums of the pairs of [ins, outs] against the new outs ([`gram`]'s), in one pass on the
/// host. Not collective.
pub fn update_gram<T: Scalar>(
    outs: &mut [&mut DistVector<T>],
    c: &[T],
    ins: &[&DistVector<T>],
) -> Result<Vec<f64>> {
    let Some(first) = ins.first() else {
        crate::bail!(
            InvalidArgument,
            "an update with its Gram matrix of no vectors"
        );
    };
    let named: Vec<(&DistVector<T>, &str)> = ins
        .iter()
        .map(|v| (*v, "v"))
        .chain(outs.iter().map(|v| (&**v, "out")))
        .collect();
    check(first, &named)?;
    coefficients(c.len(), outs.len(), ins.len(), true)?;
    let layout = first.layout().clone();
    let ip: Vec<&exec::Part<T>> = ins.iter().map(|v| &v.part).collect();
    let mut op: Vec<&mut exec::Part<T>> = outs.iter_mut().map(|v| &mut v.part).collect();
    let g = exec::multi::update_gram(&mut op, c, &ip)?;
    Ok(g.into_iter().map(|v| share(&layout, v)).collect())
}
