//! `--bench`: device SpMV and CG iteration against a device-to-device copy measured in the same run
//! (the bandwidth table of `make gpu-check`).

use std::sync::Arc;
use std::time::Instant;

use crate::common::Tally;
use crate::{CUDA, csr, rand};
use parlops::Scalar;
use parlops::comm::Comm;
use parlops::comm::ReduceOp;
use parlops::op::{LinearOperator, Op};
use parlops::solver::{Method, Solver};
use parlops::vector::{DistVector, Layout, Partition};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Slowest rank's time of `f`, median of `reps`.
fn timed(comm: &Comm, reps: usize, mut f: impl FnMut()) -> f64 {
    let mut ts = Vec::new();
    for _ in 0..reps {
        comm.barrier().unwrap();
        let t0 = Instant::now();
        f();
        let dt = t0.elapsed().as_secs_f64();
        ts.push(comm.allreduce_f64(&[dt], ReduceOp::Max).unwrap()[0]);
    }
    median(ts)
}

/// Device SpMV and CG iteration bandwidth against a same-run device copy, on the n x n Poisson matrix.
pub(crate) fn bench<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>, n: i64) {
    let name = T::DTYPE.name();
    let l = Layout::new(comm.clone(), Partition::Scatter, n * n, -1).unwrap();
    let a = csr::<T>(&l, n, false);
    let rows = l.local_len() as f64;
    let nnz = {
        let b = a.blocks();
        b.diag.nnz() as f64 + b.offd.nnz() as f64
    };
    let sz = std::mem::size_of::<T>() as f64;
    let p = comm.size() as f64;
    let x = rand::<T>(&l, 5, CUDA);
    let mut y = DistVector::<T>::new_in(l.clone(), CUDA).unwrap();
    // copy: read + write of one vector (16 bytes per f64 entry)
    let reps = 20;
    y.copy_from(&x).unwrap();
    y.sync().unwrap();
    // several back-to-back runs per timing, so that launch and synchronisation costs do not hide the
    // bandwidth at small sizes (about 2 GB moved per timing)
    let inner = ((2e9 / (2.0 * rows * sz)) as usize).clamp(1, 200);
    let tc = timed(comm, reps, || {
        for _ in 0..inner {
            y.copy_from(&x).unwrap();
        }
        y.sync().unwrap();
    }) / inner as f64;
    let copy_bw = 2.0 * rows * sz * p / tc;
    // SpMV: values + 4-byte column indices + row pointers + x read once + y written
    a.apply(&x, &mut y).unwrap();
    y.sync().unwrap();
    let ts = timed(comm, reps, || {
        for _ in 0..inner {
            a.apply(&x, &mut y).unwrap();
        }
        y.sync().unwrap();
    }) / inner as f64;
    let spmv_bytes = nnz * (sz + 4.0) + (rows + 1.0) * 4.0 + 2.0 * rows * sz;
    let spmv_bw = spmv_bytes * p / ts;
    // CG: iterations at a fixed count (rtol 0); per iteration the SpMV plus the 10 vector passes of
    // the device loop (src/solver/cg.rs, plain CG with x's update deferred): p.q (2 reads), the
    // fused r -= a q with |r|^2 (2 reads, 1 write), the fused x += a p, p = r + b p (3 reads, 2 writes)
    let op: Op<T> = Arc::new(a);
    let its = 50;
    let mut s = Solver::<T>::new(Method::Cg);
    s.set_operator(op.clone()).unwrap();
    s.params.rtol = 0.0;
    s.params.atol = 0.0;
    s.params.max_iter = its;
    let b = rand::<T>(&l, 6, CUDA);
    let mut xs = DistVector::<T>::new_in(l.clone(), CUDA).unwrap();
    let mut got = 0;
    let tcg = timed(comm, 3, || {
        got = s.solve(&b, &mut xs).unwrap().iterations;
    });
    let it_t = tcg / got.max(1) as f64;
    let cg_bytes = spmv_bytes + 10.0 * rows * sz;
    let cg_bw = cg_bytes * p / it_t;
    // a working set within a few times the L2 cache (50 MB on an H100 or H200) is served partly from
    // it: those rates are not memory bandwidths (and the copy there is bound by launches)
    let set_mb = spmv_bytes * p / 1e6;
    let note = if set_mb < 1000.0 {
        format!(" (working set {set_mb:.0} MB, within cache reach: not a memory bandwidth)")
    } else {
        String::new()
    };
    if comm.rank() == 0 {
        println!(
            "| bandwidth | {name} | {}{note} | copy {:.0} GB/s | SpMV {:.0} GB/s ({:.2} of copy) | CG iteration {:.0} GB/s ({:.2} of copy), {:.3} ms/it |",
            n * n,
            copy_bw / 1e9,
            spmv_bw / 1e9,
            spmv_bw / copy_bw,
            cg_bw / 1e9,
            cg_bw / copy_bw,
            it_t * 1e3
        );
    }
    if n * n >= 50_000_000 {
        t.check(
            spmv_bw >= 0.7 * copy_bw,
            &format!(
                "{name} SpMV at {} unknowns reaches 70% of the copy bandwidth",
                n * n
            ),
        );
        t.check(
            cg_bw >= 0.7 * copy_bw,
            &format!(
                "{name} CG iteration at {} unknowns reaches 70% of the copy bandwidth",
                n * n
            ),
        );
    }
}
