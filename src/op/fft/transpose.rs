//! The two all-to-alls of the slab decomposition: from the split along axis 0 to the split along
//! another axis t (axis 0 whole on every rank) and back.

use num_complex::Complex;
use rustfft::FftNum;

use super::{Fft, offsets, prod};
use crate::error::Result;
use crate::scalar::Scalar;

impl<R: FftNum> Fft<R>
where
    Complex<R>: Scalar,
{
    /// From a split along axis 0 (`rows` by rank; this rank's block has shape `sh`) to a split along
    /// t (the whole of axis 0 on every rank), into `out`; 1-D: everything on every rank. [collective]
    pub(super) fn to_t(
        &self,
        a: &[Complex<R>],
        sh: &[usize],
        rows: &[usize],
        out: &mut Vec<Complex<R>>,
        send: &mut Vec<Complex<R>>,
    ) -> Result<()> {
        let comm = self.cols.comm();
        let me = comm.rank() as usize;
        let e0: usize = rows.iter().sum();
        let r0 = offsets(rows);
        let zero = Complex::new(R::zero(), R::zero());
        let Some(t) = self.t else {
            out.clear();
            out.resize(e0, zero);
            let counts: Vec<i64> = rows.iter().map(|&v| v as i64).collect();
            return comm.allgatherv(a, out, &counts);
        };
        let pre = prod(&sh[1..t]);
        let post = prod(&sh[t + 1..]);
        let et = sh[t];
        let tr = &self.t_rows;
        let tc = offsets(tr);
        let mut sc = Vec::with_capacity(tr.len());
        send.clear();
        for q in 0..tr.len() {
            let before = send.len();
            for i in 0..sh[0] * pre {
                let base = (i * et + tc[q]) * post;
                send.extend_from_slice(&a[base..base + tr[q] * post]);
            }
            sc.push((send.len() - before) as i64);
        }
        let sd: Vec<i64> = offsets(&sc.iter().map(|&v| v as usize).collect::<Vec<_>>())
            .iter()
            .map(|&v| v as i64)
            .collect();
        let blk = pre * tr[me] * post;
        let rc: Vec<i64> = rows.iter().map(|&r| (r * blk) as i64).collect();
        let rd: Vec<i64> = r0.iter().map(|&r| (r * blk) as i64).collect();
        // every entry is received: the old contents need no clearing (resize zeroes only growth)
        out.resize(e0 * blk, zero);
        comm.alltoallv(send, &sc, &sd, out, &rc, &rd)
    }

    /// The way back: from the split along t (block shape `tsh`, the whole of axis 0) to a split along
    /// axis 0 with `rows` by rank. [collective]
    pub(super) fn back_from_t(
        &self,
        a: &[Complex<R>],
        tsh: &[usize],
        rows: &[usize],
        out: &mut [Complex<R>],
        recv: &mut Vec<Complex<R>>,
    ) -> Result<()> {
        let comm = self.cols.comm();
        let me = comm.rank() as usize;
        let r0 = offsets(rows);
        let zero = Complex::new(R::zero(), R::zero());
        let Some(t) = self.t else {
            out.copy_from_slice(&a[r0[me]..r0[me] + rows[me]]);
            return Ok(());
        };
        let pre = prod(&tsh[1..t]);
        let post = prod(&tsh[t + 1..]);
        let tr = &self.t_rows;
        let tc = offsets(tr);
        let et: usize = tr.iter().sum();
        let blk = pre * tr[me] * post;
        let sc: Vec<i64> = rows.iter().map(|&r| (r * blk) as i64).collect();
        let sd: Vec<i64> = r0.iter().map(|&r| (r * blk) as i64).collect();
        let rc: Vec<i64> = tr
            .iter()
            .map(|&w| (rows[me] * pre * w * post) as i64)
            .collect();
        let rd: Vec<i64> = offsets(&rc.iter().map(|&v| v as usize).collect::<Vec<_>>())
            .iter()
            .map(|&v| v as i64)
            .collect();
        // written whole below (resize zeroes only growth)
        recv.resize(rows[me] * pre * et * post, zero);
        comm.alltoallv(a, &sc, &sd, recv, &rc, &rd)?;
        for p in 0..tr.len() {
            let w = tr[p] * post;
            let from = rd[p] as usize;
            for i in 0..rows[me] * pre {
                let dst = (i * et + tc[p]) * post;
                out[dst..dst + w].copy_from_slice(&recv[from + i * w..from + (i + 1) * w]);
            }
        }
        Ok(())
    }
}
