//! User callback operators (PETSc's MATSHELL): the callbacks see this rank's local parts only.

use std::sync::Arc;

use super::LinearOperator;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout};

/// A local map from this rank's part of the input to its part of the output.
pub type LocalFn<T> = Box<dyn Fn(&[T], &mut [T]) -> Result<()> + Send + Sync>;
/// A local map on device memory: (input device address, output device address).
pub type DeviceFn = Box<dyn Fn(u64, u64) -> Result<()> + Send + Sync>;

enum Fns<T> {
    Host(LocalFn<T>, Option<LocalFn<T>>),
    Device(DeviceFn, Option<DeviceFn>),
}

/// An operator given by callbacks on local parts.
pub struct Callback<T: Scalar> {
    rows: Arc<Layout>,
    cols: Arc<Layout>,
    fns: Fns<T>,
    name: String,
}

impl<T: Scalar> Callback<T> {
    pub fn new(
        rows: Arc<Layout>,
        cols: Arc<Layout>,
        forward: LocalFn<T>,
        adjoint: Option<LocalFn<T>>,
        name: impl Into<String>,
    ) -> Result<Callback<T>> {
        if !Arc::ptr_eq(rows.comm(), cols.comm()) {
            crate::bail!(
                LayoutMismatch,
                "the row and column layouts live on different communicators"
            );
        }
        Ok(Callback {
            rows,
            cols,
            fns: Fns::Host(forward, adjoint),
            name: name.into(),
        })
    }

    /// Callbacks that take device addresses (vectors in CUDA memory; host vectors are staged to the
    /// device for them).
    pub fn new_device(
        rows: Arc<Layout>,
        cols: Arc<Layout>,
        forward: DeviceFn,
        adjoint: Option<DeviceFn>,
        name: impl Into<String>,
    ) -> Result<Callback<T>> {
        let mut c = Self::new(rows, cols, Box::new(|_, _| Ok(())), None, name)?;
        c.fns = Fns::Device(forward, adjoint);
        Ok(c)
    }
}

impl<T: Scalar> Callback<T> {
    /// Mark this operator busy on this thread while its callback runs: a callback that applies its
    /// own operator gets an error instead of recursing without end.
    fn enter(&self) -> Result<super::Busy> {
        super::enter(self as *const Self as *const u8 as usize, &|| {
            self.describe()
        })
    }
}

impl<T: Scalar> LinearOperator<T> for Callback<T> {
    fn rows(&self) -> &Arc<Layout> {
        &self.rows
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.cols
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        let _busy = self.enter()?;
        match &self.fns {
            Fns::Host(f, _) => f(x.local(), y.local_mut()),
            Fns::Device(f, _) => {
                // the callback may use any stream (the legacy default one, often): hand it settled
                // data, and wait for everything it queued before parlops reads its output
                x.sync()?;
                y.sync()?;
                f(x.dptr(), y.dptr())?;
                crate::exec::device_sync()
            }
        }
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        let _busy = self.enter()?;
        match &self.fns {
            Fns::Host(_, Some(f)) => f(y.local(), x.local_mut()),
            Fns::Device(_, Some(f)) => {
                y.sync()?;
                x.sync()?;
                f(y.dptr(), x.dptr())?;
                crate::exec::device_sync()
            }
            _ => crate::bail!(NotSupported, "{} has no adjoint callback", self.name),
        }
    }
    fn handles(&self, loc: crate::memory::Location) -> bool {
        matches!(
            (&self.fns, loc),
            (Fns::Host(..), crate::memory::Location::Host)
                | (Fns::Device(..), crate::memory::Location::Cuda)
        )
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn describe(&self) -> String {
        format!(
            "{} {}x{}",
            self.name,
            self.rows.global_len(),
            self.cols.global_len()
        )
    }
}
