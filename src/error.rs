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
