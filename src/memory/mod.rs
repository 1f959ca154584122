//! Where data lives. Host and CUDA device memory; asking for the device is checked against what the
//! machine really has (see [`crate::gpu::probe`]).

use crate::error::Result;

crate::codes::code_table! {
    /// Memory space of a vector or operator.
    pub enum Location {
        Host = 0, PARLOPS_MEMORY_HOST;
        Cuda = 1, PARLOPS_MEMORY_CUDA;
    }
}

impl Location {
    /// Can data be placed here on this rank? Host always; CUDA only where a driver and a device exist
    /// (`NoDevice` otherwise, with what the probe found).
    pub fn require_available(self) -> Result<()> {
        match self {
            Location::Host => Ok(()),
            Location::Cuda => crate::gpu::require_driver(),
        }
    }
}
