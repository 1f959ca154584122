// The CUDA driver stand-in's internal state, shared by its translation units (cuda.cpp: init,
// devices, contexts, memory; cuda_streams.cpp: streams, events, modules, launches). Not an API.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "standin_api.h"

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
enum {
  OK = 0,
  E_INVALID_VALUE = 1,
  E_OUT_OF_MEMORY = 2,
  E_NOT_INITIALIZED = 3,
  E_NO_DEVICE = 100,
  E_INVALID_DEVICE = 101,
  E_INVALID_IMAGE = 200,
  E_INVALID_CONTEXT = 201,
  E_INVALID_HANDLE = 400,
  E_NOT_FOUND = 500,
  E_NOT_READY = 600,
  E_ILLEGAL_ADDRESS = 700,
  E_LAUNCH_FAILED = 719,
  E_NOT_SUPPORTED = 801,
};

namespace standin_cuda {

extern std::recursive_mutex G;
typedef std::lock_guard<std::recursive_mutex> Lock;
extern bool initialised;
extern CUresult sticky; // a kernel fault poisons the context, as on a device

void say(const char *fmt, ...);
long env_long(const char *name, long dflt);
int my_rank();
int ndevices();
bool host_access();

extern const size_t PAGE;
extern const uintptr_t DEV_SPAN;
extern char *dev_base;
struct Alloc {
  uintptr_t dev;   // what the caller sees
  size_t bytes;    // what the caller asked for
  char *back;      // backing pages (RW), then one guard page
  size_t mapped;   // bytes mapped at back (including the guard)
  size_t offset;   // dev - start of its pages (== back offset)
  int device;
};
struct Pinned {
  size_t bytes;
};
struct Ctx {
  int dev;
};
struct Stream {
  int dev;
  unsigned flags;
  bool legacy;
  std::deque<std::function<bool()>> q; // each returns false while it cannot finish yet (NCCL)
  bool live = true;
};
struct Event {
  Stream *s = nullptr;
  bool done = true;
  bool live = true;
};
struct Module {
  void *dl;
  char *shared_lo, *shared_hi;
  bool live = true;
};
struct Func {
  Module *m;
  std::string name;
  standin_pack_fn pack;
  standin_call_fn call;
};
extern std::map<uintptr_t, Alloc> allocs;
extern uintptr_t next_dev[64];
extern size_t used[64];
extern std::map<uintptr_t, Pinned> pinned;
extern std::atomic<unsigned long long> bytes_htod, bytes_dtoh;
extern long long limit_override;
size_t limit_bytes();
const Alloc *find(uintptr_t p, size_t bytes);
char *back_of(const Alloc *a, uintptr_t p);
bool is_pinned(const void *p, size_t bytes);
bool in_device_space(uintptr_t p);

extern thread_local int cur_dev;
extern Ctx primary[64];
extern std::vector<Stream *> streams;
extern Stream *legacy_stream[64];
void run_all(Stream *s);
bool step(Stream *s);
void flush_all();
Stream *resolve(void *h);
void enqueue(Stream *s, std::function<void()> f);
void enqueue_steps(Stream *s, std::function<bool()> f);

int k_translate(const void *d, void **h);
extern std::map<std::string, std::pair<unsigned long long, unsigned long long>> launch_stats;
std::string run_kernel(Func *f, standin_dim3 grid, standin_dim3 block, const unsigned char *blob);
extern const char *running_kernel;

} // namespace standin_cuda

// The checks at the top of a driver call: initialised (under the lock), and a current context not
// poisoned by a kernel fault.
#define NEED_INIT \
  Lock l(G);      \
  if (!initialised) return E_NOT_INITIALIZED;
#define NEED_CTX                             \
  NEED_INIT                                  \
  if (cur_dev < 0) return E_INVALID_CONTEXT; \
  if (sticky) return sticky;
