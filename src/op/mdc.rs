//! Multi-dimensional convolution (PyLops-MPI's MPIMDC): y(t, s, v) = F^-1 ( sum_r G(f, s, r)
//! F(x(t, r, v)) ), with F PyLops' real FFT along time (ortho scaling, sqrt(2) on the bins between
//! zero and Nyquist) restricted to the first nfmax frequencies, and G split over the ranks by
//! frequency. PyLops-MPI builds it as F1^H I1^H Fredholm1 I F; here the chain is one operator on
//! replicated (broadcast) real vectors: every rank transforms the whole model along time (as
//! PyLops-MPI does), applies its own frequencies' slices of G, the results are allgathered, and
//! every rank transforms them back. The adjoint runs the chain backwards with G^H.
//!
//! `twosided` (PyLops' default): the model holds negative and positive times (nt odd); the forward
//! transform starts with an ifftshift of the model along time and the adjoint ends with the fftshift.

use std::sync::{Arc, Mutex};

use num_complex::Complex;
use rustfft::{Fft as Plan, FftNum, FftPlanner};

use super::LinearOperator;
use super::fft::from_f64;
use super::fft::local::fft_axis;
use crate::comm::Comm;
use crate::error::{Result, checked_product, try_reserve};
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout, Partition};

/// The sizes of an MDC: G has `nfmax` frequency slices of ns x nr; the model is nt x nr x nv, the
/// data nt x ns x nv (time slowest), both real.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MdcSpec {
    pub nt: i64,
    pub ns: i64,
    pub nr: i64,
    pub nv: i64,
    pub dt: f64,
    pub dr: f64,
    pub twosided: bool,
    /// G's complex conjugate in the Fredholm integral (PyLops' conj=True).
    pub conj: bool,
    /// G is used as given (PyLops' prescaled=True); else it is scaled by dr dt sqrt(nt).
    pub prescaled: bool,
}

/// Entries of this rank's slices of G (`nfreq_local * ns * nr`), checked; negative sizes count as 0
/// here and are reported by the constructor.
pub fn g_local_len(nfreq_local: i64, ns: i64, nr: i64) -> Result<usize> {
    checked_product(
        "argument 'g_local'",
        &[
            ("nfreq_local", nfreq_local.max(0)),
            ("ns", ns.max(0)),
            ("nr", nr.max(0)),
        ],
    )
    .map(|n| n as usize)
}

struct Work<R: FftNum> {
    /// The time-frequency array of the side being transformed (nt x columns).
    buf: Vec<Complex<R>>,
    /// The first nfmax frequencies of every column, before and after the integral.
    freq: Vec<Complex<R>>,
    /// This rank's frequencies after the integral.
    mine: Vec<Complex<R>>,
    tmp: Vec<Complex<R>>,
    scratch: Vec<Complex<R>>,
}

pub struct Mdc<R: FftNum> {
    rows: Arc<Layout>,
    cols: Arc<Layout>,
    /// This rank's slices of G (ns x nr each, scaled and conjugated as asked).
    g: Vec<Complex<R>>,
    /// Frequencies by rank, and this rank's first.
    nf: Vec<usize>,
    first: usize,
    nfmax: usize,
    nt: usize,
    ns: usize,
    nr: usize,
    nv: usize,
    twosided: bool,
    fwd: Arc<dyn Plan<R>>,
    inv: Arc<dyn Plan<R>>,
    work: Mutex<Work<R>>,
}

impl<R: FftNum> Mdc<R>
where
    Complex<R>: Scalar,
{
    /// `g_local`: this rank's `nfreq_local` frequency slices of G (ns x nr each, row-major; the
    /// slices of all ranks in rank order are frequencies 0, 1, ...); `pre` is this rank's earlier
    /// failure (reading the caller's arrays), agreed with the argument checks. [collective]
    pub fn new(
        comm: &Arc<Comm>,
        nfreq_local: i64,
        s: MdcSpec,
        g_local: Vec<Complex<R>>,
        pre: Result<()>,
    ) -> Result<Mdc<R>> {
        let MdcSpec {
            nt,
            ns,
            nr,
            nv,
            dt,
            dr,
            ..
        } = s;
        let local = pre.and_then(|_| {
            if nfreq_local < 0 || ns < 1 || nr < 1 || nt < 1 || nv < 1 {
                crate::bail!(
                    InvalidArgument,
                    "mdc: sizes must be nfreq_local >= 0 and ns, nr, nt, nv >= 1; got nfreq_local \
                     {nfreq_local}, ns {ns}, nr {nr}, nt {nt}, nv {nv}"
                );
            }
            if s.twosided && nt % 2 == 0 {
                crate::bail!(
                    InvalidArgument,
                    "mdc: argument 'nt' is {nt}; with twosided the time axis holds negative and \
                     positive times and nt must be odd (2 nt_positive - 1)"
                );
            }
            if !dt.is_finite() || !dr.is_finite() {
                crate::bail!(
                    InvalidArgument,
                    "mdc: arguments 'dt' and 'dr' must be finite; got {dt} and {dr}"
                );
            }
            for (what, a, b) in [
                ("mdc: the model", ("nt", nt), ("nr", nr)),
                ("mdc: the data", ("nt", nt), ("ns", ns)),
                ("mdc: a slice of G", ("ns", ns), ("nr", nr)),
            ] {
                checked_product(what, &[a, b, ("nv", nv)])?;
            }
            let want = g_local_len(nfreq_local, ns, nr)?;
            if g_local.len() != want {
                crate::bail!(
                    SizeMismatch,
                    "mdc: G holds {} entries; {nfreq_local} slices of {ns} x {nr} need {want}",
                    g_local.len()
                );
            }
            Ok(())
        });
        let bits = |v: f64| v.to_bits() as i64;
        comm.agree_same_named(
            local,
            "MDC arguments",
            &[
                "nt",
                "ns",
                "nr",
                "nv",
                "dt (bits)",
                "dr (bits)",
                "twosided",
                "conj",
                "prescaled",
            ],
            &[
                nt,
                ns,
                nr,
                nv,
                bits(dt),
                bits(dr),
                s.twosided as i64,
                s.conj as i64,
                s.prescaled as i64,
            ],
        )?;
        let nf: Vec<usize> = comm
            .allgather_i64(&[nfreq_local])?
            .iter()
            .map(|&v| v as usize)
            .collect();
        let me = comm.rank() as usize;
        let first: usize = nf[..me].iter().sum();
        // every rank holds the same nf, nt: the same verdict everywhere
        let nfmax: usize = nf.iter().sum();
        let nfft = (nt / 2 + 1) as usize;
        if nfmax > nfft {
            crate::bail!(
                InvalidArgument,
                "mdc: the ranks pass {nfmax} frequencies of G in all (nfreq_local {nf:?}); nt {nt} \
                 has only {nfft} non-negative frequencies (ceil((nt + 1) / 2))"
            );
        }
        let (nt, ns, nr, nv) = (nt as usize, ns as usize, nr as usize, nv as usize);
        let rows = Layout::new(
            comm.clone(),
            Partition::Broadcast,
            (nt * ns * nv) as i64,
            -1,
        )?;
        let cols = Layout::new(
            comm.clone(),
            Partition::Broadcast,
            (nt * nr * nv) as i64,
            -1,
        )?;
        let wide = ns.max(nr) * nv;
        let mut w = Work {
            buf: Vec::new(),
            freq: Vec::new(),
            mine: Vec::new(),
            tmp: Vec::new(),
            scratch: Vec::new(),
        };
        let zero = Complex::new(R::zero(), R::zero());
        let mut g = g_local;
        // the work arrays first: the plans' tables (O(nt), allocated infallibly by rustfft) are made
        // only where the nt x columns array could be
        let made = (|| {
            // (sizes below the model's and data's, checked above)
            try_reserve(&mut w.buf, nt * wide, "the MDC's work array")?;
            try_reserve(&mut w.freq, nfmax * wide, "the MDC's work array")?;
            try_reserve(&mut w.mine, nf[me] * wide, "the MDC's work array")?;
            try_reserve(
                &mut w.tmp,
                nt * wide.min(16384 / nt + 1),
                "the MDC's work array",
            )?;
            let mut planner = FftPlanner::<R>::new();
            let fwd = planner.plan_fft_forward(nt);
            let inv = planner.plan_fft_inverse(nt);
            let scratch_len = fwd
                .get_inplace_scratch_len()
                .max(inv.get_inplace_scratch_len());
            try_reserve(&mut w.scratch, scratch_len, "the MDC's FFT scratch")?;
            w.scratch.resize(scratch_len, zero);
            Ok((fwd, inv))
        })();
        let (fwd, inv) = comm.agree(made)?;
        let scale: R = if s.prescaled {
            R::one()
        } else {
            from_f64(dr * dt * (nt as f64).sqrt())
        };
        for v in g.iter_mut() {
            let c = if s.conj { v.conj() } else { *v };
            *v = if s.prescaled { c } else { c.scale(scale) };
        }
        Ok(Mdc {
            rows,
            cols,
            g,
            nf,
            first,
            nfmax,
            nt,
            ns,
            nr,
            nv,
            twosided: s.twosided,
            fwd,
            inv,
            work: Mutex::new(w),
        })
    }

    /// The factor of frequency bin f in PyLops' real FFT along time (ortho): 1/sqrt(nt), times
    /// sqrt(2) strictly between zero and Nyquist (`up`), or divided by it for the inverse.
    fn bin_scale(&self, f: usize, up: bool) -> R {
        let nt = self.nt;
        let ortho = 1.0 / (nt as f64).sqrt();
        let inner = f >= 1 && f <= (nt - 1) / 2;
        from_f64(match (inner, up) {
            (false, _) => ortho,
            (true, true) => ortho * std::f64::consts::SQRT_2,
            (true, false) => ortho / std::f64::consts::SQRT_2,
        })
    }

    /// PyLops' real FFT along time (ortho) of the nt x nc real array `x`, rolled by `shift` first
    /// (entry t taken from (t + shift) mod nt: NumPy's ifftshift for shift nt / 2), its first nfmax
    /// frequencies into `w.freq` (nfmax x nc), the bins between zero and Nyquist times sqrt(2).
    /// Two real columns go through one complex transform (z = x_a + i x_b; X_a(k) = (Z(k) +
    /// conj Z(-k)) / 2, X_b(k) = (Z(k) - conj Z(-k)) / 2i): half the transforms.
    fn to_frequency(&self, w: &mut Work<R>, x: &[R], nc: usize, shift: usize) {
        let nt = self.nt;
        let zero = R::zero();
        let half = nc.div_ceil(2);
        w.buf.clear();
        for t in 0..nt {
            let src = (t + shift) % nt;
            let row = &x[src * nc..(src + 1) * nc];
            w.buf.extend(
                row.chunks(2)
                    .map(|p| Complex::new(p[0], p.get(1).copied().unwrap_or(zero))),
            );
        }
        fft_axis(
            &mut w.buf,
            None,
            &[nt, half],
            0,
            &*self.fwd,
            &mut w.tmp,
            &mut w.scratch,
        );
        let h: R = from_f64(0.5);
        w.freq.clear();
        for f in 0..self.nfmax {
            let k = self.bin_scale(f, true) * h;
            let m = (nt - f) % nt;
            for p in 0..half {
                let z = w.buf[f * half + p];
                let zc = w.buf[m * half + p].conj();
                w.freq.push((z + zc).scale(k));
                if 2 * p + 1 < nc {
                    let d = z - zc;
                    w.freq.push(Complex::new(d.im, -d.re).scale(k));
                }
            }
        }
    }

    /// The adjoint of [`Mdc::to_frequency`] (with shift nt - shift: NumPy's fftshift for nt / 2): the
    /// nfmax x nc frequencies in `w.freq` padded with zeros to nt / 2 + 1, the bins between zero and
    /// Nyquist divided by sqrt(2), PyLops' inverse real FFT (ortho) into the nt x nc real `out`: the
    /// spectrum made Hermitian (the imaginary parts at zero and Nyquist dropped, as irfft drops
    /// them), two columns through one complex transform (Y_a + i Y_b, whose inverse is y_a + i y_b).
    fn back_to_time(&self, w: &mut Work<R>, out: &mut [R], nc: usize, shift: usize) {
        let nt = self.nt;
        let nfft = nt / 2 + 1;
        let zero = Complex::new(R::zero(), R::zero());
        let half = nc.div_ceil(2);
        let nfmax = self.nfmax;
        let freq = &w.freq;
        // bin f of column c of the one-sided spectrum, scaled, real at zero and Nyquist
        let spec = |f: usize, c: usize, k: R| -> Complex<R> {
            if f >= nfmax || c >= nc {
                return zero;
            }
            let v = freq[f * nc + c].scale(k);
            if f == 0 || 2 * f == nt {
                Complex::new(v.re, R::zero())
            } else {
                v
            }
        };
        w.buf.clear();
        for f in 0..nt {
            let (b, conj) = if f < nfft { (f, false) } else { (nt - f, true) };
            let k = self.bin_scale(b, false);
            for p in 0..half {
                let (mut ya, mut yb) = (spec(b, 2 * p, k), spec(b, 2 * p + 1, k));
                if conj {
                    ya = ya.conj();
                    yb = yb.conj();
                }
                // ya + i yb
                w.buf.push(Complex::new(ya.re - yb.im, ya.im + yb.re));
            }
        }
        fft_axis(
            &mut w.buf,
            None,
            &[nt, half],
            0,
            &*self.inv,
            &mut w.tmp,
            &mut w.scratch,
        );
        for t in 0..nt {
            let src = (t + shift) % nt;
            let row = &mut out[t * nc..(t + 1) * nc];
            for (p, o) in row.chunks_mut(2).enumerate() {
                let z = w.buf[src * half + p];
                o[0] = z.re;
                if let Some(b) = o.get_mut(1) {
                    *b = z.im;
                }
            }
        }
    }

    /// The integral over this rank's frequencies (G, or G^H for the adjoint) of `w.freq` (nfmax x
    /// n_in x nv), allgathered into `w.freq` (nfmax x n_out x nv). Both read G row by row: the
    /// adjoint adds conj(G[j][i]) x[j] into the rows i of the result for j in order, so each entry
    /// is still summed over j in order.
    fn integral(&self, w: &mut Work<R>, adjoint: bool) -> Result<()> {
        let (ns, nr, nv) = (self.ns, self.nr, self.nv);
        let (n_in, n_out) = if adjoint { (ns, nr) } else { (nr, ns) };
        let me = self.rows.comm().rank() as usize;
        let zero = Complex::new(R::zero(), R::zero());
        w.mine.clear();
        w.mine.resize(self.nf[me] * n_out * nv, zero);
        for s in 0..self.nf[me] {
            let g = &self.g[s * ns * nr..(s + 1) * ns * nr];
            let xin = &w.freq[(self.first + s) * n_in * nv..(self.first + s + 1) * n_in * nv];
            let out = &mut w.mine[s * n_out * nv..(s + 1) * n_out * nv];
            if adjoint {
                for (j, grow) in g.chunks_exact(nr).enumerate() {
                    let xj = &xin[j * nv..(j + 1) * nv];
                    for (a, orow) in grow.iter().zip(out.chunks_exact_mut(nv)) {
                        let a = a.conj();
                        for (o, v) in orow.iter_mut().zip(xj) {
                            *o += a * *v;
                        }
                    }
                }
            } else {
                for (grow, orow) in g.chunks_exact(nr).zip(out.chunks_exact_mut(nv)) {
                    for (k, o) in orow.iter_mut().enumerate() {
                        let mut acc = zero;
                        for (j, a) in grow.iter().enumerate() {
                            acc += *a * xin[j * nv + k];
                        }
                        *o = acc;
                    }
                }
            }
        }
        let counts: Vec<i64> = self.nf.iter().map(|&n| (n * n_out * nv) as i64).collect();
        w.freq.resize(self.nfmax * n_out * nv, zero);
        self.rows
            .comm()
            .allgatherv(&w.mine[..], &mut w.freq[..], &counts)
    }

    fn run(&self, x: &[R], y: &mut [R], adjoint: bool) -> Result<()> {
        let mut guard = self.work.lock().unwrap_or_else(|p| p.into_inner());
        let w = &mut *guard;
        let half = if self.twosided { self.nt / 2 } else { 0 };
        let (n_in, n_out) = if adjoint {
            (self.ns, self.nr)
        } else {
            (self.nr, self.ns)
        };
        // the model side rolls by the ifftshift (forward) or the fftshift (adjoint)
        let (shift_in, shift_out) = if adjoint {
            (0, (self.nt - half) % self.nt)
        } else {
            (half, 0)
        };
        self.to_frequency(w, x, n_in * self.nv, shift_in);
        self.integral(w, adjoint)?;
        self.back_to_time(w, y, n_out * self.nv, shift_out);
        Ok(())
    }
}

impl<R: FftNum + Scalar> LinearOperator<R> for Mdc<R>
where
    Complex<R>: Scalar,
{
    fn rows(&self) -> &Arc<Layout> {
        &self.rows
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.cols
    }
    fn forward(&self, x: &DistVector<R>, y: &mut DistVector<R>) -> Result<()> {
        self.run(x.local(), y.local_mut(), false)
    }
    fn backward(&self, y: &DistVector<R>, x: &mut DistVector<R>) -> Result<()> {
        self.run(y.local(), x.local_mut(), true)
    }
    fn describe(&self) -> String {
        format!(
            "MDC (nt {}, ns {}, nr {}, nv {}, {} frequencies{})",
            self.nt,
            self.ns,
            self.nr,
            self.nv,
            self.nfmax,
            if self.twosided { ", two-sided" } else { "" }
        )
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
