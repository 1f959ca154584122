//! parlops' CSR operators and vectors as hypre's IJ objects (ParCSR matrices and vectors), for the
//! hypre solvers parlops runs (BoomerAMG, AMS, ADS). hypre keeps its own copy: its set-ups build
//! their hierarchies from matrices they own. Each constructor is collective over the operator's
//! communicator, and agrees its local failures before any hypre collective.

use std::ffi::c_void;

use super::{HBig, HInt, PARCSR, api};
use crate::comm::Comm;
use crate::error::Result;
use crate::op::LinearOperator;
use crate::op::csr::{ColMap, CsrOp};

/// A hypre return code as a parlops error: hypre's memory flag as `OutOfMemory`, its other flags
/// (generic, argument, a setup that met a matrix it cannot coarsen) as `InvalidArgument` (what hypre
/// refuses comes from the matrix or the options it was given).
pub(crate) fn hcheck(code: HInt, what: &str) -> Result<()> {
    if code == 0 {
        return Ok(());
    }
    let h = api()?;
    // SAFETY: `ClearAllErrors` takes no arguments and only resets hypre's error flag; its pointer
    // was resolved with this signature in `load()`.
    unsafe { (h.ClearAllErrors)() };
    let flags = [
        (1, "generic"),
        (2, "memory"),
        (4, "argument"),
        (256, "convergence"),
    ]
    .iter()
    .filter(|(b, _)| code as i64 & b != 0)
    .map(|(_, n)| *n)
    .collect::<Vec<_>>()
    .join(", ");
    let msg = format!("hypre's {what} failed with error code {code} ({flags})");
    if code as i64 & 2 != 0 {
        crate::bail!(OutOfMemory, "{msg}");
    }
    crate::bail!(InvalidArgument, "{msg}")
}

/// `v` as hypre's HYPRE_BigInt.
pub(crate) fn big(v: i64, what: &str) -> Result<HBig> {
    HBig::try_from(v).map_err(|_| {
        crate::err!(
            NotSupported,
            "{what} {v} does not fit hypre's HYPRE_BigInt ({} bits); use a hypre built with --enable-bigint",
            8 * std::mem::size_of::<HBig>()
        )
    })
}

/// `v` as hypre's HYPRE_Int.
pub(crate) fn hint(v: usize, what: &str) -> Result<HInt> {
    HInt::try_from(v)
        .map_err(|_| crate::err!(NotSupported, "{what} {v} does not fit hypre's HYPRE_Int"))
}

/// Clear hypre's error flag: it is global and sticky, and a flag left by the caller's own hypre
/// calls (or an earlier solver's) is not the next call's failure.
pub(crate) fn clear_errors() -> Result<()> {
    let h = api()?;
    // SAFETY: `ClearAllErrors` takes no arguments and only resets hypre's error flag.
    unsafe { (h.ClearAllErrors)() };
    Ok(())
}

/// A hypre IJ matrix (ParCSR) holding a copy of a parlops CSR operator (square or rectangular).
pub(crate) struct IjMatrix {
    ij: *mut c_void,
    par: *mut c_void,
}

// SAFETY: the hypre objects are used by one thread at a time (the operators that hold them keep
// them behind a mutex).
unsafe impl Send for IjMatrix {}

impl Drop for IjMatrix {
    fn drop(&mut self) {
        let Ok(h) = api() else { return };
        if !self.ij.is_null() {
            // SAFETY: `ij` is the matrix this value created and owns alone, destroyed once here
            // (`par` belongs to it).
            unsafe { (h.IJMatrixDestroy)(self.ij) };
        }
    }
}

impl IjMatrix {
    /// hypre's ParCSR matrix.
    pub fn par(&self) -> *mut c_void {
        self.par
    }

    /// A copy of `a` (`what` names it in messages). [collective]
    pub fn from_csr(a: &CsrOp<f64>, what: &str) -> Result<IjMatrix> {
        let h = api()?;
        let (rows, cols) = (a.rows().clone(), a.cols().clone());
        let comm = rows.comm().clone();
        let (lo, n) = (rows.local_start(), rows.local_len() as usize);
        let (clo, cn) = (cols.local_start(), cols.local_len());
        let square = rows.compatible(&cols);
        let local = (|| -> Result<_> {
            let blk = a.blocks();
            let nnz = blk.diag.nnz() + blk.offd.nnz();
            let oom = |k: usize| crate::err!(OutOfMemory, "{what}: {k} entries for hypre");
            let mut ncols: Vec<HInt> = Vec::new();
            ncols.try_reserve_exact(n).map_err(|_| oom(n))?;
            ncols.resize(n, 0);
            let (mut dsz, mut osz) = (vec![0 as HInt; n], vec![0 as HInt; n]);
            // this rank's rows, flat: the diag block's entries then the offd block's, per row,
            // written in place (no intermediate list of pairs: one copy of the entries)
            let mut start = vec![0usize; n + 1];
            blk.diag.add_row_counts(&mut start[1..]);
            blk.offd.add_row_counts(&mut start[1..]);
            for i in 0..n {
                start[i + 1] += start[i];
            }
            let mut cols_g: Vec<i64> = Vec::new();
            let mut vals: Vec<f64> = Vec::new();
            cols_g.try_reserve_exact(nnz).map_err(|_| oom(nnz))?;
            vals.try_reserve_exact(nnz).map_err(|_| oom(nnz))?;
            cols_g.resize(nnz, 0);
            vals.resize(nnz, 0.0);
            let mut fill = start[..n].to_vec();
            blk.diag
                .scatter(&mut fill, ColMap::Offset(clo), &mut cols_g, &mut vals);
            let cmap = a.col_map_offd();
            blk.offd
                .scatter(&mut fill, ColMap::Table(cmap), &mut cols_g, &mut vals);
            let mut cols_v: Vec<HBig> = Vec::new();
            cols_v.try_reserve_exact(nnz).map_err(|_| oom(nnz))?;
            for i in 0..n {
                // a square matrix's diagonal entry first, then the columns in increasing order: how
                // hypre keeps its diag block, whatever order parlops holds them in (an insertion
                // sort of the row's pairs: rows are short)
                let g = lo + i as i64;
                let (a0, a1) = (start[i], start[i + 1]);
                let key = |c: i64| (!(square && c == g), c);
                for k in a0 + 1..a1 {
                    let (c, v) = (cols_g[k], vals[k]);
                    let mut m = k;
                    while m > a0 && key(cols_g[m - 1]) > key(c) {
                        cols_g[m] = cols_g[m - 1];
                        vals[m] = vals[m - 1];
                        m -= 1;
                    }
                    cols_g[m] = c;
                    vals[m] = v;
                }
                ncols[i] = hint(a1 - a0, "a row's entry count")?;
                for &c in &cols_g[a0..a1] {
                    if c >= clo && c < clo + cn {
                        dsz[i] += 1;
                    } else {
                        osz[i] += 1;
                    }
                    cols_v.push(big(c, "column")?);
                }
            }
            drop(cols_g);
            let idx: Vec<HBig> = (0..n)
                .map(|i| big(lo + i as i64, "row"))
                .collect::<Result<_>>()?;
            let range = (
                big(lo, "row")?,
                big(lo + n as i64 - 1, "row")?,
                big(clo, "column")?,
                big(clo + cn - 1, "column")?,
            );
            Ok((ncols, dsz, osz, cols_v, vals, idx, range))
        })();
        let (mut ncols, dsz, osz, cols_v, vals, idx, (ilo, ihi, jlo, jhi)) = comm.agree(local)?;
        let nh = hint(n, "the local row count")?;
        let mut m = IjMatrix {
            ij: std::ptr::null_mut(),
            par: std::ptr::null_mut(),
        };
        // SAFETY: the function pointers were resolved with these signatures (HInt/HBig from the
        // headers parlops was built with) in `load()`; `comm.raw()` is the live communicator of
        // the operator; `m.ij` is written by `IJMatrixCreate` before the next calls use it;
        // `dsz`/`osz` hold `n` counts, and `ncols`, `idx` (`n` entries) and `cols_v`/`vals` (the
        // sum of `ncols`) are live `Vec`s that hypre copies from during the call.
        let made = unsafe {
            hcheck(
                (h.IJMatrixCreate)(comm.raw(), ilo, ihi, jlo, jhi, &mut m.ij),
                "IJMatrixCreate",
            )
            .and_then(|_| {
                hcheck(
                    (h.IJMatrixSetObjectType)(m.ij, PARCSR),
                    "IJMatrixSetObjectType",
                )
            })
            .and_then(|_| {
                hcheck(
                    (h.IJMatrixSetDiagOffdSizes)(m.ij, dsz.as_ptr(), osz.as_ptr()),
                    "IJMatrixSetDiagOffdSizes",
                )
            })
            .and_then(|_| hcheck((h.IJMatrixInitialize)(m.ij), "IJMatrixInitialize"))
            .and_then(|_| {
                hcheck(
                    (h.IJMatrixSetValues)(
                        m.ij,
                        nh,
                        ncols.as_mut_ptr(),
                        idx.as_ptr(),
                        cols_v.as_ptr(),
                        vals.as_ptr(),
                    ),
                    "IJMatrixSetValues",
                )
            })
        };
        comm.agree(made)?;
        drop((cols_v, vals));
        // SAFETY: as above: `m.ij` is the matrix created above (initialised and filled), and
        // `m.par` a field `IJMatrixGetObject` writes.
        let assembled = unsafe {
            hcheck((h.IJMatrixAssemble)(m.ij), "IJMatrixAssemble")
                .and_then(|_| hcheck((h.IJMatrixGetObject)(m.ij, &mut m.par), "IJMatrixGetObject"))
        };
        comm.agree(assembled)?;
        Ok(m)
    }
}

/// A hypre IJ vector (ParVector) over this rank's range [lo, lo + n).
pub(crate) struct IjVector {
    ij: *mut c_void,
    par: *mut c_void,
    /// This rank's global indices.
    idx: Vec<HBig>,
}

// SAFETY: as for `IjMatrix`.
unsafe impl Send for IjVector {}

impl Drop for IjVector {
    fn drop(&mut self) {
        let Ok(h) = api() else { return };
        if !self.ij.is_null() {
            // SAFETY: `ij` is the vector this value created and owns alone, destroyed once here
            // (`par` belongs to it).
            unsafe { (h.IJVectorDestroy)(self.ij) };
        }
    }
}

impl IjVector {
    /// hypre's ParVector.
    pub fn par(&self) -> *mut c_void {
        self.par
    }

    /// A vector over [lo, lo + n) on `comm`, holding `vals` (`n` values) or zeros. [collective]
    pub fn new(comm: &Comm, lo: i64, n: usize, vals: Option<&[f64]>) -> Result<IjVector> {
        let h = api()?;
        let local = (|| -> Result<_> {
            if let Some(v) = vals
                && v.len() != n
            {
                crate::bail!(Internal, "IjVector: {} values for {n} rows", v.len());
            }
            let idx: Vec<HBig> = (0..n)
                .map(|i| big(lo + i as i64, "row"))
                .collect::<Result<_>>()?;
            Ok((idx, big(lo, "row")?, big(lo + n as i64 - 1, "row")?))
        })();
        let (idx, ilo, ihi) = comm.agree(local)?;
        let mut v = IjVector {
            ij: std::ptr::null_mut(),
            par: std::ptr::null_mut(),
            idx,
        };
        let nh = hint(n, "the local row count")?;
        // SAFETY: as for `IjMatrix::from_csr`: `v.ij` is written by `IJVectorCreate` before the
        // next calls use it; `v.idx` holds `n` indices and `vals` (when given) `n` values.
        let made = unsafe {
            hcheck(
                (h.IJVectorCreate)(comm.raw(), ilo, ihi, &mut v.ij),
                "IJVectorCreate",
            )
            .and_then(|_| {
                hcheck(
                    (h.IJVectorSetObjectType)(v.ij, PARCSR),
                    "IJVectorSetObjectType",
                )
            })
            .and_then(|_| hcheck((h.IJVectorInitialize)(v.ij), "IJVectorInitialize"))
            .and_then(|_| match vals {
                Some(x) if n > 0 => hcheck(
                    (h.IJVectorSetValues)(v.ij, nh, v.idx.as_ptr(), x.as_ptr()),
                    "IJVectorSetValues",
                ),
                _ => Ok(()),
            })
        };
        comm.agree(made)?;
        // SAFETY: as above: `v.ij` is the vector created and initialised just before, `v.par` the
        // field `IJVectorGetObject` writes.
        let assembled = unsafe {
            hcheck((h.IJVectorAssemble)(v.ij), "IJVectorAssemble")
                .and_then(|_| hcheck((h.IJVectorGetObject)(v.ij, &mut v.par), "IJVectorGetObject"))
        };
        comm.agree(assembled)?;
        Ok(v)
    }

    /// Copy this rank's values in (`x` holds this rank's length). Local.
    pub fn set(&self, x: &[f64]) -> Result<()> {
        let h = api()?;
        if x.len() != self.idx.len() {
            crate::bail!(
                Internal,
                "IjVector::set: {} values for {}",
                x.len(),
                self.idx.len()
            );
        }
        let n = hint(self.idx.len(), "the local row count")?;
        // SAFETY: `ij` is this vector's, `idx` holds `n` indices and `x` `n` values.
        unsafe {
            hcheck(
                (h.IJVectorSetValues)(self.ij, n, self.idx.as_ptr(), x.as_ptr()),
                "IJVectorSetValues",
            )
        }
    }

    /// Copy this rank's values out (`y` holds this rank's length). Local.
    pub fn get(&self, y: &mut [f64]) -> Result<()> {
        let h = api()?;
        if y.len() != self.idx.len() {
            crate::bail!(
                Internal,
                "IjVector::get: room for {} values, not {}",
                y.len(),
                self.idx.len()
            );
        }
        let n = hint(self.idx.len(), "the local row count")?;
        // SAFETY: `ij` is this vector's, `idx` holds `n` indices and `y` room for `n` values.
        unsafe {
            hcheck(
                (h.IJVectorGetValues)(self.ij, n, self.idx.as_ptr(), y.as_mut_ptr()),
                "IJVectorGetValues",
            )
        }
    }

    /// Set every value to zero. Local.
    pub fn zero(&self) -> Result<()> {
        let h = api()?;
        // SAFETY: `par` is this vector's ParVector.
        unsafe {
            hcheck(
                (h.ParVectorSetConstantValues)(self.par, 0.0),
                "ParVectorSetConstantValues",
            )
        }
    }
}

/// One application of a hypre solver used as a preconditioner (one cycle from a zero guess):
/// `input` into `b`, `x` zeroed (local; agreed before the collective solve), `solve`, then `x`
/// into `output`. hypre's convergence flag (a cycle never reaches tolerance 0) is not an error.
/// [collective]
pub(crate) fn one_cycle(
    comm: &Comm,
    b: &IjVector,
    x: &IjVector,
    input: &[f64],
    output: &mut [f64],
    what: &str,
    solve: impl FnOnce() -> HInt,
) -> Result<()> {
    let local = clear_errors()
        .and_then(|_| b.set(input))
        .and_then(|_| x.zero());
    comm.agree(local)?;
    let code = solve();
    let solved = if code != 0 && code as i64 & !256 == 0 {
        clear_errors()
    } else {
        hcheck(code, what)
    };
    solved.and_then(|_| x.get(output))
}
