//! New values for a CSR matrix with the same pattern (a time step, a Newton step): the caller's
//! values in the order it gave them at construction, staged into the blocks' storage (a compact
//! block is laid out again from them), then swapped in while no product reads the blocks. The
//! pattern and everything it alone decides (the halo plan, the ghost list, the compressed-row lists,
//! the band of the streamed product) stay. Preconditioners built on the matrix see the change through
//! its version ([`super::super::LinearOperator::values_version`]) and are refreshed by the caller or
//! a solver's reuse policy.

use std::sync::atomic::Ordering;

use super::block::{Arr, Idx, LocalCsr};
use super::{Blocks, CsrOp};
use crate::error::{Result, try_vec};
use crate::scalar::Scalar;

/// What a CSR matrix's values were given as, which decides what an update takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Origin {
    /// This rank's rows with global columns (`parlops_op_create_csr`): one array, in that order.
    Rows,
    /// hypre's split, copied: the diag block's values and the offd block's, each in its order.
    ParCsr,
    /// hypre's split, wrapped: the caller changes its arrays in place and says so; the pattern's
    /// fingerprint at construction (row pointers and columns of both blocks) catches a changed one.
    Wrapped(u64),
}

/// The new values of an update.
pub enum NewValues<'a, T> {
    /// [`Origin::Rows`]: this rank's entries in the order of construction.
    Rows(&'a [T]),
    /// [`Origin::ParCsr`]: the diag block's values and the offd block's.
    Blocks(&'a [T], &'a [T]),
    /// [`Origin::Wrapped`]: the caller's arrays hold them already.
    InPlace,
}

/// A block's new storage, made before the swap (allocations may fail; the swap cannot).
pub(super) enum Staged<T: Scalar> {
    /// The block laid out again (a compact block).
    Block(Box<LocalCsr<T>>),
    /// New values for a block's own CSR arrays.
    Values(Vec<T>),
    /// A borrowed block: the caller's arrays already hold them.
    Keep,
}

/// An update checked and staged on this rank, to commit once every rank has staged its own. It
/// holds the matrix (its backends' copies and its blocks, write-locked) from the check to the swap,
/// so no product and no solve starts in between.
pub struct Prepared<'a, T: Scalar> {
    blocks: std::sync::RwLockWriteGuard<'a, Blocks<T>>,
    held: crate::exec::Held<'a, T>,
    diag: Staged<T>,
    offd: Staged<T>,
}

/// A 64-bit fingerprint of bytes (FNV-1a over 8-byte words).
fn fingerprint_bytes(h: &mut u64, b: &[u8]) {
    for c in b.chunks(8) {
        let mut w = [0u8; 8];
        w[..c.len()].copy_from_slice(c);
        *h = (*h ^ u64::from_le_bytes(w)).wrapping_mul(0x100_0000_01b3);
    }
    *h = (*h ^ b.len() as u64).wrapping_mul(0x100_0000_01b3);
}

fn fingerprint_idx(h: &mut u64, i: &Idx) {
    fn bytes<X: Copy>(s: &[X]) -> &[u8] {
        // SAFETY: `s` is a slice of plain integers (i32 or i64), any bytes of which are valid u8s;
        // the byte slice covers exactly its memory and borrows it.
        unsafe { std::slice::from_raw_parts(s.as_ptr().cast::<u8>(), std::mem::size_of_val(s)) }
    }
    match i {
        Idx::I32(a) => fingerprint_bytes(h, bytes(a.as_slice())),
        Idx::I64(a) => fingerprint_bytes(h, bytes(a.as_slice())),
    }
}

/// The fingerprint of both blocks' patterns (their CSR arrays: a compact block is never borrowed).
fn pattern_fingerprint<T: Scalar>(d: &LocalCsr<T>, o: &LocalCsr<T>) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in [d, o] {
        fingerprint_idx(&mut h, &b.indptr);
        fingerprint_idx(&mut h, &b.indices);
    }
    h
}

impl Origin {
    /// The origin of a ParCSR matrix's blocks: wrapped when any array is the caller's.
    pub(super) fn of_parcsr<T: Scalar>(d: &LocalCsr<T>, o: &LocalCsr<T>) -> Origin {
        let borrowed = |b: &LocalCsr<T>| {
            matches!(b.values, Arr::Borrowed { .. })
                || matches!(
                    &b.indptr,
                    Idx::I32(Arr::Borrowed { .. }) | Idx::I64(Arr::Borrowed { .. })
                )
        };
        if borrowed(d) || borrowed(o) {
            Origin::Wrapped(pattern_fingerprint(d, o))
        } else {
            Origin::ParCsr
        }
    }
    /// How the values of a matrix of this origin are given, in words (for messages and the header).
    pub fn describe(self) -> &'static str {
        match self {
            Origin::Rows => {
                "made by parlops_op_create_csr: pass this rank's values in the order of row_ptr/col_idx at creation as 'values', and no offd_values"
            }
            Origin::ParCsr => {
                "made by parlops_op_create_parcsr with PARLOPS_COPY: pass the diag block's values as 'values' and the offd block's as 'offd_values'"
            }
            Origin::Wrapped(_) => {
                "made by parlops_op_create_parcsr with PARLOPS_WRAP: change the wrapped arrays in place, then pass NULL for 'values' and 'offd_values'"
            }
        }
    }
}

impl<T: Scalar> LocalCsr<T> {
    /// This block with `vals` (in its storage order, [`LocalCsr::for_each`]'s), staged.
    pub(super) fn stage(&self, vals: Vec<T>) -> Result<Staged<T>> {
        if self.compact.is_some() {
            let mut c = self.to_csr()?;
            c.values = Arr::Owned(vals);
            return Ok(Staged::Block(Box::new(c.compacted())));
        }
        match self.values {
            Arr::Owned(_) => Ok(Staged::Values(vals)),
            Arr::Borrowed { .. } => Ok(Staged::Keep),
        }
    }
    pub(super) fn commit(&mut self, s: Staged<T>) {
        match s {
            Staged::Block(b) => *self = *b,
            Staged::Values(v) => self.values = Arr::Owned(v),
            Staged::Keep => {}
        }
    }
}

impl<T: Scalar> CsrOp<T> {
    /// What this matrix's values were given as.
    pub fn origin(&self) -> Origin {
        self.origin
    }
    /// This rank's entries in the diag and offd blocks.
    pub fn local_nnz(&self) -> (usize, usize) {
        let b = self.blocks();
        (b.diag.nnz(), b.offd.nnz())
    }

    /// Check and stage new values on this rank (local: the caller agrees the outcome over the
    /// ranks, then commits on every rank or on none). Refused while a running solve holds the
    /// matrix, when the values do not match the matrix's origin, or (wrapped arrays) when the
    /// pattern changed since construction.
    pub fn prepare_values(&self, new: NewValues<'_, T>) -> Result<Prepared<'_, T>> {
        let busy = || {
            crate::err!(
                Busy,
                "argument 'A' ({}) is being applied by another thread: its values cannot change under it",
                self.describe_short()
            )
        };
        // the backends' copies, then the blocks (the order of a backend's apply), neither waited for
        let held = self.resident.try_hold().ok_or_else(busy)?;
        let guard = match self.vals.try_write() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return Err(busy()),
        };
        // (a solve that starts after this waits at its first product for the swap)
        let pins = crate::op::tree::pinned(self);
        if pins > 0 {
            crate::bail!(
                Busy,
                "argument 'A' ({}) is held by {pins} running solve(s) (as their operator or the source of their preconditioner): its values cannot change until they return",
                self.describe_short()
            );
        }
        let b: &Blocks<T> = &guard;
        let (dn, on) = (b.diag.nnz(), b.offd.nnz());
        let mismatch = |what: &str| {
            crate::err!(
                InvalidArgument,
                "argument 'A' was {}; {what}",
                self.origin.describe()
            )
        };
        let (diag, offd) = match (self.origin, new) {
            (Origin::Rows, NewValues::Rows(v)) => {
                let (d, o) = self.split_rows_values(b, v)?;
                (b.diag.stage(d)?, b.offd.stage(o)?)
            }
            (Origin::ParCsr, NewValues::Blocks(d, o)) => {
                if d.len() != dn || o.len() != on {
                    crate::bail!(
                        SizeMismatch,
                        "the pattern changed: A holds {dn} diag and {on} offd entries on this rank, the new values are {} and {}; a new pattern needs a new operator",
                        d.len(),
                        o.len()
                    );
                }
                let copy = |s: &[T], what: &str| -> Result<Vec<T>> {
                    let mut v = try_vec(s.len(), T::zero(), what)?;
                    v.copy_from_slice(s);
                    Ok(v)
                };
                (
                    b.diag.stage(copy(d, "diag values")?)?,
                    b.offd.stage(copy(o, "offd values")?)?,
                )
            }
            (Origin::Wrapped(fp), NewValues::InPlace) => {
                if pattern_fingerprint(&b.diag, &b.offd) != fp {
                    crate::bail!(
                        InvalidArgument,
                        "the pattern of A's wrapped arrays changed since A was made (its row pointers or column indices differ): new values may change, a pattern may not; make a new operator for a new pattern"
                    );
                }
                (Staged::Keep, Staged::Keep)
            }
            (Origin::Rows, _) => {
                return Err(mismatch(
                    "got two arrays or NULL instead of one array of values",
                ));
            }
            (Origin::ParCsr, _) => {
                return Err(mismatch(
                    "got one array or NULL instead of both blocks' values",
                ));
            }
            (Origin::Wrapped(_), _) => {
                return Err(mismatch(
                    "got arrays of values: parlops never writes a caller's arrays",
                ));
            }
        };
        Ok(Prepared {
            blocks: guard,
            held,
            diag,
            offd,
        })
    }

    /// A wrapped matrix's pattern is still the one it was made with (the caller may change the
    /// values of wrapped arrays in place, never their row pointers or columns); other matrices own
    /// their pattern. Local.
    pub fn check_pattern(&self) -> Result<()> {
        if let Origin::Wrapped(fp) = self.origin {
            let b = self.blocks();
            if pattern_fingerprint(&b.diag, &b.offd) != fp {
                crate::bail!(
                    InvalidArgument,
                    "the pattern of a wrapped matrix ({}) changed since it was made (its row pointers or column indices differ): a new pattern needs a new operator and new preconditioners",
                    self.describe_short()
                );
            }
        }
        Ok(())
    }

    /// Swap staged values in (after every rank staged its own): products after this read them, the
    /// backends' copies are made again at their next use, and the version moves on.
    pub fn commit_values(&self, p: Prepared<'_, T>) {
        let Prepared {
            mut blocks,
            mut held,
            diag,
            offd,
        } = p;
        blocks.diag.commit(diag);
        blocks.offd.commit(offd);
        held.forget();
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    /// The number of values updates so far.
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    fn describe_short(&self) -> String {
        format!("CSR {}x{}", self.rows.global_len(), self.cols.global_len())
    }

    /// [`Origin::Rows`]: `v` in the order of construction (per row: the offd entries left of this
    /// rank's columns, the diag entries, the offd entries right of them, as columns increase) split
    /// into the blocks' storage orders.
    fn split_rows_values(&self, b: &Blocks<T>, v: &[T]) -> Result<(Vec<T>, Vec<T>)> {
        let n = b.diag.nrows;
        let (dn, on) = (b.diag.nnz(), b.offd.nnz());
        if v.len() != dn + on {
            crate::bail!(
                SizeMismatch,
                "the pattern changed: A holds {} entries on this rank, 'nnz' is {}; a new pattern needs a new operator",
                dn + on,
                v.len()
            );
        }
        let c0 = self.cols.local_start();
        let mut dcount = try_vec(n, 0usize, "row counts")?;
        let mut ocount = try_vec(n, 0usize, "row counts")?;
        let mut olo = try_vec(n, 0usize, "row counts")?;
        b.diag.for_each(|i, _, _| dcount[i] += 1);
        b.offd.for_each(|i, j, _| {
            ocount[i] += 1;
            if self.col_map[j] < c0 {
                olo[i] += 1;
            }
        });
        let mut d = try_vec(dn, T::zero(), "diag values")?;
        let mut o = try_vec(on, T::zero(), "offd values")?;
        let (mut k, mut kd, mut ko) = (0, 0, 0);
        for r in 0..n {
            let hi = ocount[r] - olo[r];
            o[ko..ko + olo[r]].copy_from_slice(&v[k..k + olo[r]]);
            (k, ko) = (k + olo[r], ko + olo[r]);
            d[kd..kd + dcount[r]].copy_from_slice(&v[k..k + dcount[r]]);
            (k, kd) = (k + dcount[r], kd + dcount[r]);
            o[ko..ko + hi].copy_from_slice(&v[k..k + hi]);
            (k, ko) = (k + hi, ko + hi);
        }
        Ok((d, o))
    }
}
