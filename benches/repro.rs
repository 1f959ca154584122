//! The reproducible sum order's cost (issue 35, section 4): CG on the 2D 5-point Laplacian
//! (1000^2 rows by default) with PARLOPS_SUM_REPRODUCIBLE next to the default blocked order, in
//! interleaved rounds of a fixed number of iterations (rtol 0), each round's own ratio; the median
//! ratio is the cost per iteration. Also a dot product alone, binned against blocked. Run with
//! `make bench-repro` (1 and 2 ranks), or `mpiexec -n P target/release/deps/repro-* [grid_n]
//! [rounds] [iterations]`.

use parlops::op::csr::CsrOp;
use parlops::solver::{Method, Solver, SumOrder};
use parlops::vector::{DistVector, dots};

mod common;
use common::{median, timed};

fn main() {
    let (comm, args) = common::start();
    let n: i64 = common::arg(&args, 1, 1000);
    let rounds: usize = common::arg(&args, 2, 7);
    let k: i64 = common::arg(&args, 3, 50);
    let (rows, ip, ix, v) = common::laplacian_2d(&comm, n);
    let op = std::sync::Arc::new(
        CsrOp::from_local_rows(rows.clone(), rows.clone(), &ip, &ix, &v, Ok(())).unwrap(),
    );
    let mut b = DistVector::<f64>::new(rows.clone()).unwrap();
    b.local_mut().fill(1.0);
    let solver = |order: SumOrder| {
        let mut s = Solver::<f64>::new(Method::Cg);
        s.set_operator(op.clone()).unwrap();
        s.params.sum_order = order;
        s.params.rtol = 0.0;
        s.params.atol = 0.0;
        s.params.max_iter = k;
        s
    };
    let (mut blocked, mut repro) = (solver(SumOrder::Blocked), solver(SumOrder::Reproducible));
    let mut x = DistVector::<f64>::new(rows.clone()).unwrap();
    let mut one = |s: &mut Solver<f64>| {
        x.local_mut().fill(0.0);
        let info = s.solve(&b, &mut x).unwrap();
        assert_eq!(
            info.iterations, k,
            "a round ran {} iterations",
            info.iterations
        );
    };
    one(&mut blocked);
    one(&mut repro);
    let (mut tb, mut tr, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let a = timed(&comm, || one(&mut blocked));
        let r = timed(&comm, || one(&mut repro));
        tb.push(a / k as f64 * 1e3);
        tr.push(r / k as f64 * 1e3);
        ratio.push(r / a);
    }
    // the dot product alone: 20 dots a round
    let mut y = DistVector::<f64>::new(rows.clone()).unwrap();
    y.local_mut().fill(0.5);
    let dot_round = |rep: bool| {
        let _g = rep.then(parlops::vector::ops::SumOrder::reproducible);
        timed(&comm, || {
            for _ in 0..20 {
                dots(&comm, &[(&b, &y)], Ok(())).unwrap();
            }
        }) / 20.0
            * 1e3
    };
    let mut dratio = Vec::new();
    for _ in 0..rounds {
        let a = dot_round(false);
        let r = dot_round(true);
        dratio.push(r / a);
    }
    if comm.rank() == 0 {
        println!(
            "reproducible CG at {} rank(s), {} rows, {k} iterations a round, {rounds} rounds: \
             blocked {:.3} ms/it, reproducible {:.3} ms/it, ratio (median of each round's) {:.3}; \
             a dot product alone: ratio {:.2}",
            comm.size(),
            n * n,
            median(&mut tb),
            median(&mut tr),
            median(&mut ratio),
            median(&mut dratio)
        );
    }
    drop(comm);
    parlops::comm::finalize().unwrap();
}
