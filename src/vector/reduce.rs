//! Reductions over distributed vectors: dot products (several pairs in one reduction, blocking or
//! started and finished later) and norms, combined according to each layout's replication.

use super::{DistVector, Layout, NormKind, Partition, ops};
use crate::comm::{Comm, ReduceOp};
use crate::error::Result;
use crate::exec;
use crate::scalar::Scalar;

/// Reduce per-rank partial values according to the layout's replication: summed (or maxed) over
/// ranks for split vectors; rank 0's value for broadcast vectors (so replicated entries are not
/// counted P times); this rank's own value for unsafe-broadcast vectors (no communication). [collective]
pub fn reduce_partials(
    layout: &Layout,
    local: Result<Vec<f64>>,
    n: usize,
    op: ReduceOp,
) -> Result<Vec<f64>> {
    let comm = layout.comm();
    match layout.partition() {
        Partition::Scatter => comm.allreduce_checked(local, n, op),
        Partition::UnsafeBroadcast => local,
        Partition::Broadcast => {
            let local = if comm.rank() == 0 {
                local
            } else {
                let id = match op {
                    ReduceOp::Sum => 0.0,
                    ReduceOp::Max => f64::NEG_INFINITY,
                };
                local.map(|v| vec![id; v.len()])
            };
            comm.allreduce_checked(local, n, op)
        }
    }
}

/// This rank's share of a global sum over a vector of `layout`: split vectors contribute their
/// partial, broadcast vectors rank 0's value (others 0), unsafe-broadcast vectors 1/P of their own,
/// so that partials of vectors of different layouts can share one reduction.
pub fn share(layout: &Layout, v: f64) -> f64 {
    let comm = layout.comm();
    match layout.partition() {
        Partition::Scatter => v,
        Partition::Broadcast => {
            if comm.rank() == 0 {
                v
            } else {
                0.0
            }
        }
        Partition::UnsafeBroadcast => v / comm.size() as f64,
    }
}

/// Sum per-rank (re, im) partials over the communicator, into scalars: the reduction of [`dots`] for
/// partials formed by fused passes, with the transport that suits `like`'s memory (NCCL where one
/// is attached to device vectors). `local` may carry this rank's failure, which every rank then
/// gets. [collective]
pub fn sum_partials<T: Scalar>(
    comm: &crate::comm::Comm,
    local: Result<Vec<f64>>,
    n: usize,
    like: &DistVector<T>,
) -> Result<Vec<T>> {
    let r = exec::allreduce_sum(comm, local, 2 * n, &like.part)?;
    Ok(r.chunks(2)
        .map(|c| T::from_parts_lossy(c[0], c[1]))
        .collect())
}

/// The vectors of `pairs` all live in one memory space.
fn same_memory<T: Scalar>(pairs: &[(&DistVector<T>, &DistVector<T>)]) -> Result<()> {
    if pairs.iter().any(|(x, y)| x.location() != y.location())
        || pairs
            .iter()
            .any(|(x, _)| x.location() != pairs[0].0.location())
    {
        crate::bail!(
            MemoryLocation,
            "a reduction mixes host and device vectors; copy them to one memory space first"
        );
    }
    Ok(())
}

/// This rank's shares of the dots of `pairs` (re, im each), or the first failure. [local]
pub(crate) fn dot_partials<T: Scalar>(
    pairs: &[(&DistVector<T>, &DistVector<T>)],
    pending: Result<()>,
) -> Result<Vec<f64>> {
    pending.and_then(|_| {
        same_memory(pairs)?;
        let parts: Vec<_> = pairs.iter().map(|(x, y)| (&x.part, &y.part)).collect();
        let mut v = exec::dots(&parts)?;
        for (j, s) in v.iter_mut().enumerate() {
            *s = share(pairs[j / 2].0.layout(), *s);
        }
        Ok(v)
    })
}

/// conj(x).y for several pairs with ONE reduction (each pair's two vectors share a layout; pairs may
/// differ, on one communicator). `pending` carries an earlier local failure (an operator that failed
/// on this rank) into the same reduction, so every rank learns of it. [collective]
pub fn dots<T: Scalar>(
    comm: &crate::comm::Comm,
    pairs: &[(&DistVector<T>, &DistVector<T>)],
    pending: Result<()>,
) -> Result<Vec<T>> {
    if ops::reproducible_sums() {
        return dots_binned(comm, pairs, pending);
    }
    let local = dot_partials(pairs, pending);
    let n = 2 * pairs.len();
    let r = match pairs.first() {
        Some((x, _)) => exec::allreduce_sum(comm, local, n, &x.part)?,
        None => comm.allreduce_checked(local, n, ReduceOp::Sum)?,
    };
    Ok(r.chunks(2)
        .map(|c| T::from_parts_lossy(c[0], c[1]))
        .collect())
}

/// [`dots`] in the reproducible mode: binned sums ([`crate::binned`]), each rank's merged by one
/// reduction into the same state whatever the ranks, partition or reduction tree; replicated
/// vectors count rank 0's entries. [collective]
fn dots_binned<T: Scalar>(
    comm: &crate::comm::Comm,
    pairs: &[(&DistVector<T>, &DistVector<T>)],
    pending: Result<()>,
) -> Result<Vec<T>> {
    let local = pending.and_then(|_| {
        same_memory(pairs)?;
        let parts: Vec<_> = pairs.iter().map(|(x, y)| (&x.part, &y.part)).collect();
        let mut v = exec::multi::dots_binned(&parts)?;
        for (j, s) in v.iter_mut().enumerate() {
            let l = pairs[j / 2].0.layout();
            if l.partition() != Partition::Scatter && l.comm().rank() != 0 {
                *s = crate::binned::Binned::new();
            }
        }
        Ok(v)
    });
    let r = comm.allreduce_binned_checked(local, 2 * pairs.len())?;
    Ok(r.chunks(2)
        .map(|c| T::from_parts_lossy(c[0].value(), c[1].value()))
        .collect())
}

/// Start [`dots`] without waiting (MPI_Iallreduce); in the reproducible mode the binned sums are
/// merged at once and the sum returned is complete. [collective]
pub fn dots_start<T: Scalar>(
    comm: &crate::comm::Comm,
    pairs: &[(&DistVector<T>, &DistVector<T>)],
    pending: Result<()>,
) -> Result<crate::comm::PendingSum> {
    if ops::reproducible_sums() {
        let v = dots_binned(comm, pairs, pending)?;
        return Ok(crate::comm::PendingSum::ready(
            v.iter()
                .flat_map(|t| {
                    let (re, im) = t.to_parts();
                    [re, im]
                })
                .collect(),
        ));
    }
    let local = dot_partials(pairs, pending);
    comm.iallreduce_checked(local, 2 * pairs.len())
}

/// Complete [`dots_start`].
pub fn dots_finish<T: Scalar>(
    comm: &crate::comm::Comm,
    p: crate::comm::PendingSum,
) -> Result<Vec<T>> {
    let r = p.finish(comm)?;
    Ok(r.chunks(2)
        .map(|c| T::from_parts_lossy(c[0], c[1]))
        .collect())
}

impl<T: Scalar> DistVector<T> {
    /// This rank's partial of conj(self) . y, or why it cannot be computed.
    pub fn dot_partial(&self, y: &Self) -> Result<Vec<f64>> {
        self.layout.check_compatible(&y.layout, "x", "y")?;
        self.check_location(y, "y", "x")?;
        exec::dots(&[(&self.part, &y.part)])
    }

    /// conj(self) . y over all ranks. [collective]
    pub fn dot(&self, y: &Self) -> Result<T> {
        let r = reduce_partials(&self.layout, self.dot_partial(y), 2, ReduceOp::Sum)?;
        Ok(T::from_parts_lossy(r[0], r[1]))
    }

    /// The norm of the whole vector; `kind` may carry a local argument error that every rank must
    /// learn about. Partials are allgathered and combined in rank order, so every rank gets the same
    /// bits, and a rank with a bad `kind` joins the very same collective as the others. The 2-norm
    /// is scaled as BLAS nrm2 does: each rank sends (its largest |entry|, its sum of squares relative
    /// to it) in the same single allgather, so entries of 1e200 or 1e-200 give the right norm. [collective]
    pub fn norm_checked(&self, kind: Result<NormKind>) -> Result<f64> {
        self.norm_over(self.layout.comm(), kind)
    }

    /// conj(self) . y summed over `parent`, whose rank groups (PyLops-MPI's mask) each hold a
    /// vector: the dot product of all the groups' vectors stacked. [collective over `parent`]
    pub fn dot_across(&self, parent: &Comm, y: &Self) -> Result<T> {
        let local = self.dot_partial(y).and_then(|v| {
            if self.layout.partition().is_replicated() {
                crate::bail!(
                    NotSupported,
                    "a dot product across rank groups needs split (scatter) vectors"
                );
            }
            Ok(v)
        });
        let r = parent.allreduce_checked(local, 2, ReduceOp::Sum)?;
        Ok(T::from_parts_lossy(r[0], r[1]))
    }

    /// The norm over `parent` of the vectors of its rank groups (PyLops-MPI's mask: `parent` split
    /// into groups, each holding a vector): the norm of all the groups' vectors stacked. [collective over `parent`]
    pub fn norm_across(&self, parent: &Comm, kind: Result<NormKind>) -> Result<f64> {
        let kind = kind.and_then(|k| {
            if self.layout.partition().is_replicated() {
                crate::bail!(
                    NotSupported,
                    "a norm across rank groups needs split (scatter) vectors"
                );
            }
            Ok(k)
        });
        if self.layout.partition().is_replicated() {
            // norm_over would answer a replicated vector without communicating: join the
            // collective the other ranks of `parent` make, with the error
            parent.allgather_checked(kind.map(|_| vec![0.0; 3]), 3)?;
            crate::bail!(Internal, "a failed gather returned");
        }
        self.norm_over(parent, kind)
    }

    /// [`DistVector::norm_checked`] with the partials gathered over `comm` (the vector's, or a
    /// parent of it). [collective over `comm`]
    fn norm_over(&self, comm: &Comm, kind: Result<NormKind>) -> Result<f64> {
        // (value, ssq relative to value for the 2-norm, reduction)
        let partial = kind.clone().and_then(|k| match k {
            NormKind::Two => exec::two_partial(&self.part).map(|(s, q)| (s, q, ReduceOp::Sum)),
            _ => exec::norm_partial(&self.part, k).map(|(v, op)| (v, 0.0, op)),
        });
        let partition = self.layout.partition();
        if partition == Partition::UnsafeBroadcast {
            let (v, q, _) = partial?;
            return Ok(match kind? {
                NormKind::Two => ops::two_combine(&[(v, q)]),
                k => k.finish(v),
            });
        }
        // the kind travels with the partial, so ranks asking for different norms all learn it
        let code = |k: &NormKind| match k {
            NormKind::Zero => 0.0,
            NormKind::One => 1.0,
            NormKind::Two => 2.0,
            NormKind::Inf => f64::INFINITY,
            NormKind::NegInf => f64::NEG_INFINITY,
            NormKind::P(p) => *p,
        };
        let rows = comm.allgather_checked(
            partial
                .as_ref()
                .map(|p| vec![p.0, p.1, code(kind.as_ref().unwrap_or(&NormKind::Two))])
                .map_err(|e| e.clone()),
            3,
        )?;
        let (_, _, op) = partial?;
        let kind = kind?;
        if rows.iter().any(|r| r[2] != rows[0][2]) {
            crate::bail!(
                InconsistentAcrossRanks,
                "ranks asked for different norms (p by rank: {:?})",
                rows.iter().map(|r| r[2]).collect::<Vec<_>>()
            );
        }
        let rows = if partition == Partition::Broadcast {
            &rows[..1]
        } else {
            &rows[..]
        };
        if kind == NormKind::Two {
            let parts: Vec<(f64, f64)> = rows.iter().map(|r| (r[0], r[1])).collect();
            return Ok(ops::two_combine(&parts));
        }
        let r = match op {
            ReduceOp::Sum => rows.iter().map(|r| r[0]).sum(),
            ReduceOp::Max => rows.iter().map(|r| r[0]).fold(f64::NEG_INFINITY, |a, b| {
                if a.is_nan() || b.is_nan() {
                    f64::NAN
                } else {
                    a.max(b)
                }
            }),
        };
        Ok(kind.finish(r))
    }

    /// [`DistVector::norm_checked`] with a known-valid kind. [collective]
    pub fn norm(&self, kind: NormKind) -> Result<f64> {
        self.norm_checked(Ok(kind))
    }
}
