//! Point-to-point traffic on a [`Comm`]: non-blocking sends and receives of host memory, or of
//! device memory with a CUDA-aware MPI, completed together by [`Requests::wait`].

use super::{Comm, elems};
use crate::error::Result;
use crate::scalar::Scalar;

/// Outstanding non-blocking point-to-point operations; [`Requests::wait`] completes them. The buffers
/// given to [`Comm::isend`]/[`Comm::irecv`] must stay untouched until then.
pub struct Requests {
    pub(super) reqs: Vec<::mpi::ffi::MPI_Request>,
}

impl Requests {
    pub fn new() -> Requests {
        Requests { reqs: Vec::new() }
    }
    /// Wait for all of them.
    pub fn wait(&mut self) -> Result<()> {
        let r = super::mpi_calls::waitall(&mut self.reqs);
        self.reqs.clear();
        r
    }
    /// Have all of them completed? (Then they are released; otherwise MPI made progress on them.)
    pub fn test(&mut self) -> Result<bool> {
        let done = super::mpi_calls::testall(&mut self.reqs)?;
        if done {
            self.reqs.clear();
        }
        Ok(done)
    }
}

impl Default for Requests {
    fn default() -> Self {
        Requests::new()
    }
}

impl Drop for Requests {
    fn drop(&mut self) {
        if !self.reqs.is_empty() {
            let _ = super::mpi_calls::waitall(&mut self.reqs);
        }
    }
}

/// Tag of parlops' point-to-point traffic (the communicator is private, operations are ordered).
const TAG: i32 = 7301;

impl Comm {
    /// Swap buffers with `partner`: send `send`, receive `recv` (safe: waits before returning; a
    /// partner that is this rank copies). [point-to-point: the partner must call it too]
    pub fn exchange<T: Scalar>(&self, send: &[T], recv: &mut [T], partner: i32) -> Result<()> {
        if partner == self.rank() {
            recv.copy_from_slice(send);
            return Ok(());
        }
        let mut reqs = Requests::new();
        // SAFETY: `recv` and `send` are borrowed for this whole function, and `reqs`, declared
        // after them, is waited for before they are released: by `reqs.wait()` below, or by its
        // drop (which waits) on an early return; nothing touches either buffer meanwhile.
        unsafe {
            self.irecv(recv, partner, &mut reqs)?;
            self.isend(send, partner, &mut reqs)?;
        }
        reqs.wait()
    }

    /// Start sending `buf` to `dest`.
    ///
    /// # Safety
    /// `buf` must stay alive and unmodified until `reqs` has been waited for.
    pub unsafe fn isend<T: Scalar>(&self, buf: &[T], dest: i32, reqs: &mut Requests) -> Result<()> {
        // SAFETY: our caller's contract (`# Safety` above) is passed on: `buf` holds `buf.len()`
        // entries of `T` at its address and stays alive and unmodified until `reqs` is waited for.
        unsafe { self.isend_device::<T>(buf.as_ptr() as usize as u64, buf.len(), dest, reqs) }
    }

    /// Start receiving into `buf` from `src`.
    ///
    /// # Safety
    /// `buf` must stay alive and untouched until `reqs` has been waited for.
    pub unsafe fn irecv<T: Scalar>(
        &self,
        buf: &mut [T],
        src: i32,
        reqs: &mut Requests,
    ) -> Result<()> {
        // SAFETY: as above: `buf` holds `buf.len()` entries at its address, untouched until `reqs`
        // is waited for (our caller's contract).
        unsafe { self.irecv_device::<T>(buf.as_mut_ptr() as usize as u64, buf.len(), src, reqs) }
    }

    /// Start sending `n` entries of `T` at address `ptr`: host memory, or device memory with a
    /// CUDA-aware MPI.
    ///
    /// # Safety
    /// `ptr` must hold `n` entries until `reqs` has been waited for.
    pub unsafe fn isend_device<T: Scalar>(
        &self,
        ptr: u64,
        n: usize,
        dest: i32,
        reqs: &mut Requests,
    ) -> Result<()> {
        let p = ptr as usize as *const std::ffi::c_void;
        let r = self
            .raw
            .isend_raw(p, elems(n, T::PARTS)?, T::BASE, dest, TAG)?;
        reqs.reqs.push(r);
        Ok(())
    }

    /// Start receiving `n` entries of `T` at address `ptr` (host, or device with a CUDA-aware MPI).
    ///
    /// # Safety
    /// As for [`Comm::isend_device`].
    pub unsafe fn irecv_device<T: Scalar>(
        &self,
        ptr: u64,
        n: usize,
        src: i32,
        reqs: &mut Requests,
    ) -> Result<()> {
        let p = ptr as usize as *mut std::ffi::c_void;
        let r = self
            .raw
            .irecv_raw(p, elems(n, T::PARTS)?, T::BASE, src, TAG)?;
        reqs.reqs.push(r);
        Ok(())
    }
}
