//! Reductions of single-precision vectors against an independent double-precision reference: run
//! with `mpiexec -n P` (P = 1..4; `make test` does), on 10^8 entries split unevenly.
//!  - a dot of 10^8 f32 ones is exactly 10^8 (a sum kept in f32 stops at 2^24);
//!  - f32 and c64 dots, 1- and 2-norms of 10^8 random entries within 1e-6 relative of the
//!    reference: products in f64 and compensated (Neumaier) summation on each rank, combined in
//!    rank order here;
//!  - the same dot twice gives the same bits (the order of accumulation is fixed);
//!  - seeded random vectors (uniform, Gaussian, Rademacher): bitwise the same global vector at any
//!    rank count and split as made on one rank, moments of 10^6 samples within 3 sigma.
//!
//! Prints `N passed, M failed` on rank 0.

use crate::common;
use common::Tally;

use std::sync::Arc;

use parlops::comm::{Comm, ReduceOp};
use parlops::op::random_fill;
use parlops::vector::random::Distribution;
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

/// Seeded random vectors: the same global vector whatever the number of ranks and the split
/// (compared bitwise with the vector made on this rank alone), and the moments of 10^6 samples
/// within 3 sigma of the distribution's.
fn random_vectors(t: &mut Tally, comm: &Arc<Comm>) {
    let n: i64 = 1_000_000;
    let p = comm.size() as i64;
    let mut lens: Vec<i64> = (0..p)
        .map(|i| n / p + if i < n % p { 1 } else { 0 })
        .collect();
    if p > 1 {
        lens[0] -= 1234;
        lens[p as usize - 1] += 1234;
    }
    let l = Layout::new(
        comm.clone(),
        Partition::Scatter,
        n,
        lens[comm.rank() as usize],
    )
    .unwrap();
    let me = Arc::new(Comm::self_comm().unwrap());
    let whole = Layout::new(me, Partition::Scatter, n, n).unwrap();
    // (distribution, mean, variance) of each part
    for (d, mean, var) in [
        (Distribution::Uniform, 0.5, 1.0 / 12.0),
        (Distribution::Gaussian, 0.0, 1.0),
        (Distribution::Rademacher, 0.0, 1.0),
    ] {
        let mut v = DistVector::<f64>::new(l.clone()).unwrap();
        v.set_random(d, 42).unwrap();
        let mut all = vec![0.0; n as usize];
        v.gather(-1, Some(&mut all), Ok(())).unwrap();
        let mut w = DistVector::<f64>::new(whole.clone()).unwrap();
        w.set_random(d, 42).unwrap();
        let same = all
            .iter()
            .zip(w.local())
            .all(|(a, b)| a.to_bits() == b.to_bits());
        t.check(
            same,
            &format!("{d:?}: the same global vector at {p} ranks as on one"),
        );
        let m = all.iter().sum::<f64>() / n as f64;
        let s2 = all.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n as f64 - 1.0);
        // sigma of the sample mean: sqrt(var/n); of the sample variance: sqrt((mu4 - var^2)/n)
        let mu4 = match d {
            Distribution::Uniform => 1.0 / 80.0,
            Distribution::Gaussian => 3.0,
            Distribution::Rademacher => 1.0,
        };
        let (sm, sv) = (
            (var / n as f64).sqrt(),
            ((mu4 - var * var) / n as f64).sqrt(),
        );
        if comm.rank() == 0 {
            println!(
                "{d:?}: mean {m:.5} (expected {mean}, sigma {sm:.1e}), variance {s2:.5} (expected {var:.5}, sigma {sv:.1e})"
            );
        }
        t.check(
            (m - mean).abs() <= 3.0 * sm,
            &format!("{d:?}: mean within 3 sigma"),
        );
        if d == Distribution::Rademacher {
            // the variance of x^2 is 0: every entry is +1 or -1
            t.check(
                all.iter().all(|x| x.abs() == 1.0),
                "Rademacher: every entry is +1 or -1",
            );
        } else {
            t.check(
                (s2 - var).abs() <= 3.0 * sv,
                &format!("{d:?}: variance within 3 sigma"),
            );
        }
        let other = {
            let mut u = DistVector::<f64>::new(l.clone()).unwrap();
            u.set_random(d, 43).unwrap();
            u.local() != v.local()
        };
        t.check(other, &format!("{d:?}: another seed, another vector"));
    }
    // complex: both parts drawn, independently of each other
    let mut z = DistVector::<c32>::new(l.clone()).unwrap();
    z.set_random(Distribution::Gaussian, 7).unwrap();
    let (re, im): (Vec<f64>, Vec<f64>) = z.local().iter().map(|v| v.to_parts()).unzip();
    t.check(
        re != im && im.iter().any(|v| *v != 0.0),
        "complex: real and imaginary parts drawn apart",
    );
}

pub fn main() {
    let (comm, mut t) = common::start();
    run::<f32>(&mut t, &comm);
    run::<c32>(&mut t, &comm);
    random_vectors(&mut t, &comm);
    common::finish("mpi_reduce", comm, t)
}
