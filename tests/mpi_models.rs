//! Multi-rank tests of the solver building blocks that PyLops-MPI and hIPPYlib users rely on: the
//! monitor that sees the iterate and its residual, trust-region (Steihaug) CG, multi-vector
//! operations and orthonormalisation, the randomized eigensolvers, Lanczos and the low-rank
//! operator. Run with
//! `mpiexec -n P` (P = 1..4; `make test` does), uneven splits, against dense references computed
//! here. Prints `N passed, M failed` on rank 0.
#![allow(clippy::needless_range_loop, clippy::type_complexity)]

mod common;
use common::{Tally, dense, gathered, gauss, uneven};

use std::sync::{Arc, Mutex};

use parlops::comm::Comm;
use parlops::op::Op;
use parlops::op::csr::CsrOp;
use parlops::solver::{IterateMonitor, Method, MonitorAction, PcSide, Reason, Solver};
use parlops::vector::{AnyVec, DistVector, Layout};
use parlops::{Scalar, c64};

fn single<T: Scalar>() -> bool {
    matches!(T::DTYPE, parlops::DType::F32 | parlops::DType::C64)
}

/// Rows of the n x n grid operator with diagonal `d` and neighbours (west, east, south, north)
/// `nb`; rows from n^2 on are the identity (a tall `rows` layout gives a least-squares problem).
fn grid<T: Scalar>(rows: &Arc<Layout>, cols: &Arc<Layout>, n: i64, d: f64, nb: [f64; 4]) -> Op<T> {
    let nn = n * n;
    let (st, len) = (rows.local_start(), rows.local_len());
    let (mut ip, mut ix, mut v) = (vec![0i64], Vec::new(), Vec::new());
    for g in st..st + len {
        if g >= nn {
            ix.push(g - nn);
            v.push(T::one());
        } else {
            let (i, j) = (g / n, g % n);
            for (ok, c, w) in [
                (i > 0, g - n, nb[2]),
                (j > 0, g - 1, nb[0]),
                (true, g, d),
                (j < n - 1, g + 1, nb[1]),
                (i < n - 1, g + n, nb[3]),
            ] {
                if ok {
                    ix.push(c);
                    v.push(T::from_parts_lossy(w, 0.0));
                }
            }
        }
        ip.push(ix.len() as i64);
    }
    Arc::new(CsrOp::from_local_rows(rows.clone(), cols.clone(), &ip, &ix, &v, Ok(())).unwrap())
}

fn norm<T: Scalar>(v: &[T]) -> f64 {
    v.iter().map(|a| a.abs2_f64()).sum::<f64>().sqrt()
}

fn matvec<T: Scalar>(a: &[Vec<T>], x: &[T]) -> Vec<T> {
    a.iter()
        .map(|row| row.iter().zip(x).fold(T::zero(), |s, (p, q)| s + *p * *q))
        .collect()
}

fn adj_matvec<T: Scalar>(a: &[Vec<T>], y: &[T]) -> Vec<T> {
    let mut out = vec![T::zero(); a[0].len()];
    for (row, yi) in a.iter().zip(y) {
        for (o, aij) in out.iter_mut().zip(row) {
            *o += aij.conj() * *yi;
        }
    }
    out
}

fn sub<T: Scalar>(a: &[T], b: &[T]) -> Vec<T> {
    a.iter().zip(b).map(|(p, q)| *p - *q).collect()
}

/// What the monitor saw at one call: (iteration, residual norm, x, r), gathered on every rank.
type Seen<T> = Arc<Mutex<Vec<(i64, f64, Vec<T>, Vec<T>)>>>;

/// A monitor that records what it sees and answers with `act(iteration, x)`.
fn recorder<T: Scalar>(
    seen: &Seen<T>,
    act: impl Fn(i64, &[T]) -> MonitorAction + Send + Sync + 'static,
) -> IterateMonitor {
    let seen = seen.clone();
    Arc::new(move |it: i64, rn: f64, [xv, rv]: [AnyVec; 2]| {
        let xg = gathered(xv.typed::<T>().unwrap());
        let rg = gathered(rv.typed::<T>().unwrap());
        let a = act(it, &xg);
        seen.lock().unwrap().push((it, rn, xg, rg));
        (a, Some([xv, rv]))
    })
}

/// The right-hand side sin(0.7 g) + 0.5 (times 1 + 0.3i for complex types), on `l`.
fn rhs<T: Scalar>(l: &Arc<Layout>) -> DistVector<T> {
    let mut b = DistVector::<T>::new(l.clone()).unwrap();
    let st = l.local_start();
    let z = T::from_parts_lossy(1.0, if T::PARTS == 2 { 0.3 } else { 0.0 });
    for (k, bi) in b.local_mut().iter_mut().enumerate() {
        *bi = T::from_parts_lossy(((st + k as i64) as f64 * 0.7).sin() + 0.5, 0.0) * z;
    }
    b
}

/// Every method with a monitor that sees x and r: r is b - A x of the x it is handed (checked
/// against the dense product), the norm the method tests is ||r|| where the method tests the true
/// residual, the last iterate seen is the solution returned, and each converged solve meets its
/// rule on the recomputed residual.
fn run_monitor<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    common::case(&format!("run_monitor ({})", T::DTYPE.name()));
    let n = 7i64;
    let nn = n * n;
    let l = uneven(comm, nn);
    let tall_rows = uneven(comm, 2 * nn);
    let spd = grid::<T>(&l, &l, n, 4.5, [-1.0; 4]);
    let nonsym = grid::<T>(&l, &l, n, 4.5, [-1.4, -0.6, -1.2, -0.8]);
    let tall = grid::<T>(&tall_rows, &l, n, 4.5, [-1.0; 4]);
    let rtol = if single::<T>() { 1e-5 } else { 1e-10 };
    let tol = if single::<T>() { 2e-5 } else { 1e-12 };
    // (name, method, operator, Jacobi, left, ||r|| is what the method tests)
    let cases: Vec<(&str, Method, &Op<T>, bool, bool, bool)> = vec![
        ("CG", Method::Cg, &spd, false, false, true),
        ("Jacobi-CG", Method::Cg, &spd, true, false, true),
        (
            "CG (single reduction)",
            Method::CgSingleReduction,
            &spd,
            false,
            false,
            true,
        ),
        (
            "CG (pipelined)",
            Method::CgPipelined,
            &spd,
            false,
            false,
            true,
        ),
        ("MINRES", Method::Minres, &spd, false, false, true),
        ("GMRES", Method::Gmres, &nonsym, false, false, true),
        (
            "Jacobi-GMRES (right)",
            Method::Gmres,
            &nonsym,
            true,
            false,
            true,
        ),
        (
            "Jacobi-GMRES (left)",
            Method::Gmres,
            &nonsym,
            true,
            true,
            false,
        ),
        ("Jacobi-FGMRES", Method::Fgmres, &nonsym, true, false, true),
        ("BiCGStab", Method::Bicgstab, &nonsym, false, false, true),
        (
            "Jacobi-Richardson",
            Method::Richardson,
            &spd,
            true,
            false,
            false,
        ),
        ("CGLS", Method::Cgls, &tall, false, false, false),
        ("LSQR", Method::Lsqr, &tall, false, false, false),
    ];
    for (name, m, op, jacobi, left, true_norm) in cases {
        let ad = dense(op.as_ref());
        let b = rhs::<T>(op.rows());
        let bg = gathered(&b);
        let seen: Seen<T> = Arc::new(Mutex::new(Vec::new()));
        let mut s = Solver::<T>::new(m);
        s.params.rtol = rtol;
        s.params.max_iter = 400;
        s.params.restart = 6; // several GMRES cycles
        s.set_operator((*op).clone()).unwrap();
        if jacobi {
            s.set_jacobi();
        }
        if left {
            s.params.pc_side = PcSide::Left;
        }
        s.set_iterate_monitor(Some(recorder(&seen, |_, _| MonitorAction::Continue)));
        let mut x = DistVector::<T>::new(op.cols().clone()).unwrap();
        let info = s.solve(&b, &mut x).unwrap();
        let xg = gathered(&x);
        let seen = seen.lock().unwrap();
        t.check(
            info.reason.converged(),
            &format!(
                "{name}: converged with an iterate monitor ({:?})",
                info.reason
            ),
        );
        let scale = norm(&bg) + 10.0 * norm(&xg);
        let mut worst_r: f64 = 0.0;
        let mut worst_norm: f64 = 0.0;
        for (_, rn, sx, sr) in seen.iter() {
            let want = sub(&bg, &matvec(&ad, sx));
            worst_r = worst_r.max(norm(&sub(sr, &want)) / scale);
            worst_norm = worst_norm.max((norm(sr) - rn).abs() / norm(&bg));
        }
        t.check(
            seen.len() >= 2 && worst_r <= tol,
            &format!(
                "{name}: r = b - A x for the x handed over at each of {} calls (worst {worst_r:.2e})",
                seen.len()
            ),
        );
        if true_norm {
            let lim = if single::<T>() { 1e-4 } else { 1e-8 };
            t.check(
                worst_norm <= lim,
                &format!("{name}: the tested norm is ||b - A x|| of the x handed over (worst {worst_norm:.2e})"),
            );
        }
        let last = seen.last().unwrap();
        t.check(
            last.0 == info.iterations && norm(&sub(&last.2, &xg)) <= tol * norm(&xg).max(1e-300),
            &format!(
                "{name}: the last iterate seen (iteration {}) is the solution of iteration {}",
                last.0, info.iterations
            ),
        );
        // the converged rule on the recomputed residual
        let r = sub(&bg, &matvec(&ad, &xg));
        let ok = if m.least_squares() {
            let g = adj_matvec(&ad, &r);
            norm(&g) <= 1.01 * rtol * norm(&adj_matvec(&ad, &bg)) + tol * 100.0 * scale
        } else if left || (m == Method::Richardson) {
            norm(&r) <= 100.0 * rtol * norm(&bg)
        } else {
            norm(&r) <= 1.01 * rtol * norm(&bg) + tol * scale
        };
        t.check(
            ok,
            &format!("{name}: the stopping rule holds for the true residual"),
        );
    }
}

/// The monitor's answers: convergence declared by every rank (the caller's rule, checked on the
/// answer), by one rank only (ignored), a stop on one rank, a panic on one rank (an error on every
/// rank, the solver usable after), NaN (never a convergence), and both monitors at once.
fn run_monitor_actions<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    common::case(&format!("run_monitor_actions ({})", T::DTYPE.name()));
    let (rank, size) = (comm.rank(), comm.size());
    let n = 8i64;
    let l = uneven(comm, n * n);
    let a = grid::<T>(&l, &l, n, 4.0, [-1.0; 4]);
    let ad = dense(a.as_ref());
    let b = rhs::<T>(&l);
    let bg = gathered(&b);
    let xstar = gauss(ad.clone(), bg.clone());
    let rtol = if single::<T>() { 1e-6 } else { 1e-13 };
    let solve = |s: &mut Solver<T>| {
        let mut x = DistVector::<T>::new(l.clone()).unwrap();
        let r = s.solve(&b, &mut x);
        (r, gathered(&x))
    };
    let mut plain = Solver::<T>::new(Method::Cg);
    plain.params.rtol = rtol;
    plain.set_operator(a.clone()).unwrap();
    let (r, _) = solve(&mut plain);
    let full = r.unwrap().iterations;

    // every rank declares convergence once the error is below 1e-3 of ||x*||
    let close = {
        let xs = xstar.clone();
        move |_: i64, x: &[T]| {
            if norm(&sub(x, &xs)) <= 1e-3 * norm(&xs) {
                MonitorAction::Converged
            } else {
                MonitorAction::Continue
            }
        }
    };
    let seen: Seen<T> = Arc::new(Mutex::new(Vec::new()));
    let mut s = Solver::<T>::new(Method::Cg);
    s.params.rtol = rtol;
    s.set_operator(a.clone()).unwrap();
    s.set_iterate_monitor(Some(recorder(&seen, close.clone())));
    let (r, xg) = solve(&mut s);
    let info = r.unwrap();
    let err = norm(&sub(&xg, &xstar)) / norm(&xstar);
    t.check(
        info.reason == Reason::ConvergedUser && err <= 1e-3 && info.iterations < full,
        &format!(
            "CG stopped by the monitor's rule: {:?} after {} of {full} iterations, error {err:.2e}",
            info.reason, info.iterations
        ),
    );

    // one rank declaring convergence is not enough: the solve goes on to its own rule
    if size > 1 {
        let seen: Seen<T> = Arc::new(Mutex::new(Vec::new()));
        s.set_iterate_monitor(Some(recorder(&seen, move |it, x| {
            if rank == 0 {
                close(it, x)
            } else {
                MonitorAction::Continue
            }
        })));
        let (r, _) = solve(&mut s);
        let info = r.unwrap();
        t.check(
            info.reason == Reason::ConvergedRtol && info.iterations == full,
            &format!(
                "convergence declared by rank 0 only is not a convergence: {:?} after {} iterations",
                info.reason, info.iterations
            ),
        );
    }

    // a stop on the last rank at iteration 3 stops every rank there
    let seen: Seen<T> = Arc::new(Mutex::new(Vec::new()));
    s.set_iterate_monitor(Some(recorder(&seen, move |it, _| {
        if rank == size - 1 && it == 3 {
            MonitorAction::Stop
        } else {
            MonitorAction::Continue
        }
    })));
    let (r, _) = solve(&mut s);
    let info = r.unwrap();
    t.check(
        info.reason == Reason::DivergedUser && info.iterations == 3,
        &format!(
            "a stop asked by the last rank: {:?} at iteration {}",
            info.reason, info.iterations
        ),
    );

    // a panic on the last rank: an error on every rank, naming the monitor; the solver still works
    let panicky: IterateMonitor = Arc::new(move |it: i64, _: f64, v: [AnyVec; 2]| {
        if rank == size - 1 && it == 2 {
            panic!("monitor panics on purpose");
        }
        (MonitorAction::Continue, Some(v))
    });
    s.set_iterate_monitor(Some(panicky));
    let (r, _) = solve(&mut s);
    let msg = r.err().map(|e| e.msg).unwrap_or_default();
    t.check(
        msg.contains("iterate monitor"),
        &format!("a panicking monitor fails the solve on every rank: '{msg}'"),
    );
    s.set_iterate_monitor(Some(recorder(&seen, |_, _| MonitorAction::Continue)));
    let (r, _) = solve(&mut s);
    t.check(
        r.is_ok_and(|i| i.reason.converged() && i.iterations == full),
        "the solver works again after a monitor failed",
    );

    // NaN in b: never a convergence, whatever the monitor says
    let mut bn = b.duplicate().unwrap();
    bn.copy_from(&b).unwrap();
    if rank == size - 1
        && let Some(v) = bn.local_mut().last_mut()
    {
        *v = T::from_parts_lossy(f64::NAN, 0.0);
    }
    s.set_iterate_monitor(Some(recorder(&seen, |_, _| MonitorAction::Converged)));
    let mut x = DistVector::<T>::new(l.clone()).unwrap();
    let info = s.solve(&bn, &mut x).unwrap();
    t.check(
        info.reason == Reason::DivergedNan,
        &format!(
            "NaN with a monitor declaring convergence: {:?}",
            info.reason
        ),
    );

    // both monitors: the norm-only one sees the same iterations
    let count = Arc::new(Mutex::new(0i64));
    let c2 = count.clone();
    s.set_monitor(Some(Box::new(move |_, _| {
        *c2.lock().unwrap() += 1;
        false
    })));
    let seen: Seen<T> = Arc::new(Mutex::new(Vec::new()));
    s.set_iterate_monitor(Some(recorder(&seen, |_, _| MonitorAction::Continue)));
    let (r, _) = solve(&mut s);
    let info = r.unwrap();
    let calls = seen.lock().unwrap().len() as i64;
    t.check(
        info.iterations == full && *count.lock().unwrap() == calls && calls == full + 1,
        &format!(
            "both monitors together: {calls} calls, {} iterations",
            info.iterations
        ),
    );
}

/// Steihaug-Toint CG in one process on the dense matrix, with the norm ||v||_P^2 = v^H P v taken
/// explicitly (`pdiag`: the diagonal of P; the preconditioner is its inverse): the iterates after
/// each step, the reason and the last iterate.
fn steihaug_dense<T: Scalar>(
    a: &[Vec<T>],
    b: &[T],
    pdiag: &[f64],
    radius: f64,
    rtol: f64,
) -> (Vec<Vec<T>>, Reason, Vec<T>) {
    let n = b.len();
    let pn = |u: &[T], v: &[T]| -> f64 {
        (0..n)
            .map(|i| (u[i].conj() * v[i]).to_parts().0 * pdiag[i])
            .sum()
    };
    let minv = |r: &[T]| -> Vec<T> {
        r.iter()
            .zip(pdiag)
            .map(|(v, d)| *v * T::from_parts_lossy(1.0 / d, 0.0))
            .collect::<Vec<T>>()
    };
    let dotr = |u: &[T], v: &[T]| -> f64 {
        u.iter()
            .zip(v)
            .map(|(p, q)| (p.conj() * *q).to_parts().0)
            .sum()
    };
    let boundary = |x: &[T], p: &[T]| -> f64 {
        let (aa, bb, cc) = (pn(p, p), pn(x, p), pn(x, x) - radius * radius);
        (-bb + (bb * bb - aa * cc).sqrt()) / aa
    };
    let axpy = |x: &mut Vec<T>, t: f64, p: &[T]| {
        for (xi, pi) in x.iter_mut().zip(p) {
            *xi += T::from_parts_lossy(t, 0.0) * *pi;
        }
    };
    let mut x = vec![T::zero(); n];
    let mut r = b.to_vec();
    let mut z = minv(&r);
    let mut p = z.clone();
    let mut rz = dotr(&r, &z);
    let bn = norm(b);
    let mut xs = vec![x.clone()];
    for _ in 0..10 * n {
        let q = matvec(a, &p);
        let pq = dotr(&p, &q);
        if pq <= 0.0 {
            let t = boundary(&x, &p);
            axpy(&mut x, t, &p);
            return (xs, Reason::ConvergedNegCurve, x);
        }
        let alpha = rz / pq;
        let mut trial = x.clone();
        axpy(&mut trial, alpha, &p);
        if pn(&trial, &trial) >= radius * radius {
            let t = boundary(&x, &p);
            axpy(&mut x, t, &p);
            return (xs, Reason::ConvergedStepLength, x);
        }
        x = trial;
        axpy(&mut r, -alpha, &q);
        xs.push(x.clone());
        if norm(&r) <= rtol * bn {
            return (xs, Reason::ConvergedRtol, x);
        }
        z = minv(&r);
        let rz2 = dotr(&r, &z);
        let beta = rz2 / rz;
        rz = rz2;
        for (pi, zi) in p.iter_mut().zip(&z) {
            *pi = *zi + T::from_parts_lossy(beta, 0.0) * *pi;
        }
    }
    (xs, Reason::DivergedMaxIter, x)
}

/// Trust-region CG against [`steihaug_dense`] iterate by iterate: negative curvature on an
/// indefinite matrix, the boundary reached on an SPD one (Euclidean norm, and the Jacobi norm
/// ||x||_D with a Jacobi preconditioner), and a large radius that changes nothing.
fn run_steihaug<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    common::case(&format!("run_steihaug ({})", T::DTYPE.name()));
    let n = 7i64;
    let l = uneven(comm, n * n);
    let indef = grid::<T>(&l, &l, n, 1.5, [-1.0; 4]);
    let spd = grid::<T>(&l, &l, n, 4.5, [-1.1, -0.9, -1.0, -1.0]);
    let b = rhs::<T>(&l);
    let bg = gathered(&b);
    let rtol = 1e-10;
    // (name, operator, Jacobi, radius, reason wanted)
    let cases: Vec<(&str, &Op<T>, bool, f64, Reason)> = vec![
        ("indefinite", &indef, false, 1e3, Reason::ConvergedNegCurve),
        (
            "indefinite, Jacobi",
            &indef,
            true,
            1e3,
            Reason::ConvergedNegCurve,
        ),
        (
            "SPD, radius 0.6",
            &spd,
            false,
            0.6,
            Reason::ConvergedStepLength,
        ),
        (
            "SPD, Jacobi, radius 1.5",
            &spd,
            true,
            1.5,
            Reason::ConvergedStepLength,
        ),
        ("SPD, radius 1e3", &spd, false, 1e3, Reason::ConvergedRtol),
    ];
    for (name, op, jacobi, radius, want) in cases {
        let ad = dense(op.as_ref());
        let pdiag: Vec<f64> = (0..ad.len())
            .map(|i| if jacobi { ad[i][i].to_parts().0 } else { 1.0 })
            .collect();
        let (xs, reason, xref) = steihaug_dense(&ad, &bg, &pdiag, radius, rtol);
        let seen: Seen<T> = Arc::new(Mutex::new(Vec::new()));
        let mut s = Solver::<T>::new(Method::Cg);
        s.params.rtol = rtol;
        s.params.trust_radius = radius;
        s.set_operator((*op).clone()).unwrap();
        if jacobi {
            s.set_jacobi();
        }
        s.set_iterate_monitor(Some(recorder(&seen, |_, _| MonitorAction::Continue)));
        let mut x = DistVector::<T>::new(l.clone()).unwrap();
        let info = s.solve(&b, &mut x).unwrap();
        let xg = gathered(&x);
        let seen = seen.lock().unwrap();
        let mut worst: f64 = 0.0;
        for (k, (_, _, sx, _)) in seen.iter().enumerate() {
            if let Some(want_x) = xs.get(k) {
                worst = worst.max(norm(&sub(sx, want_x)) / norm(&xref));
            } else {
                worst = f64::INFINITY;
            }
        }
        let pnorm = (0..xg.len())
            .map(|i| xg[i].abs2_f64() * pdiag[i])
            .sum::<f64>()
            .sqrt();
        t.check(
            info.reason == want && reason == want && seen.len() == xs.len() && worst <= 1e-10,
            &format!(
                "Steihaug CG, {name}: {:?} (serial {reason:?}), {} iterates seen against {} serial, worst {worst:.1e}",
                info.reason,
                seen.len(),
                xs.len()
            ),
        );
        let err = norm(&sub(&xg, &xref)) / norm(&xref);
        t.check(
            err <= 1e-10
                && info.iterations as usize + 1
                    == xs.len() + (reason != Reason::ConvergedRtol) as usize,
            &format!(
                "Steihaug CG, {name}: the final point is the serial one ({err:.1e}), {} iterations",
                info.iterations
            ),
        );
        if want == Reason::ConvergedRtol {
            let r = sub(&bg, &matvec(&ad, &xg));
            t.check(
                norm(&r) <= 1.01 * rtol * norm(&bg) + 1e-13 * norm(&xg),
                &format!("Steihaug CG, {name}: the true residual meets the rule"),
            );
        } else {
            t.check(
                (pnorm - radius).abs() <= 1e-10 * radius,
                &format!("Steihaug CG, {name}: ||x||_P = {pnorm:.15} on the boundary {radius}"),
            );
        }
    }
    // a nonzero initial guess is refused on every rank
    let mut s = Solver::<T>::new(Method::Cg);
    s.params.trust_radius = 1.0;
    s.params.nonzero_guess = true;
    s.set_operator(spd.clone()).unwrap();
    let mut x = DistVector::<T>::new(l.clone()).unwrap();
    let e = s.solve(&b, &mut x).err().map(|e| e.msg).unwrap_or_default();
    t.check(
        e.contains("initial guess"),
        &format!("trust region with a nonzero guess: '{e}'"),
    );
}

/// Deterministic entry g of test vector `k` (complex parts for complex types).
fn entry<T: Scalar>(k: usize, g: i64) -> T {
    let x = (g as f64 + 1.0) * (k as f64 + 1.3);
    T::from_parts_lossy(
        (0.37 * x).sin() + 0.1 * k as f64,
        if T::PARTS == 2 { (0.11 * x).cos() } else { 0.0 },
    )
}

fn vec_of<T: Scalar>(l: &Arc<Layout>, k: usize) -> DistVector<T> {
    let mut v = DistVector::<T>::new(l.clone()).unwrap();
    let st = l.local_start();
    for (i, e) in v.local_mut().iter_mut().enumerate() {
        *e = entry::<T>(k, st + i as i64);
    }
    v
}

fn dotc<T: Scalar>(a: &[T], b: &[T]) -> T {
    a.iter()
        .zip(b)
        .fold(T::zero(), |s, (x, y)| s + x.conj() * *y)
}

/// Block dot products, maxpy and Gram-Schmidt (Euclidean and B inner products) against dense
/// values; a dependent vector fails on every rank.
fn run_multi<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    use parlops::eigen::orth::{Dependent, orthonormalize};
    use parlops::vector::multi::{block_dot, maxpy};
    common::case(&format!("run_multi ({})", T::DTYPE.name()));
    let tol = if single::<T>() { 1e-5 } else { 1e-13 };
    let n = 6i64;
    let l = uneven(comm, n * n);
    let xs: Vec<DistVector<T>> = (0..5).map(|k| vec_of(&l, k)).collect();
    let ys: Vec<DistVector<T>> = (5..8).map(|k| vec_of(&l, k)).collect();
    let xg: Vec<Vec<T>> = xs.iter().map(gathered).collect();
    let yg: Vec<Vec<T>> = ys.iter().map(gathered).collect();
    let xr: Vec<&DistVector<T>> = xs.iter().collect();
    let yr: Vec<&DistVector<T>> = ys.iter().collect();
    let got = block_dot(&xr, &yr, Ok(())).unwrap();
    let mut worst: f64 = 0.0;
    for i in 0..5 {
        for j in 0..3 {
            let want = dotc(&xg[i], &yg[j]);
            worst = worst.max((got[i * 3 + j] - want).abs_f64() / (norm(&xg[i]) * norm(&yg[j])));
        }
    }
    t.check(
        worst <= tol,
        &format!("block_dot: 5 x 3 dots in one reduction ({worst:.1e})"),
    );
    let a: Vec<T> = (0..5)
        .map(|k| T::from_parts_lossy(0.5 - k as f64, 0.25))
        .collect();
    let mut y = vec_of::<T>(&l, 9);
    let mut want = gathered(&y);
    maxpy(&mut y, &a, &xr).unwrap();
    for k in 0..5 {
        for (w, x) in want.iter_mut().zip(&xg[k]) {
            *w += a[k] * *x;
        }
    }
    let e = norm(&sub(&gathered(&y), &want)) / norm(&want);
    t.check(e <= tol, &format!("maxpy: y += sum a_k x_k ({e:.1e})"));
    // Gram-Schmidt, Euclidean and with B (an SPD grid operator)
    let bop = grid::<T>(&l, &l, n, 4.5, [-1.0; 4]);
    let bd = dense(bop.as_ref());
    for with_b in [false, true] {
        let mut vs: Vec<DistVector<T>> = (0..5).map(|k| vec_of(&l, k)).collect();
        let before: Vec<Vec<T>> = vs.iter().map(gathered).collect();
        let r = {
            let mut refs: Vec<&mut DistVector<T>> = vs.iter_mut().collect();
            orthonormalize(
                &mut refs,
                if with_b { Some(bop.as_ref()) } else { None },
                Dependent::Fail,
            )
            .unwrap()
        };
        let q: Vec<Vec<T>> = vs.iter().map(gathered).collect();
        let (mut orth, mut fact, mut lower): (f64, f64, f64) = (0.0, 0.0, 0.0);
        for i in 0..5 {
            let bqi = if with_b {
                matvec(&bd, &q[i])
            } else {
                q[i].clone()
            };
            for j in 0..5 {
                let g = dotc(&q[j], &bqi);
                let id = if i == j { 1.0 } else { 0.0 };
                orth = orth.max((g - T::from_parts_lossy(id, 0.0)).abs_f64());
                if i > j {
                    lower = lower.max(r[i * 5 + j].abs_f64());
                }
            }
            // v_i = sum_j q_j R[j][i]
            let mut rec = vec![T::zero(); q[i].len()];
            for j in 0..=i {
                for (o, qj) in rec.iter_mut().zip(&q[j]) {
                    *o += r[j * 5 + i] * *qj;
                }
            }
            fact = fact.max(norm(&sub(&rec, &before[i])) / norm(&before[i]));
        }
        let what = if with_b { "Q^H B Q" } else { "Q^H Q" };
        t.check(
            orth <= 10.0 * tol && fact <= 10.0 * tol && lower == 0.0,
            &format!("CGS2 ({what}): orthonormal to {orth:.1e}, V = Q R to {fact:.1e}, R upper triangular"),
        );
    }
    let mut dep: Vec<DistVector<T>> = (0..4).map(|k| vec_of(&l, k)).collect();
    let mut sum = vec_of::<T>(&l, 0);
    sum.axpy(T::from_parts_lossy(2.0, 0.0), &dep[1]).unwrap();
    dep[3].copy_from(&sum).unwrap();
    let mut refs: Vec<&mut DistVector<T>> = dep.iter_mut().collect();
    let e = orthonormalize(&mut refs, None, Dependent::Fail)
        .err()
        .map(|e| e.msg)
        .unwrap_or_default();
    t.check(
        e.contains("vector 3 depends"),
        &format!("a dependent vector fails on every rank: '{e}'"),
    );
}

/// A dense Hermitian matrix with the given eigenvalues in a random unitary basis (a product of
/// Householder reflectors), optionally B^(1/2) A B^(1/2) for a diagonal B: the pencil (A, B) then has
/// the eigenvalues `lam`.
fn known_spectrum<T: Scalar>(n: usize, lam: &[f64], bdiag: Option<&[f64]>) -> Vec<Vec<T>> {
    let mut q: Vec<Vec<T>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| if i == j { T::one() } else { T::zero() })
                .collect()
        })
        .collect();
    for r in 0..4 {
        let w: Vec<T> = (0..n).map(|i| entry::<T>(20 + r, i as i64)).collect();
        let ww = dotc(&w, &w).to_parts().0;
        // Q <- Q (I - 2 w w^H / w^H w)
        for row in q.iter_mut() {
            let s = row.iter().zip(&w).fold(T::zero(), |s, (a, b)| s + *a * *b);
            for (a, b) in row.iter_mut().zip(&w) {
                *a = *a - s * b.conj() * T::from_parts_lossy(2.0 / ww, 0.0);
            }
        }
    }
    let sq: Vec<f64> = (0..n).map(|i| bdiag.map_or(1.0, |b| b[i].sqrt())).collect();
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    let v = (0..n).fold(T::zero(), |s, k| {
                        s + q[i][k] * T::from_parts_lossy(lam[k], 0.0) * q[j][k].conj()
                    });
                    v * T::from_parts_lossy(sq[i] * sq[j], 0.0)
                })
                .collect()
        })
        .collect()
}

fn dense_op<T: Scalar>(l: &Arc<Layout>, a: &[Vec<T>]) -> Op<T> {
    let st = l.local_start() as usize;
    let local: Vec<T> = (st..st + l.local_len() as usize)
        .flat_map(|i| a[i].clone())
        .collect();
    Arc::new(parlops::op::dense::DenseBlockRow::new(l.clone(), l.clone(), local).unwrap())
}

/// The randomized eigensolvers on known spectra (eigenvalues 50 * 0.4^i; the standard problem and
/// a pencil with B diagonal), one product with A per random vector: double pass, the leading 20
/// eigenvalues within 1e-6 with an oversampling of 10 at 1-4 ranks; single pass, each within ten
/// times the first eigenvalue left out (its error bound), U orthonormal (B-orthonormal), A u = lambda B u; and the low-rank operator built
/// from them against U diag(d) U^H.
fn run_randomized<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    use parlops::eigen::randomized::{Pass, randomized};
    use parlops::op::lowrank::LowRank;
    use parlops::vector::random::Distribution;
    common::case(&format!("run_randomized ({})", T::DTYPE.name()));
    let n = 90usize;
    let l = uneven(comm, n as i64);
    let lam: Vec<f64> = (0..n).map(|i| 50.0 * 0.4f64.powi(i as i32)).collect();
    let bdiag: Vec<f64> = (0..n).map(|i| 1.0 + 0.5 * (i as f64 * 0.9).sin()).collect();
    let (k, p) = (20usize, 10usize);
    for pencil in [false, true] {
        let kappa_b = if pencil {
            bdiag.iter().fold(0.0f64, |a, b| a.max(*b))
                / bdiag.iter().fold(f64::MAX, |a, b| a.min(*b))
        } else {
            1.0
        };
        let ad = known_spectrum::<T>(n, &lam, if pencil { Some(&bdiag) } else { None });
        let a = dense_op(&l, &ad);
        let diag = |f: &dyn Fn(f64) -> f64| -> Op<T> {
            let mut d = DistVector::<T>::new(l.clone()).unwrap();
            let st = l.local_start() as usize;
            for (i, e) in d.local_mut().iter_mut().enumerate() {
                *e = T::from_parts_lossy(f(bdiag[st + i]), 0.0);
            }
            Arc::new(parlops::op::basic::Diagonal::new(&d).unwrap())
        };
        let (b, binv) = (diag(&|x| x), diag(&|x| 1.0 / x));
        for pass in [Pass::Double, Pass::Single] {
            let omega: Vec<DistVector<T>> = (0..k + p)
                .map(|j| {
                    let mut v = DistVector::<T>::new(l.clone()).unwrap();
                    v.set_random(Distribution::Gaussian, 1234 + j as u64)
                        .unwrap();
                    v
                })
                .collect();
            let om: Vec<&DistVector<T>> = omega.iter().collect();
            let mut u: Vec<DistVector<T>> = (0..k)
                .map(|_| DistVector::<T>::new(l.clone()).unwrap())
                .collect();
            let vals = {
                let mut ur: Vec<&mut DistVector<T>> = u.iter_mut().collect();
                let pr = if pencil {
                    Some((
                        b.as_ref() as &dyn parlops::op::LinearOperator<T>,
                        binv.as_ref() as &dyn parlops::op::LinearOperator<T>,
                    ))
                } else {
                    None
                };
                randomized(a.as_ref(), pr, &om, 1, pass, &mut ur).unwrap()
            };
            let err = vals
                .iter()
                .zip(&lam)
                .map(|(v, w)| (v - w).abs() / w)
                .fold(0.0f64, f64::max);
            // single pass: no product after the basis, so each error is of the order of the first
            // eigenvalue the k + p random vectors leave out (absolute), not of its square
            let abs_err = vals
                .iter()
                .zip(&lam)
                .map(|(v, w)| (v - w).abs())
                .fold(0.0f64, f64::max);
            let ok_vals = match pass {
                Pass::Double => err <= 1e-6,
                // (times the condition number of B for the pencil)
                Pass::Single => abs_err <= 10.0 * kappa_b * lam[k + p],
            };
            let ug: Vec<Vec<T>> = u.iter().map(gathered).collect();
            let (mut orth, mut res): (f64, f64) = (0.0, 0.0);
            for i in 0..k {
                let bu: Vec<T> = ug[i]
                    .iter()
                    .enumerate()
                    .map(|(r, x)| {
                        *x * T::from_parts_lossy(if pencil { bdiag[r] } else { 1.0 }, 0.0)
                    })
                    .collect();
                for j in 0..k {
                    let g = dotc(&ug[j], &bu);
                    orth = orth.max(
                        (g - T::from_parts_lossy(if i == j { 1.0 } else { 0.0 }, 0.0)).abs_f64(),
                    );
                }
                let au = matvec(&ad, &ug[i]);
                let r: Vec<T> = au
                    .iter()
                    .zip(&bu)
                    .map(|(x, y)| *x - *y * T::from_parts_lossy(vals[i], 0.0))
                    .collect();
                res = res.max(norm(&r) / lam[0]);
            }
            let what = format!(
                "{}{:?} pass",
                if pencil { "pencil (A, B), " } else { "" },
                pass
            );
            t.check(
                ok_vals && orth <= 1e-10 && res <= if pass == Pass::Double { 1e-6 } else { 1e-3 },
                &format!("randomized eigensolver, {what}: 20 eigenvalues to {err:.1e} relative, {abs_err:.1e} absolute (lambda_k+p {:.1e}), U^H B U = I to {orth:.1e}, residuals {res:.1e}", lam[k + p]),
            );
            if !pencil && pass == Pass::Double {
                // the low-rank operator U diag(lambda) U^H
                let ur: Vec<&DistVector<T>> = u.iter().collect();
                let lr = LowRank::new(&ur, &vals).unwrap();
                let x = vec_of::<T>(&l, 3);
                let mut y = DistVector::<T>::new(l.clone()).unwrap();
                parlops::op::LinearOperator::apply(&lr, &x, &mut y).unwrap();
                let xg = gathered(&x);
                let mut want = vec![T::zero(); n];
                for i in 0..k {
                    let c = dotc(&ug[i], &xg) * T::from_parts_lossy(vals[i], 0.0);
                    for (w, v) in want.iter_mut().zip(&ug[i]) {
                        *w += c * *v;
                    }
                }
                let e = norm(&sub(&gathered(&y), &want)) / norm(&want);
                t.check(
                    e <= 1e-12,
                    &format!("low-rank operator U diag(d) U^H x ({e:.1e})"),
                );
            }
        }
    }
}

/// Lanczos on an anisotropic 2-D Laplacian (weights 1 and 0.7: simple eigenvalues, known in closed
/// form): the 3 largest and the 3 smallest within 1e-8, with Ritz vectors that satisfy A v = theta v.
fn run_lanczos<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    use parlops::eigen::lanczos::{Which, lanczos};
    use parlops::vector::random::Distribution;
    common::case(&format!("run_lanczos ({})", T::DTYPE.name()));
    let n = 16i64;
    let l = uneven(comm, n * n);
    let a = grid::<T>(&l, &l, n, 4.0, [-1.0, -1.0, -0.7, -0.7]);
    let h = std::f64::consts::PI / (n as f64 + 1.0);
    let mut exact: Vec<f64> = (1..=n)
        .flat_map(|i| {
            (1..=n).map(move |j| 4.0 - 2.0 * (i as f64 * h).cos() - 1.4 * (j as f64 * h).cos())
        })
        .collect();
    exact.sort_by(f64::total_cmp);
    let mut v0 = DistVector::<T>::new(l.clone()).unwrap();
    v0.set_random(Distribution::Uniform, 7).unwrap();
    let ad = dense(a.as_ref());
    for which in [Which::Largest, Which::Smallest] {
        let mut vecs: Vec<DistVector<T>> = (0..3)
            .map(|_| DistVector::<T>::new(l.clone()).unwrap())
            .collect();
        let r = {
            let mut vr: Vec<&mut DistVector<T>> = vecs.iter_mut().collect();
            lanczos(a.as_ref(), &v0, 200, 1e-10, 3, which, &mut vr).unwrap()
        };
        let want: Vec<f64> = match which {
            Which::Largest => exact.iter().rev().take(3).copied().collect(),
            Which::Smallest => exact.iter().take(3).copied().collect(),
        };
        let err = r
            .values
            .iter()
            .zip(&want)
            .map(|(v, w)| (v - w).abs() / w.abs())
            .fold(0.0f64, f64::max);
        let mut res: f64 = 0.0;
        for (i, v) in vecs.iter().enumerate() {
            let g = gathered(v);
            let av = matvec(&ad, &g);
            let rr: Vec<T> = av
                .iter()
                .zip(&g)
                .map(|(x, y)| *x - *y * T::from_parts_lossy(r.values[i], 0.0))
                .collect();
            res = res.max(norm(&rr) / norm(&g));
        }
        t.check(
            r.converged && err <= 1e-8 && res <= 1e-8,
            &format!("Lanczos, {which:?}: {:?} against {want:?} ({err:.1e}) in {} steps, ||A v - theta v|| {res:.1e}", r.values, r.steps),
        );
    }
}

fn main() {
    let (comm, mut t) = common::start();
    run_monitor::<f64>(&mut t, &comm);
    run_monitor::<c64>(&mut t, &comm);
    run_monitor::<f32>(&mut t, &comm);
    run_monitor_actions::<f64>(&mut t, &comm);
    run_monitor_actions::<c64>(&mut t, &comm);
    run_steihaug::<f64>(&mut t, &comm);
    run_steihaug::<c64>(&mut t, &comm);
    run_multi::<f64>(&mut t, &comm);
    run_multi::<c64>(&mut t, &comm);
    run_multi::<f32>(&mut t, &comm);
    run_randomized::<f64>(&mut t, &comm);
    run_randomized::<c64>(&mut t, &comm);
    run_lanczos::<f64>(&mut t, &comm);
    run_lanczos::<c64>(&mut t, &comm);
    common::finish("mpi_models", comm, t)
}
