//! Seeded random vectors (PETSc's VecSetRandom, hIPPYlib's parRandom): every entry is a function of
//! the seed and its global index only, so a seed gives the same global vector on any number of
//! ranks, with any split, and replicated copies agree. A counter-based generator (SplitMix64's
//! mixing of seed and index) needs no state and no communication.

use crate::codes::code_table;
use crate::error::Result;
use crate::memory::Location;
use crate::scalar::Scalar;

use super::DistVector;

code_table! {
    /// The distribution of each entry (of each of the real and imaginary parts for complex data).
    pub enum Distribution {
        /// Uniform on [0, 1) (PETSc's VecSetRandom default).
        Uniform = 0, PARLOPS_RANDOM_UNIFORM;
        /// Standard normal, mean 0 and variance 1 (Box-Muller).
        Gaussian = 1, PARLOPS_RANDOM_GAUSSIAN;
        /// +1 or -1 with probability 1/2 each (randomized eigensolvers' test vectors).
        Rademacher = 2, PARLOPS_RANDOM_RADEMACHER;
    }
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// 53 random bits as a double in [0, 1).
fn unit(z: u64) -> f64 {
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// Part `part` (0 real, 1 imaginary) of global entry `g`, for the mixed seed `s`.
fn value(d: Distribution, s: u64, g: u64, part: u64) -> f64 {
    let key = mix(s ^ mix(2 * g + part));
    match d {
        Distribution::Uniform => unit(key),
        Distribution::Rademacher => {
            if key >> 63 == 1 {
                1.0
            } else {
                -1.0
            }
        }
        Distribution::Gaussian => {
            let u1 = 1.0 - unit(key); // (0, 1]: the logarithm stays finite
            let u2 = unit(mix(key ^ 0xD1B5_4A32_D192_ED03));
            (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
        }
    }
}

impl<T: Scalar> DistVector<T> {
    /// Fill this rank's entries from `d` with `seed` (device vectors through a host copy). Not
    /// collective: no rank needs another's values.
    pub fn set_random(&mut self, d: Distribution, seed: u64) -> Result<()> {
        let s = mix(seed);
        let start = self.layout().local_start() as u64;
        let fill = |v: &mut [T]| {
            for (k, e) in v.iter_mut().enumerate() {
                let g = start + k as u64;
                let re = value(d, s, g, 0);
                let im = if T::PARTS == 2 {
                    value(d, s, g, 1)
                } else {
                    0.0
                };
                *e = T::from_parts_lossy(re, im);
            }
        };
        if !self.host_addressable() {
            let mut h = DistVector::<T>::new_in(self.layout().clone(), Location::Host)?;
            fill(h.local_mut());
            self.copy_any(&h)?;
            return self.settle();
        }
        fill(self.local_mut());
        Ok(())
    }
}
