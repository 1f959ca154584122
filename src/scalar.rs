//! Element types: f32, f64, complex f32 (`c32`, C name "c64") and complex f64 (`c64`, C name "c128").

use num_complex::Complex;
use std::fmt::Debug;
use std::ops::{Add, AddAssign, Div, Mul, Neg, Sub};

use crate::error::Result;

/// Single-precision complex (8 bytes; the C API calls it `PARLOPS_C64`).
#[allow(non_camel_case_types)]
pub type c32 = Complex<f32>;
/// Double-precision complex (16 bytes; the C API calls it `PARLOPS_C128`).
#[allow(non_camel_case_types)]
pub type c64 = Complex<f64>;

crate::codes::code_table! {
    /// The four element types, by their C names.
    pub enum DType {
        F32 = 0, PARLOPS_F32;
        F64 = 1, PARLOPS_F64;
        C64 = 2, PARLOPS_C64;
        C128 = 3, PARLOPS_C128;
    }
}

impl DType {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }
    pub fn is_complex(self) -> bool {
        matches!(self, DType::C64 | DType::C128)
    }
}

/// Base real type used to move an element through MPI (a complex travels as two reals).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MpiBase {
    F32,
    F64,
    /// Bytes (internal: reports and messages).
    U8,
    /// 64-bit integers (internal: index lists).
    I64,
}

/// Seals [`Scalar`]: the unsafe code that hands element arrays to MPI, NCCL, hypre and the device
/// kernels relies on `PARTS`, `BASE` and the memory layout of exactly these four types, so no other
/// crate may add one.
mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
    impl Sealed for num_complex::Complex<f32> {}
    impl Sealed for num_complex::Complex<f64> {}
}

/// An element type of distributed vectors and operators: f32, f64 and their complex counterparts
/// (sealed: the crate's unsafe transfers rely on exactly these layouts).
pub trait Scalar:
    sealed::Sealed
    + Copy
    + Debug
    + PartialEq
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
{
    const DTYPE: DType;
    /// Reals per element (1 real, 2 complex) and their type, for MPI transfers.
    const PARTS: usize;
    const BASE: MpiBase;
    fn zero() -> Self;
    fn one() -> Self;
    fn conj(self) -> Self;
    /// |x| in double precision.
    fn abs_f64(self) -> f64;
    /// |x|^2 in double precision.
    fn abs2_f64(self) -> f64;
    /// Real and imaginary parts in double precision.
    fn to_parts(self) -> (f64, f64);
    /// Build from (re, im); an imaginary part on a real type is an error naming `what`.
    fn from_parts(re: f64, im: f64, what: &str) -> Result<Self>;
    /// Build from (re, im), dropping the imaginary part of a real type (for tests and references).
    fn from_parts_lossy(re: f64, im: f64) -> Self;
    fn is_zero(self) -> bool {
        self == Self::zero()
    }
    /// A real value as this type.
    fn real(v: f64) -> Self {
        Self::from_parts_lossy(v, 0.0)
    }
}

macro_rules! real_scalar {
    ($t:ty, $d:ident, $b:ident) => {
        impl Scalar for $t {
            const DTYPE: DType = DType::$d;
            const PARTS: usize = 1;
            const BASE: MpiBase = MpiBase::$b;
            fn zero() -> Self {
                0.0
            }
            fn one() -> Self {
                1.0
            }
            fn conj(self) -> Self {
                self
            }
            fn abs_f64(self) -> f64 {
                (self as f64).abs()
            }
            fn abs2_f64(self) -> f64 {
                (self as f64) * (self as f64)
            }
            fn to_parts(self) -> (f64, f64) {
                (self as f64, 0.0)
            }
            fn from_parts(re: f64, im: f64, what: &str) -> Result<Self> {
                if im != 0.0 {
                    crate::bail!(
                        InvalidArgument,
                        "argument '{what}' has imaginary part {im} (real part {re}) but the dtype is {}, which is real; pass im = 0",
                        DType::$d.name()
                    );
                }
                Ok(re as $t)
            }
            fn from_parts_lossy(re: f64, _im: f64) -> Self {
                re as $t
            }
        }
    };
}
real_scalar!(f32, F32, F32);
real_scalar!(f64, F64, F64);

macro_rules! complex_scalar {
    ($r:ty, $d:ident, $b:ident) => {
        impl Scalar for Complex<$r> {
            const DTYPE: DType = DType::$d;
            const PARTS: usize = 2;
            const BASE: MpiBase = MpiBase::$b;
            fn zero() -> Self {
                Complex::new(0.0, 0.0)
            }
            fn one() -> Self {
                Complex::new(1.0, 0.0)
            }
            fn conj(self) -> Self {
                Complex::conj(&self)
            }
            fn abs_f64(self) -> f64 {
                (self.re as f64).hypot(self.im as f64)
            }
            fn abs2_f64(self) -> f64 {
                (self.re as f64) * (self.re as f64) + (self.im as f64) * (self.im as f64)
            }
            fn to_parts(self) -> (f64, f64) {
                (self.re as f64, self.im as f64)
            }
            fn from_parts(re: f64, im: f64, _what: &str) -> Result<Self> {
                Ok(Complex::new(re as $r, im as $r))
            }
            fn from_parts_lossy(re: f64, im: f64) -> Self {
                Complex::new(re as $r, im as $r)
            }
        }
    };
}
complex_scalar!(f32, C64, F32);
complex_scalar!(f64, C128, F64);

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parts_and_names() {
        assert_eq!(f64::from_parts(1.5, 0.0, "a").unwrap(), 1.5);
        let e = f32::from_parts(1.0, 2.0, "alpha").unwrap_err();
        assert!(e.msg.contains("alpha") && e.msg.contains("PARLOPS_F32"));
        assert_eq!(c64::from_parts(1.0, 2.0, "a").unwrap(), c64::new(1.0, 2.0));
        assert_eq!(c32::new(3.0, 4.0).abs_f64(), 5.0);
        assert_eq!(
            <c64 as Scalar>::conj(c64::new(1.0, 2.0)),
            c64::new(1.0, -2.0)
        );
        for c in 0..4 {
            assert_eq!(DType::from_code(c).unwrap().code(), c);
        }
        assert!(DType::from_code(4).is_none() && DType::from_code(-1).is_none());
        assert_eq!(DType::C128.size(), 16);
    }
}
