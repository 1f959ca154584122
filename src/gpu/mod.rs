//! CUDA device support: one device per process (the primary context of the device chosen from the
//! node-local rank, or pinned by the caller), parlops' stream, device buffers, and the kernels (CUDA C
//! in `kernels.cu`, compiled at first use for each element type with NVRTC). Everything goes through
//! cudarc's dynamically loaded driver API after [`probe::probe`] said the libraries are
//! there, so a machine without CUDA builds and runs and gets `NoDevice` errors instead of panics.

pub mod probe;
pub mod scratch;

use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::result as cu;
use cudarc::driver::sys;

use crate::error::{Error, ErrorKind, Result};
use crate::scalar::{DType, Scalar};

pub use self::probe::{
    PointerKind, Probe, device_choice, is_device_only_pointer, is_device_pointer, pointer_kind,
    probe, report_lines,
};

/// A CUDA stream handle (`cudaStream_t` and `CUstream` are the same object).
///
/// Invariant: it names a live stream of this process's device: parlops' own ([`Gpu::stream`],
/// created in `Gpu::open` and never destroyed) or one a caller handed over with
/// `parlops_vec_set_stream`, whose contract is that it outlives its use. The driver calls made
/// with it ([`sync`], copies, launches) rely on that. The field is public for the C layer and the
/// device checks; making a `Stream` from anything else is a bug.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stream(pub sys::CUstream);
// SAFETY: a CUstream is an opaque driver handle that Rust never dereferences; the driver API is
// thread-safe and accepts a stream from any thread of the process, so the handle may move.
unsafe impl Send for Stream {}
// SAFETY: as for Send: `&Stream` only copies the handle out, and it is used only through the
// (thread-safe) driver API.
unsafe impl Sync for Stream {}

/// The device this process uses.
pub struct Gpu {
    pub ordinal: i32,
    pub name: String,
    pub cc: (i32, i32),
    /// Why this device: "PARLOPS_DEVICE", "node-local rank 1", "pinned by the caller".
    pub why: String,
    ctx: sys::CUcontext,
    /// parlops' own (non-blocking) stream, used by objects without a caller stream.
    pub stream: Stream,
    kernels: Mutex<HashMap<DType, Arc<Kernels>>>,
}
// SAFETY: the raw members are driver handles (the retained primary context, parlops' stream) that
// Rust never dereferences and only passes to the thread-safe driver API; a context may be current
// on several threads at once (`bind` makes it current on the calling one). The kernel table is
// behind a Mutex; the rest is plain owned data.
unsafe impl Send for Gpu {}
// SAFETY: as for Send: `&Gpu` reads the handles and plain fields, and reaches the kernel table only
// through its Mutex.
unsafe impl Sync for Gpu {}

pub(crate) fn cuda_err(what: &str, e: impl std::fmt::Debug) -> Error {
    Error::new(ErrorKind::Cuda, format!("{what} failed: {e:?}"))
}

static GPU: OnceLock<Mutex<Option<Arc<Gpu>>>> = OnceLock::new();

/// Why no device can be used, as an error (`NoDevice`), when that is so.
pub fn require_driver() -> Result<()> {
    let p = probe();
    if p.device_count.unwrap_or(0) == 0 {
        crate::bail!(
            NoDevice,
            "PARLOPS_MEMORY_CUDA was asked for, but this process has no usable CUDA device ({})",
            p.describe()
        );
    }
    Ok(())
}

/// The process's device, set up at first use: `pin` (a caller's choice), else PARLOPS_DEVICE, else
/// the node-local rank modulo the device count. Later calls get the same device; a different pin is
/// an error (one device per process).
pub fn get(node_rank: i32, pin: Option<i32>) -> Result<Arc<Gpu>> {
    require_driver()?;
    let slot = GPU.get_or_init(|| Mutex::new(None));
    let mut g = slot.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(gpu) = &*g {
        if let Some(d) = pin
            && d != gpu.ordinal
        {
            crate::bail!(
                InvalidArgument,
                "argument 'device' is {d}, but this process already uses CUDA device {} ({}); parlops uses one device per process",
                gpu.ordinal,
                gpu.why
            );
        }
        gpu.bind()?;
        return Ok(gpu.clone());
    }
    let n = probe().device_count.unwrap_or(0);
    let (ordinal, why) = match pin {
        Some(d) if d >= 0 && d < n => (d, "pinned by the caller".to_string()),
        Some(d) => crate::bail!(
            InvalidArgument,
            "argument 'device' is {d}; this process sees {n} CUDA device(s) (0..{})",
            n - 1
        ),
        None => match device_choice(node_rank) {
            (Some(d), why) => (d, why),
            (None, why) => crate::bail!(NoDevice, "no CUDA device for this rank: {why}"),
        },
    };
    let gpu = std::panic::catch_unwind(|| Gpu::open(ordinal, why))
        .map_err(|_| crate::err!(Cuda, "the CUDA driver library is missing symbols"))??;
    let gpu = Arc::new(gpu);
    *g = Some(gpu.clone());
    Ok(gpu)
}

/// The device already in use by this process, if any (no set-up).
pub fn current() -> Option<Arc<Gpu>> {
    GPU.get()?.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

impl Gpu {
    fn open(ordinal: i32, why: String) -> Result<Gpu> {
        let dev = cu::device::get(ordinal).map_err(|e| cuda_err("cuDeviceGet", e))?;
        // SAFETY: `dev` was just returned by cuDeviceGet (cudarc's condition for retain); libcuda
        // was loaded and cuInit succeeded in probe() (`get` calls require_driver first), and a
        // missing symbol panics into the catch_unwind around `open`.
        let ctx = unsafe { cu::primary_ctx::retain(dev) }
            .map_err(|e| cuda_err("cuDevicePrimaryCtxRetain", e))?;
        // SAFETY: `ctx` is the primary context retained just above (never released: see `bind`).
        unsafe { cu::ctx::set_current(ctx) }.map_err(|e| cuda_err("cuCtxSetCurrent", e))?;
        // SAFETY: `dev` came from cuDeviceGet above; the value is written to cudarc's own local.
        let attr = |a| unsafe { cu::device::get_attribute(dev, a) };
        let major = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
            .map_err(|e| cuda_err("cuDeviceGetAttribute", e))?;
        let minor = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
            .map_err(|e| cuda_err("cuDeviceGetAttribute", e))?;
        let name = cu::device::get_name(dev).unwrap_or_else(|_| "?".into());
        let stream = cu::stream::create(cu::stream::StreamKind::NonBlocking)
            .map_err(|e| cuda_err("cuStreamCreate", e))?;
        Ok(Gpu {
            ordinal,
            name,
            cc: (major, minor),
            why,
            ctx,
            stream: Stream(stream),
            kernels: Mutex::new(HashMap::new()),
        })
    }

    /// Make this device's context current on the calling thread.
    pub fn bind(&self) -> Result<()> {
        // SAFETY: `self.ctx` is the primary context retained in `open`; nothing releases it (Gpu
        // has no Drop, and the process's Gpu stays in GPU), so it is live for the process.
        unsafe { cu::ctx::set_current(self.ctx) }.map_err(|e| cuda_err("cuCtxSetCurrent", e))
    }

    /// One line for the configuration report.
    pub fn describe(&self) -> String {
        format!(
            "CUDA device {} ({}, compute capability {}.{}; {})",
            self.ordinal, self.name, self.cc.0, self.cc.1, self.why
        )
    }

    /// The compiled kernels for `T`.
    pub fn kernels<T: Scalar>(&self) -> Result<Arc<Kernels>> {
        let mut k = self.kernels.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = k.get(&T::DTYPE) {
            return Ok(m.clone());
        }
        let arch = format!(
            "--gpu-architecture=compute_{}",
            nvrtc_arch(self.cc.0 * 10 + self.cc.1)
        );
        let ptx = compile(T::DTYPE, &arch)?;
        let m = Arc::new(Kernels::load(&ptx).map_err(|e| {
            let v = probe().driver_version.unwrap_or(0);
            crate::err!(
                Cuda,
                "{} (the kernels were compiled by NVRTC for {arch}; the driver supports CUDA {}.{}: an NVRTC newer than the driver makes PTX it cannot load)",
                e.msg,
                v / 1000,
                (v % 1000) / 10
            )
        })?);
        k.insert(T::DTYPE, m.clone());
        Ok(m)
    }
}

/// The newest virtual architecture this NVRTC supports that is not newer than the device's (`cc` as
/// 90 for 9.0); the device's own when the list cannot be read.
fn nvrtc_arch(cc: i32) -> i32 {
    let r = std::panic::catch_unwind(|| {
        use cudarc::nvrtc::sys;
        let mut n: std::ffi::c_int = 0;
        // SAFETY: writes one int to the live local `n`. A missing libnvrtc or symbol panics
        // (cudarc's dynamic loading) into the catch_unwind around this closure.
        if unsafe { sys::nvrtcGetNumSupportedArchs(&mut n) } != sys::nvrtcResult::NVRTC_SUCCESS
            || n <= 0
        {
            return None;
        }
        let mut v = vec![0 as std::ffi::c_int; n as usize];
        // SAFETY: writes the `n` architectures nvrtcGetNumSupportedArchs just counted, and `v` has
        // exactly `n` entries.
        if unsafe { sys::nvrtcGetSupportedArchs(v.as_mut_ptr()) } != sys::nvrtcResult::NVRTC_SUCCESS
        {
            return None;
        }
        v.into_iter().filter(|&a| a <= cc).max()
    });
    r.ok().flatten().unwrap_or(cc)
}

/// The kernel source.
pub const SOURCE: &str = include_str!("kernels.cu");

/// Compile [`SOURCE`] for one element type to PTX with NVRTC (no device needed).
pub fn compile(dtype: DType, arch: &str) -> Result<Vec<u8>> {
    // SAFETY: is_culib_present is unsafe because loading a library runs its initialisers; it tries
    // only cudarc's list of names of NVIDIA's libnvrtc, and a failure is `false` (a panic is caught).
    let present = std::panic::catch_unwind(|| unsafe { cudarc::nvrtc::sys::is_culib_present() })
        .unwrap_or(false);
    if !present {
        crate::bail!(
            NoDevice,
            "the NVRTC library (libnvrtc.so, part of the CUDA toolkit) could not be loaded; parlops compiles its device kernels with it at first use"
        );
    }
    let def = match dtype {
        DType::F32 => "-DPARLOPS_F32",
        DType::F64 => "-DPARLOPS_F64",
        DType::C64 => "-DPARLOPS_C64",
        DType::C128 => "-DPARLOPS_C128",
    };
    let src = CString::new(SOURCE).map_err(|_| crate::err!(Internal, "kernel source has a NUL"))?;
    let r = std::panic::catch_unwind(|| -> Result<Vec<u8>> {
        use cudarc::nvrtc::result as rtc;
        let prog = rtc::create_program(&src, Some(c"parlops_kernels.cu"))
            .map_err(|e| crate::err!(Cuda, "nvrtcCreateProgram failed: {e:?}"))?;
        let opts = [def, arch, "--fmad=false"];
        // SAFETY: `prog` was created by create_program just above and is destroyed only at the
        // end of this closure, after its last use.
        let c = unsafe { rtc::compile_program(prog, &opts) };
        let out = match c {
            // SAFETY: as above: `prog` is live.
            Ok(()) => unsafe { rtc::get_ptx(prog) }
                .map(|p| p.iter().map(|&c| c as u8).collect::<Vec<u8>>())
                .map_err(|e| crate::err!(Cuda, "nvrtcGetPTX failed: {e:?}")),
            Err(e) => {
                // SAFETY: as above: `prog` is live.
                let log = unsafe { rtc::get_program_log(prog) }
                    .map(|l| {
                        l.iter()
                            .filter(|&&c| c != 0)
                            .map(|&c| c as u8 as char)
                            .collect::<String>()
                    })
                    .unwrap_or_default();
                Err(crate::err!(
                    Cuda,
                    "NVRTC could not compile the {} kernels ({arch}): {e:?}\n{log}",
                    dtype.name()
                ))
            }
        };
        // SAFETY: `prog` is live (created above) and destroyed exactly once, here, after its last
        // use.
        let _ = unsafe { rtc::destroy_program(prog) };
        out
    });
    r.map_err(|_| crate::err!(Cuda, "the NVRTC library is missing symbols"))?
}

macro_rules! kernel_table {
    ($($f:ident),*) => {
        /// Function handles of one element type's module.
        #[allow(non_snake_case)]
        pub struct Kernels {
            _module: ModuleHandle,
            $(pub $f: Func,)*
        }
        impl Kernels {
            fn load(ptx: &[u8]) -> Result<Kernels> {
                let mut image = ptx.to_vec();
                if image.last() != Some(&0) {
                    image.push(0);
                }
                // SAFETY: `image` is the PTX text NVRTC made, NUL-terminated (ensured just above)
                // as cuModuleLoadData requires of PTX, and it outlives the call. The module goes
                // into the device's current context: callers of Gpu::kernels bind it first, and
                // without one the call fails with an error.
                let module = unsafe { cu::module::load_data(image.as_ptr() as *const c_void) }
                    .map_err(|e| cuda_err("cuModuleLoadData", e))?;
                let get = |name: &str| -> Result<Func> {
                    let c = CString::new(name).unwrap_or_default();
                    // SAFETY: `module` was loaded just above and is never unloaded (ModuleHandle
                    // has no Drop); `c` is a NUL-terminated name (a missing one is an error).
                    unsafe { cu::module::get_function(module, c) }
                        .map(Func)
                        .map_err(|e| cuda_err(&format!("cuModuleGetFunction({name})"), e))
                };
                Ok(Kernels {
                    _module: ModuleHandle(module),
                    $($f: get(stringify!($f))?,)*
                })
            }
        }
    };
}

kernel_table!(
    k_fill,
    k_scale,
    k_conj,
    k_axpy,
    k_axpby,
    k_waxpy,
    k_pmult,
    k_copy,
    k_dot,
    k_mdot4,
    k_maxpy4,
    k_norm,
    k_finish,
    k_pack_i32,
    k_unpack_add_i32,
    k_spmv_i32,
    k_spmv_h_i32,
    k_pack_i64,
    k_unpack_add_i64,
    k_spmv_i64,
    k_spmv_h_i64,
    k_spmv_ordered,
    k_cg_update,
    k_cg_residual,
    k_cg_step,
    k_catch_up,
    k_cg_sr_update,
    k_cg_pipe_update
);

pub struct ModuleHandle(#[allow(dead_code)] sys::CUmodule);
// SAFETY: an opaque driver handle that no Rust code dereferences or even uses (it is kept so the
// module belongs to its `Kernels`); nothing in it is tied to a thread.
unsafe impl Send for ModuleHandle {}
// SAFETY: as for Send: `&ModuleHandle` gives nothing to use.
unsafe impl Sync for ModuleHandle {}

#[derive(Clone, Copy)]
pub struct Func(sys::CUfunction);
// SAFETY: a function handle of a module that is never unloaded, used only by cuLaunchKernel, which
// the (thread-safe) driver accepts from any thread with the context current.
unsafe impl Send for Func {}
// SAFETY: as for Send: `&Func` only copies the handle out.
unsafe impl Sync for Func {}

pub const BLOCK: u32 = 256;
/// Blocks of reduction kernels (partials reduced by `k_finish` in one block).
pub const RED_BLOCKS: u32 = 1024;

/// Blocks for a grid-stride kernel over `n` entries.
pub fn grid(n: usize) -> u32 {
    (n.div_ceil(BLOCK as usize)).clamp(1, 65535 * 8) as u32
}

/// Launch `f` with the given argument pointers.
///
/// # Safety
/// `args` must match the kernel's parameters in number, order and size (one pointer per
/// parameter, to a value of the parameter's type: see `kernels.cu`), and every device address
/// among them must hold what the kernel reads and writes over its whole grid, until `stream` has
/// run it. `stream` must be a live stream (see [`Stream`]) and the device's context current on
/// this thread (without one the launch fails with an error). A kernel that uses `block_reduce`
/// must be launched with [`BLOCK`] threads per block, the size it assumes.
pub unsafe fn launch(
    f: Func,
    grid: u32,
    block: u32,
    stream: Stream,
    args: &mut [*mut c_void],
) -> Result<()> {
    // SAFETY: our caller's contract (`# Safety` above) covers the arguments, the memory and the
    // stream; `f` is a function of a loaded module that is never unloaded (Kernels::load). The
    // argument values are copied at the launch, so the locals they point to may end after it.
    unsafe { cu::launch_kernel(f.0, (grid, 1, 1), (block, 1, 1), 0, stream.0, args) }
        .map_err(|e| cuda_err("cuLaunchKernel", e))
}

/// `arg!(x)`: a kernel argument pointer to the local `x`.
#[macro_export]
macro_rules! karg {
    ($x:expr) => {
        (&$x) as *const _ as *mut ::std::ffi::c_void
    };
}

/// Make the process's device context current on this thread (a no-op before any device use). Every
/// helper below calls it, so device memory can be used and freed from any thread.
pub fn bind_current() -> Result<()> {
    match current() {
        Some(g) => g.bind(),
        None => Ok(()),
    }
}

/// Wait for everything queued on the device by this process, on any stream.
pub fn device_sync() -> Result<()> {
    bind_current()?;
    cu::ctx::synchronize().map_err(|e| cuda_err("cuCtxSynchronize", e))
}

/// Wait for everything queued on `s`.
pub fn sync(s: Stream) -> Result<()> {
    bind_current()?;
    // SAFETY: `s` is a live stream of this device (the invariant of `Stream`).
    unsafe { cu::stream::synchronize(s.0) }.map_err(|e| cuda_err("cuStreamSynchronize", e))
}

/// Has everything queued on `s` finished? (`cuStreamQuery`: false while work is pending; never
/// blocks.)
pub fn query(s: Stream) -> Result<bool> {
    bind_current()?;
    // SAFETY: `s` is a live stream of this device (the invariant of `Stream`); cuStreamQuery only
    // reads the stream's state.
    let r = unsafe { cudarc::driver::sys::cuStreamQuery(s.0) };
    if r == cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_READY {
        return Ok(false);
    }
    r.result()
        .map(|_| true)
        .map_err(|e| cuda_err("cuStreamQuery", e))
}

/// Device memory of `bytes` (zeroed on `s`).
pub fn alloc_zeroed(bytes: usize, s: Stream) -> Result<u64> {
    if bytes == 0 {
        return Ok(0);
    }
    bind_current()?;
    // SAFETY: cuMemAlloc needs only a current context (bound just above; with none it fails with
    // an error). The new memory is unset, which the memset below covers before anyone reads it.
    let p = unsafe { cu::malloc_sync(bytes) }.map_err(|e| {
        let (free, total) = cu::mem_get_info().unwrap_or((0, 0));
        Error::new(
            ErrorKind::OutOfMemory,
            format!(
                "cannot allocate {bytes} bytes of device memory ({free} of {total} bytes free): {e:?}"
            ),
        )
    })?;
    // SAFETY: `p` was just allocated with `bytes` bytes, and `s` is a live stream (see `Stream`).
    unsafe { cu::memset_d8_async(p, 0, bytes, s.0) }.map_err(|e| cuda_err("cuMemsetD8Async", e))?;
    Ok(p)
}

/// Free device memory from [`alloc_zeroed`], once the work queued on the device (which may still
/// use it) has finished.
///
/// Contract (not checked; the function should be `unsafe`, but tests/gpu_check.rs calls it as a
/// safe one): `p` is 0 or an address [`alloc_zeroed`] returned that has not been freed, and
/// nothing uses it afterwards. Its owners ([`DevArray`], the CUDA backend's `DevBuf`) free on drop,
/// once.
pub fn free(p: u64) {
    if p != 0 && bind_current().is_ok() {
        // work still queued on any stream finishes first: cuMemFree is documented only to "may
        // perform implicit synchronization" (in practice it does, so this costs nothing more)
        let _ = cu::ctx::synchronize();
        // SAFETY: by the contract above, `p` came from cuMemAlloc (alloc_zeroed) and is freed
        // once, here; the context it was allocated in is current (bound just above).
        let _ = unsafe { cu::free_sync(p) };
    }
}

/// Copy `n` bytes host -> device on `s` (returns when the copy is queued; `src` must stay valid
/// until `s` is synchronized).
///
/// # Safety
/// `dst` must hold `bytes` bytes of device memory and `src` `bytes` readable bytes of host memory,
/// both alive, and `src` unchanged, until `s` has run the copy.
pub unsafe fn htod(dst: u64, src: *const u8, bytes: usize, s: Stream) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    bind_current()?;
    // SAFETY: our caller's contract: `src` points to `bytes` readable bytes (bytes > 0 here, so it
    // is a real, non-null address; u8 needs no alignment).
    let src = unsafe { std::slice::from_raw_parts(src, bytes) };
    // SAFETY: `dst` holds `bytes` bytes of device memory and `src` is `bytes` long (both by the
    // contract, which also keeps `src` alive until `s` ran the copy); `s` is a live stream.
    unsafe { cu::memcpy_htod_async(dst, src, s.0) }.map_err(|e| cuda_err("cuMemcpyHtoDAsync", e))
}

/// Copy `bytes` device -> host on `s` (see [`htod`]).
///
/// # Safety
/// `src` must hold `bytes` bytes of device memory and `dst` `bytes` writable bytes of host memory,
/// both alive, and `dst` neither read nor written by anything else, until `s` has run the copy.
pub unsafe fn dtoh(dst: *mut u8, src: u64, bytes: usize, s: Stream) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    bind_current()?;
    // SAFETY: our caller's contract: `dst` points to `bytes` writable bytes that nothing else uses
    // meanwhile (bytes > 0 here, so it is a real, non-null address).
    let dst = unsafe { std::slice::from_raw_parts_mut(dst, bytes) };
    // SAFETY: `src` holds `bytes` bytes of device memory and `dst` is `bytes` long (the contract,
    // which also keeps `dst` alive and unused until `s` ran the copy); `s` is a live stream.
    unsafe { cu::memcpy_dtoh_async(dst, src, s.0) }.map_err(|e| cuda_err("cuMemcpyDtoHAsync", e))
}

/// Copy `bytes` device -> device on `s`.
///
/// # Safety
/// Both must hold `bytes` bytes of device memory, alive until `s` has run the copy.
pub unsafe fn dtod(dst: u64, src: u64, bytes: usize, s: Stream) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    bind_current()?;
    // SAFETY: both addresses hold `bytes` bytes of device memory (our caller's contract); `s` is a
    // live stream.
    unsafe { cu::memcpy_dtod_async(dst, src, bytes, s.0) }
        .map_err(|e| cuda_err("cuMemcpyDtoDAsync", e))
}

/// Pinned (page-locked) host memory for staging transfers: `bytes` zeroed bytes from
/// cuMemHostAlloc (page-aligned), or a dangling 8-aligned pointer when `bytes` is 0.
pub struct Pinned {
    ptr: *mut u8,
    bytes: usize,
}
// SAFETY: a Pinned owns its allocation alone, like a Box<[u8]>: nothing else holds the pointer
// (asynchronous copies through `ptr()` are covered by the contracts of htod/dtoh), and the driver
// frees it from any thread with the context bound.
unsafe impl Send for Pinned {}
// SAFETY: `&Pinned` only reads the bytes (`as_slice`) or hands out the address (writing through it
// needs an `unsafe` copy whose contract rules out other users); safe writes need `&mut Pinned`.
unsafe impl Sync for Pinned {}

impl Pinned {
    pub fn new(bytes: usize) -> Result<Pinned> {
        if bytes == 0 {
            return Ok(Pinned {
                ptr: std::ptr::NonNull::<u64>::dangling().as_ptr().cast(),
                bytes: 0,
            });
        }
        bind_current()?;
        // SAFETY: cuMemHostAlloc needs only a current context (bound just above; with none it
        // fails with an error); the memory it leaves unset is zeroed below.
        let p = unsafe { cu::malloc_host(bytes, 0) }.map_err(|e| {
            crate::err!(
                OutOfMemory,
                "cannot allocate {bytes} bytes of pinned host memory: {e:?}"
            )
        })?;
        // SAFETY: `p` points to the `bytes` bytes just allocated. cuMemHostAlloc leaves them unset,
        // and `as_slice` lets safe code read them as floats: zeroed, they are valid ones.
        unsafe { std::ptr::write_bytes(p.cast::<u8>(), 0, bytes) };
        Ok(Pinned {
            ptr: p.cast(),
            bytes,
        })
    }
    pub fn as_slice<T: Scalar>(&self) -> &[T] {
        // SAFETY: `ptr` holds `bytes` initialised (zeroed in `new`) bytes, page-aligned, or is a
        // dangling 8-aligned pointer with `bytes` 0: aligned for every Scalar (at most 8), and
        // `bytes / size_of::<T>()` entries fit. Every bit pattern is a valid f32/f64/complex. The
        // slice borrows `self`, so it cannot outlive the memory, and safe writes need `&mut self`.
        unsafe {
            std::slice::from_raw_parts(self.ptr.cast(), self.bytes / std::mem::size_of::<T>())
        }
    }
    pub fn as_mut_slice<T: Scalar>(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`, borrowed mutably with `self`, so nothing else reaches the bytes
        // through safe code meanwhile.
        unsafe {
            std::slice::from_raw_parts_mut(self.ptr.cast(), self.bytes / std::mem::size_of::<T>())
        }
    }
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        if self.bytes > 0 && bind_current().is_ok() {
            // copies queued into or out of the buffer (an error path may leave one) finish first:
            // cuMemFreeHost is not documented to wait for them
            let _ = cu::ctx::synchronize();
            // SAFETY: `bytes > 0`, so `ptr` came from cuMemHostAlloc in `new` (non-null); it is
            // freed once, here, with no copy still queued (synchronised just above).
            let _ = unsafe { cu::free_host(self.ptr.cast()) };
        }
    }
}

/// Device array of `T` owned by parlops (freed on drop).
///
/// `ptr` holds `len` entries of `T` (0 when `len` is 0), as [`DevArray::zeroed`] made it. The
/// fields are public to read: kernel launches are sized by `len` and drop frees `ptr`, so code
/// must never assign them.
pub struct DevArray<T> {
    pub ptr: u64,
    pub len: usize,
    _t: std::marker::PhantomData<T>,
}
// SAFETY: device memory owned by this value alone, reached only through driver calls and kernels,
// and freed once (on drop, from any thread: `free` binds the context). No `T` ever lives in host
// memory behind it, so no bound on `T` is needed.
unsafe impl<T> Send for DevArray<T> {}
// SAFETY: as for Send: `&DevArray` only reads the address and the length.
unsafe impl<T> Sync for DevArray<T> {}

impl<T: Copy> DevArray<T> {
    pub fn zeroed(len: usize, s: Stream) -> Result<Self> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
            crate::err!(
                OutOfMemory,
                "a device array of {len} entries overflows a size"
            )
        })?;
        Ok(DevArray {
            ptr: alloc_zeroed(bytes, s)?,
            len,
            _t: std::marker::PhantomData,
        })
    }
    /// A device copy of `host` (waits for the copy).
    pub fn from_host(host: &[T], s: Stream) -> Result<Self> {
        let a = Self::zeroed(host.len(), s)?;
        // SAFETY: `a` was just allocated with `host.len()` entries of T, size_of_val(host) bytes
        // (nothing is copied when that is 0 and `a.ptr` is 0); `host` stays borrowed until the
        // sync below has run the copy.
        unsafe { htod(a.ptr, host.as_ptr().cast(), std::mem::size_of_val(host), s)? };
        sync(s)?;
        Ok(a)
    }
}

impl<T> Drop for DevArray<T> {
    fn drop(&mut self) {
        free(self.ptr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernels compile for every element type (NVRTC needs no device). Skipped, with the reason,
    /// where libnvrtc is not installed (`make kernels-check` fetches it).
    #[test]
    fn kernels_compile() {
        for d in [DType::F32, DType::F64, DType::C64, DType::C128] {
            match compile(d, "--gpu-architecture=compute_90") {
                Ok(ptx) => {
                    let text = String::from_utf8_lossy(&ptx);
                    for k in [
                        "k_axpy",
                        "k_dot",
                        "k_mdot4",
                        "k_maxpy4",
                        "k_spmv_i32",
                        "k_spmv_h_i64",
                        "k_spmv_ordered",
                        "k_finish",
                        "k_cg_update",
                        "k_cg_residual",
                        "k_cg_step",
                        "k_catch_up",
                        "k_cg_sr_update",
                        "k_cg_pipe_update",
                    ] {
                        assert!(text.contains(k), "{k} missing from the {} PTX", d.name());
                    }
                }
                Err(e) if e.kind == ErrorKind::NoDevice => {
                    eprintln!("kernels_compile skipped: {}", e.msg);
                    return;
                }
                Err(e) => panic!("{}", e.msg),
            }
        }
    }
}
