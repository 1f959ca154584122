//! Every operator and composition on every dtype against its dense reference (split from
//! tests/mpi_operators.rs, which runs it).

use super::*;

pub(super) fn run<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
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
