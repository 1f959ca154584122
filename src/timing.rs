//! Where a solve's time goes (PETSc's -log_view): while a solve records (on its calling thread),
//! each operator and preconditioner application, reduction, halo exchange, vector pass (every
//! executor step, `exec::on!`), device copy and set-up adds its count, time and bytes to one
//! thread-local record. Events nest (a halo exchange inside an operator application, a vector pass
//! inside a preconditioner): each event's own totals include what runs inside it, and the time of
//! events that run inside no other event is kept apart (`top`), so that the phases of a solve add up
//! to its wall time. The cost: one thread-local read per event when no solve records, two clock
//! reads and two thread-local updates when one does.

use std::cell::RefCell;
use std::sync::Mutex;
use std::time::Instant;

/// A phase of a solve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Preconditioner set-ups (a refresh, Jacobi's D^-1).
    Setup = 0,
    /// Applications of the operator A.
    Operator = 1,
    /// Applications of the preconditioner M.
    Preconditioner = 2,
    /// Reductions over the ranks (MPI or NCCL collectives; the time waiting in them included).
    Reduction = 3,
    /// Halo exchanges of sparse products (bytes sent and received).
    Halo = 4,
    /// Vector passes: every executor step (vector kernels, the local parts of dot products, the
    /// solvers' fused passes, device products).
    Vector = 5,
    /// Copies between host and device memory (bytes).
    Copy = 6,
}

/// The number of phases.
pub const PHASES: usize = 7;

impl Phase {
    pub const ALL: [Phase; PHASES] = [
        Phase::Setup,
        Phase::Operator,
        Phase::Preconditioner,
        Phase::Reduction,
        Phase::Halo,
        Phase::Vector,
        Phase::Copy,
    ];
    /// The phase of a code (`parlops_log_phase`).
    pub fn from_code(c: i32) -> Option<Phase> {
        Phase::ALL.get(usize::try_from(c).ok()?).copied()
    }
    pub fn name(self) -> &'static str {
        match self {
            Phase::Setup => "preconditioner set-up",
            Phase::Operator => "operator applications",
            Phase::Preconditioner => "preconditioner applications",
            Phase::Reduction => "reductions",
            Phase::Halo => "halo exchanges",
            Phase::Vector => "vector passes",
            Phase::Copy => "device copies",
        }
    }
}

/// What one solve recorded on one rank.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Totals {
    /// Events of each phase.
    pub count: [u64; PHASES],
    /// Seconds in each phase, what ran inside it included.
    pub secs: [f64; PHASES],
    /// Seconds in each phase outside every other event (these add up with the rest of the solve).
    pub top: [f64; PHASES],
    /// Bytes moved (halo exchanges, device copies, reductions).
    pub bytes: [u64; PHASES],
    /// The solve's wall time.
    pub wall: f64,
}

impl Totals {
    /// The seconds of the solve outside every event (the method's own scalar work and calls).
    pub fn rest(&self) -> f64 {
        (self.wall - self.top.iter().sum::<f64>()).max(0.0)
    }
}

struct Rec {
    t: Totals,
    depth: u32,
}

thread_local! {
    static REC: RefCell<Option<Rec>> = const { RefCell::new(None) };
}

/// Start recording on this thread; false (and nothing changes) when a recording is under way (a
/// solve inside a preconditioner: its events belong to the outer solve's).
pub fn start() -> bool {
    REC.with(|r| {
        let mut r = r.borrow_mut();
        if r.is_some() {
            return false;
        }
        *r = Some(Rec {
            t: Totals::default(),
            depth: 0,
        });
        true
    })
}

/// Stop recording on this thread and take what was recorded.
pub fn stop() -> Totals {
    REC.with(|r| r.borrow_mut().take().map(|r| r.t).unwrap_or_default())
}

/// Run `f` as one event of `phase` moving `bytes`.
#[inline]
pub fn timed<R>(phase: Phase, bytes: u64, f: impl FnOnce() -> R) -> R {
    timed_n(phase, 1, bytes, f)
}

/// Run `f` as a part of an event of `phase` (`count` 0: the event was counted by another part, as
/// a halo exchange's wait is by its start).
#[inline]
pub fn timed_n<R>(phase: Phase, count: u64, bytes: u64, f: impl FnOnce() -> R) -> R {
    let Some(top) = REC.with(|r| {
        r.borrow_mut().as_mut().map(|rec| {
            rec.depth += 1;
            rec.depth == 1
        })
    }) else {
        return f();
    };
    let t0 = Instant::now();
    let out = f();
    let dt = t0.elapsed().as_secs_f64();
    REC.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            rec.depth = rec.depth.saturating_sub(1);
            let p = phase as usize;
            rec.t.count[p] += count;
            rec.t.secs[p] += dt;
            rec.t.bytes[p] += bytes;
            if top {
                rec.t.top[p] += dt;
            }
        }
    });
    out
}

/// Count `count` events of `phase` whose time another event holds (set-ups run inside the set-up
/// phase's one timing).
pub fn note(phase: Phase, count: u64) {
    REC.with(|r| {
        if let Some(rec) = r.borrow_mut().as_mut() {
            rec.t.count[phase as usize] += count;
        }
    });
}

/// Is this thread recording?
pub fn recording() -> bool {
    REC.with(|r| r.borrow().is_some())
}

/// Every recorded solve of this process added up (the table PARLOPS_LOG=finalize prints at
/// parlops_finalize): the number of solves and their totals.
static RUN: Mutex<(u64, Option<Totals>)> = Mutex::new((0, None));

/// Add one solve's record to the process's totals.
pub fn accumulate(t: &Totals) {
    let mut run = RUN.lock().unwrap_or_else(|e| e.into_inner());
    run.0 += 1;
    let acc = run.1.get_or_insert_with(Totals::default);
    for i in 0..PHASES {
        acc.count[i] += t.count[i];
        acc.secs[i] += t.secs[i];
        acc.top[i] += t.top[i];
        acc.bytes[i] += t.bytes[i];
    }
    acc.wall += t.wall;
}

/// The number of solves recorded in this process and their totals (None before the first).
pub fn run_totals() -> (u64, Option<Totals>) {
    RUN.lock().unwrap_or_else(|e| e.into_inner()).clone()
}
