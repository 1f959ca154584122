//! The one error type of the crate. Every failure carries a kind (its table gives the C
//! `parlops_status` value and words) and a message that names the function, the argument and the values.

use std::fmt;

crate::codes::code_table! {
    /// What went wrong: one line per kind, with its C status value (`parlops_status`; 0 is success)
    /// and the words `parlops_status_string` gives for it. Unknown codes read as `Internal`.
    pub enum ErrorKind else Internal {
        NullArgument = 1, PARLOPS_ERR_NULL_ARGUMENT, "a required pointer argument was NULL";
        InvalidArgument = 2, PARLOPS_ERR_INVALID_ARGUMENT, "an argument has an invalid value";
        SizeMismatch = 3, PARLOPS_ERR_SIZE_MISMATCH, "sizes that must match do not";
        DTypeMismatch = 4, PARLOPS_ERR_DTYPE_MISMATCH, "objects have different element types";
        LayoutMismatch = 5, PARLOPS_ERR_LAYOUT_MISMATCH, "objects have incompatible layouts";
        InconsistentAcrossRanks = 6, PARLOPS_ERR_INCONSISTENT_ACROSS_RANKS,
            "ranks passed different values to a collective call";
        MemoryLocation = 7, PARLOPS_ERR_MEMORY_LOCATION, "memory is not where it was declared to be";
        NoDevice = 8, PARLOPS_ERR_NO_DEVICE, "a GPU or NCCL was asked for and is not present";
        Mpi = 9, PARLOPS_ERR_MPI, "an MPI call failed";
        Cuda = 10, PARLOPS_ERR_CUDA, "a CUDA call failed";
        Nccl = 11, PARLOPS_ERR_NCCL, "an NCCL call failed";
        Callback = 12, PARLOPS_ERR_CALLBACK, "a user callback returned an error";
        NotSupported = 13, PARLOPS_ERR_NOT_SUPPORTED, "not supported by this version";
        OutOfMemory = 14, PARLOPS_ERR_OUT_OF_MEMORY, "memory could not be allocated";
        Internal = 15, PARLOPS_ERR_INTERNAL, "internal error in parlops (please report)";
        InvalidHandle = 16, PARLOPS_ERR_INVALID_HANDLE,
            "a handle is destroyed, of another type, or not from parlops";
        NotConverged = 17, PARLOPS_ERR_NOT_CONVERGED, "an inner solve did not converge";
        Busy = 18, PARLOPS_ERR_BUSY, "an object is in use by a call that has not returned";
        VersionMismatch = 19, PARLOPS_ERR_VERSION_MISMATCH,
            "the program was compiled with the header of another parlops version than the library loaded";
    }
}

/// An error: a kind and a message naming function, argument and values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub msg: String,
}

impl Error {
    pub fn new(kind: ErrorKind, msg: impl Into<String>) -> Error {
        Error {
            kind,
            msg: msg.into(),
        }
    }
    /// Prefix the message with the name of the public function it surfaced from.
    pub fn context(mut self, func: &str) -> Error {
        if !self.msg.starts_with(func) {
            self.msg = format!("{func}: {}", self.msg);
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.kind, self.msg)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// `n` copies of `v`, or an `OutOfMemory` error naming `what`: every allocation sized by a caller
/// goes through this (or [`try_reserve`]), so that a huge size is an error and never an abort. The
/// outcome is local; callers agree on it before their next collective.
pub fn try_vec<T: Clone>(n: usize, v: T, what: &str) -> Result<Vec<T>> {
    let mut out = Vec::new();
    try_reserve(&mut out, n, what)?;
    out.resize(n, v);
    Ok(out)
}

/// Reserve room for `extra` more entries of `vec`, or an `OutOfMemory` error naming `what`.
pub fn try_reserve<T>(vec: &mut Vec<T>, extra: usize, what: &str) -> Result<()> {
    vec.try_reserve_exact(extra).map_err(|_| {
        Error::new(
            ErrorKind::OutOfMemory,
            format!(
                "cannot allocate {what}: {extra} entries of {} bytes ({} bytes in all) on this rank",
                std::mem::size_of::<T>(),
                (extra as u128) * std::mem::size_of::<T>() as u128
            ),
        )
    })
}

/// The product of named sizes, or an `InvalidArgument` error naming them and their values when it
/// does not fit in an i64 (or a negative factor is given).
pub fn checked_product(what: &str, factors: &[(&str, i64)]) -> Result<i64> {
    let shown = || {
        factors
            .iter()
            .map(|(n, v)| format!("{n} = {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if factors.iter().any(|&(_, v)| v < 0) {
        return Err(Error::new(
            ErrorKind::InvalidArgument,
            format!("{what}: sizes must be >= 0, got {}", shown()),
        ));
    }
    factors
        .iter()
        .try_fold(1i64, |a, &(_, v)| a.checked_mul(v))
        .ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidArgument,
                format!("{what}: {} make more than 2^63 - 1 entries", shown()),
            )
        })
}

/// Run this rank's local work `f`, turning a panic into an `Internal` error, so that the failure
/// can be carried into the next collective agreement instead of leaving the other ranks waiting.
pub fn catch_panic<R>(what: &str, f: impl FnOnce() -> Result<R>) -> Result<R> {
    catch_panic_named(|| what.to_string(), f)
}

/// [`catch_panic`] with the name made only when a panic is caught (for calls made every iteration).
pub fn catch_panic_named<R>(
    what: impl FnOnce() -> String,
    f: impl FnOnce() -> Result<R>,
) -> Result<R> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let what = what();
        let why = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Err(Error::new(
            ErrorKind::Internal,
            format!("{what} panicked on this rank (please report): {why}"),
        ))
    })
}

/// `err!(Kind, "fmt", args..)` builds an [`Error`].
#[macro_export]
macro_rules! err {
    ($kind:ident, $($arg:tt)*) => {
        $crate::error::Error::new($crate::error::ErrorKind::$kind, format!($($arg)*))
    };
}

/// `bail!(Kind, "fmt", args..)` returns early with an [`Error`].
#[macro_export]
macro_rules! bail {
    ($kind:ident, $($arg:tt)*) => {
        return Err($crate::err!($kind, $($arg)*))
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn codes_round_trip() {
        assert_eq!(ErrorKind::ALL.len(), 19);
        for c in 1..=19 {
            assert_eq!(ErrorKind::from_code(c).code(), c);
        }
        assert_eq!(ErrorKind::from_code(99), ErrorKind::Internal);
        assert_eq!(ErrorKind::from_code(0), ErrorKind::Internal);
    }
}
