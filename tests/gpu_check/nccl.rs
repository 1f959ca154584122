//! NCCL: a communicator with NCCL attached (parlops' own, then the caller's wrapped); vectors, the
//! CSR halo, dot products and solves over NCCL against the host.

use std::sync::Arc;

use crate::common::Tally;
use crate::{operators, solvers, vectors};
use parlops::comm::Comm;
use parlops::{c32, c64};

/// NCCL: a communicator with NCCL attached; CSR halo and dot products over NCCL against the host.
pub(crate) fn nccl(t: &mut Tally, world: &Arc<Comm>) {
    let p = parlops::gpu::probe();
    if !p.nccl_loaded {
        if world.rank() == 0 {
            println!("gpu_check: NCCL checks skipped: libnccl.so could not be loaded");
        }
        return;
    }
    let devices = p.device_count.unwrap_or(0);
    if world.node_size() > devices {
        // NCCL needs a GPU of its own for every rank
        if world.rank() == 0 {
            println!(
                "gpu_check: NCCL checks left out: {} ranks on a node with {devices} GPU(s); NCCL needs one GPU per rank",
                world.node_size()
            );
        }
        return;
    }
    let c = Comm::world().unwrap();
    let g = parlops::gpu::get(c.node_rank(), None).map(|_| ());
    let n = match parlops::comm::nccl::Nccl::bootstrap(&c, g) {
        Ok(n) => n,
        Err(e) => {
            t.check(false, &format!("NCCL communicator: {}", e.msg));
            return;
        }
    };
    let comm = Arc::new(c.with_nccl(n));
    if world.rank() == 0 {
        println!("gpu_check: NCCL communicator: {}", comm.transport().1);
    }
    t.check(
        comm.transport().0 == parlops::comm::Transport::Nccl,
        "NCCL: the communicator moves device data by NCCL",
    );
    let before = comm.reduction_count();
    vectors::<f64>(t, &comm);
    vectors::<c64>(t, &comm);
    operators::<f64>(t, &comm);
    operators::<c32>(t, &comm);
    solvers::solvers::<f64>(t, &comm, 48, false);
    t.check(comm.reduction_count() > before, "NCCL: reductions counted");

    // the caller's NCCL communicator wrapped (parlops_comm_wrap's path): the same device, data
    // moved by it; parlops' own is used as "the caller's" here
    let raw = comm.nccl().map(|n| n.raw()).unwrap_or(std::ptr::null_mut());
    // SAFETY: `raw` is the live ncclComm_t of `comm`, which outlives the wrapping communicator.
    let wrapped = unsafe { world.dup_wrapping_nccl(raw, Ok(())) };
    match wrapped {
        Ok(w) => {
            let w = Arc::new(w);
            t.check(
                w.transport().0 == parlops::comm::Transport::Nccl,
                "NCCL wrapped: the communicator moves device data by the caller's NCCL",
            );
            vectors::<f64>(t, &w);
            operators::<f64>(t, &w);
        }
        Err(e) => t.check(false, &format!("NCCL wrapped: {}", e.msg)),
    }
    // a NULL communicator on the last rank only: every rank fails alike
    let mine = if world.rank() == world.size() - 1 {
        std::ptr::null_mut()
    } else {
        raw
    };
    // SAFETY: `mine` is the live ncclComm_t of `comm` or null.
    let e = unsafe { world.dup_wrapping_nccl(mine, Ok(())) }.err();
    t.check(
        e.as_ref()
            .is_some_and(|e| e.kind == parlops::ErrorKind::NullArgument),
        &format!("NCCL wrapped: NULL on the last rank fails on every rank ({e:?})"),
    );
}
