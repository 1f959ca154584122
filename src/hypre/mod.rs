//! hypre, loaded at run time (dlopen) for BoomerAMG ([`amg`]).
//!
//! Why at run time and not linked: parlops builds, links and runs without hypre (the AMG
//! constructor then says how to get it); the library's one hard dependency stays MPI, so the MPICH
//! build does not drag in Debian's Open MPI hypre; and a user may point PARLOPS_HYPRE_LIBRARY at
//! their own hypre. What must match is fixed at build time from hypre's HYPRE_config.h (the integer
//! widths, real double values: build.rs) and checked at load time: the MPI that hypre was linked
//! with must be the process's (a hypre built on Open MPI in an MPICH process would crash).

pub mod amg;
pub mod amg_options;
pub mod auxspace;
mod ij;
pub mod options;
pub mod tables;

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::OnceLock;

use crate::error::Result;

/// hypre's HYPRE_Int and HYPRE_BigInt, as the headers parlops was built with say.
#[cfg(hypre_int64)]
pub type HInt = i64;
#[cfg(not(hypre_int64))]
pub type HInt = i32;
#[cfg(hypre_bigint64)]
pub type HBig = i64;
#[cfg(not(hypre_bigint64))]
pub type HBig = i32;

type Comm = mpi::ffi::MPI_Comm;
type H = *mut c_void;

/// The hypre functions parlops calls.
#[allow(non_snake_case)]
pub(crate) struct Api {
    /// The library's handle from `dlopen` (never closed), for the setters looked up by name.
    lib: usize,
    pub path: String,
    pub version: String,
    pub ClearAllErrors: unsafe extern "C" fn() -> HInt,
    pub IJMatrixCreate: unsafe extern "C" fn(Comm, HBig, HBig, HBig, HBig, *mut H) -> HInt,
    pub IJMatrixSetObjectType: unsafe extern "C" fn(H, HInt) -> HInt,
    pub IJMatrixSetDiagOffdSizes: unsafe extern "C" fn(H, *const HInt, *const HInt) -> HInt,
    pub IJMatrixInitialize: unsafe extern "C" fn(H) -> HInt,
    pub IJMatrixSetValues:
        unsafe extern "C" fn(H, HInt, *mut HInt, *const HBig, *const HBig, *const f64) -> HInt,
    pub IJMatrixAssemble: unsafe extern "C" fn(H) -> HInt,
    pub IJMatrixGetObject: unsafe extern "C" fn(H, *mut H) -> HInt,
    pub IJMatrixDestroy: unsafe extern "C" fn(H) -> HInt,
    pub IJVectorCreate: unsafe extern "C" fn(Comm, HBig, HBig, *mut H) -> HInt,
    pub IJVectorSetObjectType: unsafe extern "C" fn(H, HInt) -> HInt,
    pub IJVectorInitialize: unsafe extern "C" fn(H) -> HInt,
    pub IJVectorSetValues: unsafe extern "C" fn(H, HInt, *const HBig, *const f64) -> HInt,
    pub IJVectorGetValues: unsafe extern "C" fn(H, HInt, *const HBig, *mut f64) -> HInt,
    pub IJVectorAssemble: unsafe extern "C" fn(H) -> HInt,
    pub IJVectorGetObject: unsafe extern "C" fn(H, *mut H) -> HInt,
    pub IJVectorDestroy: unsafe extern "C" fn(H) -> HInt,
    pub ParVectorSetConstantValues: unsafe extern "C" fn(H, f64) -> HInt,
    pub AmgCreate: unsafe extern "C" fn(*mut H) -> HInt,
    pub AmgDestroy: unsafe extern "C" fn(H) -> HInt,
    pub AmgSetup: unsafe extern "C" fn(H, H, H, H) -> HInt,
    pub AmgSolve: unsafe extern "C" fn(H, H, H, H) -> HInt,
    pub AmgSetDofFunc: unsafe extern "C" fn(H, *mut HInt) -> HInt,
    pub AmgSetTol: unsafe extern "C" fn(H, f64) -> HInt,
    pub AmgSetMaxIter: unsafe extern "C" fn(H, HInt) -> HInt,
}

// SAFETY: function pointers into a library that stays loaded; hypre calls are serialised by the
// callers (each AMG operator holds its hypre objects behind a mutex).
unsafe impl Send for Api {}
// SAFETY: as for `Send`: `&Api` gives only paths, a version string and function pointers that
// stay valid (the library is never closed); every call through them is an `unsafe` call whose
// caller serialises the hypre objects it passes (each AMG operator behind its mutex).
unsafe impl Sync for Api {}

/// HYPRE_PARCSR, the object type of the IJ interface.
pub(crate) const PARCSR: HInt = 5555;

fn dlerror() -> String {
    // SAFETY: `dlerror` takes no arguments; it returns NULL or a NUL-terminated message owned by
    // the loader.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: `e` is not NULL and points to the loader's NUL-terminated message, read at once
        // (before any other `dl*` call could replace it).
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

/// The libraries tried, in order, and whether the caller named it: a library named by
/// PARLOPS_HYPRE_LIBRARY is the only one tried (the caller gets that library or an error saying why,
/// never another hypre in its place).
fn candidates() -> (Vec<String>, bool) {
    if let Some(p) = crate::config::env().get("PARLOPS_HYPRE_LIBRARY")
        && !p.is_empty()
    {
        return (vec![p.to_string()], true);
    }
    let mut v = vec!["libHYPRE.so".to_string()];
    if let Some(ver) = option_env!("PARLOPS_HYPRE_HEADERS_VERSION")
        && !ver.is_empty()
    {
        v.push(format!("libHYPRE-{ver}.so"));
    }
    (v, false)
}

/// Where the dynamic loader would find `name` (LD_LIBRARY_PATH, then the usual directories), so that
/// its MPI can be checked before it is loaded: loading a hypre built for another MPI would bring
/// that MPI into the process.
fn locate(name: &str) -> Option<String> {
    if name.contains('/') {
        return Some(name.to_string());
    }
    let mut dirs: Vec<String> = std::env::var("LD_LIBRARY_PATH")
        .unwrap_or_default()
        .split(':')
        .filter(|d| !d.is_empty())
        .map(String::from)
        .collect();
    for d in [
        "/usr/local/lib",
        "/usr/lib/x86_64-linux-gnu",
        "/lib/x86_64-linux-gnu",
        "/usr/lib/aarch64-linux-gnu",
        "/usr/lib64",
        "/usr/lib",
    ] {
        dirs.push(d.to_string());
    }
    dirs.into_iter()
        .map(|d| format!("{d}/{name}"))
        .find(|p| std::path::Path::new(p).exists())
}

/// How much of a library file is read to find the MPI it needs (the names it needs sit in its
/// dynamic string table, near the start of the file).
const SCAN_BYTES: u64 = 64 << 20;

/// Why `path` cannot be a shared library to load, if it cannot: it must be a regular file (after
/// symbolic links) that this process can read and that starts as an ELF object does. Checked
/// before anything opens it for its contents, so that a FIFO, a device (/dev/zero), a directory or
/// a text file is refused at once instead of blocking, reading without end, or being skipped.
fn not_a_library(path: &str) -> Option<String> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) => return Some(format!("{path}: {e}")),
    };
    if meta.is_dir() {
        return Some(format!("{path} is a directory"));
    }
    if !meta.is_file() {
        return Some(format!(
            "{path} is not a regular file (a FIFO, a socket or a device)"
        ));
    }
    use std::io::Read;
    let mut magic = [0u8; 4];
    match std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)) {
        Err(e) => Some(format!("{path} cannot be read: {e}")),
        Ok(()) if &magic != b"\x7fELF" => Some(format!(
            "{path} is not a shared library (it does not start as an ELF object)"
        )),
        Ok(()) => None,
    }
}

/// Which MPI a library file was linked with, from the names it needs (a regular file, checked by
/// [`not_a_library`]; at most [`SCAN_BYTES`] of it are read).
fn mpi_of_file(path: &str) -> Option<&'static str> {
    if not_a_library(path).is_some() {
        return None;
    }
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(SCAN_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    let has = |n: &[u8]| bytes.windows(n.len()).any(|w| w == n);
    if has(b"libmpi.so.40") || has(b"libopen-pal") {
        Some("Open MPI")
    } else if has(b"libmpich.so") || has(b"libmpi.so.12") {
        Some("MPICH")
    } else {
        None
    }
}

/// The process's MPI, from MPI_Get_library_version.
fn mpi_of_process() -> Option<&'static str> {
    let mut buf = vec![0 as c_char; mpi::ffi::MPI_MAX_LIBRARY_VERSION_STRING as usize + 1];
    let mut len: c_int = 0;
    // SAFETY: `buf` holds MPI_MAX_LIBRARY_VERSION_STRING + 1 chars (the constant of the MPI rsmpi
    // was built for), zeroed, and `len` is a live local; `MPI_Get_library_version` may be called
    // before `MPI_Init`.
    unsafe { mpi::ffi::MPI_Get_library_version(buf.as_mut_ptr(), &mut len) };
    // SAFETY: `buf` was zeroed and MPI writes at most MPI_MAX_LIBRARY_VERSION_STRING chars, so its
    // last char is still a NUL (also when the call failed): the string ends inside `buf`.
    let s = unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    if s.contains("Open MPI") {
        Some("Open MPI")
    } else if s.contains("MPICH") {
        Some("MPICH")
    } else {
        None
    }
}

// the transmutes' target types are the fields of `Api` they are assigned to
#[allow(clippy::missing_transmute_annotations)]
fn load() -> std::result::Result<Api, String> {
    if !cfg!(parlops_hypre) {
        return Err("parlops was built without hypre's headers (HYPRE_config.h); install Debian's libhypre-dev (make demo does) or set HYPRE_DIR, and rebuild".into());
    }
    let mut tried = Vec::new();
    let mut handle = std::ptr::null_mut();
    let process_mpi = mpi_of_process();
    let (names, named) = candidates();
    let mut loaded = String::new();
    for c in names {
        // the file must be a library before the loader or the MPI check opens it
        let path = locate(&c);
        match &path {
            Some(path) => {
                if let Some(why) = not_a_library(path) {
                    tried.push(why);
                    continue;
                }
            }
            None if named => {
                tried.push(format!(
                    "{c}: not found in LD_LIBRARY_PATH or the system's library directories"
                ));
                continue;
            }
            None => {}
        }
        // refuse a hypre of another MPI before loading it (its MPI would come with it)
        if let (Some(path), Some(p)) = (&path, process_mpi)
            && let Some(h) = mpi_of_file(path)
            && h != p
        {
            tried.push(format!(
                "{path} was built with {h}, but this process runs {p}"
            ));
            continue;
        }
        let name = CString::new(c.clone()).map_err(|e| e.to_string())?;
        // SAFETY: `name` is a live NUL-terminated C string, and `dlopen` has no other precondition;
        // the file was checked to be a readable ELF file of this process's MPI (when found) before
        // it is loaded.
        handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if !handle.is_null() {
            loaded = path.unwrap_or(c);
            break;
        }
        tried.push(format!("{c}: {}", dlerror()));
    }
    if handle.is_null() {
        if named {
            return Err(format!(
                "the library named by PARLOPS_HYPRE_LIBRARY could not be loaded ({}); point it at a libHYPRE.so built with real double values for this process's MPI, or unset it to use the system's hypre",
                tried.join("; ")
            ));
        }
        return Err(format!(
            "hypre could not be loaded ({}); install Debian's libhypre-dev (make demo does) or set PARLOPS_HYPRE_LIBRARY to a libHYPRE.so built with real double values for this process's MPI",
            tried.join("; ")
        ));
    }
    let sym = |name: &str| -> std::result::Result<*mut c_void, String> {
        let n = CString::new(name).unwrap();
        // SAFETY: `handle` is the live handle `dlopen` returned (never closed) and `n` a live
        // NUL-terminated name.
        let p = unsafe { libc::dlsym(handle, n.as_ptr()) };
        if p.is_null() {
            Err(format!(
                "{}{loaded} is not hypre: it has no symbol {name}",
                if named {
                    "the library named by PARLOPS_HYPRE_LIBRARY, "
                } else {
                    ""
                }
            ))
        } else {
            Ok(p)
        }
    };
    // where it really is, and which MPI it needs
    // SAFETY: `Dl_info` is a plain C struct of pointers and integers, for which all-zero bits are
    // valid.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: `dladdr` only reads the address (a symbol of the loaded library) and writes `info`, a
    // live local.
    let path = if unsafe { libc::dladdr(sym("HYPRE_BoomerAMGCreate")?, &mut info) } != 0
        && !info.dli_fname.is_null()
    {
        // SAFETY: `dladdr` succeeded and `dli_fname` is not NULL (both checked just above): it
        // points to the loader's NUL-terminated path of the library, which stays loaded.
        unsafe { CStr::from_ptr(info.dli_fname) }
            .to_string_lossy()
            .into_owned()
    } else {
        "libHYPRE.so".into()
    };
    if let (Some(h), Some(p)) = (mpi_of_file(&path), process_mpi)
        && h != p
    {
        return Err(format!(
            "{path} was built with {h}, but this process runs {p}; use a hypre built with {p} (PARLOPS_HYPRE_LIBRARY)"
        ));
    }
    macro_rules! f {
        ($name:literal) => {
            // SAFETY: each symbol is the hypre function of that name in the loaded library (never
            // closed), and the target type is the field of `Api` it is assigned to, declared as
            // hypre's C prototype with the integer widths of the HYPRE_config.h parlops was built
            // with; a library of other widths (named by PARLOPS_HYPRE_LIBRARY) is not detected
            // here.
            unsafe { std::mem::transmute::<*mut c_void, _>(sym($name)?) }
        };
    }
    if let Ok(init) = sym("HYPRE_Init") {
        // SAFETY: `HYPRE_Init` is `HYPRE_Int HYPRE_Init(void)` in hypre's headers, the type given
        // here.
        let init: unsafe extern "C" fn() -> HInt = unsafe { std::mem::transmute(init) };
        // SAFETY: as above: `init` is hypre's `HYPRE_Init`, called once (`load` runs once, under
        // `OnceLock`).
        unsafe { init() };
    }
    let version = match sym("HYPRE_VersionNumber") {
        Ok(p) => {
            let vn: unsafe extern "C" fn(*mut HInt, *mut HInt, *mut HInt, *mut HInt) -> HInt =
                // SAFETY: `HYPRE_VersionNumber` is `HYPRE_Int HYPRE_VersionNumber(HYPRE_Int *major,
                // HYPRE_Int *minor, HYPRE_Int *patch, HYPRE_Int *single)` in hypre's headers, the
                // type given here.
                unsafe { std::mem::transmute(p) };
            let (mut a, mut b, mut c, mut d) = (0, 0, 0, 0);
            // SAFETY: as above: `vn` writes one HInt through each pointer, all to live locals.
            unsafe { vn(&mut a, &mut b, &mut c, &mut d) };
            format!("{a}.{b}.{c}")
        }
        Err(_) => option_env!("PARLOPS_HYPRE_HEADERS_VERSION")
            .unwrap_or("?")
            .to_string(),
    };
    Ok(Api {
        lib: handle as usize,
        path,
        version,
        ClearAllErrors: f!("HYPRE_ClearAllErrors"),
        IJMatrixCreate: f!("HYPRE_IJMatrixCreate"),
        IJMatrixSetObjectType: f!("HYPRE_IJMatrixSetObjectType"),
        IJMatrixSetDiagOffdSizes: f!("HYPRE_IJMatrixSetDiagOffdSizes"),
        IJMatrixInitialize: f!("HYPRE_IJMatrixInitialize"),
        IJMatrixSetValues: f!("HYPRE_IJMatrixSetValues"),
        IJMatrixAssemble: f!("HYPRE_IJMatrixAssemble"),
        IJMatrixGetObject: f!("HYPRE_IJMatrixGetObject"),
        IJMatrixDestroy: f!("HYPRE_IJMatrixDestroy"),
        IJVectorCreate: f!("HYPRE_IJVectorCreate"),
        IJVectorSetObjectType: f!("HYPRE_IJVectorSetObjectType"),
        IJVectorInitialize: f!("HYPRE_IJVectorInitialize"),
        IJVectorSetValues: f!("HYPRE_IJVectorSetValues"),
        IJVectorGetValues: f!("HYPRE_IJVectorGetValues"),
        IJVectorAssemble: f!("HYPRE_IJVectorAssemble"),
        IJVectorGetObject: f!("HYPRE_IJVectorGetObject"),
        IJVectorDestroy: f!("HYPRE_IJVectorDestroy"),
        ParVectorSetConstantValues: f!("HYPRE_ParVectorSetConstantValues"),
        AmgCreate: f!("HYPRE_BoomerAMGCreate"),
        AmgDestroy: f!("HYPRE_BoomerAMGDestroy"),
        AmgSetup: f!("HYPRE_BoomerAMGSetup"),
        AmgSolve: f!("HYPRE_BoomerAMGSolve"),
        AmgSetDofFunc: f!("HYPRE_BoomerAMGSetDofFunc"),
        AmgSetTol: f!("HYPRE_BoomerAMGSetTol"),
        AmgSetMaxIter: f!("HYPRE_BoomerAMGSetMaxIter"),
    })
}

impl Api {
    /// The function `name` of the loaded hypre, if it has one (an older hypre may lack a setter).
    pub(crate) fn sym(&self, name: &str) -> Option<*mut c_void> {
        let n = CString::new(name).ok()?;
        // SAFETY: `lib` is the live handle `dlopen` returned (never closed) and `n` a live
        // NUL-terminated name.
        let p = unsafe { libc::dlsym(self.lib as *mut c_void, n.as_ptr()) };
        (!p.is_null()).then_some(p)
    }
}

/// hypre, loaded once per process; `NotSupported` with the reason when it cannot be.
pub(crate) fn api() -> Result<&'static Api> {
    static API: OnceLock<std::result::Result<Api, String>> = OnceLock::new();
    match API.get_or_init(load) {
        Ok(a) => Ok(a),
        Err(e) => crate::bail!(NotSupported, "BoomerAMG needs hypre: {e}"),
    }
}

/// For the configuration report: the hypre found (version and library), or why none.
pub fn describe() -> String {
    match api() {
        Ok(a) => format!("hypre {} ({})", a.version, a.path),
        Err(e) => e.msg,
    }
}
