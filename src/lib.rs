//! parlops: distributed linear operators and Krylov solvers over MPI, exported over a stable C ABI.
//!
//! Module map: a module imports only modules below it in this list (`tools/module_graph.sh --check`,
//! part of `make lint`, fails on an import circle; docs/architecture.md has the rules and recipes):
//! - [`capi`]: the `extern "C"` surface only (null checks, handle casts, status codes, panic boundary).
//! - [`report`]: the configuration report (process facts, and one line per rank over a communicator).
//! - [`solver`], [`op`]: Krylov solvers and distributed linear operators.
//! - [`vector`]: [`vector::Layout`] (how indices split over ranks) and [`vector::DistVector`].
//! - [`comm`]: [`comm::Comm`], a private duplicate of the caller's `MPI_Comm`, its collectives, and
//!   every transport: point-to-point, the halo plans (host and device), NCCL.
//! - [`memory`]: where data lives ([`memory::Location`]).
//! - [`gpu`]: the CUDA device (probe, device choice, buffers, streams, kernels).
//! - [`config`]: the environment (`PARLOPS_*` variables) and the version; imports nothing.
//! - [`scalar`], [`error`], `codes`: element types, the one error type, and the one-table-per-enum
//!   macro (`code_table!`) that gives every enumeration its codes, C names and words.

pub mod binned;
pub mod capi;
mod codes;
pub mod comm;
pub mod config;
pub mod eigen;
pub mod error;
pub mod exec;
pub mod gpu;
pub mod hypre;
pub mod memory;
pub mod op;
pub mod report;
pub mod scalar;
pub mod solver;
pub mod timing;
pub mod vector;

pub use error::{Error, ErrorKind, Result};
pub use scalar::{DType, Scalar, c32, c64};
