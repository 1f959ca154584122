//! The stencil operators (first and second derivatives, Laplacian, gradient, long stencils) and the
//! matrix-free Poisson operator against NumPy-style references (split from tests/mpi_operators.rs,
//! which runs them).

use super::*;

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
pub(super) fn uneven_nd(
    comm: &Arc<Comm>,
    shape: &[i64],
) -> (Arc<Layout>, Vec<i64>, Vec<usize>, usize) {
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

pub(super) fn run_stencils<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
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
pub(super) fn run_long_stencils<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
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
pub(super) fn run_poisson<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
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

/// The matrix-free stencils equal to their assembled CSR matrices (`stencil_csr.rs`): at one rank
/// in the default order, forward; at any rank count in the reproducible order, forward and
/// adjoint. Shapes small and large (the long runs go through the unrolled and AVX2 kernels).
pub(super) fn run_stencil_csr<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    use super::stencil_csr::{AxisTerms, assemble};
    common::case(&format!("run_stencil_csr ({})", T::DTYPE.name()));
    let p = comm.size();
    let equal = |a: &DistVector<T>, b: &DistVector<T>| -> bool {
        let bad = a
            .local()
            .iter()
            .zip(b.local())
            .filter(|(u, v)| u.to_parts() != v.to_parts())
            .count();
        comm.allreduce_f64(&[bad as f64], ReduceOp::Sum).unwrap()[0] == 0.0
    };
    let fill = |v: &mut DistVector<T>, seed: u64| {
        let s = v.layout().local_start() as u64;
        for (k, e) in v.local_mut().iter_mut().enumerate() {
            *e = val::<T>(seed + 7 * (s + k as u64));
        }
    };
    for shape in [
        vec![7i64],
        vec![6, 4],
        vec![5, 3, 2],
        vec![40, 37],
        vec![12, 9, 11],
    ] {
        let (l, _, sh, _) = uneven_nd(comm, &shape);
        let nd = sh.len();
        type Case<T> = (String, Box<dyn LinearOperator<T>>, Vec<Vec<AxisTerms>>);
        let mut cases: Vec<Case<T>> = Vec::new();
        for a in 0..nd {
            for kind in [Kind::Centered, Kind::Forward, Kind::Backward] {
                for edge in [false, true] {
                    let dx = 0.3 + a as f64;
                    let op = stencil::first_derivative::<T>(&l, a as i32, dx, kind, edge).unwrap();
                    let terms: AxisTerms = (a, stencil::first_coeffs, kind, edge, dx, 1.0);
                    cases.push((
                        format!("first derivative axis {a} {kind:?} edge {edge}"),
                        Box::new(op),
                        vec![vec![terms]],
                    ));
                    if sh[a] >= 3 {
                        let op =
                            stencil::second_derivative::<T>(&l, a as i32, dx, kind, edge).unwrap();
                        let terms: AxisTerms = (a, stencil::second_coeffs, kind, edge, dx, 1.0);
                        cases.push((
                            format!("second derivative axis {a} {kind:?} edge {edge}"),
                            Box::new(op),
                            vec![vec![terms]],
                        ));
                    }
                }
            }
        }
        if sh.iter().all(|&d| d >= 3) {
            let w: Vec<f64> = (0..nd).map(|a| 1.0 + 0.7 * a as f64).collect();
            let dxs: Vec<f64> = (0..nd).map(|a| 1.0 / (1.3 + a as f64)).collect();
            let op = stencil::laplacian::<T>(&l, &w, &dxs).unwrap();
            let block: Vec<AxisTerms> = (0..nd)
                .map(|a| {
                    let t: AxisTerms = (
                        a,
                        stencil::second_coeffs,
                        Kind::Centered,
                        false,
                        dxs[a],
                        w[a],
                    );
                    t
                })
                .collect();
            cases.push(("laplacian".into(), Box::new(op), vec![block]));
        }
        let dxs: Vec<f64> = (0..nd).map(|a| 0.7 + 0.25 * a as f64).collect();
        let op = stencil::gradient::<T>(&l, &dxs, Kind::Centered, true).unwrap();
        let blocks: Vec<Vec<AxisTerms>> = (0..nd)
            .map(|a| {
                let t: AxisTerms = (a, stencil::first_coeffs, Kind::Centered, true, dxs[a], 1.0);
                vec![t]
            })
            .collect();
        cases.push(("gradient".into(), Box::new(op), blocks));
        for (name, op, blocks) in &cases {
            let csr = assemble::<T>(op.rows(), op.cols(), blocks);
            let mut x = DistVector::<T>::new(op.cols().clone()).unwrap();
            fill(&mut x, 3);
            let mut y = DistVector::<T>::new(op.rows().clone()).unwrap();
            fill(&mut y, 5);
            let (mut y1, mut y2) = (y.duplicate().unwrap(), y.duplicate().unwrap());
            let (mut x1, mut x2) = (x.duplicate().unwrap(), x.duplicate().unwrap());
            let what = format!("{} {shape:?} {name}", T::DTYPE.name());
            if p == 1 {
                csr.apply(&x, &mut y1).unwrap();
                op.apply(&x, &mut y2).unwrap();
                t.check(
                    equal(&y1, &y2),
                    &format!("{what}: equal to the assembled CSR's product"),
                );
            }
            let _order = parlops::vector::ops::SumOrder::reproducible();
            csr.apply(&x, &mut y1).unwrap();
            op.apply(&x, &mut y2).unwrap();
            csr.apply_adjoint(&y, &mut x1).unwrap();
            op.apply_adjoint(&y, &mut x2).unwrap();
            t.check(
                equal(&y1, &y2),
                &format!(
                    "{what}: equal to the assembled CSR's product (reproducible order, {p} ranks)"
                ),
            );
            // the gradient's rows are stacked rank by rank, so its matrix's transposed rows take the
            // blocks in an order that depends on the split (the stencil's does not: block after
            // block); one block (or one rank holding everything), the same order
            let close = if blocks.len() > 1 && p > 2 {
                let mut d = x1.duplicate().unwrap();
                d.copy_from(&x1).unwrap();
                d.axpy(-T::one(), &x2).unwrap();
                let e = d.norm(parlops::vector::NormKind::Inf).unwrap();
                e <= 8.0 * tol::<T>() * 1e-3 * x1.norm(parlops::vector::NormKind::Inf).unwrap()
            } else {
                equal(&x1, &x2)
            };
            t.check(
                close,
                &format!(
                    "{what}: the adjoint equal to the assembled CSR's (reproducible order, {p} ranks; \
                     several blocks from 3 ranks: within rounding)"
                ),
            );
        }
    }
}
