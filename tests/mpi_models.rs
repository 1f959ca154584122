//! Multi-rank tests of the solver building blocks that PyLops-MPI and hIPPYlib users rely on: the
//! monitor that sees the iterate and its residual, trust-region (Steihaug) CG, multi-vector
//! operations and orthonormalisation, the randomized eigensolvers, Lanczos and the low-rank
//! operator. Run with
//! `mpiexec -n P` (P = 1..4; `make test` does), uneven splits, against dense references computed
//! here. Prints `N passed, M failed` on rank 0.
#![allow(clippy::needless_range_loop, clippy::type_complexity)]

use crate::common;
use common::{Tally, dense, gathered, gauss, uneven};

use std::sync::{Arc, Mutex};

use parlops::comm::Comm;
use parlops::op::Op;
use parlops::op::csr::CsrOp;
use parlops::solver::{IterateMonitor, Method, MonitorAction, PcSide, Reason, Solver};
use parlops::vector::{AnyVec, DistVector, Layout};
use parlops::{Scalar, c64};

#[path = "mpi_models/eigen.rs"]
mod eigen;
use eigen::*;
#[path = "mpi_models/ks.rs"]
mod ks;
#[path = "mpi_models/ks_fail.rs"]
mod ks_fail;
#[path = "mpi_models/ks_fallback.rs"]
mod ks_fallback;
#[path = "mpi_models/ks_spectra.rs"]
pub(crate) mod ks_spectra;

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

pub fn main() {
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
    run_randomized_single(&mut t, &comm);
    run_lanczos::<f64>(&mut t, &comm);
    run_lanczos::<c64>(&mut t, &comm);
    run_lanczos_long(&mut t, &comm);
    ks::run_ks_standard::<f64>(&mut t, &comm);
    ks::run_ks_standard::<c64>(&mut t, &comm);
    ks::run_ks_pencil::<f64>(&mut t, &comm);
    ks::run_ks_pencil::<c64>(&mut t, &comm);
    ks_spectra::run_ks_null_space::<f64>(&mut t, &comm);
    ks_spectra::run_ks_null_space::<c64>(&mut t, &comm);
    ks_spectra::run_ks_order::<f64>(&mut t, &comm);
    ks_spectra::run_ks_order::<c64>(&mut t, &comm);
    ks_spectra::run_lanczos_closed::<f64>(&mut t, &comm);
    ks_spectra::run_lanczos_closed::<c64>(&mut t, &comm);
    ks::run_ks_edges(&mut t, &comm);
    ks::run_ks_inexact(&mut t, &comm);
    ks_fail::run_ks_failing_products(&mut t, &comm);
    ks_fallback::run_ks_rayleigh_ritz_fallback(&mut t, &comm);
    common::finish("mpi_models", comm, t)
}
