// The CUDA stand-in's execution model (tests/standin/, docs/gpu.md): the threads of a block run as
// fibers on one host thread, switched only at barriers (__syncthreads, the warp barrier of a shuffle)
// and at their end, in FIFO order; warps of 32 with CUDA's shuffle semantics (width, mask, exited
// lanes); blocks one after another. A missing barrier, a wrong shuffle width or a barrier only some
// threads reach makes a kernel give a wrong result or fail, as on a device.
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "standin_api.h"
#include "threads.h"

namespace {

const size_t PAGE = 4096;

// ---------------------------------------------------------------- fibers (x86-64)
#if !defined(__x86_64__)
#error "the CUDA stand-in's fibers are written for x86-64"
#endif
extern "C" void standin_swap(void **save, void *to);
asm(R"(
.text
.globl standin_swap
.type standin_swap,@function
standin_swap:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
.size standin_swap, .-standin_swap
)");

enum Wait { RUN, BLOCK_BAR, WARP_BAR, DONE };
struct Fiber {
  void *sp;
  char *stack;
  Wait wait;
  unsigned tid;
  standin_dim3 idx;
};
const size_t STACK = 256 * 1024;
std::vector<Fiber> fibers;
char *stacks = nullptr;
size_t nstacks = 0;
void *sched_sp;
Fiber *cur = nullptr;
standin_state state;
standin_call_fn cur_call;
const unsigned char *cur_blob;
std::string fault; // why the running kernel failed
uint64_t shfl_slot[1024];

// The scheduler of one block: a FIFO of runnable threads, counts of who waits where. A thread that
// waits or ends switches straight to the next runnable one (to the scheduler when there is none).
std::vector<unsigned> runq;
size_t rq_head = 0;
size_t alive = 0, at_block = 0;
std::vector<unsigned> warp_alive, warp_wait;

void make_runnable(Fiber &f) {
  f.wait = RUN;
  runq.push_back(f.tid);
}
// After `f` started waiting or ended: release the barriers that are now complete.
void release(Fiber &f) {
  unsigned w = f.tid / 32;
  if (warp_alive[w] && warp_wait[w] == warp_alive[w]) {
    warp_wait[w] = 0;
    for (size_t t = (size_t)w * 32; t < fibers.size() && t < (size_t)w * 32 + 32; t++)
      if (fibers[t].wait == WARP_BAR) make_runnable(fibers[t]);
  }
  if (alive && at_block == alive) {
    at_block = 0;
    for (auto &o : fibers)
      if (o.wait == BLOCK_BAR) make_runnable(o);
  }
}
void switch_from(Fiber *from) {
  if (rq_head < runq.size()) {
    Fiber *next = &fibers[runq[rq_head++]];
    cur = next;
    state.thread_idx = next->idx;
    if (next != from) standin_swap(&from->sp, next->sp);
  } else {
    standin_swap(&from->sp, sched_sp);
  }
}

extern "C" void standin_fiber_main() {
  cur_call(cur_blob);
  Fiber *me = cur;
  me->wait = DONE;
  alive--;
  warp_alive[me->tid / 32]--;
  release(*me);
  switch_from(me);
  abort(); // never resumed
}
asm(R"(
.text
.globl standin_fiber_entry
.type standin_fiber_entry,@function
standin_fiber_entry:
  call standin_fiber_main
  ud2
)");
extern "C" void standin_fiber_entry();

void yield_at(Wait w) {
  Fiber *me = cur;
  me->wait = w;
  if (w == BLOCK_BAR) at_block++;
  else warp_wait[me->tid / 32]++;
  release(*me);
  switch_from(me);
}

void k_syncthreads() { yield_at(BLOCK_BAR); }

uint64_t k_shfl(unsigned mask, uint64_t v, int kind, int arg, int width) {
  unsigned tid = cur->tid, lane = tid % 32, warp0 = tid - lane;
  if (width <= 0 || width > 32 || (width & (width - 1))) {
    if (fault.empty()) fault = "shuffle width " + std::to_string(width) + " is not a power of two up to 32";
  }
  shfl_slot[tid] = v;
  yield_at(WARP_BAR);
  unsigned w = (unsigned)(width > 0 && width <= 32 ? width : 32);
  unsigned seg = lane & ~(w - 1), rel = lane - seg;
  long src;
  switch (kind) {
  case 0: src = rel + (unsigned)arg < w ? (long)(lane + arg) : (long)lane; break;
  case 1: src = (long)rel - arg >= 0 ? (long)lane - arg : (long)lane; break;
  case 2: src = (long)(seg + ((rel ^ (unsigned)arg) & (w - 1))); break;
  default: src = (long)(seg + ((unsigned)arg & (w - 1))); break;
  }
  uint64_t r = v;
  unsigned srcu = (unsigned)src;
  if (!(mask & (1u << lane)) && fault.empty()) fault = "a lane outside the shuffle's mask took part";
  if (warp0 + srcu < fibers.size()) {
    if (fibers[warp0 + srcu].wait == DONE || !(mask & (1u << srcu))) {
      if (fault.empty()) fault = "a shuffle read a lane that has exited or is outside the mask";
    } else {
      r = shfl_slot[warp0 + srcu];
    }
  }
  yield_at(WARP_BAR); // nobody overwrites a slot before every lane has read
  return r;
}

standin_api api = {&state, k_syncthreads, k_shfl, nullptr};


bool ensure_stacks(size_t n) {
  if (n <= nstacks) return true;
  if (stacks) munmap(stacks, nstacks * (STACK + PAGE));
  nstacks = 0;
  void *p = mmap(nullptr, n * (STACK + PAGE), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    stacks = nullptr;
    return false;
  }
  stacks = (char *)p;
  for (size_t i = 0; i < n; i++) mprotect(stacks + i * (STACK + PAGE), PAGE, PROT_NONE); // overflow guard
  nstacks = n;
  return true;
}

} // namespace

std::string standin_threads_run(standin_call_fn call, char *shared_lo, char *shared_hi, standin_dim3 grid,
                                standin_dim3 block, const unsigned char *blob) {
  size_t nt = (size_t)block.x * block.y * block.z;
  if (!ensure_stacks(nt)) return "no memory for the block's fiber stacks";
  fibers.assign(nt, Fiber{});
  state.grid_dim = grid;
  state.block_dim = block;
  cur_call = call;
  cur_blob = blob;
  fault.clear();
  for (unsigned bz = 0; bz < grid.z; bz++)
    for (unsigned by = 0; by < grid.y; by++)
      for (unsigned bx = 0; bx < grid.x; bx++) {
        state.block_idx = {bx, by, bz};
        if (shared_lo) memset(shared_lo, 0xff, shared_hi - shared_lo);
        for (size_t t = 0; t < nt; t++) {
          Fiber &fb = fibers[t];
          fb.tid = (unsigned)t;
          fb.idx = {(unsigned)(t % block.x), (unsigned)(t / block.x % block.y), (unsigned)(t / ((size_t)block.x * block.y))};
          fb.wait = RUN;
          // each stack's top at its own cache-line offset: stacks that all begin at the same offset in
          // their pages map their hot frames to one cache set, and every switch misses
          char *top = stacks + t * (STACK + PAGE) + PAGE + STACK - (t % 64) * 64;
          void **sp = (void **)top;
          // where the first switch returns to; that `ret` leaves rsp at `top` (16-byte aligned), so the
          // entry's call enters standin_fiber_main with rsp = 8 mod 16, as the ABI wants
          *--sp = (void *)standin_fiber_entry;
          for (int r = 0; r < 6; r++) *--sp = nullptr;
          fb.sp = sp;
        }
        alive = nt;
        at_block = 0;
        warp_alive.assign((nt + 31) / 32, 0);
        warp_wait.assign((nt + 31) / 32, 0);
        for (size_t t = 0; t < nt; t++) warp_alive[t / 32]++;
        runq.clear();
        rq_head = 0;
        for (size_t t = 0; t < nt; t++) runq.push_back((unsigned)t);
        while (rq_head < runq.size()) {
          Fiber *fb = &fibers[runq[rq_head++]];
          cur = fb;
          state.thread_idx = fb->idx;
          standin_swap(&sched_sp, fb->sp);
          if (rq_head == runq.size()) { // keep the queue short
            runq.clear();
            rq_head = 0;
          }
        }
        if (!fault.empty()) return fault + " (block " + std::to_string(bx) + ")";
        if (alive) {
          std::string m = "threads wait at barriers that cannot complete (block " + std::to_string(bx) + ":";
          for (size_t t = 0; t < nt && t < 64; t++)
            m += fibers[t].wait == BLOCK_BAR ? " s" : fibers[t].wait == WARP_BAR ? " w" : fibers[t].wait == DONE ? " x" : " r";
          return m + ")";
        }
      }
  return "";
}


standin_api *standin_threads_api(int (*translate)(const void *, void **)) {
  api.translate = translate;
  return &api;
}
