//! The device side of a [`HaloPlan`]: one operator's halo buffers on the device (with pinned host
//! mirrors for staging) and the exchange that moves them by the communicator's transport: NCCL,
//! CUDA-aware MPI, or staging through host MPI. Operators pack, exchange and unpack through here and
//! never pick a transport.

use super::HaloPlan;
use crate::comm::{Comm, Requests, Transport};
use crate::error::Result;
use crate::gpu::{self, BLOCK, DevArray, Kernels, Pinned, Stream, grid, launch};
use crate::karg;
use crate::scalar::Scalar;

/// A plan's buffers on the device, and the transport they move by (the communicator's, fixed when
/// they are made).
pub struct DeviceHalo<T> {
    send_idx: DevArray<i64>,
    dsend: DevArray<T>,
    dghost: DevArray<T>,
    hsend: Pinned,
    hghost: Pinned,
    transport: Transport,
}

impl HaloPlan {
    /// This plan's buffers on the device (copies queued on `s`).
    pub fn device<T: Scalar>(&self, s: Stream) -> Result<DeviceHalo<T>> {
        let idx: Vec<i64> = self.send_indices().iter().map(|&i| i as i64).collect();
        let (ns, ng) = (self.n_send(), self.n_ghost());
        let sz = std::mem::size_of::<T>();
        Ok(DeviceHalo {
            send_idx: DevArray::from_host(&idx, s)?,
            dsend: DevArray::zeroed(ns, s)?,
            dghost: DevArray::zeroed(ng, s)?,
            hsend: Pinned::new(ns * sz)?,
            hghost: Pinned::new(ng * sz)?,
            transport: self.comm().transport().0,
        })
    }
}

impl<T: Scalar> DeviceHalo<T> {
    /// The ghost buffer on the device (the plan's `n_ghost` entries).
    pub fn ghost_ptr(&self) -> u64 {
        self.dghost.ptr
    }

    /// Zero the ghost buffer on `s` (before ghost contributions are added into it).
    pub fn clear_ghosts(&self, s: Stream) -> Result<()> {
        let ng = self.dghost.len;
        if ng > 0 {
            let bytes = ng * std::mem::size_of::<T>();
            unsafe { cudarc::driver::result::memset_d8_async(self.dghost.ptr, 0, bytes, s.0) }
                .map_err(|e| gpu::cuda_err("cuMemsetD8Async", e))?;
        }
        Ok(())
    }

    /// The forward exchange on `s`: pack the entries of `x` (this rank's owned part) that other ranks
    /// need and receive this rank's ghosts into [`DeviceHalo::ghost_ptr`]; `local` (work that needs
    /// no ghosts) runs on the device while the data moves. Returns whether host staging was used
    /// (the caller then waits for `s` before the pinned buffers can be reused).
    pub fn forward(
        &mut self,
        plan: &HaloPlan,
        k: &Kernels,
        x: u64,
        s: Stream,
        local: impl FnOnce() -> Result<()>,
    ) -> Result<bool> {
        let ns = plan.n_send() as i64;
        if ns > 0 {
            let (ip, sp) = (self.send_idx.ptr, self.dsend.ptr);
            let args = &mut [karg!(x), karg!(ip), karg!(ns), karg!(sp)];
            unsafe { launch(k.k_pack_i64, grid(ns as usize), BLOCK, s, args)? };
        }
        exchange::<T>(
            plan.comm(),
            (plan.neighbours() != (0, 0)).then_some(self.transport),
            s,
            (plan.recv_ranges(), self.dghost.ptr, &mut self.hghost),
            (plan.send_ranges(), self.dsend.ptr, &mut self.hsend),
            local,
        )
    }

    /// The reverse exchange on `s`: the ghost buffer's contributions go back to their owners and are
    /// added into `x` (this rank's owned part); `local` runs on the device while the data moves.
    /// Returns whether host staging was used (as for [`DeviceHalo::forward`]).
    pub fn reverse(
        &mut self,
        plan: &HaloPlan,
        k: &Kernels,
        x: u64,
        s: Stream,
        local: impl FnOnce() -> Result<()>,
    ) -> Result<bool> {
        let staged = exchange::<T>(
            plan.comm(),
            (plan.neighbours() != (0, 0)).then_some(self.transport),
            s,
            (plan.send_ranges(), self.dsend.ptr, &mut self.hsend),
            (plan.recv_ranges(), self.dghost.ptr, &mut self.hghost),
            local,
        )?;
        let ns = plan.n_send();
        if ns > 0 {
            let (ip, rp, n) = (self.send_idx.ptr, self.dsend.ptr, ns as i64);
            let args = &mut [karg!(x), karg!(ip), karg!(n), karg!(rp)];
            unsafe { launch(k.k_unpack_add_i64, grid(ns), BLOCK, s, args)? };
        }
        Ok(staged)
    }
}

/// (rank, start, end) ranges of a device buffer, the buffer's address, and its pinned host mirror.
type Side<'a> = (&'a [(i32, usize, usize)], u64, &'a mut Pinned);

/// One exchange of device buffers over `transport` (`None`: no neighbours, nothing moves): `recv`'s
/// ranges arrive from their ranks, `send`'s ranges leave for theirs, and `local` (work that needs no
/// halo) runs on the device while the data moves. Returns whether host staging was used (the
/// caller then waits for the stream before the pinned buffers can be reused).
fn exchange<T: Scalar>(
    comm: &Comm,
    transport: Option<Transport>,
    s: Stream,
    recv: Side<'_>,
    send: Side<'_>,
    local: impl FnOnce() -> Result<()>,
) -> Result<bool> {
    let sz = std::mem::size_of::<T>();
    let len = |r: &[(i32, usize, usize)]| r.iter().map(|q| q.2).max().unwrap_or(0);
    let (rr, rbuf, rhost) = recv;
    let (sr, sbuf, shost) = send;
    let mut reqs = Requests::new();
    match transport {
        None => local()?,
        Some(Transport::Nccl) => {
            let nccl = comm
                .nccl()
                .ok_or_else(|| crate::err!(Internal, "NCCL transport without a communicator"))?;
            nccl.group_start()?;
            let queued = (|| -> Result<()> {
                for &(q, a, b) in rr {
                    unsafe { nccl.recv::<T>(rbuf + (a * sz) as u64, b - a, q, s)? };
                }
                for &(q, a, b) in sr {
                    unsafe { nccl.send::<T>(sbuf + (a * sz) as u64, b - a, q, s)? };
                }
                Ok(())
            })();
            // the group is closed whatever happened inside it
            let ended = nccl.group_end();
            queued.and(ended)?;
            local()?;
        }
        Some(Transport::CudaAwareMpi) => {
            gpu::sync(s)?;
            for &(q, a, b) in rr {
                unsafe { comm.irecv_device::<T>(rbuf + (a * sz) as u64, b - a, q, &mut reqs)? };
            }
            for &(q, a, b) in sr {
                unsafe { comm.isend_device::<T>(sbuf + (a * sz) as u64, b - a, q, &mut reqs)? };
            }
            local()?;
            reqs.wait()?;
        }
        Some(Transport::Staging) => {
            unsafe { gpu::dtoh(shost.ptr(), sbuf, len(sr) * sz, s)? };
            gpu::sync(s)?;
            let hr = rhost.as_mut_slice::<T>();
            for &(q, a, b) in rr {
                unsafe { comm.irecv(&mut hr[a..b], q, &mut reqs)? };
            }
            let hs = shost.as_slice::<T>();
            for &(q, a, b) in sr {
                unsafe { comm.isend(&hs[a..b], q, &mut reqs)? };
            }
            local()?;
            reqs.wait()?;
            unsafe { gpu::htod(rbuf, rhost.ptr(), len(rr) * sz, s)? };
        }
    }
    Ok(transport == Some(Transport::Staging))
}
