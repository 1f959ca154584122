//! How a global index range splits over the ranks of a communicator. Created collectively once; every
//! rank knows every rank's part, so compatibility checks are local and agree on every rank.

use std::sync::Arc;

use crate::comm::Comm;
use crate::error::{ErrorKind, Result};

crate::codes::code_table! {
    /// How a vector's entries are placed on ranks (PyLops-MPI's `Partition`).
    pub enum Partition {
        /// Split: each rank owns a contiguous part; by default the first `n % P` ranks get one more.
        Scatter = 0, PARLOPS_PARTITION_SCATTER;
        /// Replicated on every rank; rank 0's values win when ranks are synchronised.
        Broadcast = 1, PARLOPS_PARTITION_BROADCAST;
        /// Replicated on every rank, never synchronised (each rank computes with its own copy).
        UnsafeBroadcast = 2, PARLOPS_PARTITION_UNSAFE_BROADCAST;
    }
}

impl Partition {
    /// Every rank holds the whole vector.
    pub fn is_replicated(self) -> bool {
        !matches!(self, Partition::Scatter)
    }
}

/// Local lengths of the default scatter split of `n` over `p` ranks.
pub fn scatter_lens(n: i64, p: usize) -> Vec<i64> {
    let p64 = p as i64;
    (0..p64).map(|r| n / p64 + i64::from(r < n % p64)).collect()
}

/// An immutable distribution of `global_len` indices over the ranks of a communicator.
pub struct Layout {
    comm: Arc<Comm>,
    /// Global shape of an N-D layout (distributed along axis 0); `[global_len]` for 1-D.
    shape: Vec<i64>,
    partition: Partition,
    global_len: i64,
    local_lens: Vec<i64>,
    offsets: Vec<i64>,
    /// A stacked layout's parts ([`Layout::stack`]); empty otherwise.
    parts: Vec<Arc<Layout>>,
}

impl std::fmt::Debug for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Layout")
            .field("partition", &self.partition)
            .field("global_len", &self.global_len)
            .field("local_lens", &self.local_lens)
            .finish()
    }
}

impl Layout {
    /// Create a layout. [collective]
    ///
    /// `global_len = -1` means "the sum of the local lengths"; `local_len = -1` lets the partition
    /// decide. Ranks must agree on the partition and the global length; given local lengths must sum
    /// to the global length. Every rank gets the same verdict.
    pub fn new(
        comm: Arc<Comm>,
        partition: Partition,
        global_len: i64,
        local_len: i64,
    ) -> Result<Arc<Layout>> {
        Self::new_checked(comm, Ok(partition), global_len, local_len)
    }

    /// [`Layout::new`] with the partition still to be validated (an invalid enum from C on one rank
    /// must fail on every rank, not leave the others waiting).
    pub fn new_checked(
        comm: Arc<Comm>,
        partition: Result<Partition>,
        global_len: i64,
        local_len: i64,
    ) -> Result<Arc<Layout>> {
        let local = partition.as_ref().map(|_| ()).map_err(|e| e.clone()).and_then(|_| {
            if global_len < -1 {
                crate::bail!(InvalidArgument, "argument 'global_len' is {global_len}; it must be >= 0 (or -1: sum of local lengths)");
            }
            if local_len < -1 {
                crate::bail!(InvalidArgument, "argument 'local_len' is {local_len}; it must be >= 0 (or -1: let the partition decide)");
            }
            if global_len == -1 && local_len == -1 {
                crate::bail!(InvalidArgument, "arguments 'global_len' and 'local_len' are both -1; give at least one");
            }
            Ok(())
        });
        let pcode = partition.as_ref().map(|p| p.code() as i64).unwrap_or(-1);
        comm.agree_same(
            local,
            "partitions or global lengths ([partition code, global_len])",
            &[pcode, global_len],
        )?;
        let partition = partition?;
        let given = comm.allgather_i64(&[local_len])?;
        let p = given.len();
        let list = || {
            given
                .iter()
                .map(|l| l.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let n_given = given.iter().filter(|&&l| l >= 0).count();
        let local_lens = if partition.is_replicated() {
            let n = if global_len >= 0 {
                global_len
            } else {
                given[0]
            };
            if given.iter().any(|&l| l >= 0 && l != n) {
                crate::bail!(
                    SizeMismatch,
                    "{} layout of global length {n}: every rank holds all entries, but local lengths given by rank are [{}]",
                    partition.name(),
                    list()
                );
            }
            vec![n; p]
        } else if n_given == 0 {
            scatter_lens(global_len, p)
        } else if n_given == p {
            let Some(sum) = given.iter().try_fold(0i64, |a, &b| a.checked_add(b)) else {
                crate::bail!(
                    InvalidArgument,
                    "local lengths by rank [{}] add up to more than 2^63",
                    list()
                );
            };
            if global_len >= 0 && sum != global_len {
                crate::bail!(
                    SizeMismatch,
                    "local lengths by rank [{}] sum to {sum}, but 'global_len' is {global_len}",
                    list()
                );
            }
            given
        } else {
            crate::bail!(
                InvalidArgument,
                "some ranks gave a local length and others passed -1 (by rank: [{}]); give all or none",
                list()
            );
        };
        let global_len = if partition.is_replicated() {
            local_lens[0]
        } else {
            local_lens.iter().sum()
        };
        let mut offsets = Vec::with_capacity(p);
        let mut acc = 0;
        for &l in &local_lens {
            offsets.push(if partition.is_replicated() { 0 } else { acc });
            acc += l;
        }
        Ok(Arc::new(Layout {
            comm,
            shape: vec![global_len],
            partition,
            global_len,
            local_lens,
            offsets,
            parts: Vec::new(),
        }))
    }

    /// The layout of stacked vectors (PyLops-MPI's StackedDistributedArray, MFEM's BlockVector):
    /// split layouts of one communicator, each rank holding its part of the first, then of the second,
    /// ... (so the stacked global order is rank by rank). Vectors of it are ordinary vectors: every
    /// vector operation covers all parts, a dot product or norm in one reduction. [collective]
    pub fn stack(comm: &Arc<Comm>, parts: &[Arc<Layout>]) -> Result<Arc<Layout>> {
        let local = (|| {
            if parts.is_empty() {
                crate::bail!(InvalidArgument, "a stacked layout needs at least one part");
            }
            for (i, p) in parts.iter().enumerate() {
                if !Arc::ptr_eq(p.comm(), comm) {
                    crate::bail!(LayoutMismatch, "part {i} lives on another communicator");
                }
                if p.partition.is_replicated() {
                    crate::bail!(
                        NotSupported,
                        "part {i} is replicated; stacked parts must be split (scatter) layouts"
                    );
                }
            }
            parts
                .iter()
                .try_fold(0i64, |a, p| a.checked_add(p.local_len()))
                .ok_or_else(|| {
                    crate::err!(
                        InvalidArgument,
                        "this rank's parts hold {:?} entries: more than 2^63 - 1 together",
                        parts.iter().map(|p| p.local_len()).collect::<Vec<_>>()
                    )
                })
        })();
        // every rank must pass the same parts in the same order (each part compared by its global
        // length, split and shape): part i must mean the same layout everywhere
        let prints: Vec<i64> = parts.iter().map(|p| p.fingerprint()).collect();
        comm.agree_same(
            local.as_ref().map(|_| ()).map_err(|e| e.clone()),
            "parts (compared by global length, split and shape, in order)",
            &prints,
        )?;
        let len = local?;
        let base = Layout::new(comm.clone(), Partition::Scatter, -1, len)?;
        Ok(Arc::new(Layout {
            comm: base.comm.clone(),
            shape: base.shape.clone(),
            partition: base.partition,
            global_len: base.global_len,
            local_lens: base.local_lens.clone(),
            offsets: base.offsets.clone(),
            parts: parts.to_vec(),
        }))
    }

    /// A 64-bit summary of what makes two layouts interchangeable on every rank (global length,
    /// replication, every rank's local length, shape, the parts of a stacked layout): equal on every
    /// rank for the same layout, so that ranks can compare layouts by sending it.
    pub fn fingerprint(&self) -> i64 {
        let mut v = vec![
            self.global_len,
            self.partition.is_replicated() as i64,
            self.local_lens.len() as i64,
        ];
        v.extend_from_slice(&self.local_lens);
        v.push(self.shape.len() as i64);
        v.extend_from_slice(&self.shape);
        v.push(self.parts.len() as i64);
        v.extend(self.parts.iter().map(|p| p.fingerprint()));
        crate::comm::list_hash(&v, 0) as i64
    }

    /// The parts of a stacked layout (empty for any other).
    pub fn parts(&self) -> &[Arc<Layout>] {
        &self.parts
    }

    /// An N-D array distributed along `axis` (PyLops-MPI's `global_shape` and `axis`; axis 0 only,
    /// so that every rank's part is a contiguous range of the C-ordered array). `local_len_along_axis`
    /// is this rank's extent along the axis, or -1 to split it (the first `n0 % P` ranks get one
    /// more). [collective]
    pub fn new_nd(
        comm: Arc<Comm>,
        partition: Result<Partition>,
        shape: &[i64],
        axis: i32,
        local_len_along_axis: i64,
    ) -> Result<Arc<Layout>> {
        let check = partition.clone().and_then(|p| {
            if shape.is_empty() {
                crate::bail!(InvalidArgument, "argument 'ndim' is 0; an N-D layout needs at least one axis");
            }
            if let Some(d) = shape.iter().find(|&&d| d < 0) {
                crate::bail!(InvalidArgument, "argument 'global_shape' has a negative extent {d} (shape {shape:?})");
            }
            if axis != 0 {
                crate::bail!(
                    NotSupported,
                    "argument 'axis' is {axis}: N-D layouts are distributed along axis 0 (the slowest), so that each \
                     rank's part is contiguous"
                );
            }
            if shape.iter().try_fold(1i64, |a, &d| a.checked_mul(d)).is_none() {
                crate::bail!(InvalidArgument, "argument 'global_shape' {shape:?} has more than 2^63 entries");
            }
            if local_len_along_axis < -1 || (local_len_along_axis > shape[0]) {
                crate::bail!(
                    InvalidArgument,
                    "argument 'local_len_along_axis' is {local_len_along_axis}; it must be -1 or 0..{}",
                    shape[0]
                );
            }
            Ok(p)
        });
        let inner: i64 = shape
            .iter()
            .skip(1)
            .fold(1i64, |a, &d| a.saturating_mul(d.max(0)));
        let n0 = shape.first().copied().unwrap_or(0);
        let p = comm.size() as usize;
        let rows = if local_len_along_axis >= 0 {
            local_len_along_axis
        } else {
            scatter_lens(n0.max(0), p)[comm.rank() as usize]
        };
        let replicated = matches!(&check, Ok(p) if p.is_replicated());
        let (global, local) = if replicated {
            (n0.saturating_mul(inner), -1)
        } else {
            (-1, rows.saturating_mul(inner))
        };
        let l = Layout::new_checked(comm.clone(), check, global, local)?;
        // ranks must agree on the whole shape, not only on its product
        let hash = shape.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &d| {
            (h ^ d as u64).wrapping_mul(0x100_0000_01b3)
        });
        comm.agree_same(
            Ok(()),
            &format!("global shapes (this rank: {shape:?}; compared as [ndim, hash])"),
            &[shape.len() as i64, hash as i64],
        )?;
        let rows_seen = comm.allgather_i64(&[rows])?;
        // all ranks' extents along the axis must add up to the shape (compared as extents, not as
        // entry counts, which are all 0 when another axis has extent 0)
        let axis_sum = rows_seen.iter().try_fold(0i64, |a, r| a.checked_add(*r));
        if !l.partition.is_replicated()
            && (l.global_len != n0.saturating_mul(inner) || axis_sum != Some(n0))
        {
            crate::bail!(
                SizeMismatch,
                "local extents along axis 0 by rank ({:?}) sum to {}, but global_shape[0] is {n0}",
                rows_seen,
                axis_sum.map_or_else(|| "more than 2^63 - 1".to_string(), |s| s.to_string())
            );
        }
        let mut l =
            Arc::try_unwrap(l).map_err(|_| crate::err!(Internal, "layout shared too early"))?;
        l.shape = shape.to_vec();
        Ok(Arc::new(l))
    }

    pub fn comm(&self) -> &Arc<Comm> {
        &self.comm
    }
    /// Global shape (`[global_len]` for 1-D layouts).
    pub fn shape(&self) -> &[i64] {
        &self.shape
    }
    pub fn partition(&self) -> Partition {
        self.partition
    }
    pub fn global_len(&self) -> i64 {
        self.global_len
    }
    /// Local lengths of all ranks, in rank order.
    pub fn local_lens(&self) -> &[i64] {
        &self.local_lens
    }
    /// Global offset of each rank's first entry (0 everywhere for replicated layouts).
    pub fn offsets(&self) -> &[i64] {
        &self.offsets
    }
    pub fn local_len(&self) -> i64 {
        self.local_lens[self.comm.rank() as usize]
    }
    pub fn local_start(&self) -> i64 {
        self.offsets[self.comm.rank() as usize]
    }

    /// Same communicator, global length, local lengths and replication: vectors of the two layouts
    /// can be combined entry by entry. The answer is the same on every rank.
    pub fn compatible(&self, other: &Layout) -> bool {
        Arc::ptr_eq(&self.comm, &other.comm)
            && self.global_len == other.global_len
            && self.local_lens == other.local_lens
            && self.partition.is_replicated() == other.partition.is_replicated()
    }

    /// Error naming both layouts when they are not [`Layout::compatible`].
    pub fn check_compatible(&self, other: &Layout, a: &str, b: &str) -> Result<()> {
        if self.compatible(other) {
            return Ok(());
        }
        let kind = if self.global_len != other.global_len || self.local_lens != other.local_lens {
            ErrorKind::SizeMismatch
        } else {
            ErrorKind::LayoutMismatch
        };
        let why = if !Arc::ptr_eq(&self.comm, &other.comm) {
            "they live on different communicators".to_string()
        } else {
            format!(
                "'{a}' has global length {} split as {:?} ({}), '{b}' has global length {} split as {:?} ({})",
                self.global_len,
                self.local_lens,
                self.partition.name(),
                other.global_len,
                other.local_lens,
                other.partition.name()
            )
        };
        Err(crate::error::Error::new(
            kind,
            format!("arguments '{a}' and '{b}' have incompatible layouts: {why}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn scatter_split_like_pylops_mpi() {
        assert_eq!(scatter_lens(10, 3), vec![4, 3, 3]);
        assert_eq!(scatter_lens(2, 4), vec![1, 1, 0, 0]);
        assert_eq!(scatter_lens(0, 2), vec![0, 0]);
        assert_eq!(scatter_lens(12, 4), vec![3, 3, 3, 3]);
    }
}
