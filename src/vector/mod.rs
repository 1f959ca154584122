//! Distributed vectors: a [`Layout`] (shared, immutable) and this rank's local part, owned or wrapping
//! the caller's memory with no copy. Entry-wise operations are local; dots, norms, gathers and
//! redistribution are collective and fail on every rank together.

mod any;
pub mod fused;
mod layout;
pub mod multi;
pub use crate::exec::ops;
pub mod random;
mod reduce;

pub use any::AnyVec;
pub use layout::{Layout, Partition, scatter_lens};
pub use ops::NormKind;
pub(crate) use reduce::dot_partials;
pub use reduce::{dots, dots_finish, dots_start, reduce_partials, share, sum_partials};

use std::ptr::NonNull;
use std::sync::Arc;

use crate::error::Result;
use crate::exec::{self, Exec, Part};
use crate::memory::Location;
use crate::scalar::Scalar;

/// A distributed vector of `T`.
///
/// It is `Send`/`Sync` like a `Vec<T>`; when it wraps caller memory, keeping that memory alive and
/// unshared while parlops works on it is the caller's promise (as with every zero-copy API).
pub struct DistVector<T: Scalar> {
    layout: Arc<Layout>,
    /// This rank's entries and their executor (where they live, what orders work on them).
    part: Part<T>,
}

fn checked_ptr<T: Scalar>(ptr: *mut T, len: i64, what: &str) -> Result<NonNull<T>> {
    if len == 0 && ptr.is_null() {
        return Ok(NonNull::dangling());
    }
    if ptr.is_null() {
        crate::bail!(
            NullArgument,
            "argument '{what}' is NULL but this rank's local length is {len}"
        );
    }
    if !(ptr as usize).is_multiple_of(std::mem::align_of::<T>()) {
        crate::bail!(
            InvalidArgument,
            "argument '{what}' ({ptr:p}) is not aligned to {} bytes as {} requires",
            std::mem::align_of::<T>(),
            T::DTYPE.name()
        );
    }
    // SAFETY: checked non-null just above.
    Ok(unsafe { NonNull::new_unchecked(ptr) })
}

/// A caller's pointer must be in the memory the vector says (`MemoryLocation` otherwise).
fn check_location<T: Scalar>(ptr: *mut T, len: i64, loc: Location, what: &str) -> Result<()> {
    if len == 0 || ptr.is_null() {
        return Ok(());
    }
    exec::check_pointer(ptr as *const std::ffi::c_void, loc, what)
}

impl<T: Scalar> DistVector<T> {
    /// A zeroed vector in `location`, owned by parlops.
    pub fn new_in(layout: Arc<Layout>, location: Location) -> Result<Self> {
        let exec = Exec::new(location, layout.comm().node_rank())?;
        let part = Part::zeroed(exec, layout.local_len() as usize)?;
        Ok(DistVector { layout, part })
    }

    /// A zeroed host vector.
    pub fn new(layout: Arc<Layout>) -> Result<Self> {
        Self::new_in(layout, Location::Host)
    }

    /// Wrap the caller's array of this rank's local length; nothing is copied.
    ///
    /// # Safety
    /// `ptr` must point to `layout.local_len()` valid entries of `T` in `location` that outlive the vector
    /// (or be null when the local length is 0).
    pub unsafe fn wrap(layout: Arc<Layout>, location: Location, ptr: *mut T) -> Result<Self> {
        let exec = Exec::new(location, layout.comm().node_rank())?;
        let p = checked_ptr(ptr, layout.local_len(), "local_data")?;
        check_location(ptr, layout.local_len(), location, "local_data")?;
        let n = layout.local_len() as usize;
        // SAFETY: the caller's promise (checked non-null, aligned and in `location`'s memory).
        let part = unsafe { Part::caller(exec, p, n) };
        Ok(DistVector { layout, part })
    }

    /// A host vector over `ptr` with no checks (parlops' own views of host arrays it already holds).
    ///
    /// # Safety
    /// As for [`DistVector::wrap`], and `ptr` must be host memory aligned for `T`.
    pub unsafe fn view_host(layout: Arc<Layout>, ptr: *mut T) -> Result<Self> {
        let p = checked_ptr(ptr, layout.local_len(), "local_data")?;
        let n = layout.local_len() as usize;
        // SAFETY: the caller's promise: host memory holding n entries.
        let part = unsafe { Part::caller(Exec::Host, p, n) };
        Ok(DistVector { layout, part })
    }

    /// Use the caller's array until [`DistVector::reset_array`]; nothing is copied.
    ///
    /// # Safety
    /// As for [`DistVector::wrap`].
    pub unsafe fn place_array(&mut self, ptr: *mut T) -> Result<()> {
        let p = checked_ptr(ptr, self.layout.local_len(), "local_data")?;
        check_location(ptr, self.layout.local_len(), self.location(), "local_data")?;
        // SAFETY: the caller's promise, for as long as it is placed.
        unsafe { self.part.place(Some(p)) };
        Ok(())
    }

    /// Order all work on this (device) vector on the caller's stream (`None`: parlops' own stream).
    /// Work already queued on the previous stream is waited for first.
    pub fn set_stream(&mut self, s: Option<exec::Stream>) -> Result<()> {
        self.part.exec_mut().set_stream(s)
    }

    /// The executor: where the entries live and what orders work on them.
    pub fn exec(&self) -> &Exec {
        self.part.exec()
    }
    /// This rank's entries and their executor (what the executor's steps work on).
    pub fn part(&self) -> &Part<T> {
        &self.part
    }
    pub fn part_mut(&mut self) -> &mut Part<T> {
        &mut self.part
    }
    /// Is the data on the device?
    pub fn is_device(&self) -> bool {
        !self.part.host_addressable()
    }
    /// Can host code read and write this rank's entries in place ([`DistVector::host_slice`])?
    pub fn host_addressable(&self) -> bool {
        self.part.host_addressable()
    }
    /// This rank's entries, where host code can reach them in place (else `None`: work on a host
    /// copy, [`DistVector::staged`] or [`DistVector::to_location`]).
    pub fn host_slice(&self) -> Option<&[T]> {
        self.host_addressable().then(|| self.local())
    }
    /// This rank's entries, writable, where host code can reach them in place.
    pub fn host_slice_mut(&mut self) -> Option<&mut [T]> {
        if self.host_addressable() {
            Some(self.local_mut())
        } else {
            None
        }
    }
    /// Wait until queued work on this vector is done (no-op for host vectors).
    pub fn sync(&self) -> Result<()> {
        exec::sync(&self.part)
    }
    /// Wait for queued work when it runs on parlops' own ordering (the C API calls this before
    /// returning, so callers see finished data; with a caller stream, ordering is the stream's).
    pub fn settle(&self) -> Result<()> {
        exec::settle(&self.part)
    }
    /// Has the caller given this vector a stream?
    pub fn caller_stream(&self) -> Option<exec::Stream> {
        self.part.exec().caller_stream()
    }
    /// Device address of this rank's entries (device vectors).
    pub fn dptr(&self) -> u64 {
        self.part.dptr()
    }

    /// Both vectors in the same memory space, or a `MemoryLocation` error naming them.
    pub fn check_location(&self, x: &Self, xn: &str, yn: &str) -> Result<()> {
        if self.location() != x.location() {
            crate::bail!(
                MemoryLocation,
                "argument '{xn}' is in {} memory but '{yn}' is in {} memory; copy one of them first",
                x.location().name(),
                self.location().name()
            );
        }
        Ok(())
    }

    /// A new owned vector with the same layout and entries in `loc` (a host<->device copy when the
    /// locations differ).
    pub fn to_location(&self, loc: Location) -> Result<Self> {
        let mut out = DistVector::new_in(self.layout.clone(), loc)?;
        out.copy_any(self)?;
        Ok(out)
    }

    /// self = x, whatever the memory of each (same layout).
    pub fn copy_any(&mut self, x: &Self) -> Result<()> {
        x.layout.check_compatible(&self.layout, "x", "y")?;
        exec::transfer(&mut self.part, &x.part)
    }

    /// Run host code `f` on a host copy of this vector and copy the result back (for what has no
    /// device kernel: gathers, scatters, redistribution, value setting).
    pub fn staged<R>(&mut self, f: impl FnOnce(&mut DistVector<T>) -> Result<R>) -> Result<R> {
        let mut h = self.to_location(Location::Host)?;
        let r = f(&mut h)?;
        self.copy_any(&h)?;
        Ok(r)
    }

    /// Go back to the array the vector had before [`DistVector::place_array`].
    pub fn reset_array(&mut self) {
        // SAFETY: back to the vector's own storage.
        unsafe { self.part.place(None) };
    }

    pub fn layout(&self) -> &Arc<Layout> {
        &self.layout
    }
    pub fn location(&self) -> Location {
        self.part.location()
    }
    /// Does the vector currently use memory owned by the caller?
    pub fn uses_caller_memory(&self) -> bool {
        self.part.uses_caller_memory()
    }

    /// This rank's entries (host-addressable vectors; any other gives an empty slice: its data is
    /// reached through the executor's steps, [`DistVector::staged`] or [`DistVector::to_location`]).
    pub fn local(&self) -> &[T] {
        self.part.local()
    }
    /// This rank's entries, writable (host-addressable vectors; see [`DistVector::local`]).
    pub fn local_mut(&mut self) -> &mut [T] {
        self.part.local_mut()
    }
    /// Pointer to this rank's entries (the caller's, when wrapped or placed).
    pub fn local_ptr(&mut self) -> *mut T {
        self.part.ptr()
    }

    /// A zeroed owned vector with the same layout and location (and stream).
    pub fn duplicate(&self) -> Result<Self> {
        Ok(DistVector {
            layout: self.layout.clone(),
            part: self.part.duplicate()?,
        })
    }

    /// self = x
    pub fn copy_from(&mut self, x: &Self) -> Result<()> {
        x.layout.check_compatible(&self.layout, "x", "y")?;
        self.check_location(x, "x", "y")?;
        exec::copy(&mut self.part, &x.part)
    }
    pub fn fill(&mut self, a: T) -> Result<()> {
        exec::fill(&mut self.part, a)
    }
    pub fn scale(&mut self, a: T) -> Result<()> {
        exec::scale(&mut self.part, a)
    }
    pub fn conj(&mut self) -> Result<()> {
        exec::conj(&mut self.part)
    }
    /// self += a x
    pub fn axpy(&mut self, a: T, x: &Self) -> Result<()> {
        x.layout.check_compatible(&self.layout, "x", "y")?;
        self.check_location(x, "x", "y")?;
        exec::axpy(&mut self.part, a, &x.part)
    }
    /// self = a x + b self
    pub fn axpby(&mut self, a: T, x: &Self, b: T) -> Result<()> {
        x.layout.check_compatible(&self.layout, "x", "y")?;
        self.check_location(x, "x", "y")?;
        exec::axpby(&mut self.part, a, &x.part, b)
    }
    /// self = a x + y
    pub fn waxpy(&mut self, a: T, x: &Self, y: &Self) -> Result<()> {
        x.layout.check_compatible(&self.layout, "x", "w")?;
        y.layout.check_compatible(&self.layout, "y", "w")?;
        self.check_location(x, "x", "w")?;
        self.check_location(y, "y", "w")?;
        exec::waxpy(&mut self.part, a, &x.part, &y.part)
    }
    /// self = x .* y
    pub fn pointwise_mult(&mut self, x: &Self, y: &Self) -> Result<()> {
        x.layout.check_compatible(&self.layout, "x", "w")?;
        y.layout.check_compatible(&self.layout, "y", "w")?;
        self.check_location(x, "x", "w")?;
        self.check_location(y, "y", "w")?;
        exec::pmult(&mut self.part, &x.part, &y.part, false)
    }
    /// self = conj(x) .* y
    pub fn pointwise_mult_conj(&mut self, x: &Self, y: &Self) -> Result<()> {
        x.layout.check_compatible(&self.layout, "x", "w")?;
        y.layout.check_compatible(&self.layout, "y", "w")?;
        self.check_location(x, "x", "w")?;
        self.check_location(y, "y", "w")?;
        exec::pmult(&mut self.part, &x.part, &y.part, true)
    }

    /// Collect the whole vector on `root`, or on every rank when `root == -1`. `out` must be given (and
    /// of the global length) on receiving ranks; `pre` carries the caller's own argument checks. [collective]
    pub fn gather(&self, root: i32, out: Option<&mut [T]>, pre: Result<()>) -> Result<()> {
        if !self.host_addressable() {
            // staged through a host copy (MPI gathers host memory)
            let mut h = DistVector::new_in(self.layout.clone(), Location::Host)?;
            let copied = h.copy_any(self);
            return h.gather(root, out, pre.and(copied));
        }
        let comm = self.layout.comm().clone();
        let (rank, size) = (comm.rank(), comm.size());
        let n = self.layout.global_len();
        let receiving = root == -1 || root == rank;
        let local = pre.and_then(|_| {
            if root < -1 || root >= size {
                crate::bail!(InvalidArgument, "argument 'root' is {root}; it must be -1 (all ranks) or 0..{}", size - 1);
            }
            match &out {
                None if receiving => crate::bail!(
                    NullArgument,
                    "argument 'global_out' is NULL on rank {rank}, which receives the gathered vector of length {n}"
                ),
                Some(o) if receiving && o.len() as i64 != n => crate::bail!(
                    SizeMismatch,
                    "argument 'global_out' holds {} entries, the vector's global length is {n}",
                    o.len()
                ),
                _ => Ok(()),
            }
        });
        comm.agree_same(
            local,
            "roots or vectors ([root, the vector's layout and dtype])",
            &[root as i64, self.layout.fingerprint(), T::DTYPE as i64],
        )?;
        let mut empty: [T; 0] = [];
        let out: &mut [T] = match out {
            Some(o) if receiving => o,
            _ => &mut empty,
        };
        let (send, counts): (&[T], Vec<i64>) = match self.layout.partition() {
            Partition::Scatter => (self.local(), self.layout.local_lens().to_vec()),
            Partition::UnsafeBroadcast => {
                if receiving {
                    out.copy_from_slice(self.local());
                }
                return Ok(());
            }
            Partition::Broadcast => {
                // rank 0's copy is the vector's value
                let mut c = vec![0i64; size as usize];
                c[0] = n;
                (if rank == 0 { self.local() } else { &[] }, c)
            }
        };
        if root == -1 {
            comm.allgatherv(send, out, &counts)
        } else {
            comm.gatherv(send, out, &counts, root)
        }
    }

    /// Set the vector from the whole array `global_in` given on `root`. [collective]
    pub fn scatter_from(
        &mut self,
        root: i32,
        global_in: Option<&[T]>,
        pre: Result<()>,
    ) -> Result<()> {
        if !self.host_addressable() {
            let comm = self.layout.comm().clone();
            let mut h = DistVector::new_in(self.layout.clone(), Location::Host)?;
            h.scatter_from(root, global_in, pre)?;
            return comm.agree(self.copy_any(&h));
        }
        let comm = self.layout.comm().clone();
        let (rank, size) = (comm.rank(), comm.size());
        let n = self.layout.global_len();
        let local = pre.and_then(|_| {
            if root < 0 || root >= size {
                crate::bail!(
                    InvalidArgument,
                    "argument 'root' is {root}; it must be in 0..{}",
                    size - 1
                );
            }
            match &global_in {
                None if rank == root => crate::bail!(
                    NullArgument,
                    "argument 'global_in' is NULL on the root rank {root}; it must hold {n} entries"
                ),
                Some(g) if rank == root && g.len() as i64 != n => crate::bail!(
                    SizeMismatch,
                    "argument 'global_in' holds {} entries, the vector's global length is {n}",
                    g.len()
                ),
                _ => Ok(()),
            }
        });
        comm.agree_same(
            local,
            "roots or vectors ([root, the vector's layout and dtype])",
            &[root as i64, self.layout.fingerprint(), T::DTYPE as i64],
        )?;
        let input: &[T] = if rank == root {
            global_in.unwrap_or(&[])
        } else {
            &[]
        };
        if self.layout.partition().is_replicated() {
            if rank == root {
                self.local_mut().copy_from_slice(input);
            }
            let buf = self.local_mut();
            comm.bcast(buf, root)
        } else {
            let counts = self.layout.local_lens().to_vec();
            let buf = self.local_mut();
            comm.scatterv(input, &counts, buf, root)
        }
    }

    /// Make every rank's copy of a broadcast vector equal to rank 0's (after the caller wrote into
    /// local data). No communication for split or unsafe-broadcast vectors. [collective]
    pub fn assemble(&mut self) -> Result<()> {
        if !self.host_addressable() && self.layout.partition() == Partition::Broadcast {
            let comm = self.layout.comm().clone();
            let mut h = DistVector::new_in(self.layout.clone(), Location::Host)?;
            let copied = h.copy_any(self);
            comm.agree(copied)?;
            h.assemble()?;
            return comm.agree(self.copy_any(&h));
        }
        if self.layout.partition() == Partition::Broadcast {
            let comm = self.layout.comm().clone();
            comm.bcast(self.local_mut(), 0)?;
        }
        Ok(())
    }

    /// A new owned vector with layout `to` and the same global entries. [collective]
    pub fn redistribute(&self, to: &Arc<Layout>, pre: Result<()>) -> Result<Self> {
        if !self.host_addressable() {
            let mut h = DistVector::new_in(self.layout.clone(), Location::Host)?;
            let copied = h.copy_any(self);
            let out = h.redistribute(to, pre.and(copied))?;
            return to.comm().agree(out.to_location(self.location()));
        }
        let from = self.layout.clone();
        let comm = from.comm().clone();
        let local = pre.and_then(|_| {
            if !Arc::ptr_eq(from.comm(), to.comm()) {
                crate::bail!(
                    LayoutMismatch,
                    "argument 'to' lives on a different communicator than the vector"
                );
            }
            if from.global_len() != to.global_len() {
                crate::bail!(
                    SizeMismatch,
                    "argument 'to' has global length {}, the vector has {}",
                    to.global_len(),
                    from.global_len()
                );
            }
            Ok(())
        });
        // the allocation can fail on one rank: agreed with the arguments, before any exchange, and
        // so are the layouts (ranks passing different ones would exchange different counts)
        let made = local.and_then(|_| DistVector::new_in(to.clone(), self.location()));
        let pre = made.as_ref().map(|_| ()).map_err(|e| e.clone());
        comm.agree_same(
            pre,
            "layouts ([the vector's layout, 'to'])",
            &[from.fingerprint(), to.fingerprint()],
        )?;
        let mut out = made?;
        let rank = comm.rank() as usize;
        if from.partition().is_replicated() {
            let s = to.local_start() as usize;
            let l = to.local_len() as usize;
            out.local_mut().copy_from_slice(&self.local()[s..s + l]);
            return Ok(out);
        }
        if to.partition().is_replicated() {
            let counts = from.local_lens().to_vec();
            comm.allgatherv(self.local(), out.local_mut(), &counts)?;
            return Ok(out);
        }
        let p = comm.size() as usize;
        let overlap = |a0: i64, al: i64, b0: i64, bl: i64| -> (i64, i64) {
            let s = a0.max(b0);
            let e = (a0 + al).min(b0 + bl);
            (s, (e - s).max(0))
        };
        let (f0, fl) = (from.offsets()[rank], from.local_lens()[rank]);
        let (t0, tl) = (to.offsets()[rank], to.local_lens()[rank]);
        let (mut sc, mut sd, mut rc, mut rd) = (vec![0; p], vec![0; p], vec![0; p], vec![0; p]);
        for q in 0..p {
            let (s, l) = overlap(f0, fl, to.offsets()[q], to.local_lens()[q]);
            sc[q] = l;
            sd[q] = if l > 0 { s - f0 } else { 0 };
            let (s, l) = overlap(from.offsets()[q], from.local_lens()[q], t0, tl);
            rc[q] = l;
            rd[q] = if l > 0 { s - t0 } else { 0 };
        }
        comm.alltoallv(self.local(), &sc, &sd, out.local_mut(), &rc, &rd)?;
        Ok(out)
    }
}
