//! The multi-rank Rust test programs (tests/mpi_*.rs) in one optimised binary, so that the library's
//! generic code they share (vectors, operators and solvers in four dtypes) is compiled once rather
//! than once a program: `mpiexec -n P target/release/deps/mpi_suite-* NAME`, NAME one of
//! [`SUITES`] (tests/run_mpi_tests.sh runs each at 1-4 ranks). Each suite keeps its own process, MPI
//! start and `N passed, M failed` line, as when they were separate programs.

mod common;
#[path = "mpi_blocks.rs"]
mod mpi_blocks;
#[path = "mpi_models.rs"]
mod mpi_models;
#[path = "mpi_operators.rs"]
mod mpi_operators;
#[path = "mpi_precond.rs"]
mod mpi_precond;
#[path = "mpi_reduce.rs"]
mod mpi_reduce;
#[path = "mpi_reproducible.rs"]
mod mpi_reproducible;
#[path = "mpi_solvers.rs"]
mod mpi_solvers;
#[path = "mpi_vectors.rs"]
mod mpi_vectors;

/// The suites, in the order tests/run_mpi_tests.sh runs them.
const SUITES: [(&str, fn()); 8] = [
    ("mpi_vectors", mpi_vectors::main),
    ("mpi_operators", mpi_operators::main),
    ("mpi_solvers", mpi_solvers::main),
    ("mpi_precond", mpi_precond::main),
    ("mpi_blocks", mpi_blocks::main),
    ("mpi_models", mpi_models::main),
    ("mpi_reproducible", mpi_reproducible::main),
    ("mpi_reduce", mpi_reduce::main),
];

fn main() {
    let names: Vec<&str> = SUITES.iter().map(|s| s.0).collect();
    match std::env::args().nth(1) {
        Some(a) if a == "--list" => println!("{}", names.join(" ")),
        Some(a) => match SUITES.iter().find(|s| s.0 == a) {
            Some(s) => (s.1)(),
            None => {
                eprintln!("mpi_suite: no suite {a:?}; the suites: {}", names.join(" "));
                std::process::exit(2);
            }
        },
        None => {
            eprintln!(
                "usage: mpiexec -n P mpi_suite NAME (tests/run_mpi_tests.sh runs them all); NAME: {}",
                names.join(" ")
            );
            std::process::exit(2);
        }
    }
}
