//! The low-rank operator U diag(d) U^H (hIPPYlib's LowRankOperator: the Hessian approximation a
//! randomized eigensolver returns): one reduction for U^H x (all k dots), one pass for the sum.

use std::sync::Arc;

use super::LinearOperator;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::multi::{block_dot, maxpy};
use crate::vector::{DistVector, Layout};

/// y = U diag(d) U^H x, with copies of the k vectors U (one layout) and real d.
pub struct LowRank<T: Scalar> {
    u: Vec<DistVector<T>>,
    d: Vec<f64>,
    layout: Arc<Layout>,
}

impl<T: Scalar> LowRank<T> {
    /// From k >= 1 vectors of one layout and memory, and k finite weights (copied). Not collective:
    /// the caller agrees the outcome.
    pub fn new(u: &[&DistVector<T>], d: &[f64]) -> Result<LowRank<T>> {
        let Some(first) = u.first() else {
            crate::bail!(
                InvalidArgument,
                "k is 0: a low-rank operator needs at least one vector"
            );
        };
        if d.len() != u.len() {
            crate::bail!(SizeMismatch, "{} weights for {} vectors", d.len(), u.len());
        }
        if let Some((i, v)) = d.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            crate::bail!(InvalidArgument, "d[{i}] is {v}: the weights must be finite");
        }
        let mut copies = Vec::new();
        copies
            .try_reserve_exact(u.len())
            .map_err(|_| crate::err!(OutOfMemory, "{} vectors", u.len()))?;
        for (i, v) in u.iter().enumerate() {
            v.layout()
                .check_compatible(first.layout(), &format!("u[{i}]"), "u[0]")?;
            first.check_location(v, &format!("u[{i}]"), "u[0]")?;
            let mut c = v.duplicate()?;
            c.copy_from(v)?;
            copies.push(c);
        }
        Ok(LowRank {
            layout: first.layout().clone(),
            u: copies,
            d: d.to_vec(),
        })
    }
}

impl<T: Scalar> LinearOperator<T> for LowRank<T> {
    fn rows(&self) -> &Arc<Layout> {
        &self.layout
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.layout
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        let refs: Vec<&DistVector<T>> = self.u.iter().collect();
        let h = block_dot(&refs, &[x], Ok(()))?;
        let c: Vec<T> = h
            .iter()
            .zip(&self.d)
            .map(|(hi, di)| *hi * T::real(*di))
            .collect();
        y.fill(T::zero())?;
        maxpy(y, &c, &refs)
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        // Hermitian: d is real
        self.forward(y, x)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn describe(&self) -> String {
        format!(
            "LowRank (rank {}) {}",
            self.u.len(),
            self.layout.global_len()
        )
    }
}
