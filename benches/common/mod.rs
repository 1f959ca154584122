//! What the Rust benchmarks share: MPI start-up, the command line, the 2D 5-point Laplacian.

use std::sync::Arc;

use parlops::comm::Comm;
use parlops::vector::{Layout, Partition};

/// MPI initialised (for the whole run), the world communicator, and the arguments that are not
/// cargo's `--` flags.
pub fn start() -> (Arc<Comm>, Vec<String>) {
    // SAFETY: null argc/argv, which init's contract allows (MPI_Init_thread takes NULL).
    unsafe { parlops::comm::init(std::ptr::null_mut(), std::ptr::null_mut()).unwrap() };
    let comm = Arc::new(Comm::world().unwrap());
    let args = std::env::args().filter(|a| !a.starts_with("--")).collect();
    (comm, args)
}

/// Argument `i` parsed, or `default` where it is absent or not a number.
pub fn arg<T: std::str::FromStr>(args: &[String], i: usize, default: T) -> T {
    args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// The slowest rank's time of `f`, in seconds (not every bench uses it).
#[allow(dead_code)]
pub fn timed(comm: &Comm, mut f: impl FnMut()) -> f64 {
    comm.barrier().unwrap();
    let t = std::time::Instant::now();
    f();
    let dt = t.elapsed().as_secs_f64();
    comm.allreduce_f64(&[dt], parlops::comm::ReduceOp::Max)
        .unwrap()[0]
}

/// The middle value (the upper one of an even count).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// This rank's rows of the 2D 5-point Laplacian on an n x n grid (4 on the diagonal, -1 to each
/// neighbour inside the grid), split evenly: (layout, row pointers, global columns, values).
pub fn laplacian_2d(comm: &Arc<Comm>, n: i64) -> (Arc<Layout>, Vec<i64>, Vec<i64>, Vec<f64>) {
    let l = Layout::new(comm.clone(), Partition::Scatter, n * n, -1).unwrap();
    let (s, len) = (l.local_start(), l.local_len());
    let (mut ip, mut ix, mut v) = (vec![0i64], Vec::new(), Vec::new());
    for r in s..s + len {
        let (i, j) = (r / n, r % n);
        for (ok, c, val) in [
            (i > 0, r - n, -1.0),
            (j > 0, r - 1, -1.0),
            (true, r, 4.0),
            (j < n - 1, r + 1, -1.0),
            (i < n - 1, r + n, -1.0),
        ] {
            if ok {
                ix.push(c);
                v.push(val);
            }
        }
        ip.push(ix.len() as i64);
    }
    (l, ip, ix, v)
}
