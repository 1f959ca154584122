//! Reductions of single-precision vectors against an independent double-precision reference: run
//! with `mpiexec -n P` (P = 1..4; `make test` does), on 10^8 entries split unevenly.
//!  - a dot of 10^8 f32 ones is exactly 10^8 (a sum kept in f32 stops at 2^24);
//!  - f32 and c64 dots, 1- and 2-norms of 10^8 random entries within 1e-6 relative of the
//!    reference: products in f64 and compensated (Neumaier) summation on each rank, combined in
//!    rank order here;
//!  - the same dot twice gives the same bits (the order of accumulation is fixed).
//!
//! Prints `N passed, M failed` on rank 0.

mod common;
use common::Tally;

use std::sync::Arc;

use parlops::comm::{Comm, ReduceOp};
use parlops::op::random_fill;
use parlops::vector::{DistVector, Layout, NormKind, Partition};
use parlops::{Scalar, c32};

const N: i64 = 100_000_000;

fn layout(comm: &Arc<Comm>) -> Arc<Layout> {
    let p = comm.size() as i64;
    let mut lens: Vec<i64> = (0..p)
        .map(|i| N / p + if i < N % p { 1 } else { 0 })
        .collect();
    if p > 1 {
        lens[0] -= 1_000_003;
        lens[p as usize - 1] += 1_000_003;
    }
    Layout::new(
        comm.clone(),
        Partition::Scatter,
        N,
        lens[comm.rank() as usize],
    )
    .unwrap()
}

/// Neumaier's compensated sum.
#[derive(Default)]
struct Sum {
    s: f64,
    c: f64,
}
impl Sum {
    fn add(&mut self, v: f64) {
        let t = self.s + v;
        if self.s.abs() >= v.abs() {
            self.c += (self.s - t) + v;
        } else {
            self.c += (v - t) + self.s;
        }
        self.s = t;
    }
    fn get(&self) -> f64 {
        self.s + self.c
    }
}

/// The global sum of each rank's `v` (compensated across ranks too).
fn global(comm: &Comm, v: &[f64]) -> Vec<f64> {
    let p = comm.size() as usize;
    let mut all = vec![0.0; v.len() * p];
    // gather every rank's values through a sum of disjoint slots
    let mut mine = vec![0.0; v.len() * p];
    mine[comm.rank() as usize * v.len()..(comm.rank() as usize + 1) * v.len()].copy_from_slice(v);
    all.copy_from_slice(&comm.allreduce_f64(&mine, ReduceOp::Sum).unwrap());
    (0..v.len())
        .map(|k| {
            let mut s = Sum::default();
            for r in 0..p {
                s.add(all[r * v.len() + k]);
            }
            s.get()
        })
        .collect()
}

fn run<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    let l = layout(comm);
    let name = T::DTYPE.name();
    {
        let mut x = DistVector::<T>::new(l.clone()).unwrap();
        x.fill(T::one()).unwrap();
        let d = x.dot(&x).unwrap().to_parts();
        t.check(
            d == (N as f64, 0.0),
            &format!("{name}: dot of 10^8 ones is 10^8 (got {:?})", d),
        );
    }
    let mut x = DistVector::<T>::new(l.clone()).unwrap();
    let mut y = DistVector::<T>::new(l.clone()).unwrap();
    random_fill(&mut x, 11);
    random_fill(&mut y, 12);
    // the reference
    let (mut dr, mut di, mut n1, mut n2) = (
        Sum::default(),
        Sum::default(),
        Sum::default(),
        Sum::default(),
    );
    for (a, b) in x.local().iter().zip(y.local()) {
        let (ar, ai) = a.to_parts();
        let (br, bi) = b.to_parts();
        dr.add(ar * br);
        dr.add(ai * bi);
        di.add(ar * bi);
        di.add(-ai * br);
        n1.add(a.abs_f64());
        n2.add(ar * ar);
        n2.add(ai * ai);
    }
    let g = global(comm, &[dr.get(), di.get(), n1.get(), n2.get()]);
    let (rd, rn1, rn2) = ((g[0], g[1]), g[2], g[3].sqrt());
    let d = x.dot(&y).unwrap().to_parts();
    let d2 = x.dot(&y).unwrap().to_parts();
    let mag = (rd.0 * rd.0 + rd.1 * rd.1).sqrt().max(1.0);
    let derr = ((d.0 - rd.0).powi(2) + (d.1 - rd.1).powi(2)).sqrt() / mag;
    let n1v = x.norm(NormKind::One).unwrap();
    let n2v = x.norm(NormKind::Two).unwrap();
    if comm.rank() == 0 {
        println!(
            "{name} at {} ranks: dot {:.9e} (reference {:.9e}, relative error {derr:.1e}); ||x||_1 error {:.1e}, ||x||_2 error {:.1e}",
            comm.size(),
            d.0,
            rd.0,
            (n1v - rn1).abs() / rn1,
            (n2v - rn2).abs() / rn2
        );
    }
    t.check(
        derr <= 1e-6,
        &format!("{name}: dot of 10^8 random entries within 1e-6 of the reference"),
    );
    t.check(
        (n1v - rn1).abs() <= 1e-6 * rn1,
        &format!("{name}: 1-norm within 1e-6"),
    );
    t.check(
        (n2v - rn2).abs() <= 1e-6 * rn2,
        &format!("{name}: 2-norm within 1e-6"),
    );
    t.check(
        d == d2,
        &format!("{name}: the same dot twice gives the same bits"),
    );
}

fn main() {
    let (comm, mut t) = common::start();
    run::<f32>(&mut t, &comm);
    run::<c32>(&mut t, &comm);
    common::finish("mpi_reduce", comm, t)
}
