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
    /// One more than the largest index in `send_idx` (0 when nothing is sent): the owned entries
    /// the pack and unpack kernels reach lie below it.
    owned_needed: usize,
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
            owned_needed: self.send_indices().iter().max().map_or(0, |&i| i + 1),
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

    /// Entries of the ghost buffer.
    pub fn ghost_len(&self) -> usize {
        self.dghost.len
    }

    /// The fewest entries the owned part `x` of [`DeviceHalo::forward`] and
    /// [`DeviceHalo::reverse`] may have: their kernels read or add `x[i]` for every index `i` the
    /// plan sends.
    pub fn owned_needed(&self) -> usize {
        self.owned_needed
    }

    /// Zero the ghost buffer on `s` (before ghost contributions are added into it).
    pub fn clear_ghosts(&self, s: Stream) -> Result<()> {
        let ng = self.dghost.len;
        if ng > 0 {
            let bytes = ng * std::mem::size_of::<T>();
            // SAFETY: the ghost buffer holds ng entries, `bytes` bytes (DevArray::zeroed(ng));
            // `s` is a live stream (see gpu::Stream).
            unsafe { cudarc::driver::result::memset_d8_async(self.dghost.ptr, 0, bytes, s.0) }
                .map_err(|e| gpu::cuda_err("cuMemsetD8Async", e))?;
        }
        Ok(())
    }

    /// The forward exchange on `s`: pack the entries of `x` (this rank's owned part) that other ranks
    /// need and receive this rank's ghosts into [`DeviceHalo::ghost_ptr`]; `local` (work that needs
    /// no ghosts) runs on the device while the data moves. Returns whether host staging was used
    /// (the caller then waits for `s` before the pinned buffers can be reused).
    ///
    /// # Safety
    /// `x` must be a device address holding at least [`DeviceHalo::owned_needed`] entries, alive
    /// until `s` has run the work queued here; `s` a live stream of the device, whose context is
    /// current.
    pub unsafe fn forward(
        &mut self,
        plan: &HaloPlan,
        k: &Kernels,
        x: u64,
        s: Stream,
        local: impl FnOnce() -> Result<()>,
    ) -> Result<bool> {
        self.check_plan(plan);
        let ns = plan.n_send() as i64;
        if ns > 0 {
            let (ip, sp) = (self.send_idx.ptr, self.dsend.ptr);
            let args = &mut [karg!(x), karg!(ip), karg!(ns), karg!(sp)];
            // SAFETY: `args` are k_pack_i64's (const T *x, const i64 *idx, i64 n, T *out): it
            // reads idx[0..ns] (send_idx holds ns), x at those indices (below owned_needed, which
            // x holds: our caller's contract) and writes out[0..ns] (dsend holds ns).
            unsafe { launch(k.k_pack_i64, grid(ns as usize), BLOCK, s, args)? };
        }
        // SAFETY: the plan's ranges lie in 0..n_ghost (recv) and 0..n_send (send), the sizes of
        // the ghost and send buffers and of their pinned mirrors (check_plan, `device`); `s` is
        // live with the context current (our caller's contract).
        unsafe {
            exchange::<T>(
                plan.comm(),
                (plan.neighbours() != (0, 0)).then_some(self.transport),
                s,
                (plan.recv_ranges(), self.dghost.ptr, &mut self.hghost),
                (plan.send_ranges(), self.dsend.ptr, &mut self.hsend),
                local,
            )
        }
    }

    /// The reverse exchange on `s`: the ghost buffer's contributions go back to their owners and are
    /// added into `x` (this rank's owned part); `local` runs on the device while the data moves.
    /// Returns whether host staging was used (as for [`DeviceHalo::forward`]).
    ///
    /// # Safety
    /// As for [`DeviceHalo::forward`].
    pub unsafe fn reverse(
        &mut self,
        plan: &HaloPlan,
        k: &Kernels,
        x: u64,
        s: Stream,
        local: impl FnOnce() -> Result<()>,
    ) -> Result<bool> {
        self.check_plan(plan);
        // SAFETY: as in `forward`, the sides swapped: the plan's send ranges (0..n_send) arrive
        // in the send buffer, its receive ranges (0..n_ghost) leave from the ghost buffer.
        let staged = unsafe {
            exchange::<T>(
                plan.comm(),
                (plan.neighbours() != (0, 0)).then_some(self.transport),
                s,
                (plan.send_ranges(), self.dsend.ptr, &mut self.hsend),
                (plan.recv_ranges(), self.dghost.ptr, &mut self.hghost),
                local,
            )?
        };
        let ns = plan.n_send();
        if ns > 0 {
            let (ip, rp, n) = (self.send_idx.ptr, self.dsend.ptr, ns as i64);
            let args = &mut [karg!(x), karg!(ip), karg!(n), karg!(rp)];
            // SAFETY: `args` are k_unpack_add_i64's (T *x, const i64 *idx, i64 n, const T *in):
            // it reads idx[0..ns] and in[0..ns] (send_idx and dsend hold ns) and adds into x at
            // those indices (below owned_needed, which x holds: our caller's contract).
            unsafe { launch(k.k_unpack_add_i64, grid(ns), BLOCK, s, args)? };
        }
        Ok(staged)
    }

    /// Assert that `plan` is the one these buffers were made from (its sizes).
    fn check_plan(&self, plan: &HaloPlan) {
        assert!(
            plan.n_send() == self.send_idx.len
                && plan.n_send() == self.dsend.len
                && plan.n_ghost() == self.dghost.len,
            "device halo buffers used with another plan"
        );
    }
}

/// (rank, start, end) ranges of a device buffer, the buffer's address, and its pinned host mirror.
type Side<'a> = (&'a [(i32, usize, usize)], u64, &'a mut Pinned);

/// One exchange of device buffers over `transport` (`None`: no neighbours, nothing moves): `recv`'s
/// ranges arrive from their ranks, `send`'s ranges leave for theirs, and `local` (work that needs no
/// halo) runs on the device while the data moves. Returns whether host staging was used (the
/// caller then waits for the stream before the pinned buffers can be reused).
///
/// # Safety
/// Each side's buffer must be a device address holding, and its pinned mirror `size_of::<T>()`
/// times, as many entries of `T` as the largest end of its ranges, the device buffers alive until
/// `s` has run the work queued here; `s` a live stream, the device's context current.
unsafe fn exchange<T: Scalar>(
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
                    // SAFETY: entries a..b of the receive buffer (our caller's contract: it holds
                    // the largest end), which stays alive until `s` has run the receive.
                    unsafe { nccl.recv::<T>(rbuf + (a * sz) as u64, b - a, q, s)? };
                }
                for &(q, a, b) in sr {
                    // SAFETY: as above, entries a..b of the send buffer.
                    unsafe { nccl.send::<T>(sbuf + (a * sz) as u64, b - a, q, s)? };
                }
                Ok(())
            })();
            // the group is closed whatever happened inside it
            let ended = nccl.group_end();
            queued.and(ended)?;
            let ran = local();
            // NCCL work is waited for by the NCCL-aware wait before this returns: if a rank's NCCL
            // call failed, this rank's part ends too (comm/nccl/fault.rs)
            nccl.wait(s)?;
            ran?;
        }
        Some(Transport::CudaAwareMpi) => {
            gpu::sync(s)?;
            for &(q, a, b) in rr {
                // SAFETY: entries a..b of the receive buffer (our caller's contract), which is
                // alive and, with `s` synchronised above, untouched by the device until `reqs` is
                // waited for: below, or by its drop on an early return.
                unsafe { comm.irecv_device::<T>(rbuf + (a * sz) as u64, b - a, q, &mut reqs)? };
            }
            for &(q, a, b) in sr {
                // SAFETY: as above, entries a..b of the send buffer, which the pack finished
                // writing before the sync above.
                unsafe { comm.isend_device::<T>(sbuf + (a * sz) as u64, b - a, q, &mut reqs)? };
            }
            local()?;
            reqs.wait()?;
        }
        Some(Transport::Staging) => {
            // SAFETY: the send buffer and its pinned mirror hold len(sr) entries (our caller's
            // contract); the mirror is read only after the sync just below.
            unsafe { gpu::dtoh(shost.ptr(), sbuf, len(sr) * sz, s)? };
            gpu::sync(s)?;
            let hr = rhost.as_mut_slice::<T>();
            for &(q, a, b) in rr {
                // SAFETY: `hr[a..b]` (bounds-checked) lies in the receive mirror, which the
                // caller keeps alive and nothing touches until `reqs` is waited for: below, or by
                // its drop on an early return, within this call.
                unsafe { comm.irecv(&mut hr[a..b], q, &mut reqs)? };
            }
            let hs = shost.as_slice::<T>();
            for &(q, a, b) in sr {
                // SAFETY: as above for `hs[a..b]` in the send mirror, which nothing writes until
                // `reqs` is waited for.
                unsafe { comm.isend(&hs[a..b], q, &mut reqs)? };
            }
            local()?;
            reqs.wait()?;
            // SAFETY: the receive buffer and its mirror hold len(rr) entries (our caller's
            // contract), the mirror complete (reqs waited for above) and not written again before
            // `s` ran the copy: the caller waits for `s` when this returns true (staging).
            unsafe { gpu::htod(rbuf, rhost.ptr(), len(rr) * sz, s)? };
        }
    }
    Ok(transport == Some(Transport::Staging))
}
