//! The one error type of the crate. Every failure carries a kind (mapped 1:1 to the C
//! `parlops_status`) and a message that names the function, the argument and the values.

use std::fmt;

/// What went wrong, independent of the words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    NullArgument,
    InvalidArgument,
    SizeMismatch,
    DTypeMismatch,
    LayoutMismatch,
    InconsistentAcrossRanks,
    MemoryLocation,
    NoDevice,
    Mpi,
    Cuda,
    Nccl,
    Callback,
    NotSupported,
    OutOfMemory,
    Internal,
    InvalidHandle,
}

impl ErrorKind {
    /// Stable small integer (the C status value); 0 is reserved for success.
    pub fn code(self) -> i32 {
        match self {
            ErrorKind::NullArgument => 1,
            ErrorKind::InvalidArgument => 2,
            ErrorKind::SizeMismatch => 3,
            ErrorKind::DTypeMismatch => 4,
            ErrorKind::LayoutMismatch => 5,
            ErrorKind::InconsistentAcrossRanks => 6,
            ErrorKind::MemoryLocation => 7,
            ErrorKind::NoDevice => 8,
            ErrorKind::Mpi => 9,
            ErrorKind::Cuda => 10,
            ErrorKind::Nccl => 11,
            ErrorKind::Callback => 12,
            ErrorKind::NotSupported => 13,
            ErrorKind::OutOfMemory => 14,
            ErrorKind::Internal => 15,
            ErrorKind::InvalidHandle => 16,
        }
    }

    /// Inverse of [`ErrorKind::code`]; unknown codes map to `Internal`.
    pub fn from_code(c: i32) -> ErrorKind {
        const ALL: [ErrorKind; 16] = [
            ErrorKind::NullArgument,
            ErrorKind::InvalidArgument,
            ErrorKind::SizeMismatch,
            ErrorKind::DTypeMismatch,
            ErrorKind::LayoutMismatch,
            ErrorKind::InconsistentAcrossRanks,
            ErrorKind::MemoryLocation,
            ErrorKind::NoDevice,
            ErrorKind::Mpi,
            ErrorKind::Cuda,
            ErrorKind::Nccl,
            ErrorKind::Callback,
            ErrorKind::NotSupported,
            ErrorKind::OutOfMemory,
            ErrorKind::Internal,
            ErrorKind::InvalidHandle,
        ];
        ALL.iter()
            .copied()
            .find(|k| k.code() == c)
            .unwrap_or(ErrorKind::Internal)
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
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| {
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
        for c in 1..=16 {
            assert_eq!(ErrorKind::from_code(c).code(), c);
        }
        assert_eq!(ErrorKind::from_code(99), ErrorKind::Internal);
    }
}
