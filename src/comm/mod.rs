//! Communicators: a private duplicate of the caller's `MPI_Comm` and the collectives the rest of the
//! library uses. Every MPI call goes through here, with `MPI_ERRORS_RETURN` set on the duplicate so
//! that MPI failures come back as [`ErrorKind::Mpi`] instead of aborting the caller's program.
//!
//! Collectives that validate arguments first use [`Comm::agree`]: every rank contributes its local
//! verdict, and either all ranks go on or all ranks return an error (with the failing rank's words).

mod agree;
mod binned;
pub mod halo;
mod mpi;
mod mpi_calls;
pub mod nccl;
mod p2p;

use self::mpi::MpiComm;
pub use self::mpi::{
    finalize, init, mpi_cuda_aware, mpi_initialized, mpi_library_version, mpi_standard_version,
};
pub use self::p2p::Requests;

pub(crate) use self::agree::list_hash;

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, ErrorKind, Result};
use crate::scalar::{MpiBase, Scalar};

/// Reduction operation for [`Comm::allreduce_f64`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Max,
}

/// A communicator owned by parlops (a duplicate of the caller's).
pub struct Comm {
    raw: MpiComm,
    rank: i32,
    size: i32,
    node_rank: i32,
    node_size: i32,
    host: String,
    reductions: AtomicU64,
    /// The NCCL communicator over the same ranks, for device data (`parlops_comm_create_nccl`).
    nccl: Option<self::nccl::Nccl>,
}

/// How device buffers move between ranks on a communicator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Nccl,
    CudaAwareMpi,
    /// Through pinned host buffers and host MPI.
    Staging,
}

impl Comm {
    /// Duplicate the caller's communicator. [collective]
    ///
    /// # Safety
    /// `comm` must be a valid communicator handle of the MPI library this crate was built against.
    pub unsafe fn from_mpi(comm: ::mpi::ffi::MPI_Comm) -> Result<Comm> {
        // SAFETY: our caller's contract (`# Safety` above): `comm` is a valid communicator of this
        // MPI, which is what `MpiComm::dup` requires.
        let raw = unsafe { MpiComm::dup(comm)? };
        let rank = raw.rank()?;
        let size = raw.size()?;
        let (node_rank, node_size) = raw.node_rank_size()?;
        let host = self::mpi::processor_name();
        Ok(Comm {
            raw,
            rank,
            size,
            node_rank,
            node_size,
            host,
            reductions: AtomicU64::new(0),
            nccl: None,
        })
    }

    /// This communicator with an NCCL communicator for device data attached.
    pub fn with_nccl(mut self, n: self::nccl::Nccl) -> Comm {
        self.nccl = Some(n);
        self
    }
    /// The attached NCCL communicator.
    pub fn nccl(&self) -> Option<&self::nccl::Nccl> {
        self.nccl.as_ref()
    }

    /// How device data moves on this communicator, and why: NCCL when attached; CUDA-aware MPI when
    /// the MPI says so (`MPIX_Query_cuda_support`) and PARLOPS_CUDA_AWARE_MPI is not 0, or when
    /// PARLOPS_CUDA_AWARE_MPI=1; staging through pinned host buffers otherwise.
    pub fn transport(&self) -> (Transport, String) {
        if let Some(n) = &self.nccl {
            return (
                Transport::Nccl,
                format!("NCCL {} (communicator attached)", n.version),
            );
        }
        let setting = crate::config::env()
            .get("PARLOPS_CUDA_AWARE_MPI")
            .map(|v| v.trim().to_string());
        let says = mpi_cuda_aware();
        match (setting.as_deref(), says) {
            (Some("0"), _) => (
                Transport::Staging,
                "staging through pinned host buffers (PARLOPS_CUDA_AWARE_MPI=0)".into(),
            ),
            (Some("1"), _) => (
                Transport::CudaAwareMpi,
                "CUDA-aware MPI (PARLOPS_CUDA_AWARE_MPI=1)".into(),
            ),
            (_, Some(true)) => (
                Transport::CudaAwareMpi,
                "CUDA-aware MPI (MPIX_Query_cuda_support() = 1)".into(),
            ),
            (_, Some(false)) => (
                Transport::Staging,
                "staging through pinned host buffers (MPIX_Query_cuda_support() = 0)".into(),
            ),
            (_, None) => (
                Transport::Staging,
                "staging through pinned host buffers (this MPI does not say whether it is CUDA-aware; PARLOPS_CUDA_AWARE_MPI=1 overrides)".into(),
            ),
        }
    }

    /// Rank `root`'s bytes on every rank (same length everywhere). [collective]
    pub fn bcast_bytes(&self, buf: &mut [u8], root: i32) -> Result<()> {
        self.raw.bcast_bytes(buf, root)
    }

    /// Duplicate `MPI_COMM_WORLD`. [collective]
    pub fn world() -> Result<Comm> {
        // SAFETY: `RSMPI_COMM_WORLD` is the rsmpi shim's constant for `MPI_COMM_WORLD`, a valid
        // communicator of this MPI (`dup` checks that MPI is running).
        unsafe { Comm::from_mpi(::mpi::ffi::RSMPI_COMM_WORLD) }
    }

    /// Duplicate `MPI_COMM_SELF`.
    pub fn self_comm() -> Result<Comm> {
        // SAFETY: as above: `RSMPI_COMM_SELF` is the shim's `MPI_COMM_SELF`, a valid communicator.
        unsafe { Comm::from_mpi(::mpi::ffi::RSMPI_COMM_SELF) }
    }

    pub fn rank(&self) -> i32 {
        self.rank
    }
    pub fn size(&self) -> i32 {
        self.size
    }
    /// Rank among the processes of this communicator on the same node.
    pub fn node_rank(&self) -> i32 {
        self.node_rank
    }
    pub fn node_size(&self) -> i32 {
        self.node_size
    }
    pub fn host(&self) -> &str {
        &self.host
    }
    /// The private duplicate (for code that needs to talk MPI directly).
    pub fn raw(&self) -> ::mpi::ffi::MPI_Comm {
        self.raw.handle()
    }
    /// Count a reduction made outside MPI (NCCL).
    pub(crate) fn count_reduction(&self) {
        self.reductions.fetch_add(1, Ordering::Relaxed);
    }

    /// Number of global reductions (allreduce) this communicator has performed.
    pub fn reduction_count(&self) -> u64 {
        self.reductions.load(Ordering::Relaxed)
    }

    /// Allreduce of `f64` values in which each rank may instead contribute an error: one reduction in
    /// the common case, an extra agreement round only when some rank failed. `local` is `Ok(values)`
    /// or `Err`; `n` is the number of values every rank reduces. [collective]
    pub fn allreduce_checked(
        &self,
        local: Result<Vec<f64>>,
        n: usize,
        op: ReduceOp,
    ) -> Result<Vec<f64>> {
        let identity = match op {
            ReduceOp::Sum => 0.0,
            ReduceOp::Max => f64::NEG_INFINITY,
        };
        let mut buf = vec![identity; n + 1];
        match &local {
            Ok(v) if v.len() == n => buf[..n].copy_from_slice(v),
            Ok(v) => {
                return Err(Error::new(
                    ErrorKind::Internal,
                    format!("allreduce_checked: {} values given, {n} expected", v.len()),
                ));
            }
            Err(_) => buf[n] = 1.0,
        }
        let out = self.allreduce_f64(&buf, op)?;
        if out[n] != 0.0 && out[n] != f64::NEG_INFINITY {
            let codes =
                self.allgather_i64(&[local.as_ref().err().map_or(0, |e| e.kind.code() as i64)])?;
            return self.spread_failure(local, &codes);
        }
        Ok(out[..n].to_vec())
    }

    /// Every rank's `n` values (or its error), on every rank, in rank order; one allgather in the
    /// common case, an agreement round only when some rank failed. Counted as one reduction. [collective]
    pub fn allgather_checked(&self, local: Result<Vec<f64>>, n: usize) -> Result<Vec<Vec<f64>>> {
        let mut buf = vec![0i64; n + 1];
        match &local {
            Ok(v) if v.len() == n => {
                for (b, x) in buf.iter_mut().zip(v) {
                    *b = x.to_bits() as i64;
                }
            }
            Ok(v) => {
                return Err(Error::new(
                    ErrorKind::Internal,
                    format!("allgather_checked: {} values given, {n} expected", v.len()),
                ));
            }
            Err(e) => buf[n] = e.kind.code() as i64,
        }
        self.reductions.fetch_add(1, Ordering::Relaxed);
        let all = self.allgather_i64(&buf)?;
        let codes: Vec<i64> = all.chunks(n + 1).map(|c| c[n]).collect();
        if codes.iter().any(|&c| c != 0) {
            self.spread_failure(local, &codes)?;
        }
        Ok(all
            .chunks(n + 1)
            .map(|c| c[..n].iter().map(|&b| f64::from_bits(b as u64)).collect())
            .collect())
    }

    /// Start a non-blocking sum of `n` values to which each rank may contribute an error instead (the
    /// pipelined solvers overlap it with work). Counted as one reduction. [collective]
    pub fn iallreduce_checked(&self, local: Result<Vec<f64>>, n: usize) -> Result<PendingSum> {
        let mut send = vec![0.0; n + 1].into_boxed_slice();
        let mut local_err = None;
        match local {
            Ok(v) if v.len() == n => send[..n].copy_from_slice(&v),
            Ok(v) => {
                return Err(Error::new(
                    ErrorKind::Internal,
                    format!("iallreduce: {} values, {n} expected", v.len()),
                ));
            }
            Err(e) => {
                send[n] = 1.0;
                local_err = Some(e);
            }
        }
        let mut recv = vec![0.0; n + 1].into_boxed_slice();
        self.reductions.fetch_add(1, Ordering::Relaxed);
        let mut req = Requests::new();
        // SAFETY: `send` and `recv` are boxed slices of `n + 1` doubles, moved into the returned
        // `PendingSum` together with the request: their heap buffers do not move, nothing writes
        // them until `finish`, which waits for the request first, and a `PendingSum` dropped
        // unfinished waits for it (its `req` field is dropped before the buffers) before they are
        // freed.
        let r = unsafe {
            self.raw
                .iallreduce_sum_f64(send.as_ptr(), recv.as_mut_ptr(), (n + 1) as i32)?
        };
        req.reqs.push(r);
        Ok(PendingSum {
            send,
            recv,
            req,
            local_err,
            n,
        })
    }

    /// Element-wise allreduce of `f64` values. [collective]
    pub fn allreduce_f64(&self, vals: &[f64], op: ReduceOp) -> Result<Vec<f64>> {
        self.reductions.fetch_add(1, Ordering::Relaxed);
        self.raw.allreduce_f64(vals, op)
    }

    /// Every rank's byte string, in rank order, on every rank. [collective]
    pub fn allgather_bytes(&self, bytes: &[u8]) -> Result<Vec<Vec<u8>>> {
        let lens = self.allgather_i64(&[bytes.len() as i64])?;
        let total: i64 = lens.iter().sum();
        let mut recv = vec![0u8; total as usize];
        let (c, d) = counts_displs(&lens, 1)?;
        self.raw.allgatherv_raw(
            bytes.as_ptr().cast(),
            elems(bytes.len(), 1)?,
            recv.as_mut_ptr().cast(),
            &c,
            &d,
            MpiBase::U8,
        )?;
        let mut out = Vec::new();
        let mut at = 0usize;
        for &l in &lens {
            out.push(recv[at..at + l as usize].to_vec());
            at += l as usize;
        }
        Ok(out)
    }

    /// Every rank's `vals` (all of the same length), concatenated in rank order. [collective]
    pub fn allgather_i64(&self, vals: &[i64]) -> Result<Vec<i64>> {
        self.raw.allgather_i64(vals)
    }

    /// recv = element-wise sum of every rank's `send` (same length everywhere). [collective]
    pub fn allreduce_sum<T: Scalar>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        if recv.len() < send.len() {
            // MPI would write send.len() entries into recv: never past its end
            crate::bail!(
                Internal,
                "allreduce_sum: a receive buffer of {} entries for {} sent",
                recv.len(),
                send.len()
            );
        }
        self.reductions.fetch_add(1, Ordering::Relaxed);
        self.raw.allreduce_sum_raw(
            send.as_ptr().cast(),
            recv.as_mut_ptr().cast(),
            elems(send.len(), T::PARTS)?,
            T::BASE,
        )
    }

    /// A sub-communicator of the ranks passing the same `color`, ordered by `key`. [collective]
    pub fn split(&self, color: i32, key: i32) -> Result<Comm> {
        let raw = self.raw.split(color, key)?;
        let rank = raw.rank()?;
        let size = raw.size()?;
        Ok(Comm {
            raw,
            rank,
            size,
            node_rank: self.node_rank,
            node_size: self.node_size,
            host: self.host.clone(),
            reductions: AtomicU64::new(0),
            nccl: None,
        })
    }

    /// Wait until every rank gets here. [collective]
    pub fn barrier(&self) -> Result<()> {
        self.raw.barrier()
    }

    /// Broadcast `buf` from `root`. [collective]
    pub fn bcast<T: Scalar>(&self, buf: &mut [T], root: i32) -> Result<()> {
        self.raw.bcast_raw(
            buf.as_mut_ptr().cast(),
            elems(buf.len(), T::PARTS)?,
            T::BASE,
            root,
        )
    }

    /// Concatenate every rank's `send` (rank r sends `counts[r]` elements) into `recv` on every rank. [collective]
    pub fn allgatherv<T: Scalar>(&self, send: &[T], recv: &mut [T], counts: &[i64]) -> Result<()> {
        let (c, d) = counts_displs(counts, T::PARTS)?;
        self.raw.allgatherv_raw(
            send.as_ptr().cast(),
            elems(send.len(), T::PARTS)?,
            recv.as_mut_ptr().cast(),
            &c,
            &d,
            T::BASE,
        )
    }

    /// Concatenate every rank's `send` into `recv` on `root` (`recv` is ignored elsewhere). [collective]
    pub fn gatherv<T: Scalar>(
        &self,
        send: &[T],
        recv: &mut [T],
        counts: &[i64],
        root: i32,
    ) -> Result<()> {
        let (c, d) = counts_displs(counts, T::PARTS)?;
        self.raw.gatherv_raw(
            send.as_ptr().cast(),
            elems(send.len(), T::PARTS)?,
            recv.as_mut_ptr().cast(),
            &c,
            &d,
            T::BASE,
            root,
        )
    }

    /// Split `send` on `root` into consecutive pieces of `counts[r]` elements, one per rank. [collective]
    pub fn scatterv<T: Scalar>(
        &self,
        send: &[T],
        counts: &[i64],
        recv: &mut [T],
        root: i32,
    ) -> Result<()> {
        let (c, d) = counts_displs(counts, T::PARTS)?;
        self.raw.scatterv_raw(
            send.as_ptr().cast(),
            &c,
            &d,
            recv.as_mut_ptr().cast(),
            elems(recv.len(), T::PARTS)?,
            T::BASE,
            root,
        )
    }

    /// All-to-all with per-rank counts and displacements in elements. [collective]
    pub fn alltoallv<T: Scalar>(
        &self,
        send: &[T],
        send_counts: &[i64],
        send_displs: &[i64],
        recv: &mut [T],
        recv_counts: &[i64],
        recv_displs: &[i64],
    ) -> Result<()> {
        let sc = scaled(send_counts, T::PARTS)?;
        let sd = scaled(send_displs, T::PARTS)?;
        let rc = scaled(recv_counts, T::PARTS)?;
        let rd = scaled(recv_displs, T::PARTS)?;
        self.raw.alltoallv_raw(
            send.as_ptr().cast(),
            &sc,
            &sd,
            recv.as_mut_ptr().cast(),
            &rc,
            &rd,
            T::BASE,
        )
    }
}

/// A sum-allreduce in flight ([`Comm::iallreduce_checked`]); [`PendingSum::finish`] completes it.
pub struct PendingSum {
    /// First, so that it is dropped first: dropping an unfinished sum waits for the request
    /// (`Requests`' drop) before `send` and `recv`, which MPI may still read and write, are freed.
    req: Requests,
    send: Box<[f64]>,
    recv: Box<[f64]>,
    local_err: Option<Error>,
    n: usize,
}

impl PendingSum {
    /// A sum already complete (the reproducible mode's, merged at once).
    pub fn ready(values: Vec<f64>) -> PendingSum {
        let n = values.len();
        let mut recv = values;
        recv.push(0.0);
        PendingSum {
            req: Requests::new(),
            send: Box::new([]),
            recv: recv.into_boxed_slice(),
            local_err: None,
            n,
        }
    }

    /// Has the sum arrived? Local and non-blocking (it drives MPI's progress, on the halo exchanges
    /// in flight too); [`PendingSum::finish`] is still called, and then returns at once.
    pub fn test(&mut self) -> Result<bool> {
        self.req.test()
    }

    /// Wait and return the sums, or the error of some rank (on every rank). [collective]
    pub fn finish(mut self, comm: &Comm) -> Result<Vec<f64>> {
        self.req.wait()?;
        let _ = &self.send;
        if self.recv[self.n] != 0.0 {
            let code = self.local_err.as_ref().map_or(0, |e| e.kind.code() as i64);
            let codes = comm.allgather_i64(&[code])?;
            let local = match self.local_err.take() {
                Some(e) => Err(e),
                None => Ok(()),
            };
            comm.spread_failure(local, &codes)?;
        }
        Ok(self.recv[..self.n].to_vec())
    }
}

impl Comm {
    /// Every rank sends `counts[q]` values to rank q; returns what each rank sent to this one. [collective]
    pub fn alltoall_i64(&self, vals: &[i64]) -> Result<Vec<i64>> {
        self.raw.alltoall_i64(vals)
    }

    /// All-to-all of index lists (`send_counts[q]` entries of `send` go to rank q). [collective]
    pub fn alltoallv_i64(
        &self,
        send: &[i64],
        send_counts: &[i64],
        recv_counts: &[i64],
    ) -> Result<Vec<i64>> {
        // counts too large for MPI, or a receive buffer too large for memory, on one rank: agreed
        // before the exchange, so that no rank is left in it alone
        let local = (|| {
            let (sc, sd) = counts_displs(send_counts, 1)?;
            let (rc, rd) = counts_displs(recv_counts, 1)?;
            let total = recv_counts
                .iter()
                .try_fold(0i64, |a, &c| a.checked_add(c))
                .filter(|t| *t >= 0)
                .ok_or_else(|| {
                    crate::err!(InvalidArgument, "receive counts {recv_counts:?} overflow")
                })?;
            let recv =
                crate::error::try_vec(total as usize, 0i64, "an all-to-all's receive buffer")?;
            Ok((sc, sd, rc, rd, recv))
        })();
        let (sc, sd, rc, rd, mut recv) = self.agree(local)?;
        self.raw.alltoallv_raw(
            send.as_ptr().cast(),
            &sc,
            &sd,
            recv.as_mut_ptr().cast(),
            &rc,
            &rd,
            MpiBase::I64,
        )?;
        Ok(recv)
    }
}

/// Number of MPI base elements for `n` scalars, as the `int` MPI wants.
fn elems(n: usize, parts: usize) -> Result<i32> {
    let total = (n as u128) * parts as u128;
    i32::try_from(total).map_err(|_| {
        Error::new(
            ErrorKind::NotSupported,
            format!(
                "a single MPI transfer of {n} elements exceeds MPI's int count limit (2^31-1 reals)"
            ),
        )
    })
}

fn scaled(v: &[i64], parts: usize) -> Result<Vec<i32>> {
    v.iter().map(|&x| elems(x.max(0) as usize, parts)).collect()
}

fn counts_displs(counts: &[i64], parts: usize) -> Result<(Vec<i32>, Vec<i32>)> {
    let c = scaled(counts, parts)?;
    let mut d = Vec::with_capacity(c.len());
    let mut acc: i64 = 0;
    for &x in &c {
        d.push(i32::try_from(acc).map_err(|_| {
            Error::new(
                ErrorKind::NotSupported,
                format!("displacement {acc} exceeds MPI's int limit in a single transfer"),
            )
        })?);
        acc += x as i64;
    }
    Ok((c, d))
}

impl MpiBase {
    fn datatype(self) -> ::mpi::ffi::MPI_Datatype {
        // SAFETY: reads the rsmpi shim's datatype constants (`const` objects of its C part, never
        // written).
        unsafe {
            match self {
                MpiBase::F32 => ::mpi::ffi::RSMPI_FLOAT,
                MpiBase::F64 => ::mpi::ffi::RSMPI_DOUBLE,
                MpiBase::U8 => ::mpi::ffi::RSMPI_UINT8_T,
                MpiBase::I64 => ::mpi::ffi::RSMPI_INT64_T,
            }
        }
    }
}
