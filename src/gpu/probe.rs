//! CUDA probe and the device choice, and what the driver says a pointer is ([`pointer_kind`]).
//! cudarc (dynamic loading) panics when a library is missing, so every entry here checks that the
//! library loads first and runs the driver calls inside `catch_unwind` (or after a device is set
//! up).

use std::ffi::c_void;
use std::sync::OnceLock;

use cudarc::driver::sys;

use super::current;

/// What the CUDA and NCCL libraries of this process really are, read once.
#[derive(Clone, Debug)]
pub struct Probe {
    /// libcuda could be loaded.
    pub driver_loaded: bool,
    /// cuInit result, when the driver loaded.
    pub init_error: Option<String>,
    /// Number of devices, when cuInit succeeded.
    pub device_count: Option<i32>,
    /// Driver API version (e.g. 12080), when known.
    pub driver_version: Option<i32>,
    pub cublas_loaded: bool,
    pub nccl_loaded: bool,
}

impl Probe {
    pub fn describe(&self) -> String {
        if !self.driver_loaded {
            return "CUDA driver library libcuda.so could not be loaded".into();
        }
        if let Some(e) = &self.init_error {
            return format!("libcuda.so loaded but cuInit failed: {e}");
        }
        let v = self.driver_version.unwrap_or(0);
        format!(
            "CUDA driver {}.{} with {} device(s)",
            v / 1000,
            (v % 1000) / 10,
            self.device_count.unwrap_or(0)
        )
    }
}

/// Probe once per process.
pub fn probe() -> &'static Probe {
    static P: OnceLock<Probe> = OnceLock::new();
    P.get_or_init(|| {
        let quiet = |f: fn() -> bool| std::panic::catch_unwind(f).unwrap_or(false);
        // SAFETY: is_culib_present is unsafe because loading a library runs its initialisers; it
        // tries only cudarc's names of NVIDIA's libcuda, and a failure is `false` (a panic is
        // caught by `quiet`).
        let driver_loaded = quiet(|| unsafe { cudarc::driver::sys::is_culib_present() });
        // SAFETY: as above, for NVIDIA's libcublas.
        let cublas_loaded = quiet(|| unsafe { cudarc::cublas::sys::is_culib_present() });
        // SAFETY: as above, for NVIDIA's libnccl.
        let nccl_loaded = quiet(|| unsafe { cudarc::nccl::sys::is_culib_present() });
        let mut p = Probe {
            driver_loaded,
            init_error: None,
            device_count: None,
            driver_version: None,
            cublas_loaded,
            nccl_loaded,
        };
        if driver_loaded {
            let r = std::panic::catch_unwind(|| -> Result<(i32, i32), String> {
                cudarc::driver::result::init().map_err(|e| format!("{e:?}"))?;
                let n =
                    cudarc::driver::result::device::get_count().map_err(|e| format!("{e:?}"))?;
                let mut v: std::ffi::c_int = 0;
                // SAFETY: writes one int to the live local `v`; libcuda loaded (driver_loaded),
                // and a missing symbol panics into the catch_unwind around this closure.
                unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) };
                Ok((n, v))
            });
            match r {
                Ok(Ok((n, v))) => {
                    p.device_count = Some(n);
                    p.driver_version = Some(v);
                }
                Ok(Err(e)) => p.init_error = Some(e),
                Err(_) => p.init_error = Some("the CUDA driver library is missing symbols".into()),
            }
        }
        p
    })
}

/// The CUDA device this rank would use: PARLOPS_DEVICE when set (must be a non-negative integer),
/// else the node-local rank modulo the device count; with the reason, or why there is none.
pub fn device_choice(node_rank: i32) -> (Option<i32>, String) {
    let p = probe();
    let n = p.device_count.unwrap_or(0);
    if n == 0 {
        return (None, format!("none ({})", p.describe()));
    }
    match crate::config::env().get("PARLOPS_DEVICE") {
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

/// Is `p` CUDA device memory (not managed memory, which the host can read), as far as the driver
/// can tell? Asks the driver even when this process has not set up a device through parlops (hypre or
/// MFEM may have allocated it), provided a driver with devices is there; otherwise false. For the
/// checks of arrays that must be host memory.
pub fn is_device_only_pointer(p: *const c_void) -> bool {
    if p.is_null() {
        return false;
    }
    if current().is_some() {
        return matches!(
            pointer_kind(p),
            PointerKind::Device | PointerKind::OtherDevice(_)
        );
    }
    if probe().device_count.unwrap_or(0) == 0 {
        return false;
    }
    // unified addressing: the driver knows the pointer's memory type without a current context
    std::panic::catch_unwind(|| {
        let attr = |a: sys::CUpointer_attribute| -> Option<u32> {
            let mut v: u32 = 0;
            // SAFETY: `v` is a live u32 and both attributes asked here (IS_MANAGED, a boolean;
            // MEMORY_TYPE, an unsigned int) are at most 4 bytes; the driver only looks `p` up, it
            // does not dereference it. A missing symbol panics into the catch_unwind around this.
            let r = unsafe {
                sys::cuPointerGetAttribute(
                    &mut v as *mut u32 as *mut c_void,
                    a,
                    p as sys::CUdeviceptr,
                )
            };
            (r == sys::CUresult::CUDA_SUCCESS).then_some(v)
        };
        attr(sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_IS_MANAGED) != Some(1)
            && attr(sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
                == Some(sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32)
    })
    .unwrap_or(false)
}

/// Is `p` device memory (or managed memory) that this process can use? Host pointers, including
/// pinned host memory, are not.
pub fn is_device_pointer(p: *const c_void) -> bool {
    pointer_kind(p) == PointerKind::Device
}

/// What a pointer is, as the driver sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointerKind {
    /// Not known to CUDA, or pinned host memory.
    Host,
    /// Device memory of this process's device.
    Device,
    /// Device memory of another device (its ordinal).
    OtherDevice(i32),
    /// Managed (unified) memory: usable from host and device.
    Managed,
}

/// Classify `p` (the device's context is made current first).
pub fn pointer_kind(p: *const c_void) -> PointerKind {
    let Some(g) = current() else {
        return PointerKind::Host;
    };
    if g.bind().is_err() {
        return PointerKind::Host;
    }
    let attr = |a: sys::CUpointer_attribute| -> Option<u32> {
        let mut v: u32 = 0;
        // SAFETY: `v` is a live u32 and each attribute asked here (IS_MANAGED, a boolean;
        // MEMORY_TYPE, an unsigned int; DEVICE_ORDINAL, an int) is at most 4 bytes; the driver
        // only looks `p` up, it does not dereference it. The device's context is bound above.
        let r = unsafe {
            sys::cuPointerGetAttribute(&mut v as *mut u32 as *mut c_void, a, p as sys::CUdeviceptr)
        };
        (r == sys::CUresult::CUDA_SUCCESS).then_some(v)
    };
    if attr(sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_IS_MANAGED) == Some(1) {
        return PointerKind::Managed;
    }
    match attr(sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE) {
        Some(t) if t == sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32 => {
            match attr(sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL) {
                Some(d) if d as i32 != g.ordinal => PointerKind::OtherDevice(d as i32),
                _ => PointerKind::Device,
            }
        }
        _ => PointerKind::Host,
    }
}
/// The CUDA lines of the configuration report: the driver, cuBLAS, NCCL, CUDA-aware MPI, NVRTC.
pub fn report_lines(nccl_compiled: bool, cuda_aware_mpi: Option<bool>) -> String {
    fn yes(b: bool) -> &'static str {
        if b { "yes" } else { "no" }
    }
    let p = probe();
    let mut s = String::new();
    s += &format!(
        "  CUDA: compiled in: {} (cudarc, dynamic loading); at run time: {}\n",
        "yes",
        p.describe()
    );
    s += &format!(
        "  cuBLAS found at run time: {}; NCCL compiled in: {}, found at run time: {}\n",
        yes(p.cublas_loaded),
        yes(nccl_compiled),
        yes(p.nccl_loaded)
    );
    s += &format!(
        "  CUDA-aware MPI: {}\n",
        match cuda_aware_mpi {
            Some(true) => "yes (MPIX_Query_cuda_support() = 1)",
            Some(false) => "no (MPIX_Query_cuda_support() = 0)",
            None => "unknown (this MPI has no MPIX_Query_cuda_support)",
        }
    );
    // SAFETY: is_culib_present is unsafe because loading a library runs its initialisers; it tries
    // only cudarc's names of NVIDIA's libnvrtc, and a failure is `false` (a panic is caught).
    let nvrtc = std::panic::catch_unwind(|| unsafe { cudarc::nvrtc::sys::is_culib_present() })
        .unwrap_or(false);
    s += &format!(
        "  device vectors: supported; kernels compiled at first use by NVRTC (libnvrtc found: {})\n",
        yes(nvrtc)
    );
    s
}
