//! Halo (ghost cells) over a Cartesian process grid (PyLops-MPI's MPIHalo): each rank owns a block of
//! an N-D array and gets it back padded with its neighbours' values (zeros outside the global array),
//! ready for a local stencil. Unlike PyLops-MPI, whose adjoint only cuts the padding off, the adjoint
//! here is the true transpose (ghost values are added back to their owners), so the operator passes
//! the dot test and can sit inside any solver. Ranks map to grid coordinates in row-major order
//! (MPI_Cart_create without reordering); halos may be wider than a neighbour's block.
//! Built on the distributed CSR (one entry per padded cell), so the exchange is the CSR halo plan.

use std::sync::Arc;

use super::csr::CsrOp;
use crate::comm::Comm;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::vector::{Layout, Partition};

/// PyLops-MPI's block split: block = ceil(n / procs); coordinate c owns [c*block, min((c+1)*block, n)).
pub fn block_split(n: i64, procs: i64, c: i64) -> (i64, i64) {
    let b = ceil_div(n, procs);
    let s = c.saturating_mul(b).min(n);
    let e = if c == procs - 1 {
        n
    } else {
        c.saturating_add(1).saturating_mul(b).min(n)
    };
    (s, (e - s).max(0))
}

/// ceil(n / p) for n >= 0 and p >= 1 (p < 1 taken as 1), without the overflow of (n + p - 1) / p.
pub fn ceil_div(n: i64, p: i64) -> i64 {
    let p = p.max(1);
    n / p + i64::from(n % p != 0)
}

/// Grid coordinates of a rank, row-major.
pub fn coords_of(rank: i64, grid: &[i64]) -> Vec<i64> {
    let mut c = vec![0; grid.len()];
    let mut r = rank;
    for a in (0..grid.len()).rev() {
        c[a] = r % grid[a];
        r /= grid[a];
    }
    c
}

/// This rank's block: (start, shape) per axis.
pub fn local_block(dims: &[i64], grid: &[i64], rank: i64) -> (Vec<i64>, Vec<i64>) {
    let c = coords_of(rank, grid);
    dims.iter()
        .zip(grid)
        .zip(&c)
        .map(|((&n, &p), &ci)| block_split(n, p, ci))
        .unzip()
}

/// The process grid: `grid` as given, or (`None`) all `p` ranks on the last axis.
pub fn process_grid(nd: usize, grid: Option<&[i64]>, p: i64) -> Vec<i64> {
    match grid {
        Some(g) => g.to_vec(),
        None => {
            let mut g = vec![1; nd];
            if let Some(l) = g.last_mut() {
                *l = p;
            }
            g
        }
    }
}

/// Rank `rank`'s block (start, shape) of an array of extents `dims` split over `grid` (see
/// [`process_grid`]) of `nranks` ranks, with the arguments checked. Not collective.
pub fn block_of(
    dims: &[i64],
    grid: Option<&[i64]>,
    nranks: i64,
    rank: i64,
) -> Result<(Vec<i64>, Vec<i64>)> {
    if nranks < 1 || rank < 0 || rank >= nranks {
        crate::bail!(
            InvalidArgument,
            "arguments 'rank' ({rank}) and 'nranks' ({nranks}) need 0 <= rank < nranks"
        );
    }
    let grid = process_grid(dims.len(), grid, nranks);
    if grid.len() != dims.len()
        || grid.iter().any(|&g| g < 1)
        || grid.iter().try_fold(1i64, |a, &g| a.checked_mul(g)) != Some(nranks)
    {
        crate::bail!(
            InvalidArgument,
            "process grid {grid:?} does not multiply to {nranks} ranks"
        );
    }
    Ok(local_block(dims, &grid, rank))
}

/// Normalise halo widths (1, ndim or 2*ndim values) to (minus, plus) per axis. A single value is
/// trimmed to 0 on sides at the global boundary, as PyLops-MPI does for a scalar halo.
pub fn parse_halo(h: &[i64], ndim: usize, coords: &[i64], grid: &[i64]) -> Result<Vec<(i64, i64)>> {
    if h.iter().any(|&w| w < 0) {
        crate::bail!(InvalidArgument, "halo widths must be >= 0, got {h:?}");
    }
    Ok(match h.len() {
        1 => (0..ndim)
            .map(|a| {
                let lo = if coords[a] == 0 { 0 } else { h[0] };
                let hi = if coords[a] == grid[a] - 1 { 0 } else { h[0] };
                (lo, hi)
            })
            .collect(),
        l if l == ndim => h.iter().map(|&w| (w, w)).collect(),
        l if l == 2 * ndim => h.chunks(2).map(|c| (c[0], c[1])).collect(),
        l => crate::bail!(
            InvalidArgument,
            "halo has {l} values; give 1, ndim = {ndim} or 2*ndim = {}",
            2 * ndim
        ),
    })
}

fn row_major(idx: &[i64], shape: &[i64]) -> i64 {
    idx.iter().zip(shape).fold(0, |acc, (i, n)| acc * n + i)
}

/// The halo operator and its (rows = padded, cols = blocks) layouts. [collective]
pub fn halo<T: Scalar>(
    comm: &Arc<Comm>,
    dims: &[i64],
    grid: Option<&[i64]>,
    h: &[i64],
) -> Result<CsrOp<T>> {
    let p = comm.size() as i64;
    let nd = dims.len();
    let grid = process_grid(nd, grid, p);
    let rank = comm.rank() as i64;
    let setup = (|| {
        if nd == 0 || dims.iter().any(|&d| d < 0) {
            crate::bail!(
                InvalidArgument,
                "halo: 'dims' must have at least one axis and no negative extent, got {dims:?}"
            );
        }
        // the product checked: extents such as (2^63 - 1)^2 wrap around to 1
        if grid.len() != nd
            || grid.iter().any(|&g| g < 1)
            || grid.iter().try_fold(1i64, |a, &g| a.checked_mul(g)) != Some(p)
        {
            crate::bail!(
                InvalidArgument,
                "halo: process grid {grid:?} must have {nd} positive extents whose product is the number of ranks {p}"
            );
        }
        crate::error::checked_product(
            "halo: 'dims'",
            &dims.iter().map(|&d| ("extent", d)).collect::<Vec<_>>(),
        )?;
        let c = coords_of(rank, &grid);
        let w = parse_halo(h, nd, &c, &grid)?;
        // this rank's padded block must be representable
        let (_, shape) = local_block(dims, &grid, rank);
        let mut padded = Vec::with_capacity(nd);
        for (s, (a, b)) in shape.iter().zip(&w) {
            let e = s.checked_add(*a).and_then(|e| e.checked_add(*b)).ok_or_else(|| {
                crate::err!(
                    InvalidArgument,
                    "halo: widths {h:?} around a block of shape {shape:?} make more than 2^63 - 1 cells"
                )
            })?;
            padded.push(("padded extent", e));
        }
        crate::error::checked_product("halo: this rank's padded block", &padded)?;
        Ok(w)
    })();
    let (start, shape) = if setup.is_ok() {
        local_block(dims, &grid, rank)
    } else {
        (vec![0; nd], vec![0; nd])
    };
    let widths = setup.clone().unwrap_or_else(|_| vec![(0, 0); nd]);
    let block_len: i64 = shape.iter().product();
    let padded: Vec<i64> = shape
        .iter()
        .zip(&widths)
        .map(|(s, (a, b))| s + a + b)
        .collect();
    let padded_len: i64 = if setup.is_ok() {
        padded.iter().product()
    } else {
        0
    };
    // the CSR arrays: one row per padded cell, at most one entry each (fallible: the sizes are the
    // caller's)
    let (mut ip, mut ix, mut v) = (Vec::new(), Vec::new(), Vec::new());
    let setup = setup.and_then(|w| {
        let n = padded_len as usize;
        crate::error::try_reserve(&mut ip, n + 1, "the halo operator's row pointer")?;
        crate::error::try_reserve(&mut ix, n, "the halo operator's column indices")?;
        crate::error::try_reserve(&mut v, n, "the halo operator's values")?;
        Ok(w)
    });
    let padded_len = if setup.is_ok() { padded_len } else { 0 };
    ip.push(0i64);
    let pre = setup.map(|_| Partition::Scatter);
    let cols = Layout::new_checked(
        comm.clone(),
        pre.clone(),
        -1,
        if pre.is_ok() { block_len } else { 0 },
    )?;
    let rows = Layout::new_checked(comm.clone(), pre, -1, padded_len)?;
    // one entry per padded cell whose global position is inside the array
    let offsets = cols.offsets().to_vec();
    let mut idx = vec![0i64; nd];
    for _ in 0..padded_len {
        let g: Vec<i64> = (0..nd).map(|a| start[a] + idx[a] - widths[a].0).collect();
        if g.iter().zip(dims).all(|(&gi, &n)| gi >= 0 && gi < n) {
            let owner_c: Vec<i64> = (0..nd)
                .map(|a| {
                    let b = ceil_div(dims[a], grid[a]);
                    (g[a] / b.max(1)).min(grid[a] - 1)
                })
                .collect();
            let q = row_major(&owner_c, &grid);
            let (qs, qshape) = local_block(dims, &grid, q);
            let local: Vec<i64> = (0..nd).map(|a| g[a] - qs[a]).collect();
            ix.push(offsets[q as usize] + row_major(&local, &qshape));
            v.push(T::one());
        }
        ip.push(ix.len() as i64);
        for a in (0..nd).rev() {
            idx[a] += 1;
            if idx[a] < padded[a] {
                break;
            }
            idx[a] = 0;
        }
    }
    CsrOp::from_local_rows(rows, cols, &ip, &ix, &v, Ok(()))
}
