//! The reduction of the reproducible mode: binned sums ([`crate::binned`]) merged over the ranks by
//! a user-defined MPI operation (commutative: the merge is exact, so any reduction tree gives the
//! same state) on a datatype of one whole record (an MPI may cut a reduction of doubles into
//! segments anywhere; it cuts one of records between records).

use std::ffi::{c_int, c_void};
use std::sync::OnceLock;
use std::sync::atomic::Ordering;

use mpi::ffi;

use super::Comm;
use super::mpi::{alive, check};
use crate::binned::{Binned, RECORD};
use crate::error::{Error, ErrorKind, Result};

/// The operation's and the record type's handles (pointers in Open MPI, ints in MPICH).
struct Op(ffi::MPI_Op, ffi::MPI_Datatype);
// SAFETY: an MPI_Op is a process-wide handle that MPI lets any thread use once created (it is
// never freed while the process runs: MPI frees it at MPI_Finalize).
unsafe impl Send for Op {}
// SAFETY: as above; the handle is only read after it is made.
unsafe impl Sync for Op {}

static OP: OnceLock<std::result::Result<Op, String>> = OnceLock::new();

/// MPI's call of the operation: `inout` += `in`, record by record.
unsafe extern "C" fn merge(
    invec: *mut c_void,
    inoutvec: *mut c_void,
    len: *mut c_int,
    _dt: *mut ffi::MPI_Datatype,
) {
    // SAFETY: MPI calls the operation with `len` records of RECORD doubles in each buffer (the
    // datatype the reduction names), both live and distinct for the call's length.
    unsafe {
        let n = (*len).max(0) as usize * RECORD;
        let from = std::slice::from_raw_parts(invec as *const f64, n);
        let into = std::slice::from_raw_parts_mut(inoutvec as *mut f64, n);
        Binned::merge_records(into, from);
    }
}

fn op() -> Result<(ffi::MPI_Op, ffi::MPI_Datatype)> {
    let r = OP.get_or_init(|| {
        let mut op = std::mem::MaybeUninit::<ffi::MPI_Op>::uninit();
        let mut ty = std::mem::MaybeUninit::<ffi::MPI_Datatype>::uninit();
        // SAFETY: `merge` has MPI_User_function's signature; `op` and `ty` are live locals MPI
        // writes; RSMPI_DOUBLE is MPI_DOUBLE.
        let made = unsafe {
            check(
                ffi::MPI_Op_create(Some(merge), 1, op.as_mut_ptr()),
                "MPI_Op_create",
            )
            .and_then(|_| {
                check(
                    ffi::MPI_Type_contiguous(RECORD as c_int, ffi::RSMPI_DOUBLE, ty.as_mut_ptr()),
                    "MPI_Type_contiguous",
                )
            })
            .and_then(|_| check(ffi::MPI_Type_commit(ty.as_mut_ptr()), "MPI_Type_commit"))
        };
        made
            // SAFETY: the calls succeeded, so they wrote both handles.
            .map(|_| unsafe { Op(op.assume_init(), ty.assume_init()) })
            .map_err(|e| e.to_string())
    });
    match r {
        Ok(o) => Ok((o.0, o.1)),
        Err(m) => Err(Error::new(ErrorKind::Mpi, m.clone())),
    }
}

impl Comm {
    /// Merge every rank's `n` binned sums (or its error, which every rank then gets): one
    /// reduction in the common case, an agreement round only when some rank failed. [collective]
    pub fn allreduce_binned_checked(
        &self,
        local: Result<Vec<Binned>>,
        n: usize,
    ) -> Result<Vec<Binned>> {
        alive()?;
        let len = (n + 1)
            .checked_mul(RECORD)
            .filter(|&l| l <= i32::MAX as usize)
            .ok_or_else(|| Error::new(ErrorKind::Internal, "binned reduction too long"))?;
        let mut send = vec![0.0f64; len];
        for r in send.chunks_exact_mut(RECORD) {
            Binned::new().to_record(r);
        }
        match &local {
            Ok(v) if v.len() == n => {
                for (b, r) in v.iter().zip(send.chunks_exact_mut(RECORD)) {
                    b.to_record(r);
                }
            }
            Ok(v) => {
                return Err(Error::new(
                    ErrorKind::Internal,
                    format!("allreduce_binned: {} sums given, {n} expected", v.len()),
                ));
            }
            // the failure flag: the last record's sum is 1 on a failing rank (summed apart)
            Err(_) => send[len - 1] = 1.0,
        }
        let (op, ty) = op()?;
        let mut recv = vec![0.0f64; len];
        self.reductions.fetch_add(1, Ordering::Relaxed);
        let raw = self.raw.handle();
        crate::timing::timed(crate::timing::Phase::Reduction, 8 * len as u64, || {
            // SAFETY: `send` and `recv` hold `len` doubles each, `n + 1` records of the committed
            // record type (`len` fits an int, checked), `op` a live operation and `raw` this
            // communicator's live handle; every rank passes the same `n` (the collective's
            // contract).
            unsafe {
                check(
                    ffi::MPI_Allreduce(
                        send.as_ptr().cast(),
                        recv.as_mut_ptr().cast(),
                        (n + 1) as c_int,
                        ty,
                        op,
                        raw,
                    ),
                    "MPI_Allreduce (binned sums)",
                )
            }
        })?;
        if recv[len - 1] != 0.0 {
            let codes =
                self.allgather_i64(&[local.as_ref().err().map_or(0, |e| e.kind.code() as i64)])?;
            return self.spread_failure(local, &codes);
        }
        Ok(recv[..n * RECORD]
            .chunks_exact(RECORD)
            .map(Binned::from_record)
            .collect())
    }
}
