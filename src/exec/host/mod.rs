//! The host backend: this rank's entries in host memory, every step a loop over slices on the calling
//! thread (vector kernels in [`crate::vector::ops`], fused passes in [`cg`] and [`multi`], the CSR
//! product in [`crate::op::csr`]).

mod cg;
mod multi;

pub use cg::PipeRows;

use super::{Backend, Exec, PipeSet, Storage};
use crate::comm::{Comm, ReduceOp};
use crate::error::Result;
use crate::memory::HostBuf;
use crate::op::csr::CsrOp;
use crate::scalar::Scalar;
use crate::vector::fused::XStep;
use crate::vector::{DistVector, NormKind, ops};

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
    fn sync<T: Scalar>(_: &DistVector<T>) -> Result<()> {
        Ok(())
    }
    fn settle<T: Scalar>(_: &DistVector<T>) -> Result<()> {
        Ok(())
    }
    fn download<T: Scalar>(dst: &mut [T], src: &DistVector<T>) -> Result<()> {
        dst.copy_from_slice(src.local());
        Ok(())
    }
    fn upload<T: Scalar>(dst: &mut DistVector<T>, src: &[T]) -> Result<()> {
        dst.local_mut().copy_from_slice(src);
        Ok(())
    }
    fn copy<T: Scalar>(y: &mut DistVector<T>, x: &DistVector<T>) -> Result<()> {
        y.local_mut().copy_from_slice(x.local());
        Ok(())
    }
    fn fill<T: Scalar>(y: &mut DistVector<T>, a: T) -> Result<()> {
        ops::fill(y.local_mut(), a);
        Ok(())
    }
    fn scale<T: Scalar>(y: &mut DistVector<T>, a: T) -> Result<()> {
        ops::scale(y.local_mut(), a);
        Ok(())
    }
    fn conj<T: Scalar>(y: &mut DistVector<T>) -> Result<()> {
        ops::conj(y.local_mut());
        Ok(())
    }
    fn axpy<T: Scalar>(y: &mut DistVector<T>, a: T, x: &DistVector<T>) -> Result<()> {
        ops::axpy(y.local_mut(), a, x.local());
        Ok(())
    }
    fn axpby<T: Scalar>(y: &mut DistVector<T>, a: T, x: &DistVector<T>, b: T) -> Result<()> {
        ops::axpby(y.local_mut(), a, x.local(), b);
        Ok(())
    }
    fn waxpy<T: Scalar>(
        w: &mut DistVector<T>,
        a: T,
        x: &DistVector<T>,
        y: &DistVector<T>,
    ) -> Result<()> {
        ops::waxpy(w.local_mut(), a, x.local(), y.local());
        Ok(())
    }
    fn pmult<T: Scalar>(
        w: &mut DistVector<T>,
        x: &DistVector<T>,
        y: &DistVector<T>,
        cx: bool,
    ) -> Result<()> {
        if cx {
            for ((w, a), b) in w.local_mut().iter_mut().zip(x.local()).zip(y.local()) {
                *w = a.conj() * *b;
            }
        } else {
            ops::pointwise_mult(w.local_mut(), x.local(), y.local());
        }
        Ok(())
    }
    fn dots<T: Scalar>(pairs: &[(&DistVector<T>, &DistVector<T>)]) -> Result<Vec<f64>> {
        let mut v = Vec::new();
        crate::error::try_reserve(&mut v, 2 * pairs.len(), "the dot products' sums")?;
        for (x, y) in pairs {
            let (re, im) = ops::dot(x.local(), y.local());
            v.push(re);
            v.push(im);
        }
        Ok(v)
    }
    fn norm_partial<T: Scalar>(x: &DistVector<T>, kind: NormKind) -> Result<(f64, ReduceOp)> {
        Ok(kind.partial(x.local()))
    }
    fn two_partial<T: Scalar>(x: &DistVector<T>) -> Result<(f64, f64)> {
        Ok(ops::two_partial(x.local()))
    }
    fn nonfinite<T: Scalar>(x: &DistVector<T>) -> Result<bool> {
        Ok(!x.local().iter().all(|v| v.abs_f64().is_finite()))
    }
    fn allreduce_sum<T: Scalar>(
        comm: &Comm,
        local: Result<Vec<f64>>,
        n: usize,
        _: &DistVector<T>,
    ) -> Result<Vec<f64>> {
        comm.allreduce_checked(local, n, ReduceOp::Sum)
    }
    fn cg_update<T: Scalar>(
        x: &mut DistVector<T>,
        a: T,
        p: &DistVector<T>,
        r: &mut DistVector<T>,
        q: &DistVector<T>,
    ) -> Result<f64> {
        cg::cg_update(x, a, p, r, q)
    }
    fn cg_residual<T: Scalar>(a: T, r: &mut DistVector<T>, q: &DistVector<T>) -> Result<f64> {
        cg::cg_residual(a, r, q)
    }
    fn cg_step<T: Scalar>(
        x: &mut DistVector<T>,
        a: T,
        p: &mut DistVector<T>,
        r: &DistVector<T>,
        b: T,
    ) -> Result<()> {
        cg::cg_step(x, a, p, r, b)
    }
    fn cg_sr_update<T: Scalar>(
        x: &mut DistVector<T>,
        r: &mut DistVector<T>,
        p: &mut DistVector<T>,
        s: &mut DistVector<T>,
        w: &DistVector<T>,
        a: T,
        b: T,
        step: XStep<T>,
    ) -> Result<f64> {
        cg::cg_sr_update(x, r, p, s, w, a, b, step)
    }
    fn catch_up<T: Scalar>(
        x: &mut DistVector<T>,
        p: &mut DistVector<T>,
        r: &DistVector<T>,
        s: &DistVector<T>,
        owed: (T, T),
    ) -> Result<()> {
        cg::catch_up(x, p, r, s, owed)
    }
    fn pipe_update<T: Scalar>(
        v: PipeSet<'_, T>,
        n: &DistVector<T>,
        a: T,
        b: T,
        step: XStep<T>,
    ) -> Result<Vec<f64>> {
        let PipeSet { x, r, w, p, s, z } = v;
        let mut u = PipeRows::new(x, r, p, s, z, step)?;
        u.rows(0, n.local(), w.local_mut(), a, b);
        Ok(u.sums())
    }
    fn rr_wr<T: Scalar>(r: &DistVector<T>, w: &DistVector<T>) -> Result<Vec<f64>> {
        cg::rr_wr(r, w)
    }
    fn mdot<T: Scalar>(basis: &[&DistVector<T>], w: &DistVector<T>) -> Result<Vec<f64>> {
        multi::mdot(basis, w)
    }
    fn maxpy_norm<T: Scalar>(
        w: &mut DistVector<T>,
        h: &[T],
        basis: &[&DistVector<T>],
    ) -> Result<f64> {
        multi::maxpy_norm(w, h, basis)
    }
    fn maxpy<T: Scalar>(x: &mut DistVector<T>, c: &[T], basis: &[&DistVector<T>]) -> Result<()> {
        multi::maxpy(x, c, basis)
    }
    fn csr_forward<T: Scalar>(
        op: &CsrOp<T>,
        x: &DistVector<T>,
        y: &mut DistVector<T>,
    ) -> Result<()> {
        op.forward_host::<false>(x, y).map(|_| ())
    }
    fn csr_backward<T: Scalar>(
        op: &CsrOp<T>,
        y: &DistVector<T>,
        x: &mut DistVector<T>,
    ) -> Result<()> {
        op.backward_host(y, x)
    }
}
