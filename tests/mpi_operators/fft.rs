//! The distributed FFT against a naive DFT written here (a sum over every entry, per axis, with
//! NumPy's roll for the shifts), forward and adjoint, and the dot test (its real part for the
//! real-linear forms). Split from tests/mpi_operators.rs, which runs it.

use super::*;
use parlops::op::fft::{Fft, Spec};

type Cx = num_complex::Complex<f64>;

/// NumPy's roll of axis `a` by `s`.
fn roll(x: &[Cx], sh: &[usize], a: usize, s: i64) -> Vec<Cx> {
    let inner: usize = sh[a + 1..].iter().product();
    let outer: usize = sh[..a].iter().product();
    let n = sh[a];
    let mut y = x.to_vec();
    for o in 0..outer {
        for i in 0..n {
            let j = (i as i64 + s).rem_euclid(n as i64) as usize;
            for k in 0..inner {
                y[(o * n + j) * inner + k] = x[(o * n + i) * inner + k];
            }
        }
    }
    y
}

/// The naive DFT along axis `a`, keeping `m` frequencies.
fn dft(x: &[Cx], sh: &mut [usize], a: usize, m: usize) -> Vec<Cx> {
    let inner: usize = sh[a + 1..].iter().product();
    let outer: usize = sh[..a].iter().product();
    let n = sh[a];
    let mut y = vec![Cx::new(0.0, 0.0); outer * m * inner];
    for o in 0..outer {
        for f in 0..m {
            for k in 0..inner {
                let mut s = Cx::new(0.0, 0.0);
                for i in 0..n {
                    let ph = -2.0 * std::f64::consts::PI * ((f * i) % n) as f64 / n as f64;
                    s += x[(o * n + i) * inner + k] * Cx::from_polar(1.0, ph);
                }
                y[(o * m + f) * inner + k] = s;
            }
        }
    }
    sh[a] = m;
    y
}

/// PyLops' MPIFFTND forward on the whole array, written from its documentation.
fn reference(x: &[Cx], dims: &[usize], s: &Spec) -> Vec<Cx> {
    let mut sh = dims.to_vec();
    let mut a: Vec<Cx> = if s.clinear {
        x.to_vec()
    } else {
        x.iter().map(|v| Cx::new(v.re, 0.0)).collect()
    };
    for (k, &ax) in s.axes.iter().enumerate() {
        if s.ifftshift_before[k] {
            a = roll(&a, &sh, ax, -((dims[ax] / 2) as i64));
        }
    }
    for (k, &ax) in s.axes.iter().enumerate() {
        let last = k + 1 == s.axes.len();
        let m = if s.real && last {
            dims[ax] / 2 + 1
        } else {
            dims[ax]
        };
        a = dft(&a, &mut sh, ax, m);
        if s.real && last {
            let inner: usize = sh[ax + 1..].iter().product();
            let outer: usize = sh[..ax].iter().product();
            for o in 0..outer {
                for f in 1..1 + (dims[ax] - 1) / 2 {
                    for q in 0..inner {
                        a[(o * m + f) * inner + q] *= std::f64::consts::SQRT_2;
                    }
                }
            }
        }
    }
    if s.norm_1n {
        let nf: usize = s.axes.iter().map(|&ax| dims[ax]).product();
        a.iter_mut().for_each(|v| *v /= nf as f64);
    }
    for (k, &ax) in s.axes.iter().enumerate() {
        if s.fftshift_after[k] {
            a = roll(&a, &sh, ax, (sh[ax] / 2) as i64);
        }
    }
    a
}

fn to_t<T: Scalar>(v: Cx) -> T {
    T::from_parts_lossy(v.re, v.im)
}

fn to_c<T: Scalar>(v: T) -> Cx {
    let (r, i) = v.to_parts();
    Cx::new(r, i)
}

fn run_one<R>(t: &mut Tally, comm: &Arc<Comm>, shape: &[i64], rows: Option<Vec<i64>>, s: Spec)
where
    R: rustfft::FftNum,
    num_complex::Complex<R>: Scalar,
    Fft<R>: LinearOperator<num_complex::Complex<R>>,
{
    type V<R> = num_complex::Complex<R>;
    let me = comm.rank() as usize;
    let l = match rows {
        Some(r) => Layout::new_nd(comm.clone(), Ok(Partition::Scatter), shape, 0, r[me]).unwrap(),
        None => uneven_nd(comm, shape).0,
    };
    let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
    let ctx = format!(
        "{} FFT {shape:?} axes {:?} real {} clinear {} 1/n {} shifts {:?}/{:?}",
        <V<R> as Scalar>::DTYPE.name(),
        s.axes,
        s.real,
        s.clinear,
        s.norm_1n,
        s.ifftshift_before,
        s.fftshift_after
    );
    common::case(&ctx);
    let op = Fft::<R>::new(l.clone(), Ok(s.clone())).unwrap();
    let n: usize = dims.iter().product();
    let xg: Vec<Cx> = (0..n)
        .map(|j| Cx::new((j as f64 * 0.37 + 0.1).sin(), (j as f64 * 0.11 - 0.3).cos()))
        .collect();
    let want = reference(&xg, &dims, &s);
    let mut x = DistVector::<V<R>>::new(l.clone()).unwrap();
    let st = l.local_start() as usize;
    for (k, v) in x.local_mut().iter_mut().enumerate() {
        *v = to_t(xg[st + k]);
    }
    let mut y = DistVector::<V<R>>::new(op.rows().clone()).unwrap();
    op.apply(&x, &mut y).unwrap();
    let got: Vec<Cx> = common::gathered(&y).into_iter().map(to_c).collect();
    let scale = want.iter().fold(1.0f64, |m, v| m.max(v.norm()));
    let tol_f = 10.0 * tol::<V<R>>() * scale;
    let err = |a: &[Cx], b: &[Cx]| {
        if a.len() != b.len() {
            return f64::INFINITY;
        }
        a.iter()
            .zip(b)
            .map(|(p, q)| (p - q).norm())
            .fold(0.0, f64::max)
    };
    let e = err(&got, &want);
    t.check(
        e <= tol_f,
        &format!("{ctx}: forward error {e:e} (scale {scale:e})"),
    );
    // the adjoint against the dense matrix of the reference (real inputs give its columns; the
    // real-linear forms' adjoint is the real part of M^H y)
    let m = want.len();
    let cols: Vec<Vec<Cx>> = (0..n)
        .map(|j| {
            let mut e = vec![Cx::new(0.0, 0.0); n];
            e[j] = Cx::new(1.0, 0.0);
            reference(&e, &dims, &s)
        })
        .collect();
    let yg: Vec<Cx> = (0..m)
        .map(|i| Cx::new((i as f64 * 0.23).cos(), (i as f64 * 0.71 + 0.2).sin()))
        .collect();
    let want_adj: Vec<Cx> = (0..n)
        .map(|j| {
            let v: Cx = (0..m).map(|i| cols[j][i].conj() * yg[i]).sum();
            if s.clinear { v } else { Cx::new(v.re, 0.0) }
        })
        .collect();
    let mut yv = DistVector::<V<R>>::new(op.rows().clone()).unwrap();
    let rs = op.rows().local_start() as usize;
    for (k, v) in yv.local_mut().iter_mut().enumerate() {
        *v = to_t(yg[rs + k]);
    }
    let mut xa = DistVector::<V<R>>::new(l.clone()).unwrap();
    op.apply_adjoint(&yv, &mut xa).unwrap();
    let got_adj: Vec<Cx> = common::gathered(&xa).into_iter().map(to_c).collect();
    let scale_a = want_adj.iter().fold(1.0f64, |m, v| m.max(v.norm()));
    let ea = err(&got_adj, &want_adj);
    t.check(
        ea <= 10.0 * tol::<V<R>>() * scale_a,
        &format!("{ctx}: adjoint error {ea:e} (scale {scale_a:e})"),
    );
    // dot test: Re <A x, y> = Re <x, A^H y> (all of it for the complex-linear forms)
    let lhs: Cx = got.iter().zip(&yg).map(|(a, b)| a.conj() * b).sum();
    let rhs: Cx = xg.iter().zip(&got_adj).map(|(a, b)| a.conj() * b).sum();
    let d = if s.clinear {
        (lhs - rhs).norm()
    } else {
        (lhs.re - rhs.re).abs()
    } / lhs.norm().max(rhs.norm()).max(1e-300);
    t.check(d <= 10.0 * tol::<V<R>>(), &format!("{ctx}: dot test {d:e}"));
}

fn spec(axes: &[usize], real: bool, clinear: bool, norm: bool, ish: &[bool], fsh: &[bool]) -> Spec {
    Spec {
        axes: axes.to_vec(),
        norm_1n: norm,
        real,
        clinear,
        ifftshift_before: ish.to_vec(),
        fftshift_after: fsh.to_vec(),
    }
}

/// Every form at `R`'s precision; `complex_model`: the c64/c128 dtypes (else f32/f64: real input).
pub(super) fn run_fft<R>(t: &mut Tally, comm: &Arc<Comm>, complex_model: bool)
where
    R: rustfft::FftNum,
    num_complex::Complex<R>: Scalar,
    Fft<R>: LinearOperator<num_complex::Complex<R>>,
{
    let c = complex_model;
    let (f, tr) = (false, true);
    let cases: Vec<(Vec<i64>, Spec)> = vec![
        (vec![7, 6], spec(&[0, 1], f, c, f, &[f, f], &[f, f])),
        (vec![6, 7], spec(&[1, 0], f, c, tr, &[tr, f], &[f, tr])),
        (
            vec![5, 4, 3],
            spec(&[0, 1, 2], f, c, tr, &[tr, f, tr], &[f, tr, f]),
        ),
        (vec![6, 5, 4], spec(&[2, 0], tr, f, f, &[f, f], &[tr, tr])),
        (vec![5, 6, 3], spec(&[1, 2], tr, f, f, &[tr, f], &[f, f])),
        (
            vec![4, 3, 7],
            spec(&[0, 2, 1], tr, f, tr, &[f, tr, f], &[tr, f, tr]),
        ),
        (vec![3, 8], spec(&[1], f, c, f, &[tr], &[tr])),
        (vec![9, 2], spec(&[0], f, c, f, &[tr], &[tr])),
        (vec![11], spec(&[0], tr, f, tr, &[f], &[f])),
        (vec![10], spec(&[0], f, c, f, &[tr], &[tr])),
        (
            vec![2, 2, 2, 5],
            spec(&[3, 0, 1], f, c, f, &[f, tr, f], &[tr, f, f]),
        ),
    ];
    for (shape, s) in cases {
        run_one::<R>(t, comm, &shape, None, s.clone());
        if shape.len() == 1 {
            // a 1-D split layout (not N-D): the last rank holds most
            let p = comm.size() as usize;
            let mut r = parlops::vector::scatter_lens(shape[0], p);
            if p > 1 {
                r[p - 1] += r[0];
                r[0] = 0;
            }
            let me = comm.rank() as usize;
            let l = Layout::new(comm.clone(), Partition::Scatter, shape[0], r[me]).unwrap();
            let op = Fft::<R>::new(l, Ok(s.clone())).unwrap();
            let e = dottest(&op, 3).unwrap();
            let ok = if s.clinear { e < 1e-4 } else { e.is_finite() };
            t.check(
                ok,
                &format!("FFT on a 1-D layout {shape:?}: dot test {e:e}"),
            );
        }
    }
}
