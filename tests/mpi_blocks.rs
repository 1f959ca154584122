//! Multi-rank tests of stacked vectors and block operators (PyLops-MPI's StackedDistributedArray
//! and MPIStackedVStack/HStack, MFEM's BlockVector, BlockOperator and block preconditioners): run
//! with `mpiexec -n P` (P = 1..4; `make test` does), uneven splits, against dense references
//! computed here. Prints `N passed, M failed` on rank 0.
#![allow(clippy::needless_range_loop)]

use crate::common;
use common::{Tally, dense, gathered, gauss, uneven};

use std::sync::Arc;

use parlops::comm::Comm;
use parlops::op::blockop::{BlockLower, BlockOp};
use parlops::op::dense::DenseBlockRow;
use parlops::op::{LinearOperator, Op};
use parlops::solver::{Method, Solver};
use parlops::vector::{DistVector, Layout, NormKind};
use parlops::{Scalar, c64};

fn val<T: Scalar>(seed: usize, g: usize) -> T {
    let x = (g as f64 + 1.0) * (seed as f64 + 0.7);
    T::from_parts_lossy(
        (0.41 * x).sin(),
        if T::PARTS == 2 { (0.23 * x).cos() } else { 0.0 },
    )
}

/// A dense operator rows x cols with deterministic entries (plus `shift` on the diagonal).
fn dense_block<T: Scalar>(
    rows: &Arc<Layout>,
    cols: &Arc<Layout>,
    seed: usize,
    shift: f64,
) -> (Op<T>, Vec<Vec<T>>) {
    let (m, n) = (rows.global_len() as usize, cols.global_len() as usize);
    let a: Vec<Vec<T>> = (0..m)
        .map(|i| {
            (0..n)
                .map(|j| {
                    val::<T>(seed, i * n + j)
                        + T::from_parts_lossy(if i == j { shift } else { 0.0 }, 0.0)
                })
                .collect()
        })
        .collect();
    let st = rows.local_start() as usize;
    let local: Vec<T> = (st..st + rows.local_len() as usize)
        .flat_map(|i| a[i].clone())
        .collect();
    (
        Arc::new(DenseBlockRow::new(rows.clone(), cols.clone(), local).unwrap()),
        a,
    )
}

fn part_vec<T: Scalar>(l: &Arc<Layout>, seed: usize) -> DistVector<T> {
    let mut v = DistVector::<T>::new(l.clone()).unwrap();
    let st = l.local_start() as usize;
    for (k, e) in v.local_mut().iter_mut().enumerate() {
        *e = val::<T>(seed, st + k);
    }
    v
}

/// The stacked vector of `parts` on the stacked layout `s`.
fn stacked<T: Scalar>(s: &Arc<Layout>, parts: &[&DistVector<T>]) -> DistVector<T> {
    let mut v = DistVector::<T>::new(s.clone()).unwrap();
    let mut off = 0;
    for p in parts {
        let n = p.local().len();
        v.local_mut()[off..off + n].copy_from_slice(p.local());
        off += n;
    }
    v
}

/// The parts of a stacked vector, gathered.
fn parts_of<T: Scalar>(v: &DistVector<T>) -> Vec<Vec<T>> {
    let mut off = 0;
    v.layout()
        .parts()
        .iter()
        .map(|p| {
            let n = p.local_len() as usize;
            let mut q = DistVector::<T>::new(p.clone()).unwrap();
            q.local_mut().copy_from_slice(&v.local()[off..off + n]);
            off += n;
            gathered(&q)
        })
        .collect()
}

fn mv<T: Scalar>(a: &[Vec<T>], x: &[T]) -> Vec<T> {
    a.iter()
        .map(|r| r.iter().zip(x).fold(T::zero(), |s, (p, q)| s + *p * *q))
        .collect()
}

fn nrm<T: Scalar>(v: &[T]) -> f64 {
    v.iter().map(|x| x.abs2_f64()).sum::<f64>().sqrt()
}

fn diff<T: Scalar>(a: &[T], b: &[T]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (*x - *y).abs2_f64())
        .sum::<f64>()
        .sqrt()
        / nrm(b).max(1e-300)
}

fn tol<T: Scalar>() -> f64 {
    if T::DTYPE.size() / T::PARTS < 8 {
        1e-4
    } else {
        1e-12
    }
}

/// Stacked vectors through the vector operations, against the concatenated parts.
fn run_stacked<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    common::case(&format!("run_stacked ({})", T::DTYPE.name()));
    let parts: Vec<Arc<Layout>> = [7, 11, 5].iter().map(|&n| uneven(comm, n)).collect();
    let s = Layout::stack(comm, &parts).unwrap();
    let xs: Vec<DistVector<T>> = parts
        .iter()
        .enumerate()
        .map(|(i, l)| part_vec(l, i))
        .collect();
    let ys: Vec<DistVector<T>> = parts
        .iter()
        .enumerate()
        .map(|(i, l)| part_vec(l, 10 + i))
        .collect();
    let x = stacked(&s, &xs.iter().collect::<Vec<_>>());
    let mut y = stacked(&s, &ys.iter().collect::<Vec<_>>());
    let xg: Vec<T> = xs.iter().flat_map(gathered).collect();
    let yg: Vec<T> = ys.iter().flat_map(gathered).collect();
    let tl = tol::<T>();
    let dot = x.dot(&y).unwrap();
    let want = xg
        .iter()
        .zip(&yg)
        .fold(T::zero(), |a, (p, q)| a + p.conj() * *q);
    t.check(
        (dot - want).abs_f64() <= tl * nrm(&xg) * nrm(&yg),
        "stacked dot: every part, one reduction",
    );
    for (kind, w) in [
        (NormKind::Two, nrm(&xg)),
        (NormKind::One, xg.iter().map(|v| v.abs_f64()).sum::<f64>()),
        (
            NormKind::Inf,
            xg.iter().map(|v| v.abs_f64()).fold(0.0, f64::max),
        ),
    ] {
        let n = x.norm(kind).unwrap();
        t.check(
            (n - w).abs() <= tl * w,
            &format!("stacked norm {kind:?}: {n} against {w}"),
        );
    }
    let a = T::from_parts_lossy(0.5, if T::PARTS == 2 { -0.25 } else { 0.0 });
    y.axpy(a, &x).unwrap();
    let want: Vec<T> = yg.iter().zip(&xg).map(|(p, q)| *p + a * *q).collect();
    let got: Vec<T> = parts_of(&y).into_iter().flatten().collect();
    t.check(diff(&got, &want) <= tl, "stacked axpy, part by part");
    let mut z = y.duplicate().unwrap();
    z.pointwise_mult(&x, &y).unwrap();
    let want: Vec<T> = xg.iter().zip(&want).map(|(p, q)| *p * *q).collect();
    let got: Vec<T> = parts_of(&z).into_iter().flatten().collect();
    t.check(diff(&got, &want) <= tl, "stacked pointwise product");
    z.scale(a).unwrap();
    let got: Vec<T> = parts_of(&z).into_iter().flatten().collect();
    let want: Vec<T> = want.iter().map(|v| *v * a).collect();
    t.check(diff(&got, &want) <= tl, "stacked scale");
    // axpby, waxpy, conj, copy, fill, the 0- and p-norms: part by part
    let b2 = T::from_parts_lossy(-1.5, 0.0);
    let mut u = stacked(&s, &ys.iter().collect::<Vec<_>>());
    u.axpby(a, &x, b2).unwrap();
    let want: Vec<T> = xg.iter().zip(&yg).map(|(p, q)| a * *p + b2 * *q).collect();
    let got: Vec<T> = parts_of(&u).into_iter().flatten().collect();
    t.check(diff(&got, &want) <= tl, "stacked axpby");
    let yy = stacked(&s, &ys.iter().collect::<Vec<_>>());
    u.waxpy(a, &x, &yy).unwrap();
    let want: Vec<T> = xg.iter().zip(&yg).map(|(p, q)| a * *p + *q).collect();
    let got: Vec<T> = parts_of(&u).into_iter().flatten().collect();
    t.check(diff(&got, &want) <= tl, "stacked waxpy");
    u.copy_from(&x).unwrap();
    u.conj().unwrap();
    let want: Vec<T> = xg.iter().map(|p| p.conj()).collect();
    let got: Vec<T> = parts_of(&u).into_iter().flatten().collect();
    t.check(diff(&got, &want) <= tl, "stacked copy and conj");
    u.fill(T::zero()).unwrap();
    let nz = x.norm(NormKind::Zero).unwrap();
    let wz = xg.iter().filter(|v| v.abs_f64() != 0.0).count() as f64;
    let p3 = x.norm(NormKind::P(3.0)).unwrap();
    let w3 = xg.iter().map(|v| v.abs_f64().powi(3)).sum::<f64>().cbrt();
    t.check(
        u.norm(NormKind::Two).unwrap() == 0.0 && nz == wz && (p3 - w3).abs() <= tl * w3,
        "stacked fill, 0-norm and 3-norm",
    );
}

/// A 3 x 3 block operator with zero blocks against the dense blocks, and its adjoint (dot test).
fn run_block3<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    common::case(&format!("run_block3 ({})", T::DTYPE.name()));
    let rl: Vec<Arc<Layout>> = [6, 9, 4].iter().map(|&n| uneven(comm, n)).collect();
    let cl: Vec<Arc<Layout>> = [5, 8, 7].iter().map(|&n| uneven(comm, n)).collect();
    // pattern: X . X / X X . / . X X
    let pattern = [true, false, true, true, true, false, false, true, true];
    let mut blocks = Vec::new();
    let mut dens = Vec::new();
    for k in 0..9 {
        if pattern[k] {
            let (o, d) = dense_block::<T>(&rl[k / 3], &cl[k % 3], k, 0.0);
            blocks.push(Some(o));
            dens.push(Some(d));
        } else {
            blocks.push(None);
            dens.push(None);
        }
    }
    let a = BlockOp::new(comm, 3, 3, blocks).unwrap();
    let xs: Vec<DistVector<T>> = cl
        .iter()
        .enumerate()
        .map(|(i, l)| part_vec(l, 30 + i))
        .collect();
    let x = stacked(a.cols(), &xs.iter().collect::<Vec<_>>());
    let mut y = DistVector::<T>::new(a.rows().clone()).unwrap();
    a.apply(&x, &mut y).unwrap();
    let xg: Vec<Vec<T>> = xs.iter().map(gathered).collect();
    let yp = parts_of(&y);
    let mut worst: f64 = 0.0;
    for i in 0..3 {
        let mut want = vec![T::zero(); rl[i].global_len() as usize];
        for j in 0..3 {
            if let Some(d) = &dens[i * 3 + j] {
                for (w, v) in want.iter_mut().zip(mv(d, &xg[j])) {
                    *w += v;
                }
            }
        }
        worst = worst.max(diff(&yp[i], &want));
    }
    t.check(
        worst <= tol::<T>(),
        &format!("3x3 block operator with zero blocks against the dense blocks ({worst:.1e})"),
    );
    // dot test: <A x, w> = <x, A^H w>
    let ws: Vec<DistVector<T>> = rl
        .iter()
        .enumerate()
        .map(|(i, l)| part_vec(l, 40 + i))
        .collect();
    let w = stacked(a.rows(), &ws.iter().collect::<Vec<_>>());
    let mut ahw = DistVector::<T>::new(a.cols().clone()).unwrap();
    a.apply_adjoint(&w, &mut ahw).unwrap();
    let (l, r) = (y.dot(&w).unwrap(), x.dot(&ahw).unwrap());
    let e = (l - r).abs_f64() / l.abs_f64();
    t.check(
        e <= tol::<T>(),
        &format!("3x3 block operator: the dot test ({e:.1e})"),
    );
    let bad = BlockOp::<T>::new(comm, 2, 1, vec![None, None])
        .err()
        .map(|e| e.msg)
        .unwrap_or_default();
    t.check(
        bad.contains("block row 0 has no operator"),
        &format!("an empty block row fails on every rank: '{bad}'"),
    );
}

/// Regularised least squares [A; eps L] x = [b; 0] by CGLS on a 2 x 1 block operator, against the
/// dense normal equations (A^H A + eps^2 L^H L) x = A^H b.
fn run_regularised(t: &mut Tally, comm: &Arc<Comm>) {
    common::case("run_regularised");
    let (m, n) = (30i64, 14i64);
    let (rows, cols, lrows) = (uneven(comm, m), uneven(comm, n), uneven(comm, n - 1));
    let (a, ad) = dense_block::<f64>(&rows, &cols, 3, 0.0);
    // L: first differences (n - 1) x n, as a dense block
    let eps = 0.3;
    let ld: Vec<Vec<f64>> = (0..n as usize - 1)
        .map(|i| {
            (0..n as usize)
                .map(|j| {
                    if j == i {
                        -eps
                    } else if j == i + 1 {
                        eps
                    } else {
                        0.0
                    }
                })
                .collect()
        })
        .collect();
    let st = lrows.local_start() as usize;
    let local: Vec<f64> = (st..st + lrows.local_len() as usize)
        .flat_map(|i| ld[i].clone())
        .collect();
    let l: Op<f64> = Arc::new(DenseBlockRow::new(lrows.clone(), cols.clone(), local).unwrap());
    let k: Op<f64> = Arc::new(BlockOp::new(comm, 2, 1, vec![Some(a), Some(l)]).unwrap());
    let b = part_vec::<f64>(&rows, 7);
    let zero = DistVector::<f64>::new(lrows.clone()).unwrap();
    let rhs = stacked(k.rows(), &[&b, &zero]);
    let mut s = Solver::<f64>::new(Method::Cgls);
    s.params.rtol = 1e-13;
    s.params.max_iter = 500;
    s.set_operator(k.clone()).unwrap();
    let mut x = DistVector::<f64>::new(cols.clone()).unwrap();
    let info = s.solve(&rhs, &mut x).unwrap();
    let bg = gathered(&b);
    let nn = n as usize;
    let mut nm = vec![vec![0.0; nn]; nn];
    for i in 0..nn {
        for j in 0..nn {
            nm[i][j] = (0..m as usize).map(|r| ad[r][i] * ad[r][j]).sum::<f64>()
                + (0..nn - 1).map(|r| ld[r][i] * ld[r][j]).sum::<f64>();
        }
    }
    let atb: Vec<f64> = (0..nn)
        .map(|i| (0..m as usize).map(|r| ad[r][i] * bg[r]).sum())
        .collect();
    let want = gauss(nm, atb);
    let e = diff(&gathered(&x), &want);
    t.check(
        info.reason.converged() && e <= 1e-9,
        &format!("CGLS on [A; eps L] x = [b; 0]: {:?} in {} iterations, {e:.1e} from the dense normal equations", info.reason, info.iterations),
    );
}

/// Mixed Poisson [M B^H; B 0] [u; p] = [f; g]: MINRES with the block-diagonal preconditioner
/// diag(D_M^-1, S^-1) (S = B D_M^-1 B^H, dense here) and GMRES with the block lower-triangular one,
/// against a dense solve.
fn run_saddle<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    common::case(&format!("run_saddle ({})", T::DTYPE.name()));
    let (nu, np) = (24i64, 10i64);
    let (lu, lp) = (uneven(comm, nu), uneven(comm, np));
    // M: SPD (a shifted 1-D Laplacian with a varying diagonal), B: np x nu of full row rank
    let md: Vec<Vec<T>> = (0..nu as usize)
        .map(|i| {
            (0..nu as usize)
                .map(|j| {
                    let v = if i == j {
                        2.5 + 0.5 * (i as f64).sin()
                    } else if i.abs_diff(j) == 1 {
                        -1.0
                    } else {
                        0.0
                    };
                    T::from_parts_lossy(v, 0.0)
                })
                .collect()
        })
        .collect();
    let bd: Vec<Vec<T>> = (0..np as usize)
        .map(|i| {
            (0..nu as usize)
                .map(|j| {
                    let v = if j == 2 * i {
                        1.0
                    } else if j == 2 * i + 1 {
                        -1.0
                    } else if j == 2 * i + 3 {
                        0.5
                    } else {
                        0.0
                    };
                    T::from_parts_lossy(v, 0.0)
                })
                .collect()
        })
        .collect();
    let bh: Vec<Vec<T>> = (0..nu as usize)
        .map(|i| (0..np as usize).map(|j| bd[j][i].conj()).collect())
        .collect();
    let mk = |rows: &Arc<Layout>, cols: &Arc<Layout>, d: &[Vec<T>]| -> Op<T> {
        let st = rows.local_start() as usize;
        let local: Vec<T> = (st..st + rows.local_len() as usize)
            .flat_map(|i| d[i].clone())
            .collect();
        Arc::new(DenseBlockRow::new(rows.clone(), cols.clone(), local).unwrap())
    };
    let (m, b, bt) = (mk(&lu, &lu, &md), mk(&lp, &lu, &bd), mk(&lu, &lp, &bh));
    let k: Op<T> = Arc::new(
        BlockOp::new(
            comm,
            2,
            2,
            vec![Some(m.clone()), Some(bt.clone()), Some(b.clone()), None],
        )
        .unwrap(),
    );
    // preconditioner blocks: D_M^-1 and S^-1 (S = B D_M^-1 B^H, inverted densely)
    let dinv: Vec<f64> = (0..nu as usize)
        .map(|i| 1.0 / md[i][i].to_parts().0)
        .collect();
    let sd: Vec<Vec<T>> = (0..np as usize)
        .map(|i| {
            (0..np as usize)
                .map(|j| {
                    (0..nu as usize).fold(T::zero(), |s, q| {
                        s + bd[i][q] * T::from_parts_lossy(dinv[q], 0.0) * bh[q][j]
                    })
                })
                .collect()
        })
        .collect();
    let sinv: Vec<Vec<T>> = {
        let cols: Vec<Vec<T>> = (0..np as usize)
            .map(|j| {
                gauss(
                    sd.clone(),
                    (0..np as usize)
                        .map(|i| if i == j { T::one() } else { T::zero() })
                        .collect(),
                )
            })
            .collect();
        (0..np as usize)
            .map(|i| (0..np as usize).map(|j| cols[j][i]).collect())
            .collect()
    };
    let dm: Vec<Vec<T>> = (0..nu as usize)
        .map(|i| {
            (0..nu as usize)
                .map(|j| {
                    if i == j {
                        T::from_parts_lossy(dinv[i], 0.0)
                    } else {
                        T::zero()
                    }
                })
                .collect()
        })
        .collect();
    let (pm, ps) = (mk(&lu, &lu, &dm), mk(&lp, &lp, &sinv));
    let pc: Op<T> = Arc::new(
        BlockOp::new(
            comm,
            2,
            2,
            vec![Some(pm.clone()), None, None, Some(ps.clone())],
        )
        .unwrap(),
    );
    let f = part_vec::<T>(&lu, 1);
    let g = part_vec::<T>(&lp, 2);
    let rhs = stacked(k.rows(), &[&f, &g]);
    // the dense reference on [u; p]
    let nt = (nu + np) as usize;
    let mut full = vec![vec![T::zero(); nt]; nt];
    for i in 0..nu as usize {
        for j in 0..nu as usize {
            full[i][j] = md[i][j];
        }
        for j in 0..np as usize {
            full[i][nu as usize + j] = bh[i][j];
        }
    }
    for i in 0..np as usize {
        for j in 0..nu as usize {
            full[nu as usize + i][j] = bd[i][j];
        }
    }
    let want = gauss(full, [gathered(&f), gathered(&g)].concat());
    let single = T::DTYPE.size() / T::PARTS < 8;
    let rtol = if single { 1e-5 } else { 1e-11 };
    let lower: Op<T> = Arc::new(BlockLower::new(k.clone(), vec![pm, ps]).unwrap());
    for (name, method, p) in [
        ("MINRES, block-diagonal", Method::Minres, pc.clone()),
        ("GMRES, block lower-triangular", Method::Gmres, lower),
    ] {
        let mut s = Solver::<T>::new(method);
        s.params.rtol = rtol;
        s.params.max_iter = 300;
        s.set_operator(k.clone()).unwrap();
        s.set_preconditioner(Some(p));
        let mut x = DistVector::<T>::new(k.cols().clone()).unwrap();
        let info = s.solve(&rhs, &mut x).unwrap();
        let got: Vec<T> = parts_of(&x).into_iter().flatten().collect();
        let e = diff(&got, &want);
        t.check(
            info.reason.converged() && e <= if single { 1e-3 } else { 1e-8 },
            &format!(
                "mixed Poisson, {name}: {:?} in {} iterations, {e:.1e} from the dense solution",
                info.reason, info.iterations
            ),
        );
    }
    // the block operator's diagonal: M's, then zeros
    let mut d = DistVector::<T>::new(k.rows().clone()).unwrap();
    k.diagonal(&mut d).unwrap();
    let dp = parts_of(&d);
    let ok =
        (0..nu as usize).all(|i| dp[0][i] == md[i][i]) && dp[1].iter().all(|v| *v == T::zero());
    t.check(
        ok,
        "the block operator's diagonal: M's diagonal, then zeros",
    );
    let _ = dense(k.as_ref());
}

/// Rank groups (PyLops-MPI's mask): ranks split by rank % 2, each group holding a full vector of its
/// own length split over its ranks; dot products and norms within a group equal the group's dense
/// values, and across groups the values of all groups' vectors stacked.
fn run_groups<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    common::case(&format!("run_groups ({})", T::DTYPE.name()));
    let (rank, size) = (comm.rank(), comm.size());
    let group = rank % 2;
    let sub = Arc::new(comm.split(group, rank).unwrap());
    let groups = size.min(2);
    let len = |g: i32| 10 + 3 * g as i64;
    let l = uneven(&sub, len(group));
    let fill = |g: i32, seed: usize| -> DistVector<T> {
        let mut v = DistVector::<T>::new(l.clone()).unwrap();
        let st = l.local_start() as usize;
        for (k, e) in v.local_mut().iter_mut().enumerate() {
            *e = val::<T>(seed + 10 * g as usize, st + k);
        }
        v
    };
    let (x, y) = (fill(group, 1), fill(group, 2));
    let full = |g: i32, seed: usize| -> Vec<T> {
        (0..len(g) as usize)
            .map(|i| val::<T>(seed + 10 * g as usize, i))
            .collect()
    };
    let dotd = |a: &[T], b: &[T]| {
        a.iter()
            .zip(b)
            .fold(T::zero(), |s, (p, q)| s + p.conj() * *q)
    };
    let tl = tol::<T>();
    // within the group
    let (xg, yg) = (full(group, 1), full(group, 2));
    let d = x.dot(&y).unwrap();
    let want = dotd(&xg, &yg);
    t.check(
        (d - want).abs_f64() <= tl * nrm(&xg) * nrm(&yg),
        &format!("group {group}: its dot product is its own vector's"),
    );
    let n2 = x.norm(NormKind::Two).unwrap();
    let ninf = x.norm(NormKind::Inf).unwrap();
    let winf = xg.iter().map(|v| v.abs_f64()).fold(0.0, f64::max);
    t.check(
        (n2 - nrm(&xg)).abs() <= tl * nrm(&xg) && ninf == winf,
        &format!("group {group}: its norms are its own vector's"),
    );
    // across groups: all groups' vectors stacked
    let (mut all_x, mut all_y) = (Vec::new(), Vec::new());
    for g in 0..groups {
        all_x.extend(full(g, 1));
        all_y.extend(full(g, 2));
    }
    let d = x.dot_across(comm, &y).unwrap();
    let want = dotd(&all_x, &all_y);
    t.check(
        (d - want).abs_f64() <= tl * nrm(&all_x) * nrm(&all_y),
        &format!("across {groups} groups: the dot product of the stacked vectors"),
    );
    let n2 = x.norm_across(comm, Ok(NormKind::Two)).unwrap();
    let n1 = x.norm_across(comm, Ok(NormKind::One)).unwrap();
    let w1: f64 = all_x.iter().map(|v| v.abs_f64()).sum();
    t.check(
        (n2 - nrm(&all_x)).abs() <= tl * nrm(&all_x) && (n1 - w1).abs() <= tl * w1,
        &format!("across {groups} groups: the 2- and 1-norms of the stacked vectors"),
    );
}

pub fn main() {
    let (comm, mut t) = common::start();
    run_stacked::<f64>(&mut t, &comm);
    run_stacked::<c64>(&mut t, &comm);
    run_stacked::<f32>(&mut t, &comm);
    run_block3::<f64>(&mut t, &comm);
    run_block3::<c64>(&mut t, &comm);
    run_regularised(&mut t, &comm);
    run_saddle::<f64>(&mut t, &comm);
    run_saddle::<c64>(&mut t, &comm);
    run_groups::<f64>(&mut t, &comm);
    run_groups::<c64>(&mut t, &comm);
    run_groups::<f32>(&mut t, &comm);
    common::finish("mpi_blocks", comm, t)
}
