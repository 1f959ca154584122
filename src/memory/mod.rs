//! Where data lives. Host and CUDA device memory; asking for the device is checked against what the
//! machine really has (see [`crate::gpu::probe`]).

use crate::error::Result;

/// Memory space of a vector or operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Location {
    Host,
    Cuda,
}

impl Location {
    pub fn from_code(c: i32) -> Option<Location> {
        match c {
            0 => Some(Location::Host),
            1 => Some(Location::Cuda),
            _ => None,
        }
    }
    pub fn code(self) -> i32 {
        match self {
            Location::Host => 0,
            Location::Cuda => 1,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Location::Host => "PARLOPS_MEMORY_HOST",
            Location::Cuda => "PARLOPS_MEMORY_CUDA",
        }
    }

    /// Can data be placed here on this rank? Host always; CUDA only where a driver and a device exist
    /// (`NoDevice` otherwise, with what the probe found).
    pub fn require_available(self) -> Result<()> {
        match self {
            Location::Host => Ok(()),
            Location::Cuda => crate::gpu::require_driver(),
        }
    }
}
