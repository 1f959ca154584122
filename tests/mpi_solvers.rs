//! Multi-rank solver tests: run with `mpiexec -n P` (P = 1..4; `make test` does). Every method on
//! SPD / Hermitian, nonsymmetric, indefinite and least-squares problems, every dtype, against a dense
//! solution computed here by Gaussian elimination; reduction counts of the CG variants; the
//! converged/diverged reasons. Prints `N passed, M failed` on rank 0.
#![allow(clippy::needless_range_loop)]

mod common;
use common::{Tally, dense, gathered, gauss};

use std::sync::Arc;

use parlops::comm::Comm;
use parlops::op::basic::{Diagonal, Zero};
use parlops::op::csr::CsrOp;
use parlops::op::dense::DenseBlockRow;
use parlops::op::{Op, random_fill};
use parlops::solver::{Method, Reason, Reference, Solver, Threshold};
use parlops::vector::{DistVector, Layout, Partition};
use parlops::{Scalar, c32, c64};

fn single<T: Scalar>() -> bool {
    matches!(T::DTYPE, parlops::DType::F32 | parlops::DType::C64)
}

fn rel_err<T: Scalar>(a: &[T], b: &[T]) -> f64 {
    let num: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| (*x - *y).abs2_f64())
        .sum::<f64>()
        .sqrt();
    let den: f64 = b.iter().map(|y| y.abs2_f64()).sum::<f64>().sqrt();
    num / den.max(1e-300)
}

fn eps<T: Scalar>() -> f64 {
    if single::<T>() {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    }
}

fn norm2<T: Scalar>(v: &DistVector<T>) -> f64 {
    gathered(v).iter().map(|a| a.abs2_f64()).sum::<f64>().sqrt()
}

/// The inverse diagonal of `op` (what `set_jacobi` applies).
fn jacobi_of<T: Scalar>(op: &Op<T>) -> Op<T> {
    let mut d = DistVector::<T>::new(op.rows().clone()).unwrap();
    op.diagonal(&mut d).unwrap();
    for v in d.local_mut() {
        *v = T::one() / *v;
    }
    Arc::new(Diagonal::new(&d).unwrap())
}

/// Whenever a solve reports a converged reason, recompute its stopping rule from x (issue 10: "a
/// converged reason means the stopping rule holds for the true residual"):
/// - square methods: ||b - A x|| <= max(rtol ||b||, atol);
/// - MINRES with a preconditioner, and the CG family with the natural norm: the same with the norm
///   sqrt(r^H M r) of r and of b;
/// - CGLS, LSQR: ||A^H (b - A x) - damp^2 x|| <= max(rtol ||A^H b||, atol);
/// - ISTA, FISTA stop on the update ||x_k - x_{k-1}||, which x alone cannot give: x must be finite
///   and r1norm must be the true ||b - A x||.
///
/// Slack: 1.01 times the target, plus the rounding of the residual recomputed in working precision,
/// 10 eps (||A|| ||x|| + ||b||) (times ||A|| for the normal equations, sqrt ||M|| for the natural
/// norm), ||A|| from power iteration. In double precision that is far below the targets used here; in
/// single precision it is of the order of rtol ||b||, so there the check mostly catches false claims.
fn check_true<T: Scalar>(
    t: &mut Tally,
    what: &str,
    s: &Solver<T>,
    pc: Option<&Op<T>>,
    b: &DistVector<T>,
    x: &DistVector<T>,
) {
    let info = s.info();
    if !info.reason.converged() {
        return;
    }
    let p = &s.params;
    let op = s.operator().unwrap().clone();
    let what = format!("{} {} {what}", T::DTYPE.name(), s.method.name());
    t.check(
        gathered(x).iter().all(|v| v.abs_f64().is_finite()),
        &format!("{what}: x is finite ({:?})", info.reason),
    );
    let (lam, _) = parlops::solver::power::power_iteration(op.as_ref(), 50, 1e-6, 1, true).unwrap();
    let na = lam.abs_f64().sqrt();
    let mut ax = DistVector::<T>::new(op.rows().clone()).unwrap();
    op.apply(x, &mut ax).unwrap();
    let mut r = ax.duplicate().unwrap();
    r.copy_from(b).unwrap();
    r.axpy(-T::one(), &ax).unwrap();
    let round = 10.0 * eps::<T>() * (na * norm2(x) + norm2(b));
    let natural = pc.is_some()
        && (s.method == Method::Minres
            || (p.natural_norm
                && matches!(
                    s.method,
                    Method::Cg | Method::CgSingleReduction | Method::CgPipelined
                )));
    let (res, refn, round) = match s.method {
        Method::Ista | Method::Fista => {
            let rn = norm2(&r);
            t.check(
                (info.r1norm - rn).abs() <= 1e-3 * rn + round,
                &format!("{what}: r1norm {:e} is ||b - A x|| = {rn:e}", info.r1norm),
            );
            return;
        }
        Method::Cgls | Method::Lsqr => {
            let mut g = DistVector::<T>::new(op.cols().clone()).unwrap();
            op.apply_adjoint(&r, &mut g).unwrap();
            g.axpy(T::real(-p.damp * p.damp), x).unwrap();
            let mut ahb = DistVector::<T>::new(op.cols().clone()).unwrap();
            op.apply_adjoint(b, &mut ahb).unwrap();
            (norm2(&g), norm2(&ahb), round * na.max(p.damp * p.damp))
        }
        Method::Richardson if pc.is_some() => {
            // the preconditioned residual ||M r|| against ||M b||
            let m = pc.unwrap();
            let mut z = r.duplicate().unwrap();
            m.apply(&r, &mut z).unwrap();
            let mr = norm2(&z);
            m.apply(b, &mut z).unwrap();
            let mbn = norm2(&z);
            let nm = mbn / norm2(b).max(1e-300);
            (mr, mbn, round * nm.max(1.0))
        }
        _ if natural => {
            let m = pc.unwrap();
            let mut z = r.duplicate().unwrap();
            m.apply(&r, &mut z).unwrap();
            let rz = r.dot(&z).unwrap().to_parts().0;
            m.apply(b, &mut z).unwrap();
            let bz = b.dot(&z).unwrap().to_parts().0;
            let nm = norm2(&z) / norm2(b).max(1e-300);
            (
                rz.max(0.0).sqrt(),
                bz.max(0.0).sqrt(),
                round * nm.max(1.0).sqrt(),
            )
        }
        _ => (norm2(&r), norm2(b), round),
    };
    // PARLOPS_REFERENCE_INITIAL_RESIDUAL: rtol is relative to the tested norm at iteration 0 (which
    // run_reference checks against an independent ||b - A x0||)
    let refn = if p.reference == Reference::InitialResidual {
        info.initial_residual_norm
    } else {
        refn
    };
    let target = (p.rtol * refn).max(p.atol);
    t.check(
        res <= 1.01 * target + round,
        &format!(
            "{what}: {:?} but the true residual {res:e} > max(rtol {:e} * {refn:e}, atol {:e}) = {target:e} (+ rounding {round:e})",
            info.reason, p.rtol, p.atol
        ),
    );
}

/// 2D grid operator (n x n) with a 5-point stencil: diag, and couplings (west, east, south, north).
fn grid<T: Scalar>(l: &Arc<Layout>, n: i64, diag: T, w: T, e: T, s: T, no: T) -> CsrOp<T> {
    let (st, len) = (l.local_start(), l.local_len());
    let (mut p, mut ix, mut v) = (vec![0i64], Vec::new(), Vec::new());
    for r in st..st + len {
        let (i, j) = (r / n, r % n);
        for (ok, c, val) in [
            (i > 0, r - n, s),
            (j > 0, r - 1, w),
            (true, r, diag),
            (j < n - 1, r + 1, e),
            (i < n - 1, r + n, no),
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

#[allow(clippy::too_many_arguments)]
fn solve_one<T: Scalar>(
    t: &mut Tally,
    name: &str,
    method: Method,
    op: Op<T>,
    pc: Option<Op<T>>,
    jacobi: bool,
    b: &DistVector<T>,
    want: &[T],
) -> (i64, Reason) {
    let mut s = Solver::<T>::new(method);
    s.params.rtol = if single::<T>() { 1e-6 } else { 1e-11 };
    s.params.max_iter = 2000;
    s.set_operator(op.clone()).unwrap();
    if jacobi {
        s.set_jacobi();
    } else {
        s.set_preconditioner(pc.clone());
    }
    let mut x = DistVector::<T>::new(op.cols().clone()).unwrap();
    let info = s.solve(b, &mut x).unwrap();
    let jac = if jacobi { Some(jacobi_of(&op)) } else { None };
    check_true(t, name, &s, jac.as_ref().or(pc.as_ref()), b, &x);
    let err = rel_err(&gathered(&x), want);
    let tol = if single::<T>() { 2e-3 } else { 1e-8 };
    let ctx = format!("{} {} {name}", T::DTYPE.name(), method.name());
    t.check(
        info.reason.converged(),
        &format!(
            "{ctx}: converged ({:?} after {})",
            info.reason, info.iterations
        ),
    );
    t.check(
        err < tol,
        &format!("{ctx}: error {err:e} against the dense solution"),
    );
    // the same handle again: workspace reused, same answer
    let mut x2 = DistVector::<T>::new(op.cols().clone()).unwrap();
    let info2 = s.solve(b, &mut x2).unwrap();
    t.check(
        info2.iterations == info.iterations && rel_err(&gathered(&x2), &gathered(&x)) == 0.0,
        &format!("{ctx}: repeat solve identical"),
    );
    (info.iterations, info.reason)
}

fn run<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    let r = comm.rank();
    let n = 9i64;
    // uneven split with an empty rank
    let mut lens = parlops::vector::scatter_lens(n * n, comm.size() as usize);
    if lens.len() > 1 {
        lens[0] += lens[1];
        lens[1] = 0;
    }
    let l = Layout::new(comm.clone(), Partition::Scatter, n * n, lens[r as usize]).unwrap();
    let one = T::one();
    let m1 = -one;
    let im = |v: f64| T::from_parts_lossy(0.0, v);
    let cplx = T::DTYPE.is_complex();
    // Hermitian positive definite: shifted Laplacian (+ an imaginary skew part for complex types)
    let k = if cplx { im(0.3) } else { T::zero() };
    let spd: Op<T> = Arc::new(grid(&l, n, T::real(5.0), m1 - k, m1 + k, m1, m1));
    // nonsymmetric: upwinded convection
    let ns: Op<T> = Arc::new(grid(
        &l,
        n,
        T::real(5.0),
        T::real(-1.6) + im(0.2),
        T::real(-0.4),
        m1,
        T::real(-0.7),
    ));
    // symmetric indefinite (Laplacian shifted into its spectrum)
    let ind: Op<T> = Arc::new(grid(&l, n, T::real(4.0 - 2.3), m1, m1, m1, m1));
    let mut b = DistVector::<T>::new(l.clone()).unwrap();
    random_fill(&mut b, 11);
    let gb = gathered(&b);
    let x_spd = gauss(dense(spd.as_ref()), gb.clone());
    let x_ns = gauss(dense(ns.as_ref()), gb.clone());
    let x_ind = gauss(dense(ind.as_ref()), gb.clone());
    let mut its = Vec::new();
    for m in [Method::Cg, Method::CgSingleReduction, Method::CgPipelined] {
        its.push(solve_one(t, "SPD", m, spd.clone(), None, false, &b, &x_spd).0);
        solve_one(t, "SPD, Jacobi", m, spd.clone(), None, true, &b, &x_spd);
    }
    t.check(
        its.iter().max().unwrap() - its.iter().min().unwrap() <= 2,
        &format!(
            "{}: CG variants take the same iterations {its:?}",
            T::DTYPE.name()
        ),
    );
    // the natural norm (MFEM's test) with Jacobi: same solution; the CG variants agree
    let mut nat = Vec::new();
    for m in [Method::Cg, Method::CgSingleReduction, Method::CgPipelined] {
        let mut s = Solver::<T>::new(m);
        s.params.rtol = if single::<T>() { 1e-6 } else { 1e-11 };
        s.params.natural_norm = true;
        s.set_operator(spd.clone()).unwrap();
        s.set_jacobi();
        let mut x = DistVector::<T>::new(l.clone()).unwrap();
        let i = s.solve(&b, &mut x).unwrap();
        check_true(t, "natural norm", &s, Some(&jacobi_of(&spd)), &b, &x);
        let tol = if single::<T>() { 2e-3 } else { 1e-8 };
        t.check(
            i.reason.converged() && rel_err(&gathered(&x), &x_spd) < tol,
            &format!("{} natural norm", m.name()),
        );
        nat.push(i.iterations);
    }
    t.check(
        nat.iter().max().unwrap() - nat.iter().min().unwrap() <= 2,
        &format!("natural-norm CG variants agree {nat:?}"),
    );
    for m in [
        Method::Gmres,
        Method::Fgmres,
        Method::Bicgstab,
        Method::Minres,
    ] {
        solve_one(t, "SPD", m, spd.clone(), None, false, &b, &x_spd);
    }
    for m in [Method::Gmres, Method::Fgmres, Method::Bicgstab] {
        solve_one(t, "nonsymmetric", m, ns.clone(), None, false, &b, &x_ns);
        solve_one(
            t,
            "nonsymmetric, Jacobi",
            m,
            ns.clone(),
            None,
            true,
            &b,
            &x_ns,
        );
    }
    // a preconditioner given as an operator: diag(1/5)
    let mut dinv = DistVector::<T>::new(l.clone()).unwrap();
    dinv.fill(T::real(0.2)).unwrap();
    let pc: Op<T> = Arc::new(Diagonal::new(&dinv).unwrap());
    solve_one(
        t,
        "nonsymmetric, operator preconditioner",
        Method::Gmres,
        ns.clone(),
        Some(pc.clone()),
        false,
        &b,
        &x_ns,
    );
    solve_one(
        t,
        "SPD, operator preconditioner",
        Method::Minres,
        spd.clone(),
        Some(pc.clone()),
        false,
        &b,
        &x_spd,
    );
    solve_one(
        t,
        "indefinite",
        Method::Minres,
        ind.clone(),
        None,
        false,
        &b,
        &x_ind,
    );
    solve_one(
        t,
        "indefinite",
        Method::Gmres,
        ind.clone(),
        None,
        false,
        &b,
        &x_ind,
    );
    // GMRES with a short restart still gets there
    {
        let mut s = Solver::<T>::new(Method::Gmres);
        s.params.restart = 5;
        s.params.rtol = if single::<T>() { 1e-6 } else { 1e-11 };
        s.set_operator(ns.clone()).unwrap();
        let mut x = DistVector::<T>::new(l.clone()).unwrap();
        let info = s.solve(&b, &mut x).unwrap();
        check_true(t, "GMRES(5)", &s, None, &b, &x);
        t.check(
            info.reason.converged()
                && rel_err(&gathered(&x), &x_ns) < if single::<T>() { 2e-3 } else { 1e-8 },
            "GMRES(5) restarts",
        );
    }

    // least squares: tall dense block-row matrix, with and without damping
    let rows = Layout::new(comm.clone(), Partition::Scatter, 40, -1).unwrap();
    let cols = Layout::new(comm.clone(), Partition::Scatter, 12, -1).unwrap();
    let ncols = 12usize;
    let mine: Vec<T> = (rows.local_start()..rows.local_start() + rows.local_len())
        .flat_map(|i| {
            (0..ncols as i64).map(move |j| {
                T::from_parts_lossy(
                    ((i * 7 + j * 3) as f64 * 0.37).sin()
                        + if i as usize % ncols == j as usize {
                            2.0
                        } else {
                            0.0
                        },
                    ((i + 2 * j) as f64 * 0.21).cos() * 0.5,
                )
            })
        })
        .collect();
    let a: Op<T> = Arc::new(DenseBlockRow::new(rows.clone(), cols.clone(), mine).unwrap());
    let mut y = DistVector::<T>::new(rows.clone()).unwrap();
    random_fill(&mut y, 5);
    let ad = dense(a.as_ref());
    let gy = gathered(&y);
    for damp in [0.0, 0.7] {
        // normal equations (A^H A + damp^2 I) x = A^H y
        let mut nm = vec![vec![T::zero(); ncols]; ncols];
        let mut rhs = vec![T::zero(); ncols];
        for i in 0..ncols {
            for j in 0..ncols {
                let mut s = T::zero();
                for k2 in 0..40 {
                    s += ad[k2][i].conj() * ad[k2][j];
                }
                nm[i][j] = s + if i == j {
                    T::real(damp * damp)
                } else {
                    T::zero()
                };
            }
            let mut s = T::zero();
            for k2 in 0..40 {
                s += ad[k2][i].conj() * gy[k2];
            }
            rhs[i] = s;
        }
        let want = gauss(nm, rhs);
        for m in [Method::Cgls, Method::Lsqr] {
            let mut s = Solver::<T>::new(m);
            s.params.rtol = if single::<T>() { 1e-6 } else { 1e-12 };
            s.params.damp = damp;
            s.set_operator(a.clone()).unwrap();
            let mut x = DistVector::<T>::new(cols.clone()).unwrap();
            let info = s.solve(&y, &mut x).unwrap();
            check_true(t, &format!("damp {damp}"), &s, None, &y, &x);
            let gx = gathered(&x);
            let ctx = format!("{} {} damp {damp}", T::DTYPE.name(), m.name());
            t.check(
                info.reason.converged(),
                &format!("{ctx}: converged ({:?})", info.reason),
            );
            t.check(
                rel_err(&gx, &want) < if single::<T>() { 2e-3 } else { 1e-8 },
                &format!("{ctx}: error {:e}", rel_err(&gx, &want)),
            );
            // r1norm = ||y - A x||, r2norm = sqrt(r1^2 + damp^2 ||x||^2)
            let mut r1 = 0.0;
            for i in 0..40 {
                let mut s2 = gy[i];
                for j in 0..ncols {
                    s2 = s2 - ad[i][j] * gx[j];
                }
                r1 += s2.abs2_f64();
            }
            let xx: f64 = gx.iter().map(|v| v.abs2_f64()).sum();
            let tol = if single::<T>() { 1e-3 } else { 1e-9 };
            t.check(
                (info.r1norm - r1.sqrt()).abs() <= tol * r1.sqrt().max(1.0),
                &format!("{ctx}: r1norm {} vs {}", info.r1norm, r1.sqrt()),
            );
            t.check(
                (info.r2norm - (r1 + damp * damp * xx).sqrt()).abs() <= tol * r1.sqrt().max(1.0),
                &format!("{ctx}: r2norm"),
            );
        }
    }

    // ISTA / FISTA on a diagonal operator: soft thresholding has the closed form soft(b/d, eps/(2 d^2))
    let mut d = DistVector::<T>::new(l.clone()).unwrap();
    let st = l.local_start();
    for (i, v) in d.local_mut().iter_mut().enumerate() {
        *v = T::real(1.0 + ((st + i as i64) % 5) as f64 * 0.25);
    }
    let dop: Op<T> = Arc::new(Diagonal::new(&d).unwrap());
    let gd = gathered(&d);
    let eps = 0.3;
    let want: Vec<T> = gb
        .iter()
        .zip(&gd)
        .map(|(bv, dv)| {
            let z = *bv / *dv;
            let th = eps / (2.0 * dv.abs2_f64());
            let a = z.abs_f64();
            if a <= th {
                T::zero()
            } else {
                z * T::real((a - th) / a)
            }
        })
        .collect();
    for m in [Method::Ista, Method::Fista] {
        let mut s = Solver::<T>::new(m);
        s.params.eps = eps;
        s.params.rtol = if single::<T>() { 1e-6 } else { 1e-13 };
        s.params.atol = 0.0;
        s.params.max_iter = 5000;
        s.set_operator(dop.clone()).unwrap();
        let mut x = DistVector::<T>::new(l.clone()).unwrap();
        let info = s.solve(&b, &mut x).unwrap();
        check_true(t, "soft", &s, None, &b, &x);
        let e = rel_err(&gathered(&x), &want);
        t.check(
            info.reason.converged() && e < if single::<T>() { 1e-3 } else { 1e-9 },
            &format!(
                "{} {}: soft-threshold solution error {e:e} ({:?}, {} its)",
                T::DTYPE.name(),
                m.name(),
                info.reason,
                info.iterations
            ),
        );
        for th in [Threshold::Hard, Threshold::Half] {
            s.params.threshold = th;
            let info = s.solve(&b, &mut x).unwrap();
            check_true(t, &format!("{th:?}"), &s, None, &b, &x);
            t.check(
                info.reason.converged(),
                &format!("{} {} {th:?}: {:?}", T::DTYPE.name(), m.name(), info.reason),
            );
        }
    }
}

fn run_reasons(t: &mut Tally, comm: &Arc<Comm>) {
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
fn run_guard<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
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
/// driver must then report PARLOPS_DIVERGED_NAN on every rank (with the check off, single-reduction
/// CG does report a convergence here: the test reaches the driver's check). GMRES, FGMRES, CG and
/// pipelined CG, which confirm their estimate on the true residual, do not converge at all (the
/// NaN entry of x never moves).
fn run_final_check<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
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
            .chain([(Method::CgSingleReduction, false)])
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
                        | Method::Richardson
                        | Method::CgPipelined
                        | Method::Cg
                ) {
                    // they test the true residual b - A x (GMRES, FGMRES, CG and pipelined CG
                    // confirm on it, Richardson recomputes it): the entry of x(0) never moves, so
                    // they never converge
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
fn run_issue10(t: &mut Tally, comm: &Arc<Comm>) {
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

/// PARLOPS_REFERENCE_INITIAL_RESIDUAL (issue 12; MFEM's rule): with a good nonzero guess the test
/// ||r|| <= rtol ||r_0|| asks for more iterations than ||r|| <= rtol ||b||; the reported initial norm
/// is the independently computed ||b - A x0|| (||A^H (b - A x0)|| for CGLS and LSQR); the true
/// residual meets the rule (check_true); with a zero guess both references give the same iterations.
fn run_reference<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
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
fn run_richardson<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
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
fn run_null_space<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
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

fn run_unmonitored_bits<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>, method: Method) {
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
            // CG: one to confirm a convergence on the true residual
            let extra = if pipe {
                5 + 2 * (info.iterations as u64 / 50)
            } else if method == Method::Cg && limit == 5000 {
                4
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
fn run_leftovers<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
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

fn main() {
    let (comm, mut t) = common::start();
    run_leftovers::<f64>(&mut t, &comm);
    run_leftovers::<c64>(&mut t, &comm);
    run_leftovers::<f32>(&mut t, &comm);
    run_null_space::<f64>(&mut t, &comm);
    run_null_space::<c64>(&mut t, &comm);
    run_null_space::<f32>(&mut t, &comm);
    run_richardson::<f64>(&mut t, &comm);
    run_richardson::<c64>(&mut t, &comm);
    run_richardson::<f32>(&mut t, &comm);
    run_richardson::<c32>(&mut t, &comm);
    run_reference::<f64>(&mut t, &comm);
    run_reference::<c64>(&mut t, &comm);
    run_reference::<f32>(&mut t, &comm);
    run_reference::<c32>(&mut t, &comm);
    run::<f64>(&mut t, &comm);
    run::<c64>(&mut t, &comm);
    run::<f32>(&mut t, &comm);
    run::<c32>(&mut t, &comm);
    run_reasons(&mut t, &comm);
    run_issue10(&mut t, &comm);
    run_guard::<f64>(&mut t, &comm);
    run_guard::<c64>(&mut t, &comm);
    run_guard::<f32>(&mut t, &comm);
    run_guard::<c32>(&mut t, &comm);
    run_final_check::<f64>(&mut t, &comm);
    run_final_check::<c64>(&mut t, &comm);
    run_final_check::<f32>(&mut t, &comm);
    run_final_check::<c32>(&mut t, &comm);
    run_unmonitored_bits::<f64>(&mut t, &comm, Method::CgPipelined);
    run_unmonitored_bits::<f64>(&mut t, &comm, Method::Cg);
    run_unmonitored_bits::<f64>(&mut t, &comm, Method::CgSingleReduction);
    run_unmonitored_bits::<c64>(&mut t, &comm, Method::CgPipelined);
    run_unmonitored_bits::<c64>(&mut t, &comm, Method::Cg);
    run_unmonitored_bits::<c64>(&mut t, &comm, Method::CgSingleReduction);
    run_unmonitored_bits::<f32>(&mut t, &comm, Method::CgPipelined);
    run_unmonitored_bits::<f32>(&mut t, &comm, Method::Cg);
    run_unmonitored_bits::<f32>(&mut t, &comm, Method::CgSingleReduction);
    run_unmonitored_bits::<c32>(&mut t, &comm, Method::CgPipelined);
    run_unmonitored_bits::<c32>(&mut t, &comm, Method::Cg);
    run_unmonitored_bits::<c32>(&mut t, &comm, Method::CgSingleReduction);
    common::finish("mpi_solvers", comm, t)
}
