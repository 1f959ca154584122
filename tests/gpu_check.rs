//! Device (CUDA) checks, run under mpiexec like the other multi-rank tests: every device path against
//! the host path on the same data (vectors of the four dtypes, wrapping caller memory, caller streams,
//! CSR forward/adjoint with a halo, compositions, staged operators, device callbacks, solvers, NCCL).
//! With `--bench [n1 n2 ...]` it also prints the bandwidth table of `make gpu-check`: device SpMV and
//! CG iteration against a device-to-device copy measured in the same run.
//!
//! Where this process has no CUDA device it prints `gpu_check skipped: <why>` and succeeds, so that
//! `make test` passes on machines without a GPU.

#[path = "gpu_check/bench.rs"]
mod bench;
#[path = "gpu_check/catalogue.rs"]
mod catalogue;
mod common;
#[path = "gpu_check/fused.rs"]
mod fused;
#[path = "gpu_check/nccl.rs"]
mod nccl;
#[path = "gpu_check/nested.rs"]
mod nested;
// the reproducible mode's checks: their device half (`device`) runs here
#[allow(dead_code)]
#[path = "mpi_reproducible.rs"]
mod reproducible;
#[path = "gpu_check/shapes.rs"]
mod shapes;
#[path = "gpu_check/solvers.rs"]
mod solvers;

use std::sync::Arc;
use std::time::Instant;

use common::{Tally, finish, start};
use parlops::comm::{Comm, ReduceOp};
use parlops::memory::Location;
use parlops::op::basic::Diagonal;
use parlops::op::callback::Callback;
use parlops::op::compose::{LinComb, Product};
use parlops::op::csr::CsrOp;
use parlops::op::{Op, random_fill};

use parlops::vector::{DistVector, Layout, NormKind, Partition, dots};
use parlops::{Scalar, c32, c64};

const CUDA: Location = Location::Cuda;
/// w = f(x, y), run on host and device vectors alike.
type VecOp<'a, T> = dyn Fn(&mut DistVector<T>, &DistVector<T>, &DistVector<T>) + 'a;
const HOST: Location = Location::Host;

/// Tolerance for results that differ only by summation order.
fn tol<T: Scalar>() -> f64 {
    if matches!(T::DTYPE, parlops::DType::F32 | parlops::DType::C64) {
        1e-4
    } else {
        1e-12
    }
}

/// Bytes copied between host and device so far in this process, when the driver is the CUDA stand-in
/// (tests/standin/: its `standin_transfer_counts`); None with a real driver.
fn standin_transfers() -> Option<u64> {
    type Counts = unsafe extern "C" fn(*mut u64, *mut u64);
    // SAFETY: dlopen with RTLD_NOLOAD only looks up a library this process already loaded, and the
    // symbol, when there, has the stand-in's signature (two out-pointers).
    unsafe {
        let h = libc::dlopen(c"libcuda.so.1".as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
        if h.is_null() {
            return None;
        }
        let f = libc::dlsym(h, c"standin_transfer_counts".as_ptr());
        if f.is_null() {
            return None;
        }
        let f = std::mem::transmute::<*mut libc::c_void, Counts>(f);
        let (mut htod, mut dtoh) = (0u64, 0u64);
        f(&mut htod, &mut dtoh);
        Some(htod + dtoh)
    }
}

/// max |a - b| / max(max |b|, tiny) over all ranks (both brought to the host).
fn rel_diff<T: Scalar>(a: &DistVector<T>, b: &DistVector<T>) -> f64 {
    let ha = a.to_location(HOST).unwrap();
    let hb = b.to_location(HOST).unwrap();
    let (mut d, mut m) = (0.0f64, 0.0f64);
    for (x, y) in ha.local().iter().zip(hb.local()) {
        let (xr, xi) = x.to_parts();
        let (yr, yi) = y.to_parts();
        d = d.max((xr - yr).hypot(xi - yi));
        m = m.max(yr.hypot(yi));
        if xr.is_nan() || xi.is_nan() {
            d = f64::INFINITY;
        }
    }
    let r = a
        .layout()
        .comm()
        .allreduce_f64(&[d, m], ReduceOp::Max)
        .unwrap();
    r[0] / r[1].max(1e-300)
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1e-300) || (a.is_nan() && b.is_nan())
}

/// A random vector in `loc` (the same entries whatever the location).
fn rand<T: Scalar>(l: &Arc<Layout>, seed: u64, loc: Location) -> DistVector<T> {
    let mut h = DistVector::<T>::new(l.clone()).unwrap();
    random_fill(&mut h, seed);
    h.to_location(loc).unwrap()
}

fn vectors<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    let name = T::DTYPE.name();
    let p = comm.size() as i64;
    // uneven split with an empty rank when there are several ranks
    let mine = match comm.rank() {
        0 => 1000,
        1 => 0,
        r => 37 * r as i64 + 3,
    };
    let uneven = Layout::new(comm.clone(), Partition::Scatter, -1, mine).unwrap();
    let even = Layout::new(comm.clone(), Partition::Scatter, 257 * p + 1, -1).unwrap();
    let bcast = Layout::new(comm.clone(), Partition::Broadcast, 91, -1).unwrap();
    for (lname, l) in [("uneven", &uneven), ("even", &even), ("broadcast", &bcast)] {
        let what = |op: &str| format!("{name} {lname}: {op}");
        let a = T::from_parts_lossy(0.75, -0.5);
        let b = T::from_parts_lossy(-1.25, 0.25);
        let (hx, hy) = (rand::<T>(l, 1, HOST), rand::<T>(l, 2, HOST));
        let (dx, dy) = (rand::<T>(l, 1, CUDA), rand::<T>(l, 2, CUDA));
        t.check(
            dx.is_device() && dx.location() == CUDA,
            &what("device location"),
        );
        // element-wise: equal up to rounding of the same formula
        let el = 4.0
            * if matches!(T::DTYPE, parlops::DType::F32 | parlops::DType::C64) {
                6e-8
            } else {
                1.2e-16
            };
        let mut hw = hx.duplicate().unwrap();
        let mut dw = dx.duplicate().unwrap();
        let mut pair = |op: &str, f: &VecOp<'_, T>| {
            f(&mut hw, &hx, &hy);
            f(&mut dw, &dx, &dy);
            let d = rel_diff(&dw, &hw);
            t.check(d <= el, &format!("{} (diff {d:e})", what(op)));
        };
        pair("fill", &|w, _, _| w.fill(a).unwrap());
        pair("copy", &|w, x, _| w.copy_from(x).unwrap());
        pair("scale", &|w, x, _| {
            w.copy_from(x).unwrap();
            w.scale(a).unwrap()
        });
        pair("conj", &|w, x, _| {
            w.copy_from(x).unwrap();
            w.conj().unwrap()
        });
        pair("axpy", &|w, x, y| {
            w.copy_from(y).unwrap();
            w.axpy(a, x).unwrap()
        });
        pair("axpby", &|w, x, y| {
            w.copy_from(y).unwrap();
            w.axpby(a, x, b).unwrap()
        });
        pair("waxpy", &|w, x, y| w.waxpy(a, x, y).unwrap());
        pair("pointwise_mult", &|w, x, y| w.pointwise_mult(x, y).unwrap());
        pair("pointwise_mult_conj", &|w, x, y| {
            w.pointwise_mult_conj(x, y).unwrap()
        });
        // reductions
        let (hd, dd) = (hx.dot(&hy).unwrap(), dx.dot(&dy).unwrap());
        let diff = (hd - dd).abs_f64() / hd.abs_f64().max(1e-300);
        t.check(
            diff <= tol::<T>(),
            &format!("{} (diff {diff:e})", what("dot")),
        );
        for k in [
            NormKind::Zero,
            NormKind::One,
            NormKind::Two,
            NormKind::Inf,
            NormKind::NegInf,
            NormKind::P(3.0),
        ] {
            let (hn, dn) = (hx.norm(k).unwrap(), dx.norm(k).unwrap());
            t.check(
                close(hn, dn, tol::<T>()),
                &format!("{} host {hn} device {dn}", what(&format!("norm {k:?}"))),
            );
        }
        let hds = dots(comm, &[(&hx, &hy), (&hy, &hy), (&hx, &hx)], Ok(())).unwrap();
        let dds = dots(comm, &[(&dx, &dy), (&dy, &dy), (&dx, &dx)], Ok(())).unwrap();
        for (h, d) in hds.iter().zip(&dds) {
            let diff = (*h - *d).abs_f64() / h.abs_f64().max(1e-300);
            t.check(diff <= tol::<T>(), &what("dots (3 pairs, one reduction)"));
        }
        fused::fused_basis::<T>(t, comm, l, lname);
        // mixing memories is an error, not a silent copy
        let mut dz = dx.duplicate().unwrap();
        let e = dz.axpy(a, &hx).unwrap_err();
        t.check(
            e.kind == parlops::ErrorKind::MemoryLocation,
            &what("host x into device y refused"),
        );
        // gather / scatter / redistribute go through the host
        let n = l.global_len() as usize;
        let (mut g1, mut g2) = (vec![T::zero(); n], vec![T::zero(); n]);
        hx.gather(-1, Some(&mut g1), Ok(())).unwrap();
        dx.gather(-1, Some(&mut g2), Ok(())).unwrap();
        t.check(g1 == g2, &what("allgather"));
        let mut ds = dx.duplicate().unwrap();
        ds.scatter_from(0, Some(&g1), Ok(())).unwrap();
        t.check(rel_diff(&ds, &hx) == 0.0, &what("scatter"));
        if l.partition() == Partition::Scatter {
            let to = Layout::new(comm.clone(), Partition::Scatter, l.global_len(), -1).unwrap();
            let hr = hx.redistribute(&to, Ok(())).unwrap();
            let dr = dx.redistribute(&to, Ok(())).unwrap();
            t.check(
                dr.is_device() && rel_diff(&dr, &hr) == 0.0,
                &what("redistribute"),
            );
        }
    }
}

/// Caller memory wrapped with no copy, and a caller stream.
fn wrap_and_stream(t: &mut Tally, comm: &Arc<Comm>) {
    let l = Layout::new(comm.clone(), Partition::Scatter, 5000, -1).unwrap();
    let n = l.local_len() as usize;
    let hx = rand::<f64>(&l, 7, HOST);
    // "the caller's" device array (as MFEM, Kokkos or CuPy would hand us)
    let g = parlops::gpu::get(comm.node_rank(), None).unwrap();
    let mine = parlops::gpu::alloc_zeroed(n * 8, g.stream).unwrap();
    // SAFETY: `mine` holds n doubles of device memory (allocated above), hx's local part n
    // doubles, alive until the sync below.
    unsafe { parlops::gpu::htod(mine, hx.local().as_ptr().cast(), n * 8, g.stream).unwrap() };
    parlops::gpu::sync(g.stream).unwrap();
    // SAFETY: `mine` holds this rank's n entries in device memory and outlives `w` (freed after
    // drop(w) below).
    let mut w =
        unsafe { DistVector::<f64>::wrap(l.clone(), CUDA, mine as usize as *mut f64) }.unwrap();
    t.check(
        w.dptr() == mine || n == 0,
        "wrap: no copy (same device address)",
    );
    w.scale(2.0).unwrap();
    w.settle().unwrap();
    let mut back = vec![0.0f64; n];
    // SAFETY: `back` holds n doubles, `mine` n doubles of device memory; synced just below.
    unsafe { parlops::gpu::dtoh(back.as_mut_ptr().cast(), mine, n * 8, g.stream).unwrap() };
    parlops::gpu::sync(g.stream).unwrap();
    let ok = back.iter().zip(hx.local()).all(|(a, b)| *a == 2.0 * b);
    t.check(ok, "wrap: writes land in the caller's array");
    // a host pointer declared as device memory is refused
    let mut hostbuf = vec![0.0f64; n.max(1)];
    // SAFETY: `hostbuf` holds n entries and outlives the vector (which wrap refuses: a host
    // pointer for device memory).
    let e = unsafe { DistVector::<f64>::wrap(l.clone(), CUDA, hostbuf.as_mut_ptr()) };
    t.check(
        n == 0 || e.err().map(|e| e.kind) == Some(parlops::ErrorKind::MemoryLocation),
        "wrap: host pointer as PARLOPS_MEMORY_CUDA refused",
    );
    // SAFETY: `mine` holds n entries and is still allocated; wrap refuses it (device memory for a
    // host vector) before anything reads it.
    let e = unsafe { DistVector::<f64>::wrap(l.clone(), HOST, mine as usize as *mut f64) };
    t.check(
        n == 0 || e.err().map(|e| e.kind) == Some(parlops::ErrorKind::MemoryLocation),
        "wrap: device pointer as PARLOPS_MEMORY_HOST refused",
    );
    drop(w);
    parlops::gpu::free(mine);

    // place_array: a device vector works in the caller's device array until reset_array
    let mut v = DistVector::<f64>::new_in(l.clone(), CUDA).unwrap();
    v.fill(1.0).unwrap();
    let theirs = parlops::gpu::alloc_zeroed(n * 8, g.stream).unwrap();
    // SAFETY: `theirs` holds n doubles of device memory, hx's local part n doubles; synced below.
    unsafe { parlops::gpu::htod(theirs, hx.local().as_ptr().cast(), n * 8, g.stream).unwrap() };
    parlops::gpu::sync(g.stream).unwrap();
    // SAFETY: `theirs` holds this rank's n entries in device memory and stays allocated until
    // after reset_array below.
    unsafe { v.place_array(theirs as usize as *mut f64) }.unwrap();
    v.scale(3.0).unwrap();
    v.settle().unwrap();
    let mut back = vec![0.0f64; n];
    // SAFETY: `back` holds n doubles, `theirs` n doubles of device memory; synced just below.
    unsafe { parlops::gpu::dtoh(back.as_mut_ptr().cast(), theirs, n * 8, g.stream).unwrap() };
    parlops::gpu::sync(g.stream).unwrap();
    let ok = back.iter().zip(hx.local()).all(|(a, b)| *a == 3.0 * b);
    t.check(
        ok,
        "place_array: the work lands in the caller's device array",
    );
    v.reset_array();
    let own = v.to_location(HOST).unwrap();
    t.check(
        own.local().iter().all(|&a| a == 1.0),
        "reset_array: the vector's own device array, untouched meanwhile",
    );
    // SAFETY: `hostbuf` holds n entries and outlives `v`; place_array refuses it (host memory for
    // a device vector).
    let e = unsafe { v.place_array(hostbuf.as_mut_ptr()) };
    t.check(
        n == 0 || e.err().map(|e| e.kind) == Some(parlops::ErrorKind::MemoryLocation),
        "place_array: a host pointer for a device vector refused",
    );
    drop(v);
    parlops::gpu::free(theirs);

    // the caller's stream
    let s = cudarc::driver::result::stream::create(
        cudarc::driver::result::stream::StreamKind::NonBlocking,
    )
    .unwrap();
    let stream = parlops::gpu::Stream(s);
    let mut dx = hx.to_location(CUDA).unwrap();
    let mut dy = rand::<f64>(&l, 8, CUDA);
    dx.set_stream(Some(stream)).unwrap();
    dy.set_stream(Some(stream)).unwrap();
    t.check(
        dx.caller_stream() == Some(stream),
        "set_stream: the vector reports the caller's stream",
    );
    let mut hy = rand::<f64>(&l, 8, HOST);
    for _ in 0..3 {
        dy.axpby(0.5, &dx, -1.5).unwrap();
        hy.axpby(0.5, &hx, -1.5).unwrap();
    }
    let dd = dy.dot(&dx).unwrap();
    let hd = hy.dot(&hx).unwrap();
    t.check(
        close(dd, hd, 1e-12),
        "stream: ops ordered on the caller's stream",
    );
    let e = hy.set_stream(Some(stream)).unwrap_err();
    t.check(
        e.kind == parlops::ErrorKind::MemoryLocation,
        "set_stream on a host vector refused",
    );
    dx.set_stream(None).unwrap();
    dy.set_stream(None).unwrap();
    t.check(rel_diff(&dy, &hy) <= 1e-15, "stream: result");
}

/// Rows of an SPD matrix on an n x n grid: the 5-point Laplacian plus weak long-range couplings (so
/// that every rank has halo neighbours beyond the next one), global column indices.
fn poisson_rows(l: &Layout, n: i64, long: bool) -> (Vec<i64>, Vec<i64>, Vec<f64>) {
    let (s, len) = (l.local_start(), l.local_len());
    let nn = n * n;
    let (mut ip, mut ix, mut v) = (vec![0i64], Vec::new(), Vec::new());
    for r in s..s + len {
        let (i, j) = (r / n, r % n);
        let far = (r + nn / 2) % nn;
        let mut row = vec![];
        for (ok, c, val) in [
            (i > 0, r - n, -1.0),
            (j > 0, r - 1, -1.0),
            (true, r, 4.0 + if long { 0.2 } else { 0.0 }),
            (j < n - 1, r + 1, -1.0),
            (i < n - 1, r + n, -1.0),
        ] {
            if ok {
                row.push((c, val));
            }
        }
        if long && far != r && !row.iter().any(|e| e.0 == far) {
            row.push((far, -0.05));
        }
        // symmetric long-range part: far(r) = r + nn/2 mod nn is an involution when nn is even
        row.sort_by_key(|e| e.0);
        for (c, val) in row {
            ix.push(c);
            v.push(val);
        }
        ip.push(ix.len() as i64);
    }
    (ip, ix, v)
}

fn csr<T: Scalar>(l: &Arc<Layout>, n: i64, long: bool) -> CsrOp<T> {
    let (ip, ix, v) = poisson_rows(l, n, long);
    let s = l.local_start();
    let mut v2 = Vec::with_capacity(v.len());
    for row in 0..ip.len() - 1 {
        let r = s + row as i64;
        for k in ip[row] as usize..ip[row + 1] as usize {
            let (c, a) = (ix[k], v[k]);
            // a small imaginary part on the off-diagonal keeps complex matrices non-trivial: a
            // function of the global entry, opposite on the transpose (Hermitian, as the real
            // matrix is symmetric, and the same at any rank count)
            let f = 0.01 * (((r.min(c) + r.max(c)) % 3) as f64 - 1.0);
            let im = if c > r {
                f
            } else if c < r {
                -f
            } else {
                0.0
            };
            v2.push(T::from_parts_lossy(a, im));
        }
    }
    CsrOp::from_local_rows(l.clone(), l.clone(), &ip, &ix, &v2, Ok(())).unwrap()
}

fn operators<T: Scalar>(t: &mut Tally, comm: &Arc<Comm>) {
    let name = T::DTYPE.name();
    let n = 40i64;
    // uneven: 1000/600 at 2 ranks; at 3 or more, rank 1 is empty and the others share the rows
    let p = comm.size() as i64;
    let len = match (p, comm.rank() as i64) {
        (1, _) => n * n,
        (2, 0) => 1000,
        (2, _) => n * n - 1000,
        (_, 1) => 0,
        (_, 0) => n * n - (n * n / (p - 1)) * (p - 2),
        _ => n * n / (p - 1),
    };
    let l = Layout::new(comm.clone(), Partition::Scatter, n * n, len).unwrap();
    let a: Op<T> = Arc::new(csr::<T>(&l, n, true));
    let mut dvec = DistVector::<T>::new(l.clone()).unwrap();
    random_fill(&mut dvec, 99);
    let d: Op<T> = Arc::new(Diagonal::new(&dvec).unwrap());
    let sum: Op<T> = Arc::new(
        LinComb::new(vec![
            (T::from_parts_lossy(2.0, 1.0), a.clone()),
            (T::one(), d.clone()),
        ])
        .unwrap(),
    );
    let prod: Op<T> = Arc::new(Product::new(a.clone(), d.clone()).unwrap());
    // a host-only callback (staged through host copies when applied to device vectors)
    let hcb: Op<T> = Arc::new(
        Callback::new(
            l.clone(),
            l.clone(),
            Box::new(|x: &[T], y: &mut [T]| {
                for (a, b) in y.iter_mut().zip(x) {
                    *a = T::real(3.0) * *b;
                }
                Ok(())
            }),
            None,
            "host shell",
        )
        .unwrap(),
    );
    // a device callback: y = x, by a device-to-device copy on the device addresses it is given
    let bytes = l.local_len() as usize * std::mem::size_of::<T>();
    let g = parlops::gpu::get(comm.node_rank(), None).unwrap();
    let st = g.stream;
    let dcb: Op<T> = Arc::new(
        Callback::<T>::new_device(
            l.clone(),
            l.clone(),
            Box::new(move |x: u64, y: u64| {
                // SAFETY: parlops hands the callback device addresses of this rank's entries of
                // x and y (`bytes` bytes each, the layout's local length).
                unsafe { parlops::gpu::dtod(y, x, bytes, st)? };
                parlops::gpu::sync(st)
            }),
            None,
            "device shell",
        )
        .unwrap(),
    );
    let x = rand::<T>(&l, 3, HOST);
    let dx = x.to_location(CUDA).unwrap();
    for (oname, op, adj) in [
        ("CSR with halo", &a, true),
        ("Diagonal", &d, true),
        ("2A + D", &sum, true),
        ("A D", &prod, true),
        ("host callback (staged)", &hcb, false),
        ("device callback", &dcb, false),
    ] {
        let mut y = DistVector::<T>::new(l.clone()).unwrap();
        let mut dy = DistVector::<T>::new_in(l.clone(), CUDA).unwrap();
        let expect = if oname == "device callback" {
            x.to_location(HOST).unwrap()
        } else {
            op.apply(&x, &mut y).unwrap();
            y.to_location(HOST).unwrap()
        };
        op.apply(&dx, &mut dy).unwrap();
        let diff = rel_diff(&dy, &expect);
        t.check(
            dy.is_device() && diff <= tol::<T>(),
            &format!("{name} {oname}: device apply vs host (diff {diff:e})"),
        );
        if adj {
            let mut hz = DistVector::<T>::new(l.clone()).unwrap();
            let mut dz = DistVector::<T>::new_in(l.clone(), CUDA).unwrap();
            op.apply_adjoint(&x, &mut hz).unwrap();
            op.apply_adjoint(&dx, &mut dz).unwrap();
            let diff = rel_diff(&dz, &hz);
            t.check(
                diff <= tol::<T>(),
                &format!("{name} {oname}: device adjoint vs host (diff {diff:e})"),
            );
            // the dot test on the device
            let dyv = rand::<T>(&l, 4, CUDA);
            let mut ax = DistVector::<T>::new_in(l.clone(), CUDA).unwrap();
            let mut ahy = DistVector::<T>::new_in(l.clone(), CUDA).unwrap();
            op.apply(&dx, &mut ax).unwrap();
            op.apply_adjoint(&dyv, &mut ahy).unwrap();
            let (p, q) = (ax.dot(&dyv).unwrap(), dx.dot(&ahy).unwrap());
            let rel = (p - q).abs_f64() / p.abs_f64().max(q.abs_f64());
            t.check(
                rel <= 10.0 * tol::<T>(),
                &format!("{name} {oname}: device dot test ({rel:e})"),
            );
        }
    }
}

fn main() {
    let (comm, mut t) = start();
    let p = parlops::gpu::probe();
    if p.device_count.unwrap_or(0) == 0 {
        if comm.rank() == 0 {
            println!(
                "gpu_check skipped: no usable CUDA device in this process ({})",
                p.describe()
            );
        }
        // the device paths must still say so cleanly
        let l = Layout::new(comm.clone(), Partition::Scatter, 10, -1).unwrap();
        let e = DistVector::<f64>::new_in(l, CUDA).err().map(|e| e.kind);
        t.check(
            e == Some(parlops::ErrorKind::NoDevice),
            "no device: PARLOPS_MEMORY_CUDA gives NoDevice",
        );
        finish("gpu_check", comm, t);
    }
    let args: Vec<String> = std::env::args().collect();
    let bench_mode = args.iter().any(|a| a == "--bench");
    if comm.rank() == 0 {
        print!("{}", parlops::report::report(&comm).unwrap());
    } else {
        parlops::report::report(&comm).unwrap();
    }
    // PARLOPS_DEVICE picks the device (tools/gpu_tests.sh runs with 1, and with 9, which no node has)
    let chosen = std::env::var("PARLOPS_DEVICE").ok();
    let g = match parlops::gpu::get(comm.node_rank(), None) {
        Ok(g) => g,
        Err(e) => {
            t.check(
                chosen.is_some()
                    && e.kind == parlops::ErrorKind::NoDevice
                    && e.msg.contains("PARLOPS_DEVICE"),
                &format!("no device for this rank, named with its reason: {}", e.msg),
            );
            finish("gpu_check", comm, t);
        }
    };
    if let Some(v) = &chosen {
        t.check(
            v.trim().parse::<i32>() == Ok(g.ordinal) && g.why.contains("PARLOPS_DEVICE"),
            &format!(
                "PARLOPS_DEVICE={v}: the process uses device {} ({})",
                g.ordinal, g.why
            ),
        );
    }
    println!("gpu_check: rank {} uses {}", comm.rank(), g.describe());
    // one device per process: pinning another one later is refused, naming both
    let other = (g.ordinal + 1) % p.device_count.unwrap_or(1).max(1);
    if other != g.ordinal {
        let e = parlops::gpu::get(comm.node_rank(), Some(other)).err();
        t.check(
            e.as_ref()
                .is_some_and(|e| e.kind == parlops::ErrorKind::InvalidArgument),
            &format!("a second device pinned in one process is refused ({e:?})"),
        );
    }
    // the C layer's pointer checks: a device buffer is device-only memory, host memory is not
    let dbuf = DistVector::<f64>::new_in(
        Layout::new(comm.clone(), Partition::Scatter, 4 * comm.size() as i64, 4).unwrap(),
        CUDA,
    )
    .unwrap();
    let hbuf = [0.0f64; 4];
    let dp = dbuf.dptr() as usize as *const std::ffi::c_void;
    let hp = hbuf.as_ptr().cast::<std::ffi::c_void>();
    t.check(
        parlops::exec::is_device_only_pointer(dp)
            && parlops::exec::is_device_pointer(dp)
            && !parlops::exec::is_device_only_pointer(hp)
            && !parlops::exec::is_device_pointer(hp)
            && !parlops::exec::is_device_only_pointer(std::ptr::null()),
        "pointer checks: device memory is device memory, host memory and NULL are not",
    );
    // the kernels of every dtype, up front: a compile or load problem is reported, not a panic
    let k = [
        g.kernels::<f32>().map(|_| ()),
        g.kernels::<f64>().map(|_| ()),
        g.kernels::<c32>().map(|_| ()),
        g.kernels::<c64>().map(|_| ()),
    ];
    let bad: Vec<String> = k
        .iter()
        .filter_map(|r| r.as_ref().err().map(|e| e.msg.clone()))
        .collect();
    t.check(
        bad.is_empty(),
        &format!("device kernels compile and load: {bad:?}"),
    );
    if !bad.is_empty() {
        finish("gpu_check", comm, t);
    }
    if bench_mode {
        let sizes: Vec<i64> = args
            .iter()
            .skip_while(|a| *a != "--bench")
            .skip(1)
            .filter_map(|a| a.parse().ok())
            .collect();
        let sizes = if sizes.is_empty() {
            vec![1000, 7072]
        } else {
            sizes
        };
        if comm.rank() == 0 {
            println!(
                "| what | dtype | unknowns | host its / copy | device its / SpMV | diff / CG | host time | device time |"
            );
            println!("|---|---|---|---|---|---|---|---|");
        }
        solvers::solvers::<f64>(&mut t, &comm, sizes[0], true);
        solvers::solvers::<f32>(&mut t, &comm, sizes[0], true);
        for &n in &sizes {
            bench::bench::<f64>(&mut t, &comm, n);
            bench::bench::<f32>(&mut t, &comm, n);
        }
        finish("gpu_check --bench", comm, t);
    }
    // GPU_CHECK_PARTS (a comma list) runs some parts only: tools/gpu_tests.sh's CUDA-aware run
    // repeats the parts that move data between ranks
    let parts = std::env::var("GPU_CHECK_PARTS").unwrap_or_default();
    let run = |p: &str| parts.is_empty() || parts.split(',').any(|q| q == p);
    let timed_part = |t: &mut Tally, name: &str, f: &dyn Fn(&mut Tally)| {
        if run(name) {
            let t0 = Instant::now();
            f(t);
            if comm.rank() == 0 {
                println!(
                    "gpu_check: part {name}: {:.1} s",
                    t0.elapsed().as_secs_f64()
                );
            }
        }
    };
    timed_part(&mut t, "vectors", &|t| {
        vectors::<f32>(t, &comm);
        vectors::<f64>(t, &comm);
        vectors::<c32>(t, &comm);
        vectors::<c64>(t, &comm);
        wrap_and_stream(t, &comm);
    });
    timed_part(&mut t, "operators", &|t| {
        operators::<f32>(t, &comm);
        operators::<f64>(t, &comm);
        operators::<c32>(t, &comm);
        operators::<c64>(t, &comm);
        shapes::shapes::<f32>(t, &comm);
        shapes::shapes::<f64>(t, &comm);
        shapes::shapes::<c32>(t, &comm);
        shapes::shapes::<c64>(t, &comm);
    });
    timed_part(&mut t, "solvers-f64", &|t| {
        if !run("solvers") {
            solvers::solvers::<f64>(t, &comm, 48, false);
        }
    });
    // 48x48 grids: 2,304 rows, 576 a rank at 4 ranks (two full blocks of 256 threads and a partial
    // one); the stand-in runs every kernel thread as a fiber, so a solve's cost grows as the rows times
    // the iterations (f64 on 64x64 took 20 of the part's 34 s at 1 rank, GMRES(30) 672 iterations)
    timed_part(&mut t, "solvers", &|t| {
        solvers::solvers::<f64>(t, &comm, 48, false);
        solvers::solvers::<f32>(t, &comm, 48, false);
        solvers::solvers::<c32>(t, &comm, 48, false);
        solvers::solvers::<c64>(t, &comm, 48, false);
    });
    // the reproducible mode on device vectors: 12 x 12 grids (every kernel thread is a fiber under
    // the stand-in), the double-precision types
    timed_part(&mut t, "reproducible", &|t| {
        let own = Arc::new(Comm::self_comm().unwrap());
        reproducible::device::<f64>(&comm, &own, t, 12);
        reproducible::device::<c64>(&comm, &own, t, 12);
    });
    timed_part(&mut t, "catalogue", &|t| catalogue::catalogue(t, &comm));
    timed_part(&mut t, "nested", &|t| nested::nested(t, &comm));
    timed_part(&mut t, "nccl", &|t| nccl::nccl(t, &comm));
    finish("gpu_check", comm, t);
}
