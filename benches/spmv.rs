//! CSR SpMV effective bandwidth on the 2D 5-point Laplacian, next to a STREAM triad measured in the
//! same run on the same ranks. Run with `make bench` (1 and 2 ranks), or
//! `mpiexec -n P target/release/deps/spmv-* [grid_n] [reps]`.
//!
//! Bytes counted per SpMV (the minimum an SpMV must move): values 8 nnz + column indices 4 nnz +
//! row pointers 4 (rows + 1) + x 8 rows (each entry read once) + y 8 rows. The triad counts
//! 24 bytes per element (STREAM's convention). Times are the median of `reps` runs, each the
//! slowest rank's.

use std::time::Instant;

use parlops::comm::{Comm, ReduceOp};
use parlops::op::LinearOperator;
use parlops::op::csr::CsrOp;
use parlops::vector::DistVector;

mod common;
use common::median;

/// Time `f` on every rank together; the slowest rank's time, median over `reps`.
fn timed(comm: &Comm, reps: usize, mut f: impl FnMut()) -> f64 {
    let mut ts = Vec::with_capacity(reps);
    for _ in 0..reps {
        comm.barrier().unwrap();
        let t = Instant::now();
        f();
        let dt = t.elapsed().as_secs_f64();
        ts.push(comm.allreduce_f64(&[dt], ReduceOp::Max).unwrap()[0]);
    }
    median(&mut ts)
}

fn main() {
    let (comm, args) = common::start();
    let n: i64 = common::arg(&args, 1, 1000);
    let reps: usize = common::arg(&args, 2, 30);
    let (rank, p) = (comm.rank(), comm.size());

    // STREAM triad on 3 arrays of 2^24 doubles per rank (400 MB in all per rank: far beyond cache)
    let m = 1usize << 24;
    let (mut a, b, c) = (vec![0.0f64; m], vec![1.0f64; m], vec![2.0f64; m]);
    let triad = timed(&comm, reps.min(10), || {
        for ((x, y), z) in a.iter_mut().zip(&b).zip(&c) {
            *x = y + 3.0 * z;
        }
        std::hint::black_box(&a);
    });
    let triad_bw = 24.0 * (m * p as usize) as f64 / triad;
    drop((a, b, c));

    // the Laplacian, each rank assembling its rows
    let (l, ip, ix, v) = common::laplacian_2d(&comm, n);
    let a = CsrOp::<f64>::from_local_rows(l.clone(), l.clone(), &ip, &ix, &v, Ok(())).unwrap();
    let nnz_local = ix.len();
    let mut x = DistVector::<f64>::new(l.clone()).unwrap();
    x.fill(1.0).unwrap();
    let mut y = DistVector::<f64>::new(l.clone()).unwrap();
    for _ in 0..3 {
        a.apply(&x, &mut y).unwrap();
    }
    // the same matrix stored row by row (PARLOPS_CSR_LAYOUT=rows), and both with p.q in the pass,
    // as CG runs it: interleaved, medians
    // SAFETY: `set_var` races only with environment reads on other threads: this bench runs no
    // thread of its own, parlops starts none on the host, and MPI's helper threads read the
    // environment during `MPI_Init`, before this point.
    unsafe { std::env::set_var("PARLOPS_CSR_LAYOUT", "rows") };
    let rows_op =
        CsrOp::<f64>::from_local_rows(l.clone(), l.clone(), &ip, &ix, &v, Ok(())).unwrap();
    // SAFETY: as above: no other thread of this process reads the environment at this point.
    unsafe { std::env::remove_var("PARLOPS_CSR_LAYOUT") };
    let (mut t, mut t_rows, mut t_dot, mut t_rows_dot) = (vec![], vec![], vec![], vec![]);
    for _ in 0..reps {
        t.push(timed(&comm, 1, || a.apply(&x, &mut y).unwrap()));
        t_rows.push(timed(&comm, 1, || rows_op.apply(&x, &mut y).unwrap()));
        t_dot.push(timed(&comm, 1, || {
            a.apply_dot(&x, &mut y).unwrap();
        }));
        t_rows_dot.push(timed(&comm, 1, || {
            rows_op.apply_dot(&x, &mut y).unwrap();
        }));
    }
    let (t, t_rows) = (median(&mut t), median(&mut t_rows));
    let (t_dot, t_rows_dot) = (median(&mut t_dot), median(&mut t_rows_dot));
    let nnz = comm
        .allreduce_f64(&[nnz_local as f64], ReduceOp::Sum)
        .unwrap()[0];
    let rows = (n * n) as f64;
    let bytes = 12.0 * nnz + 4.0 * (rows + p as f64) + 16.0 * rows;
    let spmv_bw = bytes / t;
    let ta = timed(&comm, reps, || a.apply_adjoint(&y, &mut x).unwrap());
    let adj_bw = bytes / ta;
    if rank == 0 {
        println!(
            "ranks {p}, 2D Laplacian {n}x{n} ({} rows, {} nonzeros)",
            n * n,
            nnz as i64
        );
        println!("  STREAM triad      {:8.2} GB/s", triad_bw / 1e9);
        println!(
            "  CSR SpMV          {:8.2} GB/s  {:8.3} ms  ratio to triad {:.2}",
            spmv_bw / 1e9,
            t * 1e3,
            spmv_bw / triad_bw
        );
        println!(
            "  rows one by one   {:8.2} GB/s  {:8.3} ms  chunked / row by row {:.3}",
            bytes / t_rows / 1e9,
            t_rows * 1e3,
            t / t_rows
        );
        println!(
            "  with p.q: chunked {:8.3} ms, row by row {:8.3} ms, ratio {:.3}",
            t_dot * 1e3,
            t_rows_dot * 1e3,
            t_dot / t_rows_dot
        );
        println!(
            "  CSR SpMV adjoint  {:8.2} GB/s  {:8.3} ms  ratio to triad {:.2}",
            adj_bw / 1e9,
            ta * 1e3,
            adj_bw / triad_bw
        );
    }
    drop((a, x, y, l, comm));
    parlops::comm::finalize().unwrap();
}
