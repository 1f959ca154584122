//! Walks over an operator and the operators it is made of ([`LinearOperator::parts`]), each visited
//! once however often it appears: the values version of a tree, the refresh of the preconditioners
//! in it, the set-ups they ran, and the pins a running solve puts on the matrices in it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{LinearOperator, Op};
use crate::error::Result;
use crate::scalar::Scalar;

/// The address that identifies an operator in a walk.
fn key<T: Scalar>(op: &dyn LinearOperator<T>) -> usize {
    op as *const dyn LinearOperator<T> as *const u8 as usize
}

/// A preconditioner's set-up record: the values version of its sources at its last set-up, and how
/// many set-ups it has run (the one at creation included). Every preconditioner that can be
/// refreshed keeps one; [`SetupLog::refresh`] is its refresh rule.
pub struct SetupLog {
    built: AtomicU64,
    count: AtomicU64,
}

impl SetupLog {
    /// The record of the set-up made at creation, from sources at values version `version`.
    pub fn new(version: u64) -> SetupLog {
        SetupLog {
            built: AtomicU64::new(version),
            count: AtomicU64::new(1),
        }
    }
    /// Record that the current set-up was made from sources at `version` (sources attached after
    /// creation), without counting a set-up.
    pub fn built_from(&self, version: u64) {
        self.built.store(version, Ordering::Release);
    }
    /// Whether sources now at `version` have values the set-up has not seen.
    pub fn stale(&self, version: u64) -> bool {
        self.built.load(Ordering::Acquire) != version
    }
    /// Set up again when `force`, or when stale at `version` (the sources' version read before
    /// the set-up): runs `setup`, and only once it succeeded records `version` and one set-up more.
    /// Ok(false) when nothing ran.
    pub fn refresh(
        &self,
        force: bool,
        version: u64,
        setup: impl FnOnce() -> Result<()>,
    ) -> Result<bool> {
        if !force && !self.stale(version) {
            return Ok(false);
        }
        setup()?;
        self.built.store(version, Ordering::Release);
        self.count.fetch_add(1, Ordering::AcqRel);
        Ok(true)
    }
    /// The set-ups run so far.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Acquire)
    }
}

/// Visit `op` and every operator below it once, parts before the operator that holds them.
fn walk<'a, T: Scalar>(
    op: &'a dyn LinearOperator<T>,
    seen: &mut HashSet<usize>,
    f: &mut dyn FnMut(&'a dyn LinearOperator<T>) -> Result<()>,
) -> Result<()> {
    if !seen.insert(key(op)) {
        return Ok(());
    }
    // every part is visited even after a failure (refreshes are collective: every rank runs each)
    let mut r = Ok(());
    for p in op.parts() {
        r = r.and(walk(p.as_ref(), seen, f));
    }
    r.and(f(op))
}

/// The sum of the values versions in `op`'s tree: it changes whenever values in it change.
pub fn version<T: Scalar>(op: &dyn LinearOperator<T>) -> u64 {
    let mut v = 0u64;
    let _ = walk(op, &mut HashSet::new(), &mut |o| {
        v = v.wrapping_add(o.values_version());
        Ok(())
    });
    v
}

/// The sum of the trees' versions of several operators.
pub fn versions<T: Scalar>(ops: &[Op<T>]) -> u64 {
    ops.iter()
        .fold(0u64, |v, o| v.wrapping_add(version(o.as_ref())))
}

/// Is any operator in `op`'s tree out of date ([`LinearOperator::stale`])?
pub fn stale<T: Scalar>(op: &dyn LinearOperator<T>) -> bool {
    let mut any = false;
    let _ = walk(op, &mut HashSet::new(), &mut |o| {
        any |= o.stale();
        Ok(())
    });
    any
}

/// Refresh every operator in `op`'s tree that is out of date (every one with a set-up, with
/// `force`), sources before what was computed from them; the number of set-ups run. Every rank
/// walks the same tree (operators are agreed), so every rank runs the same set-ups. [collective]
pub fn refresh<T: Scalar>(op: &dyn LinearOperator<T>, force: bool) -> Result<u64> {
    // the wrapped matrices in the tree still have their pattern (agreed: a set-up must not read a
    // pattern that changed under it)
    let mut check = Ok(());
    let _ = walk(op, &mut HashSet::new(), &mut |o| {
        if let Some(c) = o.as_any().downcast_ref::<super::csr::CsrOp<T>>() {
            check = std::mem::replace(&mut check, Ok(())).and(c.check_pattern());
        }
        Ok(())
    });
    op.rows().comm().agree(check)?;
    let mut n = 0;
    walk(op, &mut HashSet::new(), &mut |o| {
        if o.refresh(force)? {
            n += 1;
        }
        Ok(())
    })?;
    Ok(n)
}

/// The set-ups run by the operators in `op`'s tree.
pub fn setups<T: Scalar>(op: &dyn LinearOperator<T>) -> u64 {
    let mut n = 0;
    let _ = walk(op, &mut HashSet::new(), &mut |o| {
        n += o.setups();
        Ok(())
    });
    n
}

/// The operators held by running solves (by address: each is kept alive by its [`Pins`]), with
/// how many solves hold each.
static PINNED: std::sync::Mutex<Option<HashMap<usize, usize>>> = std::sync::Mutex::new(None);

fn with_pinned<R>(f: impl FnOnce(&mut HashMap<usize, usize>) -> R) -> R {
    let mut g = PINNED.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(HashMap::new))
}

/// How many running solves hold `op` (as their operator, their preconditioner, or a part of
/// either).
pub fn pinned<T: Scalar>(op: &dyn LinearOperator<T>) -> usize {
    let k = key(op);
    with_pinned(|m| m.get(&k).copied().unwrap_or(0))
}

/// Does a running solve hold an operator of `op`'s tree that has a set-up (one a refresh would
/// change)? Matrices a solve holds are not changed by a refresh.
pub fn setup_pinned<T: Scalar>(op: &dyn LinearOperator<T>) -> bool {
    let mut any = false;
    let _ = walk(op, &mut HashSet::new(), &mut |o| {
        any |= o.setups() > 0 && pinned(o) > 0;
        Ok(())
    });
    any
}

/// The operators of a running solve's trees (its operator and preconditioner), held until this is
/// dropped: their values cannot change under the solve ([`super::csr::CsrOp::prepare_values`]
/// refuses) and they cannot be refreshed by a caller (`parlops_op_refresh` refuses).
pub struct Pins<T: Scalar> {
    held: Vec<Op<T>>,
}

impl<T: Scalar> Pins<T> {
    pub fn new(ops: &[Option<&Op<T>>]) -> Pins<T> {
        let mut held = Vec::new();
        let mut seen = HashSet::new();
        fn go<T: Scalar>(o: &Op<T>, seen: &mut HashSet<usize>, held: &mut Vec<Op<T>>) {
            if !seen.insert(key(o.as_ref())) {
                return;
            }
            for p in o.parts() {
                go(p, seen, held);
            }
            held.push(Arc::clone(o));
        }
        for o in ops.iter().flatten() {
            go(o, &mut seen, &mut held);
        }
        with_pinned(|m| {
            for o in &held {
                *m.entry(key(o.as_ref())).or_insert(0) += 1;
            }
        });
        Pins { held }
    }
}

impl<T: Scalar> Drop for Pins<T> {
    fn drop(&mut self) {
        with_pinned(|m| {
            for o in &self.held {
                let k = key(o.as_ref());
                if let Some(c) = m.get_mut(&k) {
                    *c -= 1;
                    if *c == 0 {
                        m.remove(&k);
                    }
                }
            }
        });
    }
}

/// How a layout is split over the ranks, in words.
fn split(l: &crate::vector::Layout) -> String {
    let lens = l.local_lens();
    if l.partition().is_replicated() {
        return format!("replicated on {} rank(s)", lens.len());
    }
    if lens.len() <= 8 {
        let parts: Vec<String> = lens.iter().map(|n| n.to_string()).collect();
        return format!("split {}", parts.join(" + "));
    }
    let (lo, hi) = (lens.iter().min(), lens.iter().max());
    format!(
        "split over {} ranks, {}..{} each",
        lens.len(),
        lo.copied().unwrap_or(0),
        hi.copied().unwrap_or(0)
    )
}

/// `op`'s tree as text: one line per operator (its description, element type, rows and columns and
/// how they are split, the set-ups it ran), its details below it, its parts indented under it;
/// an operator met again is named, not shown again. Local.
pub fn view<T: Scalar>(op: &dyn LinearOperator<T>, indent: usize, out: &mut String) {
    fn go<T: Scalar>(
        op: &dyn LinearOperator<T>,
        indent: usize,
        seen: &mut HashSet<usize>,
        out: &mut String,
    ) {
        let pad = " ".repeat(indent);
        let (r, c) = (op.rows(), op.cols());
        let again = !seen.insert(key(op));
        out.push_str(&format!(
            "{pad}{} [{}; {} x {}; rows {}",
            op.describe(),
            T::DTYPE.name(),
            r.global_len(),
            c.global_len(),
            split(r)
        ));
        if !r.compatible(c) {
            out.push_str(&format!(", columns {}", split(c)));
        }
        if op.setups() > 0 {
            out.push_str(&format!("; set-ups run {}", op.setups()));
        }
        if again {
            out.push_str("] (shown above)\n");
            return;
        }
        out.push_str("]\n");
        for d in op.view_details() {
            out.push_str(&format!("{pad}    {d}\n"));
        }
        for p in op.parts() {
            go(p.as_ref(), indent + 2, seen, out);
        }
    }
    go(op, indent, &mut HashSet::new(), out);
}
