//! The device SpMV on rows of every length it treats differently: empty rows, rows of a few entries
//! (many rows to a CUDA block, one thread each), of tens and hundreds (several threads a row), and
//! rows longer than a block's share of entries (a block to themselves), in runs of 7 so that blocks
//! mix them; forward, adjoint, inside a sum (y += A x) and the dot test, against the host product.

use std::sync::Arc;

use crate::common::Tally;
use crate::{CUDA, HOST, rand, rel_diff, tol};
use parlops::Scalar;
use parlops::comm::Comm;
use parlops::op::Op;
use parlops::op::compose::LinComb;
use parlops::op::csr::CsrOp;
use parlops::vector::{DistVector, Layout, Partition};

/// Global rows; the longest rows (2100 entries) span most of the columns, so every rank has a halo.
const N: i64 = 2400;
const LENS: [i64; 8] = [0, 1, 5, 37, 130, 300, 1100, 2100];

fn matrix<T: Scalar>(l: &Arc<Layout>) -> CsrOp<T> {
    let (mut ip, mut ix, mut v) = (vec![0i64], Vec::new(), Vec::new());
    for r in l.local_start()..l.local_start() + l.local_len() {
        let len = LENS[((r / 7) % 8) as usize];
        // consecutive columns from a start that moves with the row, wrapped: distinct, sorted after
        let mut cols: Vec<i64> = (0..len).map(|k| (r * 13 + k) % N).collect();
        cols.sort_unstable();
        for c in cols {
            ix.push(c);
            let re = 1.0 / (1.0 + ((r * 7 + c * 3) % 11) as f64);
            v.push(T::from_parts_lossy(re, 0.1 * ((r + c) % 5) as f64 - 0.2));
        }
        ip.push(ix.len() as i64);
    }
    CsrOp::from_local_rows(l.clone(), l.clone(), &ip, &ix, &v, Ok(())).unwrap()
}

pub(crate) fn shapes<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    let name = T::DTYPE.name();
    // uneven: rank r holds a share that grows with r, the last the rest
    let p = comm.size() as i64;
    let r = comm.rank() as i64;
    let unit = 2 * N / (p * (p + 1));
    let len = if r == p - 1 {
        N - unit * (p - 1) * p / 2
    } else {
        unit * (r + 1)
    };
    let l = Layout::new(comm.clone(), Partition::Scatter, N, len).unwrap();
    let a: Op<T> = Arc::new(matrix::<T>(&l));
    let sum: Op<T> = Arc::new(
        LinComb::new(vec![
            (T::from_parts_lossy(0.5, -1.0), a.clone()),
            (T::one(), a.clone()),
        ])
        .unwrap(),
    );
    let x = rand::<T>(&l, 11, HOST);
    let dx = x.to_location(CUDA).unwrap();
    for (oname, op) in [("row shapes", &a), ("row shapes, (0.5 - i) A + A", &sum)] {
        let mut y = DistVector::<T>::new(l.clone()).unwrap();
        let mut dy = DistVector::<T>::new_in(l.clone(), CUDA).unwrap();
        op.apply(&x, &mut y).unwrap();
        op.apply(&dx, &mut dy).unwrap();
        let diff = rel_diff(&dy, &y);
        t.check(
            dy.is_device() && diff <= tol::<T>(),
            &format!("{name} {oname}: device apply vs host (diff {diff:e})"),
        );
        let mut hz = DistVector::<T>::new(l.clone()).unwrap();
        let mut dz = DistVector::<T>::new_in(l.clone(), CUDA).unwrap();
        op.apply_adjoint(&x, &mut hz).unwrap();
        op.apply_adjoint(&dx, &mut dz).unwrap();
        let diff = rel_diff(&dz, &hz);
        t.check(
            diff <= tol::<T>(),
            &format!("{name} {oname}: device adjoint vs host (diff {diff:e})"),
        );
        let dyv = rand::<T>(&l, 12, CUDA);
        let mut ax = DistVector::<T>::new_in(l.clone(), CUDA).unwrap();
        let mut ahy = DistVector::<T>::new_in(l.clone(), CUDA).unwrap();
        op.apply(&dx, &mut ax).unwrap();
        op.apply_adjoint(&dyv, &mut ahy).unwrap();
        let (p, q) = (ax.dot(&dyv).unwrap(), dx.dot(&ahy).unwrap());
        let rel = (p - q).abs_f64() / p.abs_f64().max(q.abs_f64());
        t.check(
            rel <= 10.0 * tol::<T>(),
            &format!("{name} {oname}: device dot test ({rel:e})"),
        );
    }
}
