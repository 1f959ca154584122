// The CUDA stand-in's streams, events, modules and launches, and its entry points for the NCCL
// stand-in and the tests (the rest of the driver API is in cuda.cpp; tests/standin/, docs/gpu.md).
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cuda_internal.h"
#include "standin_api.h"
#include "threads.h"

using namespace standin_cuda;

extern "C" {

// ---------------------------------------------------------------- streams and events
CUresult cuStreamCreate(void **out, unsigned flags) {
  NEED_CTX
  if (!out || flags > 1) return E_INVALID_VALUE;
  Stream *s = new Stream{cur_dev, flags, false, {}, true};
  streams.push_back(s);
  *out = s;
  return OK;
}
CUresult cuStreamCreateWithPriority(void **out, unsigned flags, int prio) {
  (void)prio;
  return cuStreamCreate(out, flags);
}
CUresult cuStreamDestroy_v2(void *h) {
  NEED_INIT
  Stream *s = resolve(h);
  if (!s || s->legacy) return E_INVALID_HANDLE;
  run_all(s); // queued work still completes
  s->live = false;
  return OK;
}
CUresult cuStreamSynchronize(void *h) {
  NEED_CTX
  Stream *s = resolve(h);
  if (!s) return E_INVALID_HANDLE;
  if (s->legacy) flush_all();
  else run_all(s);
  return sticky;
}
CUresult cuStreamQuery(void *h) {
  NEED_CTX
  Stream *s = resolve(h);
  if (!s) return E_INVALID_HANDLE;
  // a query makes what can run now run (so that a caller polling a stream that waits inside NCCL
  // sees it finish once the other ranks join, or once the communicator is aborted)
  if (s->legacy) {
    bool all = true;
    for (Stream *o : streams)
      if (o->dev == s->dev && !(o->flags & 1)) all = step(o) && all;
    return all ? OK : E_NOT_READY;
  }
  return step(s) ? OK : E_NOT_READY;
}
CUresult cuEventCreate(void **out, unsigned flags) {
  NEED_CTX
  (void)flags;
  if (!out) return E_INVALID_VALUE;
  *out = new Event;
  return OK;
}
CUresult cuEventDestroy_v2(void *e) {
  NEED_INIT
  if (!e) return E_INVALID_HANDLE;
  ((Event *)e)->live = false; // kept: queued work may still name it
  return OK;
}
CUresult cuEventRecord(void *he, void *hs) {
  NEED_CTX
  Event *e = (Event *)he;
  Stream *s = resolve(hs);
  if (!e || !e->live || !s) return E_INVALID_HANDLE;
  e->s = s;
  e->done = false;
  enqueue(s, [e] { e->done = true; });
  return OK;
}
CUresult cuEventSynchronize(void *he) {
  NEED_CTX
  Event *e = (Event *)he;
  if (!e || !e->live) return E_INVALID_HANDLE;
  if (!e->done && e->s) run_all(e->s);
  return sticky;
}
CUresult cuEventQuery(void *he) {
  NEED_CTX
  Event *e = (Event *)he;
  if (!e || !e->live) return E_INVALID_HANDLE;
  return e->done ? OK : E_NOT_READY;
}
CUresult cuStreamWaitEvent(void *hs, void *he, unsigned flags) {
  NEED_CTX
  (void)flags;
  Stream *s = resolve(hs);
  Event *e = (Event *)he;
  if (!s || !e || !e->live) return E_INVALID_HANDLE;
  Stream *src = e->s;
  if (!e->done && src)
    enqueue_steps(s, [e, src] {
      if (!e->done) step(src);
      return e->done;
    });
  return OK;
}

// ---------------------------------------------------------------- modules and launches
CUresult cuModuleLoadData(void **out, const void *image) {
  NEED_CTX
  if (!out || !image) return E_INVALID_VALUE;
  const char *img = (const char *)image;
  const char *tag = "// parlops-standin-module ";
  if (strncmp(img, tag, strlen(tag)) != 0) {
    say("cuModuleLoadData: the image is not one made by the stand-in NVRTC (is a real libnvrtc first on the library path?)");
    return E_INVALID_IMAGE;
  }
  std::string path(img + strlen(tag));
  path = path.substr(0, path.find('\n'));
  void *dl = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    say("cuModuleLoadData: %s", dlerror());
    return E_INVALID_IMAGE;
  }
  auto init = (standin_init_fn)dlsym(dl, "__standin_init");
  auto lo = (char *)dlsym(dl, "__standin_shared_lo");
  auto hi = (char *)dlsym(dl, "__standin_shared_hi");
  if (!init) return E_INVALID_IMAGE;
  init(standin_threads_api(k_translate));
  Module *m = new Module{dl, lo ? *(char **)lo : nullptr, hi ? *(char **)hi : nullptr, true};
  *out = m;
  return OK;
}
CUresult cuModuleUnload(void *hm) {
  NEED_INIT
  Module *m = (Module *)hm;
  if (!m || !m->live) return E_INVALID_HANDLE;
  flush_all();
  m->live = false; // the library stays loaded: other loads of the same image share it
  return OK;
}
CUresult cuModuleGetFunction(void **out, void *hm, const char *name) {
  NEED_CTX
  Module *m = (Module *)hm;
  if (!out || !name) return E_INVALID_VALUE;
  if (!m || !m->live) return E_INVALID_HANDLE;
  auto pack = (standin_pack_fn)dlsym(m->dl, (std::string("__standin_pack_") + name).c_str());
  auto call = (standin_call_fn)dlsym(m->dl, (std::string("__standin_call_") + name).c_str());
  if (!pack || !call) return E_NOT_FOUND;
  *out = new Func{m, name, pack, call};
  return OK;
}
CUresult cuLaunchKernel(void *hf, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shmem, void *hs, void **params, void **extra) {
  NEED_CTX
  Func *f = (Func *)hf;
  if (!f || !f->m->live) return E_INVALID_HANDLE;
  Stream *s = resolve(hs);
  if (!s) return E_INVALID_HANDLE;
  if (extra || shmem) return E_INVALID_VALUE; // parlops passes neither
  if (!gx || !gy || !gz || !bx || !by || !bz || gy > 65535 || gz > 65535 || (unsigned long)bx * by * bz > 1024 ||
      bz > 64)
    return E_INVALID_VALUE;
  long size = f->pack(params, nullptr);
  std::shared_ptr<std::vector<unsigned char>> blob(new std::vector<unsigned char>((size_t)size + 16));
  long r = f->pack(params, blob->data());
  if (r < 0) {
    say("cuLaunchKernel(%s): argument %ld is a pointer into no live device allocation", f->name.c_str(), -r - 1);
    sticky = E_ILLEGAL_ADDRESS;
    return sticky;
  }
  standin_dim3 g{gx, gy, gz}, b{bx, by, bz};
  enqueue(s, [f, g, b, blob] {
    if (sticky) return;
    running_kernel = f->name.c_str();
    std::string why = run_kernel(f, g, b, blob->data());
    running_kernel = nullptr;
    if (!why.empty()) {
      say("kernel %s failed: %s", f->name.c_str(), why.c_str());
      sticky = E_LAUNCH_FAILED;
    }
  });
  return OK;
}

// ---------------------------------------------------------------- for the NCCL stand-in and tests
int standin_enqueue(void *hs, standin_op_fn fn, void *ctx) {
  Lock l(G);
  if (sticky) return sticky;
  Stream *s = resolve(hs);
  if (!s) return E_INVALID_HANDLE;
  enqueue_steps(s, [fn, ctx] { return fn(ctx) != 0; });
  return OK;
}
void *standin_device_span(const void *dev, size_t bytes) {
  Lock l(G);
  const Alloc *a = find((uintptr_t)dev, bytes);
  return a ? back_of(a, (uintptr_t)dev) : nullptr;
}
int standin_current_device(void) { return cur_dev; }
/* Tests: limit this process's device memory to `bytes` (of each device; -1: back to the environment's
   limit). Returns the bytes now in use on the current device. */
long long standin_set_memory_limit(long long bytes) {
  Lock l(G);
  limit_override = bytes;
  return cur_dev < 0 ? 0 : (long long)used[cur_dev];
}
/* Host <-> device bytes copied so far (for the tests' data-stays-on-the-device checks). */
void standin_transfer_counts(unsigned long long *htod, unsigned long long *dtoh) {
  *htod = bytes_htod;
  *dtoh = bytes_dtoh;
}

} // extern "C"
