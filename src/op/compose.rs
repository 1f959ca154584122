//! Compositions: new operators from others, holding references (no data copied). Each owns the work
//! vectors it needs, allocated here once.
//!
//! An inner operator that fails on one rank must not leave the other ranks waiting inside the next
//! operator's communication: compositions run every inner step whatever happened before, and report
//! the first error at the end (the caller then agrees on it across ranks).

use std::sync::Arc;

use super::{LinearOperator, Op, Work};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout};

fn same_shape<T: Scalar>(a: &Op<T>, b: &Op<T>, what: &str) -> Result<()> {
    if a.rows().compatible(b.rows()) && a.cols().compatible(b.cols()) {
        return Ok(());
    }
    crate::bail!(
        SizeMismatch,
        "{what} needs operators of the same shape and layouts: {} is {}x{}, {} is {}x{}",
        a.describe(),
        a.rows().global_len(),
        a.cols().global_len(),
        b.describe(),
        b.rows().global_len(),
        b.cols().global_len()
    )
}

/// y = sum_i c_i A_i x (sum, difference and scaling are all this).
pub struct LinComb<T: Scalar> {
    terms: Vec<(T, Op<T>)>,
    range_work: Work<T>,
    domain_work: Work<T>,
}

impl<T: Scalar> LinComb<T> {
    pub fn new(terms: Vec<(T, Op<T>)>) -> Result<LinComb<T>> {
        let Some((_, first)) = terms.first() else {
            crate::bail!(
                InvalidArgument,
                "a linear combination needs at least one operator"
            );
        };
        for (_, t) in &terms[1..] {
            same_shape(first, t, "a sum")?;
        }
        Ok(LinComb {
            range_work: Work::new(first.rows())?,
            domain_work: Work::new(first.cols())?,
            terms,
        })
    }
    /// A + B
    pub fn sum(a: Op<T>, b: Op<T>) -> Result<LinComb<T>> {
        Self::new(vec![(T::one(), a), (T::one(), b)])
    }
    /// A - B
    pub fn difference(a: Op<T>, b: Op<T>) -> Result<LinComb<T>> {
        Self::new(vec![(T::one(), a), (-T::one(), b)])
    }
    /// c A
    pub fn scale(c: T, a: Op<T>) -> Result<LinComb<T>> {
        Self::new(vec![(c, a)])
    }
}

impl<T: Scalar> LinearOperator<T> for LinComb<T> {
    fn rows(&self) -> &Arc<Layout> {
        self.terms[0].1.rows()
    }
    fn cols(&self) -> &Arc<Layout> {
        self.terms[0].1.cols()
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        let (c0, a0) = &self.terms[0];
        let mut r = a0.apply(x, y);
        if *c0 != T::one() {
            y.scale(*c0)?;
        }
        let mut t = self.range_work.get_like(y)?;
        for (c, a) in &self.terms[1..] {
            r = r.and(a.apply(x, &mut t)).and(y.axpy(*c, &t));
        }
        r
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        let (c0, a0) = &self.terms[0];
        let mut r = a0.apply_adjoint(y, x);
        if *c0 != T::one() {
            x.scale(c0.conj())?;
        }
        let mut t = self.domain_work.get_like(x)?;
        for (c, a) in &self.terms[1..] {
            r = r.and(a.apply_adjoint(y, &mut t)).and(x.axpy(c.conj(), &t));
        }
        r
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn parts(&self) -> Vec<&Op<T>> {
        self.terms.iter().map(|(_, a)| a).collect()
    }
    fn handles(&self, _: crate::memory::Location) -> bool {
        true
    }
    fn describe(&self) -> String {
        let parts: Vec<String> = self
            .terms
            .iter()
            .map(|(c, a)| {
                if *c == T::one() {
                    a.describe()
                } else {
                    format!("{:?}*{}", c, a.describe())
                }
            })
            .collect();
        format!("({})", parts.join(" + "))
    }
    fn diagonal(&self, d: &mut DistVector<T>) -> Result<()> {
        let (c0, a0) = &self.terms[0];
        a0.diagonal(d)?;
        d.scale(*c0)?;
        let mut t = self.range_work.get_like(d)?;
        for (c, a) in &self.terms[1..] {
            a.diagonal(&mut t)?;
            d.axpy(*c, &t)?;
        }
        Ok(())
    }
}

/// y = A (B x).
pub struct Product<T: Scalar> {
    a: Op<T>,
    b: Op<T>,
    mid: Work<T>,
}

impl<T: Scalar> Product<T> {
    pub fn new(a: Op<T>, b: Op<T>) -> Result<Product<T>> {
        if !a.cols().compatible(b.rows()) {
            crate::bail!(
                SizeMismatch,
                "product A*B: A ({}) has {} columns split as {:?}, B ({}) has {} rows split as {:?}",
                a.describe(),
                a.cols().global_len(),
                a.cols().local_lens(),
                b.describe(),
                b.rows().global_len(),
                b.rows().local_lens()
            );
        }
        Ok(Product {
            mid: Work::new(b.rows())?,
            a,
            b,
        })
    }
}

impl<T: Scalar> LinearOperator<T> for Product<T> {
    fn rows(&self) -> &Arc<Layout> {
        self.a.rows()
    }
    fn cols(&self) -> &Arc<Layout> {
        self.b.cols()
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        let mut t = self.mid.get_like(x)?;
        let r = self.b.apply(x, &mut t);
        r.and(self.a.apply(&t, y))
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        let mut t = self.mid.get_like(y)?;
        let r = self.a.apply_adjoint(y, &mut t);
        r.and(self.b.apply_adjoint(&t, x))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn parts(&self) -> Vec<&Op<T>> {
        vec![&self.a, &self.b]
    }
    fn handles(&self, _: crate::memory::Location) -> bool {
        true
    }
    fn describe(&self) -> String {
        format!("({} * {})", self.a.describe(), self.b.describe())
    }
}

/// A^H.
pub struct Adjoint<T: Scalar> {
    a: Op<T>,
}

impl<T: Scalar> Adjoint<T> {
    pub fn new(a: Op<T>) -> Adjoint<T> {
        Adjoint { a }
    }
}

impl<T: Scalar> LinearOperator<T> for Adjoint<T> {
    fn rows(&self) -> &Arc<Layout> {
        self.a.cols()
    }
    fn cols(&self) -> &Arc<Layout> {
        self.a.rows()
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.a.apply_adjoint(x, y)
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        self.a.apply(y, x)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn parts(&self) -> Vec<&Op<T>> {
        vec![&self.a]
    }
    fn handles(&self, _: crate::memory::Location) -> bool {
        true
    }
    fn describe(&self) -> String {
        format!("{}^H", self.a.describe())
    }
    fn diagonal(&self, d: &mut DistVector<T>) -> Result<()> {
        self.a.diagonal(d)?;
        d.conj()?;
        Ok(())
    }
}

/// conj(A) (`transpose = false`) or A^T (`transpose = true`), through
/// conj(A) x = conj(A conj(x)) and A^T x = conj(A^H conj(x)). For real types both are cheap views.
pub struct Conjugate<T: Scalar> {
    a: Op<T>,
    transpose: bool,
    rows_work: Work<T>,
    cols_work: Work<T>,
}

impl<T: Scalar> Conjugate<T> {
    pub fn new(a: Op<T>, transpose: bool) -> Result<Conjugate<T>> {
        Ok(Conjugate {
            rows_work: Work::new(a.rows())?,
            cols_work: Work::new(a.cols())?,
            a,
            transpose,
        })
    }

    /// out = conj(f(conj(inp))) with `work` holding conj(inp); real types skip the conjugations.
    fn conj_apply(
        &self,
        inp: &DistVector<T>,
        out: &mut DistVector<T>,
        work: &Work<T>,
        f: impl Fn(&DistVector<T>, &mut DistVector<T>) -> Result<()>,
    ) -> Result<()> {
        if !T::DTYPE.is_complex() {
            return f(inp, out);
        }
        let mut w = work.get_like(inp)?;
        w.copy_from(inp)?;
        w.conj()?;
        let r = f(&w, out);
        out.conj()?;
        r
    }
}

impl<T: Scalar> LinearOperator<T> for Conjugate<T> {
    fn rows(&self) -> &Arc<Layout> {
        if self.transpose {
            self.a.cols()
        } else {
            self.a.rows()
        }
    }
    fn cols(&self) -> &Arc<Layout> {
        if self.transpose {
            self.a.rows()
        } else {
            self.a.cols()
        }
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        if self.transpose {
            self.conj_apply(x, y, &self.rows_work, |i, o| self.a.apply_adjoint(i, o))
        } else {
            self.conj_apply(x, y, &self.cols_work, |i, o| self.a.apply(i, o))
        }
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        // (A^T)^H = conj(A);  conj(A)^H = A^T
        if self.transpose {
            self.conj_apply(y, x, &self.cols_work, |i, o| self.a.apply(i, o))
        } else {
            self.conj_apply(y, x, &self.rows_work, |i, o| self.a.apply_adjoint(i, o))
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn parts(&self) -> Vec<&Op<T>> {
        vec![&self.a]
    }
    fn handles(&self, _: crate::memory::Location) -> bool {
        true
    }
    fn describe(&self) -> String {
        if self.transpose {
            format!("{}^T", self.a.describe())
        } else {
            format!("conj({})", self.a.describe())
        }
    }
    fn diagonal(&self, d: &mut DistVector<T>) -> Result<()> {
        self.a.diagonal(d)?;
        if !self.transpose {
            d.conj()?;
        }
        Ok(())
    }
}

/// A^k for a square operator (k >= 0; A^0 = I).
pub struct Power<T: Scalar> {
    a: Op<T>,
    k: u32,
    work: [Work<T>; 2],
}

impl<T: Scalar> Power<T> {
    pub fn new(a: Op<T>, k: i64) -> Result<Power<T>> {
        if !a.rows().compatible(a.cols()) {
            crate::bail!(
                SizeMismatch,
                "power needs a square operator with equal row and column layouts; {} is {}x{} (rows split as {:?}, columns as {:?})",
                a.describe(),
                a.rows().global_len(),
                a.cols().global_len(),
                a.rows().local_lens(),
                a.cols().local_lens()
            );
        }
        if !(0..=1_000_000).contains(&k) {
            crate::bail!(
                InvalidArgument,
                "argument 'k' is {k}; the power must be in 0..=1000000"
            );
        }
        Ok(Power {
            work: [Work::new(a.rows())?, Work::new(a.rows())?],
            a,
            k: k as u32,
        })
    }

    fn run(&self, x: &DistVector<T>, y: &mut DistVector<T>, adjoint: bool) -> Result<()> {
        let step = |i: &DistVector<T>, o: &mut DistVector<T>| {
            if adjoint {
                self.a.apply_adjoint(i, o)
            } else {
                self.a.apply(i, o)
            }
        };
        match self.k {
            0 => y.copy_from(x),
            1 => step(x, y),
            k => {
                let mut w0 = self.work[0].get_like(x)?;
                let mut w1 = self.work[1].get_like(x)?;
                step(x, &mut w0)?;
                for i in 1..k - 1 {
                    if i % 2 == 1 {
                        step(&w0, &mut w1)?;
                    } else {
                        step(&w1, &mut w0)?;
                    }
                }
                if k % 2 == 0 {
                    step(&w0, y)
                } else {
                    step(&w1, y)
                }
            }
        }
    }
}

impl<T: Scalar> LinearOperator<T> for Power<T> {
    fn rows(&self) -> &Arc<Layout> {
        self.a.rows()
    }
    fn cols(&self) -> &Arc<Layout> {
        self.a.cols()
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.run(x, y, false)
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        self.run(y, x, true)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn parts(&self) -> Vec<&Op<T>> {
        vec![&self.a]
    }
    fn handles(&self, _: crate::memory::Location) -> bool {
        true
    }
    fn describe(&self) -> String {
        format!("{}^{}", self.a.describe(), self.k)
    }
}
