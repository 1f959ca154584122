//! Matrix-free constant-coefficient Poisson operators: the 3-, 5- and 7-point Laplacians on 1-, 2-
//! and 3-D grids (2 d on the diagonal, -1 for each neighbour inside the grid: Dirichlet boundaries
//! eliminated, unit spacing), the operators PDE codes benchmark with (PETSc's KSP tutorials). No
//! matrix is stored: an apply reads x and writes y, 16 bytes per double row against the 80 of a
//! 5-point CSR matrix with 32-bit indices.
//!
//! The grid is numbered in C order (the last extent varies fastest) and split in rows as the
//! layout says (any split: a rank may hold part of a grid line, or nothing). The halo is the
//! stencil's width: the `w` rows below and above this rank's range, w the stride of the slowest
//! axis, brought by the same halo plan as the CSR matrices' ghosts.
//!
//! Each row sums its terms in increasing column order, as a CSR row of the same matrix does on one
//! rank, so the results are bitwise those of the assembled matrix there (on more ranks a CSR matrix
//! adds the other ranks' columns last).

use std::sync::{Arc, Mutex};

use super::LinearOperator;
use crate::comm::halo::HaloPlan;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::ops::{add_dot as add, combine_lanes, sequential_sums};
use crate::vector::{DistVector, Layout};

struct Bufs<T> {
    send: Vec<T>,
    ghost: Vec<T>,
}

/// The matrix-free Laplacian of a 1-, 2- or 3-D grid.
pub struct Poisson<T: Scalar> {
    layout: Arc<Layout>,
    ndim: usize,
    /// extents padded to three, slowest first: [nz, ny, nx] (1 for missing axes)
    n: [usize; 3],
    /// stride of the slowest real axis (the halo's width)
    width: usize,
    halo: HaloPlan,
    /// ghosts below this rank's first row (they come first in the ghost array)
    below: usize,
    bufs: Mutex<Bufs<T>>,
}

impl<T: Scalar> Poisson<T> {
    /// The Laplacian of a grid with extents `dims` (slowest first, 1 to 3 of them, each >= 1, their
    /// product the layout's length), on a split layout. [collective]
    pub fn new(layout: Arc<Layout>, dims: &[i64], pre: Result<()>) -> Result<Poisson<T>> {
        let shape = pre.and_then(|_| {
            if layout.partition().is_replicated() {
                crate::bail!(
                    NotSupported,
                    "the Poisson operator needs a split (scatter) layout, not {}",
                    layout.partition().name()
                );
            }
            if dims.is_empty() || dims.len() > 3 {
                crate::bail!(
                    InvalidArgument,
                    "argument 'ndim' is {}; the Poisson operator has 1, 2 or 3 dimensions",
                    dims.len()
                );
            }
            let mut total: i64 = 1;
            for (a, &d) in dims.iter().enumerate() {
                if d < 1 {
                    crate::bail!(
                        InvalidArgument,
                        "dims[{a}] is {d}; every extent must be >= 1"
                    );
                }
                total = total.checked_mul(d).ok_or_else(|| {
                    crate::err!(
                        InvalidArgument,
                        "dims {dims:?} make more than 2^63 - 1 points"
                    )
                })?;
            }
            if total != layout.global_len() {
                crate::bail!(
                    SizeMismatch,
                    "dims {dims:?} make {total} points, but the layout has {} rows",
                    layout.global_len()
                );
            }
            let mut n = [1usize; 3];
            for (k, &d) in dims.iter().rev().enumerate() {
                n[2 - k] = d as usize;
            }
            Ok(n)
        });
        let (n, pre) = match shape {
            Ok(n) => (n, Ok(())),
            Err(e) => ([1, 1, 1], Err(e)),
        };
        // the same grid on every rank, or every rank refuses it
        let mut same = vec![dims.len() as i64];
        same.extend(dims.iter().copied().chain(std::iter::repeat(0)).take(3));
        layout
            .comm()
            .agree_same(pre, "Poisson grid extents (ndim, dims)", &same)?;
        let ndim = dims.len().clamp(1, 3);
        let width = match ndim {
            1 => 1,
            2 => n[2],
            _ => n[1] * n[2],
        };
        let (s, e, total) = (
            layout.local_start(),
            layout.local_start() + layout.local_len(),
            layout.global_len(),
        );
        // this rank's ghosts: up to a grid line (2D) or plane (3D) on each side, which a caller's
        // grid can make larger than memory: allocated fallibly, the failure agreed by the plan
        let mut ghosts = Vec::new();
        let pre = if e > s {
            let w = width as i64;
            let (lo, hi) = ((s - w).max(0), e.saturating_add(w).min(total));
            crate::error::try_reserve(
                &mut ghosts,
                ((s - lo) + (hi - e)) as usize,
                "the Poisson operator's ghost indices",
            )
            .map(|_| {
                ghosts.extend(lo..s);
                ghosts.extend(e..hi);
            })
        } else {
            Ok(())
        };
        let below = ghosts.iter().take_while(|&&g| g < s).count();
        let halo = HaloPlan::new(
            layout.comm(),
            layout.offsets(),
            layout.local_lens(),
            total,
            &ghosts,
            pre,
        )?;
        let bufs = layout.comm().agree((|| {
            let mut send = Vec::new();
            let mut ghost = Vec::new();
            send.try_reserve_exact(halo.n_send())
                .and_then(|_| ghost.try_reserve_exact(halo.n_ghost()))
                .map_err(|_| {
                    crate::err!(
                        OutOfMemory,
                        "cannot allocate the Poisson operator's halo buffers ({} values)",
                        halo.n_send() + halo.n_ghost()
                    )
                })?;
            send.resize(halo.n_send(), T::zero());
            ghost.resize(halo.n_ghost(), T::zero());
            Ok(Bufs { send, ghost })
        })())?;
        Ok(Poisson {
            layout,
            ndim,
            n,
            width,
            halo,
            below,
            bufs: Mutex::new(bufs),
        })
    }

    /// [`Poisson::forward_host`] compiled for AVX2 (the same operations in the same order: the same
    /// bits; no fused multiply-add).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn forward_host_avx2<const DOT: bool>(
        &self,
        xl: &[T],
        ghost: &[T],
        yl: &mut [T],
    ) -> (f64, f64) {
        self.forward_host::<DOT>(xl, ghost, yl)
    }

    /// y = A x on this rank's rows, with x's ghosts in `ghost`; with `DOT` also this rank's
    /// conj(x).y (blocked, or in row order with sequential sums).
    #[inline(always)]
    fn forward_host<const DOT: bool>(&self, xl: &[T], ghost: &[T], yl: &mut [T]) -> (f64, f64) {
        let s = self.layout.local_start() as usize;
        let len = yl.len();
        let e = s + len;
        let [nz, ny, nx] = self.n;
        let (sy, sz) = (nx, nx * ny);
        let nd = self.ndim;
        let c = T::real(2.0 * nd as f64);
        let below = self.below;
        // x at global index g (local or ghost)
        let get = |g: usize| -> T {
            if g < s {
                ghost[below - (s - g)]
            } else if g >= e {
                ghost[below + (g - e)]
            } else {
                xl[g - s]
            }
        };
        // one row, terms in increasing column order (a CSR row's order)
        let point = |g: usize| -> T {
            let (x, y, z) = (g % nx, (g / nx) % ny, g / sz);
            let mut t = T::zero();
            if nd == 3 && z > 0 {
                t += -get(g - sz);
            }
            if nd >= 2 && y > 0 {
                t += -get(g - sy);
            }
            if x > 0 {
                t += -get(g - 1);
            }
            t += c * get(g);
            if x + 1 < nx {
                t += -get(g + 1);
            }
            if nd >= 2 && y + 1 < ny {
                t += -get(g + sy);
            }
            if nd == 3 && z + 1 < nz {
                t += -get(g + sz);
            }
            t
        };
        let seq = sequential_sums();
        let mut lanes = [(0.0f64, 0.0f64); 8];
        // conj(x_l) y_l into its lane: l mod 8 (blocked sums), or one chain in row order
        let dot = |lanes: &mut [(f64, f64); 8], l: usize, v: T| {
            if DOT {
                add(&mut lanes[if seq { 0 } else { l % 8 }], xl[l], v);
            }
        };
        // rows whose neighbours are all on this rank: [s + w, e - w)
        let w = self.width;
        let (fa, fb) = (s + w, e.saturating_sub(w));
        let mut g = s;
        while g < e {
            if g < fa || g >= fb {
                let v = point(g);
                yl[g - s] = v;
                dot(&mut lanes, g - s, v);
                g += 1;
                continue;
            }
            // a piece of one grid line inside the fast range
            let ls = g - g % nx;
            let b = (ls + nx).min(fb);
            let (has_s, has_n) = (
                nd < 3 || !(g / nx).is_multiple_of(ny),
                nd < 3 || (g / nx) % ny + 1 < ny,
            );
            let (ia, ib) = ((ls + 1).max(g), (ls + nx - 1).min(b));
            for q in g..ia.min(b) {
                let v = point(q);
                yl[q - s] = v;
                dot(&mut lanes, q - s, v);
            }
            if ia < ib {
                let (la, lb) = (ia - s, ib - s);
                let args = (xl, &mut *yl, la, lb, sy, sz, c);
                match (nd, has_s, has_n) {
                    (1, _, _) => line::<T, 1, true, true>(args),
                    (2, _, _) => line::<T, 2, true, true>(args),
                    (_, true, true) => line::<T, 3, true, true>(args),
                    (_, true, false) => line::<T, 3, true, false>(args),
                    (_, false, true) => line::<T, 3, false, true>(args),
                    (_, false, false) => line::<T, 3, false, false>(args),
                }
                if DOT {
                    let (xs, ys) = (&xl[la..lb], &yl[la..lb]);
                    if seq {
                        for (l, v) in ys.iter().enumerate() {
                            add(&mut lanes[0], xs[l], *v);
                        }
                    } else {
                        // lane of entry l is l mod 8, as in the slow rows
                        let mut l = la;
                        while l < lb && l % 8 != 0 {
                            add(&mut lanes[l % 8], xl[l], yl[l]);
                            l += 1;
                        }
                        let body = (lb - l) / 8 * 8;
                        for (xc, yc) in xl[l..l + body]
                            .chunks_exact(8)
                            .zip(yl[l..l + body].chunks_exact(8))
                        {
                            for k in 0..8 {
                                add(&mut lanes[k], xc[k], yc[k]);
                            }
                        }
                        for q in l + body..lb {
                            add(&mut lanes[q % 8], xl[q], yl[q]);
                        }
                    }
                }
            }
            for q in ib.max(ia.min(b))..b {
                let v = point(q);
                yl[q - s] = v;
                dot(&mut lanes, q - s, v);
            }
            g = b;
        }
        combine_lanes(lanes)
    }

    #[allow(clippy::needless_range_loop)]
    fn run<const DOT: bool>(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<(f64, f64)> {
        let mut b = self.bufs.lock().unwrap_or_else(|p| p.into_inner());
        let Bufs { send, ghost } = &mut *b;
        self.halo.forward(x.local(), send, ghost, || Ok(()))?;
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above)
            return Ok(unsafe { self.forward_host_avx2::<DOT>(x.local(), ghost, y.local_mut()) });
        }
        Ok(self.forward_host::<DOT>(x.local(), ghost, y.local_mut()))
    }
}

impl<T: Scalar> LinearOperator<T> for Poisson<T> {
    fn rows(&self) -> &Arc<Layout> {
        &self.layout
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.layout
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.run::<false>(x, y).map(|_| ())
    }
    /// Real coefficients, symmetric: A^H = A.
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        self.run::<false>(y, x).map(|_| ())
    }
    fn apply_dot(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<Option<(f64, f64)>> {
        if !(x.host_addressable() && y.host_addressable()) {
            return self.apply(x, y).map(|_| None);
        }
        self.run::<true>(x, y).map(Some)
    }
    fn describe(&self) -> String {
        let d: Vec<String> = self.n[3 - self.ndim..]
            .iter()
            .map(|v| v.to_string())
            .collect();
        format!("Poisson {}", d.join("x"))
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn diagonal(&self, d: &mut DistVector<T>) -> Result<()> {
        d.fill(T::real(2.0 * self.ndim as f64))
    }
}

/// The rows l in la..lb of one grid line, none on the line's ends, all of whose neighbours are on
/// this rank (`S`/`N`: whether the neighbours along the middle axis of a 3-D grid exist), terms in
/// increasing column order.
#[inline(always)]
fn line<T: Scalar, const ND: usize, const S: bool, const N: bool>(
    (xl, yl, la, lb, sy, sz, c): (&[T], &mut [T], usize, usize, usize, usize, T),
) {
    let w = if ND == 3 {
        sz.max(sy)
    } else if ND == 2 {
        sy
    } else {
        1
    };
    assert!(la >= w && la <= lb && lb + w <= xl.len() && lb <= yl.len() && sy >= 1);
    // SAFETY: la >= w and lb + w <= len (checked above), w the largest stride used (ND), so
    // l - sz, l - sy, l - 1 >= 0 and l + 1, l + sy, l + sz < len for every l in la..lb, and y has
    // at least lb entries.
    let at = |i: usize| unsafe { *xl.get_unchecked(i) };
    for l in la..lb {
        let mut t = T::zero();
        if ND == 3 {
            t += -at(l - sz);
        }
        if ND >= 2 && S {
            t += -at(l - sy);
        }
        t += -at(l - 1);
        t += c * at(l);
        t += -at(l + 1);
        if ND >= 2 && N {
            t += -at(l + sy);
        }
        if ND == 3 {
            t += -at(l + sz);
        }
        // SAFETY: l < lb <= yl.len() (asserted above).
        unsafe { *yl.get_unchecked_mut(l) = t };
    }
}
