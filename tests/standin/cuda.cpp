// CPU stand-in for the CUDA driver API (libcuda.so.1), a test instrument of `make test`: parlops loads
// it through the same dynamic loading (cudarc) that finds the real driver, when build/standin is on
// LD_LIBRARY_PATH. Never linked into or installed with the library. docs/gpu.md says what it proves.
//
// Built to make device bugs fail:
//  - device memory lives at addresses the host cannot touch (reserved, never mapped: a host read or
//    write faults); kernels and copies reach it through separate backing pages, each allocation ending
//    at a guard page, its slack and fresh contents poisoned (0xff: NaN);
//  - work on a stream runs only when something waits for it (stream, event or context
//    synchronisation, a blocking copy, cuMemFree), so a missing synchronisation reads stale data;
//  - kernels run block by block, the threads of a block as fibers that switch at __syncthreads and
//    warp shuffles (warps of 32), __shared__ memory poisoned before every block, a barrier that cannot
//    complete reported as a launch failure;
//  - CUDA-aware MPI: with CUDA_STANDIN_HOST_ACCESS=1 device memory is also mapped at its device
//    addresses, so that MPI can move it directly (PARLOPS_CUDA_AWARE_MPI=1 makes parlops do that);
//  - a device memory limit (CUDA_STANDIN_MEMORY bytes, optionally on one rank only:
//    CUDA_STANDIN_OOM_RANK) makes out-of-memory reachable; several devices per node
//    (CUDA_STANDIN_DEVICES, default 4).
#include <dlfcn.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "standin_api.h"
#include "threads.h"

#include "cuda_internal.h"

namespace standin_cuda {


std::recursive_mutex G;
bool initialised = false;
CUresult sticky = OK; // a kernel fault poisons the context, as on a device

void say(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "[cuda stand-in %d] ", (int)getpid());
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

long env_long(const char *name, long dflt) {
  const char *v = getenv(name);
  return v && *v ? strtol(v, nullptr, 0) : dflt;
}

int my_rank() {
  for (const char *n : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MPI_LOCALRANKID"}) {
    const char *v = getenv(n);
    if (v && *v) return atoi(v);
  }
  return 0;
}

int ndevices() { return (int)env_long("CUDA_STANDIN_DEVICES", 4); }
// CUDA_STANDIN_HOST_ACCESS=1: device memory is also mapped at its device addresses, so that a
// CUDA-aware MPI (any MPI, in this mode) can read and write it; host access is then not caught.
bool host_access() {
  static int v = (int)env_long("CUDA_STANDIN_HOST_ACCESS", 0);
  return v != 0;
}

// ---------------------------------------------------------------- memory
extern const size_t PAGE = 4096;
extern const uintptr_t DEV_SPAN = (uintptr_t)1 << 36; // 64 GiB of addresses per device
char *dev_base = nullptr;                       // reserved, PROT_NONE: the host faults here

std::map<uintptr_t, Alloc> allocs; // by dev
uintptr_t next_dev[64];
size_t used[64];
std::map<uintptr_t, Pinned> pinned;
std::atomic<unsigned long long> bytes_htod{0}, bytes_dtoh{0};

long long limit_override = -1; // standin_set_memory_limit
size_t limit_bytes() {
  if (limit_override >= 0) return (size_t)limit_override;
  long lim = env_long("CUDA_STANDIN_MEMORY", (long)8 << 30);
  long r = env_long("CUDA_STANDIN_OOM_RANK", -1);
  if (r >= 0 && r != my_rank()) return (size_t)8 << 30;
  return (size_t)lim;
}

const Alloc *find(uintptr_t p, size_t bytes) {
  auto it = allocs.upper_bound(p);
  if (it == allocs.begin()) return nullptr;
  --it;
  const Alloc &a = it->second;
  if (p < a.dev || p - a.dev > a.bytes || bytes > a.bytes - (p - a.dev)) return nullptr;
  return &a;
}
char *back_of(const Alloc *a, uintptr_t p) { return a->back + a->offset + (p - a->dev); }
bool is_pinned(const void *p, size_t bytes) {
  uintptr_t u = (uintptr_t)p;
  auto it = pinned.upper_bound(u);
  if (it == pinned.begin()) return false;
  --it;
  return u >= it->first && u + bytes <= it->first + it->second.bytes;
}
bool in_device_space(uintptr_t p) { return dev_base && p >= (uintptr_t)dev_base && p < (uintptr_t)dev_base + 64 * DEV_SPAN; }

// ---------------------------------------------------------------- contexts and streams
thread_local int cur_dev = -1;
Ctx primary[64];

std::vector<Stream *> streams;
Stream *legacy_stream[64];


// Run what can run on s now, in order: true when s is empty, false when its first operation cannot
// finish yet (an NCCL operation waiting for other ranks); it stays first.
bool step(Stream *s) {
  while (!s->q.empty()) {
    auto f = std::move(s->q.front());
    s->q.pop_front();
    if (!f()) {
      s->q.push_front(std::move(f));
      return false;
    }
  }
  return true;
}
void run_all(Stream *s) {
  for (unsigned spins = 0; !step(s); spins++)
    if (spins > 64) sched_yield(); // the operation itself gives up after its timeout
}
void flush_all() {
  for (size_t i = 0; i < streams.size(); i++) run_all(streams[i]);
}
Stream *resolve(void *h) {
  uintptr_t u = (uintptr_t)h;
  if (u == 0 || u == 1 || u == 2) { // the legacy and per-thread default streams
    int d = cur_dev < 0 ? 0 : cur_dev;
    if (!legacy_stream[d]) {
      legacy_stream[d] = new Stream{d, 0, true, {}, true};
      streams.push_back(legacy_stream[d]);
    }
    return legacy_stream[d];
  }
  for (Stream *s : streams)
    if (s == h && s->live) return s;
  return nullptr;
}
// Queue f on s with the legacy default stream's ordering rules.
void enqueue_steps(Stream *s, std::function<bool()> f) {
  if (s->legacy) {
    for (Stream *o : streams)
      if (o != s && o->dev == s->dev && !(o->flags & 1)) run_all(o);
  } else if (!(s->flags & 1) && legacy_stream[s->dev]) {
    run_all(legacy_stream[s->dev]);
  }
  s->q.push_back(std::move(f));
  if (s->q.size() > 100000) run_all(s);
}
void enqueue(Stream *s, std::function<void()> f) {
  enqueue_steps(s, [f = std::move(f)] {
    f();
    return true;
  });
}

// A pointer argument of a kernel in a live allocation gets its backing memory. Any other (a dangling
// pointer of an empty array, a host pointer, freed memory) may be passed, as on a device, but not
// used: it becomes an address in the never-mapped device range, so that a kernel touching it faults.
int k_translate(const void *d, void **h) {
  const Alloc *a = d ? find((uintptr_t)d, 0) : nullptr;
  if (a) *h = back_of(a, (uintptr_t)d);
  else *h = d ? (void *)((uintptr_t)dev_base + 63 * DEV_SPAN + ((uintptr_t)d & 0xffff)) : nullptr;
  return 0;
}

std::map<std::string, std::pair<unsigned long long, unsigned long long>> launch_stats; // launches, threads
struct StatsAtExit {
  ~StatsAtExit() {
    if (!getenv("CUDA_STANDIN_STATS")) return;
    for (auto &k : launch_stats)
      fprintf(stderr, "[cuda stand-in] %-20s %10llu launches %14llu threads\n", k.first.c_str(), k.second.first,
              k.second.second);
  }
} stats_at_exit;

// Run one kernel (tests/standin/threads.cpp: CUDA's execution model on fibers); "" or why it failed.
std::string run_kernel(Func *f, standin_dim3 grid, standin_dim3 block, const unsigned char *blob) {
  size_t nt = (size_t)block.x * block.y * block.z;
  auto &st = launch_stats[f->name];
  st.first++;
  st.second += nt * grid.x * grid.y * grid.z;
  return standin_threads_run(f->call, f->m->shared_lo, f->m->shared_hi, grid, block, blob);
}

const char *running_kernel = nullptr;
struct sigaction old_segv;
void on_segv(int sig, siginfo_t *si, void *uc) {
  uintptr_t a = (uintptr_t)si->si_addr;
  char msg[400];
  int n = 0;
  if (in_device_space(a) && running_kernel)
    n = snprintf(msg, sizeof msg, "[cuda stand-in] kernel %s touched %#lx: not in a live device allocation\n",
                 running_kernel, (unsigned long)a);
  else if (in_device_space(a))
    n = snprintf(msg, sizeof msg,
                 "[cuda stand-in] host code touched device address %#lx: device memory is not accessible from "
                 "the host\n",
                 (unsigned long)a);
  else if (running_kernel)
    n = snprintf(msg, sizeof msg, "[cuda stand-in] kernel %s faulted at %#lx (past the end of an allocation?)\n",
                 running_kernel, (unsigned long)a);
  if (n > 0) {
    ssize_t w = write(2, msg, (size_t)n);
    (void)w;
  }
  sigaction(SIGSEGV, &old_segv, nullptr);
  if (!(old_segv.sa_flags & SA_SIGINFO) && old_segv.sa_handler == SIG_DFL) return; // re-faults, default action
  if (old_segv.sa_flags & SA_SIGINFO) old_segv.sa_sigaction(sig, si, uc);
  else if (old_segv.sa_handler != SIG_IGN) old_segv.sa_handler(sig);
}

} // namespace standin_cuda

using namespace standin_cuda;


extern "C" {

// ---------------------------------------------------------------- init, devices, contexts
CUresult cuInit(unsigned flags) {
  Lock l(G);
  if (flags != 0) return E_INVALID_VALUE;
  if (!dev_base) {
    void *p = mmap(nullptr, 64 * DEV_SPAN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return E_OUT_OF_MEMORY;
    dev_base = (char *)p;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, &old_segv);
    for (int d = 0; d < 64; d++) {
      next_dev[d] = (uintptr_t)dev_base + d * DEV_SPAN + PAGE;
      primary[d].dev = d;
    }
  }
  initialised = true;
  return OK;
}
CUresult cuDriverGetVersion(int *v) {
  if (!v) return E_INVALID_VALUE;
  *v = 12080;
  return OK;
}
CUresult cuDeviceGetCount(int *n) {
  NEED_INIT
  if (!n) return E_INVALID_VALUE;
  *n = ndevices();
  return OK;
}
CUresult cuDeviceGet(CUdevice *d, int ordinal) {
  NEED_INIT
  if (!d) return E_INVALID_VALUE;
  if (ordinal < 0 || ordinal >= ndevices()) return E_INVALID_DEVICE;
  *d = ordinal;
  return OK;
}
CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
  NEED_INIT
  if (!v) return E_INVALID_VALUE;
  if (d < 0 || d >= ndevices()) return E_INVALID_DEVICE;
  switch (attr) {
  case 75: *v = 9; break;  // compute capability major
  case 76: *v = 0; break;  // minor
  case 1: *v = 1024; break; // max threads per block
  case 10: *v = 32; break;  // warp size
  case 16: *v = 4; break;   // multiprocessors
  case 41: *v = 1; break;   // unified addressing
  default: *v = 0;
  }
  return OK;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
  NEED_INIT
  if (!name || len <= 0) return E_INVALID_VALUE;
  if (d < 0 || d >= ndevices()) return E_INVALID_DEVICE;
  snprintf(name, (size_t)len, "parlops CPU stand-in device %d", d);
  return OK;
}
CUresult cuDeviceTotalMem_v2(size_t *b, CUdevice d) {
  NEED_INIT
  if (!b) return E_INVALID_VALUE;
  if (d < 0 || d >= ndevices()) return E_INVALID_DEVICE;
  *b = limit_bytes();
  return OK;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, CUdevice d) {
  NEED_INIT
  if (!ctx) return E_INVALID_VALUE;
  if (d < 0 || d >= ndevices()) return E_INVALID_DEVICE;
  *ctx = &primary[d];
  return OK;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  NEED_INIT
  return d < 0 || d >= ndevices() ? E_INVALID_DEVICE : OK;
}
CUresult cuCtxSetCurrent(void *ctx) {
  NEED_INIT
  if (!ctx) {
    cur_dev = -1;
    return OK;
  }
  Ctx *c = (Ctx *)ctx;
  if (c < primary || c >= primary + 64 || c->dev >= ndevices()) return E_INVALID_CONTEXT;
  cur_dev = c->dev;
  return OK;
}
CUresult cuCtxGetCurrent(void **ctx) {
  NEED_INIT
  if (!ctx) return E_INVALID_VALUE;
  *ctx = cur_dev < 0 ? nullptr : &primary[cur_dev];
  return OK;
}
CUresult cuCtxGetDevice(CUdevice *d) {
  NEED_INIT
  if (!d) return E_INVALID_VALUE;
  if (cur_dev < 0) return E_INVALID_CONTEXT;
  *d = cur_dev;
  return OK;
}
CUresult cuCtxSynchronize(void) {
  NEED_CTX
  flush_all();
  return sticky;
}

CUresult cuGetErrorString(CUresult e, const char **s) {
  if (!s) return E_INVALID_VALUE;
  switch (e) {
  case OK: *s = "no error"; break;
  case E_INVALID_VALUE: *s = "invalid argument"; break;
  case E_OUT_OF_MEMORY: *s = "out of memory"; break;
  case E_NOT_INITIALIZED: *s = "initialization error"; break;
  case E_INVALID_DEVICE: *s = "invalid device ordinal"; break;
  case E_INVALID_IMAGE: *s = "device kernel image is invalid"; break;
  case E_INVALID_CONTEXT: *s = "invalid device context"; break;
  case E_INVALID_HANDLE: *s = "invalid resource handle"; break;
  case E_NOT_FOUND: *s = "named symbol not found"; break;
  case E_NOT_READY: *s = "device not ready"; break;
  case E_ILLEGAL_ADDRESS: *s = "an illegal memory access was encountered"; break;
  case E_LAUNCH_FAILED: *s = "unspecified launch failure"; break;
  default: *s = "unknown error"; return E_INVALID_VALUE;
  }
  return OK;
}
CUresult cuGetErrorName(CUresult e, const char **s) {
  if (!s) return E_INVALID_VALUE;
  switch (e) {
  case OK: *s = "CUDA_SUCCESS"; break;
  case E_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; break;
  case E_OUT_OF_MEMORY: *s = "CUDA_ERROR_OUT_OF_MEMORY"; break;
  case E_NOT_INITIALIZED: *s = "CUDA_ERROR_NOT_INITIALIZED"; break;
  case E_INVALID_DEVICE: *s = "CUDA_ERROR_INVALID_DEVICE"; break;
  case E_INVALID_IMAGE: *s = "CUDA_ERROR_INVALID_IMAGE"; break;
  case E_INVALID_CONTEXT: *s = "CUDA_ERROR_INVALID_CONTEXT"; break;
  case E_INVALID_HANDLE: *s = "CUDA_ERROR_INVALID_HANDLE"; break;
  case E_NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; break;
  case E_NOT_READY: *s = "CUDA_ERROR_NOT_READY"; break;
  case E_ILLEGAL_ADDRESS: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; break;
  case E_LAUNCH_FAILED: *s = "CUDA_ERROR_LAUNCH_FAILED"; break;
  default: *s = "CUDA_ERROR_UNKNOWN"; return E_INVALID_VALUE;
  }
  return OK;
}

// ---------------------------------------------------------------- memory
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
  NEED_CTX
  if (!p || bytes == 0) return E_INVALID_VALUE;
  int d = cur_dev;
  if (bytes > limit_bytes() || used[d] > limit_bytes() - bytes) return E_OUT_OF_MEMORY;
  size_t body = (bytes + 15) / 16 * 16; // 16-byte aligned start, the end at (or just before) the guard
  size_t pages = (body + PAGE - 1) / PAGE * PAGE;
  size_t mapped = pages + PAGE;
  if (next_dev[d] + mapped > (uintptr_t)dev_base + (d + 1) * DEV_SPAN) return E_OUT_OF_MEMORY;
  void *b;
  if (host_access()) {
    // CUDA-aware MPI mode: the same pages also at the device address, for MPI to read and write
    int fd = memfd_create("standin-device", 0);
    if (fd < 0 || ftruncate(fd, (off_t)pages) != 0) {
      if (fd >= 0) close(fd);
      return E_OUT_OF_MEMORY;
    }
    b = mmap(nullptr, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); // then the guard stays
    bool ok = b != MAP_FAILED &&
              mmap(b, pages, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED &&
              mmap((void *)next_dev[d], pages, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED;
    close(fd);
    if (!ok) return E_OUT_OF_MEMORY;
  } else {
    b = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED) return E_OUT_OF_MEMORY;
    mprotect((char *)b + pages, PAGE, PROT_NONE);
  }
  memset(b, 0xff, pages); // fresh device memory is not zero
  Alloc a;
  a.offset = pages - body;
  a.dev = next_dev[d] + a.offset;
  a.bytes = bytes;
  a.back = (char *)b;
  a.mapped = mapped;
  a.device = d;
  next_dev[d] += mapped + PAGE; // addresses are never reused
  allocs[a.dev] = a;
  used[d] += bytes;
  *p = a.dev;
  return OK;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  NEED_INIT
  if (p == 0) return OK;
  auto it = allocs.find((uintptr_t)p);
  if (it == allocs.end()) {
    say("cuMemFree of %#llx, which is not the start of a live allocation", p);
    return E_INVALID_VALUE;
  }
  flush_all(); // cuMemFree waits for the device
  used[it->second.device] -= it->second.bytes;
  munmap(it->second.back, it->second.mapped);
  if (host_access()) // back to a reserved, inaccessible range
    mmap((void *)(it->second.dev - it->second.offset), it->second.mapped - PAGE, PROT_NONE,
         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  allocs.erase(it);
  return sticky;
}
CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total) {
  NEED_CTX
  if (!free_b || !total) return E_INVALID_VALUE;
  *total = limit_bytes();
  // (a limit set below what is already in use leaves nothing free)
  *free_b = used[cur_dev] < *total ? *total - used[cur_dev] : 0;
  return OK;
}
CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned flags) {
  NEED_CTX
  (void)flags;
  if (!pp || bytes == 0) return E_INVALID_VALUE;
  void *b = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (b == MAP_FAILED) return E_OUT_OF_MEMORY;
  memset(b, 0xff, bytes);
  pinned[(uintptr_t)b] = Pinned{bytes};
  *pp = b;
  return OK;
}
CUresult cuMemAllocHost_v2(void **pp, size_t bytes) { return cuMemHostAlloc(pp, bytes, 0); }
CUresult cuMemFreeHost(void *p) {
  NEED_INIT
  auto it = pinned.find((uintptr_t)p);
  if (it == pinned.end()) return E_INVALID_VALUE;
  flush_all();
  munmap(p, it->second.bytes);
  pinned.erase(it);
  return OK;
}

static CUresult span(CUdeviceptr p, size_t n, char **out, const char *what) {
  const Alloc *a = find((uintptr_t)p, n);
  if (!a) {
    say("%s: [%#llx, +%zu) is not inside one live device allocation", what, p, n);
    return E_INVALID_VALUE;
  }
  if (a->device != cur_dev) {
    // peer access is not enabled by parlops: another device's memory is not addressable here
    say("%s: %#llx is memory of device %d, the current device is %d", what, p, a->device, cur_dev);
    return E_INVALID_VALUE;
  }
  *out = back_of(a, (uintptr_t)p);
  return OK;
}

CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, void *hs) {
  NEED_CTX
  if (n == 0) return OK;
  Stream *s = resolve(hs);
  if (!s) return E_INVALID_HANDLE;
  char *b;
  if (CUresult r = span(p, n, &b, "cuMemsetD8Async")) return r;
  enqueue(s, [b, v, n] { memset(b, v, n); });
  return OK;
}
CUresult cuMemsetD8_v2(CUdeviceptr p, unsigned char v, size_t n) {
  NEED_CTX
  if (n == 0) return OK;
  char *b;
  if (CUresult r = span(p, n, &b, "cuMemsetD8")) return r;
  flush_all();
  memset(b, v, n);
  return OK;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, void *hs) {
  NEED_CTX
  if (n == 0) return OK;
  Stream *s = resolve(hs);
  if (!s) return E_INVALID_HANDLE;
  if (!src || in_device_space((uintptr_t)src)) return E_INVALID_VALUE;
  char *b;
  if (CUresult r = span(dst, n, &b, "cuMemcpyHtoDAsync")) return r;
  bytes_htod += n;
  if (is_pinned(src, n)) {
    enqueue(s, [b, src, n] { memcpy(b, src, n); }); // reads src when it runs
  } else {
    // pageable source: the stream's earlier work first, then the source is read before returning
    run_all(s);
    memcpy(b, src, n);
  }
  return OK;
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, void *hs) {
  NEED_CTX
  if (n == 0) return OK;
  Stream *s = resolve(hs);
  if (!s) return E_INVALID_HANDLE;
  if (!dst || in_device_space((uintptr_t)dst)) return E_INVALID_VALUE;
  char *b;
  if (CUresult r = span(src, n, &b, "cuMemcpyDtoHAsync")) return r;
  bytes_dtoh += n;
  if (is_pinned(dst, n)) {
    enqueue(s, [dst, b, n] { memcpy(dst, b, n); });
  } else {
    // pageable destination: returns once the copy is done
    run_all(s);
    memcpy(dst, b, n);
  }
  return OK;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, void *hs) {
  NEED_CTX
  if (n == 0) return OK;
  Stream *s = resolve(hs);
  if (!s) return E_INVALID_HANDLE;
  char *bd, *bs;
  if (CUresult r = span(dst, n, &bd, "cuMemcpyDtoDAsync (destination)")) return r;
  if (CUresult r = span(src, n, &bs, "cuMemcpyDtoDAsync (source)")) return r;
  enqueue(s, [bd, bs, n] { memmove(bd, bs, n); });
  return OK;
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) {
  NEED_CTX
  flush_all();
  return cuMemcpyHtoDAsync_v2(dst, src, n, nullptr) ?: (flush_all(), sticky);
}
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) {
  NEED_CTX
  flush_all();
  return cuMemcpyDtoHAsync_v2(dst, src, n, nullptr) ?: (flush_all(), sticky);
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  NEED_CTX
  CUresult r = cuMemcpyDtoDAsync_v2(dst, src, n, nullptr);
  flush_all();
  return r ?: sticky;
}

CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr p) {
  NEED_INIT
  if (!data) return E_INVALID_VALUE;
  const Alloc *a = find((uintptr_t)p, 0);
  bool pin = is_pinned((const void *)p, 1);
  if (!a && !pin) return E_INVALID_VALUE; // memory CUDA does not know
  switch (attr) {
  case 2: *(unsigned *)data = a ? 2u : 1u; return OK; // memory type: device / host
  case 8: *(unsigned *)data = 0; return OK;           // not managed
  case 9: *(int *)data = a ? a->device : (cur_dev < 0 ? 0 : cur_dev); return OK;
  case 1: *(void **)data = &primary[a ? a->device : (cur_dev < 0 ? 0 : cur_dev)]; return OK;
  case 3: *(CUdeviceptr *)data = p; return OK;
  default: return E_INVALID_VALUE;
  }
}

} // extern "C"
