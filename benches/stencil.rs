//! The matrix-free stencils (PyLops' derivatives, Laplacian and gradient) against their assembled
//! CSR matrices (issue 36: each at most 0.6 times the assembled version's time, and equal to it).
//! The matrices are built from PyLops' coefficients as tests/mpi_operators/stencil_csr.rs builds
//! them (shared, not copied); the products are compared first (the same bits: at one rank in the
//! default order, at more in the reproducible one, as tests/mpi_operators.rs checks), then timed
//! in interleaved rounds of `k` products each, each round's own ratio, medians. Bytes a row: the
//! stencil reads x and writes y (8 + 8 per output block, double), CSR also reads its values and
//! column indices (8 + 4 a stored entry here: 32-bit local indices) and the row pointers. Each
//! round also times STREAM's scale (one read and one write, like the stencil) and triad (like CSR's
//! mix of reads) on arrays far beyond cache, so the bandwidths are read against the same minutes.
//! Run with `make bench-stencil` (1 and 2 ranks), or `mpiexec -n P target/release/deps/stencil-*
//! [n2] [rounds] [k]` (n2: the 2-D grid's side, 3000 by default: 9M points, x and y far beyond the
//! last-level cache, as a count of DRAM bytes needs; the 3-D grid has about as many points).

use std::sync::Arc;

use parlops::comm::{Comm, ReduceOp};
use parlops::op::LinearOperator;
use parlops::op::stencil::{self, Kind};
use parlops::vector::{DistVector, Layout, Partition};

#[allow(dead_code)]
mod common;
use common::{median, timed};

#[path = "../tests/mpi_operators/stencil_csr.rs"]
#[allow(dead_code)]
mod stencil_csr;
use stencil_csr::{AxisTerms, assemble};

fn fill(v: &mut DistVector<f64>) {
    let s = v.layout().local_start();
    for (k, e) in v.local_mut().iter_mut().enumerate() {
        *e = (((s + k as i64) as f64) * 0.37 + 0.1).sin();
    }
}

fn same(comm: &Comm, a: &DistVector<f64>, b: &DistVector<f64>) -> bool {
    let bad = a
        .local()
        .iter()
        .zip(b.local())
        .filter(|(u, v)| u != v)
        .count();
    comm.allreduce_f64(&[bad as f64], ReduceOp::Sum).unwrap()[0] == 0.0
}

fn main() {
    let (comm, args) = common::start();
    let n2: i64 = common::arg(&args, 1, 3000);
    let rounds: usize = common::arg(&args, 2, 7);
    let k: usize = common::arg(&args, 3, 20);
    let n3 = ((n2 * n2) as f64).cbrt().round() as i64;
    let p = comm.size() as i64;
    let layout = |shape: &[i64]| -> Arc<Layout> {
        Layout::new_nd(comm.clone(), Ok(Partition::Scatter), shape, 0, -1).unwrap()
    };
    let (l2, l3) = (layout(&[n2, n2]), layout(&[n3, n3, n3]));
    type Case = (String, Box<dyn LinearOperator<f64>>, Vec<Vec<AxisTerms>>);
    let mut cases: Vec<Case> = Vec::new();
    for a in 0..2 {
        let op =
            stencil::first_derivative::<f64>(&l2, a as i32, 0.5, Kind::Centered, true).unwrap();
        let t: AxisTerms = (a, stencil::first_coeffs, Kind::Centered, true, 0.5, 1.0);
        cases.push((
            format!("first derivative {n2}^2 axis {a}"),
            Box::new(op),
            vec![vec![t]],
        ));
    }
    let op = stencil::second_derivative::<f64>(&l2, 1, 0.5, Kind::Centered, false).unwrap();
    let t: AxisTerms = (1, stencil::second_coeffs, Kind::Centered, false, 0.5, 1.0);
    cases.push((
        format!("second derivative {n2}^2 axis 1"),
        Box::new(op),
        vec![vec![t]],
    ));
    for (l, nd, name) in [(&l2, 2, format!("{n2}^2")), (&l3, 3, format!("{n3}^3"))] {
        let ones = vec![1.0; nd];
        let op = stencil::laplacian::<f64>(l, &ones, &ones).unwrap();
        let block: Vec<AxisTerms> = (0..nd)
            .map(|a| {
                let t: AxisTerms = (a, stencil::second_coeffs, Kind::Centered, false, 1.0, 1.0);
                t
            })
            .collect();
        cases.push((format!("Laplacian {name}"), Box::new(op), vec![block]));
    }
    let op = stencil::gradient::<f64>(&l2, &[1.0, 1.0], Kind::Centered, false).unwrap();
    let blocks: Vec<Vec<AxisTerms>> = (0..2)
        .map(|a| {
            let t: AxisTerms = (a, stencil::first_coeffs, Kind::Centered, false, 1.0, 1.0);
            vec![t]
        })
        .collect();
    cases.push((format!("gradient {n2}^2"), Box::new(op), blocks));

    // STREAM's triad (a = b + 3 c, 24 bytes an entry) and scale (a = 3 b, 16: one read and one
    // write, as the stencil's), per rank on 2^23 doubles (far beyond cache), timed in every round
    let m = 1usize << 23;
    let (mut sa, sb, sc) = (vec![0.0f64; m], vec![1.0f64; m], vec![2.0f64; m]);
    let mut stream = |tri: bool| -> f64 {
        let t = timed(&comm, || {
            if tri {
                for ((x, y), z) in sa.iter_mut().zip(&sb).zip(&sc) {
                    *x = y + 3.0 * z;
                }
            } else {
                for (x, y) in sa.iter_mut().zip(&sb) {
                    *x = 3.0 * y;
                }
            }
            std::hint::black_box(&sa);
        });
        (if tri { 24.0 } else { 16.0 }) * (m as f64) * p as f64 / t * 1e-9
    };
    let mut worst: f64 = 0.0;
    for (name, op, blocks) in &cases {
        let csr = assemble::<f64>(op.rows(), op.cols(), blocks);
        let nnz = comm
            .allreduce_f64(
                &[(csr.local_nnz().0 + csr.local_nnz().1) as f64],
                ReduceOp::Sum,
            )
            .unwrap()[0];
        let mut x = DistVector::<f64>::new(op.cols().clone()).unwrap();
        fill(&mut x);
        let mut y1 = DistVector::<f64>::new(op.rows().clone()).unwrap();
        let mut y2 = y1.duplicate().unwrap();
        // the same bits first
        {
            let _order = (p > 1).then(parlops::vector::ops::SumOrder::reproducible);
            csr.apply(&x, &mut y1).unwrap();
            op.apply(&x, &mut y2).unwrap();
        }
        assert!(
            same(&comm, &y1, &y2),
            "{name}: the stencil's product differs from the assembled matrix's"
        );
        let (mut ts, mut tc, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
        let (mut tri, mut sca) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            tri.push(stream(true));
            sca.push(stream(false));
            let s = timed(&comm, || {
                for _ in 0..k {
                    op.apply(&x, &mut y2).unwrap();
                }
            }) / k as f64;
            let c = timed(&comm, || {
                for _ in 0..k {
                    csr.apply(&x, &mut y1).unwrap();
                }
            }) / k as f64;
            ts.push(s * 1e3);
            tc.push(c * 1e3);
            ratio.push(s / c);
        }
        let (ms, mc, r) = (median(&mut ts), median(&mut tc), median(&mut ratio));
        worst = worst.max(r);
        let rows = op.rows().global_len() as f64;
        let cols = op.cols().global_len() as f64;
        // bytes: stencil x + y; CSR x + y + 12 a stored entry + 8 a row pointer
        let (bs, bc) = (
            8.0 * (rows + cols),
            8.0 * (rows + cols) + 12.0 * nnz + 8.0 * rows,
        );
        let (gt, gs) = (median(&mut tri), median(&mut sca));
        if comm.rank() == 0 {
            println!(
                "stencil vs CSR at {} rank(s): {name}: stencil {ms:.3} ms ({:.1} GB/s, {:.2} of STREAM \
                 scale's {gs:.1}), assembled CSR {mc:.3} ms ({:.1} GB/s, {:.2} of the triad's {gt:.1}; \
                 {:.1} entries a row), ratio {r:.2} (median of {rounds} rounds of {k})",
                comm.size(),
                bs / ms * 1e-6,
                bs / ms * 1e-6 / gs,
                bc / mc * 1e-6,
                bc / mc * 1e-6 / gt,
                nnz / rows
            );
        }
    }
    if comm.rank() == 0 {
        println!(
            "stencil vs CSR at {} rank(s): the largest ratio {worst:.2} (issue 36 asks at most 0.6); \
             every product equal to the assembled matrix's",
            comm.size()
        );
    }
    drop(comm);
    parlops::comm::finalize().unwrap();
}
