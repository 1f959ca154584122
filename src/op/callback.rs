//! User callback operators (PETSc's MATSHELL): the callbacks see this rank's local parts only.

use std::sync::Arc;

use super::LinearOperator;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout};

/// A local map from this rank's part of the input to its part of the output.
pub type LocalFn<T> = Box<dyn Fn(&[T], &mut [T]) -> Result<()> + Send + Sync>;

/// An operator given by callbacks on local parts.
pub struct Callback<T: Scalar> {
    rows: Arc<Layout>,
    cols: Arc<Layout>,
    forward: LocalFn<T>,
    adjoint: Option<LocalFn<T>>,
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
            forward,
            adjoint,
            name: name.into(),
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
    fn apply(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        (self.forward)(x.local(), y.local_mut())
    }
    fn apply_adjoint(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        match &self.adjoint {
            Some(f) => f(y.local(), x.local_mut()),
            None => crate::bail!(NotSupported, "{} has no adjoint callback", self.name),
        }
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
