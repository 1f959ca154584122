//! Types and constants of the C API.

use crate::error::ErrorKind;

/// Result of every fallible call; `PARLOPS_OK` (0) is success. See `parlops_status_string` and
/// `parlops_last_error` for the words.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum parlops_status {
    /// Success.
    PARLOPS_OK = 0,
    /// A required pointer argument was NULL.
    PARLOPS_ERR_NULL_ARGUMENT = 1,
    /// Bad enum value, negative size, out-of-range root, imaginary part for a real dtype, ...
    PARLOPS_ERR_INVALID_ARGUMENT = 2,
    /// Lengths that must match do not (the message gives both).
    PARLOPS_ERR_SIZE_MISMATCH = 3,
    /// Objects of different element types were combined.
    PARLOPS_ERR_DTYPE_MISMATCH = 4,
    /// Vectors or operators with incompatible layouts (different communicator or replication).
    PARLOPS_ERR_LAYOUT_MISMATCH = 5,
    /// Ranks passed different values to a collective call (global sizes, partitions, roots, dtypes).
    PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS = 6,
    /// Host pointer where device memory was expected, or the reverse.
    PARLOPS_ERR_MEMORY_LOCATION = 7,
    /// A GPU or NCCL was asked for and is not present.
    PARLOPS_ERR_NO_DEVICE = 8,
    /// An MPI call failed (MPI's message is included).
    PARLOPS_ERR_MPI = 9,
    /// A CUDA call failed.
    PARLOPS_ERR_CUDA = 10,
    /// An NCCL call failed.
    PARLOPS_ERR_NCCL = 11,
    /// A user callback returned non-zero (the code is in the message).
    PARLOPS_ERR_CALLBACK = 12,
    /// The combination asked for is not supported by this version.
    PARLOPS_ERR_NOT_SUPPORTED = 13,
    /// Memory could not be allocated.
    PARLOPS_ERR_OUT_OF_MEMORY = 14,
    /// A bug inside parlops (a caught panic): please report it with the message.
    PARLOPS_ERR_INTERNAL = 15,
    /// A handle argument is not a live object of the expected type: destroyed already, another
    /// type's handle (a vector passed as an operator), or a pointer parlops never handed out.
    PARLOPS_ERR_INVALID_HANDLE = 16,
    /// A solve inside an operator (parlops_op_create_inverse) did not converge: the reason, the
    /// iterations and the norms are in the message.
    PARLOPS_ERR_NOT_CONVERGED = 17,
    /// The object is in use by a call that has not returned (a solve, an apply or an eigensolver
    /// running one of your callbacks, or a call on another thread): it cannot be destroyed, or
    /// changed, or read while that call writes it, until the call returns. A vector lent to a
    /// callback (the iterate monitor's x and r) cannot be destroyed at all: parlops frees it.
    PARLOPS_ERR_BUSY = 18,
    /// The header a program was compiled with is of a parlops version whose ABI the loaded library
    /// does not keep (parlops_check_version, PARLOPS_CHECK_VERSION()): the message gives both
    /// versions and the library's path.
    PARLOPS_ERR_VERSION_MISMATCH = 19,
}

impl From<ErrorKind> for parlops_status {
    fn from(k: ErrorKind) -> parlops_status {
        use parlops_status::*;
        match k {
            ErrorKind::NullArgument => PARLOPS_ERR_NULL_ARGUMENT,
            ErrorKind::InvalidArgument => PARLOPS_ERR_INVALID_ARGUMENT,
            ErrorKind::SizeMismatch => PARLOPS_ERR_SIZE_MISMATCH,
            ErrorKind::DTypeMismatch => PARLOPS_ERR_DTYPE_MISMATCH,
            ErrorKind::LayoutMismatch => PARLOPS_ERR_LAYOUT_MISMATCH,
            ErrorKind::InconsistentAcrossRanks => PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS,
            ErrorKind::MemoryLocation => PARLOPS_ERR_MEMORY_LOCATION,
            ErrorKind::NoDevice => PARLOPS_ERR_NO_DEVICE,
            ErrorKind::Mpi => PARLOPS_ERR_MPI,
            ErrorKind::Cuda => PARLOPS_ERR_CUDA,
            ErrorKind::Nccl => PARLOPS_ERR_NCCL,
            ErrorKind::Callback => PARLOPS_ERR_CALLBACK,
            ErrorKind::NotSupported => PARLOPS_ERR_NOT_SUPPORTED,
            ErrorKind::OutOfMemory => PARLOPS_ERR_OUT_OF_MEMORY,
            ErrorKind::Internal => PARLOPS_ERR_INTERNAL,
            ErrorKind::InvalidHandle => PARLOPS_ERR_INVALID_HANDLE,
            ErrorKind::NotConverged => PARLOPS_ERR_NOT_CONVERGED,
            ErrorKind::Busy => PARLOPS_ERR_BUSY,
            ErrorKind::VersionMismatch => PARLOPS_ERR_VERSION_MISMATCH,
        }
    }
}

/// A scalar crossing the ABI: `im` must be 0 for real dtypes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct parlops_scalar {
    pub re: f64,
    pub im: f64,
}

/// Element type: one of `PARLOPS_F32`, `PARLOPS_F64`, `PARLOPS_C64` (complex float), `PARLOPS_C128` (complex double).
pub type parlops_dtype = i32;
/// 32-bit real.
pub const PARLOPS_F32: parlops_dtype = 0;
/// 64-bit real.
pub const PARLOPS_F64: parlops_dtype = 1;
/// Complex of two 32-bit reals (C `float _Complex`, Fortran `complex(c_float_complex)`).
pub const PARLOPS_C64: parlops_dtype = 2;
/// Complex of two 64-bit reals (C `double _Complex`, Fortran `complex(c_double_complex)`).
pub const PARLOPS_C128: parlops_dtype = 3;

/// Memory space: `PARLOPS_MEMORY_HOST` or `PARLOPS_MEMORY_CUDA`.
pub type parlops_memory = i32;
/// Ordinary host memory.
pub const PARLOPS_MEMORY_HOST: parlops_memory = 0;
/// CUDA device memory (gives PARLOPS_ERR_NO_DEVICE where no CUDA device is present).
pub const PARLOPS_MEMORY_CUDA: parlops_memory = 1;

/// How a vector's entries are placed on ranks.
pub type parlops_partition = i32;
/// Split over ranks; by default the first `n % P` ranks get one more entry.
pub const PARLOPS_PARTITION_SCATTER: parlops_partition = 0;
/// Replicated on every rank; rank 0's values win (gather, dot, norm, `parlops_vec_assemble`).
pub const PARLOPS_PARTITION_BROADCAST: parlops_partition = 1;
/// Replicated on every rank, never synchronised: each rank uses its own copy.
pub const PARLOPS_PARTITION_UNSAFE_BROADCAST: parlops_partition = 2;

/// Which norm `parlops_vec_norm` computes.
pub type parlops_norm = i32;
/// Number of non-zero entries.
pub const PARLOPS_NORM_0: parlops_norm = 0;
/// Sum of absolute values.
pub const PARLOPS_NORM_1: parlops_norm = 1;
/// Euclidean norm.
pub const PARLOPS_NORM_2: parlops_norm = 2;
/// Largest absolute value (0 for an empty vector).
pub const PARLOPS_NORM_INF: parlops_norm = 3;
/// Smallest absolute value (+inf for an empty vector).
pub const PARLOPS_NORM_NEG_INF: parlops_norm = 4;
/// (sum |x_i|^p)^(1/p) for the `p` argument (p = 0, 1, 2, +-inf give the norms above).
pub const PARLOPS_NORM_P: parlops_norm = 5;

/// Let the partition choose this rank's local length (`parlops_layout_create`).
pub const PARLOPS_DECIDE: i64 = -1;
/// Gather to every rank (`parlops_vec_gather`'s `root`).
pub const PARLOPS_ALL_RANKS: i32 = -1;

/// Width of CSR index arrays: `PARLOPS_INDEX_I32` or `PARLOPS_INDEX_I64`.
pub type parlops_index = i32;
/// 32-bit indices (`int`, hypre's default HYPRE_Int).
pub const PARLOPS_INDEX_I32: parlops_index = 0;
/// 64-bit indices (`int64_t`).
pub const PARLOPS_INDEX_I64: parlops_index = 1;

/// Whether a constructor copies the caller's arrays or uses them in place.
pub type parlops_ownership = i32;
/// Copy the arrays; the caller may free them after the call.
pub const PARLOPS_COPY: parlops_ownership = 0;
/// Use the arrays in place (no copy); the caller keeps them alive and unchanged while the object lives.
pub const PARLOPS_WRAP: parlops_ownership = 1;

/// Finite-difference stencil direction.
pub type parlops_stencil = i32;
/// Centered differences (PyLops' default).
pub const PARLOPS_CENTERED: parlops_stencil = 0;
/// Forward differences.
pub const PARLOPS_FORWARD: parlops_stencil = 1;
/// Backward differences.
pub const PARLOPS_BACKWARD: parlops_stencil = 2;
