//! Non-stationary 1-D convolution (PyLops' NonStationaryConvolve1D, PyLops-MPI's
//! MPINonStationaryConvolve1D): a bank of compact filters `hs` (odd length) given at the regularly
//! spaced positions `ih` of one axis, linearly interpolated in between (the first and last filters
//! held beyond the ends), each input sample spreading its own filter around it:
//! y[j] = sum_i h_i[j - i + c] x[i] over |j - i| <= c, c = hsize / 2, summed over i in order (as
//! PyLops adds them). The adjoint gathers x[i] = sum_j conj(h_i[j - i + c]) y[j].
//!
//! Along axis 0 of an array split along axis 0 (a 1-D split layout is one) each rank exchanges a halo
//! of c slabs with whoever holds them (any split, a rank with fewer slabs than c, or none); along
//! another axis every line is whole on its rank and nothing moves.

use std::sync::{Arc, Mutex};

use super::LinearOperator;
use crate::comm::halo::HaloPlan;
use crate::error::{Result, checked_product, try_reserve};
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout};

/// The filters: `hs` holds `nh` filters of `hsize` taps, at positions oh, oh + dh, ...
struct Bank<T> {
    hs: Vec<T>,
    hsize: usize,
    oh: i64,
    dh: i64,
    nh: i64,
}

impl<T: Scalar> Bank<T> {
    /// The filter of position i into `h` (PyLops' rule: the nearest filter below and the next,
    /// weighted by the distance; the end filters beyond the ends).
    fn at(&self, i: i64, h: &mut [T]) {
        let k = self.hsize;
        let f = |m: i64| &self.hs[m as usize * k..(m as usize + 1) * k];
        let pos = (i - self.oh) as f64 / self.dh as f64;
        let below = pos.floor() as i64;
        if below < 0 {
            h.copy_from_slice(f(0));
        } else if below >= self.nh - 1 {
            h.copy_from_slice(f(self.nh - 1));
        } else {
            let d = pos - below as f64;
            let (a, b) = (T::real(1.0 - d), T::real(d));
            for ((o, &u), &v) in h.iter_mut().zip(f(below)).zip(f(below + 1)) {
                *o = a * u + b * v;
            }
        }
    }
}

struct Bufs<T> {
    send: Vec<T>,
    ghost: Vec<T>,
    /// The input with its halo: slabs a0..a1 of the axis.
    ext: Vec<T>,
    h: Vec<T>,
}

pub struct NsConv<T: Scalar> {
    layout: Arc<Layout>,
    bank: Bank<T>,
    /// The axis' length, the entries of one of its slabs (the axes after it), and whether it is
    /// the split axis (0).
    n: i64,
    inner: usize,
    split: bool,
    /// The halo (split axis only) and the number of its ghosts below this rank's range.
    halo: Option<HaloPlan>,
    below: usize,
    bufs: Mutex<Bufs<T>>,
}

/// What the caller passes, checked on this rank (the filters copied).
pub struct NsSpec<T> {
    pub axis: i64,
    pub hsize: i64,
    pub hs: Vec<T>,
    pub ih: Vec<i64>,
}

impl<T: Scalar> NsConv<T> {
    /// The operator on `layout` (a 1-D split layout, or an N-D one split along axis 0) along `axis`
    /// (negative counts from the end); `spec` is this rank's verdict on the arguments. Every rank
    /// must pass the same axis and filters (agreed here). [collective]
    pub fn new(layout: Arc<Layout>, spec: Result<NsSpec<T>>) -> Result<NsConv<T>> {
        let comm = layout.comm().clone();
        let shape: Vec<i64> = layout.shape().to_vec();
        let nd = shape.len() as i64;
        let checked = spec.and_then(|s| {
            if layout.partition().is_replicated() || !layout.parts().is_empty() {
                crate::bail!(
                    NotSupported,
                    "argument 'layout' of the non-stationary convolution must be a split (scatter) \
                     layout, 1-D or N-D, not {}{}",
                    layout.partition().name(),
                    if layout.parts().is_empty() { "" } else { " (stacked)" }
                );
            }
            if s.axis < -nd || s.axis >= nd {
                crate::bail!(
                    InvalidArgument,
                    "argument 'axis' is {}; the layout has {nd} axes (valid: -{nd}..{})",
                    s.axis,
                    nd - 1
                );
            }
            let axis = s.axis.rem_euclid(nd) as usize;
            let n = shape[axis];
            if s.hsize < 1 || s.hsize % 2 == 0 {
                crate::bail!(
                    InvalidArgument,
                    "argument 'hsize' is {}; the filters must have an odd number of taps",
                    s.hsize
                );
            }
            let nh = s.ih.len();
            if nh < 2 {
                crate::bail!(
                    InvalidArgument,
                    "argument 'nfilts' is {nh}; at least two filters are needed (their spacing \
                     sets the interpolation)"
                );
            }
            let dh = s.ih[1] - s.ih[0];
            if let Some(w) = s.ih.windows(2).position(|w| w[1] - w[0] != dh || dh < 1) {
                crate::bail!(
                    InvalidArgument,
                    "argument 'ih' must be increasing with a constant step; ih[{w}] = {}, ih[{}] = \
                     {} (step {})",
                    s.ih[w],
                    w + 1,
                    s.ih[w + 1],
                    s.ih[w + 1] - s.ih[w]
                );
            }
            if s.ih[0] < 0 || s.ih[nh - 1] >= n {
                crate::bail!(
                    InvalidArgument,
                    "argument 'ih' runs from {} to {}; the positions must lie in 0..{n} (axis {axis})",
                    s.ih[0],
                    s.ih[nh - 1]
                );
            }
            Ok((axis, s))
        });
        // the same axis and filters on every rank (their bits hashed)
        let sig: Vec<i64> = match &checked {
            Ok((axis, s)) => {
                // the filters' bits and positions hashed a piece at a time (no copy of the
                // caller's size, nothing of that size gathered)
                let mut hash = 0u64;
                let mut piece = Vec::with_capacity(1 + 2 * 256);
                for chunk in s.hs.chunks(256) {
                    piece.clear();
                    piece.push(hash as i64);
                    for t in chunk {
                        let (re, im) = t.to_parts();
                        piece.extend([re.to_bits() as i64, im.to_bits() as i64]);
                    }
                    hash = crate::comm::list_hash(&piece, 7);
                }
                let mut hash_ih = 0u64;
                for chunk in s.ih.chunks(256) {
                    piece.clear();
                    piece.push(hash_ih as i64);
                    piece.extend_from_slice(chunk);
                    hash_ih = crate::comm::list_hash(&piece, 8);
                }
                vec![
                    *axis as i64,
                    s.hsize,
                    s.ih.len() as i64,
                    hash as i64,
                    hash_ih as i64,
                ]
            }
            Err(_) => vec![-1],
        };
        comm.agree_same(
            checked.as_ref().map(|_| ()).map_err(|e| e.clone()),
            "non-stationary convolution arguments ([axis, hsize, nfilts, a hash of hs, a hash of ih])",
            &sig,
        )?;
        let (axis, s) = checked?;
        let n = shape[axis];
        let inner = checked_product(
            "the non-stationary convolution's slab",
            &shape[axis + 1..]
                .iter()
                .map(|&d| ("an extent after the axis", d))
                .collect::<Vec<_>>(),
        )? as usize;
        let split = axis == 0;
        let c = s.hsize / 2;
        let (st, len, total) = (
            layout.local_start(),
            layout.local_len(),
            layout.global_len(),
        );
        let mut ghosts = Vec::new();
        let mut below = 0;
        let halo = if split {
            let w = c.saturating_mul(inner as i64);
            let pre = (|| {
                if len > 0 {
                    let lo = (st - w).max(0)..st;
                    let hi = st + len..(st + len).saturating_add(w).min(total);
                    try_reserve(
                        &mut ghosts,
                        (lo.end - lo.start + hi.end - hi.start) as usize,
                        "the convolution's ghost list",
                    )?;
                    ghosts.extend(lo);
                    below = ghosts.len();
                    ghosts.extend(hi);
                }
                Ok(())
            })();
            Some(HaloPlan::new(
                &comm,
                layout.offsets(),
                layout.local_lens(),
                total,
                &ghosts,
                pre,
            )?)
        } else {
            None
        };
        let k = s.hsize as usize;
        let bufs = comm.agree((|| {
            let mut b = Bufs {
                send: Vec::new(),
                ghost: Vec::new(),
                ext: Vec::new(),
                h: Vec::new(),
            };
            if let Some(h) = &halo {
                try_reserve(&mut b.send, h.n_send(), "the convolution's send buffer")?;
                try_reserve(&mut b.ghost, h.n_ghost(), "the convolution's ghosts")?;
                try_reserve(
                    &mut b.ext,
                    h.n_ghost() + len as usize,
                    "the convolution's extended input",
                )?;
                b.send.resize(h.n_send(), T::zero());
                b.ghost.resize(h.n_ghost(), T::zero());
            }
            try_reserve(&mut b.h, k, "the convolution's filter")?;
            b.h.resize(k, T::zero());
            Ok(b)
        })())?;
        let nh = s.ih.len() as i64;
        Ok(NsConv {
            layout,
            bank: Bank {
                hsize: k,
                oh: s.ih[0],
                dh: s.ih[1] - s.ih[0],
                nh,
                hs: s.hs,
            },
            n,
            inner,
            split,
            halo,
            below,
            bufs: Mutex::new(bufs),
        })
    }

    /// Output slabs r0..r1 of one line (`y`, from slab r0) from input slabs a0..a1 (`x`, from slab
    /// a0): y[j] = sum_i h_i[j - i + c] x[i] (forward), or y[i] = sum_j conj(h_i[j - i + c]) x[j]
    /// (adjoint); the positions are global along the axis.
    #[allow(clippy::too_many_arguments)]
    fn line(
        &self,
        x: &[T],
        a0: i64,
        a1: i64,
        y: &mut [T],
        r0: i64,
        r1: i64,
        adjoint: bool,
        h: &mut [T],
    ) {
        let c = (self.bank.hsize / 2) as i64;
        let q = self.inner;
        if !adjoint {
            y.fill(T::zero());
            for i in a0..a1 {
                let (j0, j1) = ((i - c).max(r0), (i + c + 1).min(r1));
                if j0 >= j1 {
                    continue;
                }
                self.bank.at(i, h);
                let xi = &x[(i - a0) as usize * q..][..q];
                for j in j0..j1 {
                    let w = h[(j - i + c) as usize];
                    let yj = &mut y[(j - r0) as usize * q..][..q];
                    for (o, &v) in yj.iter_mut().zip(xi) {
                        *o += w * v;
                    }
                }
            }
        } else {
            for i in r0..r1 {
                self.bank.at(i, h);
                let yi = &mut y[(i - r0) as usize * q..][..q];
                yi.fill(T::zero());
                for j in (i - c).max(a0)..(i + c + 1).min(a1) {
                    let w = h[(j - i + c) as usize].conj();
                    let xj = &x[(j - a0) as usize * q..][..q];
                    for (o, &v) in yi.iter_mut().zip(xj) {
                        *o += w * v;
                    }
                }
            }
        }
    }

    fn run(&self, x: &[T], y: &mut [T], adjoint: bool) -> Result<()> {
        let mut b = self.bufs.lock().unwrap_or_else(|p| p.into_inner());
        let Bufs {
            send,
            ghost,
            ext,
            h,
        } = &mut *b;
        let q = self.inner as i64;
        if self.layout.global_len() == 0 {
            // an empty array (an axis of extent 0 after this one): nothing to move or compute, on
            // every rank alike
            return Ok(());
        }
        match &self.halo {
            Some(plan) => {
                plan.forward(x, send, ghost, || Ok(()))?;
                if x.is_empty() {
                    return Ok(());
                }
                let (st, len) = (self.layout.local_start(), self.layout.local_len());
                let (r0, r1) = (st / q, (st + len) / q);
                let a0 = r0 - (self.below as i64) / q;
                let a1 = r1 + ((ghost.len() - self.below) as i64) / q;
                ext.clear();
                ext.extend_from_slice(&ghost[..self.below]);
                ext.extend_from_slice(x);
                ext.extend_from_slice(&ghost[self.below..]);
                self.line(ext, a0, a1, y, r0, r1, adjoint, h);
            }
            None => {
                let line = self.n as usize * self.inner;
                for (xl, yl) in x.chunks_exact(line).zip(y.chunks_exact_mut(line)) {
                    self.line(xl, 0, self.n, yl, 0, self.n, adjoint, h);
                }
            }
        }
        Ok(())
    }
}

impl<T: Scalar> LinearOperator<T> for NsConv<T> {
    fn rows(&self) -> &Arc<Layout> {
        &self.layout
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.layout
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.run(x.local(), y.local_mut(), false)
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        self.run(y.local(), x.local_mut(), true)
    }
    fn describe(&self) -> String {
        format!(
            "non-stationary convolution ({} filters of {} taps along an axis of {}{})",
            self.bank.nh,
            self.bank.hsize,
            self.n,
            if self.split { ", the split one" } else { "" }
        )
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
