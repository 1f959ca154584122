//! The reproducible sum order (PARLOPS_SUM_REPRODUCIBLE, issue 35 section 4), at P = 1..4 ranks
//! (`make test` runs it at each): every method that keeps it solves on two uneven splits of the
//! world and, on every rank, on a communicator of its own (one rank holding every row); the
//! iteration counts and the solutions' bits must be the same, and every converged solve's true
//! residual is recomputed. The matrices' coefficients vary from entry to entry (hashed from their
//! global indices), and b has entries of many
//! magnitudes, so that a sum taken in another order would show in the bits. Also: dot products and
//! CSR products on their own, the methods that do not keep it and device-free refusals.
#![allow(clippy::needless_range_loop)]

use crate::common;
use common::{Tally, gathered, uneven};

use std::sync::Arc;

use parlops::comm::Comm;
use parlops::memory::Location;
use parlops::op::Op;
use parlops::op::csr::CsrOp;
use parlops::solver::{Method, Orthog, Reason, Solver, SumOrder};
use parlops::vector::{DistVector, Layout, Partition, dots};
use parlops::{Scalar, c64};

/// A value in [0, 1) from a global index pair.
fn hash(a: i64, b: i64) -> f64 {
    let mut h =
        (a as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (b as u64).wrapping_add(0x632B_E59B);
    h ^= h >> 31;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^= h >> 29;
    (h >> 11) as f64 / (1u64 << 53) as f64
}

/// An n x n grid's 9-point operator: symmetric positive definite (`conv` = 0) or with a
/// convection part; complex entries when `im` != 0 (w (1 + i im) off the diagonal).
fn matrix<T: Scalar>(rows: &Arc<Layout>, n: i64, conv: f64, im: f64) -> Op<T> {
    let c = rows.comm();
    let first = rows.offsets()[c.rank() as usize];
    let (mut ip, mut ix, mut v) = (vec![0i64], Vec::new(), Vec::new());
    for g in first..first + rows.local_len() {
        let (i, j) = (g / n, g % n);
        let mut row: Vec<(i64, T)> = Vec::new();
        let mut diag = 0.0;
        for (di, dj) in [
            (-1, -1),
            (-1, 0),
            (-1, 1),
            (0, -1),
            (0, 1),
            (1, -1),
            (1, 0),
            (1, 1),
        ] {
            let (a, b) = (i + di, j + dj);
            if a < 0 || b < 0 || a >= n || b >= n {
                continue;
            }
            let h = a * n + b;
            let w = 0.25 + hash(g.min(h), g.max(h)) * if di != 0 && dj != 0 { 0.3 } else { 1.0 };
            let skew = conv * (hash(g, h) - 0.5);
            diag += w;
            row.push((
                h,
                T::from_parts_lossy(-(w + skew), im * w * (h - g).signum() as f64),
            ));
        }
        row.push((
            g,
            T::from_parts_lossy(diag * (1.0 + 0.01 * hash(g, g)) + 1e-3, 0.0),
        ));
        row.sort_by_key(|e| e.0);
        for (h, a) in row {
            ix.push(h);
            v.push(a);
        }
        ip.push(ix.len() as i64);
    }
    Arc::new(CsrOp::from_local_rows(rows.clone(), rows.clone(), &ip, &ix, &v, Ok(())).unwrap())
}

/// Entries of many magnitudes, from the global index.
fn fill<T: Scalar>(v: &mut DistVector<T>, seed: i64) {
    let c = v.layout().comm();
    let first = v.layout().offsets()[c.rank() as usize];
    for (k, e) in v.local_mut().iter_mut().enumerate() {
        let g = first + k as i64;
        let scale = 10f64.powi((hash(g, seed) * 12.0) as i32 - 6);
        *e = T::from_parts_lossy(
            (hash(seed, g) - 0.3) * scale,
            (hash(g + 7, seed) - 0.5) * scale,
        );
    }
}

/// A second uneven split: rank r holds a share growing with r (the last rank the most).
fn skewed(comm: &Arc<Comm>, n: i64) -> Arc<Layout> {
    let p = comm.size() as i64;
    let w: i64 = (1..=p).sum();
    let mut lens: Vec<i64> = (1..=p).map(|r| n * r / w).collect();
    let rest = n - lens.iter().sum::<i64>();
    lens[p as usize - 1] += rest;
    Layout::new(
        comm.clone(),
        Partition::Scatter,
        -1,
        lens[comm.rank() as usize],
    )
    .unwrap()
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Pc {
    None,
    Jacobi,
    /// Chebyshev of degree 3 with given bounds (estimated ones come from a power iteration made
    /// when the preconditioner is created, outside the solve's sum order)
    Chebyshev,
}

struct Case {
    method: Method,
    pc: Pc,
    orthog: Orthog,
    conv: f64,
    guess: bool,
}

/// `v` gathered on every rank (from host or device memory).
fn all<T: Scalar>(v: &DistVector<T>) -> Vec<T> {
    gathered(&v.to_location(Location::Host).unwrap())
}

/// Solve on `rows` with vectors in `loc`; the solution gathered on every rank, and the solve's
/// outcome.
fn solve<T: Scalar>(
    rows: &Arc<Layout>,
    n: i64,
    k: &Case,
    t: &mut Tally,
    loc: Location,
) -> (Vec<T>, i64, Reason) {
    let im = if T::PARTS == 2 && k.conv > 0.0 {
        0.3
    } else {
        0.0
    };
    let op = matrix::<T>(rows, n, k.conv, im);
    let mut b = DistVector::<T>::new(rows.clone()).unwrap();
    fill(&mut b, 1);
    let b = b.to_location(loc).unwrap();
    let mut x = DistVector::<T>::new(rows.clone()).unwrap();
    if k.guess {
        fill(&mut x, 2);
    }
    let mut x = x.to_location(loc).unwrap();
    let mut s = Solver::<T>::new(k.method);
    s.set_operator(op.clone()).unwrap();
    match k.pc {
        Pc::None => {}
        Pc::Jacobi => s.set_jacobi(),
        Pc::Chebyshev => {
            let c = parlops::solver::chebyshev::Chebyshev::new(op.clone(), 3, Some((0.1, 2.1)))
                .unwrap();
            s.set_preconditioner(Some(Arc::new(c)));
        }
    }
    s.params.sum_order = SumOrder::Reproducible;
    s.params.orthog = k.orthog;
    s.params.restart = 40;
    s.params.nonzero_guess = k.guess;
    s.params.rtol = if T::DTYPE == parlops::DType::F32 {
        1e-4
    } else {
        1e-9
    };
    s.params.max_iter = 800;
    let info = s.solve(&b, &mut x).unwrap();
    if info.reason.converged() && k.method.least_squares() {
        // the normal equations' rule: ||A^H (b - A x)|| <= rtol ||A^H b||
        let mut r = DistVector::<T>::new_in(rows.clone(), loc).unwrap();
        op.apply(&x, &mut r).unwrap();
        r.axpby(T::one(), &b, -T::one()).unwrap();
        let mut g = DistVector::<T>::new_in(rows.clone(), loc).unwrap();
        op.apply_adjoint(&r, &mut g).unwrap();
        let mut gb = DistVector::<T>::new_in(rows.clone(), loc).unwrap();
        op.apply_adjoint(&b, &mut gb).unwrap();
        let n2 = |v: &DistVector<T>| all(v).iter().map(|a| a.abs2_f64()).sum::<f64>().sqrt();
        let (gn, gbn) = (n2(&g), n2(&gb));
        let slack = if T::DTYPE == parlops::DType::F32 {
            1.2
        } else {
            1.01
        };
        t.check(
            gn <= slack * s.params.rtol * gbn,
            &format!(
                "{:?} {}: converged, true normal-equation residual {gn:e} <= rtol ||A^H b|| ({:e})",
                k.method,
                T::DTYPE.name(),
                s.params.rtol * gbn
            ),
        );
    }
    if info.reason.converged() && !k.method.least_squares() {
        // the true residual
        let mut r = DistVector::<T>::new_in(rows.clone(), loc).unwrap();
        op.apply(&x, &mut r).unwrap();
        let (rg, bg) = (all(&r), all(&b));
        let res: f64 = rg
            .iter()
            .zip(&bg)
            .map(|(a, c)| (*c - *a).abs2_f64())
            .sum::<f64>()
            .sqrt();
        let bn: f64 = bg.iter().map(|a| a.abs2_f64()).sum::<f64>().sqrt();
        let slack = if T::DTYPE == parlops::DType::F32 {
            1.2
        } else {
            1.01
        };
        t.check(
            res <= slack * s.params.rtol * bn,
            &format!(
                "{:?} {}: converged, true residual {res:e} <= rtol ||b|| ({:e})",
                k.method,
                T::DTYPE.name(),
                s.params.rtol * bn
            ),
        );
    }
    (all(&x), info.iterations, info.reason)
}

fn bits<T: Scalar>(v: &[T]) -> Vec<(u64, u64)> {
    v.iter()
        .map(|a| {
            let (r, i) = a.to_parts();
            (r.to_bits(), i.to_bits())
        })
        .collect()
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            method: Method::Cg,
            pc: Pc::None,
            orthog: Orthog::Classical,
            conv: 0.0,
            guess: false,
        },
        Case {
            method: Method::Cg,
            pc: Pc::Jacobi,
            orthog: Orthog::Classical,
            conv: 0.0,
            guess: true,
        },
        Case {
            method: Method::Cg,
            pc: Pc::Chebyshev,
            orthog: Orthog::Classical,
            conv: 0.0,
            guess: false,
        },
        Case {
            method: Method::CgPipelined,
            pc: Pc::Chebyshev,
            orthog: Orthog::Classical,
            conv: 0.0,
            guess: true,
        },
        Case {
            method: Method::CgPipelined,
            pc: Pc::None,
            orthog: Orthog::Classical,
            conv: 0.0,
            guess: false,
        },
        Case {
            method: Method::Minres,
            pc: Pc::None,
            orthog: Orthog::Classical,
            conv: 0.0,
            guess: true,
        },
        Case {
            method: Method::Gmres,
            pc: Pc::None,
            orthog: Orthog::Classical,
            conv: 0.5,
            guess: false,
        },
        Case {
            method: Method::Gmres,
            pc: Pc::Jacobi,
            orthog: Orthog::Modified,
            conv: 0.5,
            guess: true,
        },
        Case {
            method: Method::Fgmres,
            pc: Pc::Jacobi,
            orthog: Orthog::Classical,
            conv: 0.5,
            guess: false,
        },
        Case {
            method: Method::Bicgstab,
            pc: Pc::None,
            orthog: Orthog::Classical,
            conv: 0.5,
            guess: false,
        },
        Case {
            method: Method::Cgls,
            pc: Pc::None,
            orthog: Orthog::Classical,
            conv: 0.5,
            guess: false,
        },
        Case {
            method: Method::Lsqr,
            pc: Pc::None,
            orthog: Orthog::Classical,
            conv: 0.5,
            guess: true,
        },
        Case {
            method: Method::Richardson,
            pc: Pc::Jacobi,
            orthog: Orthog::Classical,
            conv: 0.0,
            guess: false,
        },
    ]
}

/// The case's name in the checks.
fn case_name<T: Scalar>(k: &Case) -> String {
    format!(
        "{:?}{} {} (orthog {:?}, guess {})",
        k.method,
        match k.pc {
            Pc::None => "",
            Pc::Jacobi => "+Jacobi",
            Pc::Chebyshev => "+Chebyshev",
        },
        T::DTYPE.name(),
        k.orthog,
        k.guess
    )
}

fn methods<T: Scalar>(comm: &Arc<Comm>, own: &Arc<Comm>, t: &mut Tally) {
    let n = 23; // 529 rows
    let nn = n * n;
    for k in &cases() {
        let name = case_name::<T>(k);
        common::case(&name);
        let alone = Layout::new(own.clone(), Partition::Scatter, nn, nn).unwrap();
        let (x1, it1, r1) = solve::<T>(&alone, n, k, t, Location::Host);
        // (Richardson, the least-squares methods and the complex nonsymmetric problems may need more
        // iterations than given: their bits are compared)
        let hard = k.method == Method::Richardson
            || k.method.least_squares()
            || (T::PARTS == 2 && k.conv > 0.0);
        t.check(
            r1.converged() || hard,
            &format!("{name}: one rank converges ({r1:?}, {it1} iterations)"),
        );
        for (split, rows) in [("uneven", uneven(comm, nn)), ("skewed", skewed(comm, nn))] {
            let (xp, itp, rp) = solve::<T>(&rows, n, k, t, Location::Host);
            let same = bits(&xp) == bits(&x1);
            let diff = xp.iter().zip(&x1).filter(|(a, b)| a != b).count();
            t.check(
                itp == it1 && rp == r1 && same,
                &format!(
                    "{name}, {split} split over {} rank(s): {itp} iterations ({rp:?}) against {it1} ({r1:?}) on one, \
                     {diff} of {nn} entries of x differ in their bits",
                    comm.size()
                ),
            );
        }
    }
}

/// The reproducible mode on device vectors (tests/gpu_check.rs runs it, under the CUDA stand-in in
/// `make test`): every method and preconditioner of [`cases`] on an n x n grid, on one rank, an
/// uneven and a skewed split of `comm`: the same iterations and bits as the host's solve on one
/// rank.
#[allow(dead_code)] // (in the mpi_suite program, which has no device)
pub fn device<T: Scalar>(comm: &Arc<Comm>, own: &Arc<Comm>, t: &mut Tally, n: i64) {
    let nn = n * n;
    let alone = Layout::new(own.clone(), Partition::Scatter, nn, nn).unwrap();
    for k in &cases() {
        let name = format!("device {}", case_name::<T>(k));
        common::case(&name);
        let (xh, ith, rh) = solve::<T>(&alone, n, k, t, Location::Host);
        for (split, rows) in [
            ("one rank", alone.clone()),
            ("uneven", uneven(comm, nn)),
            ("skewed", skewed(comm, nn)),
        ] {
            let (xd, itd, rd) = solve::<T>(&rows, n, k, t, Location::Cuda);
            let diff = xd.iter().zip(&xh).filter(|(a, b)| a != b).count();
            t.check(
                itd == ith && rd == rh && bits(&xd) == bits(&xh),
                &format!(
                    "{name}, {split} split over {} rank(s): {itd} iterations ({rd:?}) against the host's {ith} ({rh:?}) \
                     on one, {diff} of {nn} entries of x differ in their bits",
                    rows.comm().size()
                ),
            );
        }
    }
}

/// Dot products and products on their own: the same bits on any split, and a CSR product equal
/// to the one rank's.
fn primitives(comm: &Arc<Comm>, own: &Arc<Comm>, t: &mut Tally) {
    let n = 40i64;
    let nn = n * n;
    let _guard = parlops::vector::ops::SumOrder::reproducible();
    let alone = Layout::new(own.clone(), Partition::Scatter, nn, nn).unwrap();
    let run = |rows: &Arc<Layout>| {
        let op = matrix::<f64>(rows, n, 0.7, 0.0);
        let mut x = DistVector::<f64>::new(rows.clone()).unwrap();
        fill(&mut x, 3);
        let mut y = DistVector::<f64>::new(rows.clone()).unwrap();
        op.apply(&x, &mut y).unwrap();
        let d = dots(rows.comm(), &[(&x, &y), (&y, &y), (&x, &x)], Ok(())).unwrap();
        (gathered(&y), d)
    };
    let (y1, d1) = run(&alone);
    for (split, rows) in [("uneven", uneven(comm, nn)), ("skewed", skewed(comm, nn))] {
        let (yp, dp) = run(&rows);
        t.check(
            bits(&yp) == bits(&y1),
            &format!("CSR product, {split} split: the one rank's bits"),
        );
        t.check(
            dp.iter().zip(&d1).all(|(a, b)| a.to_bits() == b.to_bits()),
            &format!("three dot products, {split} split: the one rank's bits ({dp:?} / {d1:?})"),
        );
    }
    // complex dots
    let cd = |rows: &Arc<Layout>| {
        let mut x = DistVector::<c64>::new(rows.clone()).unwrap();
        fill(&mut x, 4);
        let mut y = DistVector::<c64>::new(rows.clone()).unwrap();
        fill(&mut y, 5);
        dots(rows.comm(), &[(&x, &y)], Ok(())).unwrap()[0]
    };
    let c1 = cd(&alone);
    let cp = cd(&skewed(comm, nn));
    t.check(
        c1.re.to_bits() == cp.re.to_bits() && c1.im.to_bits() == cp.im.to_bits(),
        &format!("a complex dot product: the one rank's bits ({cp} / {c1})"),
    );
    // a failure on one rank reaches every rank through the binned reduction
    let rows = uneven(comm, nn);
    let x = DistVector::<f64>::new(rows.clone()).unwrap();
    let pend = if comm.rank() == comm.size() - 1 {
        Err(parlops::Error::new(
            parlops::ErrorKind::InvalidArgument,
            "this rank's argument",
        ))
    } else {
        Ok(())
    };
    let r = dots(comm, &[(&x, &x)], pend);
    t.check(
        r.as_ref()
            .err()
            .is_some_and(|e| e.to_string().contains("this rank's argument")),
        &format!("one rank's failure fails the binned reduction on every rank: {r:?}"),
    );
}

/// Several right-hand sides with CG in the reproducible order: one column after another (block
/// CG's Gram matrices are not binned), each column's bits the one rank's.
fn many(comm: &Arc<Comm>, own: &Arc<Comm>, t: &mut Tally) {
    common::case("solve_many in the reproducible order");
    let n = 20i64;
    let nn = n * n;
    let run = |rows: &Arc<Layout>| {
        let op = matrix::<f64>(rows, n, 0.0, 0.0);
        let mut s = Solver::<f64>::new(Method::Cg);
        s.set_operator(op).unwrap();
        s.params.sum_order = SumOrder::Reproducible;
        s.params.rtol = 1e-10;
        let mut b0 = DistVector::<f64>::new(rows.clone()).unwrap();
        let mut b1 = DistVector::<f64>::new(rows.clone()).unwrap();
        fill(&mut b0, 6);
        fill(&mut b1, 7);
        let mut x0 = DistVector::<f64>::new(rows.clone()).unwrap();
        let mut x1 = DistVector::<f64>::new(rows.clone()).unwrap();
        let infos = s.solve_many(&[&b0, &b1], &mut [&mut x0, &mut x1]).unwrap();
        let its: Vec<i64> = infos.iter().map(|i| i.iterations).collect();
        (bits(&gathered(&x0)), bits(&gathered(&x1)), its)
    };
    let alone = Layout::new(own.clone(), Partition::Scatter, nn, nn).unwrap();
    let one = run(&alone);
    for (split, rows) in [("uneven", uneven(comm, nn)), ("skewed", skewed(comm, nn))] {
        let got = run(&rows);
        t.check(
            got == one,
            &format!(
                "solve_many (CG, 2 columns), {split} split: iterations {:?} against {:?}, the bits {}",
                got.2,
                one.2,
                if got.0 == one.0 && got.1 == one.1 { "equal" } else { "differ" }
            ),
        );
    }
}

/// CG on replicated (broadcast) vectors, a diagonal operator: each rank's copy counted once in the
/// binned sums (the residual pass counted every rank's copy: ||r|| sqrt(P) times too large), so the
/// iterations and bits of one rank.
fn replicated(comm: &Arc<Comm>, own: &Arc<Comm>, t: &mut Tally) {
    common::case("CG on replicated vectors in the reproducible order");
    let n = 300i64;
    let run = |c: &Arc<Comm>| {
        let l = Layout::new(c.clone(), Partition::Broadcast, n, n).unwrap();
        let mut d = DistVector::<f64>::new(l.clone()).unwrap();
        for (k, e) in d.local_mut().iter_mut().enumerate() {
            *e = 1.0 + k as f64 * (1.0 + hash(k as i64, 9));
        }
        let op: Op<f64> = Arc::new(parlops::op::basic::Diagonal::new(&d).unwrap());
        let mut b = DistVector::<f64>::new(l.clone()).unwrap();
        for (k, e) in b.local_mut().iter_mut().enumerate() {
            *e = hash(k as i64, 3) - 0.5;
        }
        let mut x = DistVector::<f64>::new(l.clone()).unwrap();
        let mut s = Solver::<f64>::new(Method::Cg);
        s.set_operator(op).unwrap();
        s.params.sum_order = SumOrder::Reproducible;
        s.params.rtol = 1e-10;
        s.params.max_iter = 1000;
        let info = s.solve(&b, &mut x).unwrap();
        // the true residual of a converged solve (every rank holds the whole vectors)
        let (res, bn) = x
            .local()
            .iter()
            .zip(d.local())
            .zip(b.local())
            .fold((0.0f64, 0.0f64), |(r, n), ((xv, dv), bv)| {
                (r + (bv - dv * xv).powi(2), n + bv * bv)
            });
        (
            bits(x.local()),
            info.iterations,
            info.reason,
            res.sqrt(),
            bn.sqrt(),
        )
    };
    let one = run(own);
    let all = run(comm);
    for (what, r) in [("one rank", &one), ("every rank", &all)] {
        t.check(
            !r.2.converged() || r.3 <= 1.01e-10 * r.4,
            &format!(
                "CG on broadcast vectors, {what}: {:?}, true residual {:e} against rtol ||b|| = {:e}",
                r.2,
                r.3,
                1e-10 * r.4
            ),
        );
    }
    t.check(
        all.0 == one.0 && all.1 == one.1 && all.2 == one.2,
        &format!(
            "CG on broadcast vectors over {} rank(s): {} iterations ({:?}) against {} ({:?}) on one, the bits {}",
            comm.size(),
            all.1,
            all.2,
            one.1,
            one.2,
            if all.0 == one.0 { "equal" } else { "differ" }
        ),
    );
}

/// Methods that do not keep the order, and device-free refusals, fail on every rank.
fn refusals(comm: &Arc<Comm>, t: &mut Tally) {
    let rows = uneven(comm, 100);
    let op = matrix::<f64>(&rows, 10, 0.0, 0.0);
    for m in [
        Method::CgSingleReduction,
        Method::Gcrodr,
        Method::CgDeflated,
        Method::Fista,
    ] {
        let mut s = Solver::<f64>::new(m);
        s.set_operator(op.clone()).unwrap();
        s.params.sum_order = SumOrder::Reproducible;
        let b = DistVector::<f64>::new(rows.clone()).unwrap();
        let mut x = DistVector::<f64>::new(rows.clone()).unwrap();
        let e = s.solve(&b, &mut x);
        t.check(
            e.as_ref().err().is_some_and(|e| {
                e.kind == parlops::ErrorKind::NotSupported
                    && e.to_string().contains("does not keep it")
            }),
            &format!("{m:?} in the reproducible order: refused ({e:?})"),
        );
    }
}

pub fn main() {
    let (comm, mut t) = common::start();
    let own = Arc::new(Comm::self_comm().unwrap());
    primitives(&comm, &own, &mut t);
    methods::<f64>(&comm, &own, &mut t);
    methods::<c64>(&comm, &own, &mut t);
    methods::<f32>(&comm, &own, &mut t);
    many(&comm, &own, &mut t);
    replicated(&comm, &own, &mut t);
    refusals(&comm, &mut t);
    drop(own);
    common::finish("mpi_reproducible", comm, t);
}
