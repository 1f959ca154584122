//! The C ABI. Only translation lives here: null checks, handle casts, integer-to-enum validation,
//! status codes and the panic boundary. Every function is documented in `include/parlops.h`.
#![allow(non_camel_case_types)]
#![allow(clippy::missing_safety_doc)]

mod args;
mod comm;
mod eigen;
mod eigen_ks;
mod groups;
mod handles;
mod hypre_aux;
mod hypre_opts;
mod last_error;
mod layout;
mod misc;
mod op;
mod options;
#[cfg(test)]
mod pins;
mod prox;
mod prox_solve;
mod solver;
mod solver_exec;
mod solver_opts;
mod stack;
mod types;
mod vec;
mod vec_ops;

pub use comm::*;
pub use eigen::*;
pub use eigen_ks::*;
pub use groups::*;
pub use handles::{parlops_comm, parlops_layout, parlops_op, parlops_vec};
pub use hypre_aux::*;
pub use hypre_opts::*;
pub use layout::*;
pub use misc::*;
pub use op::*;
pub use prox::*;
pub use prox_solve::*;
pub use solver::*;
pub use solver_exec::*;
pub use solver_opts::*;
pub use stack::*;
pub use types::*;
pub use vec::*;
pub use vec_ops::*;
