//! The communication calls of an [`MpiComm`] (collectives, non-blocking point-to-point and their
//! completion): thin checked wrappers over rsmpi's `ffi`, as the rest of `mpi.rs`.

use std::ffi::{c_int, c_void};

use mpi::ffi;

use super::ReduceOp;
use super::mpi::{MpiComm, alive, check};
use crate::error::{Error, ErrorKind, Result};
use crate::scalar::MpiBase;

impl MpiComm {
    pub fn allreduce_f64(&self, vals: &[f64], op: ReduceOp) -> Result<Vec<f64>> {
        alive()?;
        let mut out = vec![0.0; vals.len()];
        let count = i32::try_from(vals.len())
            .map_err(|_| Error::new(ErrorKind::Internal, "allreduce too long"))?;
        // SAFETY: `vals` and `out` are live slices of `count` = `vals.len()` doubles each (`out`
        // made so above, `count` checked to fit an int), matching `RSMPI_DOUBLE`; `self.comm` is
        // live. Every rank passing the same count is the collective's contract (MPI reports a
        // mismatch as an error).
        let bytes = 8 * vals.len() as u64;
        crate::timing::timed(crate::timing::Phase::Reduction, bytes, || {
            // SAFETY: the arguments are as the comment above the call says.
            unsafe {
                let mop = match op {
                    ReduceOp::Sum => ffi::RSMPI_SUM,
                    ReduceOp::Max => ffi::RSMPI_MAX,
                };
                check(
                    ffi::MPI_Allreduce(
                        vals.as_ptr().cast(),
                        out.as_mut_ptr().cast(),
                        count,
                        ffi::RSMPI_DOUBLE,
                        mop,
                        self.comm,
                    ),
                    "MPI_Allreduce",
                )
            }
        })?;
        Ok(out)
    }

    pub fn allgather_i64(&self, vals: &[i64]) -> Result<Vec<i64>> {
        alive()?;
        let size = self.size()? as usize;
        let mut out = vec![0i64; vals.len() * size];
        let count = i32::try_from(vals.len())
            .map_err(|_| Error::new(ErrorKind::Internal, "allgather too long"))?;
        // SAFETY: `vals` holds `count` int64s and `out` `count * size` of them (made so above),
        // matching `RSMPI_INT64_T` for `count` from each of the `size` ranks; `self.comm` is live.
        crate::timing::timed(
            crate::timing::Phase::Reduction,
            8 * out.len() as u64,
            || {
                // SAFETY: the arguments are as the comment above the call says.
                unsafe {
                    check(
                        ffi::MPI_Allgather(
                            vals.as_ptr().cast(),
                            count,
                            ffi::RSMPI_INT64_T,
                            out.as_mut_ptr().cast(),
                            count,
                            ffi::RSMPI_INT64_T,
                            self.comm,
                        ),
                        "MPI_Allgather",
                    )
                }
            },
        )?;
        Ok(out)
    }

    pub fn bcast_i64(&self, buf: &mut [i64], root: i32) -> Result<()> {
        alive()?;
        // SAFETY: `buf` is a live, exclusively borrowed slice of `buf.len()` int64s, matching
        // `RSMPI_INT64_T`. The `as c_int` count is shorter than the slice if it ever exceeded
        // `i32::MAX` (or negative, an MPI error), never longer, so MPI stays inside `buf`.
        unsafe {
            check(
                ffi::MPI_Bcast(
                    buf.as_mut_ptr().cast(),
                    buf.len() as c_int,
                    ffi::RSMPI_INT64_T,
                    root,
                    self.comm,
                ),
                "MPI_Bcast",
            )
        }
    }

    pub fn bcast_bytes(&self, buf: &mut [u8], root: i32) -> Result<()> {
        alive()?;
        // SAFETY: as above, for `buf.len()` bytes as `RSMPI_UINT8_T`.
        unsafe {
            check(
                ffi::MPI_Bcast(
                    buf.as_mut_ptr().cast(),
                    buf.len() as c_int,
                    ffi::RSMPI_UINT8_T,
                    root,
                    self.comm,
                ),
                "MPI_Bcast",
            )
        }
    }

    pub(super) fn bcast_raw(
        &self,
        buf: *mut c_void,
        count: i32,
        base: MpiBase,
        root: i32,
    ) -> Result<()> {
        alive()?;
        // SAFETY: NOT checked here: this safe `pub(super)` fn trusts its callers (`Comm::bcast` in
        // comm/mod.rs) to pass `buf` = a live, exclusively borrowed slice holding `count` elements
        // of `base` (`count` from `elems(len, T::PARTS)`, `base` = `T::BASE`), which they do.
        unsafe {
            check(
                ffi::MPI_Bcast(buf, count, base.datatype(), root, self.comm),
                "MPI_Bcast",
            )
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn allgatherv_raw(
        &self,
        send: *const c_void,
        scount: i32,
        recv: *mut c_void,
        counts: &[i32],
        displs: &[i32],
        base: MpiBase,
    ) -> Result<()> {
        alive()?;
        let t = base.datatype();
        // SAFETY: NOT checked here: this safe `pub(super)` fn trusts its callers
        // (`Comm::allgatherv` and `allgather_bytes` in comm/mod.rs) to pass `send` with `scount`
        // elements of `base` and `recv` with room for the sum of `counts` at `displs` (one entry
        // per rank). `allgather_bytes` sizes `recv` from the gathered lengths; `Comm::allgatherv`
        // relies on its own callers' counts (see the note there).
        crate::timing::timed(crate::timing::Phase::Reduction, 0, || {
            // SAFETY: the arguments are as the comment above the call says.
            unsafe {
                check(
                    ffi::MPI_Allgatherv(
                        send,
                        scount,
                        t,
                        recv,
                        counts.as_ptr(),
                        displs.as_ptr(),
                        t,
                        self.comm,
                    ),
                    "MPI_Allgatherv",
                )
            }
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn gatherv_raw(
        &self,
        send: *const c_void,
        scount: i32,
        recv: *mut c_void,
        counts: &[i32],
        displs: &[i32],
        base: MpiBase,
        root: i32,
    ) -> Result<()> {
        alive()?;
        let t = base.datatype();
        // SAFETY: NOT checked here: as for `allgatherv_raw`; `Comm::gatherv` passes `send` with
        // `scount` elements, and `recv` must hold the sum of `counts` on `root` (MPI reads
        // `counts`, `displs` and `recv` only there).
        unsafe {
            check(
                ffi::MPI_Gatherv(
                    send,
                    scount,
                    t,
                    recv,
                    counts.as_ptr(),
                    displs.as_ptr(),
                    t,
                    root,
                    self.comm,
                ),
                "MPI_Gatherv",
            )
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn scatterv_raw(
        &self,
        send: *const c_void,
        counts: &[i32],
        displs: &[i32],
        recv: *mut c_void,
        rcount: i32,
        base: MpiBase,
        root: i32,
    ) -> Result<()> {
        alive()?;
        let t = base.datatype();
        // SAFETY: NOT checked here: as for `allgatherv_raw`; `Comm::scatterv` passes `recv` with
        // `rcount` elements, and `send` must hold the sum of `counts` on `root` (read only there).
        unsafe {
            check(
                ffi::MPI_Scatterv(
                    send,
                    counts.as_ptr(),
                    displs.as_ptr(),
                    t,
                    recv,
                    rcount,
                    t,
                    root,
                    self.comm,
                ),
                "MPI_Scatterv",
            )
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn alltoallv_raw(
        &self,
        send: *const c_void,
        sc: &[i32],
        sd: &[i32],
        recv: *mut c_void,
        rc: &[i32],
        rd: &[i32],
        base: MpiBase,
    ) -> Result<()> {
        alive()?;
        let t = base.datatype();
        // SAFETY: NOT checked here: as for `allgatherv_raw`; the callers (`Comm::alltoallv`,
        // `alltoallv_i64`) pass per-rank counts and displacements (one entry per rank) that must
        // lie inside `send` and `recv`. `alltoallv_i64` sizes `recv` from the receive counts and
        // takes its send counts from its caller.
        unsafe {
            check(
                ffi::MPI_Alltoallv(
                    send,
                    sc.as_ptr(),
                    sd.as_ptr(),
                    t,
                    recv,
                    rc.as_ptr(),
                    rd.as_ptr(),
                    t,
                    self.comm,
                ),
                "MPI_Alltoallv",
            )
        }
    }
}

impl MpiComm {
    pub(super) fn isend_raw(
        &self,
        buf: *const c_void,
        count: i32,
        base: MpiBase,
        dest: i32,
        tag: i32,
    ) -> Result<ffi::MPI_Request> {
        alive()?;
        // SAFETY: NOT checked here: the only caller, `Comm::isend_device` (an `unsafe fn`), passes
        // on its own contract: `buf` holds `count` elements of `base` and stays alive and
        // unmodified until the request returned here is waited for. `r` is a live local.
        unsafe {
            let mut r: ffi::MPI_Request = ffi::RSMPI_REQUEST_NULL;
            check(
                ffi::MPI_Isend(buf, count, base.datatype(), dest, tag, self.comm, &mut r),
                "MPI_Isend",
            )?;
            Ok(r)
        }
    }

    pub(super) fn irecv_raw(
        &self,
        buf: *mut c_void,
        count: i32,
        base: MpiBase,
        src: i32,
        tag: i32,
    ) -> Result<ffi::MPI_Request> {
        alive()?;
        // SAFETY: as above: `Comm::irecv_device` passes on its contract that `buf` holds `count`
        // elements of `base`, untouched until the request is waited for. `r` is a live local.
        unsafe {
            let mut r: ffi::MPI_Request = ffi::RSMPI_REQUEST_NULL;
            check(
                ffi::MPI_Irecv(buf, count, base.datatype(), src, tag, self.comm, &mut r),
                "MPI_Irecv",
            )?;
            Ok(r)
        }
    }

    pub(super) fn allreduce_sum_raw(
        &self,
        send: *const c_void,
        recv: *mut c_void,
        count: i32,
        base: MpiBase,
    ) -> Result<()> {
        alive()?;
        // SAFETY: NOT checked here: the only caller, `Comm::allreduce_sum`, passes `send` and
        // `recv` from slices, `count` computed from `send.len()`, and has checked that `recv` is
        // at least as long as `send`.
        crate::timing::timed(crate::timing::Phase::Reduction, 0, || {
            // SAFETY: the arguments are as the comment above the call says.
            unsafe {
                check(
                    ffi::MPI_Allreduce(
                        send,
                        recv,
                        count,
                        base.datatype(),
                        ffi::RSMPI_SUM,
                        self.comm,
                    ),
                    "MPI_Allreduce",
                )
            }
        })
    }

    /// `MPI_Comm_split` (errors returned, not fatal, on the new communicator). [collective]
    pub fn split(&self, color: i32, key: i32) -> Result<MpiComm> {
        alive()?;
        // SAFETY: `self.comm` is live; `out` is a live local that `MPI_Comm_split` writes with a
        // new communicator (or `MPI_COMM_NULL` for `MPI_UNDEFINED`), owned and freed by the
        // `MpiComm` made from it at once.
        unsafe {
            let mut out: ffi::MPI_Comm = ffi::RSMPI_COMM_NULL;
            check(
                ffi::MPI_Comm_split(self.comm, color, key, &mut out),
                "MPI_Comm_split",
            )?;
            let c = MpiComm { comm: out };
            check(
                ffi::MPI_Comm_set_errhandler(out, ffi::RSMPI_ERRORS_RETURN),
                "MPI_Comm_set_errhandler",
            )?;
            Ok(c)
        }
    }

    pub fn barrier(&self) -> Result<()> {
        alive()?;
        // SAFETY: `self.comm` is a live communicator owned by `self`.
        unsafe { check(ffi::MPI_Barrier(self.comm), "MPI_Barrier") }
    }

    /// Start `MPI_Iallreduce(SUM)` of doubles.
    ///
    /// # Safety
    /// Both buffers must stay alive and untouched until the request completes.
    pub(super) unsafe fn iallreduce_sum_f64(
        &self,
        send: *const f64,
        recv: *mut f64,
        n: i32,
    ) -> Result<ffi::MPI_Request> {
        alive()?;
        // SAFETY: our caller's contract (`# Safety` above): `send` and `recv` hold `n` doubles and
        // stay alive and untouched until the request completes; `r` is a live local.
        unsafe {
            let mut r: ffi::MPI_Request = ffi::RSMPI_REQUEST_NULL;
            check(
                ffi::MPI_Iallreduce(
                    send.cast(),
                    recv.cast(),
                    n,
                    ffi::RSMPI_DOUBLE,
                    ffi::RSMPI_SUM,
                    self.comm,
                    &mut r,
                ),
                "MPI_Iallreduce",
            )?;
            Ok(r)
        }
    }

    pub fn alltoall_i64(&self, vals: &[i64]) -> Result<Vec<i64>> {
        alive()?;
        let size = self.size()? as usize;
        if !vals.len().is_multiple_of(size.max(1)) {
            return Err(Error::new(
                ErrorKind::Internal,
                "alltoall: length not a multiple of the size",
            ));
        }
        let per = (vals.len() / size.max(1)) as c_int;
        let mut out = vec![0i64; vals.len()];
        // SAFETY: `vals` and `out` both hold `vals.len()` = `per * size` int64s (`out` made so
        // above, the length checked to be a multiple of `size`), as `MPI_Alltoall` with `per`
        // elements per rank needs.
        unsafe {
            check(
                ffi::MPI_Alltoall(
                    vals.as_ptr().cast(),
                    per,
                    ffi::RSMPI_INT64_T,
                    out.as_mut_ptr().cast(),
                    per,
                    ffi::RSMPI_INT64_T,
                    self.comm,
                ),
                "MPI_Alltoall",
            )?;
        }
        Ok(out)
    }
}

/// `MPI_Waitall` on the requests (statuses ignored).
pub(super) fn waitall(reqs: &mut [ffi::MPI_Request]) -> Result<()> {
    if reqs.is_empty() {
        return Ok(());
    }
    // SAFETY: `reqs` is a live, exclusively borrowed slice of `reqs.len()` requests that
    // `MPI_Waitall` may complete and reset; statuses are ignored (the shim's
    // `MPI_STATUSES_IGNORE`).
    unsafe {
        check(
            ffi::MPI_Waitall(
                reqs.len() as c_int,
                reqs.as_mut_ptr(),
                ffi::RSMPI_STATUSES_IGNORE,
            ),
            "MPI_Waitall",
        )
    }
}

/// `MPI_Testall` on the requests: whether all have completed (then they are freed and set to
/// `MPI_REQUEST_NULL`); drives MPI's progress either way.
pub(super) fn testall(reqs: &mut [ffi::MPI_Request]) -> Result<bool> {
    if reqs.is_empty() {
        return Ok(true);
    }
    let mut flag: c_int = 0;
    // SAFETY: as above: `reqs` is a live, exclusive slice of `reqs.len()` requests and `flag` a
    // live local.
    unsafe {
        check(
            ffi::MPI_Testall(
                reqs.len() as c_int,
                reqs.as_mut_ptr(),
                &mut flag,
                ffi::RSMPI_STATUSES_IGNORE,
            ),
            "MPI_Testall",
        )?;
    }
    Ok(flag != 0)
}
