//! Fredholm integral of the first kind (PyLops-MPI's MPIFredholm1): y[s] = G[s] x[s] for every slice
//! s, with G[s] of size nx x ny and x[s] of size ny x nz. The slices of G are split over the ranks;
//! x and y are replicated (broadcast layouts): each rank computes its slices and the results are
//! allgathered, in both directions.

use std::sync::{Arc, Mutex};

use super::LinearOperator;
use crate::comm::Comm;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{DistVector, Layout, Partition};

pub struct Fredholm1<T: Scalar> {
    rows: Arc<Layout>,
    cols: Arc<Layout>,
    g: Vec<T>,
    /// slices per rank, and this rank's first slice
    nsl: Vec<i64>,
    first: usize,
    nx: usize,
    ny: usize,
    nz: usize,
    work: Mutex<Vec<T>>,
}

/// Entries of this rank's slices of G (`nsl_local * nx * ny`; negative sizes count as 0 here and
/// are reported by the constructor), checked for overflow.
pub fn g_local_len(nsl_local: i64, nx: i64, ny: i64) -> Result<usize> {
    crate::error::checked_product(
        "argument 'g_local'",
        &[
            ("nsl_local", nsl_local.max(0)),
            ("nx", nx.max(0)),
            ("ny", ny.max(0)),
        ],
    )
    .map(|n| n as usize)
}

impl<T: Scalar> Fredholm1<T> {
    /// `g_local`: this rank's `nsl_local` slices of G, each nx x ny row-major. [collective]
    pub fn new(
        comm: &Arc<Comm>,
        nsl_local: i64,
        nx: i64,
        ny: i64,
        nz: i64,
        g_local: Vec<T>,
    ) -> Result<Fredholm1<T>> {
        Self::new_checked(comm, nsl_local, nx, ny, nz, g_local, Ok(()))
    }

    /// [`Fredholm1::new`] with this rank's earlier failure `pre` (reading the caller's arrays), agreed
    /// with the argument checks. [collective]
    pub fn new_checked(
        comm: &Arc<Comm>,
        nsl_local: i64,
        nx: i64,
        ny: i64,
        nz: i64,
        g_local: Vec<T>,
        pre: Result<()>,
    ) -> Result<Fredholm1<T>> {
        let local = pre.and_then(|_| {
            if nsl_local < 0 || nx < 0 || ny < 0 || nz < 1 {
                crate::bail!(
                    InvalidArgument,
                    "fredholm1: sizes must be nsl_local >= 0, nx >= 0, ny >= 0, nz >= 1; got {nsl_local}, {nx}, {ny}, {nz}"
                );
            }
            let want = crate::error::checked_product(
                "fredholm1: G",
                &[("nsl_local", nsl_local), ("nx", nx), ("ny", ny)],
            )? as usize;
            crate::error::checked_product(
                "fredholm1: the work array",
                &[("nsl_local", nsl_local), ("max(nx, ny)", nx.max(ny)), ("nz", nz)],
            )?;
            // one slice's sizes on their own (a zero nsl_local hides them in the products above)
            for (what, a, b) in [
                ("fredholm1: a slice of G", ("nx", nx), ("ny", ny)),
                ("fredholm1: a slice of y", ("nx", nx), ("nz", nz)),
                ("fredholm1: a slice of x", ("ny", ny), ("nz", nz)),
            ] {
                crate::error::checked_product(what, &[a, b])?;
            }
            if g_local.len() != want {
                crate::bail!(
                    SizeMismatch,
                    "fredholm1: G holds {} entries, {nsl_local} slices of {nx} x {ny} need {want}",
                    g_local.len()
                );
            }
            Ok(())
        });
        comm.agree_same(local, "(nx, ny, nz) (fredholm1)", &[nx, ny, nz])?;
        let nsl = comm.allgather_i64(&[nsl_local])?;
        let first = nsl[..comm.rank() as usize].iter().sum::<i64>() as usize;
        // the same values on every rank: the same outcome everywhere
        let total = nsl
            .iter()
            .try_fold(0i64, |a, &b| a.checked_add(b))
            .ok_or_else(|| {
                crate::err!(
                    InvalidArgument,
                    "fredholm1: the ranks' nsl_local {nsl:?} add up to more than 2^63 - 1"
                )
            })?;
        let nrows = crate::error::checked_product(
            "fredholm1: y",
            &[("nsl", total), ("nx", nx), ("nz", nz)],
        )?;
        let ncols = crate::error::checked_product(
            "fredholm1: x",
            &[("nsl", total), ("ny", ny), ("nz", nz)],
        )?;
        let rows = Layout::new(comm.clone(), Partition::Broadcast, nrows, -1)?;
        let cols = Layout::new(comm.clone(), Partition::Broadcast, ncols, -1)?;
        let w = (nsl_local * nx.max(ny) * nz) as usize;
        // the last collective is behind: a local failure is agreed by the caller (create_agreed)
        let work = crate::error::try_vec(
            w,
            T::zero(),
            "the Fredholm1 work array (nsl_local * max(nx, ny) * nz entries)",
        )?;
        Ok(Fredholm1 {
            rows,
            cols,
            g: g_local,
            nsl,
            first,
            nx: nx as usize,
            ny: ny as usize,
            nz: nz as usize,
            work: Mutex::new(work),
        })
    }
}

impl<T: Scalar> LinearOperator<T> for Fredholm1<T> {
    fn rows(&self) -> &Arc<Layout> {
        &self.rows
    }
    fn cols(&self) -> &Arc<Layout> {
        &self.cols
    }
    fn forward(&self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        let (nx, ny, nz) = (self.nx, self.ny, self.nz);
        let mut w = self.work.lock().unwrap_or_else(|p| p.into_inner());
        let me = self.nsl[self.rows.comm().rank() as usize] as usize;
        let xs = x.local();
        // an empty output block means nothing to compute (and nsl or nx may then be huge)
        for s in (0..me).take_while(|_| nx * nz > 0) {
            let g = &self.g[s * nx * ny..(s + 1) * nx * ny];
            let xin = &xs[(self.first + s) * ny * nz..(self.first + s + 1) * ny * nz];
            let out = &mut w[s * nx * nz..(s + 1) * nx * nz];
            for i in 0..nx {
                for k in 0..nz {
                    let mut acc = T::zero();
                    for j in 0..ny {
                        acc += g[i * ny + j] * xin[j * nz + k];
                    }
                    out[i * nz + k] = acc;
                }
            }
        }
        let counts: Vec<i64> = self.nsl.iter().map(|n| n * (nx * nz) as i64).collect();
        let send = &w[..me * nx * nz];
        self.rows.comm().allgatherv(send, y.local_mut(), &counts)
    }
    fn backward(&self, y: &DistVector<T>, x: &mut DistVector<T>) -> Result<()> {
        let (nx, ny, nz) = (self.nx, self.ny, self.nz);
        let mut w = self.work.lock().unwrap_or_else(|p| p.into_inner());
        let me = self.nsl[self.rows.comm().rank() as usize] as usize;
        let ys = y.local();
        for s in (0..me).take_while(|_| ny * nz > 0) {
            let g = &self.g[s * nx * ny..(s + 1) * nx * ny];
            let yin = &ys[(self.first + s) * nx * nz..(self.first + s + 1) * nx * nz];
            let out = &mut w[s * ny * nz..(s + 1) * ny * nz];
            for j in 0..ny {
                for k in 0..nz {
                    let mut acc = T::zero();
                    for i in 0..nx {
                        acc += g[i * ny + j].conj() * yin[i * nz + k];
                    }
                    out[j * nz + k] = acc;
                }
            }
        }
        let counts: Vec<i64> = self.nsl.iter().map(|n| n * (ny * nz) as i64).collect();
        let send = &w[..me * ny * nz];
        self.cols.comm().allgatherv(send, x.local_mut(), &counts)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn describe(&self) -> String {
        format!(
            "Fredholm1 {}x{}",
            self.rows.global_len(),
            self.cols.global_len()
        )
    }
}
