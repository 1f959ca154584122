//! hypre's AMS and ADS as preconditioners (parlops_op_create_ams, _ads): the C arguments resolved,
//! checked and agreed; the solvers themselves are `hypre/auxspace.rs`.

use std::ffi::c_void;

use super::args::array_arg;
use super::handles::{arg, create_agreed, guard, out_ok, parlops_op};
use super::hypre_opts::parlops_hypre_options;
use super::types::parlops_status;
use crate::error::Result;
use crate::hypre::options::HypreOptions;
use crate::op::csr::CsrOp;
use crate::op::{IntoAnyOp, Op};

/// The CSR operator of dtype PARLOPS_F64 inside `op`, or an error naming the argument.
fn csr_f64(op: &parlops_op, name: &str) -> Result<Op<f64>> {
    let t = op.inner.typed::<f64>().ok_or_else(|| {
        crate::err!(
            DTypeMismatch,
            "argument '{name}' is {}; hypre takes PARLOPS_F64 (real double values)",
            op.inner.dtype().name()
        )
    })?;
    if t.as_any().downcast_ref::<CsrOp<f64>>().is_none() {
        crate::bail!(
            NotSupported,
            "argument '{name}' ({}) is not a CSR operator (parlops_op_create_csr or _parcsr): hypre needs its entries",
            op.inner.describe()
        );
    }
    Ok(t)
}

fn as_csr(op: &Op<f64>) -> Result<&CsrOp<f64>> {
    op.as_any()
        .downcast_ref::<CsrOp<f64>>()
        .ok_or_else(|| crate::err!(Internal, "CSR"))
}

/// The C arguments of AMS or ADS, resolved: the operators as CSR, the coordinates, the options.
struct Parts<'a> {
    a: Op<f64>,
    g: Op<f64>,
    c: Option<Op<f64>>,
    pi: Vec<Op<f64>>,
    alpha: Option<Op<f64>>,
    beta: Option<Op<f64>>,
    coords: Option<&'a [f64]>,
    o: HypreOptions,
}

impl Parts<'_> {
    /// What the solver is built from.
    fn input(
        &self,
        kind: crate::hypre::auxspace::AuxKind,
        dim: usize,
    ) -> Result<crate::hypre::auxspace::AuxInput<'_>> {
        Ok(crate::hypre::auxspace::AuxInput {
            kind,
            a: as_csr(&self.a)?,
            c: self.c.as_ref().map(as_csr).transpose()?,
            g: as_csr(&self.g)?,
            dim,
            coords: self.coords,
            pi: self.pi.iter().map(as_csr).collect::<Result<_>>()?,
            alpha: self.alpha.as_ref().map(as_csr).transpose()?,
            beta: self.beta.as_ref().map(as_csr).transpose()?,
        })
    }
}

/// AMS or ADS from the C arguments (shared by parlops_op_create_ams and _ads).
///
/// # Safety
/// The pointers are the C caller's, as the two functions' headers say.
#[allow(clippy::too_many_arguments)]
unsafe fn create_aux(
    kind: crate::hypre::auxspace::AuxKind,
    a: *const parlops_op,
    c: *const parlops_op,
    g: *const parlops_op,
    dim: i32,
    num_coords: i64,
    coords: *const f64,
    num_interpolations: i32,
    interpolations: *const *const parlops_op,
    alpha: *const parlops_op,
    beta: *const parlops_op,
    opts: *const parlops_hypre_options,
    out: *mut *mut parlops_op,
) -> Result<()> {
    use super::handles::{arg_array, opt_arg};
    use crate::hypre::auxspace::{AuxKind, AuxSpace};
    // SAFETY: `arg` checks `a` (live parlops_op) and holds it shared for this call.
    let a = unsafe { arg(a, "A")? };
    let comm = a.inner.rows().comm().clone();
    let kname = kind.name();
    // every other argument is this rank's to check: resolved here, agreed below
    let resolved = (|| -> Result<_> {
        // SAFETY: `arg`, `opt_arg` and `arg_array` check each handle against the registry and
        // hold it for this call; `interpolations` holds `num_interpolations` handles (header).
        let g = unsafe { arg(g, "G")? };
        let c = if kind == AuxKind::Ads {
            // SAFETY: as above.
            Some(unsafe { arg(c, "C")? })
        } else {
            None
        };
        // SAFETY: as above.
        let pis = unsafe {
            arg_array(
                num_interpolations,
                interpolations,
                "num_interpolations",
                "interpolations",
            )?
        };
        // SAFETY: as above.
        let alpha = unsafe { opt_arg(alpha, "alpha_poisson")? };
        // SAFETY: as above.
        let beta = unsafe { opt_arg(beta, "beta_poisson")? };
        // SAFETY: as above.
        let o = match unsafe { opt_arg(opts, "opts")? } {
            Some(o) if o.inner.solver() != kname => crate::bail!(
                InvalidArgument,
                "argument 'opts' holds {} options; {kname} needs a set made with PARLOPS_HYPRE_{}",
                o.inner.solver(),
                kname
            ),
            Some(o) => o.inner.clone(),
            None if kind == AuxKind::Ams => HypreOptions::ams(),
            None => HypreOptions::ads(),
        };
        Ok((g, c, pis, alpha, beta, o))
    })();
    let idents: Vec<i64> = match &resolved {
        Ok((g, c, pis, alpha, beta, _)) => [Some(*g), *c, *alpha, *beta]
            .into_iter()
            .map(|h| h.map_or(0, |h| h.ident as i64))
            .chain(pis.iter().map(|h| h.ident as i64))
            .collect(),
        Err(_) => Vec::new(),
    };
    // the operators as CSR, the coordinates, and the solver's own checks
    let made = resolved.and_then(|(g, c, pis, alpha, beta, o)| {
        let need = |h: &parlops_op, name: &str| csr_f64(h, name);
        let a_op = need(a, "A")?;
        let g_op = need(g, "G")?;
        let c_op = c.map(|c| need(c, "C")).transpose()?;
        let pi_ops = pis
            .iter()
            .enumerate()
            .map(|(i, p)| need(p, &format!("interpolations[{i}]")))
            .collect::<Result<Vec<_>>>()?;
        let alpha_op = alpha.map(|m| need(m, "alpha_poisson")).transpose()?;
        let beta_op = beta.map(|m| need(m, "beta_poisson")).transpose()?;
        if !(2..=3).contains(&dim) {
            crate::bail!(
                InvalidArgument,
                "argument 'dim' is {dim}; it must be 2 or 3"
            );
        }
        let x: Option<&[f64]> = if num_coords == 0 {
            None
        } else {
            let n = usize::try_from(num_coords).map_err(|_| {
                crate::err!(
                    InvalidArgument,
                    "argument 'num_coords' is {num_coords}; it must be >= 0"
                )
            })?;
            // SAFETY: `array_arg` checks NULL and alignment; the caller promises `num_coords`
            // readable doubles at `coords` (header contract).
            Some(unsafe { array_arg(coords.cast::<c_void>(), n, "coords")? })
        };
        Ok(Parts {
            a: a_op,
            g: g_op,
            c: c_op,
            pi: pi_ops,
            alpha: alpha_op,
            beta: beta_op,
            coords: x,
            o,
        })
    });
    let pre = made
        .as_ref()
        .map_err(|e| e.clone())
        .and_then(|m| m.input(kind, dim as usize)?.check(&m.o));
    let (mut names, mut same) = match &made {
        Ok(m) => m.o.agreement(),
        Err(_) => (Vec::new(), Vec::new()),
    };
    names.extend(["dim", "coords given", "num_interpolations", "operators"]);
    same.extend([
        dim as i64,
        i64::from(num_coords != 0),
        num_interpolations as i64,
        crate::comm::list_hash(&idents, a.ident) as i64,
    ]);
    comm.agree_same_named(
        out_ok(out, "out").and(pre),
        &format!("{kname} arguments"),
        &names,
        &same,
    )?;
    create_agreed(
        &comm,
        out,
        Ok(()),
        &format!("{kname} arguments"),
        &[],
        || {
            let m = made?;
            let s = AuxSpace::setup(&m.input(kind, dim as usize)?, &m.o)?;
            // what a refresh sets it up from again: the operators, a copy of the coordinates
            let ops: Vec<Op<f64>> = [
                Some(&m.a),
                Some(&m.g),
                m.c.as_ref(),
                m.alpha.as_ref(),
                m.beta.as_ref(),
            ]
            .into_iter()
            .flatten()
            .chain(&m.pi)
            .cloned()
            .collect();
            let coords = m
                .coords
                .map(|x| crate::op::copied(x, "coordinates"))
                .transpose()?;
            let (dim, o) = (dim as usize, m.o.clone());
            let (a, g, c, pi, alpha, beta) = (m.a, m.g, m.c, m.pi, m.alpha, m.beta);
            let s = s.with_rebuild(
                ops,
                &m.o,
                Box::new(move || {
                    let p = Parts {
                        a: a.clone(),
                        g: g.clone(),
                        c: c.clone(),
                        pi: pi.clone(),
                        alpha: alpha.clone(),
                        beta: beta.clone(),
                        coords: coords.as_deref(),
                        o: o.clone(),
                    };
                    let inp = p.input(kind, dim)?;
                    // the construction's checks on the new values, agreed, before hypre sees them
                    crate::op::LinearOperator::rows(inp.a)
                        .comm()
                        .agree(inp.check(&p.o))?;
                    AuxSpace::setup(&inp, &p.o)
                }),
            );
            Ok(super::op::wrap(
                (std::sync::Arc::new(s) as Op<f64>).into_any(),
            ))
        },
    )
}

/// hypre's AMS (auxiliary-space Maxwell solver) on an H(curl) system, as a preconditioner: each
/// apply is one AMS cycle from a zero initial guess (as hypre's own PCG and MFEM's HypreAMS apply
/// it). `a`: the system (curl-curl plus mass, or curl-curl alone with the option BetaPoissonZero),
/// a square CSR operator of dtype PARLOPS_F64 over the edges; `g`: the discrete gradient, a CSR
/// operator with A's rows and columns over the vertex space (H1 of the same order); `dim`: 2 or 3;
/// `coords`: `num_coords` values, this rank's vertices' coordinates, `dim` per vertex in G's local
/// column order, so num_coords = dim x G's local columns (order 1; 0 and NULL otherwise);
/// `interpolations`: none (order 1, with `coords`), the Nedelec interpolation Pi (A's rows, dim x
/// G's columns, byVDIM; for cycles 1-8), or its `dim` components Pix, Piy (, Piz) (A's rows, G's
/// columns; for cycles 11-14, the default), as MFEM's HypreAMS builds them for higher orders;
/// `alpha_poisson`, `beta_poisson`:
/// optional vertex Poisson matrices (NULL: hypre forms them). `opts`: a set made with
/// PARLOPS_HYPRE_AMS (NULL: MFEM's defaults: cycle 13, l1-symmetric GS, alpha and beta AMG with HMIS,
/// one aggressive level, l1-GS, threshold 0.25, extended+i, P max 4). Every matrix is copied to
/// hypre here. A G whose rows are not A's, coordinates of another length, an interpolation of
/// other sizes, options differing between ranks: fail on every rank naming the argument. No
/// adjoint. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_create_ams(
    a: *const parlops_op,
    g: *const parlops_op,
    dim: i32,
    num_coords: i64,
    coords: *const f64,
    num_interpolations: i32,
    interpolations: *const *const parlops_op,
    alpha_poisson: *const parlops_op,
    beta_poisson: *const parlops_op,
    opts: *const parlops_hypre_options,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_create_ams", || {
        // SAFETY: the C caller's pointers, as this function's header says.
        unsafe {
            create_aux(
                crate::hypre::auxspace::AuxKind::Ams,
                a,
                std::ptr::null(),
                g,
                dim,
                num_coords,
                coords,
                num_interpolations,
                interpolations,
                alpha_poisson,
                beta_poisson,
                opts,
                out,
            )
        }
    })
}

/// hypre's ADS (auxiliary-space divergence solver) on a 3D H(div) system, as a preconditioner: each
/// apply is one ADS cycle from a zero initial guess. `a`: the system over the faces (square CSR,
/// PARLOPS_F64); `c`: the discrete curl (A's rows, columns over the edges); `g`: the discrete
/// gradient (C's columns as rows, columns over the vertex space); `coords`: `num_coords` values, this
/// rank's vertices' coordinates, 3 per vertex in G's local column order (order 1; 0 and NULL
/// otherwise);
/// `interpolations`: none (order 1), RT_Pi and ND_Pi (for cycles 1-8), or RT_Pix, RT_Piy, RT_Piz,
/// ND_Pix, ND_Piy, ND_Piz (for cycles 11-14, the default) (the Raviart-Thomas ones with A's rows,
/// the Nedelec ones with C's columns as rows); ADS's CycleType and AMSCycleType must both be below
/// 10 or both above. `opts`:
/// a set made with PARLOPS_HYPRE_ADS (NULL: MFEM's HypreADS defaults: cycle 11, AMS cycle 14,
/// l1-symmetric GS, AMG with HMIS, one aggressive level, l1-GS, threshold 0.25, extended+i, P max 4).
/// Otherwise as parlops_op_create_ams. [collective]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn parlops_op_create_ads(
    a: *const parlops_op,
    c: *const parlops_op,
    g: *const parlops_op,
    num_coords: i64,
    coords: *const f64,
    num_interpolations: i32,
    interpolations: *const *const parlops_op,
    opts: *const parlops_hypre_options,
    out: *mut *mut parlops_op,
) -> parlops_status {
    guard("parlops_op_create_ads", || {
        // SAFETY: the C caller's pointers, as this function's header says.
        unsafe {
            create_aux(
                crate::hypre::auxspace::AuxKind::Ads,
                a,
                c,
                g,
                3,
                num_coords,
                coords,
                num_interpolations,
                interpolations,
                std::ptr::null(),
                std::ptr::null(),
                opts,
                out,
            )
        }
    })
}
