//! The operator catalogue on device vectors against the host (issue 31, section 3): stencils,
//! Poisson, the basic, composed, block, dense, low-rank, SUMMA and Fredholm operators, each applied
//! forward and adjoint to device vectors and compared with the same apply on host vectors, and the
//! dot test on the device. Uneven splits and an empty rank where there are 3 or more ranks.

use std::sync::Arc;

use crate::common::Tally;
use crate::{CUDA, HOST, rand, rel_diff, tol};
use parlops::comm::Comm;
use parlops::op::basic::{Diagonal, Identity, Zero};
use parlops::op::block::{BlockDiag, VStack};
use parlops::op::blockop::{BlockLower, BlockOp};
use parlops::op::compose::{Adjoint, Conjugate, LinComb, Power, Product};
use parlops::op::dense::DenseBlockRow;
use parlops::op::fredholm::Fredholm1;
use parlops::op::lowrank::LowRank;
use parlops::op::poisson::Poisson;
use parlops::op::stencil::{self, Kind};
use parlops::op::summa::{Summa, local_a_len};
use parlops::op::{LinearOperator, Op};
use parlops::vector::{DistVector, Layout, Partition};
use parlops::{Scalar, c32, c64};

/// This rank's rows of `n`: uneven, rank 1 empty at 3 or more ranks.
pub(crate) fn uneven(comm: &Comm, n: i64) -> i64 {
    let p = comm.size() as i64;
    let r = comm.rank() as i64;
    match p {
        1 => n,
        2 => {
            if r == 0 {
                n * 2 / 3
            } else {
                n - n * 2 / 3
            }
        }
        _ => {
            let each = n / (p - 1);
            match r {
                1 => 0,
                0 => n - each * (p - 2),
                _ => each,
            }
        }
    }
}

/// A forward and an adjoint apply of `op` on device vectors equal the host's (to `tol`), and the
/// dot test holds on the device.
pub(crate) fn check_op<T: Scalar>(t: &mut Tally, what: &str, op: &dyn LinearOperator<T>) {
    check_apply(t, what, op, true)
}

/// [`check_op`], the adjoint and the dot test only with `adjoint`.
pub(crate) fn check_apply<T: Scalar>(
    t: &mut Tally,
    what: &str,
    op: &dyn LinearOperator<T>,
    adjoint: bool,
) {
    let name = format!("{} {what}", T::DTYPE.name());
    let x = rand::<T>(op.cols(), 5, HOST);
    let y0 = rand::<T>(op.rows(), 6, HOST);
    let (dx, dy0) = (x.to_location(CUDA).unwrap(), y0.to_location(CUDA).unwrap());
    let mut hy = DistVector::<T>::new(op.rows().clone()).unwrap();
    let mut dy = DistVector::<T>::new_in(op.rows().clone(), CUDA).unwrap();
    let (eh, ed) = (op.apply(&x, &mut hy), op.apply(&dx, &mut dy));
    let ok = eh.is_ok() && ed.is_ok();
    t.check(
        ok,
        &format!("{name}: applies on host and device ({eh:?}, {ed:?})"),
    );
    if !ok {
        return;
    }
    let diff = rel_diff(&dy, &hy);
    t.check(
        dy.is_device() && diff <= tol::<T>(),
        &format!("{name}: device apply vs host (diff {diff:.1e})"),
    );
    if !adjoint {
        return;
    }
    let mut hz = DistVector::<T>::new(op.cols().clone()).unwrap();
    let mut dz = DistVector::<T>::new_in(op.cols().clone(), CUDA).unwrap();
    let (eh, ed) = (
        op.apply_adjoint(&y0, &mut hz),
        op.apply_adjoint(&dy0, &mut dz),
    );
    let ok = eh.is_ok() && ed.is_ok();
    t.check(
        ok,
        &format!("{name}: adjoint applies on host and device ({eh:?}, {ed:?})"),
    );
    if !ok {
        return;
    }
    let diff = rel_diff(&dz, &hz);
    t.check(
        dz.is_device() && diff <= tol::<T>(),
        &format!("{name}: device adjoint vs host (diff {diff:.1e})"),
    );
    let (p, q) = (dy.dot(&dy0).unwrap(), dx.dot(&dz).unwrap());
    let rel = (p - q).abs_f64() / p.abs_f64().max(q.abs_f64()).max(1e-300);
    t.check(
        rel <= 10.0 * tol::<T>(),
        &format!("{name}: device dot test <A x, y> = <x, A^H y> ({rel:.1e})"),
    );
}

/// A sparse, non-symmetric local-plus-neighbour matrix in CSR (square on `l`).
fn sparse<T: Scalar>(l: &Arc<Layout>) -> Op<T> {
    let n = l.global_len();
    let (s, m) = (l.local_start(), l.local_len());
    let (mut ip, mut ix, mut v) = (vec![0i64], Vec::new(), Vec::new());
    for i in s..s + m {
        for (j, a) in [(i - 3, -0.5), (i, 4.0 + (i % 5) as f64), (i + 7, -1.25)] {
            if (0..n).contains(&j) {
                ix.push(j);
                v.push(T::from_parts_lossy(a, 0.1 * (j % 3) as f64));
            }
        }
        ip.push(ix.len() as i64);
    }
    Arc::new(
        parlops::op::csr::CsrOp::from_local_rows(l.clone(), l.clone(), &ip, &ix, &v, Ok(()))
            .unwrap(),
    )
}

fn run<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    // N-D layouts split along axis 0, unevenly (an empty rank at 3 or more ranks)
    for shape in [vec![23i64], vec![13, 6], vec![9, 4, 3]] {
        let l = Layout::new_nd(
            comm.clone(),
            Ok(Partition::Scatter),
            &shape,
            0,
            uneven(comm, shape[0]),
        )
        .unwrap();
        for a in 0..shape.len() as i32 {
            for kind in [Kind::Centered, Kind::Forward, Kind::Backward] {
                let op = stencil::first_derivative::<T>(&l, a, 0.5, kind, true).unwrap();
                check_op(
                    t,
                    &format!("first derivative {shape:?} axis {a} {kind:?}"),
                    &op,
                );
            }
            let op = stencil::second_derivative::<T>(&l, a, 1.5, Kind::Centered, false).unwrap();
            check_op(t, &format!("second derivative {shape:?} axis {a}"), &op);
        }
        let nd = shape.len();
        let op = stencil::laplacian::<T>(&l, &vec![1.0; nd], &vec![0.5; nd]).unwrap();
        check_op(t, &format!("Laplacian {shape:?}"), &op);
        let op = stencil::gradient::<T>(&l, &vec![1.0; nd], Kind::Centered, true).unwrap();
        check_op(t, &format!("gradient {shape:?}"), &op);
        if nd <= 3 {
            let lp = Layout::new(
                comm.clone(),
                Partition::Scatter,
                l.global_len(),
                l.local_len(),
            )
            .unwrap();
            let op = Poisson::<T>::new(lp, &shape, Ok(())).unwrap();
            check_op(t, &format!("Poisson {shape:?}"), &op);
        }
    }

    let n = 57i64;
    let l = Layout::new(comm.clone(), Partition::Scatter, n, uneven(comm, n)).unwrap();
    let lw = Layout::new(comm.clone(), Partition::Scatter, 31, uneven(comm, 31)).unwrap();
    let a = sparse::<T>(&l);
    let mut dv = DistVector::<T>::new(l.clone()).unwrap();
    parlops::op::random_fill(&mut dv, 17);
    let d: Op<T> = Arc::new(Diagonal::new(&dv).unwrap());
    check_op::<T>(t, "identity", &Identity::new(l.clone()));
    check_op::<T>(t, "zero (rectangular)", &Zero::new(l.clone(), lw.clone()));
    check_op(t, "adjoint of CSR", &Adjoint::new(a.clone()));
    check_op(
        t,
        "conjugate of CSR",
        &Conjugate::new(a.clone(), false).unwrap(),
    );
    check_op(
        t,
        "transpose of CSR",
        &Conjugate::new(a.clone(), true).unwrap(),
    );
    check_op(t, "power (A D)^3", &{
        let ad: Op<T> = Arc::new(Product::new(a.clone(), d.clone()).unwrap());
        Power::new(ad, 3).unwrap()
    });
    check_op(
        t,
        "linear combination A - 2 D + A^H",
        &LinComb::new(vec![
            (T::one(), a.clone()),
            (T::real(-2.0), d.clone()),
            (T::one(), Arc::new(Adjoint::new(a.clone())) as Op<T>),
        ])
        .unwrap(),
    );
    // dense rows: this rank's rows of a 57 x 31 matrix
    let ne = DenseBlockRow::<T>::local_entries(&l, &lw).unwrap();
    let dense: Vec<T> = (0..ne)
        .map(|k| T::from_parts_lossy(((k * 7 + 3) % 11) as f64 - 5.0, (k % 4) as f64 * 0.25))
        .collect();
    let dn: Op<T> = Arc::new(DenseBlockRow::new(l.clone(), lw.clone(), dense).unwrap());
    check_op(t, "dense block rows 57 x 31", dn.as_ref());
    let u: Vec<DistVector<T>> = (0..3).map(|s| rand::<T>(&l, 40 + s, HOST)).collect();
    let ur: Vec<&DistVector<T>> = u.iter().collect();
    check_op(
        t,
        "low rank U diag(d) U^H",
        &LowRank::new(&ur, &[3.0, -1.0, 0.5]).unwrap(),
    );
    // block diagonal and vertical stack of every rank's local operators (PyLops-MPI's
    // MPIBlockDiag and MPIVStack), of sizes that differ between ranks
    let me = Arc::new(Comm::self_comm().unwrap());
    let r = comm.rank() as i64;
    let local = |m: i64, n: i64, seed: usize| -> Op<T> {
        let rows = Layout::new(me.clone(), Partition::Scatter, m, -1).unwrap();
        let cols = Layout::new(me.clone(), Partition::Scatter, n, -1).unwrap();
        let v: Vec<T> = (0..(m * n) as usize)
            .map(|k| T::from_parts_lossy(((k * 3 + seed) % 7) as f64 - 3.0, 0.5 * (k % 2) as f64))
            .collect();
        Arc::new(DenseBlockRow::new(rows, cols, v).unwrap())
    };
    check_op(
        t,
        "block diagonal of local dense blocks",
        &BlockDiag::new(comm, vec![local(4 + r, 3 + r, 1), local(2, 5, 2)]).unwrap(),
    );
    check_op(
        t,
        "vertical stack of local dense blocks",
        &VStack::new(comm, vec![local(3 + r, 4, 3), local(2, 4, 4)]).unwrap(),
    );
    let blocks: Op<T> = Arc::new(
        BlockOp::new(
            comm,
            2,
            2,
            vec![
                Some(a.clone()),
                Some(dn.clone()),
                None,
                Some(Arc::new(Identity::new(lw.clone()))),
            ],
        )
        .unwrap(),
    );
    check_op(t, "2 x 2 block operator [A, dense; 0, I]", blocks.as_ref());
    // (a preconditioner: forward only)
    check_apply(
        t,
        "block lower triangular solve with [D, I]",
        &BlockLower::new(
            blocks.clone(),
            vec![d.clone(), Arc::new(Identity::new(lw.clone()))],
        )
        .unwrap(),
        false,
    );
    // SUMMA: a 24 x 10 matrix times 10 x 3 blocks on the ranks' p x p grid (square rank counts)
    let q = (comm.size() as f64).sqrt().round() as i32;
    if q * q == comm.size() {
        let (sn, sk, sm) = (24i64, 10i64, 3i64);
        let la = local_a_len(comm, sn, sk);
        let sa: Vec<T> = (0..la)
            .map(|k| T::from_parts_lossy(((k * 5 + 1) % 9) as f64 - 4.0, 0.5))
            .collect();
        check_op(
            t,
            "SUMMA 24 x 10 (3 columns)",
            &Summa::new(comm, sn, sk, sm, &sa).unwrap(),
        );
    }
    // Fredholm1: this rank's slices of G (2 each, 5 x 4), m = 3
    let nsl = uneven(comm, 5);
    let g: Vec<T> = (0..(nsl * 5 * 4) as usize)
        .map(|k| T::from_parts_lossy((k % 7) as f64 - 3.0, 0.25 * (k % 2) as f64))
        .collect();
    check_op(
        t,
        "Fredholm1 (5 x 4 slices)",
        &Fredholm1::new(comm, nsl, 5, 4, 3, g).unwrap(),
    );
}

/// The catalogue in the four dtypes.
/// New values in a CSR matrix whose device copy was made before them (issue 32): the next device
/// apply reads the new values (the copy is made again), as the host's does; a stale copy fails the
/// device-against-host comparison.
fn updated_values<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    use parlops::op::csr::{CsrOp, NewValues};
    let n = 30i64;
    let l = Layout::new(comm.clone(), Partition::Scatter, n * n, uneven(comm, n * n)).unwrap();
    let (ip, ix, v) = crate::poisson_rows(&l, n, true);
    let old: Vec<T> = v.iter().map(|&a| T::from_parts_lossy(a, 0.0)).collect();
    let a = CsrOp::<T>::from_local_rows(l.clone(), l.clone(), &ip, &ix, &old, Ok(())).unwrap();
    check_op(t, "CSR before new values", &a);
    let new: Vec<T> = v
        .iter()
        .enumerate()
        .map(|(k, &a)| T::from_parts_lossy(a * (1.0 + 0.1 * (k % 5) as f64), 0.1 * (k % 3) as f64))
        .collect();
    let p = comm.agree(a.prepare_values(NewValues::Rows(&new))).unwrap();
    a.commit_values(p);
    check_op(t, "CSR after new values (device copy made again)", &a);
}

pub(crate) fn catalogue(t: &mut Tally, comm: &Arc<Comm>) {
    run::<f32>(t, comm);
    run::<f64>(t, comm);
    run::<c32>(t, comm);
    run::<c64>(t, comm);
    updated_values::<f64>(t, comm);
    updated_values::<c64>(t, comm);
}
