//! The table of where a solve's time went (PETSc's -log_view), over the ranks: for each phase its
//! count, its time on the slowest and the fastest rank and their ratio, its share of the solve's wall
//! time (inclusive, and outside the other phases), and the bytes it moved on all ranks together.

use crate::comm::{Comm, ReduceOp};
use crate::error::Result;
use crate::timing::{PHASES, Phase, Totals};

/// The table for `t`, this rank's record of the last solve (None: no solve recorded). [collective]
pub fn log_view(comm: &Comm, t: Option<&Totals>) -> Result<String> {
    table(comm, t, "solve log")
}

/// The table of every solve this process recorded so far, added up. [collective]
pub fn run_summary(comm: &Comm) -> Result<String> {
    let (n, t) = crate::timing::run_totals();
    let n = comm.allreduce_f64(&[n as f64], ReduceOp::Max)?[0] as u64;
    table(comm, t.as_ref(), &format!("run log, {n} solve(s) added up"))
}

/// What parlops_finalize does first: with PARLOPS_LOG=finalize, print the run's table on rank 0
/// of MPI_COMM_WORLD (collective over it), while MPI runs.
pub fn at_finalize() -> Result<()> {
    if crate::config::env().get("PARLOPS_LOG") != Some("finalize") {
        return Ok(());
    }
    let (init, fin) = crate::comm::mpi_initialized();
    if !init || fin {
        return Ok(());
    }
    let world = Comm::world()?;
    let text = run_summary(&world)?;
    if world.rank() == 0 {
        print!("{text}");
    }
    Ok(())
}

fn table(comm: &Comm, t: Option<&Totals>, title: &str) -> Result<String> {
    let z = Totals::default();
    let have = t.is_some();
    let t = t.unwrap_or(&z);
    // one reduction of maxima: counts, times, minus times (their minima), the wall, whether recorded
    let mut v = Vec::with_capacity(4 * PHASES + 4);
    v.extend(t.count.iter().map(|&c| c as f64));
    v.extend(t.secs.iter().copied());
    v.extend(t.top.iter().copied());
    v.extend(t.secs.iter().map(|s| -s));
    v.extend([t.wall, -t.wall, f64::from(u8::from(have)), t.rest()]);
    let mx = comm.allreduce_f64(&v, ReduceOp::Max)?;
    let bytes: Vec<f64> = t.bytes.iter().map(|&b| b as f64).collect();
    let sum = comm.allreduce_f64(&bytes, ReduceOp::Sum)?;
    let p = PHASES;
    let (wall, wall_min, any) = (mx[4 * p], -mx[4 * p + 1], mx[4 * p + 2] > 0.0);
    if !any {
        return Ok(format!("{title}: no solve recorded yet\n"));
    }
    let pct = |s: f64| if wall > 0.0 { 100.0 * s / wall } else { 0.0 };
    let top_sum: f64 = (0..p).map(|i| mx[2 * p + i]).sum();
    let mut out = format!(
        "{title} ({} rank(s)): wall {wall:.4e} s on the slowest rank, {wall_min:.4e} s on the fastest; \
         the phases outside one another take {:.1}% of it\n",
        comm.size(),
        pct(top_sum.min(wall))
    );
    out += &format!(
        "  {:<29} {:>9} {:>11} {:>11} {:>6} {:>7} {:>10} {:>14}\n",
        "phase", "count", "max s", "min s", "ratio", "% wall", "% outside", "bytes (all)"
    );
    for ph in Phase::ALL {
        let i = ph as usize;
        let (c, smax, smin, top) = (mx[i], mx[p + i], -mx[3 * p + i], mx[2 * p + i]);
        if c == 0.0 {
            continue;
        }
        out += &format!(
            "  {:<29} {:>9} {:>11.4e} {:>11.4e} {:>6.2} {:>7.1} {:>10.1} {:>14}\n",
            ph.name(),
            c as u64,
            smax,
            smin,
            if smin > 0.0 { smax / smin } else { 1.0 },
            pct(smax),
            pct(top),
            sum[i] as u64
        );
    }
    out += &format!(
        "  {:<29} {:>9} {:>11.4e} {:>11} {:>6} {:>7.1} {:>10.1} {:>14}\n",
        "the rest (the method's own)",
        "",
        mx[4 * p + 3],
        "",
        "",
        pct(mx[4 * p + 3]),
        pct(mx[4 * p + 3]),
        ""
    );
    Ok(out)
}
