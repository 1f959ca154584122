//! Where data lives. Host and CUDA device memory; asking for the device is checked against what the
//! machine really has (see [`crate::gpu::probe`]).

use crate::error::Result;

crate::codes::code_table! {
    /// Memory space of a vector or operator.
    pub enum Location {
        Host = 0, PARLOPS_MEMORY_HOST;
        Cuda = 1, PARLOPS_MEMORY_CUDA;
    }
}

impl Location {
    /// Can data be placed here on this rank? Host always; CUDA only where a driver and a device exist
    /// (`NoDevice` otherwise, with what the probe found).
    pub fn require_available(self) -> Result<()> {
        match self {
            Location::Host => Ok(()),
            Location::Cuda => crate::gpu::require_driver(),
        }
    }
}

/// Ask the kernel to back the whole 2 MiB pages inside `v`'s spare capacity with huge pages (Linux
/// transparent huge pages in `madvise` mode, as Debian ships them), before that room is first
/// written: a long vector or matrix array then costs one TLB entry per 2 MiB instead of per 4 KiB,
/// which a sparse product streaming five arrays at once feels.
///
/// Advice alone is not met where the room is memory the allocator hands out again (a heap chunk an
/// earlier array used): its 4 KiB pages are already there, and only the kernel's background
/// `khugepaged` merges them, minutes later. So the advised pages are also released
/// (`MADV_DONTNEED`; spare capacity holds no values, and private anonymous memory comes back
/// zeroed), and the first write faults in 2 MiB pages. Measured in `benches/NOTES.md` (item 16).
/// Buffers under 4 MiB, other systems, or a refusal: nothing happens (it is advice).
pub fn advise_huge<T>(v: &Vec<T>) {
    const HUGE: usize = 2 << 20;
    let size = std::mem::size_of::<T>();
    let bytes = (v.capacity() - v.len()) * size;
    if bytes < 2 * HUGE {
        return;
    }
    let start = v.as_ptr() as usize + v.len() * size;
    let a = start.div_ceil(HUGE) * HUGE;
    let b = (start + bytes) / HUGE * HUGE;
    if b > a {
        // SAFETY: [a, b) lies inside the spare capacity of the buffer this Vec owns, which holds no
        // values (nothing reads it before it is written); MADV_HUGEPAGE changes no contents, and
        // MADV_DONTNEED only drops pages whose contents nothing needs.
        unsafe {
            let p = a as *mut libc::c_void;
            if libc::madvise(p, b - a, libc::MADV_HUGEPAGE) == 0 {
                libc::madvise(p, b - a, libc::MADV_DONTNEED);
            }
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    /// The kB of transparent huge pages backing the mapping that holds `addr` (from smaps).
    fn huge_kb_at(addr: usize) -> Option<u64> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let head = line.split_whitespace().next().unwrap_or("");
            if let Some((lo, hi)) = head.split_once('-')
                && let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            {
                inside = lo <= addr && addr < hi;
                continue;
            }
            if inside && let Some(kb) = line.strip_prefix("AnonHugePages:") {
                return kb.trim().trim_end_matches("kB").trim().parse().ok();
            }
        }
        None
    }

    /// Memory that already has 4 KiB pages (what an allocator hands out again) is backed by huge
    /// pages once advised and written. Without the release in `advise_huge`, the old small pages
    /// stay and this sees none.
    #[test]
    fn advised_room_gets_huge_pages_even_when_touched_before() {
        let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        if !(mode.contains("[madvise]") || mode.contains("[always]")) {
            eprintln!("skipped: transparent huge pages are {:?} here", mode.trim());
            return;
        }
        const MB: usize = 1 << 20;
        let n = 16 * MB;
        let mut v: Vec<u8> = Vec::with_capacity(n);
        let p = v.as_mut_ptr() as usize;
        let (a, b) = (p.div_ceil(2 * MB) * 2 * MB, (p + n) / (2 * MB) * 2 * MB);
        // SAFETY: [a, b) lies in v's capacity; the small-page advice and the writes stand for an
        // earlier user of the same memory.
        unsafe {
            libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_NOHUGEPAGE);
            std::ptr::write_bytes(p as *mut u8, 7, n);
        }
        assert_eq!(
            huge_kb_at(a),
            Some(0),
            "the memory should start on small pages"
        );
        super::advise_huge(&v);
        v.resize(n, 1);
        let kb = huge_kb_at(a).expect("the mapping is in smaps");
        assert!(
            kb >= 2048,
            "{kb} kB of huge pages in the advised {} MiB",
            (b - a) / MB
        );
        assert!(v.iter().all(|&x| x == 1));
    }
}
