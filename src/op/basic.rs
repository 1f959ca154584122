//! Identity, zero and diagonal operators.

use std::sync::Arc;

use super::LinearOperator;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout};

/// I: y = x.
pub struct Identity {
    layout: Arc<Layout>,
}

impl Identity {
    pub fn new(layout: Arc<Layout>) -> Identity {
        Identity { layout }
    }
}

impl<T: Scalar> LinearOperator<T> for Identity {
    fn rows(&self) -> &Arc<Layout> {
        &self.layout
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.layout
    }
    fn apply(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        y.copy_from(x)
    }
    fn apply_adjoint(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        x.copy_from(y)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn describe(&self) -> String {
        format!("Identity {}", self.layout.global_len())
    }
    fn diagonal(&self, d: &mut DistVector<T>) -> Result<()> {
        d.fill(T::one());
        Ok(())
    }
}

/// 0: y = 0 (any shape).
pub struct Zero {
    rows: Arc<Layout>,
    cols: Arc<Layout>,
}

impl Zero {
    pub fn new(rows: Arc<Layout>, cols: Arc<Layout>) -> Zero {
        Zero { rows, cols }
    }
}

impl<T: Scalar> LinearOperator<T> for Zero {
    fn rows(&self) -> &Arc<Layout> {
        &self.rows
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.cols
    }
    fn apply(&self, _x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        y.fill(T::zero());
        Ok(())
    }
    fn apply_adjoint(&self, _y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        x.fill(T::zero());
        Ok(())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn describe(&self) -> String {
        format!("Zero {}x{}", self.rows.global_len(), self.cols.global_len())
    }
    fn diagonal(&self, d: &mut DistVector<T>) -> Result<()> {
        d.fill(T::zero());
        Ok(())
    }
}

/// diag(d): y = d .* x (a copy of d is kept).
pub struct Diagonal<T: Scalar> {
    d: DistVector<T>,
}

impl<T: Scalar> Diagonal<T> {
    pub fn new(d: &DistVector<T>) -> Result<Diagonal<T>> {
        let mut c = d.duplicate()?;
        c.copy_from(d)?;
        Ok(Diagonal { d: c })
    }
}

impl<T: Scalar> LinearOperator<T> for Diagonal<T> {
    fn rows(&self) -> &Arc<Layout> {
        self.d.layout()
    }
    fn cols(&self) -> &Arc<Layout> {
        self.d.layout()
    }
    fn apply(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        y.pointwise_mult(&self.d, x)
    }
    fn apply_adjoint(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        for ((xv, yv), dv) in x.local_mut().iter_mut().zip(y.local()).zip(self.d.local()) {
            *xv = dv.conj() * *yv;
        }
        Ok(())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn describe(&self) -> String {
        format!("Diagonal {}", self.d.layout().global_len())
    }
    fn diagonal(&self, d: &mut DistVector<T>) -> Result<()> {
        d.copy_from(&self.d)
    }
}
