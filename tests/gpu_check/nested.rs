//! Device solves with what real codes put around a Krylov method (issue 31, section 3), each against
//! the same solve on host vectors in the same run: every other method (MINRES, FGMRES, Richardson,
//! CGLS, LSQR, FISTA), the preconditioners (Chebyshev, block Jacobi, BoomerAMG through its host
//! staging), a nested solve (an inner CG's inverse preconditioning FGMRES), a null space (a
//! singular Neumann Laplacian), and the eigensolvers (Lanczos, randomized) on device vectors.

use std::sync::Arc;

use crate::catalogue::uneven;
use crate::common::Tally;
use crate::{CUDA, HOST, csr, rand, rel_diff};
use parlops::comm::Comm;
use parlops::eigen::krylov_schur::{Problem, Target, krylov_schur};
use parlops::eigen::lanczos::{Which, lanczos};
use parlops::eigen::randomized::{Pass, randomized};
use parlops::memory::Location;
use parlops::op::bjacobi::{BlockJacobi, LocalSolve};
use parlops::op::csr::CsrOp;
use parlops::op::{IntoAnyOp, LinearOperator, Op};
use parlops::solver::any::AnySolver;
use parlops::solver::chebyshev::Chebyshev;
use parlops::solver::{Info, Method, Solver};
use parlops::vector::{DistVector, Layout, NormKind, Partition};
use parlops::{DType, Scalar, c32, c64};

fn single<T: Scalar>() -> bool {
    matches!(T::DTYPE, DType::F32 | DType::C64)
}

/// The same solve (`make` builds the solver) on host and on device vectors: both converge (their
/// true residuals meet the rule, recomputed here), the iteration counts agree (to `slack`), the
/// solutions agree (1e-8 in double, 1e-3 in single precision).
fn compare<T: Scalar>(
    t: &mut Tally,
    what: &str,
    a: &dyn LinearOperator<T>,
    b: &DistVector<T>,
    slack: i64,
    make: &dyn Fn() -> Solver<T>,
) -> Option<(Info, Info)> {
    let name = format!("{} {what}", T::DTYPE.name());
    let run = |loc: Location| {
        let bb = b.to_location(loc).unwrap();
        let mut x = DistVector::<T>::new_in(a.cols().clone(), loc).unwrap();
        let mut s = make();
        let info = s.solve(&bb, &mut x);
        (info, x, bb)
    };
    let (hi, hx, _) = run(HOST);
    let (di, dx, db) = run(CUDA);
    let (Ok(hi), Ok(di)) = (hi, di) else {
        t.check(false, &format!("{name}: solves on host and device"));
        return None;
    };
    // the device solution's true residual; for least squares, the normal equations' residual
    // ||A^H (b - A x)|| / ||A^H b|| (the rule CGLS and LSQR test)
    let mut r = DistVector::<T>::new_in(a.rows().clone(), CUDA).unwrap();
    a.apply(&dx, &mut r).unwrap();
    r.axpby(T::one(), &db, -T::one()).unwrap();
    let rel = if a.rows().compatible(a.cols()) {
        r.norm(NormKind::Two).unwrap() / db.norm(NormKind::Two).unwrap()
    } else {
        let mut ar = DistVector::<T>::new_in(a.cols().clone(), CUDA).unwrap();
        let mut ab = DistVector::<T>::new_in(a.cols().clone(), CUDA).unwrap();
        a.apply_adjoint(&r, &mut ar).unwrap();
        a.apply_adjoint(&db, &mut ab).unwrap();
        ar.norm(NormKind::Two).unwrap() / ab.norm(NormKind::Two).unwrap()
    };
    let diff = rel_diff(&dx, &hx);
    let (dtol, rtol) = if single::<T>() {
        (1e-3, 1e-3)
    } else {
        (1e-8, 1e-7)
    };
    t.check(
        hi.reason.converged()
            && di.reason.converged()
            && (hi.iterations - di.iterations).abs() <= slack
            && diff <= dtol
            && rel <= rtol,
        &format!(
            "{name}: host {} its ({:?}), device {} its ({:?}), solutions {diff:.1e} apart, device true residual {rel:.1e}",
            hi.iterations, hi.reason, di.iterations, di.reason
        ),
    );
    Some((hi, di))
}

/// The n x n grid Laplacian with Neumann boundaries (rows sum to zero: singular, the constants its
/// null space), on `l`.
fn neumann<T: Scalar>(l: &Arc<Layout>, n: i64) -> CsrOp<T> {
    let (s, m) = (l.local_start(), l.local_len());
    let (mut ip, mut ix, mut v) = (vec![0i64], Vec::new(), Vec::new());
    for row in s..s + m {
        let (i, j) = (row / n, row % n);
        let mut nb = Vec::new();
        for (di, dj) in [(-1, 0), (0, -1), (0, 1), (1, 0)] {
            let (a, b) = (i + di, j + dj);
            if (0..n).contains(&a) && (0..n).contains(&b) {
                nb.push(a * n + b);
            }
        }
        let mut cols: Vec<(i64, f64)> = nb.iter().map(|&c| (c, -1.0)).collect();
        cols.push((row, nb.len() as f64));
        cols.sort_by_key(|c| c.0);
        for (c, a) in cols {
            ix.push(c);
            v.push(T::real(a));
        }
        ip.push(ix.len() as i64);
    }
    CsrOp::from_local_rows(l.clone(), l.clone(), &ip, &ix, &v, Ok(())).unwrap()
}

fn run<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>)
where
    Op<T>: IntoAnyOp,
{
    let n = 20i64;
    let l = Layout::new(comm.clone(), Partition::Scatter, n * n, uneven(comm, n * n)).unwrap();
    let csr_a = Arc::new(csr::<T>(&l, n, false));
    let a: Op<T> = csr_a.clone();
    let b = rand::<T>(&l, 21, HOST);
    let rtol = if single::<T>() { 1e-5 } else { 1e-10 };
    let solver = |m: Method, pc: Option<Op<T>>| {
        let mut s = Solver::<T>::new(m);
        s.set_operator(a.clone()).unwrap();
        s.set_preconditioner(pc);
        s.params.rtol = rtol;
        s.params.max_iter = 4000;
        s
    };
    // with an iterate monitor (which reads x at every test, so x moves at every iteration: the
    // CG family's undeferred passes, k_cg_update and the XStep::Now modes)
    for m in [Method::Cg, Method::CgSingleReduction, Method::CgPipelined] {
        if single::<T>() && m == Method::CgPipelined {
            continue; // (single-precision pipelined CG stalls near 1e-5 on both sides)
        }
        compare(
            t,
            &format!("{} with an iterate monitor", m.name()),
            a.as_ref(),
            &b,
            2,
            &|| {
                let mut s = solver(m, None);
                let watch: parlops::solver::IterateMonitor = Arc::new(|_it: i64, _r: f64, v| {
                    (parlops::solver::MonitorAction::Continue, Some(v))
                });
                s.set_iterate_monitor(Some(watch));
                s
            },
        );
    }
    // the other methods
    for m in [Method::Minres, Method::Fgmres] {
        compare(t, m.name(), a.as_ref(), &b, 2, &|| solver(m, None));
    }
    let cheb: Op<T> = Arc::new(Chebyshev::new(a.clone(), 3, None).unwrap());
    compare(t, "CG + Chebyshev(3)", a.as_ref(), &b, 1, &|| {
        solver(Method::Cg, Some(cheb.clone()))
    });
    let ic: Op<T> = Arc::new(
        comm.agree(BlockJacobi::new(&csr_a, LocalSolve::Ic0))
            .unwrap(),
    );
    compare(t, "CG + block Jacobi IC(0)", a.as_ref(), &b, 1, &|| {
        solver(Method::Cg, Some(ic.clone()))
    });
    let ilu: Op<T> = Arc::new(
        comm.agree(BlockJacobi::new(&csr_a, LocalSolve::Ilu0))
            .unwrap(),
    );
    compare(t, "GMRES + block Jacobi ILU(0)", a.as_ref(), &b, 2, &|| {
        solver(Method::Gmres, Some(ilu.clone()))
    });
    // Richardson with Chebyshev: a smoother iteration as MFEM's SLISolver runs it
    compare(t, "Richardson + Chebyshev(3)", a.as_ref(), &b, 1, &|| {
        solver(Method::Richardson, Some(cheb.clone()))
    });
    // a nested solve: a few inner CG iterations as FGMRES' preconditioner (the inverse of an
    // AnySolver, as the C API's parlops_solver_inverse makes it)
    let mut inner = AnySolver::new(comm.clone(), Method::Cg);
    inner.set_operator(&a.clone().into_any(), 0).unwrap();
    inner.params.rtol = 1e-2;
    inner.params.max_iter = 5;
    let inv: Op<T> = inner.inverse(true).unwrap().typed::<T>().unwrap();
    compare(t, "FGMRES + inner CG (5 its)", a.as_ref(), &b, 1, &|| {
        solver(Method::Fgmres, Some(inv.clone()))
    });
    // least squares on a tall operator: [A; A] x = [b; b]
    let tall: Op<T> = Arc::new(
        parlops::op::blockop::BlockOp::new(comm, 2, 1, vec![Some(a.clone()), Some(a.clone())])
            .unwrap(),
    );
    let bt = rand::<T>(tall.rows(), 22, HOST);
    for m in [Method::Cgls, Method::Lsqr] {
        // (least squares amplifies summation order over hundreds of iterations: counts within 2%)
        compare(
            t,
            &format!("{} on [A; A]", m.name()),
            tall.as_ref(),
            &bt,
            8,
            &|| {
                let mut s = Solver::<T>::new(m);
                s.set_operator(tall.clone()).unwrap();
                s.params.rtol = rtol;
                s.params.max_iter = 4000;
                s
            },
        );
    }
    // a null space: the singular Neumann Laplacian, b with a component along the constants; the
    // solver works in the complement (CG with the constants projected out)
    let ns: Op<T> = Arc::new(neumann::<T>(&l, n));
    let mut bn = rand::<T>(&l, 23, HOST);
    let mut ones = DistVector::<T>::new(l.clone()).unwrap();
    ones.fill(T::one()).unwrap();
    let mean = ones.dot(&bn).unwrap() / T::real((n * n) as f64);
    bn.axpy(-mean, &ones).unwrap();
    compare(
        t,
        "CG on a Neumann Laplacian, constants as null space",
        ns.as_ref(),
        &bn,
        1,
        &|| {
            let mut s = Solver::<T>::new(Method::Cg);
            s.set_operator(ns.clone()).unwrap();
            s.set_null_space(Some((true, Vec::new()))).unwrap();
            s.params.rtol = rtol;
            s.params.max_iter = 4000;
            s
        },
    );
}

/// BoomerAMG (double precision, hypre on the host): on device vectors its applies are staged through
/// host copies; CG with it takes the host's iterations.
fn amg(t: &mut Tally, comm: &Arc<Comm>) {
    let n = 24i64;
    let l = Layout::new(comm.clone(), Partition::Scatter, n * n, uneven(comm, n * n)).unwrap();
    let a = Arc::new(csr::<f64>(&l, n, false));
    let pc = parlops::hypre::amg::BoomerAmg::setup(
        &a,
        &parlops::hypre::options::HypreOptions::boomeramg(),
        0,
        &[],
    );
    t.check(
        pc.is_ok(),
        &format!("BoomerAMG set up (hypre loaded): {:?}", pc.as_ref().err()),
    );
    let Ok(pc) = pc else { return };
    let pc: Op<f64> = Arc::new(pc);
    let op: Op<f64> = a.clone();
    let b = rand::<f64>(&l, 31, HOST);
    compare(t, "CG + BoomerAMG (staged)", op.as_ref(), &b, 0, &|| {
        let mut s = Solver::<f64>::new(Method::Cg);
        s.set_operator(op.clone()).unwrap();
        s.set_preconditioner(Some(pc.clone()));
        s.params.rtol = 1e-10;
        s
    });
}

/// Lanczos and the randomized eigensolver from device vectors give the host's eigenvalues.
fn eigen<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    let n = 16i64;
    let l = Layout::new(comm.clone(), Partition::Scatter, n * n, uneven(comm, n * n)).unwrap();
    let a: Op<T> = Arc::new(csr::<T>(&l, n, false));
    let tol = if single::<T>() { 1e-4 } else { 1e-9 };
    let name = T::DTYPE.name();
    for which in [Which::Largest, Which::Smallest] {
        let go = |loc: Location| {
            let v0 = rand::<T>(&l, 41, loc);
            let mut vs: Vec<DistVector<T>> = (0..3)
                .map(|_| DistVector::new_in(l.clone(), loc).unwrap())
                .collect();
            let mut vr: Vec<&mut DistVector<T>> = vs.iter_mut().collect();
            let r = lanczos(a.as_ref(), &v0, 200, 1e-10, 3, which, &mut vr);
            (r, vs)
        };
        let ((hr, hv), (dr, dv)) = (go(HOST), go(CUDA));
        let ok = match (&hr, &dr) {
            (Ok(h), Ok(d)) => {
                h.converged
                    && d.converged
                    && h.values.len() == d.values.len()
                    && h.values
                        .iter()
                        .zip(&d.values)
                        .all(|(x, y)| (x - y).abs() <= tol * x.abs().max(1.0))
                    && dv.iter().all(|v| v.is_device())
                    && hv.len() == dv.len()
            }
            _ => false,
        };
        t.check(
            ok,
            &format!(
                "{name} Lanczos {which:?} from a device start vector: host {:?}, device {:?}",
                hr.as_ref().map(|r| &r.values),
                dr.as_ref().map(|r| &r.values)
            ),
        );
    }
    // Krylov-Schur with a basis of 10 (restarts: the kept Ritz vectors formed through spare device
    // vectors), host and device alike
    for target in [Target::Largest, Target::Smallest] {
        let go = |loc: Location| {
            let v0 = rand::<T>(&l, 43, loc);
            let mut vs: Vec<DistVector<T>> = (0..3)
                .map(|_| DistVector::new_in(l.clone(), loc).unwrap())
                .collect();
            let mut vr: Vec<&mut DistVector<T>> = vs.iter_mut().collect();
            let p = Problem {
                a: a.as_ref(),
                b: None,
                inv: None,
            };
            let r = krylov_schur(&p, target, &v0, 3, 10, 5000, tol, &mut vr, None);
            (r, vs)
        };
        let ((hr, hv), (dr, dv)) = (go(HOST), go(CUDA));
        let ok = match (&hr, &dr) {
            (Ok(h), Ok(d)) => {
                h.converged
                    && d.converged
                    && h.restarts > 0
                    && h.values
                        .iter()
                        .zip(&d.values)
                        .all(|(x, y)| (x - y).abs() <= 10.0 * tol * x.abs().max(1.0))
                    && dv.iter().all(|v| v.is_device())
                    && hv.len() == dv.len()
            }
            _ => false,
        };
        t.check(
            ok,
            &format!(
                "{name} Krylov-Schur {target:?} from a device start vector: host {:?}, device {:?}",
                hr.as_ref().map(|r| (&r.values, r.restarts)),
                dr.as_ref().map(|r| (&r.values, r.restarts))
            ),
        );
    }
    let go = |loc: Location| {
        let om: Vec<DistVector<T>> = (0..8).map(|s| rand::<T>(&l, 50 + s, loc)).collect();
        let omr: Vec<&DistVector<T>> = om.iter().collect();
        let mut us: Vec<DistVector<T>> = (0..4)
            .map(|_| DistVector::new_in(l.clone(), loc).unwrap())
            .collect();
        let mut ur: Vec<&mut DistVector<T>> = us.iter_mut().collect();
        randomized(a.as_ref(), None, &omr, 2, Pass::Double, &mut ur)
    };
    let (h, d) = (go(HOST), go(CUDA));
    let ok = match (&h, &d) {
        (Ok(h), Ok(d)) => {
            h.len() == d.len()
                && h.iter()
                    .zip(d)
                    .all(|(x, y)| (x - y).abs() <= 100.0 * tol * x.abs().max(1.0))
        }
        _ => false,
    };
    t.check(
        ok,
        &format!("{name} randomized eigensolver from device vectors: host {h:?}, device {d:?}"),
    );
}

/// The solves and eigensolvers in the four dtypes (AMG: double precision).
pub(crate) fn nested(t: &mut Tally, comm: &Arc<Comm>) {
    run::<f64>(t, comm);
    run::<f32>(t, comm);
    run::<c32>(t, comm);
    run::<c64>(t, comm);
    amg(t, comm);
    eigen::<f64>(t, comm);
    eigen::<c64>(t, comm);
    eigen::<f32>(t, comm);
}
