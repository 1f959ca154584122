//! The converged/diverged reasons, the NaN/Inf guard of every method, the final check of x and
//! issue 10 (split from tests/mpi_solvers.rs, which runs them).

use super::*;

pub(super) fn run_reasons(t: &mut Tally, comm: &Arc<Comm>) {
    let n = 8i64;
    let l = Layout::new(comm.clone(), Partition::Scatter, n * n, -1).unwrap();
    let lap: Op<f64> = Arc::new(grid(&l, n, 4.0, -1.0, -1.0, -1.0, -1.0));
    let ind: Op<f64> = Arc::new(grid(&l, n, 4.0 - 2.3, -1.0, -1.0, -1.0, -1.0));
    let mut b = DistVector::<f64>::new(l.clone()).unwrap();
    b.fill(1.0).unwrap();
    let mut x = DistVector::<f64>::new(l.clone()).unwrap();
    for m in [Method::Cg, Method::CgSingleReduction, Method::CgPipelined] {
        let mut s = Solver::<f64>::new(m);
        s.set_operator(ind.clone()).unwrap();
        s.params.rtol = 1e-10;
        let i = s.solve(&b, &mut x).unwrap();
        t.check(
            i.reason == Reason::DivergedIndefinite,
            &format!("{}: indefinite matrix -> {:?}", m.name(), i.reason),
        );
        s.set_operator(lap.clone()).unwrap();
        s.params.max_iter = 3;
        let i = s.solve(&b, &mut x).unwrap();
        t.check(
            i.reason == Reason::DivergedMaxIter && i.iterations == 3,
            &format!(
                "{}: max iterations -> {:?} {}",
                m.name(),
                i.reason,
                i.iterations
            ),
        );
        s.params.max_iter = 1000;
        // NaN on one rank's part of the right-hand side: every rank stops with the same reason
        let mut bn = b.duplicate().unwrap();
        bn.copy_from(&b).unwrap();
        if comm.rank() == comm.size() - 1 && !bn.local().is_empty() {
            bn.local_mut()[0] = f64::NAN;
        }
        let i = s.solve(&bn, &mut x).unwrap();
        t.check(
            i.reason == Reason::DivergedNan,
            &format!("{}: NaN rhs -> {:?}", m.name(), i.reason),
        );
        // reductions per iteration
        let before = comm.reduction_count();
        s.params.rtol = 1e-8;
        let i = s.solve(&b, &mut x).unwrap();
        let used = comm.reduction_count() - before;
        check_true(t, "reduction count", &s, None, &b, &x);
        let per_it = used as f64 / i.iterations as f64;
        if m != Method::Cg {
            // one per iteration, two to start, one for the driver's final check that x is finite;
            // pipelined CG: one more to confirm the convergence on the true residual
            let extra = if m == Method::CgPipelined { 4 } else { 3 };
            t.check(
                used <= i.iterations as u64 + extra,
                &format!(
                    "{}: {used} reductions for {} iterations (one per iteration)",
                    m.name(),
                    i.iterations
                ),
            );
        } else {
            // two per iteration, one to start, one to confirm the convergence on the true
            // residual, one for the driver's final check that x is finite
            t.check(
                used <= 2 * i.iterations as u64 + 3,
                &format!("CG: {per_it} reductions per iteration"),
            );
        }
        // monitor stops, history
        let mut s2 = Solver::<f64>::new(m);
        s2.set_operator(lap.clone()).unwrap();
        s2.params.keep_history = true;
        s2.params.rtol = 1e-8;
        let i2 = s2.solve(&b, &mut x).unwrap();
        check_true(t, "history", &s2, None, &b, &x);
        t.check(
            s2.history().len() as i64 == i2.iterations + 1,
            &format!("{}: history length", m.name()),
        );
        let stop_at = 4;
        s2.set_monitor(Some(Box::new(move |it, _| it >= stop_at)));
        let i3 = s2.solve(&b, &mut x).unwrap();
        t.check(
            i3.reason == Reason::DivergedUser && i3.iterations == stop_at,
            &format!(
                "{}: monitor stop -> {:?} at {}",
                m.name(),
                i3.reason,
                i3.iterations
            ),
        );
    }
    // zero operator: breakdown
    let z: Op<f64> = Arc::new(Zero::new(l.clone(), l.clone()));
    for m in [Method::Cg, Method::Bicgstab, Method::Gmres] {
        let mut s = Solver::<f64>::new(m);
        s.set_operator(z.clone()).unwrap();
        let i = s.solve(&b, &mut x).unwrap();
        check_true(t, "zero operator", &s, None, &b, &x);
        t.check(
            !i.reason.converged(),
            &format!(
                "{}: zero operator does not converge ({:?})",
                m.name(),
                i.reason
            ),
        );
    }
    let mut s = Solver::<f64>::new(Method::Cg);
    s.set_operator(z).unwrap();
    t.check(
        s.solve(&b, &mut x).unwrap().reason == Reason::DivergedBreakdown,
        "CG zero operator: breakdown",
    );
    // zero right-hand side: converged at once, x = 0
    let mut s = Solver::<f64>::new(Method::Cg);
    s.set_operator(lap.clone()).unwrap();
    let zb = b.duplicate().unwrap();
    x.fill(3.0).unwrap();
    let i = s.solve(&zb, &mut x).unwrap();
    check_true(t, "zero rhs", &s, None, &zb, &x);
    t.check(
        i.reason.converged()
            && i.iterations == 0
            && x.norm(parlops::vector::NormKind::Inf).unwrap() == 0.0,
        "zero rhs",
    );
    // a nonzero initial guess that is the solution
    let mut sol = DistVector::<f64>::new(l.clone()).unwrap();
    s.params.rtol = 1e-12;
    s.solve(&b, &mut sol).unwrap();
    check_true(t, "rtol 1e-12", &s, None, &b, &sol);
    s.params.nonzero_guess = true;
    s.params.rtol = 1e-6;
    let i = s.solve(&b, &mut sol).unwrap();
    check_true(t, "nonzero guess at the solution", &s, None, &b, &sol);
    t.check(
        i.iterations == 0 && i.reason.converged(),
        &format!("nonzero guess at the solution: {} iterations", i.iterations),
    );
    // bad tolerances are an error
    s.params.rtol = -1.0;
    t.check(s.solve(&b, &mut sol).is_err(), "negative rtol rejected");
    // power iteration: the Laplacian's largest eigenvalue is 8 sin^2(n pi / (2 (n+1)))
    let (lam, _) =
        parlops::solver::power::power_iteration(lap.as_ref(), 2000, 1e-12, 3, false).unwrap();
    let exact = 8.0
        * ((n as f64) * std::f64::consts::PI / (2.0 * (n as f64 + 1.0)))
            .sin()
            .powi(2);
    t.check(
        (lam - exact).abs() < 1e-4 * exact,
        &format!("power iteration {lam} vs {exact}"),
    );
}

/// Every method of the table: a new method is fed NaN and Inf by the guard without editing it.
const ALL: &[Method] = Method::ALL;

/// Methods that apply the preconditioner (CGLS, LSQR, ISTA and FISTA ignore it).
fn uses_pc(m: Method) -> bool {
    !m.least_squares()
}

/// The 5-point Laplacian shifted to diagonal 5, with the diagonal entry of this rank's first row
/// replaced by `bad` when given.
fn grid_poisoned<T: Scalar>(l: &Arc<Layout>, n: i64, bad: Option<T>) -> CsrOp<T> {
    let (st, len) = (l.local_start(), l.local_len());
    let (mut p, mut ix, mut v) = (vec![0i64], Vec::new(), Vec::new());
    for r in st..st + len {
        let (i, j) = (r / n, r % n);
        let d = match bad {
            Some(b) if r == st => b,
            _ => T::real(5.0),
        };
        for (ok, c, val) in [
            (i > 0, r - n, -T::one()),
            (j > 0, r - 1, -T::one()),
            (true, r, d),
            (j < n - 1, r + 1, -T::one()),
            (i < n - 1, r + n, -T::one()),
        ] {
            if ok {
                ix.push(c);
                v.push(val);
            }
        }
        p.push(ix.len() as i64);
    }
    CsrOp::from_local_rows(l.clone(), l.clone(), &p, &ix, &v, Ok(())).unwrap()
}

/// The standing guard of issue 10: NaN and Inf in b, in a nonzero initial guess, in a CSR entry of
/// the operator, in the preconditioner (a diagonal entry) and in a callback operator's output, on
/// every rank or on one rank only, for every method: the solve returns (no error), the reason is the
/// same on every rank and is PARLOPS_DIVERGED_NAN (so never a converged one). Methods that ignore the preconditioner (CGLS,
/// LSQR, ISTA, FISTA) may converge with a poisoned one, and then the true residual is checked. The
/// solver's final safeguard (x finite) is switched off here, so that the methods themselves are tested.
pub(super) fn run_guard<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    let n = 4i64;
    let l = Layout::new(comm.clone(), Partition::Scatter, n * n, -1).unwrap();
    let last = comm.size() - 1;
    let good: Op<T> = Arc::new(grid_poisoned::<T>(&l, n, None));
    let mut b0 = DistVector::<T>::new(l.clone()).unwrap();
    random_fill(&mut b0, 3);
    parlops::solver::set_final_check(false);
    for bad in [f64::NAN, f64::INFINITY] {
        let badv = T::from_parts_lossy(bad, 0.0);
        for one_rank in [false, true] {
            let hit = (!one_rank || comm.rank() == last) && l.local_len() > 0;
            for place in ["b", "x0", "operator", "preconditioner", "callback"] {
                let op: Op<T> = match place {
                    "operator" => Arc::new(grid_poisoned(&l, n, hit.then_some(badv))),
                    "callback" => {
                        let f = move |x: &[T], y: &mut [T]| {
                            for (i, (yv, xv)) in y.iter_mut().zip(x).enumerate() {
                                *yv = T::real(2.0 + (i % 3) as f64) * *xv;
                            }
                            if hit {
                                y[0] = badv;
                            }
                            Ok(())
                        };
                        Arc::new(
                            parlops::op::callback::Callback::new(
                                l.clone(),
                                l.clone(),
                                Box::new(f),
                                Some(Box::new(f)),
                                "poisoned diagonal",
                            )
                            .unwrap(),
                        )
                    }
                    _ => good.clone(),
                };
                let pc: Option<Op<T>> = (place == "preconditioner").then(|| {
                    let mut d = DistVector::<T>::new(l.clone()).unwrap();
                    d.fill(T::real(0.2)).unwrap();
                    if hit {
                        d.local_mut()[0] = badv;
                    }
                    Arc::new(Diagonal::new(&d).unwrap()) as Op<T>
                });
                let mut b = b0.duplicate().unwrap();
                b.copy_from(&b0).unwrap();
                if place == "b" && hit {
                    b.local_mut()[0] = badv;
                }
                for &m in ALL {
                    let what = format!(
                        "{} {}: {bad} in {place}{}",
                        T::DTYPE.name(),
                        m.name(),
                        if one_rank { " on one rank" } else { "" }
                    );
                    let mut s = Solver::<T>::new(m);
                    s.params.rtol = if single::<T>() { 1e-5 } else { 1e-8 };
                    s.params.max_iter = 100;
                    s.set_operator(op.clone()).unwrap();
                    s.set_preconditioner(pc.clone());
                    let mut x = DistVector::<T>::new(l.clone()).unwrap();
                    if place == "x0" {
                        s.params.nonzero_guess = true;
                        x.fill(T::one()).unwrap();
                        if hit {
                            x.local_mut()[0] = badv;
                        }
                    }
                    let info = match s.solve(&b, &mut x) {
                        Ok(i) => i,
                        Err(e) => {
                            t.check(false, &format!("{what}: solve failed: {e}"));
                            continue;
                        }
                    };
                    let code = info.reason.code() as f64;
                    let mm = comm
                        .allreduce_f64(&[code, -code], parlops::comm::ReduceOp::Max)
                        .unwrap();
                    t.check(
                        mm[0] == -mm[1],
                        &format!("{what}: ranks disagree ({:?} here)", info.reason),
                    );
                    if place == "preconditioner" && !uses_pc(m) {
                        check_true(t, &what, &s, None, &b, &x);
                    } else {
                        t.check(
                            info.reason == Reason::DivergedNan,
                            &format!(
                                "{what}: {:?} after {} iterations",
                                info.reason, info.iterations
                            ),
                        );
                    }
                }
            }
        }
    }
    parlops::solver::set_final_check(true);
}

/// The solve driver's final check: a callback operator that reads NaN entries of x as 0 hides a NaN
/// of the initial guess from every residual, so the methods converge with that NaN still in x; the
/// driver must then report PARLOPS_DIVERGED_NAN on every rank (with the check off, LSQR does report a
/// convergence here: the test reaches the driver's check). GMRES, FGMRES, GCRO-DR, CG, deflated CG,
/// single-reduction and pipelined CG, MINRES and BiCGStab, which confirm their estimate on the true
/// residual, do not converge at all (the NaN entry of x never moves).
pub(super) fn run_final_check<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    let n = 12i64;
    let l = Layout::new(comm.clone(), Partition::Scatter, n, -1).unwrap();
    let last = comm.size() - 1;
    let f = |x: &[T], y: &mut [T]| {
        for (i, (yv, xv)) in y.iter_mut().zip(x).enumerate() {
            let v = if xv.abs_f64().is_finite() {
                *xv
            } else {
                T::zero()
            };
            *yv = T::real(2.0 + (i % 3) as f64) * v;
        }
        Ok(())
    };
    let op: Op<T> = Arc::new(
        parlops::op::callback::Callback::new(
            l.clone(),
            l.clone(),
            Box::new(f),
            Some(Box::new(f)),
            "NaN-blind diagonal",
        )
        .unwrap(),
    );
    let mut b = DistVector::<T>::new(l.clone()).unwrap();
    random_fill(&mut b, 4);
    for one_rank in [false, true] {
        let hit = (!one_rank || comm.rank() == last) && l.local_len() > 0;
        for (m, on) in ALL
            .iter()
            .map(|&m| (m, true))
            .chain([(Method::Lsqr, false)])
        {
            parlops::solver::set_final_check(on);
            let mut s = Solver::<T>::new(m);
            s.params.rtol = 1e-4;
            s.params.max_iter = 200;
            s.params.nonzero_guess = true;
            s.params.step = Some(0.2);
            s.set_operator(op.clone()).unwrap();
            let mut x = DistVector::<T>::new(l.clone()).unwrap();
            if hit {
                x.local_mut()[0] = T::from_parts_lossy(f64::NAN, 0.0);
            }
            let i = s.solve(&b, &mut x).unwrap();
            parlops::solver::set_final_check(true);
            let code = i.reason.code() as f64;
            let mm = comm
                .allreduce_f64(&[code, -code], parlops::comm::ReduceOp::Max)
                .unwrap();
            let what = format!(
                "{} {} NaN hidden by the operator{} (final check {on})",
                T::DTYPE.name(),
                m.name(),
                if one_rank { " on one rank" } else { "" }
            );
            t.check(mm[0] == -mm[1], &format!("{what}: ranks disagree"));
            t.check(
                if matches!(
                    m,
                    Method::Gmres
                        | Method::Fgmres
                        | Method::Gcrodr
                        | Method::CgDeflated
                        | Method::Richardson
                        | Method::CgPipelined
                        | Method::CgSingleReduction
                        | Method::Minres
                        | Method::Cg
                        | Method::Bicgstab
                ) {
                    // they test the true residual b - A x (the Krylov methods confirm on it,
                    // Richardson recomputes it): the entry of x(0) never moves, so they never
                    // converge
                    !i.reason.converged()
                } else if on {
                    i.reason == Reason::DivergedNan
                } else {
                    i.reason.converged()
                },
                &format!("{what}: {:?} after {}", i.reason, i.iterations),
            );
        }
    }
}

/// Issue 10, MINRES and ISTA/FISTA items: MINRES on the zero operator and with b in the null space
/// does not converge; ISTA and FISTA with max_iter 0 do no iteration and leave x as it was.
pub(super) fn run_issue10(t: &mut Tally, comm: &Arc<Comm>) {
    let n = 20i64;
    let l = Layout::new(comm.clone(), Partition::Scatter, n, -1).unwrap();
    let st = l.local_start();
    let mut b = DistVector::<f64>::new(l.clone()).unwrap();
    let mut d = DistVector::<f64>::new(l.clone()).unwrap();
    for (i, (bv, dv)) in b.local_mut().iter_mut().zip(d.local_mut()).enumerate() {
        let even = (st + i as i64) % 2 == 0;
        *bv = if even { 1.0 } else { 0.0 };
        *dv = if even { 0.0 } else { 1.0 + i as f64 };
    }
    let z: Op<f64> = Arc::new(Zero::new(l.clone(), l.clone()));
    let nul: Op<f64> = Arc::new(Diagonal::new(&d).unwrap());
    for (name, op) in [("zero operator", z), ("b in the null space", nul)] {
        let mut s = Solver::<f64>::new(Method::Minres);
        s.set_operator(op).unwrap();
        let mut x = DistVector::<f64>::new(l.clone()).unwrap();
        let i = s.solve(&b, &mut x).unwrap();
        check_true(t, name, &s, None, &b, &x);
        t.check(
            !i.reason.converged(),
            &format!("MINRES {name}: {:?} after {}", i.reason, i.iterations),
        );
    }
    let mut dd = DistVector::<f64>::new(l.clone()).unwrap();
    dd.fill(2.0).unwrap();
    let dop: Op<f64> = Arc::new(Diagonal::new(&dd).unwrap());
    for m in [Method::Ista, Method::Fista] {
        for guess in [false, true] {
            let mut s = Solver::<f64>::new(m);
            s.set_operator(dop.clone()).unwrap();
            s.params.max_iter = 0;
            s.params.nonzero_guess = guess;
            let mut x = DistVector::<f64>::new(l.clone()).unwrap();
            x.fill(0.25).unwrap();
            let i = s.solve(&b, &mut x).unwrap();
            let want = if guess { 0.25 } else { 0.0 };
            t.check(
                i.iterations == 0
                    && i.reason == Reason::DivergedMaxIter
                    && x.local().iter().all(|v| *v == want),
                &format!(
                    "{} max_iter 0 (nonzero guess {guess}): {:?} after {} iterations",
                    m.name(),
                    i.reason,
                    i.iterations
                ),
            );
        }
    }
}

/// Single-reduction CG and MINRES on Hermitian positive definite operators of condition 1e8 (5 rows,
/// random eigenvectors, eigenvalues 1 to 1e8) with rtol 1e-8: a convergence holds for the true
/// residual, or the solve ends with PARLOPS_DIVERGED_MAX_ITER. Before, both returned
/// CONVERGED_RTOL on their recurrence's norm with the true residual up to 200 times over the rule
/// (the other CG variants, GMRES and BiCGStab already confirmed on it).
pub(super) fn run_confirmed<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    let l = crate::common::uneven(comm, 5);
    let lam: Vec<f64> = (0..5).map(|i| 100f64.powi(i)).collect();
    for seed in 0..40u64 {
        let (_, a, _) = crate::mpi_models::ks_spectra::operator::<T>(&l, &lam, 7000 + seed);
        let mut b = DistVector::<T>::new(l.clone()).unwrap();
        random_fill(&mut b, seed);
        for method in [Method::CgSingleReduction, Method::Minres] {
            let mut s = Solver::<T>::new(method);
            s.params.rtol = 1e-8;
            s.params.max_iter = 400;
            s.set_operator(a.clone()).unwrap();
            let mut x = DistVector::<T>::new(l.clone()).unwrap();
            let info = s.solve(&b, &mut x).unwrap();
            check_true(t, &format!("condition 1e8, seed {seed}"), &s, None, &b, &x);
            t.check(
                info.reason.converged() || info.reason == Reason::DivergedMaxIter,
                &format!(
                    "{} {} condition 1e8, seed {seed}: {:?} after {}",
                    T::DTYPE.name(),
                    method.name(),
                    info.reason,
                    info.iterations
                ),
            );
        }
    }
}
