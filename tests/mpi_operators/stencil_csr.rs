//! The matrix-free stencils against their assembled CSR matrices (issue 36: "bitwise equal to the
//! assembled one"). The matrix is built here from PyLops' coefficients (`stencil::first_coeffs`,
//! `second_coeffs`), not from the operator: each row's terms from every axis, equal columns
//! merged in f64 in axis order, columns increasing, then rounded to T, as an assembled row is.
//! Equal products: at one rank in the default sum order (a CSR row sums in column order, as the
//! stencil does), and at every rank count, forward and adjoint, in the reproducible order (where
//! CSR rows, and its conjugate transpose's, are summed in global column order).
//! Also used by `benches/stencil.rs` (`make bench-stencil`).

use std::sync::Arc;

use parlops::Scalar;
use parlops::op::csr::CsrOp;
use parlops::op::stencil::Kind;
use parlops::vector::Layout;

/// One axis' contribution to a block: (axis, coefficients at position i of n, scale).
pub type AxisTerms = (
    usize,
    fn(i64, i64, Kind, bool, f64) -> Vec<(i64, f64)>,
    Kind,
    bool,
    f64,
    f64,
);

/// Row-major strides of `shape`.
fn strides(shape: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; shape.len()];
    for a in (0..shape.len().saturating_sub(1)).rev() {
        s[a] = s[a + 1] * shape[a + 1];
    }
    s
}

/// The assembled matrix of the stencil whose output blocks are `blocks` (one for a derivative or
/// the Laplacian, one per axis for the gradient), on input layout `cols` (N-D, split along axis 0)
/// and output layout `rows` (rank r: block 0 of its entries, then block 1, ...).
pub fn assemble<T: Scalar>(
    rows: &Arc<Layout>,
    cols: &Arc<Layout>,
    blocks: &[Vec<AxisTerms>],
) -> CsrOp<T> {
    let shape = cols.shape().to_vec();
    let st = strides(&shape);
    let (s, len) = (cols.local_start(), cols.local_len());
    let (mut ip, mut ix, mut v) = (vec![0i64], Vec::new(), Vec::new());
    let mut raw: Vec<(i64, f64)> = Vec::new();
    for block in blocks {
        for g in s..s + len {
            raw.clear();
            for &(a, coeffs, kind, edge, dx, scale) in block {
                let n = shape[a];
                let pos = (g / st[a]) % n;
                for (o, w) in coeffs(pos, n, kind, edge, dx) {
                    raw.push((o * st[a], scale * w));
                }
            }
            // columns increasing; equal ones merged in axis order (a stable sort keeps it)
            raw.sort_by_key(|&(o, _)| o);
            let mut k = 0;
            while k < raw.len() {
                let (o, mut w) = raw[k];
                k += 1;
                while k < raw.len() && raw[k].0 == o {
                    w += raw[k].1;
                    k += 1;
                }
                ix.push(g + o);
                v.push(T::from_parts_lossy(w, 0.0));
            }
            ip.push(ix.len() as i64);
        }
    }
    CsrOp::<T>::from_local_rows(rows.clone(), cols.clone(), &ip, &ix, &v, Ok(())).unwrap()
}
