//! Applying an operator of run-time type ([`AnyOp`]) to vectors of run-time type ([`AnyVec`]), with
//! every check made and agreed across ranks: what the C API's apply, multadd and diagonal call.

use std::sync::Mutex;

use super::{AnyOp, Op, check_apply, enter};
use crate::any_op;
use crate::error::Result;
use crate::memory::Location;
use crate::scalar::Scalar;
use crate::vector::{AnyVec, DistVector};

/// The typed vector inside an AnyVec (its dtype is the operator's, checked before).
fn typed_vec<T: Scalar>(v: &AnyVec) -> Result<&DistVector<T>> {
    let d = v.dtype();
    v.typed::<T>().ok_or_else(|| {
        crate::err!(
            DTypeMismatch,
            "vector dtype {} does not match the operator",
            d.name()
        )
    })
}

fn typed_vec_mut<T: Scalar>(v: &mut AnyVec) -> Result<&mut DistVector<T>> {
    let d = v.dtype();
    v.typed_mut::<T>().ok_or_else(|| {
        crate::err!(
            DTypeMismatch,
            "vector dtype {} does not match the operator",
            d.name()
        )
    })
}

/// A scalar given as (real, imaginary) parts, as the element type of `_op`.
fn scalar_as<T: Scalar>(_op: &Op<T>, (re, im): (f64, f64), what: &str) -> Result<T> {
    T::from_parts(re, im, what)
}

/// Work vectors of [`AnyOp::multadd`] (range, domain), allocated at first use and kept.
#[derive(Default)]
pub struct MultAddWork(Mutex<[Option<AnyVec>; 2]>);

impl AnyOp {
    /// Is `v` of this operator's dtype? (`name` is the argument's name in the message.)
    pub fn check_vec_dtype(&self, v: &AnyVec, name: &str) -> Result<()> {
        if v.dtype() != self.dtype() {
            crate::bail!(
                DTypeMismatch,
                "argument '{name}' is {} but the operator ({}) is {}",
                v.dtype().name(),
                self.describe(),
                self.dtype().name()
            );
        }
        Ok(())
    }

    /// y = A x (or, `adjoint`, x = A^H y, `x` then being y): the vectors (a rank's failure to
    /// provide them included) are checked and the check agreed on every rank together, then the
    /// operator runs (a panic in it becomes an error on that rank) and the outcome is agreed.
    /// [collective]
    ///
    /// `ident` is what names this operator the same on every rank (the C handle's identity): ranks
    /// passing different operators fail together instead of entering different communication.
    pub fn apply_checked(
        &self,
        x: Result<&AnyVec>,
        y: Result<&mut AnyVec>,
        adjoint: bool,
        ident: i64,
    ) -> Result<()> {
        let comm = self.rows().comm().clone();
        let (xn, yn) = if adjoint { ("y", "x") } else { ("x", "y") };
        let pre = match (&x, &y) {
            (Ok(xv), Ok(yv)) => self
                .check_vec_dtype(xv, xn)
                .and_then(|_| self.check_vec_dtype(yv, yn))
                .and_then(|_| {
                    any_op!(self, op => check_apply(op.as_ref(), typed_vec(xv)?, typed_vec(yv)?, adjoint))
                }),
            (Err(e), _) | (_, Err(e)) => Err(e.clone()),
        };
        // where the vectors live must be the same on every rank (staging is collective)
        let loc = y.as_ref().map_or(-1, |yv| yv.location().code() as i64);
        comm.agree_same(
            pre,
            &format!(
                "operators or memories for argument '{yn}' ([the operator's identity, memory]: pass the same operator on every rank, and one memory, 0 = host, 1 = CUDA)"
            ),
            &[ident, loc],
        )?;
        let (x, y) = (x?, y?);
        // a panic inside one rank's apply must still reach the agreement, or the others would wait
        let run = crate::error::catch_panic("the operator", || {
            any_op!(self, op => {
                let (xv, yv) = (typed_vec(x)?, typed_vec_mut(y)?);
                let r = if adjoint { op.apply_adjoint(xv, yv) } else { op.apply(xv, yv) };
                r.and_then(|_| yv.settle())
            })
        });
        comm.agree(run)
    }

    /// y = alpha A x + beta y (or, `adjoint`, x = alpha A^H y + beta x), through a work vector of
    /// `work` in the output's memory. The scalars (real and imaginary parts) must fit the dtype.
    /// Every check, and the work vector's allocation, is agreed with the apply. [collective]
    #[allow(clippy::too_many_arguments)]
    pub fn multadd(
        &self,
        work: &MultAddWork,
        alpha: (f64, f64),
        x: Result<&AnyVec>,
        beta: (f64, f64),
        y: Result<&mut AnyVec>,
        adjoint: bool,
        ident: i64,
    ) -> Result<()> {
        let yn = if adjoint { "x" } else { "y" };
        let range = if adjoint { self.cols() } else { self.rows() };
        // a callback applying its own operator with multadd: an error, not a deadlock on `work`
        let _busy = enter(work as *const MultAddWork as usize, &|| self.describe())?;
        let mut w = work.0.lock().unwrap_or_else(|p| p.into_inner());
        let slot = &mut w[adjoint as usize];
        // the work vector lives where the output does
        let loc = y.as_ref().map_or(Location::Host, |v| v.location());
        // an allocation failure joins the agreement of the apply below (through x), so no rank waits
        let mut made = Ok(());
        if slot.as_ref().is_none_or(|t| t.location() != loc) {
            match AnyVec::new(range.clone(), self.dtype(), loc) {
                Ok(v) => *slot = Some(v),
                Err(e) => {
                    *slot = Some(AnyVec::new(range.clone(), self.dtype(), Location::Host)?);
                    made = Err(e);
                }
            }
        }
        let t = slot
            .as_mut()
            .ok_or_else(|| crate::err!(Internal, "work vector missing"))?;
        let x = x.and_then(|v| made.map(|_| v));
        // the output and the scalars are checked before anything runs, as part of the same agreement
        let (x, y) = match y {
            Ok(yv) => {
                let ok = any_op!(self, op => scalar_as(op, alpha, "alpha").and(scalar_as(op, beta, "beta")).map(|_| ()))
                    .and_then(|_| self.check_vec_dtype(yv, yn))
                    .and_then(|_| {
                        if yv.layout().compatible(range) {
                            Ok(())
                        } else {
                            Err(crate::err!(
                                SizeMismatch,
                                "argument '{yn}' has global length {} split as {:?}; the result of this product has {} split as {:?}",
                                yv.layout().global_len(),
                                yv.layout().local_lens(),
                                range.global_len(),
                                range.local_lens()
                            ))
                        }
                    });
                (x.and_then(|x| ok.map(|_| x)), Some(yv))
            }
            Err(e) => (Err(e), None),
        };
        self.apply_checked(x, Ok(t), adjoint, ident)?;
        let yv = y.ok_or_else(|| crate::err!(Internal, "output missing after agreement"))?;
        let t = w[adjoint as usize]
            .as_ref()
            .ok_or_else(|| crate::err!(Internal, "work vector missing"))?;
        any_op!(self, op => {
            let (al, be) = (scalar_as(op, alpha, "alpha")?, scalar_as(op, beta, "beta")?);
            typed_vec_mut(yv)?.axpby(al, typed_vec(t)?, be)
        })?;
        yv.settle()
    }

    /// d = diag(A) for a square operator with equal row and column layouts, `d` of that layout
    /// (a device `d` is filled through the host). Not collective.
    pub fn diagonal_into(&self, d: &mut AnyVec) -> Result<()> {
        self.check_vec_dtype(d, "d")?;
        if !d.layout().compatible(self.rows()) || !self.rows().compatible(self.cols()) {
            crate::bail!(
                SizeMismatch,
                "the diagonal needs a square operator with equal layouts and 'd' of that layout: operator {}x{}, 'd' of length {}",
                self.rows().global_len(),
                self.cols().global_len(),
                d.layout().global_len()
            );
        }
        any_op!(self, op => {
            let dv = typed_vec_mut(d)?;
            if dv.host_addressable() {
                op.diagonal(dv)
            } else {
                // diagonals are gathered on the host
                dv.staged(|h| op.diagonal(h))
            }
        })
    }

    /// The dot test of [`super::dottest`]. [collective]
    pub fn dottest(&self, seed: u64) -> Result<f64> {
        any_op!(self, op => super::dottest(op.as_ref(), seed))
    }
}
