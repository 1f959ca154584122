//! Multi-rank vector tests: run with `mpiexec -n P` (P = 1..4; `make test` does). Every operation on
//! every dtype and partition is compared with a serial reference computed from the same global data,
//! and argument errors on one rank must fail on every rank. Prints `N passed, M failed` on rank 0.

use crate::common;
use common::Tally;

use std::sync::Arc;

use parlops::comm::{Comm, ReduceOp};
use parlops::vector::{AnyVec, DistVector, Layout, NormKind, Partition};
use parlops::{ErrorKind, Scalar, c32, c64};

fn tol<T: Scalar>() -> f64 {
    if matches!(T::DTYPE, parlops::DType::F32 | parlops::DType::C64) {
        2e-5
    } else {
        1e-12
    }
}

/// The global test vector: entry i.
fn entry<T: Scalar>(i: i64, seed: f64) -> T {
    let x = i as f64;
    T::from_parts_lossy((x * 0.7 + seed).sin() + 0.1 * seed, (x * 0.3 - seed).cos())
}

fn global<T: Scalar>(n: i64, seed: f64) -> Vec<T> {
    (0..n).map(|i| entry(i, seed)).collect()
}

fn close<T: Scalar>(a: &[T], b: &[T]) -> bool {
    let scale = b.iter().map(|v| v.abs_f64()).fold(1.0, f64::max);
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (*x - *y).abs_f64() <= tol::<T>() * scale)
}

fn close_f(a: f64, b: f64, t: f64) -> bool {
    (a - b).abs() <= t * b.abs().max(1.0) || (a.is_infinite() && a == b)
}

/// A vector whose entries are `entry(global index)`, each rank filling only its part.
fn filled<T: Scalar>(l: &Arc<Layout>, seed: f64) -> DistVector<T> {
    let mut v = DistVector::<T>::new(l.clone()).unwrap();
    let start = l.local_start();
    for (k, e) in v.local_mut().iter_mut().enumerate() {
        *e = entry(start + k as i64, seed);
    }
    v
}

fn gathered<T: Scalar>(v: &DistVector<T>) -> Vec<T> {
    let mut out = vec![T::zero(); v.layout().global_len() as usize];
    v.gather(-1, Some(&mut out), Ok(())).unwrap();
    out
}

fn serial_norm<T: Scalar>(x: &[T], k: NormKind) -> f64 {
    let (v, _) = k.partial(x);
    k.finish(v)
}

fn run_dtype<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>, layouts: &[(String, Arc<Layout>)]) {
    common::case(&format!("run_dtype ({})", T::DTYPE.name()));
    let name = T::DTYPE.name();
    let p = comm.size();
    for (lname, l) in layouts {
        let n = l.global_len();
        let ctx = format!("{name} {lname}");
        let gx: Vec<T> = global(n, 0.25);
        let gy: Vec<T> = global(n, 1.5);
        let x = filled::<T>(l, 0.25);
        let y = filled::<T>(l, 1.5);
        // Replicated layouts hold the whole vector on every rank.
        t.check(close(&gathered(&x), &gx), &format!("{ctx}: gather to all"));
        let root = p - 1;
        let mut out = vec![T::zero(); n as usize];
        let recv = if comm.rank() == root {
            Some(&mut out[..])
        } else {
            None
        };
        x.gather(root, recv, Ok(())).unwrap();
        if comm.rank() == root {
            t.check(close(&out, &gx), &format!("{ctx}: gather to root {root}"));
        }
        // scatter from rank 0 into a fresh vector
        let mut s = x.duplicate().unwrap();
        let src = if comm.rank() == 0 {
            Some(&gy[..])
        } else {
            None
        };
        s.scatter_from(0, src, Ok(())).unwrap();
        t.check(close(&gathered(&s), &gy), &format!("{ctx}: scatter from 0"));

        // dot (conjugating) and norms
        let d = x.dot(&y).unwrap();
        let mut rd = T::zero();
        for (a, b) in gx.iter().zip(&gy) {
            rd += a.conj() * *b;
        }
        let (dr, di) = d.to_parts();
        let (rr, ri) = rd.to_parts();
        let scale = gx.iter().map(|v| v.abs2_f64()).sum::<f64>().max(1.0);
        t.check(
            (dr - rr).abs() <= tol::<T>() * scale && (di - ri).abs() <= tol::<T>() * scale,
            &format!("{ctx}: dot {d:?} vs {rd:?}"),
        );
        for k in [
            NormKind::Zero,
            NormKind::One,
            NormKind::Two,
            NormKind::Inf,
            NormKind::NegInf,
            NormKind::P(3.0),
        ] {
            let got = x.norm(k).unwrap();
            let want = serial_norm(&gx, k);
            t.check(
                close_f(got, want, tol::<T>() * 10.0),
                &format!("{ctx}: norm {k:?}: {got} vs {want}"),
            );
        }

        // entry-wise operations against the serial reference
        let a = T::from_parts_lossy(0.5, -0.25);
        let b = T::from_parts_lossy(-1.5, 0.75);
        let mut w = y.duplicate().unwrap();
        w.copy_from(&y).unwrap();
        w.axpy(a, &x).unwrap();
        let r: Vec<T> = gy.iter().zip(&gx).map(|(yv, xv)| *yv + a * *xv).collect();
        t.check(close(&gathered(&w), &r), &format!("{ctx}: axpy"));
        w.copy_from(&y).unwrap();
        w.axpby(a, &x, b).unwrap();
        let r: Vec<T> = gy
            .iter()
            .zip(&gx)
            .map(|(yv, xv)| a * *xv + b * *yv)
            .collect();
        t.check(close(&gathered(&w), &r), &format!("{ctx}: axpby"));
        w.waxpy(b, &x, &y).unwrap();
        let r: Vec<T> = gy.iter().zip(&gx).map(|(yv, xv)| b * *xv + *yv).collect();
        t.check(close(&gathered(&w), &r), &format!("{ctx}: waxpy"));
        w.pointwise_mult(&x, &y).unwrap();
        let r: Vec<T> = gy.iter().zip(&gx).map(|(yv, xv)| *xv * *yv).collect();
        t.check(close(&gathered(&w), &r), &format!("{ctx}: pointwise_mult"));
        w.scale(a).unwrap();
        let r: Vec<T> = r.iter().map(|v| a * *v).collect();
        t.check(close(&gathered(&w), &r), &format!("{ctx}: scale"));
        w.conj().unwrap();
        let r: Vec<T> = r.iter().map(|v| v.conj()).collect();
        t.check(close(&gathered(&w), &r), &format!("{ctx}: conj"));
        w.fill(b).unwrap();
        t.check(
            close(&gathered(&w), &vec![b; n as usize]),
            &format!("{ctx}: fill"),
        );

        // wrapping the caller's memory: no copy, writes show through
        let mut mine: Vec<T> = x.local().to_vec();
        let ptr = mine.as_mut_ptr();
        // SAFETY: `ptr` points to `mine`, a host `Vec<T>` of `x.local().len()` = `l.local_len()`
        // entries, aligned for `T`; `mine` is neither moved nor resized while `wv` lives and is
        // read again only after `drop(wv)` below.
        let mut wv = unsafe {
            DistVector::<T>::wrap(l.clone(), parlops::memory::Location::Host, ptr).unwrap()
        };
        t.check(
            wv.local_ptr() == ptr || mine.is_empty(),
            &format!("{ctx}: wrap keeps the pointer"),
        );
        wv.scale(T::from_parts_lossy(2.0, 0.0)).unwrap();
        let twice: Vec<T> = gx
            .iter()
            .map(|v| T::from_parts_lossy(2.0, 0.0) * *v)
            .collect();
        t.check(
            close(&gathered(&wv), &twice),
            &format!("{ctx}: wrapped vector ops"),
        );
        let mut other: Vec<T> = y.local().to_vec();
        // SAFETY: `other` holds `y.local().len()` = `l.local_len()` entries of host memory (the
        // same layout), untouched while placed, and `wv.reset_array()` below drops the pointer
        // before `other` goes out of scope.
        unsafe { wv.place_array(other.as_mut_ptr()).unwrap() };
        t.check(close(&gathered(&wv), &gy), &format!("{ctx}: place_array"));
        wv.reset_array();
        t.check(
            close(&gathered(&wv), &twice),
            &format!("{ctx}: reset_array"),
        );
        drop(wv);
        t.check(
            mine.iter()
                .zip(x.local())
                .all(|(m, v)| *m == T::from_parts_lossy(2.0, 0.0) * *v),
            &format!("{ctx}: caller array updated in place"),
        );

        // redistribution to every other layout of the same length
        for (oname, o) in layouts {
            if o.global_len() != n {
                continue;
            }
            let r = x.redistribute(o, Ok(())).unwrap();
            t.check(
                close(&gathered(&r), &gx),
                &format!("{ctx}: redistribute to {oname}"),
            );
            t.check(
                r.local().len() as i64 == o.local_len(),
                &format!("{ctx}: redistributed local length"),
            );
        }
    }
}

fn run_errors(t: &mut Tally, comm: &Arc<Comm>) {
    common::case("run_errors");
    let p = comm.size();
    let r = comm.rank();
    // different global length on the last rank only: every rank must fail, the same way
    let g = if r == p - 1 && p > 1 { 11 } else { 10 };
    let e = Layout::new(comm.clone(), Partition::Scatter, g, -1);
    if p > 1 {
        t.check(
            matches!(&e, Err(e) if e.kind == ErrorKind::InconsistentAcrossRanks),
            &format!("global length differing on one rank: {e:?}"),
        );
    }
    // local lengths that do not sum up
    let e = Layout::new(comm.clone(), Partition::Scatter, 100, 1);
    t.check(
        matches!(&e, Err(e) if e.kind == ErrorKind::SizeMismatch),
        "local lengths not summing",
    );
    // a negative size on one rank
    let e = Layout::new(
        comm.clone(),
        Partition::Scatter,
        if r == 0 { -5 } else { 10 },
        -1,
    );
    t.check(
        matches!(&e, Err(e) if e.kind == ErrorKind::InvalidArgument),
        &format!("negative size on rank 0: {e:?}"),
    );
    // a bad norm kind on one rank only
    let l = Layout::new(comm.clone(), Partition::Scatter, 10, -1).unwrap();
    let v = DistVector::<f64>::new(l.clone()).unwrap();
    let k = if r == p - 1 {
        NormKind::from_code(42, 0.0)
    } else {
        Ok(NormKind::Inf)
    };
    let e = v.norm_checked(k);
    t.check(
        matches!(&e, Err(e) if e.kind == ErrorKind::InvalidArgument),
        &format!("bad norm kind on one rank: {e:?}"),
    );
    // a bad root on one rank
    let mut out = vec![0.0; 10];
    let e = v.gather(if r == 0 { p + 3 } else { 0 }, Some(&mut out), Ok(()));
    t.check(
        matches!(&e, Err(e) if e.kind == ErrorKind::InvalidArgument),
        &format!("bad root on rank 0: {e:?}"),
    );
    // different roots on different ranks
    if p > 1 {
        let e = v.gather(if r == 0 { 0 } else { 1 }, Some(&mut out), Ok(()));
        t.check(
            matches!(&e, Err(e) if e.kind == ErrorKind::InconsistentAcrossRanks),
            &format!("roots differ: {e:?}"),
        );
    }
    // dtype mismatch on one rank only (AnyVec level, as the C API sees it)
    let a = AnyVec::new(
        l.clone(),
        parlops::DType::F64,
        parlops::memory::Location::Host,
    )
    .unwrap();
    let b = AnyVec::new(
        l.clone(),
        if r == p - 1 {
            parlops::DType::F32
        } else {
            parlops::DType::F64
        },
        parlops::memory::Location::Host,
    )
    .unwrap();
    let e = AnyVec::dot(&a, &b, Ok(()));
    t.check(
        matches!(&e, Err(e) if e.kind == ErrorKind::DTypeMismatch),
        &format!("dtype mismatch on one rank: {e:?}"),
    );
    // a layout of a different length on one rank only
    let l2 = Layout::new(comm.clone(), Partition::Scatter, 12, -1).unwrap();
    let c = DistVector::<f64>::new(if r == 0 { l2.clone() } else { l.clone() }).unwrap();
    let e = AnyVec::dot(&AnyVec::F64(v), &AnyVec::F64(c), Ok(()));
    t.check(
        matches!(&e, Err(e) if e.kind == ErrorKind::SizeMismatch),
        &format!("size mismatch on rank 0: {e:?}"),
    );
    // the communicator still works after all that
    let s = comm.allreduce_f64(&[1.0], ReduceOp::Sum).unwrap();
    t.check(s[0] == p as f64, "communicator usable after errors");
}

/// The 2-norm is scaled as BLAS nrm2 does (issue 10): entries of 1e200 or 1e-200 in double precision
/// give the exact norm instead of inf or 0, with empty ranks, every partition, NaN and Inf kept.
fn run_scaled_norms<T: Scalar>(t: &mut Tally, layouts: &[(String, Arc<Layout>)]) {
    let name = T::DTYPE.name();
    let (big, small) = if matches!(T::DTYPE, parlops::DType::F32 | parlops::DType::C64) {
        (1e30f64, 1e-30f64)
    } else {
        (1e200, 1e-200)
    };
    for (lname, l) in layouts {
        let n = l.global_len();
        if n == 0 {
            continue;
        }
        for mag in [big, small, 1.0] {
            let mut x = DistVector::<T>::new(l.clone()).unwrap();
            // entries mag * (3, -4, 3, -4, ...) on the global index
            let st = l.local_start();
            for (i, v) in x.local_mut().iter_mut().enumerate() {
                let s = if (st + i as i64) % 2 == 0 { 3.0 } else { -4.0 };
                *v = T::from_parts_lossy(s * mag, 0.0);
            }
            let g = gathered(&x);
            let exact: f64 = mag
                * g.iter()
                    .map(|v| {
                        let a = v.abs_f64() / mag;
                        a * a
                    })
                    .sum::<f64>()
                    .sqrt();
            let got = x.norm(NormKind::Two).unwrap();
            t.check(
                got.is_finite() && got > 0.0 && (got - exact).abs() <= 1e-6 * exact,
                &format!("{name} {lname}: 2-norm of entries {mag:e}: {got:e}, exact {exact:e}"),
            );
        }
        // NaN and Inf still show (on the rank that owns entry 0, whichever it is)
        for bad in [f64::NAN, f64::INFINITY] {
            let mut x = DistVector::<T>::new(l.clone()).unwrap();
            x.fill(T::real(big)).unwrap();
            if l.local_start() == 0 && !x.local().is_empty() {
                x.local_mut()[0] = T::from_parts_lossy(bad, 0.0);
            }
            let got = x.norm(NormKind::Two).unwrap();
            let want_nan = bad.is_nan();
            let owner_sees = l.partition() != Partition::UnsafeBroadcast || l.local_start() == 0;
            t.check(
                !owner_sees
                    || (if want_nan {
                        got.is_nan()
                    } else {
                        got == f64::INFINITY
                    }),
                &format!("{name} {lname}: 2-norm with {bad} is {got}"),
            );
        }
    }
}

pub fn main() {
    let (comm, mut t) = common::start();
    let r = comm.rank();
    // uneven custom split with an empty rank (rank 1 when P > 1)
    let custom = match r {
        1 => 0,
        _ => 2 * r as i64 + 3,
    };
    let mut layouts = vec![
        (
            "scatter 23".to_string(),
            Layout::new(comm.clone(), Partition::Scatter, 23, -1).unwrap(),
        ),
        (
            "scatter 2 (empty ranks)".to_string(),
            Layout::new(comm.clone(), Partition::Scatter, 2, -1).unwrap(),
        ),
        (
            "custom".to_string(),
            Layout::new(comm.clone(), Partition::Scatter, -1, custom).unwrap(),
        ),
        (
            "empty".to_string(),
            Layout::new(comm.clone(), Partition::Scatter, 0, -1).unwrap(),
        ),
    ];
    let custom_n = layouts[2].1.global_len();
    layouts.push((
        "broadcast".into(),
        Layout::new(comm.clone(), Partition::Broadcast, custom_n, -1).unwrap(),
    ));
    layouts.push((
        "unsafe broadcast".into(),
        Layout::new(comm.clone(), Partition::UnsafeBroadcast, custom_n, -1).unwrap(),
    ));
    layouts.push((
        "scatter same length".into(),
        Layout::new(comm.clone(), Partition::Scatter, custom_n, -1).unwrap(),
    ));
    run_dtype::<f32>(&mut t, &comm, &layouts);
    run_dtype::<f64>(&mut t, &comm, &layouts);
    run_dtype::<c32>(&mut t, &comm, &layouts);
    run_dtype::<c64>(&mut t, &comm, &layouts);
    run_scaled_norms::<f32>(&mut t, &layouts);
    run_scaled_norms::<f64>(&mut t, &layouts);
    run_scaled_norms::<c32>(&mut t, &layouts);
    run_scaled_norms::<c64>(&mut t, &layouts);
    run_errors(&mut t, &comm);
    common::finish("mpi_vectors", comm, t)
}
