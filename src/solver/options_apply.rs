//! Applying run-time options ([`super::options::Options`]) to a solver: the options with the
//! solver's prefix are read into a plan (each value checked, naming the option), the plan and the
//! options are agreed over the ranks, then the settings are made (all or none) and the
//! preconditioner named by `-pc_type` is built from the solver's operator.

use std::collections::BTreeMap;

use super::any::AnySolver;
use super::options::{AMG_ALIASES, AMG_NAMED, Options, TABLE, parse_bool};
use super::settings::Printing;
use super::{Method, Orthog, PcSide};
use crate::error::Result;
use crate::hypre::amg::BoomerAmg;
use crate::hypre::options::{HypreOptions, Kind};
use crate::op::bjacobi::{BlockJacobi, LocalSolve};
use crate::op::csr::CsrOp;
use crate::op::{AnyOp, IntoAnyOp, Op};
use crate::scalar::Scalar;
use crate::solver::chebyshev::Chebyshev;

/// The preconditioner `-pc_type` asks for.
enum Pc {
    None,
    Jacobi,
    BlockJacobi(LocalSolve),
    Chebyshev(i64, Option<(f64, f64)>),
    Amg(HypreOptions),
}

/// The options of one prefix, read and checked.
#[derive(Default)]
struct Plan {
    method: Option<Method>,
    rtol: Option<f64>,
    atol: Option<f64>,
    dtol: Option<f64>,
    max_it: Option<i64>,
    restart: Option<i64>,
    recycle: Option<i64>,
    orthog: Option<Orthog>,
    side: Option<String>,
    natural: Option<bool>,
    nonzero: Option<bool>,
    scale: Option<f64>,
    damp: Option<f64>,
    reuse_every: Option<i64>,
    reuse_growth: Option<f64>,
    printing: [Option<bool>; 4],
    pc: Option<Pc>,
}

fn real(name: &str, v: Option<&str>) -> Result<f64> {
    let t = v.unwrap_or_default();
    t.trim().parse::<f64>().map_err(|_| {
        crate::err!(
            InvalidArgument,
            "option -{name} is \"{t}\"; it takes a real number"
        )
    })
}

fn int(name: &str, v: Option<&str>) -> Result<i64> {
    let t = v.unwrap_or_default();
    t.trim().parse::<i64>().map_err(|_| {
        crate::err!(
            InvalidArgument,
            "option -{name} is \"{t}\"; it takes an integer"
        )
    })
}

fn method(name: &str, v: Option<&str>) -> Result<Method> {
    Ok(match v.unwrap_or_default().to_ascii_lowercase().as_str() {
        "cg" => Method::Cg,
        "pipecg" => Method::CgPipelined,
        "cgls" => Method::Cgls,
        "lsqr" => Method::Lsqr,
        "gmres" => Method::Gmres,
        "fgmres" => Method::Fgmres,
        "gcrodr" => Method::Gcrodr,
        "dcg" => Method::CgDeflated,
        "bcgs" | "bicgstab" => Method::Bicgstab,
        "minres" => Method::Minres,
        "richardson" => Method::Richardson,
        "ista" => Method::Ista,
        "fista" => Method::Fista,
        t => crate::bail!(
            InvalidArgument,
            "option -{name} is \"{t}\"; it takes {}",
            TABLE[0].values
        ),
    })
}

/// A BoomerAMG option `-pc_hypre_boomeramg_<rest>` into `o`; false when `rest` names none.
fn amg_option(o: &mut HypreOptions, name: &str, rest: &str, v: Option<&str>) -> Result<bool> {
    let hname = AMG_ALIASES
        .iter()
        .find(|(a, _)| a.eq_ignore_ascii_case(rest))
        .map_or(rest, |(_, h)| *h);
    let Some(spec) = o.spec(hname) else {
        return Ok(false);
    };
    let t = v.unwrap_or_default();
    let r = match spec.kind {
        Kind::Real { .. } => o.set_real(spec.name, real(name, v)?),
        Kind::Int { .. } => {
            let named = AMG_NAMED
                .iter()
                .find(|(n, _)| *n == spec.name)
                .and_then(|(_, l)| {
                    l.iter()
                        .position(|x| !x.is_empty() && x.eq_ignore_ascii_case(t))
                });
            let code = match (named, t.trim().parse::<i64>()) {
                (Some(c), _) => c as i64,
                (None, Ok(c)) => c,
                (None, Err(_)) => crate::bail!(
                    InvalidArgument,
                    "option -{name} is \"{t}\"; it takes hypre's integer code{}",
                    AMG_NAMED
                        .iter()
                        .find(|(n, _)| *n == spec.name)
                        .map(|(_, l)| {
                            let names: Vec<&str> =
                                l.iter().copied().filter(|x| !x.is_empty()).collect();
                            format!(" or one of {}", names.join(", "))
                        })
                        .unwrap_or_default()
                ),
            };
            o.set_int(spec.name, code)
        }
    };
    r.map_err(|e| crate::err!(InvalidArgument, "option -{name}: {}", e.msg))?;
    Ok(true)
}

/// Read the options with `prefix` into a plan; returns it with the names used.
/// GMRES's own options (-ksp_gmres_*) are read only when the method (`current`, or the one the
/// options name) is GMRES or FGMRES; otherwise they stay unused, as PETSc leaves them.
fn plan(
    opts: &BTreeMap<String, Option<String>>,
    prefix: &str,
    current: Method,
) -> Result<(Plan, Vec<String>)> {
    let mut p = Plan::default();
    let mut used = Vec::new();
    let get = |k: &str| opts.get(k).map(|v| v.as_deref());
    let mut take = |k: &str| -> Option<Option<&str>> {
        let v = get(k)?;
        used.push(format!("{prefix}{k}"));
        Some(v)
    };
    let n = |k: &str| format!("{prefix}{k}");
    if let Some(v) = take("ksp_type") {
        p.method = Some(method(&n("ksp_type"), v)?);
    }
    if let Some(v) = take("ksp_cg_single_reduction")
        && parse_bool(&n("ksp_cg_single_reduction"), v)?
    {
        if !matches!(p.method, None | Some(Method::Cg)) {
            crate::bail!(
                InvalidArgument,
                "option -{} is for -{} cg",
                n("ksp_cg_single_reduction"),
                n("ksp_type")
            );
        }
        p.method = Some(Method::CgSingleReduction);
    }
    p.rtol = take("ksp_rtol")
        .map(|v| real(&n("ksp_rtol"), v))
        .transpose()?;
    p.atol = take("ksp_atol")
        .map(|v| real(&n("ksp_atol"), v))
        .transpose()?;
    p.dtol = take("ksp_divtol")
        .map(|v| real(&n("ksp_divtol"), v))
        .transpose()?;
    p.max_it = take("ksp_max_it")
        .map(|v| int(&n("ksp_max_it"), v))
        .transpose()?;
    let arnoldi = p.method.unwrap_or(current).arnoldi();
    let gcrodr = p.method.unwrap_or(current) == Method::Gcrodr;
    if arnoldi || gcrodr {
        p.restart = take("ksp_gmres_restart")
            .map(|v| int(&n("ksp_gmres_restart"), v))
            .transpose()?;
    }
    if gcrodr {
        p.recycle = take("ksp_gcrodr_recycle")
            .map(|v| int(&n("ksp_gcrodr_recycle"), v))
            .transpose()?;
    }
    if p.method.unwrap_or(current) == Method::CgDeflated {
        p.recycle = take("ksp_dcg_recycle")
            .map(|v| int(&n("ksp_dcg_recycle"), v))
            .transpose()?;
    }
    for (k, o) in [
        ("ksp_gmres_modifiedgramschmidt", Orthog::Modified),
        ("ksp_gmres_classicalgramschmidt", Orthog::Classical),
    ] {
        if arnoldi
            && let Some(v) = take(k)
            && parse_bool(&n(k), v)?
        {
            p.orthog = Some(o);
        }
    }
    p.side = take("ksp_pc_side").map(|v| v.unwrap_or_default().to_ascii_lowercase());
    if let Some(v) = take("ksp_norm_type") {
        p.natural = Some(match v.unwrap_or_default().to_ascii_lowercase().as_str() {
            "unpreconditioned" => false,
            "natural" => true,
            t => crate::bail!(
                InvalidArgument,
                "option -{} is \"{t}\"; parlops tests unpreconditioned or natural",
                n("ksp_norm_type")
            ),
        });
    }
    let k = "ksp_initial_guess_nonzero";
    p.nonzero = take(k).map(|v| parse_bool(&n(k), v)).transpose()?;
    p.scale = take("ksp_richardson_scale")
        .map(|v| real(&n("ksp_richardson_scale"), v))
        .transpose()?;
    p.damp = take("ksp_damping")
        .map(|v| real(&n("ksp_damping"), v))
        .transpose()?;
    p.reuse_every = take("pc_reuse_every")
        .map(|v| int(&n("pc_reuse_every"), v))
        .transpose()?;
    p.reuse_growth = take("pc_reuse_growth")
        .map(|v| real(&n("pc_reuse_growth"), v))
        .transpose()?;
    for (i, k) in [
        "ksp_monitor",
        "ksp_converged_reason",
        "ksp_view",
        "log_view",
    ]
    .iter()
    .enumerate()
    {
        p.printing[i] = take(k).map(|v| parse_bool(&n(k), v)).transpose()?;
    }
    if let Some(v) = take("pc_type") {
        let t = v.unwrap_or_default().to_ascii_lowercase();
        p.pc = Some(match t.as_str() {
            "none" => Pc::None,
            "jacobi" => Pc::Jacobi,
            "bjacobi" => {
                let omega = take("sub_pc_sor_omega")
                    .map(|v| real(&n("sub_pc_sor_omega"), v))
                    .transpose()?
                    .unwrap_or(1.0);
                let sub = take("sub_pc_type").map(|v| v.unwrap_or_default().to_ascii_lowercase());
                Pc::BlockJacobi(match sub.as_deref() {
                    None | Some("ilu") => LocalSolve::Ilu0,
                    Some("icc") => LocalSolve::Ic0,
                    Some("sor") if omega > 0.0 && omega < 2.0 => LocalSolve::Ssor(omega),
                    Some("sor") => crate::bail!(
                        InvalidArgument,
                        "option -{} is {omega}; it must be in (0, 2)",
                        n("sub_pc_sor_omega")
                    ),
                    Some(s) => crate::bail!(
                        InvalidArgument,
                        "option -{} is \"{s}\"; it takes ilu, icc or sor",
                        n("sub_pc_type")
                    ),
                })
            }
            "chebyshev" => {
                let d = take("pc_chebyshev_degree")
                    .map(|v| int(&n("pc_chebyshev_degree"), v))
                    .transpose()?
                    .unwrap_or(3);
                let b = match take("pc_chebyshev_eigenvalues") {
                    None => None,
                    Some(v) => {
                        let t = v.unwrap_or_default();
                        let parts: Vec<Option<f64>> =
                            t.split(',').map(|x| x.trim().parse::<f64>().ok()).collect();
                        match parts[..] {
                            [Some(lo), Some(hi)] => Some((lo, hi)),
                            _ => crate::bail!(
                                InvalidArgument,
                                "option -{} is \"{t}\"; it takes lmin,lmax",
                                n("pc_chebyshev_eigenvalues")
                            ),
                        }
                    }
                };
                Pc::Chebyshev(d, b)
            }
            "hypre" | "amg" | "boomeramg" => {
                if let Some(h) = take("pc_hypre_type") {
                    let h = h.unwrap_or_default().to_ascii_lowercase();
                    if h != "boomeramg" {
                        crate::bail!(
                            NotSupported,
                            "option -{} is \"{h}\": from options parlops makes BoomerAMG only (AMS and ADS need the discrete gradient: parlops_op_create_ams, _ads)",
                            n("pc_hypre_type")
                        );
                    }
                }
                let mut o = HypreOptions::boomeramg();
                let amg = format!("{prefix}pc_hypre_boomeramg_");
                for (k, v) in opts {
                    if let Some(rest) = k.strip_prefix("pc_hypre_boomeramg_")
                        && amg_option(&mut o, &format!("{amg}{rest}"), rest, v.as_deref())?
                    {
                        used.push(format!("{amg}{rest}"));
                    }
                }
                Pc::Amg(o)
            }
            "ams" | "ads" => crate::bail!(
                NotSupported,
                "option -{} is \"{t}\": {} needs the discrete gradient (and more): make it with parlops_op_create_{t} and set it with parlops_solver_set_preconditioner",
                n("pc_type"),
                t.to_ascii_uppercase()
            ),
            _ => crate::bail!(
                InvalidArgument,
                "option -{} is \"{t}\"; it takes {}",
                n("pc_type"),
                TABLE
                    .iter()
                    .find(|s| s.name == "pc_type")
                    .map_or("", |s| s.values)
            ),
        });
    }
    Ok((p, used))
}

/// The preconditioner of `pc` built from `a`. [collective]
fn build<T: Scalar>(a: &Op<T>, pc: &Pc) -> Result<Op<T>>
where
    Op<T>: IntoAnyOp,
{
    let comm = a.rows().comm().clone();
    let csr = || {
        a.as_any().downcast_ref::<CsrOp<T>>().ok_or_else(|| {
            crate::err!(
                NotSupported,
                "the solver's operator ({}) is not a CSR matrix: -pc_type bjacobi and hypre factor its entries",
                a.describe()
            )
        })
    };
    match pc {
        Pc::BlockJacobi(k) => {
            let b = comm.agree(csr().and_then(|c| BlockJacobi::new(c, *k)))?;
            Ok(std::sync::Arc::new(b.with_source(a.clone())))
        }
        Pc::Chebyshev(d, b) => Ok(std::sync::Arc::new(comm.agree(Chebyshev::new(
            a.clone(),
            *d,
            *b,
        ))?)),
        Pc::Amg(o) => {
            let a64 = a.clone().into_any();
            let AnyOp::F64(op) = a64 else {
                crate::bail!(
                    DTypeMismatch,
                    "-pc_type hypre: BoomerAMG takes PARLOPS_F64 operators (hypre's real double values); the operator is {}",
                    T::DTYPE.name()
                );
            };
            let c = op.as_any().downcast_ref::<CsrOp<f64>>().ok_or_else(|| {
                crate::err!(
                    NotSupported,
                    "the solver's operator ({}) is not a CSR matrix: BoomerAMG reads its entries",
                    op.describe()
                )
            });
            let c = comm.agree(c.and_then(|c| BoomerAmg::check(c, o, 0).map(|_| c)))?;
            let amg = comm.agree(BoomerAmg::setup(c, o, 0, &[]))?;
            let amg: Op<f64> =
                std::sync::Arc::new(amg.with_source(op.clone(), o.clone(), 0, Vec::new()));
            amg.into_any()
                .typed::<T>()
                .ok_or_else(|| crate::err!(Internal, "BoomerAMG's dtype"))
        }
        Pc::None | Pc::Jacobi => crate::bail!(Internal, "nothing to build"),
    }
}

/// A short hash of a text (the same on every rank for the same text).
fn text_hash(t: &str) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in t.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    h as i64
}

/// Apply the options of `opts` whose names start with `prefix` to `s` (and build the
/// preconditioner `-pc_type` names from its operator). A bad value fails naming the option, and
/// options that differ between ranks fail, on every rank; then nothing is changed. [collective]
pub fn apply(opts: &Options, prefix: &str, s: &mut AnySolver) -> Result<()> {
    let comm = s.comm().clone();
    let mine: BTreeMap<String, Option<String>> = {
        let e = opts.entries.lock().unwrap_or_else(|p| p.into_inner());
        e.iter()
            .filter_map(|x| {
                x.name
                    .strip_prefix(prefix)
                    .map(|r| (r.to_string(), x.value.clone()))
            })
            .collect()
    };
    // the same options on every rank (names and values), then the same plan
    let names: Vec<String> = ["the prefix", "the number of options"]
        .into_iter()
        .map(String::from)
        .chain(mine.keys().map(|k| format!("-{prefix}{k}")))
        .collect();
    let mut vals = vec![text_hash(prefix), mine.len() as i64];
    vals.extend(
        mine.iter()
            .map(|(k, v)| text_hash(&format!("{k}={}", v.as_deref().unwrap_or("")))),
    );
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let planned = plan(&mine, prefix, s.method());
    let local = planned.as_ref().map(|_| ()).map_err(Clone::clone);
    comm.agree_same_named(local, "options", &name_refs, &vals)?;
    let (p, used) = planned?;
    // the settings, all or none (they depend only on agreed values: every rank decides alike)
    let (old_method, old_params, old_print) = (s.method(), s.params.clone(), s.printing());
    let r = settle(s, &p, prefix);
    if let Err(e) = comm.agree(r) {
        s.replace_method(old_method);
        s.params = old_params;
        s.set_printing(old_print);
        return Err(e);
    }
    {
        let mut pre = opts.prefixes.lock().unwrap_or_else(|p| p.into_inner());
        if !pre.iter().any(|x| x == prefix) {
            pre.push(prefix.to_string());
        }
        let mut e = opts.entries.lock().unwrap_or_else(|p| p.into_inner());
        for x in e.iter_mut().filter(|x| used.contains(&x.name)) {
            x.used = true;
        }
    }
    Ok(())
}

/// Make the settings of `p` on `s`, then its preconditioner. [collective for a preconditioner]
fn settle(s: &mut AnySolver, p: &Plan, prefix: &str) -> Result<()> {
    let named = |o: &str, r: Result<()>| {
        r.map_err(|e| crate::error::Error::new(e.kind, format!("option -{prefix}{o}: {}", e.msg)))
    };
    if let Some(m) = p.method {
        named("ksp_type", s.set_method(m))?;
    }
    let q = &s.params;
    let (rtol, atol, dtol, max_it) = (
        p.rtol.unwrap_or(q.rtol),
        p.atol.unwrap_or(q.atol),
        p.dtol.unwrap_or(q.dtol),
        p.max_it.unwrap_or(q.max_iter),
    );
    named(
        "ksp_rtol/atol/divtol/max_it",
        s.set_tolerances(rtol, atol, dtol, max_it),
    )?;
    if let Some(m) = p.restart {
        named("ksp_gmres_restart", s.set_restart(m))?;
    }
    if let Some(k) = p.recycle {
        let name = if s.method() == Method::CgDeflated {
            "ksp_dcg_recycle"
        } else {
            "ksp_gcrodr_recycle"
        };
        named(name, s.set_recycle(k))?;
    }
    if let Some(o) = p.orthog {
        named("ksp_gmres_*gramschmidt", s.set_orthog(o))?;
    }
    if let Some(side) = &p.side {
        let m = s.method();
        let side = match side.as_str() {
            "left" => PcSide::Left,
            "default" => PcSide::Default,
            "right"
                if matches!(
                    m,
                    Method::Gmres | Method::Fgmres | Method::Gcrodr | Method::Bicgstab
                ) =>
            {
                PcSide::Default
            }
            t => crate::bail!(
                NotSupported,
                "option -{prefix}ksp_pc_side is \"{t}\"; {} takes left (GMRES), right (GMRES, FGMRES, GCRO-DR, BiCGStab) or default",
                m.name()
            ),
        };
        named("ksp_pc_side", s.set_pc_side(side))?;
    }
    if let Some(nat) = p.natural {
        named("ksp_norm_type", s.set_natural_norm(nat))?;
    }
    if let Some(z) = p.nonzero {
        s.params.nonzero_guess = z;
    }
    if let Some(v) = p.scale {
        named("ksp_richardson_scale", s.set_richardson_scale(v))?;
    }
    if let Some(v) = p.damp {
        named("ksp_damping", s.set_damping(v))?;
    }
    if p.reuse_every.is_some() || p.reuse_growth.is_some() {
        let every = p.reuse_every.unwrap_or(s.params.pc_reuse_every);
        let growth = p.reuse_growth.unwrap_or(s.params.pc_reuse_growth);
        named("pc_reuse_every/growth", s.set_pc_reuse(every, growth))?;
    }
    let old = s.printing();
    s.set_printing(Printing {
        monitor: p.printing[0].unwrap_or(old.monitor),
        reason: p.printing[1].unwrap_or(old.reason),
        view: p.printing[2].unwrap_or(old.view),
        log: p.printing[3].unwrap_or(old.log),
    });
    match &p.pc {
        None => Ok(()),
        Some(Pc::None) => s.set_preconditioner(None),
        Some(Pc::Jacobi) => {
            s.set_jacobi();
            Ok(())
        }
        Some(pc) => {
            let a = s.operator().cloned().ok_or_else(|| {
                crate::err!(
                    InvalidArgument,
                    "option -{prefix}pc_type builds the preconditioner from the solver's operator: set the operator before applying the options"
                )
            })?;
            let m = match &a {
                AnyOp::F32(o) => build(o, pc).map(IntoAnyOp::into_any),
                AnyOp::F64(o) => build(o, pc).map(IntoAnyOp::into_any),
                AnyOp::C64(o) => build(o, pc).map(IntoAnyOp::into_any),
                AnyOp::C128(o) => build(o, pc).map(IntoAnyOp::into_any),
            };
            let m = m.map_err(|e| {
                crate::error::Error::new(e.kind, format!("option -{prefix}pc_type: {}", e.msg))
            })?;
            s.set_preconditioner(Some((&m, 0)))
        }
    }
}
