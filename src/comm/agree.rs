//! Agreement: the collectives with which every rank learns whether every other rank's local checks
//! passed, and whether the ranks passed the same values, before anything else communicates (so that
//! one rank's bad argument fails every rank together, with one status and the failing rank's words).

use super::Comm;
use crate::error::{Error, ErrorKind, Result};

/// How many values [`Comm::agree_same`] compares directly; longer lists are compared by hashes.
const SAME_INLINE: usize = 4;

/// A 64-bit hash of `vals` (splitmix64 steps over the values, `lane` selecting one of several
/// independent hashes): for comparing lists across ranks without sending them.
pub(crate) fn list_hash(vals: &[i64], lane: u64) -> u64 {
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    };
    let mut h = mix(0x9e3779b97f4a7c15 ^ lane.wrapping_mul(0xd1b54a32d192ed03));
    for &v in vals {
        h = mix(h ^ (v as u64)).wrapping_add(0x9e3779b97f4a7c15);
    }
    mix(h ^ vals.len() as u64)
}

impl Comm {
    /// Every rank contributes `local`; all ranks get `Ok` only if every rank was `Ok`. Otherwise each
    /// rank returns an error of the kind of the lowest failing rank, with that rank's message. [collective]
    pub fn agree<T>(&self, local: Result<T>) -> Result<T> {
        let code = match &local {
            Ok(_) => 0i64,
            Err(e) => e.kind.code() as i64,
        };
        let codes = self.allgather_i64(&[code])?;
        if codes.iter().all(|&c| c == 0) {
            return local;
        }
        self.spread_failure(local, &codes)
    }

    /// [`Comm::agree`] carrying one value per rank in the same allgather: on success, every rank's
    /// value in rank order. [collective]
    pub fn agree_carrying<T>(&self, local: Result<T>, v: i64) -> Result<(T, Vec<i64>)> {
        let code = match &local {
            Ok(_) => 0i64,
            Err(e) => e.kind.code() as i64,
        };
        let all = self.allgather_i64(&[code, v])?;
        let codes: Vec<i64> = all.chunks(2).map(|c| c[0]).collect();
        if codes.iter().any(|&c| c != 0) {
            return self.spread_failure(local, &codes).map(|t| (t, Vec::new()));
        }
        Ok((local?, all.chunks(2).map(|c| c[1]).collect()))
    }

    /// Error path of [`Comm::agree`]: the lowest failing rank broadcasts its message. [collective]
    pub(crate) fn spread_failure<T>(&self, local: Result<T>, codes: &[i64]) -> Result<T> {
        let first = codes.iter().position(|&c| c != 0).unwrap_or(0);
        let failing: Vec<String> = codes
            .iter()
            .enumerate()
            .filter(|(_, c)| **c != 0)
            .map(|(r, _)| r.to_string())
            .collect();
        let mut msg = match &local {
            Err(e) if first as i32 == self.rank => e.msg.clone().into_bytes(),
            _ => Vec::new(),
        };
        let mut len = [msg.len() as i64];
        self.raw.bcast_i64(&mut len, first as i32)?;
        msg.resize(len[0].max(0) as usize, 0);
        self.raw.bcast_bytes(&mut msg, first as i32)?;
        let remote = String::from_utf8_lossy(&msg).into_owned();
        // every rank returns the status of the lowest failing rank (ranks that failed for different
        // reasons still give the caller one status), with its own message where it failed itself
        let kind = ErrorKind::from_code(codes[first] as i32);
        match local {
            Err(e) if e.kind == kind => {
                let mut e = e;
                if (failing.len() > 1 || first as i32 != self.rank)
                    && !e.msg.contains("(failed on rank(s)")
                {
                    e.msg = format!("{} (failed on rank(s) {})", e.msg, failing.join(", "));
                }
                Err(e)
            }
            Err(e) => Err(Error::new(
                kind,
                format!(
                    "failed on rank(s) {}; rank {first} said: {remote}; this rank ({}) said: {}",
                    failing.join(", "),
                    self.rank,
                    e.msg
                ),
            )),
            Ok(_) => Err(Error::new(
                ErrorKind::from_code(codes[first] as i32),
                format!(
                    "failed on rank(s) {} though this rank's ({}) arguments were valid; rank {first} said: {remote}",
                    failing.join(", "),
                    self.rank
                ),
            )),
        }
    }

    /// Like [`Comm::agree`], and on success every rank's `N` values, in rank order, so that callers
    /// can compare them. The length is a constant of the call site: every rank sends the same
    /// number of values by construction (a list whose length may differ goes through
    /// [`Comm::agree_same`], which compares a fixed-size record). [collective]
    pub fn agree_with<const N: usize>(
        &self,
        local: Result<()>,
        vals: &[i64; N],
    ) -> Result<Vec<[i64; N]>> {
        let mut buf = Vec::with_capacity(N + 1);
        buf.push(local.as_ref().err().map_or(0, |e| e.kind.code() as i64));
        buf.extend_from_slice(vals);
        let all = self.allgather_i64(&buf)?;
        let codes: Vec<i64> = all.chunks(N + 1).map(|c| c[0]).collect();
        if codes.iter().any(|&c| c != 0) {
            self.spread_failure(local, &codes)?;
        }
        Ok(all
            .chunks(N + 1)
            .map(|c| {
                let mut r = [0i64; N];
                r.copy_from_slice(&c[1..]);
                r
            })
            .collect())
    }

    /// The outcome agreed with [`Comm::agree`], and whether every rank passed the same `vals` (any
    /// length, which may itself differ between ranks): one allgather of a fixed-size record per
    /// rank (the error code, the length, and the values when at most [`SAME_INLINE`] of them, else
    /// four independent 64-bit hashes of them). On a difference, every rank's list (an allgather
    /// of bytes, made only then and by every rank alike) for the message. [collective]
    fn same_lists(&self, local: Result<()>, vals: &[i64]) -> Result<Option<Vec<Vec<i64>>>> {
        let mut rec = [0i64; 2 + SAME_INLINE];
        rec[0] = local.as_ref().err().map_or(0, |e| e.kind.code() as i64);
        rec[1] = vals.len() as i64;
        if vals.len() <= SAME_INLINE {
            rec[2..2 + vals.len()].copy_from_slice(vals);
        } else {
            for (lane, r) in rec[2..].iter_mut().enumerate() {
                *r = list_hash(vals, lane as u64) as i64;
            }
        }
        let all = self.allgather_i64(&rec)?;
        let rows: Vec<&[i64]> = all.chunks(rec.len()).collect();
        let codes: Vec<i64> = rows.iter().map(|r| r[0]).collect();
        if codes.iter().any(|&c| c != 0) {
            self.spread_failure(local, &codes)?;
        }
        if rows.iter().all(|r| r[1..] == rec[1..]) {
            return Ok(None);
        }
        // every rank saw the same records, so every rank takes this branch
        let bytes: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).collect();
        let lists = self
            .allgather_bytes(&bytes)?
            .into_iter()
            .map(|b| {
                b.chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                    .collect()
            })
            .collect();
        Ok(Some(lists))
    }

    /// [`Comm::agree`], then the check every collective entry needs: the ranks passed the same
    /// `vals` (a list of any length; ranks passing lists of different lengths differ too). On a
    /// difference every rank fails with `InconsistentAcrossRanks`, naming `what` (e.g. "dtypes",
    /// "(N, K, M)") and the values by rank. [collective]
    pub fn agree_same(&self, local: Result<()>, what: &str, vals: &[i64]) -> Result<()> {
        let Some(rows) = self.same_lists(local, vals)? else {
            return Ok(());
        };
        let q = rows.iter().position(|r| r[..] != vals[..]).unwrap_or(0);
        let shown: Vec<String> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                if r.len() == 1 {
                    format!("rank {i}: {}", r[0])
                } else if r.len() <= 16 {
                    format!("rank {i}: {r:?}")
                } else {
                    format!("rank {i}: {} values {:?}...", r.len(), &r[..8])
                }
            })
            .collect();
        crate::bail!(
            InconsistentAcrossRanks,
            "ranks passed different {what} (rank {q} differs from rank {}; {})",
            self.rank(),
            shown.join(", ")
        );
    }

    /// [`Comm::agree_same`] for a list of named settings: on a difference the message names the
    /// settings that differ ("ranks passed different solver settings: rtol, max_iter differ between
    /// ranks 0 and 2; set them identically on every rank"). [collective]
    pub fn agree_same_named(
        &self,
        local: Result<()>,
        what: &str,
        names: &[&str],
        vals: &[i64],
    ) -> Result<()> {
        let Some(rows) = self.same_lists(local, vals)? else {
            return Ok(());
        };
        let q = rows.iter().position(|r| r[..] != vals[..]).unwrap_or(0);
        let width = rows.iter().map(|r| r.len()).max().unwrap_or(0);
        let differ: Vec<&str> = (0..width)
            .filter(|&i| rows.iter().any(|r| r.get(i) != rows[0].get(i)))
            .map(|i| names.get(i).copied().unwrap_or("(unnamed)"))
            .collect();
        crate::bail!(
            InconsistentAcrossRanks,
            "ranks passed different {what}: {} differ between ranks {} and {q}; set them \
             identically on every rank",
            differ.join(", "),
            self.rank()
        );
    }
}
