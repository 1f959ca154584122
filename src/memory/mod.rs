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
        // values (nothing reads it before it is written).
        unsafe { advise_and_release(a, b - a) };
    }
}

/// Advise huge pages for `[a, a + len)` and release its pages, so that the first write faults in
/// 2 MiB pages (MADV_HUGEPAGE changes no contents; MADV_DONTNEED drops the pages, which come back
/// zeroed).
///
/// # Safety
/// The range must lie in memory the caller owns whose contents nothing needs.
unsafe fn advise_and_release(a: usize, len: usize) {
    // PARLOPS_HUGE_PAGES=0: no advice (read once)
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if !*ON.get_or_init(|| crate::config::env().get("PARLOPS_HUGE_PAGES") != Some("0")) {
        return;
    }
    let p = a as *mut libc::c_void;
    // SAFETY: the caller's promise.
    unsafe {
        if libc::madvise(p, len, libc::MADV_HUGEPAGE) == 0 {
            libc::madvise(p, len, libc::MADV_DONTNEED);
        }
    }
}

/// An owned host array of `len` entries of a plain number type, zeroed, aligned to a cache line (64
/// bytes); from 2 MiB on, in a room aligned to 2 MiB and advised for huge pages ([`advise_huge`]'s
/// release included), so that the whole 2 MiB pages of the array are huge pages wherever the
/// allocator finds the room, the array starting 0-15 times 4,352 bytes into it ([`COLOUR`]). When
/// the array ends a little before a 2 MiB boundary (at most an eighth of its length), the room is
/// allocated up to that boundary and advised too: the last page is then a huge page as well, at
/// the cost of that unused remainder. Allocation failure is an error, never an abort.
///
/// Why: an array of a few MiB placed at an arbitrary address holds few or no whole 2 MiB pages, so
/// it ran on 4 KiB pages or not depending on where the allocator put it, which varied with what ran
/// before in the process (`benches/NOTES.md`, item 21).
pub struct HostBuf<T> {
    ptr: std::ptr::NonNull<T>,
    layout: std::alloc::Layout,
    /// Bytes from the allocation's start to the first entry (a colour, below).
    skew: usize,
}

// SAFETY: HostBuf owns its entries like a Vec<T>.
unsafe impl<T: Send> Send for HostBuf<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for HostBuf<T> {}

const LINE: usize = 64;
const HUGE: usize = 2 << 20;
/// Arrays of 2 MiB or more start (COLOUR + 256) times (0..COLOURS) bytes into their 2 MiB-aligned
/// room, the count moving on with each such array, so that the same entry of successive vectors
/// lies at different addresses modulo 4 KiB (and modulo 64 KiB). Aligned alike, a load from one
/// vector and a store to another at the same entry matched in their low 12 bits, and the CPU held
/// the load back as if it depended on the store (4K aliasing): block CG of 8 right-hand sides,
/// which reads and writes 16-24 vectors side by side, took 3 times as long a block once its vectors
/// reached 2 MiB (`benches/NOTES.md` item 42).
const COLOUR: usize = 4096;
const COLOURS: usize = 16;
static NEXT_COLOUR: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl<T: Copy> HostBuf<T> {
    /// `len` entries, each `zero` (the type's zero: every Scalar's zero is all zero bits, but the
    /// value is written, not assumed).
    pub fn zeroed(len: usize, zero: T) -> Result<Self> {
        let size = std::mem::size_of::<T>();
        let oom = || {
            crate::err!(
                OutOfMemory,
                "cannot allocate {len} entries of {size} bytes on this rank"
            )
        };
        let bytes = len.checked_mul(size).ok_or_else(oom)?;
        if bytes == 0 {
            return Ok(HostBuf {
                ptr: std::ptr::NonNull::dangling(),
                layout: std::alloc::Layout::new::<()>(),
                skew: 0,
            });
        }
        let (align, room, skew) = if bytes >= HUGE {
            let colour = NEXT_COLOUR.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let skew = (COLOUR + 256) * (colour % COLOURS);
            let need = bytes.checked_add(skew).ok_or_else(oom)?;
            let up = need.checked_next_multiple_of(HUGE).ok_or_else(oom)?;
            (HUGE, if (up - need) * 8 <= need { up } else { need }, skew)
        } else {
            (LINE.max(std::mem::align_of::<T>()), bytes, 0)
        };
        let layout = std::alloc::Layout::from_size_align(room, align).map_err(|_| oom())?;
        // SAFETY: the layout's size is not zero.
        let base = unsafe { std::alloc::alloc(layout) };
        if base.is_null() {
            return Err(oom());
        }
        if align == HUGE {
            // SAFETY: the whole 2 MiB pages from base lie in the room just allocated, which holds
            // no values yet.
            unsafe { advise_and_release(base as usize, room / HUGE * HUGE) };
        }
        // SAFETY: skew + bytes <= room: the entries lie in the room
        let p = unsafe { base.add(skew) } as *mut T;
        for i in 0..len {
            // SAFETY: i < len, inside the room.
            unsafe { p.add(i).write(zero) };
        }
        Ok(HostBuf {
            // SAFETY: base is not null
            ptr: unsafe { std::ptr::NonNull::new_unchecked(p) },
            layout,
            skew,
        })
    }
}

impl<T> HostBuf<T> {
    pub fn as_ptr(&self) -> *mut T {
        self.ptr.as_ptr()
    }
}

impl<T> Drop for HostBuf<T> {
    fn drop(&mut self) {
        if self.layout.size() > 0 {
            // SAFETY: allocated in `zeroed` with this layout, `skew` bytes before the first
            // entry; the entries are Copy (no drop).
            unsafe {
                let base = (self.ptr.as_ptr() as *mut u8).sub(self.skew);
                std::alloc::dealloc(base, self.layout)
            };
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

    /// A vector of 3.85 MiB (the 504,100-row convection-diffusion problem's) starts on a 256-byte
    /// boundary and both of its pages are huge pages, even on memory touched on small pages before;
    /// successive vectors of 2 MiB or more start at different offsets modulo 4 KiB; short buffers
    /// start on a cache line; every entry is zero.
    #[test]
    fn host_buffers_are_aligned_zeroed_and_on_huge_pages() {
        const MB: usize = 1 << 20;
        for len in [1usize, 7, 1000, 262_143, 262_144, 504_100, 1_000_001] {
            let b = super::HostBuf::zeroed(len, 0.0f64).unwrap();
            let p = b.as_ptr() as usize;
            let align = if len * 8 >= 2 * MB { 256 } else { 64 };
            assert_eq!(p % align, 0, "{len} entries at {p:#x}");
            // SAFETY: len initialised entries
            let s = unsafe { std::slice::from_raw_parts(b.as_ptr(), len) };
            assert!(s.iter().all(|&x| x == 0.0), "{len} entries zeroed");
        }
        // (other tests' arrays may take colours in between: most, not all, differ)
        let bufs: Vec<_> = (0..32)
            .map(|_| super::HostBuf::zeroed(300_000, 0.0f64).unwrap())
            .collect();
        let mut offsets: Vec<usize> = bufs.iter().map(|b| b.as_ptr() as usize % 4096).collect();
        offsets.sort_unstable();
        offsets.dedup();
        assert!(offsets.len() >= 8, "{offsets:?}");
        let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        if !(mode.contains("[madvise]") || mode.contains("[always]")) {
            eprintln!("skipped: transparent huge pages are {:?} here", mode.trim());
            return;
        }
        // room touched on small pages first, then freed: what the allocator hands out again
        let mut old: Vec<u8> = Vec::with_capacity(16 * MB);
        // SAFETY: inside old's capacity; the advice and the writes stand for an earlier user
        unsafe {
            libc::madvise(
                old.as_mut_ptr() as *mut libc::c_void,
                16 * MB,
                libc::MADV_NOHUGEPAGE,
            );
            std::ptr::write_bytes(old.as_mut_ptr(), 7, 16 * MB);
        }
        drop(old);
        let b = super::HostBuf::zeroed(504_100, 0.0f64).unwrap();
        let kb = huge_kb_at(b.as_ptr() as usize).expect("the mapping is in smaps");
        assert!(kb >= 4096, "{kb} kB of huge pages under a 3.85 MiB vector");
    }

    /// A length whose bytes overflow, or that no machine holds, is an error (no abort).
    #[test]
    fn host_buffer_sizes_are_fallible() {
        let e = super::HostBuf::zeroed(usize::MAX / 4, 0.0f64)
            .err()
            .unwrap();
        assert!(format!("{e:?}").contains("cannot allocate"), "{e:?}");
        let e = super::HostBuf::zeroed(1usize << 58, 0.0f32).err().unwrap();
        assert!(format!("{e:?}").contains("cannot allocate"), "{e:?}");
    }
}
