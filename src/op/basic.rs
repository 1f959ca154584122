//! Identity, zero and diagonal operators.

use std::sync::Arc;

use super::LinearOperator;
use crate::error::Result;
use crate::memory::Location;
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
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        y.copy_from(x)
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        x.copy_from(y)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn describe(&self) -> String {
        format!("Identity {}", self.layout.global_len())
    }
    fn handles(&self, _: Location) -> bool {
        true
    }
    fn diagonal(&self, d: &mut DistVector<T>) -> Result<()> {
        d.fill(T::one())?;
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
    fn forward(&self, _x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        y.fill(T::zero())?;
        Ok(())
    }
    fn backward(&self, _y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        x.fill(T::zero())?;
        Ok(())
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn describe(&self) -> String {
        format!("Zero {}x{}", self.rows.global_len(), self.cols.global_len())
    }
    fn handles(&self, _: Location) -> bool {
        true
    }
    fn diagonal(&self, d: &mut DistVector<T>) -> Result<()> {
        d.fill(T::zero())?;
        Ok(())
    }
}

/// diag(d): y = d .* x (a copy of d is kept).
pub struct Diagonal<T: Scalar> {
    d: DistVector<T>,
    /// Copies of d in other memories, made at the first apply there.
    d_other: crate::exec::PerLocation<DistVector<T>>,
}

impl<T: Scalar> Diagonal<T> {
    pub fn new(d: &DistVector<T>) -> Result<Diagonal<T>> {
        let c = d.to_location(Location::Host)?;
        Ok(Diagonal {
            d: c,
            d_other: Default::default(),
        })
    }
}

impl<T: Scalar> Diagonal<T> {
    /// d in memory `loc`.
    fn d_in(&self, loc: Location) -> Result<&DistVector<T>> {
        if loc == self.d.location() {
            return Ok(&self.d);
        }
        self.d_other
            .get_or_try_init(loc, || self.d.to_location(loc))
            .map(|v| &**v)
    }
}

impl<T: Scalar> LinearOperator<T> for Diagonal<T> {
    fn rows(&self) -> &Arc<Layout> {
        self.d.layout()
    }
    fn cols(&self) -> &Arc<Layout> {
        self.d.layout()
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        y.pointwise_mult(self.d_in(y.location())?, x)
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        x.pointwise_mult_conj(self.d_in(x.location())?, y)
    }
    fn handles(&self, _: Location) -> bool {
        true
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn describe(&self) -> String {
        format!("Diagonal {}", self.d.layout().global_len())
    }
    fn diagonal(&self, d: &mut DistVector<T>) -> Result<()> {
        d.copy_any(&self.d)
    }
}
