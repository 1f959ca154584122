//! Where CG's and pipelined CG's time goes: each method's passes timed alone and the solvers
//! themselves, interleaved in one run on the same 2D 5-point Laplacian (`benches/NOTES.md`, items 26
//! and 31). Run with `make bench-passes` (1 and 2 ranks), or
//! `mpiexec -n P target/release/deps/passes-* [grid_n] [rounds] [iterations]`.
//!
//! Every round times each variant over `iterations` repetitions (the slowest rank's time), in an
//! order that rotates from round to round; the table gives the median time per repetition and the
//! median of each round's own ratio to CG's iteration (its passes and its two reductions). Bytes a
//! row each vector pass must move, counting a written entry's read for ownership: CG's residual and
//! step passes 64 (r 16, q 8, x 16, p 16, r 8); pipelined CG's update from an n in memory 88 (r,
//! s, z 48, w 16, n 8, p and x 32 every second pass); a whole iteration 88 a row besides the matrix
//! for CG (p 8 and q 16 in the product, then the 64), 80 for pipelined CG (w 8 in the product, the
//! update's 80 less n, which stays in the cache when streamed, and less w's read).

use std::sync::Arc;
use std::time::Instant;

use parlops::comm::{Comm, ReduceOp};
use parlops::op::csr::CsrOp;
use parlops::op::{LinearOperator, Op};
use parlops::solver::{Method, Solver};
use parlops::vector::fused::{self, XStep};
use parlops::vector::{DistVector, Layout};

mod common;
use common::median;

/// `k` runs of `f` on every rank together: the slowest rank's time per run, in ms.
fn timed(comm: &Comm, k: usize, f: &mut dyn FnMut()) -> f64 {
    comm.barrier().unwrap();
    let t = Instant::now();
    for _ in 0..k {
        f();
    }
    let dt = t.elapsed().as_secs_f64() / k as f64 * 1e3;
    comm.allreduce_f64(&[dt], ReduceOp::Max).unwrap()[0]
}

/// A vector of `l` with smooth values of magnitude at most 1 (none zero in bulk).
fn filled(l: &Arc<Layout>, seed: f64) -> DistVector<f64> {
    let mut v = DistVector::new(l.clone()).unwrap();
    let s = l.local_start() as f64;
    for (j, e) in v.local_mut().iter_mut().enumerate() {
        *e = ((s + j as f64) * 0.37 + seed).sin();
    }
    v
}

const NAMES: [&str; 10] = [
    "CG: product with p.q, residual, step, 2 reductions",
    "CG: the same without the reductions",
    "CG: the product with p.q alone",
    "CG: residual and step passes alone",
    "pipelined: product streamed into the update, reduction polled",
    "pipelined: product, then the update",
    "pipelined: the product alone",
    "pipelined: the update alone (n from memory)",
    "solver: CG",
    "solver: pipelined CG",
];

fn main() {
    let (comm, args) = common::start();
    let m: i64 = common::arg(&args, 1, 1000);
    let rounds: usize = common::arg(&args, 2, 21);
    let k: usize = common::arg(&args, 3, 60);

    let (l, ip, ix, v) = common::laplacian_2d(&comm, m);
    let op = Arc::new(
        CsrOp::<f64>::from_local_rows(l.clone(), l.clone(), &ip, &ix, &v, Ok(())).unwrap(),
    );
    let dyn_op: Op<f64> = op.clone();
    let mut solvers: Vec<Solver<f64>> = [Method::Cg, Method::CgPipelined]
        .into_iter()
        .map(|method| {
            let mut s = Solver::<f64>::new(method);
            (s.params.rtol, s.params.atol, s.params.max_iter) = (0.0, 0.0, k as i64);
            s.set_operator(dyn_op.clone()).unwrap();
            s
        })
        .collect();
    let b = filled(&l, 1.0);
    let mut xs = DistVector::<f64>::new(l.clone()).unwrap();
    let [mut x, mut r, mut p, mut q, mut w, mut n, mut sv, mut z] =
        [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8].map(|seed| filled(&l, seed));
    // small steps keep every vector bounded over any number of repetitions
    let (alpha, beta) = (1e-9, 0.5);
    // pipelined passes alternate as in the solver: p and x left alone, then both steps at once
    let mut later = false;
    let mut step = move || {
        later = !later;
        if later {
            XStep::Later
        } else {
            XStep::Both(alpha, beta)
        }
    };

    let mut t = vec![Vec::with_capacity(rounds); NAMES.len()];
    let mut ratio = vec![Vec::with_capacity(rounds); NAMES.len()];
    for round in 0..rounds {
        let mut row = [0.0; NAMES.len()];
        for o in 0..NAMES.len() {
            let i = (o + round) % NAMES.len();
            let cg = &mut |reduce: bool| {
                let pq = op.apply_dot(&p, &mut q).unwrap().unwrap();
                if reduce {
                    comm.allreduce_f64(&[pq.0], ReduceOp::Sum).unwrap();
                }
                let rr = fused::cg_residual(alpha, &mut r, &q).unwrap();
                if reduce {
                    comm.allreduce_f64(&[rr], ReduceOp::Sum).unwrap();
                }
                fused::cg_step(&mut x, alpha, &mut p, &r, beta).unwrap();
            };
            row[i] = match i {
                0 => timed(&comm, k, &mut || cg(true)),
                1 => timed(&comm, k, &mut || cg(false)),
                2 => timed(&comm, k, &mut || {
                    std::hint::black_box(op.apply_dot(&p, &mut q).unwrap());
                }),
                3 => timed(&comm, k, &mut || {
                    fused::cg_residual(alpha, &mut r, &q).unwrap();
                    fused::cg_step(&mut x, alpha, &mut p, &r, beta).unwrap();
                }),
                4 => timed(&comm, k, &mut || {
                    let mut u =
                        fused::pipe_rows(&mut x, &mut r, &mut p, &mut sv, &mut z, step()).unwrap();
                    let mut red = Some(comm.iallreduce_checked(Ok(vec![1.0; 4]), 4).unwrap());
                    op.apply_streamed(
                        &mut w,
                        &mut n,
                        &mut |wait| {
                            let Some(pending) = red.as_mut() else {
                                return Ok(Some(false));
                            };
                            if !wait && !pending.test()? {
                                return Ok(None);
                            }
                            red.take().unwrap().finish(&comm)?;
                            Ok(Some(true))
                        },
                        &mut |start, nv, ws| u.rows(start, nv, ws, alpha, beta),
                    )
                    .unwrap();
                    std::hint::black_box(fused::pipe_shares(&u, &l));
                }),
                6 => timed(&comm, k, &mut || op.apply(&w, &mut n).unwrap()),
                5 | 7 => timed(&comm, k, &mut || {
                    if i == 5 {
                        op.apply(&w, &mut n).unwrap();
                    }
                    let mut u =
                        fused::pipe_rows(&mut x, &mut r, &mut p, &mut sv, &mut z, step()).unwrap();
                    u.rows(0, n.local(), w.local_mut(), alpha, beta);
                    std::hint::black_box(fused::pipe_shares(&u, &l));
                }),
                _ => {
                    // one solve of k iterations
                    let solver = &mut solvers[i - 8];
                    xs.fill(0.0).unwrap();
                    let solve = timed(&comm, 1, &mut || {
                        let info = solver.solve(&b, &mut xs).unwrap();
                        assert_eq!(info.iterations, k as i64, "{}: {info:?}", NAMES[i]);
                    });
                    solve / k as f64
                }
            };
        }
        for i in 0..NAMES.len() {
            t[i].push(row[i]);
            ratio[i].push(row[i] / row[0]);
        }
    }
    if comm.rank() == 0 {
        println!(
            "2D 5-point, {} rows on {} rank(s); medians of {rounds} interleaved rounds of {k}",
            m * m,
            comm.size()
        );
        println!("| variant | ms | / CG iteration (per round) |\n|---|---|---|");
        for i in 0..NAMES.len() {
            println!(
                "| {} | {:.3} | {:.3} |",
                NAMES[i],
                median(&mut t[i]),
                median(&mut ratio[i])
            );
        }
    }
    parlops::comm::finalize().unwrap();
}
