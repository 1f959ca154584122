//! Halo exchange plan: which ghost entries this rank needs from which owners, and which of its own
//! entries it sends to whom. Built once (collectively) per operator and reused by every apply; the
//! plan moves the bytes, on the host here and on the device in [`device`].

pub mod device;

use crate::timing::Phase;
use std::sync::Arc;

use super::{Comm, Requests};
use crate::error::Result;
use crate::scalar::Scalar;

/// A reusable halo exchange over a split layout.
pub struct HaloPlan {
    comm: Arc<Comm>,
    /// Owners we receive ghosts from, with their contiguous range in the ghost array.
    recv: Vec<(i32, usize, usize)>,
    /// Ranks we send to, with their range in `send_idx`.
    send: Vec<(i32, usize, usize)>,
    /// Local indices (into the owned part) to pack, grouped by destination.
    send_idx: Vec<usize>,
    n_ghost: usize,
}

impl HaloPlan {
    /// `ghosts`: strictly increasing global indices, out of `n`, that this rank needs and does not
    /// own, where rank r owns the `lens[r]` indices from `offs[r]` (a split layout). [collective]
    pub fn new(
        comm: &Arc<Comm>,
        offs: &[i64],
        lens: &[i64],
        n: i64,
        ghosts: &[i64],
        pre: Result<()>,
    ) -> Result<HaloPlan> {
        let comm = comm.clone();
        let p = comm.size() as usize;
        // owner of each ghost; ghosts are sorted, so each owner's ghosts are contiguous
        let local = pre.and_then(|_| {
            let mut counts = vec![0i64; p];
            let mut prev = -1i64;
            for &g in ghosts {
                if g <= prev || g < 0 || g >= n {
                    crate::bail!(
                        InvalidArgument,
                        "ghost column {g} is out of range 0..{n} or not strictly increasing (after {prev})"
                    );
                }
                prev = g;
                let q = offs.partition_point(|&o| o <= g) - 1;
                if q == comm.rank() as usize {
                    crate::bail!(InvalidArgument, "column {g} is owned by this rank but listed as a ghost");
                }
                counts[q] += 1;
            }
            Ok(counts)
        });
        let counts = match &local {
            Ok(c) => c.clone(),
            Err(_) => vec![0; p],
        };
        comm.agree(local.map(|_| ()))?;
        let wanted_by = comm.alltoall_i64(&counts)?;
        let asked = comm.alltoallv_i64(ghosts, &counts, &wanted_by)?;
        let me = comm.rank() as usize;
        let (start, len) = (offs[me], lens[me]);
        let bad = asked.iter().find(|&&g| g < start || g >= start + len);
        comm.agree(match bad {
            Some(g) => Err(crate::err!(
                Internal,
                "halo plan: rank asked for {g}, not owned here"
            )),
            None => Ok(()),
        })?;
        let send_idx: Vec<usize> = asked.iter().map(|&g| (g - start) as usize).collect();
        let mut send = Vec::new();
        let mut at = 0usize;
        for (q, &c) in wanted_by.iter().enumerate() {
            if c > 0 {
                send.push((q as i32, at, at + c as usize));
                at += c as usize;
            }
        }
        let mut recv = Vec::new();
        let mut at = 0usize;
        for (q, &c) in counts.iter().enumerate() {
            if c > 0 {
                recv.push((q as i32, at, at + c as usize));
                at += c as usize;
            }
        }
        Ok(HaloPlan {
            comm,
            recv,
            send,
            send_idx,
            n_ghost: ghosts.len(),
        })
    }

    pub fn n_ghost(&self) -> usize {
        self.n_ghost
    }
    /// Number of entries this rank sends per forward exchange.
    pub fn n_send(&self) -> usize {
        self.send_idx.len()
    }
    /// (owner rank, start, end) of each owner's ghosts in the ghost array.
    pub fn recv_ranges(&self) -> &[(i32, usize, usize)] {
        &self.recv
    }
    /// (destination rank, start, end) of each destination's entries in the send buffer.
    pub fn send_ranges(&self) -> &[(i32, usize, usize)] {
        &self.send
    }
    /// Owned entries packed into the send buffer, in order.
    pub fn send_indices(&self) -> &[usize] {
        &self.send_idx
    }
    pub fn comm(&self) -> &Arc<Comm> {
        &self.comm
    }

    /// Ranks exchanged with (receive, send).
    pub fn neighbours(&self) -> (usize, usize) {
        (self.recv.len(), self.send.len())
    }

    /// Start the forward exchange: receive ghosts into `ghost`, pack and send owned values.
    ///
    /// # Safety
    /// `ghost` and `sendbuf` must stay alive and not be touched until `reqs` is waited for.
    pub unsafe fn start_forward<T: Scalar>(
        &self,
        owned: &[T],
        sendbuf: &mut [T],
        ghost: &mut [T],
        reqs: &mut Requests,
    ) -> Result<()> {
        // SAFETY: our caller's contract (`# Safety` above) is what irecv and isend require of the
        // (bounds-checked) sub-slices handed to them: `ghost` and `sendbuf` stay alive and
        // untouched until `reqs` is waited for. `sendbuf` is packed before any send is posted and
        // not written after.
        unsafe {
            for &(q, a, b) in &self.recv {
                self.comm.irecv(&mut ghost[a..b], q, reqs)?;
            }
            for (s, &i) in sendbuf.iter_mut().zip(&self.send_idx) {
                *s = owned[i];
            }
            for &(q, a, b) in &self.send {
                self.comm.isend(&sendbuf[a..b], q, reqs)?;
            }
        }
        Ok(())
    }

    /// Start the reverse exchange: send ghost contributions to their owners, receive the
    /// contributions to owned entries into `recvbuf` (add them with [`HaloPlan::add_reverse`]).
    ///
    /// # Safety
    /// `ghost` and `recvbuf` must stay alive and not be touched (`ghost` not written) until
    /// `reqs` is waited for.
    pub unsafe fn start_reverse<T: Scalar>(
        &self,
        ghost: &[T],
        recvbuf: &mut [T],
        reqs: &mut Requests,
    ) -> Result<()> {
        // SAFETY: our caller's contract (`# Safety` above) is what irecv and isend require of the
        // (bounds-checked) sub-slices handed to them: `recvbuf` untouched and `ghost` unwritten,
        // both alive, until `reqs` is waited for.
        unsafe {
            for &(q, a, b) in &self.send {
                self.comm.irecv(&mut recvbuf[a..b], q, reqs)?;
            }
            for &(q, a, b) in &self.recv {
                self.comm.isend(&ghost[a..b], q, reqs)?;
            }
        }
        Ok(())
    }

    /// The forward exchange on the host: ghosts into `ghost` (`sendbuf` packed from `owned`), with
    /// `local` (work that needs no ghosts) run while the data moves.
    pub fn forward<T: Scalar>(
        &self,
        owned: &[T],
        sendbuf: &mut [T],
        ghost: &mut [T],
        local: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let mut reqs = Requests::new();
        let bytes = ((sendbuf.len() + ghost.len()) * std::mem::size_of::<T>()) as u64;
        // one halo event: its start and its wait (the local work between them is the caller's)
        crate::timing::timed(Phase::Halo, bytes, || {
            // SAFETY: sendbuf and ghost stay borrowed until reqs.wait() (or its drop) below.
            unsafe { self.start_forward(owned, sendbuf, ghost, &mut reqs) }
        })?;
        local()?;
        crate::timing::timed_n(Phase::Halo, 0, 0, || reqs.wait())
    }

    /// The reverse exchange on the host: `ghost`'s contributions to their owners, this rank's into
    /// `recvbuf` (add them with [`HaloPlan::add_reverse`]), with `local` run while the data moves.
    pub fn reverse<T: Scalar>(
        &self,
        ghost: &[T],
        recvbuf: &mut [T],
        local: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let mut reqs = Requests::new();
        let bytes = ((recvbuf.len() + ghost.len()) * std::mem::size_of::<T>()) as u64;
        crate::timing::timed(Phase::Halo, bytes, || {
            // SAFETY: ghost and recvbuf stay borrowed until reqs.wait() (or its drop) below.
            unsafe { self.start_reverse(ghost, recvbuf, &mut reqs) }
        })?;
        local()?;
        crate::timing::timed_n(Phase::Halo, 0, 0, || reqs.wait())
    }

    /// owned[i] += contributions received by the reverse exchange.
    pub fn add_reverse<T: Scalar>(&self, recvbuf: &[T], owned: &mut [T]) {
        for (v, &i) in recvbuf.iter().zip(&self.send_idx) {
            owned[i] += *v;
        }
    }
}
