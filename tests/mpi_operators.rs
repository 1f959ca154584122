//! Multi-rank operator tests: run with `mpiexec -n P` (P = 1..4; `make test` does). Every operator and
//! composition, on every dtype, is turned into a dense matrix by applying it (and its adjoint) to unit
//! vectors, compared with a dense reference built independently here, and dot-tested. Layouts are
//! uneven, with an empty rank. Prints `N passed, M failed` on rank 0.

#![allow(clippy::needless_range_loop)]

mod common;
use common::Tally;

use std::sync::Arc;

use parlops::comm::{Comm, ReduceOp};
use parlops::op::basic::{Diagonal, Identity, Zero};
use parlops::op::block::{BlockDiag, VStack, hstack};
use parlops::op::callback::Callback;
use parlops::op::compose::{Adjoint, Conjugate, LinComb, Power, Product};
use parlops::op::csr::{Arr, CsrOp, Idx, LocalCsr};
use parlops::op::dense::DenseBlockRow;
use parlops::op::fredholm::Fredholm1;
use parlops::op::halo;
use parlops::op::poisson::Poisson;
use parlops::op::stencil::{self, Kind};
use parlops::op::summa::{Summa, tile};
use parlops::op::{LinearOperator, Op, dottest};
use parlops::vector::{DistVector, Layout, Partition};
use parlops::{ErrorKind, Scalar, c32, c64};

fn tol<T: Scalar>() -> f64 {
    if matches!(T::DTYPE, parlops::DType::F32 | parlops::DType::C64) {
        5e-5
    } else {
        1e-12
    }
}

fn val<T: Scalar>(k: u64) -> T {
    let x = k as f64;
    T::from_parts_lossy((x * 0.37 + 0.1).sin(), (x * 0.11 - 0.3).cos())
}

/// Row-major dense m x n.
#[derive(Clone)]
struct Dense<T> {
    m: usize,
    n: usize,
    a: Vec<T>,
}

impl<T: Scalar> Dense<T> {
    fn zeros(m: usize, n: usize) -> Self {
        Dense {
            m,
            n,
            a: vec![T::zero(); m * n],
        }
    }
    fn at(&self, i: usize, j: usize) -> T {
        self.a[i * self.n + j]
    }
    fn set(&mut self, i: usize, j: usize, v: T) {
        self.a[i * self.n + j] = v;
    }
    fn adjoint(&self) -> Self {
        let mut r = Dense::zeros(self.n, self.m);
        for i in 0..self.m {
            for j in 0..self.n {
                r.set(j, i, self.at(i, j).conj());
            }
        }
        r
    }
    fn conj(&self) -> Self {
        Dense {
            m: self.m,
            n: self.n,
            a: self.a.iter().map(|v| v.conj()).collect(),
        }
    }
    fn mul(&self, b: &Self) -> Self {
        let mut r = Dense::zeros(self.m, b.n);
        for i in 0..self.m {
            for k in 0..self.n {
                for j in 0..b.n {
                    let v = r.at(i, j) + self.at(i, k) * b.at(k, j);
                    r.set(i, j, v);
                }
            }
        }
        r
    }
    fn lin(&self, a: T, b: &Self, c: T) -> Self {
        Dense {
            m: self.m,
            n: self.n,
            a: self
                .a
                .iter()
                .zip(&b.a)
                .map(|(x, y)| a * *x + c * *y)
                .collect(),
        }
    }
    fn close(&self, o: &Self) -> bool {
        let scale = self.a.iter().map(|v| v.abs_f64()).fold(1.0, f64::max);
        self.m == o.m
            && self.n == o.n
            && self
                .a
                .iter()
                .zip(&o.a)
                .all(|(x, y)| (*x - *y).abs_f64() <= tol::<T>() * scale)
    }
}

/// Dense matrix of an operator through unit vectors (adjoint: of A^H).
fn dense_of<T: Scalar>(op: &dyn LinearOperator<T>, adjoint: bool) -> Dense<T> {
    let (dom, ran) = if adjoint {
        (op.rows(), op.cols())
    } else {
        (op.cols(), op.rows())
    };
    let (m, n) = (ran.global_len() as usize, dom.global_len() as usize);
    let mut d = Dense::zeros(m, n);
    let mut x = DistVector::<T>::new(dom.clone()).unwrap();
    let mut y = DistVector::<T>::new(ran.clone()).unwrap();
    let mut col = vec![T::zero(); m];
    for j in 0..n {
        x.fill(T::zero()).unwrap();
        let s = dom.local_start() as usize;
        let l = dom.local_len() as usize;
        if j >= s && j < s + l {
            x.local_mut()[j - s] = T::one();
        }
        if adjoint {
            op.apply_adjoint(&x, &mut y).unwrap()
        } else {
            op.apply(&x, &mut y).unwrap()
        }
        y.gather(-1, Some(&mut col), Ok(())).unwrap();
        for i in 0..m {
            d.set(i, j, col[i]);
        }
    }
    d
}

/// Forward and adjoint against the reference, and the dot test.
fn check_op<T: Scalar>(t: &mut Tally, name: &str, op: &dyn LinearOperator<T>, want: &Dense<T>) {
    common::case(&format!("{name} ({})", T::DTYPE.name()));
    let ctx = format!("{} {name}", T::DTYPE.name());
    let f = dense_of(op, false);
    t.check(
        f.close(want),
        &format!("{ctx}: forward matches the dense reference"),
    );
    let a = dense_of(op, true);
    t.check(
        a.close(&want.adjoint()),
        &format!("{ctx}: adjoint matches the dense reference"),
    );
    let e = dottest(op, 42).unwrap();
    t.check(
        e < tol::<T>() * 10.0,
        &format!("{ctx}: dot test relative error {e:e}"),
    );
}

/// The global sparse test matrix: row i has entries at a few scattered columns (some rows empty).
fn sparse_pattern(m: usize, n: usize, seed: usize) -> Vec<Vec<usize>> {
    (0..m)
        .map(|i| {
            let mut c: Vec<usize> = (0..(i + seed) % 5)
                .map(|k| (i * 7 + k * 13 + seed) % n)
                .collect();
            if i < n && !(i + seed).is_multiple_of(3) {
                c.push(i);
            }
            c.sort_unstable();
            c.dedup();
            c
        })
        .collect()
}

fn sparse_dense<T: Scalar>(m: usize, n: usize, seed: usize) -> Dense<T> {
    let mut d = Dense::zeros(m, n);
    for (i, row) in sparse_pattern(m, n, seed).iter().enumerate() {
        for &j in row {
            d.set(i, j, val((i * n + j + seed * 1000) as u64));
        }
    }
    d
}

/// This rank's rows of the sparse matrix as CSR with global column indices.
fn local_rows<T: Scalar>(rows: &Layout, n: usize, seed: usize) -> (Vec<i64>, Vec<i64>, Vec<T>) {
    let pat = sparse_pattern(rows.global_len() as usize, n, seed);
    let s = rows.local_start() as usize;
    let (mut p, mut ix, mut v) = (vec![0i64], Vec::new(), Vec::new());
    for i in s..s + rows.local_len() as usize {
        for &j in &pat[i] {
            ix.push(j as i64);
            v.push(val::<T>((i * n + j + seed * 1000) as u64));
        }
        p.push(ix.len() as i64);
    }
    (p, ix, v)
}

fn csr_from_rows<T: Scalar>(rows: &Arc<Layout>, cols: &Arc<Layout>, seed: usize) -> CsrOp<T> {
    let (p, ix, v) = local_rows::<T>(rows, cols.global_len() as usize, seed);
    CsrOp::from_local_rows(rows.clone(), cols.clone(), &p, &ix, &v, Ok(())).unwrap()
}

/// The same matrix through hypre's split layout, built here independently: diag with the
/// diagonal entry first in each row (hypre's convention, so rows are not sorted), 32-bit indices.
fn csr_from_split<T: Scalar>(rows: &Arc<Layout>, cols: &Arc<Layout>, seed: usize) -> CsrOp<T> {
    let n = cols.global_len() as usize;
    let (p, ix, v) = local_rows::<T>(rows, n, seed);
    let (c0, cl) = (cols.local_start(), cols.local_len());
    let r0 = rows.local_start();
    let mut col_map: Vec<i64> = ix
        .iter()
        .copied()
        .filter(|&j| j < c0 || j >= c0 + cl)
        .collect();
    col_map.sort_unstable();
    col_map.dedup();
    let (mut dp, mut dj, mut dv) = (vec![0i32], Vec::new(), Vec::<T>::new());
    let (mut op, mut oj, mut ov) = (vec![0i32], Vec::new(), Vec::<T>::new());
    for r in 0..rows.local_len() as usize {
        let mut drow: Vec<(i32, T)> = Vec::new();
        for k in p[r] as usize..p[r + 1] as usize {
            let j = ix[k];
            if j >= c0 && j < c0 + cl {
                drow.push(((j - c0) as i32, v[k]));
            } else {
                oj.push(col_map.binary_search(&j).unwrap() as i32);
                ov.push(v[k]);
            }
        }
        // hypre puts the diagonal first
        if let Some(pos) = drow
            .iter()
            .position(|(j, _)| *j as i64 + c0 == r0 + r as i64)
        {
            let d = drow.remove(pos);
            drow.insert(0, d);
        }
        for (j, x) in drow {
            dj.push(j);
            dv.push(x);
        }
        dp.push(dj.len() as i32);
        op.push(oj.len() as i32);
    }
    let nr = rows.local_len() as usize;
    let diag = LocalCsr::new(
        nr,
        cl as usize,
        Idx::I32(Arr::Owned(dp)),
        Idx::I32(Arr::Owned(dj)),
        Arr::Owned(dv),
        "diag",
    );
    let offd = LocalCsr::new(
        nr,
        col_map.len(),
        Idx::I32(Arr::Owned(op)),
        Idx::I32(Arr::Owned(oj)),
        Arr::Owned(ov),
        "offd",
    );
    CsrOp::from_parcsr(rows.clone(), cols.clone(), diag, offd.map(Some), col_map).unwrap()
}

fn local_dense<T: Scalar>(m: usize, n: usize, seed: u64) -> (Op<T>, Dense<T>) {
    let c = Arc::new(Comm::self_comm().unwrap());
    let rows = Layout::new(c.clone(), Partition::Scatter, m as i64, -1).unwrap();
    let cols = Layout::new(c, Partition::Scatter, n as i64, -1).unwrap();
    let mut d = Dense::zeros(m, n);
    for i in 0..m {
        for j in 0..n {
            d.set(i, j, val(seed * 10007 + (i * n + j) as u64));
        }
    }
    let op: Op<T> = Arc::new(DenseBlockRow::new(rows, cols, d.a.clone()).unwrap());
    (op, d)
}

fn run<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    common::case(&format!("run ({})", T::DTYPE.name()));
    let (r, p) = (comm.rank(), comm.size());
    // rows: uneven custom split with an empty rank; columns: default scatter
    let m_local = if r == 1 { 0 } else { 3 + r as i64 };
    let rl = Layout::new(comm.clone(), Partition::Scatter, -1, m_local).unwrap();
    let cl = Layout::new(comm.clone(), Partition::Scatter, 10, -1).unwrap();
    let (m, n) = (rl.global_len() as usize, cl.global_len() as usize);

    // CSR both ways, identical, and against the dense reference
    let ad = sparse_dense::<T>(m, n, 1);
    let a1: Op<T> = Arc::new(csr_from_rows::<T>(&rl, &cl, 1));
    let a2: Op<T> = Arc::new(csr_from_split::<T>(&rl, &cl, 1));
    check_op(t, "CSR from local rows", a1.as_ref(), &ad);
    check_op(t, "CSR from split (hypre) layout", a2.as_ref(), &ad);
    let (f1, f2) = (dense_of(a1.as_ref(), false), dense_of(a2.as_ref(), false));
    t.check(f1.close(&f2), "CSR local rows and split layouts agree");
    // block diagonal matrix (no offd) and a square one for the diagonal
    let sq = sparse_dense::<T>(m, m, 2);
    let s: Op<T> = Arc::new(csr_from_rows::<T>(&rl, &rl, 2));
    check_op(t, "square CSR", s.as_ref(), &sq);
    let mut d = DistVector::<T>::new(rl.clone()).unwrap();
    s.diagonal(&mut d).unwrap();
    let mut g = vec![T::zero(); m];
    d.gather(-1, Some(&mut g), Ok(())).unwrap();
    t.check((0..m).all(|i| g[i] == sq.at(i, i)), "CSR diagonal");
    // a CSR whose pattern is only local columns: offd empty on every rank
    let bd_lay = Layout::new(comm.clone(), Partition::Scatter, -1, m_local).unwrap();
    let (p0, ix0, v0) = {
        let s0 = bd_lay.local_start();
        let mut p = vec![0i64];
        let (mut ix, mut v) = (Vec::new(), Vec::new());
        for i in 0..m_local {
            ix.push(s0 + i);
            v.push(val::<T>((s0 + i) as u64));
            p.push(ix.len() as i64);
        }
        (p, ix, v)
    };
    let bd = CsrOp::<T>::from_local_rows(bd_lay.clone(), bd_lay.clone(), &p0, &ix0, &v0, Ok(()))
        .unwrap();
    t.check(
        bd.halo().n_ghost() == 0 && bd.halo().neighbours() == (0, 0),
        "block-diagonal CSR has no halo",
    );
    let mut bdd = Dense::zeros(m, m);
    for i in 0..m {
        bdd.set(i, i, val(i as u64));
    }
    check_op(t, "offd-free CSR", &bd, &bdd);

    // compositions
    let bdense = sparse_dense::<T>(m, n, 3);
    let b: Op<T> = Arc::new(csr_from_rows::<T>(&rl, &cl, 3));
    let cdense = sparse_dense::<T>(n, m, 4);
    let c: Op<T> = Arc::new(csr_from_rows::<T>(&cl, &rl, 4));
    let alpha = T::from_parts_lossy(2.5, -0.5);
    check_op(
        t,
        "A + B",
        &LinComb::sum(a1.clone(), b.clone()).unwrap(),
        &ad.lin(T::one(), &bdense, T::one()),
    );
    check_op(
        t,
        "A - B",
        &LinComb::difference(a1.clone(), b.clone()).unwrap(),
        &ad.lin(T::one(), &bdense, -T::one()),
    );
    check_op(
        t,
        "alpha A",
        &LinComb::scale(alpha, a1.clone()).unwrap(),
        &ad.lin(alpha, &bdense, T::zero()),
    );
    check_op(t, "A^H", &Adjoint::new(a1.clone()), &ad.adjoint());
    check_op(
        t,
        "A^T",
        &Conjugate::new(a1.clone(), true).unwrap(),
        &ad.adjoint().conj(),
    );
    check_op(
        t,
        "conj(A)",
        &Conjugate::new(a1.clone(), false).unwrap(),
        &ad.conj(),
    );
    check_op(
        t,
        "C A",
        &Product::new(c.clone(), a1.clone()).unwrap(),
        &cdense.mul(&ad),
    );
    let ac: Op<T> = Arc::new(Product::new(a1.clone(), c.clone()).unwrap());
    let acd = ad.mul(&cdense);
    check_op(
        t,
        "(A C)^0",
        &Power::new(ac.clone(), 0).unwrap(),
        &acd.lin(T::zero(), &acd, T::zero())
            .lin(T::zero(), &acd, T::zero())
            .identity_like(),
    );
    check_op(t, "(A C)^1", &Power::new(ac.clone(), 1).unwrap(), &acd);
    check_op(
        t,
        "(A C)^3",
        &Power::new(ac.clone(), 3).unwrap(),
        &acd.mul(&acd).mul(&acd),
    );
    check_op(
        t,
        "(A C)^4",
        &Power::new(ac.clone(), 4).unwrap(),
        &acd.mul(&acd).mul(&acd).mul(&acd),
    );
    let nested: Op<T> =
        Arc::new(LinComb::sum(Arc::new(Adjoint::new(c.clone())), a1.clone()).unwrap());
    check_op(
        t,
        "(C^H + A) nested",
        nested.as_ref(),
        &cdense.adjoint().lin(T::one(), &ad, T::one()),
    );
    let e = Product::new(a1.clone(), a1.clone()).err().map(|e| e.kind);
    t.check(
        if m == n {
            e.is_none()
        } else {
            e == Some(ErrorKind::SizeMismatch)
        },
        "A*A shape check",
    );
    t.check(
        LinComb::sum(a1.clone(), c.clone()).err().map(|e| e.kind) == Some(ErrorKind::SizeMismatch)
            || m == n,
        "A+C shape check",
    );

    // identity, zero, diagonal, callback, dense block rows
    let mut id = Dense::zeros(m, m);
    for i in 0..m {
        id.set(i, i, T::one());
    }
    check_op::<T>(t, "Identity", &Identity::new(rl.clone()), &id);
    check_op(
        t,
        "Zero",
        &Zero::new(rl.clone(), cl.clone()),
        &Dense::<T>::zeros(m, n),
    );
    let mut dv = DistVector::<T>::new(rl.clone()).unwrap();
    let s0 = rl.local_start() as usize;
    for (k, e) in dv.local_mut().iter_mut().enumerate() {
        *e = val((s0 + k) as u64 + 77);
    }
    let mut dd = Dense::zeros(m, m);
    for i in 0..m {
        dd.set(i, i, val(i as u64 + 77));
    }
    check_op(t, "Diagonal", &Diagonal::new(&dv).unwrap(), &dd);
    let start = s0;
    let fwd = move |x: &[T], y: &mut [T]| {
        for (k, (yv, xv)) in y.iter_mut().zip(x).enumerate() {
            *yv = val::<T>((start + k) as u64 + 77) * *xv;
        }
        Ok(())
    };
    let adj = move |x: &[T], y: &mut [T]| {
        for (k, (yv, xv)) in y.iter_mut().zip(x).enumerate() {
            *yv = val::<T>((start + k) as u64 + 77).conj() * *xv;
        }
        Ok(())
    };
    let cb = Callback::new(
        rl.clone(),
        rl.clone(),
        Box::new(fwd),
        Some(Box::new(adj)),
        "shell",
    )
    .unwrap();
    check_op(t, "callback (shell)", &cb, &dd);
    let mut dense_full = Dense::zeros(m, n);
    for i in 0..m {
        for j in 0..n {
            dense_full.set(i, j, val((i * n + j) as u64 + 5000));
        }
    }
    let mine: Vec<T> = dense_full.a[s0 * n..(s0 + m_local as usize) * n].to_vec();
    check_op(
        t,
        "Dense block rows",
        &DenseBlockRow::new(rl.clone(), cl.clone(), mine).unwrap(),
        &dense_full,
    );

    // block operators of local dense blocks; rank q has (q % 3) blocks of size (2+k) x (1+q+k)
    let blocks = |q: i32| -> Vec<(usize, usize, u64)> {
        (0..(q % 3) as usize)
            .map(|k| (2 + k, 1 + q as usize + k, (q as u64) * 10 + k as u64))
            .collect()
    };
    let mine: Vec<Op<T>> = blocks(r)
        .iter()
        .map(|&(bm, bn, sd)| local_dense::<T>(bm, bn, sd).0)
        .collect();
    let all: Vec<Dense<T>> = (0..p)
        .flat_map(blocks)
        .map(|(bm, bn, sd)| local_dense::<T>(bm, bn, sd).1)
        .collect();
    let (tm, tn) = (
        all.iter().map(|d| d.m).sum::<usize>(),
        all.iter().map(|d| d.n).sum::<usize>(),
    );
    let mut bdiag = Dense::zeros(tm, tn);
    let (mut i0, mut j0) = (0, 0);
    for d in &all {
        for i in 0..d.m {
            for j in 0..d.n {
                bdiag.set(i0 + i, j0 + j, d.at(i, j));
            }
        }
        i0 += d.m;
        j0 += d.n;
    }
    if tm > 0 {
        check_op(t, "BlockDiag", &BlockDiag::new(comm, mine).unwrap(), &bdiag);
    }
    // stacks: every block has 4 columns (vstack) / 4 rows (hstack)
    let sblocks = |q: i32| -> Vec<(usize, u64)> {
        (0..1 + (q % 2) as usize)
            .map(|k| (1 + k + q as usize, q as u64 * 7 + k as u64))
            .collect()
    };
    let vmine: Vec<Op<T>> = sblocks(r)
        .iter()
        .map(|&(bm, sd)| local_dense::<T>(bm, 4, sd).0)
        .collect();
    let vall: Vec<Dense<T>> = (0..p)
        .flat_map(sblocks)
        .map(|(bm, sd)| local_dense::<T>(bm, 4, sd).1)
        .collect();
    let vm: usize = vall.iter().map(|d| d.m).sum();
    let mut vd = Dense::zeros(vm, 4);
    let mut i0 = 0;
    for d in &vall {
        for i in 0..d.m {
            for j in 0..4 {
                vd.set(i0 + i, j, d.at(i, j));
            }
        }
        i0 += d.m;
    }
    check_op(t, "VStack", &VStack::new(comm, vmine).unwrap(), &vd);
    let hmine: Vec<Op<T>> = sblocks(r)
        .iter()
        .map(|&(bn, sd)| local_dense::<T>(4, bn, sd).0)
        .collect();
    let hall: Vec<Dense<T>> = (0..p)
        .flat_map(sblocks)
        .map(|(bn, sd)| local_dense::<T>(4, bn, sd).1)
        .collect();
    let hn: usize = hall.iter().map(|d| d.n).sum();
    let mut hd = Dense::zeros(4, hn);
    let mut j0 = 0;
    for d in &hall {
        for i in 0..4 {
            for j in 0..d.n {
                hd.set(i, j0 + j, d.at(i, j));
            }
        }
        j0 += d.n;
    }
    check_op(t, "HStack", &hstack(comm, hmine).unwrap(), &hd);

    // Fredholm1: rank q holds (q % 2) + 1 slices; y[s] = G[s] x[s]
    let (nx, ny, nz) = (3usize, 2usize, 2usize);
    let nsl_of = |q: i32| (q % 2) as usize + 1;
    let nsl: usize = (0..p).map(nsl_of).sum();
    let first: usize = (0..r).map(nsl_of).sum();
    let gval = |s: usize, i: usize, j: usize| val::<T>((s * 100 + i * 10 + j) as u64 + 9000);
    let mine: Vec<T> = (first..first + nsl_of(r))
        .flat_map(|s| (0..nx).flat_map(move |i| (0..ny).map(move |j| gval(s, i, j))))
        .collect();
    let f = Fredholm1::new(
        comm,
        nsl_of(r) as i64,
        nx as i64,
        ny as i64,
        nz as i64,
        mine,
    )
    .unwrap();
    let mut fd = Dense::zeros(nsl * nx * nz, nsl * ny * nz);
    for s in 0..nsl {
        for i in 0..nx {
            for j in 0..ny {
                for k in 0..nz {
                    fd.set(
                        s * nx * nz + i * nz + k,
                        s * ny * nz + j * nz + k,
                        gval(s, i, j),
                    );
                }
            }
        }
    }
    check_op(t, "Fredholm1", &f, &fd);

    // Halo on a process grid: 2D array, grid p x 1 and 1 x p, scalar and per-side widths
    for (dims, grid, widths) in [
        (vec![7i64, 5], vec![p as i64, 1], vec![1i64]),
        (vec![7, 5], vec![1, p as i64], vec![2, 1]),
        (vec![6, 4, 3], vec![1, p as i64, 1], vec![1, 0, 2, 1, 0, 1]),
    ] {
        let op = halo::halo::<T>(comm, &dims, Some(&grid), &widths).unwrap();
        // reference: blocks in rank order, each padded block row-major
        let nd = dims.len();
        let total: i64 = dims.iter().product();
        let mut col_of = vec![0usize; total as usize]; // global flat index -> stacked position
        let mut pos = 0usize;
        let mut blocks = Vec::new();
        for q in 0..p as i64 {
            let (st, sh) = halo::local_block(&dims, &grid, q);
            let n: i64 = sh.iter().product();
            for k in 0..n {
                let mut rem = k;
                let mut g = vec![0i64; nd];
                for a in (0..nd).rev() {
                    g[a] = st[a] + rem % sh[a];
                    rem /= sh[a];
                }
                let flat = g.iter().zip(&dims).fold(0, |acc, (x, d)| acc * d + x);
                col_of[flat as usize] = pos;
                pos += 1;
            }
            blocks.push((st, sh));
        }
        let mut rows_ref = Vec::new();
        for (q, (st, sh)) in blocks.iter().enumerate() {
            let c = halo::coords_of(q as i64, &grid);
            let w = halo::parse_halo(&widths, nd, &c, &grid).unwrap();
            let ps: Vec<i64> = (0..nd).map(|a| sh[a] + w[a].0 + w[a].1).collect();
            let n: i64 = ps.iter().product();
            for k in 0..n {
                let mut rem = k;
                let mut g = vec![0i64; nd];
                for a in (0..nd).rev() {
                    g[a] = st[a] + rem % ps[a] - w[a].0;
                    rem /= ps[a];
                }
                let inside = g.iter().zip(&dims).all(|(x, d)| *x >= 0 && x < d);
                rows_ref.push(if inside {
                    Some(col_of[g.iter().zip(&dims).fold(0, |acc, (x, d)| acc * d + x) as usize])
                } else {
                    None
                });
            }
        }
        let mut hd = Dense::zeros(rows_ref.len(), total as usize);
        for (i, c) in rows_ref.iter().enumerate() {
            if let Some(c) = c {
                hd.set(i, *c, T::one());
            }
        }
        check_op(
            t,
            &format!("Halo dims {dims:?} grid {grid:?} widths {widths:?}"),
            &op,
            &hd,
        );
    }

    // StackedBlockDiag of two distributed CSR matrices: the stacked vector is rank by rank
    let s1: Op<T> = a1.clone();
    let s2: Op<T> = Arc::new(csr_from_rows::<T>(&cl, &cl, 5));
    let s2d = sparse_dense::<T>(n, n, 5);
    let sbd = BlockDiag::stacked(comm, vec![s1.clone(), s2.clone()]).unwrap();
    // positions: for each rank, its rows of block 1 then of block 2
    let perm = |l1: &Layout, l2: &Layout| -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        for q in 0..p as usize {
            for i in 0..l1.local_lens()[q] {
                v.push((0, (l1.offsets()[q] + i) as usize));
            }
            for i in 0..l2.local_lens()[q] {
                v.push((1, (l2.offsets()[q] + i) as usize));
            }
        }
        v
    };
    let (pr, pc) = (perm(&rl, &cl), perm(&cl, &cl));
    let mut sd = Dense::zeros(pr.len(), pc.len());
    for (i, &(bi, gi)) in pr.iter().enumerate() {
        for (j, &(bj, gj)) in pc.iter().enumerate() {
            if bi == bj {
                sd.set(
                    i,
                    j,
                    if bi == 0 {
                        ad.at(gi, gj)
                    } else {
                        s2d.at(gi, gj)
                    },
                );
            }
        }
    }
    check_op(t, "StackedBlockDiag", &sbd, &sd);

    // SUMMA on a square grid: Y = A X, A 5x4, X 4x3; tiles in rank order, row-major
    let (nn, kk, mm) = (5i64, 4i64, 3i64);
    let g = (p as f64).sqrt().round() as i64;
    let aval = |i: i64, j: i64| val::<T>((i * 31 + j * 7) as u64 + 4242);
    let (gr, gc) = (r as i64 / g.max(1), r as i64 % g.max(1));
    let (rs, rl) = tile(nn, g, gr);
    let (cs, cl2) = tile(kk, g, gc);
    let mine: Vec<T> = (rs..rs + rl)
        .flat_map(|i| (cs..cs + cl2).map(move |j| aval(i, j)))
        .collect();
    let op = Summa::<T>::new(comm, nn, kk, mm, &mine);
    if g * g != p as i64 {
        t.check(
            matches!(&op, Err(e) if e.kind == ErrorKind::NotSupported),
            "SUMMA refuses a non-square grid on every rank",
        );
    } else {
        // position of (i, j) of an n x m matrix tiled over the grid, rank by rank
        let pos = |n: i64, m: i64| -> Vec<(i64, i64)> {
            let mut v = Vec::new();
            for q in 0..p as i64 {
                let (ts, tl) = tile(n, g, q / g);
                let (us, ul) = tile(m, g, q % g);
                for i in ts..ts + tl {
                    for j in us..us + ul {
                        v.push((i, j));
                    }
                }
            }
            v
        };
        let (py, px) = (pos(nn, mm), pos(kk, mm));
        let mut sd = Dense::zeros(py.len(), px.len());
        for (a, &(i, j)) in py.iter().enumerate() {
            for (b, &(k2, j2)) in px.iter().enumerate() {
                if j == j2 {
                    sd.set(a, b, aval(i, k2));
                }
            }
        }
        check_op(t, "SUMMA", &op.unwrap(), &sd);
    }
}

trait IdentityLike {
    fn identity_like(&self) -> Self;
}
impl<T: Scalar> IdentityLike for Dense<T> {
    fn identity_like(&self) -> Self {
        let mut d = Dense::zeros(self.m, self.n);
        for i in 0..self.m.min(self.n) {
            d.set(i, i, T::one());
        }
        d
    }
}

/// Reference stencils written the NumPy way (whole-array slices along an axis), in f64.
/// Visitor of one line along an axis: (position -> flat index, line length).
type LineFn<'a> = dyn FnMut(&dyn Fn(usize) -> usize, usize) + 'a;

fn along(shape: &[usize], a: usize, f: &mut LineFn) {
    // iterate over every line along axis a: base index of each line, then a closure mapping the
    // position along the axis to the flat index
    let st: Vec<usize> = (0..shape.len())
        .map(|k| shape[k + 1..].iter().product())
        .collect();
    let total: usize = shape.iter().product();
    for base in 0..total {
        if !(base / st[a]).is_multiple_of(shape[a]) {
            continue;
        }
        let at = |i: usize| base + i * st[a];
        f(&at, shape[a]);
    }
}

fn ref_first(shape: &[usize], a: usize, kind: Kind, edge: bool, dx: f64, x: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; x.len()];
    along(shape, a, &mut |at, n| match kind {
        Kind::Forward => (0..n - 1).for_each(|i| y[at(i)] = (x[at(i + 1)] - x[at(i)]) / dx),
        Kind::Backward => (1..n).for_each(|i| y[at(i)] = (x[at(i)] - x[at(i - 1)]) / dx),
        Kind::Centered => {
            (1..n - 1).for_each(|i| y[at(i)] = (0.5 * x[at(i + 1)] - 0.5 * x[at(i - 1)]) / dx);
            if edge {
                y[at(0)] = (x[at(1)] - x[at(0)]) / dx;
                y[at(n - 1)] = (x[at(n - 1)] - x[at(n - 2)]) / dx;
            }
        }
    });
    y
}

fn ref_second(shape: &[usize], a: usize, kind: Kind, edge: bool, dx: f64, x: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; x.len()];
    let d2 = |x: &[f64], at: &dyn Fn(usize) -> usize, i: usize| {
        x[at(i)] - 2.0 * x[at(i + 1)] + x[at(i + 2)]
    };
    along(shape, a, &mut |at, n| {
        match kind {
            Kind::Forward => (0..n - 2).for_each(|i| y[at(i)] = d2(x, at, i)),
            Kind::Backward => (0..n - 2).for_each(|i| y[at(i + 2)] = d2(x, at, i)),
            Kind::Centered => {
                (0..n - 2).for_each(|i| y[at(i + 1)] = d2(x, at, i));
                if edge {
                    y[at(0)] = d2(x, at, 0);
                    y[at(n - 1)] = d2(x, at, n - 3);
                }
            }
        }
        (0..n).for_each(|i| y[at(i)] /= dx * dx);
    });
    y
}

/// Dense matrix of a reference map on flat global vectors, as T.
fn dense_ref<T: Scalar>(m: usize, n: usize, f: &dyn Fn(&[f64]) -> Vec<f64>) -> Dense<T> {
    let mut d = Dense::zeros(m, n);
    for j in 0..n {
        let mut e = vec![0.0; n];
        e[j] = 1.0;
        for (i, v) in f(&e).into_iter().enumerate() {
            d.set(i, j, T::from_parts_lossy(v, 0.0));
        }
    }
    d
}

/// An N-D layout of `shape` split unevenly along axis 0 (rank 1 empty at 2 ranks and more): the
/// layout, every rank's extent along axis 0, the shape as usize and the number of entries.
fn uneven_nd(comm: &Arc<Comm>, shape: &[i64]) -> (Arc<Layout>, Vec<i64>, Vec<usize>, usize) {
    let (r, p) = (comm.rank() as usize, comm.size() as usize);
    let mut rows = parlops::vector::scatter_lens(shape[0], p);
    if p > 1 {
        rows[0] += rows[1];
        rows[1] = 0;
    }
    let l = Layout::new_nd(comm.clone(), Ok(Partition::Scatter), shape, 0, rows[r]).unwrap();
    let sh: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
    let n = sh.iter().product();
    (l, rows, sh, n)
}

fn run_stencils<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    common::case(&format!("run_stencils ({})", T::DTYPE.name()));
    for shape in [vec![7i64], vec![6, 4], vec![5, 3, 2]] {
        let (l, rows, sh, n) = uneven_nd(comm, &shape);
        for a in 0..sh.len() {
            for kind in [Kind::Centered, Kind::Forward, Kind::Backward] {
                for edge in [false, true] {
                    let dx = 0.5 + a as f64;
                    let name = format!("first derivative {shape:?} axis {a} {kind:?} edge {edge}");
                    let op = stencil::first_derivative::<T>(&l, a as i32, dx, kind, edge).unwrap();
                    check_op(
                        t,
                        &name,
                        &op,
                        &dense_ref(n, n, &|x| ref_first(&sh, a, kind, edge, dx, x)),
                    );
                    if sh[a] >= 3 {
                        let name =
                            format!("second derivative {shape:?} axis {a} {kind:?} edge {edge}");
                        let op =
                            stencil::second_derivative::<T>(&l, a as i32, dx, kind, edge).unwrap();
                        check_op(
                            t,
                            &name,
                            &op,
                            &dense_ref(n, n, &|x| ref_second(&sh, a, kind, edge, dx, x)),
                        );
                    }
                }
            }
        }
        if sh.iter().all(|&d| d >= 3) {
            let w: Vec<f64> = (0..sh.len()).map(|a| 1.0 + a as f64).collect();
            let dxs: Vec<f64> = (0..sh.len()).map(|a| 1.0 / (1.0 + a as f64)).collect();
            let op = stencil::laplacian::<T>(&l, &w, &dxs).unwrap();
            let want = dense_ref(n, n, &|x| {
                let mut y = vec![0.0; n];
                for a in 0..sh.len() {
                    for (yi, v) in
                        y.iter_mut()
                            .zip(ref_second(&sh, a, Kind::Centered, false, dxs[a], x))
                    {
                        *yi += w[a] * v;
                    }
                }
                y
            });
            check_op(t, &format!("laplacian {shape:?}"), &op, &want);
        }
        // gradient: rank r's output holds its part of d/dx_0, then of d/dx_1, ...
        let dxs: Vec<f64> = (0..sh.len()).map(|a| 1.0 + 0.25 * a as f64).collect();
        let op = stencil::gradient::<T>(&l, &dxs, Kind::Centered, true).unwrap();
        let want = dense_ref(n * sh.len(), n, &|x| {
            let parts: Vec<Vec<f64>> = (0..sh.len())
                .map(|a| ref_first(&sh, a, Kind::Centered, true, dxs[a], x))
                .collect();
            by_rank(&parts, &rows, n / sh[0])
        });
        check_op(t, &format!("gradient {shape:?}"), &op, &want);
    }
    run_long_stencils::<T>(t, comm);
}

/// The gradient's output: each rank's part of every axis' derivative, rank after rank.
fn by_rank(parts: &[Vec<f64>], rows: &[i64], inner: usize) -> Vec<f64> {
    let mut y = Vec::new();
    let mut start = 0;
    for &rr in rows {
        let (s0, s1) = (start * inner, (start + rr as usize) * inner);
        for part in parts {
            y.extend_from_slice(&part[s0..s1]);
        }
        start += rr as usize;
    }
    y
}

/// Shapes long enough for the stencils' shared interior rule and their chunked kernel (runs of
/// more than 512 points), split unevenly along axis 0 with an empty rank at 2 ranks and more, on a
/// smooth x against the references, with the dot test for the adjoint.
fn run_long_stencils<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    common::case(&format!("run_long_stencils ({})", T::DTYPE.name()));
    for shape in [vec![1500i64], vec![30, 41], vec![5, 4, 600], vec![12, 3, 1]] {
        let (l, rows, sh, n) = uneven_nd(comm, &shape);
        let xg: Vec<f64> = (0..n)
            .map(|j| (j as f64 * 0.013).sin() + 0.1 * (j % 7) as f64)
            .collect();
        let mut x = DistVector::<T>::new(l.clone()).unwrap();
        let s = l.local_start() as usize;
        for (k, v) in x.local_mut().iter_mut().enumerate() {
            *v = T::from_parts_lossy(xg[s + k], 0.0);
        }
        let mut check = |name: String, op: &dyn LinearOperator<T>, want: Vec<f64>| {
            let ctx = format!("{} {name}", T::DTYPE.name());
            let mut y = DistVector::<T>::new(op.rows().clone()).unwrap();
            op.apply(&x, &mut y).unwrap();
            let got = common::gathered(&y);
            let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            let err = got
                .iter()
                .zip(&want)
                .map(|(g, w)| (*g - T::from_parts_lossy(*w, 0.0)).abs_f64())
                .fold(0.0, f64::max);
            t.check(
                got.len() == want.len() && err <= 10.0 * tol::<T>() * scale,
                &format!("{ctx}: forward error {err:e} (scale {scale:e})"),
            );
            let e = dottest(op, 7).unwrap();
            t.check(
                e < tol::<T>() * 10.0,
                &format!("{ctx}: dot test relative error {e:e}"),
            );
        };
        for a in 0..sh.len() {
            for kind in [Kind::Centered, Kind::Forward, Kind::Backward] {
                for edge in [false, true] {
                    let dx = 0.5 + a as f64;
                    if sh[a] >= 2 {
                        let op = stencil::first_derivative::<T>(&l, a as i32, dx, kind, edge);
                        check(
                            format!("first derivative {shape:?} axis {a} {kind:?} edge {edge}"),
                            &op.unwrap(),
                            ref_first(&sh, a, kind, edge, dx, &xg),
                        );
                    }
                    if sh[a] >= 3 {
                        let op = stencil::second_derivative::<T>(&l, a as i32, dx, kind, edge);
                        check(
                            format!("second derivative {shape:?} axis {a} {kind:?} edge {edge}"),
                            &op.unwrap(),
                            ref_second(&sh, a, kind, edge, dx, &xg),
                        );
                    }
                }
            }
        }
        // a Laplacian over the axes of at least 3 points (the others weighted 0)
        let w: Vec<f64> = (0..sh.len())
            .map(|a| if sh[a] >= 3 { 1.0 + a as f64 } else { 0.0 })
            .collect();
        let dxs: Vec<f64> = (0..sh.len()).map(|a| 1.0 / (1.0 + a as f64)).collect();
        let mut want = vec![0.0; n];
        for a in (0..sh.len()).filter(|&a| w[a] != 0.0) {
            for (yi, v) in
                want.iter_mut()
                    .zip(ref_second(&sh, a, Kind::Centered, false, dxs[a], &xg))
            {
                *yi += w[a] * v;
            }
        }
        let op = stencil::laplacian::<T>(&l, &w, &dxs).unwrap();
        check(format!("laplacian {shape:?}"), &op, want);
        // its diagonal (Jacobi): sum over the weighted axes of -2 w / dx^2 where the axis' second
        // derivative is not zero (PyLops' edge = false: the first and last slab of each axis)
        let mut d = DistVector::<T>::new(l.clone()).unwrap();
        op.diagonal(&mut d).unwrap();
        let got = common::gathered(&d);
        let st: Vec<usize> = (0..sh.len())
            .map(|k| sh[k + 1..].iter().product())
            .collect();
        let bad = (0..n).find(|&g| {
            let want: f64 = (0..sh.len())
                .filter(|&a| w[a] != 0.0 && (1..sh[a] - 1).contains(&((g / st[a]) % sh[a])))
                .map(|a| -2.0 * w[a] / (dxs[a] * dxs[a]))
                .sum();
            (got[g] - T::from_parts_lossy(want, 0.0)).abs_f64()
                > 10.0 * tol::<T>() * want.abs().max(1.0)
        });
        if sh.iter().all(|&d| d >= 2) {
            let op = stencil::gradient::<T>(&l, &dxs, Kind::Backward, false).unwrap();
            let parts: Vec<Vec<f64>> = (0..sh.len())
                .map(|a| ref_first(&sh, a, Kind::Backward, false, dxs[a], &xg))
                .collect();
            check(
                format!("gradient {shape:?}"),
                &op,
                by_rank(&parts, &rows, n / sh[0]),
            );
        }
        t.check(
            bad.is_none(),
            &format!(
                "{} laplacian {shape:?}: diagonal (first wrong entry {bad:?})",
                T::DTYPE.name()
            ),
        );
    }
}

/// The textbook Laplacian of a grid (C order, slowest extent first): 2 d x_i minus each neighbour
/// inside the grid, written here independently of parlops.
fn ref_poisson(dims: &[usize], x: &[f64]) -> Vec<f64> {
    let n: usize = dims.iter().product();
    let nd = dims.len();
    let mut strides = vec![1usize; nd];
    for a in (0..nd.saturating_sub(1)).rev() {
        strides[a] = strides[a + 1] * dims[a + 1];
    }
    (0..n)
        .map(|g| {
            let mut v = 2.0 * nd as f64 * x[g];
            for a in 0..nd {
                let c = (g / strides[a]) % dims[a];
                if c > 0 {
                    v -= x[g - strides[a]];
                }
                if c + 1 < dims[a] {
                    v -= x[g + strides[a]];
                }
            }
            v
        })
        .collect()
}

/// The matrix-free Poisson operators: against the dense reference (forward, adjoint, dot test),
/// bitwise against the assembled CSR matrix of the same rows, the fused p.q against a separate dot,
/// and CG on both: the same iterations and bits. Splits are uneven: an empty rank, ranks holding
/// less than a grid line or plane.
fn run_poisson<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    common::case(&format!("run_poisson ({})", T::DTYPE.name()));
    let (r, p) = (comm.rank() as usize, comm.size() as usize);
    for dims in [
        vec![9i64],
        vec![5, 7],
        vec![2, 11],
        vec![4, 3, 5],
        vec![3, 1, 4],
    ] {
        let n: i64 = dims.iter().product();
        let mut lens = parlops::vector::scatter_lens(n, p);
        if p > 1 {
            // an empty rank 1, and the last rank's first row moved to rank 0
            lens[0] += lens[1];
            lens[1] = 0;
            let k = lens[p - 1].min(1);
            lens[p - 1] -= k;
            lens[0] += k;
        }
        let l = Layout::new(comm.clone(), Partition::Scatter, -1, lens[r]).unwrap();
        let op = Poisson::<T>::new(l.clone(), &dims, Ok(())).unwrap();
        let sh: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
        let nn = n as usize;
        let name = format!("Poisson {dims:?}");
        check_op(t, &name, &op, &dense_ref(nn, nn, &|x| ref_poisson(&sh, x)));
        // the assembled matrix: this rank's rows in increasing column order
        let full = dense_ref::<f64>(nn, nn, &|x| ref_poisson(&sh, x));
        let (s, len) = (l.local_start() as usize, l.local_len() as usize);
        let (mut ip, mut ix, mut v) = (vec![0i64], Vec::new(), Vec::new());
        for i in s..s + len {
            for j in 0..nn {
                let a = full.at(i, j);
                if a != 0.0 {
                    ix.push(j as i64);
                    v.push(T::from_parts_lossy(a, 0.0));
                }
            }
            ip.push(ix.len() as i64);
        }
        let csr = CsrOp::<T>::from_local_rows(l.clone(), l.clone(), &ip, &ix, &v, Ok(())).unwrap();
        let mut x = DistVector::<T>::new(l.clone()).unwrap();
        for (k, xi) in x.local_mut().iter_mut().enumerate() {
            *xi = val::<T>((s + k) as u64 * 7 + 3);
        }
        let (mut y1, mut y2) = (x.duplicate().unwrap(), x.duplicate().unwrap());
        csr.apply(&x, &mut y1).unwrap();
        let part = op.apply_dot(&x, &mut y2).unwrap();
        // one rank: a CSR row sums in column order, as the stencil does (the same bits); more ranks:
        // CSR adds the other ranks' columns last (within rounding)
        let scale = y1.norm(parlops::vector::NormKind::Inf).unwrap().max(1.0);
        let bad = y1
            .local()
            .iter()
            .zip(y2.local())
            .map(|(a, b)| {
                if p == 1 && a.to_parts() != b.to_parts() {
                    f64::INFINITY
                } else {
                    (*a - *b).abs_f64() / scale
                }
            })
            .fold(0.0, f64::max);
        let bad = comm.allreduce_f64(&[bad], ReduceOp::Max).unwrap()[0];
        t.check(
            bad <= 4.0 * tol::<T>() * 1e-3,
            &format!(
                "{} {name}: the CSR matrix's product (bitwise at 1 rank): {bad:e}",
                T::DTYPE.name()
            ),
        );
        let pq = part.map(|(re, im)| comm.allreduce_f64(&[re, im], ReduceOp::Sum).unwrap());
        let want = x.dot(&y1).unwrap().to_parts();
        let ok = pq.is_some_and(|d| {
            ((d[0] - want.0).powi(2) + (d[1] - want.1).powi(2)).sqrt()
                <= tol::<T>() * (want.0.abs() + want.1.abs()).max(1.0)
        });
        t.check(
            ok,
            &format!(
                "{} {name}: fused conj(x).Ax equals the separate dot",
                T::DTYPE.name()
            ),
        );
        // CG on both operators, summing in row order: the same iterations, and at one rank the same
        // bits
        let rtol = if T::DTYPE.size() / T::PARTS >= 8 {
            1e-10
        } else {
            1e-4
        };
        // a converged solve must meet its rule on the recomputed residual ||b - A x||
        let solve = |a: Op<T>| {
            let mut s = parlops::solver::Solver::<T>::new(parlops::solver::Method::Cg);
            s.params.sum_order = parlops::solver::SumOrder::Sequential;
            s.params.rtol = rtol;
            s.set_operator(a.clone()).unwrap();
            let mut b = DistVector::<T>::new(l.clone()).unwrap();
            b.fill(T::one()).unwrap();
            let mut x = b.duplicate().unwrap();
            let info = s.solve(&b, &mut x).unwrap();
            let mut r = b.duplicate().unwrap();
            a.apply(&x, &mut r).unwrap();
            r.axpby(T::one(), &b, -T::one()).unwrap();
            let rn = r.norm(parlops::vector::NormKind::Two).unwrap();
            let bn = b.norm(parlops::vector::NormKind::Two).unwrap();
            let slack = if rtol < 1e-6 { 1.01 } else { 2.0 };
            (info, x, rn <= slack * rtol * bn)
        };
        let (i1, x1, true1) = solve(Arc::new(csr));
        let (i2, x2, true2) = solve(Arc::new(op));
        let same = x1
            .local()
            .iter()
            .zip(x2.local())
            .all(|(a, b)| a.to_parts() == b.to_parts());
        let all = comm
            .allreduce_f64(&[if same || p > 1 { 0.0 } else { 1.0 }], ReduceOp::Max)
            .unwrap()[0];
        let mut d = x1.duplicate().unwrap();
        d.waxpy(-T::one(), &x1, &x2).unwrap();
        let rel = d.norm(parlops::vector::NormKind::Two).unwrap()
            / x1.norm(parlops::vector::NormKind::Two).unwrap();
        t.check(
            i1.reason.converged()
                && true1
                && true2
                && i1.iterations == i2.iterations
                && i1.reason == i2.reason
                && all == 0.0
                && rel <= 1e3 * tol::<T>(),
            &format!(
                "{} {name}: CG on the matrix-free and the CSR operator: {} and {} iterations, solutions {rel:e} apart",
                T::DTYPE.name(),
                i1.iterations,
                i2.iterations,
            ),
        );
    }
    // bad input, refused on every rank
    let l = Layout::new(comm.clone(), Partition::Scatter, 12, -1).unwrap();
    for (dims, kind) in [
        (vec![3i64, 5], ErrorKind::SizeMismatch),
        (vec![], ErrorKind::InvalidArgument),
        (vec![1, 2, 2, 3], ErrorKind::InvalidArgument),
        (vec![12, 0], ErrorKind::InvalidArgument),
        (vec![-3, -4], ErrorKind::InvalidArgument),
    ] {
        let e = Poisson::<T>::new(l.clone(), &dims, Ok(()))
            .err()
            .map(|e| e.kind);
        t.check(e == Some(kind), &format!("Poisson dims {dims:?}: {e:?}"));
    }
    let mine = if r == p - 1 {
        vec![4i64, 3]
    } else {
        vec![3, 4]
    };
    let e = Poisson::<T>::new(l.clone(), &mine, Ok(()))
        .err()
        .map(|e| e.kind);
    t.check(
        p == 1 || e.is_some(),
        &format!("Poisson dims differing between ranks: {e:?}"),
    );
}

fn run_errors(t: &mut Tally, comm: &Arc<Comm>) {
    common::case("run_errors");
    let (r, p) = (comm.rank(), comm.size());
    let rl = Layout::new(comm.clone(), Partition::Scatter, 12, -1).unwrap();
    let (mut pp, mut ix, v) = local_rows::<f64>(&rl, 12, 1);
    // unsorted columns on the last rank only: every rank fails with that rank's message
    if r == p - 1 && ix.len() >= 2 {
        let k = (0..rl.local_len() as usize)
            .find(|&i| pp[i + 1] - pp[i] >= 2)
            .unwrap_or(0);
        let a = pp[k] as usize;
        ix.swap(a, a + 1);
    }
    let e = CsrOp::<f64>::from_local_rows(rl.clone(), rl.clone(), &pp, &ix, &v, Ok(()));
    let unsorted_possible = {
        let (pp2, _, _) = local_rows::<f64>(&rl, 12, 1);
        (0..rl.local_len() as usize).any(|i| pp2[i + 1] - pp2[i] >= 2)
    };
    let any = comm
        .allreduce_f64(
            &[if unsorted_possible && r == p - 1 {
                1.0
            } else {
                0.0
            }],
            ReduceOp::Max,
        )
        .unwrap()[0]
        > 0.0;
    if any {
        t.check(matches!(&e, Err(e) if e.kind == ErrorKind::InvalidArgument && e.msg.contains("increasing")), &format!("unsorted columns on one rank: {:?}", e.as_ref().err()));
    }
    // out-of-range column on rank 0
    let (pp2, mut ix2, v2) = local_rows::<f64>(&rl, 12, 1);
    if r == 0 && !ix2.is_empty() {
        let last = ix2.len() - 1;
        ix2[last] = 99;
    }
    let e = CsrOp::<f64>::from_local_rows(rl.clone(), rl.clone(), &pp2, &ix2, &v2, Ok(()));
    t.check(
        matches!(&e, Err(e) if e.kind == ErrorKind::InvalidArgument),
        &format!("out-of-range column on rank 0: {:?}", e.as_ref().err()),
    );
    // decreasing row pointer
    pp[0] = 0;
    let mut pp3 = pp.clone();
    if pp3.len() > 2 {
        pp3[1] = pp3[2] + 1;
    }
    let e = CsrOp::<f64>::from_local_rows(rl.clone(), rl.clone(), &pp3, &ix, &v, Ok(()));
    t.check(e.is_err(), "bad row pointer");
    // col_map_offd with an owned column (hypre split) on the last rank
    let nr = rl.local_len() as usize;
    let cl0 = rl.local_len() as usize;
    let diag = LocalCsr::<f64>::new(
        nr,
        cl0,
        Idx::I64(Arr::Owned(vec![0; nr + 1])),
        Idx::I64(Arr::Owned(vec![])),
        Arr::Owned(vec![]),
        "diag",
    );
    let cm = if r == p - 1 {
        vec![rl.local_start()]
    } else {
        vec![]
    };
    let offd = LocalCsr::<f64>::new(
        nr,
        cm.len(),
        Idx::I64(Arr::Owned(vec![0; nr + 1])),
        Idx::I64(Arr::Owned(vec![])),
        Arr::Owned(vec![]),
        "offd",
    );
    let e = CsrOp::from_parcsr(rl.clone(), rl.clone(), diag, offd.map(Some), cm);
    t.check(
        matches!(&e, Err(e) if e.kind == ErrorKind::InvalidArgument),
        &format!("owned column in col_map_offd: {:?}", e.as_ref().err()),
    );
}

/// A matrix whose neighbouring rows have very different lengths (27, 45, 75 and 125 entries in
/// turn, as an order-2 hexahedral finite-element matrix has): on a CPU with AVX-512, double
/// precision takes the chunked layout sorted by row length within windows of 128 rows, with 16-bit
/// columns. Against the dense reference (forward, adjoint, dot test), a product against a serial
/// one, and the fused p.q against a separate dot; uneven splits with an empty rank 1.
fn run_fe_rows<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    common::case(&format!("run_fe_rows ({})", T::DTYPE.name()));
    let (r, p) = (comm.rank() as usize, comm.size() as usize);
    let n = 700usize;
    let cols_of = |i: usize| {
        let len = [27, 45, 75, 125, 45, 75, 27][i % 7];
        let start = i.saturating_sub(len / 2).min(n - len);
        start..start + len
    };
    let mut lens = parlops::vector::scatter_lens(n as i64, p);
    if p > 1 {
        // an empty rank 1, and a third of the last rank's rows moved to rank 0
        lens[0] += lens[1];
        lens[1] = 0;
        let k = lens[p - 1] / 3;
        lens[p - 1] -= k;
        lens[0] += k;
    }
    let l = Layout::new(comm.clone(), Partition::Scatter, -1, lens[r]).unwrap();
    let entry = |i: usize, j: usize| val::<T>((i * n + j) as u64 * 3 + 1);
    let mut want = Dense::zeros(n, n);
    for i in 0..n {
        for j in cols_of(i) {
            want.set(i, j, entry(i, j));
        }
    }
    let (s, len) = (l.local_start() as usize, l.local_len() as usize);
    let (mut ip, mut ix, mut v) = (vec![0i64], Vec::new(), Vec::new());
    for i in s..s + len {
        for j in cols_of(i) {
            ix.push(j as i64);
            v.push(entry(i, j));
        }
        ip.push(ix.len() as i64);
    }
    let csr = CsrOp::<T>::from_local_rows(l.clone(), l.clone(), &ip, &ix, &v, Ok(())).unwrap();
    check_op(t, "finite-element rows", &csr, &want);
    let mut x = DistVector::<T>::new(l.clone()).unwrap();
    for (k, xi) in x.local_mut().iter_mut().enumerate() {
        *xi = val::<T>((s + k) as u64 * 5 + 2);
    }
    let mut xg = vec![T::zero(); n];
    x.gather(-1, Some(&mut xg), Ok(())).unwrap();
    let (mut y1, mut y2) = (x.duplicate().unwrap(), x.duplicate().unwrap());
    csr.apply(&x, &mut y1).unwrap();
    let part = csr.apply_dot(&x, &mut y2).unwrap();
    let scale = y1.norm(parlops::vector::NormKind::Inf).unwrap().max(1.0);
    let mut bad = 0.0f64;
    for (k, (a, b)) in y1.local().iter().zip(y2.local()).enumerate() {
        let i = s + k;
        let mut want = T::zero();
        for j in cols_of(i) {
            want += entry(i, j) * xg[j];
        }
        bad = bad.max((*a - want).abs_f64() / scale);
        if a.to_parts() != b.to_parts() {
            bad = f64::INFINITY;
        }
    }
    let bad = comm.allreduce_f64(&[bad], ReduceOp::Max).unwrap()[0];
    t.check(
        bad <= tol::<T>(),
        &format!(
            "{} finite-element rows: the product against a serial one ({bad:e}; apply and the fused \
             pass bit for bit)",
            T::DTYPE.name()
        ),
    );
    let pq = part.map(|(re, im)| comm.allreduce_f64(&[re, im], ReduceOp::Sum).unwrap());
    let d = x.dot(&y1).unwrap().to_parts();
    let ok = pq.as_ref().is_some_and(|q| {
        ((q[0] - d.0).powi(2) + (q[1] - d.1).powi(2)).sqrt()
            <= tol::<T>() * (d.0.hypot(d.1)).max(1.0)
    });
    t.check(
        ok,
        &format!(
            "{} finite-element rows: the fused p.q {pq:?} against x.(A x) {d:?}",
            T::DTYPE.name()
        ),
    );
}

fn main() {
    let (comm, mut t) = common::start();
    run::<f32>(&mut t, &comm);
    run::<f64>(&mut t, &comm);
    run::<c32>(&mut t, &comm);
    run::<c64>(&mut t, &comm);
    run_stencils::<f32>(&mut t, &comm);
    run_stencils::<f64>(&mut t, &comm);
    run_stencils::<c32>(&mut t, &comm);
    run_stencils::<c64>(&mut t, &comm);
    run_poisson::<f32>(&mut t, &comm);
    run_poisson::<f64>(&mut t, &comm);
    run_poisson::<c64>(&mut t, &comm);
    run_fe_rows::<f32>(&mut t, &comm);
    run_fe_rows::<f64>(&mut t, &comm);
    run_fe_rows::<c64>(&mut t, &comm);
    run_errors(&mut t, &comm);
    common::finish("mpi_operators", comm, t)
}
