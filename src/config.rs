//! Environment settings (read once), build facts, and the configuration report: what was read and
//! found, not what was hoped for.

use std::sync::OnceLock;

use bitflags::bitflags;

use crate::comm::{Comm, mpi_library_version, mpi_standard_version};
use crate::error::Result;
use crate::memory::cuda;

/// The `PARLOPS_*` variables this version understands, with what each does.
pub const KNOWN_ENV: &[(&str, &str)] = &[
    (
        "PARLOPS_DEVICE",
        "CUDA device for this rank (default: node-local rank)",
    ),
    (
        "PARLOPS_CUDA_AWARE_MPI",
        "0 forbids passing device buffers to MPI; 1 passes them even when the MPI does not say it is CUDA-aware",
    ),
    ("PARLOPS_NCCL", "0 forbids NCCL for device data"),
    (
        "PARLOPS_MONITOR",
        "1 prints one line per solver iteration on rank 0",
    ),
];

/// The process environment as parlops read it (once, at first use).
#[derive(Clone, Debug)]
pub struct Env {
    /// (name, value) of known variables that were set.
    pub set: Vec<(String, String)>,
    /// Names of `PARLOPS_*` variables that this version does not know (ignored).
    pub unknown: Vec<String>,
}

impl Env {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.set
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

pub fn env() -> &'static Env {
    static E: OnceLock<Env> = OnceLock::new();
    E.get_or_init(|| {
        let mut set = Vec::new();
        let mut unknown = Vec::new();
        let mut vars: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
            .filter(|(k, _)| k.starts_with("PARLOPS_"))
            .collect();
        vars.sort();
        for (k, v) in vars {
            if KNOWN_ENV.iter().any(|(n, _)| *n == k) {
                set.push((k, v));
            } else {
                unknown.push(k);
            }
        }
        Env { set, unknown }
    })
}

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
    let p = cuda::probe();
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

pub fn version() -> (i32, i32, i32) {
    let p = |s: &str| s.parse().unwrap_or(0);
    (
        p(env!("CARGO_PKG_VERSION_MAJOR")),
        p(env!("CARGO_PKG_VERSION_MINOR")),
        p(env!("CARGO_PKG_VERSION_PATCH")),
    )
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// The process-wide part of the report (no communication).
pub fn process_report() -> String {
    let (a, b) = mpi_standard_version();
    let lib = mpi_library_version();
    let lib_first = lib.lines().next().unwrap_or("unknown").trim().to_string();
    let p = cuda::probe();
    let caps = capabilities();
    let e = env();
    let mut s = String::new();
    s += &format!("parlops {}\n", env!("CARGO_PKG_VERSION"));
    s += &format!("  MPI library: {lib_first} (MPI standard {a}.{b})\n");
    s += &format!(
        "  CUDA: compiled in: {} (cudarc, dynamic loading); at run time: {}\n",
        yes(caps.contains(Capabilities::CUDA_COMPILED)),
        p.describe()
    );
    s += &format!(
        "  cuBLAS found at run time: {}; NCCL compiled in: {}, found at run time: {}\n",
        yes(p.cublas_loaded),
        yes(caps.contains(Capabilities::NCCL_COMPILED)),
        yes(p.nccl_loaded)
    );
    s += &format!(
        "  CUDA-aware MPI: {}\n",
        match mpi_cuda_aware() {
            Some(true) => "yes (MPIX_Query_cuda_support() = 1)",
            Some(false) => "no (MPIX_Query_cuda_support() = 0)",
            None => "unknown (this MPI has no MPIX_Query_cuda_support)",
        }
    );
    let nvrtc = std::panic::catch_unwind(|| unsafe { cudarc::nvrtc::sys::is_culib_present() })
        .unwrap_or(false);
    s += &format!(
        "  device vectors: supported; kernels compiled at first use by NVRTC (libnvrtc found: {})\n",
        yes(nvrtc)
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

/// What the MPI library says about CUDA-aware transfers: Open MPI's `MPIX_Query_cuda_support()` when the
/// library has it (looked up at run time, so any MPI links), `None` when it does not say.
pub fn mpi_cuda_aware() -> Option<bool> {
    // SAFETY: dlsym on the global namespace; the symbol, when present, is `int f(void)`.
    unsafe {
        let name = c"MPIX_Query_cuda_support";
        let f = libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr());
        if f.is_null() {
            return None;
        }
        let f: extern "C" fn() -> libc::c_int = std::mem::transmute(f);
        Some(f() != 0)
    }
}

/// The CUDA device this rank would use: PARLOPS_DEVICE when set (must be a non-negative integer),
/// else the node-local rank modulo the device count; with the reason, or why there is none.
pub fn device_choice(node_rank: i32) -> (Option<i32>, String) {
    let p = cuda::probe();
    let n = p.device_count.unwrap_or(0);
    if n == 0 {
        return (None, format!("none ({})", p.describe()));
    }
    match env().get("PARLOPS_DEVICE") {
        Some(v) => match v.trim().parse::<i32>() {
            Ok(d) if d >= 0 && d < n => (Some(d), format!("{d} of {n} (PARLOPS_DEVICE)")),
            _ => (
                None,
                format!(
                    "none: PARLOPS_DEVICE={v} is not a device index 0..{}",
                    n - 1
                ),
            ),
        },
        None => {
            let d = node_rank % n;
            (Some(d), format!("{d} of {n} (node-local rank {node_rank})"))
        }
    }
}

/// The full report: process facts, then one line per rank (host, node-local rank, device). [collective]
pub fn report(comm: &Comm) -> Result<String> {
    let device = match crate::gpu::current() {
        Some(g) => format!("{} (in use)", g.describe()),
        None => device_choice(comm.node_rank()).1,
    };
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
