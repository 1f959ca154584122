//! Shared by the multi-rank test programs (harness = false, run under mpiexec).
#![allow(dead_code)]
#![allow(clippy::needless_range_loop)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use parlops::Scalar;
use parlops::comm::{Comm, ReduceOp};
use parlops::op::LinearOperator;
use parlops::vector::{DistVector, Layout, Partition};

/// The per-case watchdog: the case being run, the last check that finished, and when the last
/// progress was made. A case that makes no progress for PARLOPS_TEST_CASE_TIMEOUT seconds
/// (default 120) is a hang: the rank prints the case and exits, and mpiexec ends the others.
static CASE: Mutex<(String, String)> = Mutex::new((String::new(), String::new()));
static PROGRESS_MS: AtomicU64 = AtomicU64::new(0);

fn epoch() -> Instant {
    static E: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *E.get_or_init(Instant::now)
}

fn progress() {
    PROGRESS_MS.store(epoch().elapsed().as_millis() as u64, Ordering::Relaxed);
}

/// Name the case that starts now (the watchdog reports it if it hangs).
pub fn case(name: &str) {
    if let Ok(mut c) = CASE.lock() {
        c.0 = name.to_string();
    }
    progress();
}

fn start_watchdog(rank: i32) {
    let limit = std::env::var("PARLOPS_TEST_CASE_TIMEOUT")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .map_or(120_000, |s| (s * 1000.0) as u64);
    progress();
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_millis((limit / 4).clamp(1, 500)));
            let idle = epoch().elapsed().as_millis() as u64 - PROGRESS_MS.load(Ordering::Relaxed);
            if idle > limit {
                let (case, last) = CASE.lock().map(|c| c.clone()).unwrap_or_default();
                eprintln!(
                    "rank {rank}: TIMEOUT (hang): no progress for {} s in case '{case}' \
                     (last finished check: '{last}')",
                    limit as f64 / 1000.0
                );
                // SAFETY: _exit has no preconditions; it ends the process at once, without the
                // destructors and atexit handlers (MPI's among them) that must not run from this
                // watchdog thread while the main thread hangs.
                unsafe { libc::_exit(3) };
            }
        }
    });
}

/// Counts checks on this rank; failures are printed with the rank.
pub struct Tally {
    pub rank: i32,
    pub passed: usize,
    pub failed: usize,
}

impl Tally {
    pub fn check(&mut self, ok: bool, what: &str) {
        if let Ok(mut c) = CASE.lock() {
            c.1 = what.to_string();
        }
        progress();
        if ok {
            self.passed += 1;
            if self.rank == 0 && std::env::var_os("PARLOPS_TEST_SHOW").is_some() {
                eprintln!("passed: {what}");
            }
        } else {
            self.failed += 1;
            eprintln!("rank {}: FAILED: {what}", self.rank);
        }
    }
}

/// Start MPI, duplicate MPI_COMM_WORLD, and check that the launcher gave the rank count asked for
/// in PARLOPS_TEST_EXPECT_RANKS (a binary started by another MPI's mpiexec runs as N one-rank jobs).
pub fn start() -> (Arc<Comm>, Tally) {
    // SAFETY: null argc/argv, which init's contract allows (MPI_Init_thread takes NULL).
    unsafe { parlops::comm::init(std::ptr::null_mut(), std::ptr::null_mut()).unwrap() };
    let comm = Arc::new(Comm::world().unwrap());
    let p = comm.size();
    if let Ok(want) = std::env::var("PARLOPS_TEST_EXPECT_RANKS") {
        assert_eq!(
            want.parse::<i32>().unwrap(),
            p,
            "launched with the wrong MPI: expected {want} ranks, got {p}"
        );
    }
    start_watchdog(comm.rank());
    let t = Tally {
        rank: comm.rank(),
        passed: 0,
        failed: 0,
    };
    (comm, t)
}

/// Print `name on P rank(s): N passed, M failed` on rank 0, finalise MPI and exit with the verdict.
pub fn finish(name: &str, comm: Arc<Comm>, t: Tally) -> ! {
    case("finish (the closing reduction and MPI_Finalize)");
    let tot = comm
        .allreduce_f64(&[t.passed as f64, t.failed as f64], ReduceOp::Sum)
        .unwrap();
    if comm.rank() == 0 {
        println!(
            "{name} on {} rank(s): {} passed, {} failed",
            comm.size(),
            tot[0],
            tot[1]
        );
    }
    let failed = tot[1] > 0.0;
    drop(comm);
    parlops::comm::finalize().unwrap();
    std::process::exit(if failed { 1 } else { 0 })
}

/// Global dense matrix of an operator (via unit vectors).
pub fn dense<T: Scalar>(op: &dyn LinearOperator<T>) -> Vec<Vec<T>> {
    let (m, n) = (
        op.rows().global_len() as usize,
        op.cols().global_len() as usize,
    );
    let mut a = vec![vec![T::zero(); n]; m];
    let mut x = DistVector::<T>::new(op.cols().clone()).unwrap();
    let mut y = DistVector::<T>::new(op.rows().clone()).unwrap();
    let mut col = vec![T::zero(); m];
    for j in 0..n {
        x.fill(T::zero()).unwrap();
        let s = op.cols().local_start() as usize;
        if j >= s && j < s + x.local().len() {
            x.local_mut()[j - s] = T::one();
        }
        op.apply(&x, &mut y).unwrap();
        y.gather(-1, Some(&mut col), Ok(())).unwrap();
        for i in 0..m {
            a[i][j] = col[i];
        }
    }
    a
}

/// Solve the square system by Gaussian elimination with partial pivoting (in the type's precision
/// promoted through f64 parts).
pub fn gauss<T: Scalar>(mut a: Vec<Vec<T>>, mut b: Vec<T>) -> Vec<T> {
    let n = b.len();
    for k in 0..n {
        let piv = (k..n)
            .max_by(|&i, &j| a[i][k].abs_f64().partial_cmp(&a[j][k].abs_f64()).unwrap())
            .unwrap();
        a.swap(k, piv);
        b.swap(k, piv);
        for i in k + 1..n {
            let f = a[i][k] / a[k][k];
            for j in k..n {
                let v = a[k][j];
                a[i][j] = a[i][j] - f * v;
            }
            let bk = b[k];
            b[i] = b[i] - f * bk;
        }
    }
    let mut x = vec![T::zero(); n];
    for i in (0..n).rev() {
        let mut s = b[i];
        for j in i + 1..n {
            s = s - a[i][j] * x[j];
        }
        x[i] = s / a[i][i];
    }
    x
}

pub fn gathered<T: Scalar>(v: &DistVector<T>) -> Vec<T> {
    let mut out = vec![T::zero(); v.layout().global_len() as usize];
    v.gather(-1, Some(&mut out), Ok(())).unwrap();
    out
}

/// `n` entries split unevenly over the ranks of `comm`: rank 0 takes rank 1's share at 3 ranks and
/// more (so rank 1 holds nothing).
pub fn uneven(comm: &Arc<Comm>, n: i64) -> Arc<Layout> {
    let p = comm.size() as usize;
    let mut lens = parlops::vector::scatter_lens(n, p);
    if p > 2 {
        lens[0] += lens[1];
        lens[1] = 0;
    }
    Layout::new(
        comm.clone(),
        Partition::Scatter,
        -1,
        lens[comm.rank() as usize],
    )
    .unwrap()
}

/// The last rank that holds entries of `l`, the same on every rank (-1 when none does). [collective]
pub fn last_holder(comm: &Arc<Comm>, l: &Layout) -> i32 {
    let me = if l.local_len() > 0 {
        comm.rank() as f64
    } else {
        -1.0
    };
    comm.allreduce_f64(&[me], parlops::comm::ReduceOp::Max)
        .unwrap()[0] as i32
}
