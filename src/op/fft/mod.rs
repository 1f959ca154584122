//! The distributed N-D FFT (PyLops-MPI's MPIFFTND and MPIFFT2D): an N-D array split along axis 0,
//! transformed along any set of its axes, forward and adjoint, with PyLops' `norm`, `real`,
//! `ifftshift_before` and `fftshift_after`.
//!
//! The axes other than 0 are whole on every rank and are transformed in place (a strided axis by
//! blocks of lines gathered in cache, rustfft's batched kernels on contiguous ones). When axis 0
//! is transformed, one all-to-all moves the array to a split along another axis (the longest), axis
//! 0 is transformed there, and a second all-to-all brings it back to a split along axis 0 (a slab
//! decomposition: the receiving side of the first and the sending side of the second are contiguous,
//! so each all-to-all packs or unpacks on one side only). A 1-D array is gathered on every rank,
//! transformed there and each rank keeps its part.
//!
//! `real` (PyLops' real=True) is the transform of the real part of x with only the first n/2 + 1
//! frequencies kept along the last of the axes, those between zero and Nyquist scaled by sqrt(2); its
//! adjoint is the real part of the adjoint of that real-linear map (PyLops' irfft with its 1/sqrt(2)).
//! A real dtype (PyLops' dtype=float) takes the real part of x and returns a real adjoint; the
//! vectors of the operator are complex either way (PyLops' operator dtype is the complex one).
//! The work arrays are made (fallibly, agreed across ranks) when the operator is made: a product
//! allocates only a few index lists of the number of ranks and axes.

use std::sync::{Arc, Mutex};

use num_complex::Complex;
use rustfft::{Fft as Plan, FftNum, FftPlanner};

pub(crate) mod local;
mod transpose;

use self::local::{fft_axis, resize_axis, roll, scale_bins};
use super::LinearOperator;
use crate::error::{Result, try_reserve};
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout, Partition, scatter_lens};

/// What the caller asks for, with the axes already normalised (0..ndim).
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// The transformed axes; the last is the real one when `real`.
    pub axes: Vec<usize>,
    /// PyLops' norm="1/n": forward and adjoint both scaled by 1/prod(n).
    pub norm_1n: bool,
    pub real: bool,
    /// false: the real part of x is transformed, and the adjoint is real (real=True or a real dtype).
    pub clinear: bool,
    /// Per entry of `axes`.
    pub ifftshift_before: Vec<bool>,
    pub fftshift_after: Vec<bool>,
}

/// Normalise and check the caller's axes (negative counts from the end, as NumPy's); `ndim` is the
/// array's number of axes.
pub fn normalise_axes(axes: &[i64], ndim: usize) -> Result<Vec<usize>> {
    if axes.is_empty() {
        crate::bail!(
            InvalidArgument,
            "argument 'naxes' is 0; the FFT needs at least one axis"
        );
    }
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let n = ndim as i64;
        if a < -n || a >= n {
            crate::bail!(
                InvalidArgument,
                "argument 'axes' holds {a}; the layout has {ndim} axes (valid: -{ndim}..{})",
                n - 1
            );
        }
        let a = a.rem_euclid(n) as usize;
        if out.contains(&a) {
            crate::bail!(
                InvalidArgument,
                "argument 'axes' {axes:?} names axis {a} twice; each axis may be transformed once"
            );
        }
        out.push(a);
    }
    Ok(out)
}

/// The output shape: the real axis keeps n/2 + 1 frequencies.
pub fn output_shape(dims: &[i64], spec: &Spec) -> Vec<i64> {
    let mut d = dims.to_vec();
    if let (true, Some(&r)) = (spec.real, spec.axes.last()) {
        d[r] = d[r] / 2 + 1;
    }
    d
}

/// Work arrays, made once (their capacities are never exceeded, so a product never allocates).
struct Work<R: FftNum> {
    a: Vec<Complex<R>>,
    b: Vec<Complex<R>>,
    tmp: Vec<Complex<R>>,
    scratch: Vec<Complex<R>>,
}

pub struct Fft<R: FftNum> {
    rows: Arc<Layout>,
    cols: Arc<Layout>,
    dims: Vec<usize>,
    dimsd: Vec<usize>,
    spec: Spec,
    /// Forward and inverse plans by axis (None for untransformed axes).
    fwd: Vec<Option<Arc<dyn Plan<R>>>>,
    inv: Vec<Option<Arc<dyn Plan<R>>>>,
    /// Axis-0 extents of x (domain) and y (range) by rank.
    rows_in: Vec<usize>,
    rows_out: Vec<usize>,
    /// The axis split while axis 0 is transformed (None: 1-D, gathered), and its extents by rank.
    t: Option<usize>,
    t_rows: Vec<usize>,
    /// The order of the forward's axes (the adjoint's reversed): the real axis first (the others
    /// then transform half the data), axis 0 last.
    order: Vec<usize>,
    work: Mutex<Work<R>>,
    name: String,
}

fn prod(s: &[usize]) -> usize {
    s.iter().product()
}

/// Extents by rank along axis 0 of a layout whose other axes hold `inner` entries per slab.
fn axis0_rows(l: &Layout, inner: usize) -> Vec<usize> {
    l.local_lens()
        .iter()
        .map(|&n| (n as usize).checked_div(inner).unwrap_or(0))
        .collect()
}

fn offsets(c: &[usize]) -> Vec<usize> {
    let mut o = Vec::with_capacity(c.len());
    let mut s = 0;
    for &v in c {
        o.push(s);
        s += v;
    }
    o
}

/// An f64 constant in the transform's precision (shared with the MDC).
pub(crate) fn from_f64<R: FftNum>(v: f64) -> R {
    R::from_f64(v).unwrap_or_else(R::zero)
}

impl<R: FftNum> Fft<R>
where
    Complex<R>: Scalar,
{
    /// The operator on `cols` (an N-D layout split along axis 0, or any 1-D split layout). Every rank
    /// must pass the same spec (agreed here); `spec` is this rank's verdict on the arguments. [collective]
    pub fn new(cols: Arc<Layout>, spec: Result<Spec>) -> Result<Fft<R>> {
        let comm = cols.comm().clone();
        let shape: Vec<i64> = cols.shape().to_vec();
        let ndim = shape.len();
        let checked = spec.and_then(|s| {
            if cols.partition().is_replicated() {
                crate::bail!(
                    NotSupported,
                    "argument 'layout' of the FFT must be split (scatter), not {}",
                    cols.partition().name()
                );
            }
            if !cols.parts().is_empty() {
                crate::bail!(
                    NotSupported,
                    "argument 'layout' of the FFT is a stacked layout; pass an N-D layout"
                );
            }
            if let Some(a) = s.axes.iter().find(|&&a| a >= ndim) {
                crate::bail!(
                    InvalidArgument,
                    "argument 'axes' holds {a}; the layout's array has shape {shape:?}"
                );
            }
            let n = s.axes.len();
            if (1..n).any(|i| s.axes[..i].contains(&s.axes[i])) {
                crate::bail!(
                    InvalidArgument,
                    "argument 'axes' {:?} names an axis twice; each axis may be transformed once",
                    s.axes
                );
            }
            if s.axes.is_empty() || s.ifftshift_before.len() != n || s.fftshift_after.len() != n {
                crate::bail!(
                    InvalidArgument,
                    "the FFT has {n} axes, {} ifftshift_before and {} fftshift_after flags; it needs \
                     at least one axis and one flag of each per axis",
                    s.ifftshift_before.len(),
                    s.fftshift_after.len()
                );
            }
            if shape.iter().any(|&d| d < 1) {
                crate::bail!(
                    InvalidArgument,
                    "argument 'layout' has shape {shape:?}, with an empty axis; every axis of the \
                     FFT's array needs at least one sample"
                );
            }
            // real=True transforms the real part whatever the model's type
            Ok(Spec {
                clinear: s.clinear && !s.real,
                ..s
            })
        });
        let sig: Vec<i64> = match &checked {
            Ok(s) => {
                let mut v = vec![s.norm_1n as i64, s.real as i64, s.clinear as i64];
                v.extend(s.axes.iter().map(|&a| a as i64));
                v.extend(s.ifftshift_before.iter().map(|&b| b as i64));
                v.extend(s.fftshift_after.iter().map(|&b| b as i64));
                v
            }
            Err(_) => vec![-1],
        };
        comm.agree_same(
            checked.as_ref().map(|_| ()).map_err(|e| e.clone()),
            "FFT arguments ([norm, real, real input, axes..., ifftshift_before..., fftshift_after...])",
            &sig,
        )?;
        let spec = checked?;
        let dimsd_i = output_shape(&shape, &spec);
        let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
        let dimsd: Vec<usize> = dimsd_i.iter().map(|&d| d as usize).collect();
        let p = comm.size() as usize;
        let me = comm.rank() as usize;
        let rows_in = axis0_rows(&cols, prod(&dims[1..]));
        // the range keeps x's split when axis 0 keeps its length; else (real along axis 0) the
        // default split of the new length, as PyLops-MPI's output
        let my_out = if dimsd[0] == dims[0] {
            rows_in[me] as i64
        } else {
            -1
        };
        let rows = if ndim == 1 {
            Layout::new_checked(comm.clone(), Ok(Partition::Scatter), dimsd_i[0], {
                if my_out >= 0 {
                    my_out
                } else {
                    scatter_lens(dimsd_i[0], p)[me]
                }
            })?
        } else {
            Layout::new_nd(comm.clone(), Ok(Partition::Scatter), &dimsd_i, 0, my_out)?
        };
        let rows_out = axis0_rows(&rows, prod(&dimsd[1..]));
        let t0 = spec.axes.contains(&0);
        // the axis split while axis 0 is transformed: the longest other axis of the output shape
        let t = if t0 && ndim > 1 {
            (1..ndim).max_by_key(|&a| (dimsd[a], std::cmp::Reverse(a)))
        } else {
            None
        };
        let t_rows: Vec<usize> = match t {
            Some(t) => scatter_lens(dimsd[t] as i64, p)
                .iter()
                .map(|&v| v as usize)
                .collect(),
            None => vec![0; p],
        };
        // the largest array any phase holds on this rank
        let big: Vec<usize> = dims.iter().zip(&dimsd).map(|(a, b)| *a.max(b)).collect();
        let mut need = rows_in[me].max(rows_out[me]) * prod(&big[1..]);
        if t0 {
            let tr = match t {
                Some(t) => big[0] * prod(&big[1..]) / big[t].max(1) * t_rows[me],
                None => big[0],
            };
            need = need.max(tr);
        }
        let line = spec.axes.iter().map(|&a| dims[a]).max().unwrap_or(0);
        let mut w = Work {
            a: Vec::new(),
            b: Vec::new(),
            tmp: Vec::new(),
            scratch: Vec::new(),
        };
        // the work arrays first: the plans' tables (O(n) per axis, allocated infallibly by rustfft)
        // are made only where the arrays they transform could be
        type Plans<R> = Vec<Option<Arc<dyn Plan<R>>>>;
        let made = (|| -> Result<(Plans<R>, Plans<R>)> {
            try_reserve(&mut w.a, need, "the FFT's work array")?;
            try_reserve(&mut w.b, need, "the FFT's work array")?;
            try_reserve(&mut w.tmp, need.max(line), "the FFT's work array")?;
            let mut planner = FftPlanner::<R>::new();
            let mut fwd = vec![None; ndim];
            let mut inv = vec![None; ndim];
            let mut scratch_len = 0;
            for &a in &spec.axes {
                let f = planner.plan_fft_forward(dims[a]);
                let i = planner.plan_fft_inverse(dims[a]);
                scratch_len = scratch_len
                    .max(f.get_inplace_scratch_len())
                    .max(i.get_inplace_scratch_len());
                fwd[a] = Some(f);
                inv[a] = Some(i);
            }
            try_reserve(&mut w.scratch, scratch_len, "the FFT's scratch")?;
            w.scratch
                .resize(scratch_len, Complex::new(R::zero(), R::zero()));
            Ok((fwd, inv))
        })();
        let (fwd, inv) = comm.agree(made)?;
        let name = format!(
            "FFT over axes {:?} of {:?}{}{}{}",
            spec.axes,
            dims,
            if spec.real { " (real)" } else { "" },
            if !spec.real && !spec.clinear {
                " (real input)"
            } else {
                ""
            },
            if spec.norm_1n { ", norm 1/n" } else { "" }
        );
        let r_axis = if spec.real {
            spec.axes.last().copied()
        } else {
            None
        };
        let mut order: Vec<usize> = r_axis.into_iter().collect();
        order.extend(
            spec.axes
                .iter()
                .copied()
                .filter(|&a| a != 0 && Some(a) != r_axis),
        );
        if t0 && r_axis != Some(0) {
            order.push(0);
        }
        Ok(Fft {
            order,
            rows,
            cols,
            dims,
            dimsd,
            spec,
            fwd,
            inv,
            rows_in,
            rows_out,
            t,
            t_rows,
            work: Mutex::new(w),
            name,
        })
    }

    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    fn run(&self, x: &[Complex<R>], y: &mut [Complex<R>], adjoint: bool) -> Result<()> {
        let mut guard = self.work.lock().unwrap_or_else(|p| p.into_inner());
        let w = &mut *guard;
        let me = self.cols.comm().rank() as usize;
        let s = &self.spec;
        let r_axis = if s.real { s.axes.last().copied() } else { None };
        let zero = Complex::new(R::zero(), R::zero());
        // the array as this rank holds it: a split along axis 0
        let (src_rows, src_ext) = if adjoint {
            (self.rows_out[me], &self.dimsd)
        } else {
            (self.rows_in[me], &self.dims)
        };
        let mut sh: Vec<usize> = src_ext.clone();
        sh[0] = src_rows;
        let k_of = |a: usize| s.axes.iter().position(|&b| b == a).unwrap_or(0);
        let first = if adjoint {
            self.order.last()
        } else {
            self.order.first()
        };
        // the first step reads x itself (one pass over memory less) when it begins with the transform
        // or the all-to-all: not after a shift, the real part or the real axis' scaling
        let direct = first.is_some_and(|&a| {
            let k = k_of(a);
            if adjoint {
                !s.fftshift_after[k] && r_axis != Some(a)
            } else {
                s.clinear && (a == 0 || !s.ifftshift_before[k])
            }
        }) && (self.rows_in.len() > 1 || first != Some(&0));
        if direct {
            // (resize zeroes only growth: nothing when the last product had this length)
            w.a.resize(x.len(), zero);
        } else {
            w.a.clear();
            if !adjoint && !s.clinear {
                // the real part of x, as it is copied in
                w.a.extend(x.iter().map(|v| Complex::new(v.re, R::zero())));
            } else {
                w.a.extend_from_slice(x);
            }
        }
        let mut src: Option<&[Complex<R>]> = if direct { Some(x) } else { None };
        // the last step may write y itself (the all-to-all back to axis 0's split)
        let last = if adjoint {
            self.order.first()
        } else {
            self.order.last()
        };
        let mut dst: Option<&mut [Complex<R>]> =
            if last == Some(&0) && self.rows_in.len() > 1 && self.t.is_some() {
                Some(y)
            } else {
                None
            };
        let mut wrote_y = false;
        // sqrt(2) on the frequencies strictly between zero and Nyquist of the real axis
        let real_bins = |n: usize| (1, 1 + (n - 1) / 2);
        let sqrt2: R = from_f64(std::f64::consts::SQRT_2);
        let fold_axis0 = |w: &mut Work<R>,
                          sh: &mut Vec<usize>,
                          src: Option<&[Complex<R>]>,
                          dst: Option<&mut [Complex<R>]>|
         -> Result<bool> {
            // axis 0 whole on this rank: gather (1-D) or move to the split along t
            let a0 = 0usize;
            let k = k_of(a0);
            let n = self.dims[0];
            let nd0 = self.dimsd[0];
            let mut tsh = sh.clone();
            tsh[0] = if adjoint { nd0 } else { n };
            if let Some(t) = self.t {
                tsh[t] = self.t_rows[me];
            }
            let rows_from = if adjoint {
                &self.rows_out
            } else {
                &self.rows_in
            };
            // one rank holds the whole array already
            let moved = rows_from.len() > 1;
            if moved {
                self.to_t(src.unwrap_or(&w.a), sh, rows_from, &mut w.b, &mut w.tmp)?;
                std::mem::swap(&mut w.a, &mut w.b);
            }
            if !adjoint {
                if s.ifftshift_before[k] {
                    roll(&mut w.a, &tsh, 0, -((n / 2) as i64), &mut w.b);
                }
                fft_axis(
                    &mut w.a,
                    None,
                    &tsh,
                    0,
                    self.plan(0, false),
                    &mut w.tmp,
                    &mut w.scratch,
                );
                if r_axis == Some(0) {
                    resize_axis(&mut w.a, &mut tsh, 0, nd0, zero);
                    let (lo, hi) = real_bins(n);
                    scale_bins(&mut w.a, &tsh, 0, lo, hi, sqrt2);
                }
                if s.fftshift_after[k] {
                    roll(&mut w.a, &tsh, 0, (tsh[0] / 2) as i64, &mut w.b);
                }
            } else {
                if s.fftshift_after[k] {
                    roll(&mut w.a, &tsh, 0, -((tsh[0] / 2) as i64), &mut w.b);
                }
                if r_axis == Some(0) {
                    let (lo, hi) = real_bins(n);
                    scale_bins(&mut w.a, &tsh, 0, lo, hi, sqrt2);
                    resize_axis(&mut w.a, &mut tsh, 0, n, zero);
                }
                fft_axis(
                    &mut w.a,
                    None,
                    &tsh,
                    0,
                    self.plan(0, true),
                    &mut w.tmp,
                    &mut w.scratch,
                );
                if s.ifftshift_before[k] {
                    roll(&mut w.a, &tsh, 0, (n / 2) as i64, &mut w.b);
                }
            }
            let rows_to = if adjoint {
                &self.rows_in
            } else {
                &self.rows_out
            };
            sh[0] = rows_to[me];
            if !moved {
                return Ok(false);
            }
            let len = prod(sh);
            if let Some(y) = dst.filter(|y| y.len() == len) {
                self.back_from_t(&w.a, &tsh, rows_to, y, &mut w.tmp)?;
                return Ok(true);
            }
            w.b.resize(len, zero);
            self.back_from_t(&w.a, &tsh, rows_to, &mut w.b, &mut w.tmp)?;
            std::mem::swap(&mut w.a, &mut w.b);
            Ok(false)
        };
        let local_step =
            |w: &mut Work<R>, sh: &mut Vec<usize>, a: usize, src: Option<&[Complex<R>]>| {
                let k = k_of(a);
                let n = self.dims[a];
                if !adjoint {
                    if s.ifftshift_before[k] {
                        roll(&mut w.a, sh, a, -((n / 2) as i64), &mut w.b);
                    }
                    fft_axis(
                        &mut w.a,
                        src,
                        sh,
                        a,
                        self.plan(a, false),
                        &mut w.tmp,
                        &mut w.scratch,
                    );
                    if r_axis == Some(a) {
                        resize_axis(&mut w.a, sh, a, self.dimsd[a], zero);
                        let (lo, hi) = real_bins(n);
                        scale_bins(&mut w.a, sh, a, lo, hi, sqrt2);
                    }
                    if s.fftshift_after[k] {
                        roll(&mut w.a, sh, a, (sh[a] / 2) as i64, &mut w.b);
                    }
                } else {
                    if s.fftshift_after[k] {
                        roll(&mut w.a, sh, a, -((sh[a] / 2) as i64), &mut w.b);
                    }
                    if r_axis == Some(a) {
                        let (lo, hi) = real_bins(n);
                        scale_bins(&mut w.a, sh, a, lo, hi, sqrt2);
                        resize_axis(&mut w.a, sh, a, n, zero);
                    }
                    fft_axis(
                        &mut w.a,
                        src,
                        sh,
                        a,
                        self.plan(a, true),
                        &mut w.tmp,
                        &mut w.scratch,
                    );
                    if s.ifftshift_before[k] {
                        roll(&mut w.a, sh, a, (n / 2) as i64, &mut w.b);
                    }
                }
            };
        let order: &mut dyn Iterator<Item = &usize> = if adjoint {
            &mut self.order.iter().rev()
        } else {
            &mut self.order.iter()
        };
        for &a in order {
            if a == 0 {
                wrote_y = fold_axis0(w, &mut sh, src.take(), dst.take())?;
            } else {
                local_step(w, &mut sh, a, src.take());
            }
        }
        let f: R = if s.norm_1n {
            let nf: f64 = s.axes.iter().map(|&a| self.dims[a] as f64).product();
            from_f64(1.0 / nf)
        } else {
            R::one()
        };
        let re = adjoint && !s.clinear;
        if wrote_y {
            // y holds the result already: scale it, or take its real part, in place
            if s.norm_1n || re {
                y.iter_mut().for_each(|v| {
                    *v = if re {
                        Complex::new(v.re * f, R::zero())
                    } else {
                        v.scale(f)
                    }
                });
            }
            return Ok(());
        }
        if w.a.len() != y.len() {
            crate::bail!(
                Internal,
                "{}: the result has {} entries on this rank, the output vector {}",
                self.name,
                w.a.len(),
                y.len()
            );
        }
        // the scaling (norm 1/n) and the real part (a real model's adjoint) as y is written
        match (s.norm_1n, re) {
            (false, false) => y.copy_from_slice(&w.a),
            (true, false) => y.iter_mut().zip(&w.a).for_each(|(o, v)| *o = v.scale(f)),
            (_, true) => y
                .iter_mut()
                .zip(&w.a)
                .for_each(|(o, v)| *o = Complex::new(v.re * f, R::zero())),
        }
        Ok(())
    }

    fn plan(&self, a: usize, inverse: bool) -> &dyn Plan<R> {
        let p = if inverse { &self.inv[a] } else { &self.fwd[a] };
        // every transformed axis has both plans (made in new)
        p.as_deref().expect("a plan for every transformed axis")
    }
}

impl<R: FftNum> LinearOperator<Complex<R>> for Fft<R>
where
    Complex<R>: Scalar,
{
    fn rows(&self) -> &Arc<Layout> {
        &self.rows
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.cols
    }
    fn forward(&self, x: &DistVector<Complex<R>>, y: &mut DistVector<Complex<R>>) -> Result<()> {
        self.run(x.local(), y.local_mut(), false)
    }
    fn backward(&self, y: &DistVector<Complex<R>>, x: &mut DistVector<Complex<R>>) -> Result<()> {
        self.run(y.local(), x.local_mut(), true)
    }
    fn describe(&self) -> String {
        self.name.clone()
    }
    fn real_linear(&self) -> bool {
        self.spec.real || !self.spec.clinear
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
