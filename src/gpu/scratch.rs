//! Device scratch for reductions, one per thread: per-block partials and results on the device and a
//! pinned host copy, shared by the vector reductions and the NCCL sums (made or grown at first use).

use super::{DevArray, Pinned, RED_BLOCKS, Stream, sync};
use crate::error::Result;

/// Scratch for reductions: per-block partials and the result, on the device, and a pinned host copy.
pub struct RedScratch {
    pub part: DevArray<f64>,
    pub out: DevArray<f64>,
    pub host: Pinned,
}

impl RedScratch {
    fn new(m: usize, s: Stream) -> Result<RedScratch> {
        Ok(RedScratch {
            part: DevArray::zeroed(8 * RED_BLOCKS as usize, s)?,
            out: DevArray::zeroed(m, s)?,
            host: Pinned::new(m * 8)?,
        })
    }
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Option<RedScratch>> = const { std::cell::RefCell::new(None) };
}

/// Run `f` with this thread's reduction scratch, holding at least `m` results (made or grown here).
pub fn with_scratch<R>(
    m: usize,
    s: Stream,
    f: impl FnOnce(&mut RedScratch) -> Result<R>,
) -> Result<R> {
    SCRATCH.with(|c| {
        let mut c = c.borrow_mut();
        if c.as_ref().is_none_or(|sc| sc.out.len < m) {
            // the old scratch may still be in use by queued work on its stream
            sync(s)?;
            *c = Some(RedScratch::new(m.max(64).next_power_of_two(), s)?);
        }
        f(c.as_mut().expect("just made"))
    })
}
