//! Where data lives. Host memory is implemented; CUDA memory has its slot in every API, and asking for
//! it is checked against what the machine really has (see [`cuda::probe`]).

pub mod cuda;

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
    /// (device vectors arrive with the GPU work: until then a present device gives `NotSupported`).
    pub fn require_available(self) -> Result<()> {
        match self {
            Location::Host => Ok(()),
            Location::Cuda => {
                let p = cuda::probe();
                if p.device_count.unwrap_or(0) == 0 {
                    crate::bail!(
                        NoDevice,
                        "PARLOPS_MEMORY_CUDA was asked for, but this process has no usable CUDA device ({})",
                        p.describe()
                    );
                }
                crate::bail!(
                    NotSupported,
                    "PARLOPS_MEMORY_CUDA: a CUDA device is present ({}) but device vectors are not implemented in parlops {} yet",
                    p.describe(),
                    env!("CARGO_PKG_VERSION")
                )
            }
        }
    }
}
