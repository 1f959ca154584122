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
/// This rank's part of the diagonal, written into a local array.
pub type LocalDiagFn<T> = Box<dyn Fn(&mut [T]) -> Result<()> + Send + Sync>;
/// This rank's part of the diagonal, written at a device address.
pub type DeviceDiagFn = Box<dyn Fn(u64) -> Result<()> + Send + Sync>;

enum Fns<T> {
    Host(LocalFn<T>, Option<LocalFn<T>>, Option<LocalDiagFn<T>>),
    Device(DeviceFn, Option<DeviceFn>, Option<DeviceDiagFn>),
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
            fns: Fns::Host(forward, adjoint, None),
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
        c.fns = Fns::Device(forward, adjoint, None);
        Ok(c)
    }

    /// With a callback giving this rank's part of the diagonal (a square operator whose row and
    /// column layouts are equal), on host memory: Jacobi and Chebyshev can then use it.
    pub fn with_diagonal(mut self, diag: LocalDiagFn<T>) -> Result<Self> {
        self.check_square()?;
        match &mut self.fns {
            Fns::Host(_, _, d) => *d = Some(diag),
            Fns::Device(..) => crate::bail!(
                InvalidArgument,
                "a host diagonal callback given to an operator with device callbacks"
            ),
        }
        Ok(self)
    }

    /// As [`Callback::with_diagonal`], the callback writing at a device address.
    pub fn with_device_diagonal(mut self, diag: DeviceDiagFn) -> Result<Self> {
        self.check_square()?;
        match &mut self.fns {
            Fns::Device(_, _, d) => *d = Some(diag),
            Fns::Host(..) => crate::bail!(
                InvalidArgument,
                "a device diagonal callback given to an operator with host callbacks"
            ),
        }
        Ok(self)
    }

    /// The memory the callbacks take.
    fn memory(&self) -> crate::memory::Location {
        match self.fns {
            Fns::Host(..) => crate::memory::Location::Host,
            Fns::Device(..) => crate::memory::Location::Cuda,
        }
    }

    fn check_square(&self) -> Result<()> {
        if !self.rows.compatible(&self.cols) {
            crate::bail!(
                InvalidArgument,
                "argument 'diagonal': only a square operator with equal row and column layouts has a diagonal; this one is {}x{} (local {}x{} on rank {})",
                self.rows.global_len(),
                self.cols.global_len(),
                self.rows.local_len(),
                self.cols.local_len(),
                self.rows.comm().rank()
            );
        }
        Ok(())
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
            Fns::Host(f, ..) => f(x.local(), y.local_mut()),
            Fns::Device(f, ..) => {
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
            Fns::Host(_, Some(f), _) => f(y.local(), x.local_mut()),
            Fns::Device(_, Some(f), _) => {
                y.sync()?;
                x.sync()?;
                f(y.dptr(), x.dptr())?;
                crate::exec::device_sync()
            }
            _ => crate::bail!(NotSupported, "{} has no adjoint callback", self.name),
        }
    }
    fn diagonal(&self, d: &mut DistVector<T>) -> Result<()> {
        let _busy = self.enter()?;
        match &self.fns {
            Fns::Host(_, _, Some(f)) if d.host_addressable() => f(d.local_mut()),
            Fns::Host(_, _, Some(f)) => d.staged(|h| f(h.local_mut())),
            Fns::Device(_, _, Some(f)) => {
                // the callback writes device memory: a device copy of d (a set-up step), then back
                let dd = d.to_location(self.memory())?;
                dd.sync()?;
                f(dd.dptr())?;
                crate::exec::device_sync()?;
                d.copy_any(&dd)
            }
            _ => crate::bail!(
                NotSupported,
                "{} cannot give its diagonal: make it with parlops_op_create_shell_with_diagonal",
                self.name
            ),
        }
    }
    fn handles(&self, loc: crate::memory::Location) -> bool {
        loc == self.memory()
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
