//! The convergence reference, Richardson, the null space, the unmonitored iteration's bits and
//! the leftovers of a failed solve (split from tests/mpi_solvers.rs, which runs them).

use super::*;

/// PARLOPS_REFERENCE_INITIAL_RESIDUAL (issue 12; MFEM's rule): with a good nonzero guess the test
/// ||r|| <= rtol ||r_0|| asks for more iterations than ||r|| <= rtol ||b||; the reported initial norm
/// is the independently computed ||b - A x0|| (||A^H (b - A x0)|| for CGLS and LSQR); the true
/// residual meets the rule (check_true); with a zero guess both references give the same iterations.
pub(super) fn run_reference<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    common::case(&format!("run_reference ({})", T::DTYPE.name()));
    let n = 10i64;
    let l = Layout::new(comm.clone(), Partition::Scatter, n * n, -1).unwrap();
    let m1 = -T::one();
    let op: Op<T> = Arc::new(grid::<T>(&l, n, T::real(4.5), m1, m1, m1, m1));
    let st = l.local_start();
    // x* = smooth; x0 = x* + a small perturbation; b = A x*
    let mut xs = DistVector::<T>::new(l.clone()).unwrap();
    let mut x0 = DistVector::<T>::new(l.clone()).unwrap();
    for (i, (a, z)) in xs.local_mut().iter_mut().zip(x0.local_mut()).enumerate() {
        let g = (st + i as i64) as f64;
        *a = T::real(1.0 + (g * 0.37).sin());
        *z = T::real(1.0 + (g * 0.37).sin() + 1e-3 * (g * 1.3).cos());
    }
    let mut b = DistVector::<T>::new(l.clone()).unwrap();
    op.apply(&xs, &mut b).unwrap();
    let rtol = if single::<T>() { 1e-3 } else { 1e-8 };
    for m in [
        Method::Cg,
        Method::CgSingleReduction,
        Method::CgPipelined,
        Method::Gmres,
        Method::Fgmres,
        Method::Bicgstab,
        Method::Minres,
        Method::Cgls,
        Method::Lsqr,
    ] {
        let what = format!("{} {} reference", T::DTYPE.name(), m.name());
        // independent ||r_0|| in the norm the method tests
        let mut r0 = b.duplicate().unwrap();
        op.apply(&x0, &mut r0).unwrap();
        r0.axpby(T::one(), &b, -T::one()).unwrap();
        let want0 = if matches!(m, Method::Cgls | Method::Lsqr) {
            let mut g = DistVector::<T>::new(l.clone()).unwrap();
            op.apply_adjoint(&r0, &mut g).unwrap();
            norm2(&g)
        } else {
            norm2(&r0)
        };
        let mut its = [0i64; 2];
        for (k, reference) in [Reference::Rhs, Reference::InitialResidual]
            .into_iter()
            .enumerate()
        {
            let mut s = Solver::<T>::new(m);
            s.set_operator(op.clone()).unwrap();
            s.params.rtol = rtol;
            s.params.atol = 0.0;
            s.params.max_iter = 2000;
            s.params.nonzero_guess = true;
            s.params.reference = reference;
            let mut x = x0.duplicate().unwrap();
            x.copy_from(&x0).unwrap();
            let info = s.solve(&b, &mut x).unwrap();
            check_true(t, &format!("{reference:?}"), &s, None, &b, &x);
            t.check(
                info.reason.converged(),
                &format!(
                    "{what} {reference:?}: {:?} after {}",
                    info.reason, info.iterations
                ),
            );
            let rel = (info.initial_residual_norm - want0).abs() / want0;
            t.check(
                rel < if single::<T>() { 1e-3 } else { 1e-10 },
                &format!(
                    "{what} {reference:?}: initial norm {:e}, independent ||r_0|| {want0:e}",
                    info.initial_residual_norm
                ),
            );
            its[k] = info.iterations;
            if reference == Reference::InitialResidual {
                // and from a zero guess ||r_0|| is ||b|| (or ||A^H b||): the same iterations as Rhs
                let mut s0 = Solver::<T>::new(m);
                s0.set_operator(op.clone()).unwrap();
                s0.params.rtol = rtol;
                s0.params.atol = 0.0;
                s0.params.max_iter = 2000;
                let mut xa = DistVector::<T>::new(l.clone()).unwrap();
                let ia = s0.solve(&b, &mut xa).unwrap();
                s0.params.reference = Reference::InitialResidual;
                let mut xb = DistVector::<T>::new(l.clone()).unwrap();
                let ib = s0.solve(&b, &mut xb).unwrap();
                t.check(
                    ia.iterations == ib.iterations && ia.reason == ib.reason,
                    &format!(
                        "{what}: zero guess, Rhs {} iterations, InitialResidual {}",
                        ia.iterations, ib.iterations
                    ),
                );
            }
        }
        t.check(
            its[1] > its[0],
            &format!(
                "{what}: rtol relative to the (small) initial residual needs more iterations ({}) than relative to ||b|| ({})",
                its[1], its[0]
            ),
        );
    }
}

/// Richardson (PETSc's KSPRICHARDSON, MFEM's SLI) with Jacobi on a diagonally dominant grid
/// operator: converges to the dense solution (check_true on ||M r||); a smaller scale takes more
/// iterations; a scale past 2 / lambda_max(M A) diverges (dtol or max_iter), never converges.
pub(super) fn run_richardson<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    common::case(&format!("run_richardson ({})", T::DTYPE.name()));
    let n = 8i64;
    let l = Layout::new(comm.clone(), Partition::Scatter, n * n, -1).unwrap();
    let m1 = -T::one();
    let op: Op<T> = Arc::new(grid::<T>(&l, n, T::real(5.0), m1, m1, m1, m1));
    let mut b = DistVector::<T>::new(l.clone()).unwrap();
    let st = l.local_start();
    for (i, v) in b.local_mut().iter_mut().enumerate() {
        *v = T::real(1.0 + ((st + i as i64) as f64 * 0.7).sin());
    }
    let want = gauss(dense(op.as_ref()), gathered(&b));
    let rtol = if single::<T>() { 1e-5 } else { 1e-10 };
    let mut its = Vec::new();
    for (scale, jacobi) in [(1.0, true), (0.6, true), (0.15, false)] {
        let mut s = Solver::<T>::new(Method::Richardson);
        s.set_operator(op.clone()).unwrap();
        if jacobi {
            s.set_jacobi();
        }
        s.params.rtol = rtol;
        s.params.max_iter = 5000;
        s.params.scale = scale;
        let mut x = DistVector::<T>::new(l.clone()).unwrap();
        let info = s.solve(&b, &mut x).unwrap();
        let jac = jacobi.then(|| jacobi_of(&op));
        check_true(t, &format!("scale {scale}"), &s, jac.as_ref(), &b, &x);
        let err = rel_err(&gathered(&x), &want);
        t.check(
            info.reason.converged() && err < if single::<T>() { 1e-3 } else { 1e-8 },
            &format!(
                "{} Richardson scale {scale} jacobi {jacobi}: {:?} after {}, error {err:e}",
                T::DTYPE.name(),
                info.reason,
                info.iterations
            ),
        );
        its.push(info.iterations);
    }
    t.check(
        its[1] > its[0],
        &format!(
            "Richardson: scale 0.6 takes more iterations ({}) than 1 ({})",
            its[1], its[0]
        ),
    );
    let mut s = Solver::<T>::new(Method::Richardson);
    s.set_operator(op.clone()).unwrap();
    s.set_jacobi();
    s.params.scale = 2.5;
    s.params.max_iter = 500;
    let mut x = DistVector::<T>::new(l.clone()).unwrap();
    let info = s.solve(&b, &mut x).unwrap();
    t.check(
        matches!(info.reason, Reason::DivergedDtol | Reason::DivergedMaxIter),
        &format!(
            "Richardson scale 2.5 diverges: {:?} after {}",
            info.reason, info.iterations
        ),
    );
}

/// x = A^-1 b by Gaussian elimination with partial pivoting (n x n, row-major), for references.
fn dense_solve(mut a: Vec<f64>, mut b: Vec<f64>, n: usize) -> Vec<f64> {
    for k in 0..n {
        let p = (k..n)
            .max_by(|&i, &j| a[i * n + k].abs().total_cmp(&a[j * n + k].abs()))
            .unwrap_or(k);
        for j in 0..n {
            a.swap(k * n + j, p * n + j);
        }
        b.swap(k, p);
        for i in k + 1..n {
            let f = a[i * n + k] / a[k * n + k];
            for j in k..n {
                a[i * n + j] -= f * a[k * n + j];
            }
            b[i] -= f * b[k];
        }
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        let s: f64 = (i + 1..n).map(|j| a[i * n + j] * x[j]).sum();
        x[i] = (b[i] - s) / a[i * n + i];
    }
    x
}

/// A pure-Neumann Poisson problem (the 5-point Laplacian with each diagonal the number of
/// neighbours: singular, the constants its null space) with a right-hand side of nonzero mean:
/// with the constant null space removed, CG, Jacobi-CG and GMRES converge to the zero-mean solution
/// of A x = P b (P removes the mean), checked against a dense solve of (A + 1 1^T / N) x = P b and on
/// the true residual of the projected system; an explicit constant vector does the same; a dependent
/// basis fails on every rank; without the null space CG does not report convergence.
pub(super) fn run_null_space<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    common::case(&format!("run_null_space ({})", T::DTYPE.name()));
    let (r, p) = (comm.rank() as usize, comm.size() as usize);
    let n = 9i64;
    let nn = (n * n) as usize;
    let mut lens = parlops::vector::scatter_lens(n * n, p);
    if p > 2 {
        lens[0] += lens[1];
        lens[1] = 0;
    }
    let l = Layout::new(comm.clone(), Partition::Scatter, -1, lens[r]).unwrap();
    let (st, len) = (l.local_start() as usize, l.local_len() as usize);
    // the matrix, globally (for the reference) and this rank's rows
    let mut dense = vec![0.0f64; nn * nn];
    for g in 0..nn {
        let (i, j) = (g as i64 / n, g as i64 % n);
        for (ok, c) in [
            (i > 0, g as i64 - n),
            (j > 0, g as i64 - 1),
            (j < n - 1, g as i64 + 1),
            (i < n - 1, g as i64 + n),
        ] {
            if ok {
                dense[g * nn + c as usize] = -1.0;
                dense[g * nn + g] += 1.0;
            }
        }
    }
    let (mut ip, mut ix, mut v) = (vec![0i64], Vec::new(), Vec::new());
    for g in st..st + len {
        for c in 0..nn {
            if dense[g * nn + c] != 0.0 {
                ix.push(c as i64);
                v.push(T::from_parts_lossy(dense[g * nn + c], 0.0));
            }
        }
        ip.push(ix.len() as i64);
    }
    let a: Op<T> =
        Arc::new(CsrOp::from_local_rows(l.clone(), l.clone(), &ip, &ix, &v, Ok(())).unwrap());
    let bg: Vec<f64> = (0..nn).map(|g| (g as f64 * 0.7).sin() + 0.5).collect();
    let mean = bg.iter().sum::<f64>() / nn as f64;
    let pb: Vec<f64> = bg.iter().map(|v| v - mean).collect();
    let mut reg = dense.clone();
    reg.iter_mut().for_each(|v| *v += 1.0 / nn as f64);
    let want = dense_solve(reg, pb.clone(), nn);
    let mut b = DistVector::<T>::new(l.clone()).unwrap();
    for (k, bi) in b.local_mut().iter_mut().enumerate() {
        *bi = T::from_parts_lossy(bg[st + k], 0.0);
    }
    let single = T::DTYPE.size() / T::PARTS < 8;
    let rtol = if single { 1e-5 } else { 1e-10 };
    let mut ones = DistVector::<T>::new(l.clone()).unwrap();
    ones.fill(T::one()).unwrap();
    let cases: [(&str, Method, bool, bool); 4] = [
        ("CG, constant", Method::Cg, false, true),
        ("Jacobi-CG, constant", Method::Cg, true, true),
        ("GMRES, constant", Method::Gmres, false, true),
        ("CG, the ones vector given", Method::Cg, false, false),
    ];
    for (name, m, jacobi, constant) in cases {
        let mut s = Solver::<T>::new(m);
        s.params.rtol = rtol;
        s.params.max_iter = 500;
        s.set_operator(a.clone()).unwrap();
        if jacobi {
            s.set_jacobi();
        }
        let given = if constant {
            vec![]
        } else {
            vec![{
                let mut o = ones.duplicate().unwrap();
                o.copy_from(&ones).unwrap();
                o
            }]
        };
        s.set_null_space(Some((constant, given))).unwrap();
        let mut x = DistVector::<T>::new(l.clone()).unwrap();
        let info = s.solve(&b, &mut x).unwrap();
        let mut xg = vec![T::zero(); nn];
        x.gather(-1, Some(&mut xg), Ok(())).unwrap();
        let xr: Vec<f64> = xg.iter().map(|v| v.to_parts().0).collect();
        let xmean = xr.iter().sum::<f64>() / nn as f64;
        let xmax = xr.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let err = xr
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
            / xmax;
        // the rule on the projected system: ||P b - A x|| <= rtol ||P b||
        let res: f64 = (0..nn)
            .map(|i| {
                let ax: f64 = (0..nn).map(|j| dense[i * nn + j] * xr[j]).sum();
                (pb[i] - ax).powi(2)
            })
            .sum::<f64>()
            .sqrt();
        let pbn = pb.iter().map(|v| v * v).sum::<f64>().sqrt();
        let tol = if single { 1e-3 } else { 1e-7 };
        if comm.rank() == 0 && T::DTYPE == parlops::DType::F64 {
            println!(
                "null space, {name}: {:?} in {} iterations; mean {xmean:.1e}, error to the dense solution {err:.1e}, projected residual {res:.1e} (rule {:.1e})",
                info.reason,
                info.iterations,
                rtol * pbn
            );
        }
        t.check(
            info.reason.converged()
                && xmean.abs() <= (if single { 1e-5 } else { 1e-12 }) * xmax
                && err <= tol
                && res <= 1.01 * rtol * pbn + (if single { 1e-4 } else { 1e-12 }) * xmax,
            &format!(
                "{} null space, {name}: {:?} in {} iterations, mean {xmean:e}, error {err:e}, projected residual {:e} of {:e}",
                T::DTYPE.name(),
                info.reason,
                info.iterations,
                res,
                rtol * pbn
            ),
        );
    }
    // a dependent basis: the constant twice
    let mut s = Solver::<T>::new(Method::Cg);
    s.set_operator(a.clone()).unwrap();
    s.set_null_space(Some((
        true,
        vec![{
            let mut o = ones.duplicate().unwrap();
            o.copy_from(&ones).unwrap();
            o
        }],
    )))
    .unwrap();
    let mut x = DistVector::<T>::new(l.clone()).unwrap();
    let e = s.solve(&b, &mut x).err();
    t.check(
        e.as_ref().is_some_and(|e| {
            e.kind == parlops::ErrorKind::InvalidArgument && e.msg.contains("span")
        }),
        &format!(
            "{} null space with a dependent vector: {e:?}",
            T::DTYPE.name()
        ),
    );
    // without it, the singular inconsistent system must not be reported as converged
    let mut s = Solver::<T>::new(Method::Cg);
    s.params.rtol = rtol;
    s.params.max_iter = 300;
    s.set_operator(a.clone()).unwrap();
    let info = s.solve(&b, &mut x).unwrap();
    t.check(
        !info.reason.converged(),
        &format!(
            "{} no null space: not converged ({:?})",
            T::DTYPE.name(),
            info.reason
        ),
    );
}

/// Pipelined CG on a host CSR matrix makes its update row by row as the product forms them (after
/// the first iteration, when no monitor is set); with a monitor it makes the product, then the
/// update. Both ways must give the same bits, the same iterations and history, one reduction per
/// iteration, and a solution that passes the true-residual check: on 14,400 rows (several blocks
/// of rows per rank, so the part of the product made while the reduction moves varies), split
/// unevenly with an empty rank.
/// A method's fast path without monitors against its path with one, on 131,769 rows split unevenly
/// (an empty rank at 3 and 4 ranks; more than one block of a streamed product (32,768 rows) on
/// every other rank, and a band of 363 rows below the diagonal, not a multiple of 8):
/// pipelined CG streams its update into the product, and its new w into w, only without a monitor,
/// and moves x on every second iteration only (with the step it lacks) without an iterate monitor,
/// as single-reduction CG does; CG moves x with the next direction (p read once for both) only
/// without an iterate monitor, and otherwise with r. The same iterations, history and bits of x either way, to convergence and to
/// an even and an odd iteration limit (x's pending step made at the exit), with one reduction per
/// iteration (two for CG) and the true residual.
/// Two gathered vectors of one length with the same bits in every entry.
fn same_bits<T: Scalar>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(a, b)| {
            let (a, b) = (a.to_parts(), b.to_parts());
            a.0.to_bits() == b.0.to_bits() && a.1.to_bits() == b.1.to_bits()
        })
}

pub(super) fn run_unmonitored_bits<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>, method: Method) {
    let n = 363i64;
    let mut lens = parlops::vector::scatter_lens(n * n, comm.size() as usize);
    if lens.len() > 2 {
        lens[0] += 2 * lens[2] / 3;
        lens[2] -= 2 * lens[2] / 3;
        lens[1] += lens[2];
        lens[2] = 0;
    }
    let l = Layout::new(
        comm.clone(),
        Partition::Scatter,
        n * n,
        lens[comm.rank() as usize],
    )
    .unwrap();
    let m1 = -T::one();
    let op: Op<T> = Arc::new(grid(&l, n, T::real(4.01), m1, m1, m1, m1));
    let mut b = DistVector::<T>::new(l.clone()).unwrap();
    random_fill(&mut b, 17);
    let pipe = method == Method::CgPipelined;
    let per_it = if method == Method::Cg { 2 } else { 1 };
    for limit in [5000, 37, 38] {
        let ctx = format!(
            "{} {method:?}, unmonitored path, max_iter {limit}",
            T::DTYPE.name()
        );
        let mut runs = Vec::new();
        // no monitor; a residual monitor (pipelined CG: no streaming); an iterate monitor
        let watches: &[u8] = if pipe { &[0, 1, 2] } else { &[0, 2] };
        for &watch in watches {
            let monitored = watch > 0;
            let mut s = Solver::<T>::new(method);
            s.set_operator(op.clone()).unwrap();
            s.params.rtol = if single::<T>() { 1e-5 } else { 1e-10 };
            s.params.max_iter = limit;
            s.params.keep_history = true;
            if watch == 1 {
                s.set_monitor(Some(Box::new(|_, _| false)));
            } else if watch == 2 {
                s.set_iterate_monitor(Some(Arc::new(|_, _, v| {
                    (parlops::solver::MonitorAction::Continue, Some(v))
                })));
            }
            let mut x = DistVector::<T>::new(l.clone()).unwrap();
            let before = comm.reduction_count();
            let info = s.solve(&b, &mut x).unwrap();
            let used = comm.reduction_count() - before;
            check_true(t, &ctx, &s, None, &b, &x);
            let ended = if limit < 5000 {
                info.reason == Reason::DivergedMaxIter && info.iterations == limit
            } else {
                info.reason.converged() && info.iterations > 2 * 50
            };
            t.check(
                ended,
                &format!("{ctx}: {:?} after {}", info.reason, info.iterations),
            );
            // pipelined CG: one more for each residual replacement (after 100 iterations, then
            // after 200, 400 ... while the recurrences stay close to the true residual; every 10
            // at the most) and one or two to confirm a convergence on the true residual (two when
            // it goes on from there): at most two more every 50 iterations, two more at the end
            // CG and single-reduction CG: one to confirm a convergence on the true residual, two
            // more each time the rule does not hold there and CG goes on from it (single precision)
            let extra = if pipe {
                5 + 2 * (info.iterations as u64 / 50)
            } else if method == Method::Cg && limit == 5000 {
                4
            } else if method == Method::CgSingleReduction && limit == 5000 {
                5
            } else {
                3
            };
            if !monitored {
                t.check(
                    used <= per_it * info.iterations as u64 + extra,
                    &format!(
                        "{ctx}: {used} reductions for {} iterations",
                        info.iterations
                    ),
                );
            }
            runs.push((info.iterations, s.history().to_vec(), gathered(&x)));
        }
        for (k, run) in runs.iter().enumerate().skip(1) {
            let same = runs[0].0 == run.0 && runs[0].1 == run.1 && same_bits(&runs[0].2, &run.2);
            t.check(
                same,
                &format!(
                    "{ctx}: the same bits as with monitor {} ({} and {} iterations)",
                    watches[k], runs[0].0, run.0
                ),
            );
        }
    }
}

/// Work vectors that an earlier solve left full of NaN: single-reduction and pipelined CG zero only
/// the vectors their first step scales by zero (p, s, z, q) and take the others as they are (each
/// is written before it is read). A solve whose operator turns NaN after five applications (on every
/// rank, or on one), then the same handle with the operator fixed: it converges to the true
/// residual with the bits of a fresh solver, with and without a preconditioner (the fused and the
/// separate passes), at every rank count (an empty rank).
pub(super) fn run_leftovers<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let n = 40i64;
    let mut lens = parlops::vector::scatter_lens(n, comm.size() as usize);
    if lens.len() > 1 {
        lens[0] += lens[1];
        lens[1] = 0;
    }
    let l = Layout::new(
        comm.clone(),
        Partition::Scatter,
        n,
        lens[comm.rank() as usize],
    )
    .unwrap();
    let mut b = DistVector::<T>::new(l.clone()).unwrap();
    random_fill(&mut b, 5);
    let mut d = DistVector::<T>::new(l.clone()).unwrap();
    d.fill(T::real(0.5)).unwrap();
    let pc: Op<T> = Arc::new(Diagonal::new(&d).unwrap());
    // a diagonal operator, NaN in its first local entry from the sixth application on (`hit`)
    let diag = |poison: Option<(Arc<AtomicUsize>, bool)>| -> Op<T> {
        let f = move |x: &[T], y: &mut [T]| {
            for (i, (yv, xv)) in y.iter_mut().zip(x).enumerate() {
                *yv = T::real(2.0 + 0.3 * (i % 17) as f64) * *xv;
            }
            if let Some((calls, hit)) = &poison
                && calls.fetch_add(1, Ordering::Relaxed) >= 5
                && *hit
                && !y.is_empty()
            {
                y[0] = T::from_parts_lossy(f64::NAN, 0.0);
            }
            Ok(())
        };
        Arc::new(
            parlops::op::callback::Callback::new(
                l.clone(),
                l.clone(),
                Box::new(f.clone()),
                Some(Box::new(f)),
                "diagonal",
            )
            .unwrap(),
        )
    };
    let good = diag(None);
    for m in [Method::Cg, Method::CgSingleReduction, Method::CgPipelined] {
        for with_pc in [false, true] {
            for one_rank in [false, true] {
                // (rank 0 has entries; rank 1 has none)
                let hit = !one_rank || comm.rank() == 0;
                let what = format!(
                    "{} {} after a NaN solve{}{}",
                    T::DTYPE.name(),
                    m.name(),
                    if with_pc { ", preconditioned" } else { "" },
                    if one_rank { " on one rank" } else { "" }
                );
                let solve = |s: &mut Solver<T>| {
                    s.params.rtol = if single::<T>() { 1e-5 } else { 1e-10 };
                    s.params.max_iter = 200;
                    s.set_preconditioner(with_pc.then(|| pc.clone()));
                    let mut x = DistVector::<T>::new(l.clone()).unwrap();
                    let info = s.solve(&b, &mut x).unwrap();
                    (info, x)
                };
                let mut s = Solver::<T>::new(m);
                s.set_operator(diag(Some((Arc::new(AtomicUsize::new(0)), hit))))
                    .unwrap();
                let (bad, _) = solve(&mut s);
                t.check(
                    !bad.reason.converged(),
                    &format!("{what}: the poisoned solve ended {:?}", bad.reason),
                );
                s.set_operator(good.clone()).unwrap();
                let (info, x) = solve(&mut s);
                check_true(t, &what, &s, with_pc.then_some(&pc), &b, &x);
                let mut fresh = Solver::<T>::new(m);
                fresh.set_operator(good.clone()).unwrap();
                let (want, xf) = solve(&mut fresh);
                let same =
                    info.iterations == want.iterations && same_bits(&gathered(&x), &gathered(&xf));
                t.check(
                    info.reason.converged() && same,
                    &format!(
                        "{what}: {:?} after {} iterations, a fresh solver {:?} after {}, the same bits: {same}",
                        info.reason, info.iterations, want.reason, want.iterations
                    ),
                );
            }
        }
    }
}
