//! The host backend: this rank's entries in host memory, every step a loop over slices on the calling
//! thread (vector kernels in [`crate::vector::ops`], fused passes in [`cg`] and [`multi`], the CSR
//! product in [`crate::op::csr`]).

pub(super) mod block;
mod cg;
pub(super) mod gram;
pub(super) mod multi;

pub use cg::PipeRows;

use super::ops::{self, NormKind};
use super::{Backend, Exec, Part, PipeSet, Sparse, Storage, XStep};
use crate::comm::{Comm, ReduceOp};
use crate::error::Result;
use crate::memory::HostBuf;
use crate::scalar::Scalar;

/// The host backend.
pub struct Host;

impl Backend for Host {
    fn zeroed<T: Scalar>(_: &Exec, n: usize) -> Result<Storage<T>> {
        let v = HostBuf::zeroed(n, T::zero()).map_err(|_| {
            crate::err!(
                OutOfMemory,
                "cannot allocate {n} entries of {} ({} bytes) on this rank",
                T::DTYPE.name(),
                n.saturating_mul(std::mem::size_of::<T>())
            )
        })?;
        Ok(Storage::Host(v))
    }
    fn sync<T: Scalar>(_: &Part<T>) -> Result<()> {
        Ok(())
    }
    fn settle<T: Scalar>(_: &Part<T>) -> Result<()> {
        Ok(())
    }
    fn download<T: Scalar>(dst: &mut [T], src: &Part<T>) -> Result<()> {
        dst.copy_from_slice(src.local());
        Ok(())
    }
    fn upload<T: Scalar>(dst: &mut Part<T>, src: &[T]) -> Result<()> {
        dst.local_mut().copy_from_slice(src);
        Ok(())
    }
    fn copy<T: Scalar>(y: &mut Part<T>, x: &Part<T>) -> Result<()> {
        y.local_mut().copy_from_slice(x.local());
        Ok(())
    }
    fn fill<T: Scalar>(y: &mut Part<T>, a: T) -> Result<()> {
        ops::fill(y.local_mut(), a);
        Ok(())
    }
    fn scale<T: Scalar>(y: &mut Part<T>, a: T) -> Result<()> {
        ops::scale(y.local_mut(), a);
        Ok(())
    }
    fn conj<T: Scalar>(y: &mut Part<T>) -> Result<()> {
        ops::conj(y.local_mut());
        Ok(())
    }
    fn axpy<T: Scalar>(y: &mut Part<T>, a: T, x: &Part<T>) -> Result<()> {
        ops::axpy(y.local_mut(), a, x.local());
        Ok(())
    }
    fn axpby<T: Scalar>(y: &mut Part<T>, a: T, x: &Part<T>, b: T) -> Result<()> {
        ops::axpby(y.local_mut(), a, x.local(), b);
        Ok(())
    }
    fn waxpy<T: Scalar>(w: &mut Part<T>, a: T, x: &Part<T>, y: &Part<T>) -> Result<()> {
        ops::waxpy(w.local_mut(), a, x.local(), y.local());
        Ok(())
    }
    fn pmult<T: Scalar>(w: &mut Part<T>, x: &Part<T>, y: &Part<T>, cx: bool) -> Result<()> {
        if cx {
            for ((w, a), b) in w.local_mut().iter_mut().zip(x.local()).zip(y.local()) {
                *w = a.conj() * *b;
            }
        } else {
            ops::pointwise_mult(w.local_mut(), x.local(), y.local());
        }
        Ok(())
    }
    fn dots<T: Scalar>(pairs: &[(&Part<T>, &Part<T>)]) -> Result<Vec<f64>> {
        let mut v = Vec::new();
        crate::error::try_reserve(&mut v, 2 * pairs.len(), "the dot products' sums")?;
        for (x, y) in pairs {
            let (re, im) = ops::dot(x.local(), y.local());
            v.push(re);
            v.push(im);
        }
        Ok(v)
    }
    fn dots_binned<T: Scalar>(
        pairs: &[(&Part<T>, &Part<T>)],
    ) -> Result<Vec<crate::binned::Binned>> {
        let mut v = Vec::new();
        crate::error::try_reserve(&mut v, 2 * pairs.len(), "the dot products' sums")?;
        for (x, y) in pairs {
            let (re, im) = ops::dot_binned(x.local(), y.local());
            v.push(re);
            v.push(im);
        }
        Ok(v)
    }
    fn norm_partial<T: Scalar>(x: &Part<T>, kind: NormKind) -> Result<(f64, ReduceOp)> {
        Ok(kind.partial(x.local()))
    }
    fn two_partial<T: Scalar>(x: &Part<T>) -> Result<(f64, f64)> {
        Ok(ops::two_partial(x.local()))
    }
    fn nonfinite<T: Scalar>(x: &Part<T>) -> Result<bool> {
        Ok(!x.local().iter().all(|v| v.abs_f64().is_finite()))
    }
    fn allreduce_sum<T: Scalar>(
        comm: &Comm,
        local: Result<Vec<f64>>,
        n: usize,
        _: &Part<T>,
    ) -> Result<Vec<f64>> {
        comm.allreduce_checked(local, n, ReduceOp::Sum)
    }
    fn cg_update<T: Scalar>(
        x: &mut Part<T>,
        a: T,
        p: &Part<T>,
        r: &mut Part<T>,
        q: &Part<T>,
    ) -> Result<f64> {
        cg::cg_update(x, a, p, r, q)
    }
    fn cg_residual<T: Scalar>(a: T, r: &mut Part<T>, q: &Part<T>) -> Result<f64> {
        cg::cg_residual(a, r, q)
    }
    fn cg_step<T: Scalar>(x: &mut Part<T>, a: T, p: &mut Part<T>, r: &Part<T>, b: T) -> Result<()> {
        cg::cg_step(x, a, p, r, b)
    }
    fn cg_sr_update<T: Scalar>(
        x: &mut Part<T>,
        r: &mut Part<T>,
        p: &mut Part<T>,
        s: &mut Part<T>,
        w: &Part<T>,
        a: T,
        b: T,
        step: XStep<T>,
    ) -> Result<f64> {
        cg::cg_sr_update(x, r, p, s, w, a, b, step)
    }
    fn catch_up<T: Scalar>(
        x: &mut Part<T>,
        p: &mut Part<T>,
        r: &Part<T>,
        s: &Part<T>,
        owed: (T, T),
    ) -> Result<()> {
        cg::catch_up(x, p, r, s, owed)
    }
    fn pipe_update<T: Scalar>(
        v: PipeSet<'_, T>,
        n: &Part<T>,
        a: T,
        b: T,
        step: XStep<T>,
    ) -> Result<Vec<f64>> {
        let PipeSet { x, r, w, p, s, z } = v;
        let mut u = PipeRows::new(x, r, p, s, z, step)?;
        u.rows(0, n.local(), w.local_mut(), a, b);
        Ok(u.sums())
    }
    fn rr_wr<T: Scalar>(r: &Part<T>, w: &Part<T>) -> Result<Vec<f64>> {
        cg::rr_wr(r, w)
    }
    fn mdot<T: Scalar>(basis: &[&Part<T>], w: &Part<T>) -> Result<Vec<f64>> {
        multi::mdot(basis, w)
    }
    fn maxpy_norm<T: Scalar>(w: &mut Part<T>, h: &[T], basis: &[&Part<T>]) -> Result<f64> {
        multi::maxpy_norm(w, h, basis)
    }
    fn maxpy<T: Scalar>(x: &mut Part<T>, c: &[T], basis: &[&Part<T>]) -> Result<()> {
        multi::maxpy(x, c, basis)
    }
    fn csr_forward<T: Scalar>(m: &Sparse<'_, T>, x: &Part<T>, y: &mut Part<T>) -> Result<()> {
        m.host.forward(x.local(), y.local_mut())
    }
    fn csr_backward<T: Scalar>(m: &Sparse<'_, T>, y: &Part<T>, x: &mut Part<T>) -> Result<()> {
        m.host.backward(y.local(), x.local_mut())
    }
}
