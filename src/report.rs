//! The configuration report: what was read and found, not what was hoped for. Process facts (MPI
//! library, CUDA and NCCL found at run time, the environment as read) and, over a communicator, one
//! line per rank. Used by the C layer (`parlops_config_report`).

use bitflags::bitflags;

use crate::comm::{Comm, mpi_library_version, mpi_standard_version};
use crate::config::env;
use crate::error::Result;
use crate::gpu::probe;

bitflags! {
    /// What this build and this process can do, as checked at run time.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Capabilities: u32 {
        const CUDA_COMPILED = 1;
        const CUDA_DRIVER_FOUND = 1 << 1;
        const CUDA_DEVICE_FOUND = 1 << 2;
        const CUBLAS_FOUND = 1 << 3;
        const NCCL_COMPILED = 1 << 4;
        const NCCL_FOUND = 1 << 5;
    }
}

/// Capabilities of this process (CUDA support is compiled in through cudarc's dynamic loading).
pub fn capabilities() -> Capabilities {
    let p = probe();
    let mut c = Capabilities::CUDA_COMPILED | Capabilities::NCCL_COMPILED;
    c.set(Capabilities::CUDA_DRIVER_FOUND, p.driver_loaded);
    c.set(
        Capabilities::CUDA_DEVICE_FOUND,
        p.device_count.unwrap_or(0) > 0,
    );
    c.set(Capabilities::CUBLAS_FOUND, p.cublas_loaded);
    c.set(Capabilities::NCCL_FOUND, p.nccl_loaded);
    c
}

/// The process-wide part of the report (no communication).
pub fn process_report() -> String {
    let (a, b) = mpi_standard_version();
    let lib = mpi_library_version();
    let lib_first = lib.lines().next().unwrap_or("unknown").trim().to_string();
    let caps = capabilities();
    let e = env();
    let mut s = String::new();
    s += &format!("parlops {}\n", env!("CARGO_PKG_VERSION"));
    s += &format!("  MPI library: {lib_first} (MPI standard {a}.{b})\n");
    s += &crate::exec::driver_report(caps.contains(Capabilities::NCCL_COMPILED));
    s += &format!(
        "  hypre (BoomerAMG, loaded at run time): {}\n",
        crate::hypre::describe()
    );
    s += "  environment:";
    if e.set.is_empty() && e.unknown.is_empty() {
        s += " no PARLOPS_* variable set (defaults in use)\n";
    } else {
        s += "\n";
        for (k, v) in &e.set {
            s += &format!("    {k}={v} (read)\n");
        }
        for k in &e.unknown {
            s += &format!("    {k} is not a parlops setting: ignored\n");
        }
    }
    s
}

/// The full report: process facts, then one line per rank (host, node-local rank, device). [collective]
pub fn report(comm: &Comm) -> Result<String> {
    let device = crate::exec::device_line(comm.node_rank());
    let line = format!(
        "  rank {} of {}: host {}, node-local rank {} of {}, device: {device}\n",
        comm.rank(),
        comm.size(),
        comm.host(),
        comm.node_rank(),
        comm.node_size()
    );
    let lines = comm.allgather_bytes(line.as_bytes())?;
    let mut s = process_report();
    s += &format!(
        "  communicator: {} rank(s), MPI (private duplicate){}; device data moves by {}\n",
        comm.size(),
        if comm.nccl().is_some() { " + NCCL" } else { "" },
        comm.transport().1
    );
    for l in lines {
        s += &String::from_utf8_lossy(&l);
    }
    Ok(s)
}
