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

/// Ask the kernel to back the whole 2 MiB pages inside `v`'s buffer with huge pages (Linux
/// transparent huge pages in `madvise` mode, as Debian ships them), before the buffer is first
/// written: a long vector or matrix array then costs one TLB entry per 2 MiB instead of per 4 KiB,
/// which a sparse product streaming five arrays at once feels. Buffers under 4 MiB, other systems,
/// or a refusal: nothing happens (it is advice).
pub fn advise_huge<T>(v: &Vec<T>) {
    const HUGE: usize = 2 << 20;
    let bytes = v.capacity() * std::mem::size_of::<T>();
    if bytes < 2 * HUGE {
        return;
    }
    let start = v.as_ptr() as usize;
    let a = start.div_ceil(HUGE) * HUGE;
    let b = (start + bytes) / HUGE * HUGE;
    if b > a {
        // SAFETY: [a, b) lies inside the buffer this Vec owns; MADV_HUGEPAGE changes no contents.
        unsafe {
            libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_HUGEPAGE);
        }
    }
}
