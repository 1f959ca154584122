//! Multi-rank solver tests: run with `mpiexec -n P` (P = 1..4; `make test` does). Every method on
//! SPD / Hermitian, nonsymmetric, indefinite and least-squares problems, every dtype, against a dense
//! solution computed here by Gaussian elimination; reduction counts of the CG variants; the
//! converged/diverged reasons. Prints `N passed, M failed` on rank 0.
#![allow(clippy::needless_range_loop)]

mod common;
use common::Tally;

use std::sync::Arc;

use parlops::comm::Comm;
use parlops::op::basic::{Diagonal, Zero};
use parlops::op::csr::CsrOp;
use parlops::op::dense::DenseBlockRow;
use parlops::op::{LinearOperator, Op, random_fill};
use parlops::solver::{Method, Reason, Solver, Threshold};
use parlops::vector::{DistVector, Layout, Partition};
use parlops::{Scalar, c32, c64};

fn single<T: Scalar>() -> bool {
    matches!(T::DTYPE, parlops::DType::F32 | parlops::DType::C64)
}

/// Global dense matrix of an operator (via unit vectors).
fn dense<T: Scalar>(op: &dyn LinearOperator<T>) -> Vec<Vec<T>> {
    let (m, n) = (
        op.rows().global_len() as usize,
        op.cols().global_len() as usize,
    );
    let mut a = vec![vec![T::zero(); n]; m];
    let mut x = DistVector::<T>::new(op.cols().clone()).unwrap();
    let mut y = DistVector::<T>::new(op.rows().clone()).unwrap();
    let mut col = vec![T::zero(); m];
    for j in 0..n {
        x.fill(T::zero()).unwrap();
        let s = op.cols().local_start() as usize;
        if j >= s && j < s + x.local().len() {
            x.local_mut()[j - s] = T::one();
        }
        op.apply(&x, &mut y).unwrap();
        y.gather(-1, Some(&mut col), Ok(())).unwrap();
        for i in 0..m {
            a[i][j] = col[i];
        }
    }
    a
}

/// Solve the square system by Gaussian elimination with partial pivoting (in the type's precision
/// promoted through f64 parts).
fn gauss<T: Scalar>(mut a: Vec<Vec<T>>, mut b: Vec<T>) -> Vec<T> {
    let n = b.len();
    for k in 0..n {
        let piv = (k..n)
            .max_by(|&i, &j| a[i][k].abs_f64().partial_cmp(&a[j][k].abs_f64()).unwrap())
            .unwrap();
        a.swap(k, piv);
        b.swap(k, piv);
        for i in k + 1..n {
            let f = a[i][k] / a[k][k];
            for j in k..n {
                let v = a[k][j];
                a[i][j] = a[i][j] - f * v;
            }
            let bk = b[k];
            b[i] = b[i] - f * bk;
        }
    }
    let mut x = vec![T::zero(); n];
    for i in (0..n).rev() {
        let mut s = b[i];
        for j in i + 1..n {
            s = s - a[i][j] * x[j];
        }
        x[i] = s / a[i][i];
    }
    x
}

fn gathered<T: Scalar>(v: &DistVector<T>) -> Vec<T> {
    let mut out = vec![T::zero(); v.layout().global_len() as usize];
    v.gather(-1, Some(&mut out), Ok(())).unwrap();
    out
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
        s.set_preconditioner(pc);
    }
    let mut x = DistVector::<T>::new(op.cols().clone()).unwrap();
    let info = s.solve(b, &mut x).unwrap();
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
        let per_it = used as f64 / i.iterations as f64;
        if m != Method::Cg {
            t.check(
                used <= i.iterations as u64 + 2,
                &format!(
                    "{}: {used} reductions for {} iterations (one per iteration)",
                    m.name(),
                    i.iterations
                ),
            );
        } else {
            t.check(
                per_it <= 2.1,
                &format!("CG: {per_it} reductions per iteration"),
            );
        }
        // monitor stops, history
        let mut s2 = Solver::<f64>::new(m);
        s2.set_operator(lap.clone()).unwrap();
        s2.params.keep_history = true;
        s2.params.rtol = 1e-8;
        let i2 = s2.solve(&b, &mut x).unwrap();
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
    s.params.nonzero_guess = true;
    s.params.rtol = 1e-6;
    let i = s.solve(&b, &mut sol).unwrap();
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

fn main() {
    let (comm, mut t) = common::start();
    run::<f64>(&mut t, &comm);
    run::<c64>(&mut t, &comm);
    run::<f32>(&mut t, &comm);
    run::<c32>(&mut t, &comm);
    run_reasons(&mut t, &comm);
    common::finish("mpi_solvers", comm, t)
}
