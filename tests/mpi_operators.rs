//! Multi-rank operator tests: run with `mpiexec -n P` (P = 1..4; `make test` does). Every operator and
//! composition, on every dtype, is turned into a dense matrix by applying it (and its adjoint) to unit
//! vectors, compared with a dense reference built independently here, and dot-tested. Layouts are
//! uneven, with an empty rank. Prints `N passed, M failed` on rank 0.

#![allow(clippy::needless_range_loop)]

use crate::common;
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

#[path = "mpi_operators/fft.rs"]
mod fft;
#[path = "mpi_operators/operators.rs"]
mod operators;
#[path = "mpi_operators/stencil_csr.rs"]
mod stencil_csr;
#[path = "mpi_operators/stencils.rs"]
mod stencils;
use operators::*;
use stencils::*;

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

pub fn main() {
    let (comm, mut t) = common::start();
    run::<f32>(&mut t, &comm);
    run::<f64>(&mut t, &comm);
    run::<c32>(&mut t, &comm);
    run::<c64>(&mut t, &comm);
    run_stencils::<f32>(&mut t, &comm);
    run_stencils::<f64>(&mut t, &comm);
    run_stencils::<c32>(&mut t, &comm);
    run_stencils::<c64>(&mut t, &comm);
    run_stencil_csr::<f32>(&mut t, &comm);
    run_stencil_csr::<f64>(&mut t, &comm);
    run_stencil_csr::<c32>(&mut t, &comm);
    run_stencil_csr::<c64>(&mut t, &comm);
    run_poisson::<f32>(&mut t, &comm);
    run_poisson::<f64>(&mut t, &comm);
    run_poisson::<c64>(&mut t, &comm);
    run_fe_rows::<f32>(&mut t, &comm);
    run_fe_rows::<f64>(&mut t, &comm);
    run_fe_rows::<c64>(&mut t, &comm);
    fft::run_fft::<f32>(&mut t, &comm, false);
    fft::run_fft::<f64>(&mut t, &comm, false);
    fft::run_fft::<f32>(&mut t, &comm, true);
    fft::run_fft::<f64>(&mut t, &comm, true);
    run_errors(&mut t, &comm);
    common::finish("mpi_operators", comm, t)
}
