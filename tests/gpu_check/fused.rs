//! GMRES' fused passes on device vectors (`fused::mdot`, `maxpy`, `maxpy_norm`: four basis vectors a
//! kernel): for 1 to 9 vectors (a last group of every size), the projections have the bits of one
//! dot per vector and the updates those of successive axpys on the device, and agree with the host's
//! passes to rounding.

use std::sync::Arc;

use crate::common::Tally;
use crate::{CUDA, HOST, rand, rel_diff, tol};
use parlops::comm::{Comm, ReduceOp};
use parlops::vector::{DistVector, Layout, fused, share};
use parlops::{DType, Scalar};

pub(crate) fn fused_basis<T: Scalar>(
    t: &mut Tally,
    comm: &Arc<Comm>,
    l: &Arc<Layout>,
    lname: &str,
) {
    let name = format!("{} {lname}", T::DTYPE.name());
    let single = matches!(T::DTYPE, DType::F32 | DType::C64);
    // element-wise rounding of up to 9 terms an entry
    let el = 10.0 * if single { 6e-8 } else { 1.2e-16 };
    let dw = rand::<T>(l, 50, CUDA);
    let hw = rand::<T>(l, 50, HOST);
    for k in 1..=9usize {
        let dv: Vec<DistVector<T>> = (0..k).map(|j| rand::<T>(l, 60 + j as u64, CUDA)).collect();
        let hv: Vec<DistVector<T>> = (0..k).map(|j| rand::<T>(l, 60 + j as u64, HOST)).collect();
        let c: Vec<T> = (0..k)
            .map(|j| T::from_parts_lossy(0.5 - 0.25 * j as f64, 0.125 * j as f64))
            .collect();
        // projections: this rank's shares against one k_dot per vector (compared before any
        // reduction: with NCCL attached, reductions of the same numbers may differ in the last bit)
        let m = fused::mdot(&dv, &dw).unwrap();
        let pairs: Vec<_> = dv.iter().map(|v| (v.part(), dw.part())).collect();
        let one = parlops::exec::dots(&pairs).unwrap();
        let one: Vec<f64> = one.iter().map(|&v| share(l, v)).collect();
        t.check(
            m == one,
            &format!("{name}: mdot of {k} vectors has the bits of {k} dots"),
        );
        let g = comm.allreduce_checked(Ok(m), 2 * k, ReduceOp::Sum).unwrap();
        let hm = fused::mdot(&hv, &hw).unwrap();
        let hg = comm
            .allreduce_checked(Ok(hm), 2 * k, ReduceOp::Sum)
            .unwrap();
        let close = g
            .iter()
            .zip(&hg)
            .all(|(d, h)| (d - h).abs() <= tol::<T>() * (1.0 + h.abs()));
        t.check(
            close,
            &format!("{name}: mdot of {k} vectors, device against host"),
        );
        // updates: against successive axpys on the device, and the host's pass
        let mut a = dw.duplicate().unwrap();
        fused::maxpy(&mut a, &c, &dv).unwrap();
        let mut b = dw.duplicate().unwrap();
        for (cj, v) in c.iter().zip(&dv) {
            b.axpy(*cj, v).unwrap();
        }
        t.check(
            a.is_device() && rel_diff(&a, &b) == 0.0,
            &format!("{name}: maxpy of {k} vectors has the bits of {k} axpys"),
        );
        let mut h = hw.duplicate().unwrap();
        fused::maxpy(&mut h, &c, &hv).unwrap();
        let d = rel_diff(&a, &h);
        t.check(
            d <= el,
            &format!("{name}: maxpy of {k} vectors, device against host (diff {d:e})"),
        );
        // GMRES' update with its norm: w - sum c_j v_j and the share of its squared norm
        let mut a = dw.duplicate().unwrap();
        let na = fused::maxpy_norm(&mut a, &c, &dv).unwrap();
        let mut b = dw.duplicate().unwrap();
        for (cj, v) in c.iter().zip(&dv) {
            b.axpy(-*cj, v).unwrap();
        }
        let nb = share(l, parlops::exec::dots(&[(b.part(), b.part())]).unwrap()[0]);
        t.check(
            rel_diff(&a, &b) == 0.0 && na == nb,
            &format!("{name}: maxpy_norm of {k} vectors has the bits of {k} axpys and a dot"),
        );
    }
}
