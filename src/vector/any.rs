//! A distributed vector whose element type is chosen at run time (what a C handle holds).

use std::sync::Arc;

use super::{DistVector, Layout, NormKind, reduce_partials};
use crate::comm::ReduceOp;
use crate::error::Result;
use crate::memory::Location;
use crate::scalar::{DType, Scalar, c32, c64};

/// One of the four [`DistVector`] element types.
pub enum AnyVec {
    F32(DistVector<f32>),
    F64(DistVector<f64>),
    C64(DistVector<c32>),
    C128(DistVector<c64>),
}

/// `any_vec!(v, x => expr)`: run `expr` with `x` bound to the typed vector inside `v`.
#[macro_export]
macro_rules! any_vec {
    ($v:expr, $x:ident => $body:expr) => {
        match $v {
            $crate::vector::AnyVec::F32($x) => $body,
            $crate::vector::AnyVec::F64($x) => $body,
            $crate::vector::AnyVec::C64($x) => $body,
            $crate::vector::AnyVec::C128($x) => $body,
        }
    };
}

/// `any_vec2!(a, b, (x, y) => expr)`: both vectors of the same dtype, or a dtype-mismatch error.
#[macro_export]
macro_rules! any_vec2 {
    ($a:expr, $b:expr, ($x:ident, $y:ident) => $body:expr) => {{
        let (da, db) = ($a.dtype(), $b.dtype());
        match ($a, $b) {
            ($crate::vector::AnyVec::F32($x), $crate::vector::AnyVec::F32($y)) => $body,
            ($crate::vector::AnyVec::F64($x), $crate::vector::AnyVec::F64($y)) => $body,
            ($crate::vector::AnyVec::C64($x), $crate::vector::AnyVec::C64($y)) => $body,
            ($crate::vector::AnyVec::C128($x), $crate::vector::AnyVec::C128($y)) => $body,
            _ => Err($crate::vector::AnyVec::dtype_mismatch(da, db)),
        }
    }};
}

/// `any_vec3!(a, b, c, (x, y, z) => expr)`: three vectors of one dtype.
#[macro_export]
macro_rules! any_vec3 {
    ($a:expr, $b:expr, $c:expr, ($x:ident, $y:ident, $z:ident) => $body:expr) => {{
        let (da, db, dc) = ($a.dtype(), $b.dtype(), $c.dtype());
        match ($a, $b, $c) {
            (
                $crate::vector::AnyVec::F32($x),
                $crate::vector::AnyVec::F32($y),
                $crate::vector::AnyVec::F32($z),
            ) => $body,
            (
                $crate::vector::AnyVec::F64($x),
                $crate::vector::AnyVec::F64($y),
                $crate::vector::AnyVec::F64($z),
            ) => $body,
            (
                $crate::vector::AnyVec::C64($x),
                $crate::vector::AnyVec::C64($y),
                $crate::vector::AnyVec::C64($z),
            ) => $body,
            (
                $crate::vector::AnyVec::C128($x),
                $crate::vector::AnyVec::C128($y),
                $crate::vector::AnyVec::C128($z),
            ) => $body,
            _ => Err($crate::vector::AnyVec::dtype_mismatch(
                da,
                if db != da { db } else { dc },
            )),
        }
    }};
}

impl AnyVec {
    /// Wait for parlops' queued device work on this vector, unless the caller gave it a stream (then
    /// the work stays ordered on that stream). For host vectors nothing happens.
    pub fn settle(&self) -> Result<()> {
        any_vec!(self, x => x.settle())
    }
    /// A zeroed owned vector.
    pub fn new(layout: Arc<Layout>, dtype: DType, location: Location) -> Result<AnyVec> {
        Ok(match dtype {
            DType::F32 => AnyVec::F32(DistVector::new_in(layout, location)?),
            DType::F64 => AnyVec::F64(DistVector::new_in(layout, location)?),
            DType::C64 => AnyVec::C64(DistVector::new_in(layout, location)?),
            DType::C128 => AnyVec::C128(DistVector::new_in(layout, location)?),
        })
    }

    /// Wrap the caller's array (no copy).
    ///
    /// # Safety
    /// `ptr` must point to this rank's local length of `dtype` entries in `location`'s memory that
    /// outlive the vector (or be null when that length is 0), as [`DistVector::wrap`] asks.
    pub unsafe fn wrap(
        layout: Arc<Layout>,
        dtype: DType,
        location: Location,
        ptr: *mut u8,
    ) -> Result<AnyVec> {
        // SAFETY: each arm casts `ptr` to the element type `dtype` names, so our caller's contract
        // is DistVector::wrap's for that type (which checks null, alignment and memory itself).
        unsafe {
            Ok(match dtype {
                DType::F32 => AnyVec::F32(DistVector::wrap(layout, location, ptr.cast())?),
                DType::F64 => AnyVec::F64(DistVector::wrap(layout, location, ptr.cast())?),
                DType::C64 => AnyVec::C64(DistVector::wrap(layout, location, ptr.cast())?),
                DType::C128 => AnyVec::C128(DistVector::wrap(layout, location, ptr.cast())?),
            })
        }
    }

    pub fn dtype(&self) -> DType {
        any_vec!(self, v => dtype_of(v))
    }
    pub fn layout(&self) -> &Arc<Layout> {
        any_vec!(self, v => v.layout())
    }
    pub fn location(&self) -> Location {
        any_vec!(self, v => v.location())
    }
    /// The caller's stream of a device vector ([`DistVector::caller_stream`]).
    pub fn caller_stream(&self) -> Option<crate::exec::Stream> {
        any_vec!(self, v => v.caller_stream())
    }

    /// The typed vector, when `T` is this vector's element type.
    pub fn typed<T: Scalar>(&self) -> Option<&DistVector<T>> {
        any_vec!(self, v => (v as &dyn std::any::Any).downcast_ref::<DistVector<T>>())
    }
    /// The typed vector, writable, when `T` is this vector's element type.
    pub fn typed_mut<T: Scalar>(&mut self) -> Option<&mut DistVector<T>> {
        any_vec!(self, v => (v as &mut dyn std::any::Any).downcast_mut::<DistVector<T>>())
    }

    pub fn dtype_mismatch(a: DType, b: DType) -> crate::error::Error {
        crate::err!(
            DTypeMismatch,
            "vectors have different dtypes: {} and {}",
            a.name(),
            b.name()
        )
    }

    pub fn duplicate(&self) -> Result<AnyVec> {
        Ok(match self {
            AnyVec::F32(v) => AnyVec::F32(v.duplicate()?),
            AnyVec::F64(v) => AnyVec::F64(v.duplicate()?),
            AnyVec::C64(v) => AnyVec::C64(v.duplicate()?),
            AnyVec::C128(v) => AnyVec::C128(v.duplicate()?),
        })
    }

    /// Copy of the vector with its own storage (used when a C caller passes one vector twice).
    pub fn clone_values(&self) -> Result<AnyVec> {
        let mut d = self.duplicate()?;
        any_vec2!(&mut d, self, (a, b) => a.copy_from(b))?;
        Ok(d)
    }

    /// conj(x) . y over all ranks, as (re, im); a dtype or layout mismatch on any rank fails on all. [collective]
    pub fn dot(x: &AnyVec, y: &AnyVec, pre: Result<()>) -> Result<(f64, f64)> {
        let partial = pre.and_then(|_| any_vec2!(x, y, (a, b) => a.dot_partial(b)));
        let r = reduce_partials(x.layout(), partial, 2, ReduceOp::Sum)?;
        Ok((r[0], r[1]))
    }

    /// conj(x) . y summed over `parent`, whose rank groups hold x and y
    /// ([`DistVector::dot_across`]); a local error (`pre`, dtype, layout) fails on every rank of
    /// `parent`. [collective over `parent`]
    pub fn dot_across(
        parent: &crate::comm::Comm,
        x: &AnyVec,
        y: &AnyVec,
        pre: Result<()>,
    ) -> Result<(f64, f64)> {
        match pre.and_then(|_| any_vec2!(x, y, (_a, _b) => Ok(()))) {
            // the same dtype: the typed reduction carries any other local error
            Ok(_) => any_vec2!(x, y, (a, b) => a.dot_across(parent, b).map(|v| v.to_parts())),
            Err(e) => {
                parent.allreduce_checked(Err(e), 2, ReduceOp::Sum)?;
                crate::bail!(Internal, "a failed reduction returned")
            }
        }
    }

    /// See [`DistVector::norm_across`]. [collective over `parent`]
    pub fn norm_across(&self, parent: &crate::comm::Comm, kind: Result<NormKind>) -> Result<f64> {
        any_vec!(self, v => v.norm_across(parent, kind))
    }

    /// See [`DistVector::norm_checked`]. [collective]
    pub fn norm(&self, kind: Result<NormKind>) -> Result<f64> {
        any_vec!(self, v => v.norm_checked(kind))
    }

    pub fn redistribute(&self, to: &Arc<Layout>, pre: Result<()>) -> Result<AnyVec> {
        Ok(match self {
            AnyVec::F32(v) => AnyVec::F32(v.redistribute(to, pre)?),
            AnyVec::F64(v) => AnyVec::F64(v.redistribute(to, pre)?),
            AnyVec::C64(v) => AnyVec::C64(v.redistribute(to, pre)?),
            AnyVec::C128(v) => AnyVec::C128(v.redistribute(to, pre)?),
        })
    }
}

fn dtype_of<T: Scalar>(_: &DistVector<T>) -> DType {
    T::DTYPE
}
