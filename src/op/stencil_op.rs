//! The matrix-free stencil operator behind PyLops' derivatives, Laplacian and gradient
//! ([`super::stencil`] builds the rules). No matrix is stored: an output block is a sum, over some
//! axes, of position-dependent weights times x at fixed offsets along that axis. A product reads x
//! once and writes y once (16 bytes per double row), against 12 bytes per stored entry more for the
//! assembled matrix. The halo is the stencil's width (its largest offset times the axis' stride) on
//! each side of this rank's range, whatever the split (a rank may hold part of a line, or nothing);
//! the adjoint is the stencil with mirrored offsets (a gather, no scatter), so it needs the same halo.
//!
//! Rows are handled in runs whose terms are constant (the interior of a line, or one position near
//! an edge repeated over the faster axes). A run's rows whose neighbours are all on this rank go
//! through a chunked kernel (one pass per term over an L1-sized piece of y); the others read the
//! ghosts. Each row sums its terms in increasing offset order, as a CSR row of the same matrix does
//! on one rank. The rows that need no ghosts are computed while the halo moves.

use std::sync::{Arc, Mutex};

use super::LinearOperator;
use crate::comm::halo::HaloPlan;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout};

/// Offsets (along one axis) and weights of a row.
pub type Terms = Vec<(i64, f64)>;

/// Positions this close to either end of an axis may have their own terms; the others share one
/// rule (true of PyLops' stencils, whose offsets are at most 2, and of their adjoints).
const EDGE: i64 = 4;

/// The terms of one axis at every position: those near the ends kept one by one, one rule between.
#[derive(Clone, Debug)]
pub struct Rule {
    n: i64,
    lo: Vec<Terms>,
    mid: Terms,
    hi: Vec<Terms>,
}

impl Rule {
    /// `f(i)` for each position i of an axis of `n`; f must be the same for EDGE <= i < n - EDGE.
    pub fn from_fn(n: i64, f: impl Fn(i64) -> Terms) -> Rule {
        if n <= 2 * EDGE + 1 {
            Rule {
                n,
                lo: (0..n).map(&f).collect(),
                mid: Vec::new(),
                hi: Vec::new(),
            }
        } else {
            let mid = f(EDGE);
            // positions near the ends whose terms are the shared ones join the shared range
            let mut lo: Vec<Terms> = (0..EDGE).map(&f).collect();
            while lo.last() == Some(&mid) {
                lo.pop();
            }
            let mut hi: Vec<Terms> = (n - EDGE..n).map(&f).collect();
            let same = hi.iter().take_while(|t| **t == mid).count();
            hi.drain(..same);
            Rule { n, lo, mid, hi }
        }
    }

    /// Which terms position i has: its index among the end positions, or usize::MAX for the shared.
    fn class(&self, i: i64) -> usize {
        let lo = self.lo.len() as i64;
        let hs = self.n - self.hi.len() as i64;
        if i < lo {
            i as usize
        } else if i >= hs {
            (lo + 1 + (i - hs)) as usize
        } else {
            usize::MAX
        }
    }

    pub fn at(&self, i: i64) -> &Terms {
        let lo = self.lo.len() as i64;
        if i < lo {
            &self.lo[i as usize]
        } else if i >= self.n - self.hi.len() as i64 {
            &self.hi[(i - (self.n - self.hi.len() as i64)) as usize]
        } else {
            &self.mid
        }
    }

    /// Positions [a, b) whose terms are the shared rule.
    fn mid_range(&self) -> (i64, i64) {
        let a = self.lo.len() as i64;
        (a, (self.n - self.hi.len() as i64).max(a))
    }

    /// The largest |offset|.
    fn reach(&self) -> i64 {
        self.lo
            .iter()
            .chain(self.hi.iter())
            .chain(std::iter::once(&self.mid))
            .flat_map(|t| t.iter().map(|&(o, _)| o.abs()))
            .max()
            .unwrap_or(0)
    }

    /// The rule of the adjoint (real weights): position i takes x[i + o] times w from every
    /// position i + o whose terms have offset -o and weight w.
    pub fn adjoint(&self) -> Rule {
        let r = self.reach();
        Rule::from_fn(self.n, |i| {
            let mut t = Vec::new();
            for o in -r..=r {
                let p = i + o;
                if p >= 0 && p < self.n {
                    for &(oo, w) in self.at(p) {
                        if oo == -o {
                            t.push((o, w));
                        }
                    }
                }
            }
            t
        })
    }
}

/// One output block: the sum of some axes' rules.
pub type Block = Vec<(usize, Rule)>;

/// The terms of a run: gathered and merged in f64 (`raw`, as an assembled row would be), then as T.
struct Scratch<T> {
    raw: Vec<(i64, f64)>,
    terms: Vec<(i64, T)>,
    /// the class of each rule's position for `terms` (they are reused while it stays the same)
    key: Vec<usize>,
    next: Vec<usize>,
}

struct Bufs<T> {
    send: Vec<T>,
    ghost: Vec<T>,
    scratch: Scratch<T>,
}

/// A matrix-free stencil operator: `fwd.len()` output blocks of the input's local length on each
/// rank (one for a derivative or the Laplacian, one per axis for the gradient), stacked rank by rank.
pub struct Stencil<T: Scalar> {
    rows: Arc<Layout>,
    cols: Arc<Layout>,
    shape: Vec<i64>,
    strides: Vec<i64>,
    fwd: Vec<Block>,
    adj: Vec<Block>,
    /// the halo's width: the largest |offset| times its axis' stride
    width: i64,
    halo: HaloPlan,
    /// ghosts below this rank's first row (they come first in the ghost array)
    below: usize,
    bufs: Mutex<Bufs<T>>,
    name: String,
}

/// Row-major strides of `shape`, or None when one overflows i64.
fn strides(shape: &[i64]) -> Option<Vec<i64>> {
    let mut s = vec![1i64; shape.len()];
    for a in (0..shape.len().saturating_sub(1)).rev() {
        s[a] = s[a + 1].checked_mul(shape[a + 1])?;
    }
    Some(s)
}

impl<T: Scalar> Stencil<T> {
    /// The operator with output blocks `fwd` on input layout `cols` (split, N-D) and output layout
    /// `rows` (`fwd.len()` times the input's local length on every rank). `pre` is this rank's
    /// verdict on the arguments, agreed here; `same` are values every rank must have passed alike
    /// (named by `what`). [collective]
    pub fn new(
        rows: Arc<Layout>,
        cols: Arc<Layout>,
        fwd: Vec<Block>,
        pre: Result<()>,
        what: &str,
        same: &[i64],
        name: String,
    ) -> Result<Stencil<T>> {
        cols.comm().agree_same(pre, what, same)?;
        let shape = cols.shape().to_vec();
        // the shape is every rank's (agreed when the layout was made): so is this verdict
        let Some(st) = strides(&shape) else {
            crate::bail!(
                InvalidArgument,
                "{name}: the input shape {shape:?} has more entries than an i64 can count"
            );
        };
        let adj: Vec<Block> = fwd
            .iter()
            .map(|b| b.iter().map(|(a, r)| (*a, r.adjoint())).collect())
            .collect();
        let width = fwd
            .iter()
            .flat_map(|b| b.iter().map(|(a, r)| r.reach().saturating_mul(st[*a])))
            .max()
            .unwrap_or(0);
        let (s, e, total) = (
            cols.local_start(),
            cols.local_start() + cols.local_len(),
            cols.global_len(),
        );
        let mut ghosts = Vec::new();
        let n_ghost = (s.min(width) + (total - e).min(width)) as usize;
        let pre = crate::error::try_reserve(&mut ghosts, n_ghost, "the stencil's ghost list");
        if pre.is_ok() && e > s {
            ghosts.extend((s - width).max(0)..s);
            ghosts.extend(e..(e.saturating_add(width)).min(total));
        }
        let below = ghosts.iter().take_while(|&&g| g < s).count();
        let halo = HaloPlan::new(
            cols.comm(),
            cols.offsets(),
            cols.local_lens(),
            total,
            &ghosts,
            pre,
        )?;
        let n_terms: usize = fwd
            .iter()
            .chain(adj.iter())
            .map(|b| {
                b.iter()
                    .map(|(_, r)| {
                        r.lo.iter()
                            .chain(r.hi.iter())
                            .chain(std::iter::once(&r.mid))
                            .map(|t| t.len())
                            .max()
                            .unwrap_or(0)
                    })
                    .sum::<usize>()
            })
            .max()
            .unwrap_or(0);
        let bufs = cols.comm().agree((|| {
            let mut b = Bufs {
                send: Vec::new(),
                ghost: Vec::new(),
                scratch: Scratch {
                    raw: Vec::new(),
                    terms: Vec::new(),
                    key: Vec::new(),
                    next: Vec::new(),
                },
            };
            crate::error::try_reserve(&mut b.send, halo.n_send(), "the stencil's send buffer")?;
            crate::error::try_reserve(&mut b.ghost, halo.n_ghost(), "the stencil's ghosts")?;
            crate::error::try_reserve(&mut b.scratch.raw, n_terms, "the stencil's terms")?;
            crate::error::try_reserve(&mut b.scratch.terms, n_terms, "the stencil's terms")?;
            let nb = fwd.iter().map(|b| b.len()).max().unwrap_or(0);
            crate::error::try_reserve(&mut b.scratch.key, nb, "the stencil's terms")?;
            crate::error::try_reserve(&mut b.scratch.next, nb, "the stencil's terms")?;
            b.send.resize(halo.n_send(), T::zero());
            b.ghost.resize(halo.n_ghost(), T::zero());
            Ok(b)
        })())?;
        Ok(Stencil {
            rows,
            cols,
            shape,
            strides: st,
            fwd,
            adj,
            width,
            halo,
            below,
            bufs: Mutex::new(bufs),
            name,
        })
    }

    /// Calls `f(a, b, terms)` for runs [a, b) of the global rows [from, to) of one block, each run
    /// with constant terms (flat offsets, increasing, equal offsets merged in axis order).
    fn runs(
        &self,
        block: &Block,
        from: i64,
        to: i64,
        sc: &mut Scratch<T>,
        mut f: impl FnMut(i64, i64, &[(i64, T)]),
    ) {
        let (shape, st) = (&self.shape, &self.strides);
        // the last axis with a rule: the faster axes leave the terms unchanged
        let l = block.iter().map(|(a, _)| *a).max().unwrap_or(0);
        let nl = shape.get(l).copied().unwrap_or(1).max(1);
        let sl = st.get(l).copied().unwrap_or(1);
        let line = nl * sl;
        // the positions along axis l where every rule on it is its shared rule
        let (ma, mb) = block
            .iter()
            .filter(|(a, _)| *a == l)
            .fold((0, nl), |(a, b), (_, r)| {
                let (ra, rb) = r.mid_range();
                (a.max(ra), b.min(rb))
            });
        let pos = |a: usize, base: i64, p: i64| {
            if a == l {
                p
            } else {
                (base / st[a]) % shape[a].max(1)
            }
        };
        let gather = |sc: &mut Scratch<T>, base: i64, p: i64| {
            let Scratch {
                raw,
                terms,
                key,
                next,
            } = sc;
            next.clear();
            next.extend(block.iter().map(|(a, r)| r.class(pos(*a, base, p))));
            if next == key && !key.is_empty() {
                return;
            }
            std::mem::swap(key, next);
            raw.clear();
            // axis order, then offset order; a stable sort merges equal offsets in that order
            for (a, r) in block {
                raw.extend(r.at(pos(*a, base, p)).iter().map(|&(o, w)| (o * st[*a], w)));
            }
            raw.sort_by_key(|t| t.0);
            terms.clear();
            let mut k = 0;
            while k < raw.len() {
                let (o, mut w) = raw[k];
                k += 1;
                while k < raw.len() && raw[k].0 == o {
                    w += raw[k].1;
                    k += 1;
                }
                terms.push((o, T::from_parts_lossy(w, 0.0)));
            }
        };
        sc.key.clear();
        let mut g = from;
        while g < to {
            let ls = g - g % line;
            let p = (g - ls) / sl;
            // the shared rule up to the end of its range, or one position's run over the faster axes
            let end = if p >= ma && p < mb { mb } else { p + 1 };
            let b = (ls + end * sl).min(to);
            gather(sc, ls, p);
            f(g, b, &sc.terms);
            g = b;
        }
    }

    /// Rows [from, to) (global) of one block: y = (y if `acc`) + sum of the terms over x (local
    /// part `xl`, ghosts `ghost`, which may be empty when no row of the range needs them).
    #[allow(clippy::too_many_arguments)]
    fn compute(
        &self,
        block: &Block,
        from: i64,
        to: i64,
        xl: &[T],
        ghost: &[T],
        yl: &mut [T],
        acc: bool,
        sc: &mut Scratch<T>,
    ) {
        let s = self.cols.local_start();
        let e = s + xl.len() as i64;
        let below = self.below;
        let get = |g: i64| -> T {
            if g < s {
                ghost[below - (s - g) as usize]
            } else if g >= e {
                ghost[below + (g - e) as usize]
            } else {
                xl[(g - s) as usize]
            }
        };
        self.runs(block, from, to, sc, |a, b, t| {
            let (omin, omax) = match (t.first(), t.last()) {
                (Some(f), Some(l)) => (f.0, l.0),
                _ => (0, 0),
            };
            // rows whose terms all read this rank's x
            let fa = (s - omin).clamp(a, b);
            let fb = (e - omax).clamp(fa, b);
            let slow = |q: i64, yl: &mut [T]| {
                let y = &mut yl[(q - s) as usize];
                let mut v = if acc { *y } else { T::zero() };
                for &(o, w) in t {
                    v += w * get(q + o);
                }
                *y = v;
            };
            for q in a..fa {
                slow(q, yl);
            }
            if fa < fb {
                run_fast(xl, yl, (fa - s) as usize, (fb - s) as usize, t, acc);
            }
            for q in fb..b {
                slow(q, yl);
            }
        });
    }

    /// y = A x (blocks `fwd`, x's halo once) or x = A^H y (blocks `adj`, each block's halo in turn).
    fn run(&self, x: &[T], y: &mut [T], adjoint: bool) -> Result<()> {
        let mut b = self.bufs.lock().unwrap_or_else(|p| p.into_inner());
        let Bufs {
            send,
            ghost,
            scratch: terms,
        } = &mut *b;
        let s = self.cols.local_start();
        let len = self.cols.local_len() as usize;
        let e = s + len as i64;
        let w = self.width;
        // rows that need no ghosts, computed while the halo moves
        let ia = (s.saturating_add(w)).min(e);
        let ib = (e - w).max(ia);
        if !adjoint {
            let nb = self.fwd.len();
            self.halo.forward(x, send, ghost, || {
                for (k, blk) in self.fwd.iter().enumerate() {
                    let yk = &mut y[k * len..(k + 1) * len];
                    self.compute(blk, ia, ib, x, &[], yk, false, terms);
                }
                Ok(())
            })?;
            for (k, blk) in self.fwd.iter().enumerate().take(nb) {
                let yk = &mut y[k * len..(k + 1) * len];
                self.compute(blk, s, ia, x, ghost, yk, false, terms);
                self.compute(blk, ib, e, x, ghost, yk, false, terms);
            }
        } else {
            // here `x` is the adjoint's input (the range vector) and `y` its output
            for (k, blk) in self.adj.iter().enumerate() {
                let xk = &x[k * len..(k + 1) * len];
                let acc = k > 0;
                self.halo.forward(xk, send, ghost, || {
                    self.compute(blk, ia, ib, xk, &[], y, acc, terms);
                    Ok(())
                })?;
                self.compute(blk, s, ia, xk, ghost, y, acc, terms);
                self.compute(blk, ib, e, xk, ghost, y, acc, terms);
            }
        }
        Ok(())
    }
}

/// Rows la..lb of y (local indices) from x at la + o .. lb + o for each term (o, w), all in range,
/// terms in increasing offset order. Up to 8 terms: one pass, the terms unrolled; more: pieces of y
/// small enough for L1, one pass per term.
fn run_fast<T: Scalar>(xl: &[T], yl: &mut [T], la: usize, lb: usize, t: &[(i64, T)], acc: bool) {
    #[cfg(target_arch = "x86_64")]
    if t.len() <= 8 && std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked just above)
        return unsafe { fused_avx2(xl, yl, la, lb, t, acc) };
    }
    if t.len() <= 8 {
        return fused_any(xl, yl, la, lb, t, acc);
    }
    const CHUNK: usize = 512;
    let mut c = la;
    while c < lb {
        let d = (c + CHUNK).min(lb);
        let y = &mut yl[c..d];
        if !acc {
            y.iter_mut().for_each(|v| *v = T::zero());
        }
        for &(o, w) in t {
            let xs = &xl[(c as i64 + o) as usize..(d as i64 + o) as usize];
            for (v, &xv) in y.iter_mut().zip(xs) {
                *v += w * xv;
            }
        }
        c = d;
    }
}

/// [`fused_any`] compiled for AVX2 (wider registers, the same operations in the same order: the
/// same bits; no fused multiply-add).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fused_avx2<T: Scalar>(
    xl: &[T],
    yl: &mut [T],
    la: usize,
    lb: usize,
    t: &[(i64, T)],
    acc: bool,
) {
    fused_any(xl, yl, la, lb, t, acc)
}

/// [`fused`] for the number of terms (at most 8).
#[inline(always)]
fn fused_any<T: Scalar>(xl: &[T], yl: &mut [T], la: usize, lb: usize, t: &[(i64, T)], acc: bool) {
    macro_rules! by_len {
        ($($k:literal)*) => {
            match t.len() {
                $($k => fused::<T, $k>(xl, yl, la, lb, t, acc),)*
                _ => unreachable!("at most 8 terms"),
            }
        };
    }
    by_len!(0 1 2 3 4 5 6 7 8)
}

/// [`run_fast`] with K terms in one pass.
#[inline(always)]
fn fused<T: Scalar, const K: usize>(
    xl: &[T],
    yl: &mut [T],
    la: usize,
    lb: usize,
    t: &[(i64, T)],
    acc: bool,
) {
    let mut off = [0isize; K];
    let mut w = [T::zero(); K];
    for k in 0..K {
        off[k] = t[k].0 as isize;
        w[k] = t[k].1;
    }
    let (lo, hi) = (
        off.iter().copied().min().unwrap_or(0),
        off.iter().copied().max().unwrap_or(0),
    );
    assert!(
        la <= lb
            && lb <= yl.len()
            && la as isize + lo >= 0
            && lb as isize + hi <= xl.len() as isize
    );
    let (xp, yp) = (xl.as_ptr(), yl.as_mut_ptr());
    for l in la..lb {
        // SAFETY: la + lo >= 0 and lb + hi <= len(x) (checked above), lo <= off[k] <= hi, so
        // l + off[k] is in x for every l in la..lb; l < lb <= len(y).
        unsafe {
            let mut v = if acc { *yp.add(l) } else { T::zero() };
            for k in 0..K {
                v += w[k] * *xp.offset(l as isize + off[k]);
            }
            *yp.add(l) = v;
        }
    }
}

impl<T: Scalar> LinearOperator<T> for Stencil<T> {
    fn rows(&self) -> &Arc<Layout> {
        &self.rows
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.cols
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.run(x.local(), y.local_mut(), false)
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        self.run(y.local(), x.local_mut(), true)
    }
    fn describe(&self) -> String {
        self.name.clone()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    /// Square operators (one block): the weights at offset 0.
    fn diagonal(&self, d: &mut DistVector<T>) -> Result<()> {
        if self.fwd.len() != 1 {
            crate::bail!(
                NotSupported,
                "{} is not square: it has no diagonal",
                self.name
            );
        }
        let mut b = self.bufs.lock().unwrap_or_else(|p| p.into_inner());
        let s = self.cols.local_start();
        let dl = d.local_mut();
        let e = s + dl.len() as i64;
        self.runs(&self.fwd[0], s, e, &mut b.scratch, |a, bb, t| {
            let v = t
                .iter()
                .find(|(o, _)| *o == 0)
                .map_or(T::zero(), |&(_, w)| w);
            dl[(a - s) as usize..(bb - s) as usize].fill(v);
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    /// A shape whose entries overflow i64 has no strides (the fuzzer's shape: a stride that wrapped
    /// to zero made a later product divide by it), and an ordinary one has row-major strides.
    #[test]
    fn strides_are_checked() {
        assert_eq!(super::strides(&[3, 4, 5]), Some(vec![20, 5, 1]));
        assert_eq!(super::strides(&[2, 1 << 32, 1 << 32]), None);
        assert_eq!(super::strides(&[]), Some(vec![]));
    }
}
