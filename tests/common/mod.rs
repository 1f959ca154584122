//! Shared by the multi-rank test programs (harness = false, run under mpiexec).
#![allow(dead_code)]

use std::sync::Arc;

use parlops::comm::{Comm, ReduceOp};

/// Counts checks on this rank; failures are printed with the rank.
pub struct Tally {
    pub rank: i32,
    pub passed: usize,
    pub failed: usize,
}

impl Tally {
    pub fn check(&mut self, ok: bool, what: &str) {
        if ok {
            self.passed += 1;
        } else {
            self.failed += 1;
            eprintln!("rank {}: FAILED: {what}", self.rank);
        }
    }
}

/// Start MPI, duplicate MPI_COMM_WORLD, and check that the launcher gave the rank count asked for
/// in PARLOPS_TEST_EXPECT_RANKS (a binary started by another MPI's mpiexec runs as N one-rank jobs).
pub fn start() -> (Arc<Comm>, Tally) {
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
    let t = Tally {
        rank: comm.rank(),
        passed: 0,
        failed: 0,
    };
    (comm, t)
}

/// Print `name on P rank(s): N passed, M failed` on rank 0, finalise MPI and exit with the verdict.
pub fn finish(name: &str, comm: Arc<Comm>, t: Tally) -> ! {
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
