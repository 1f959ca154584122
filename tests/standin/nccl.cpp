// CPU stand-in for NCCL (libnccl.so.2), a test instrument of `make test`: communicators between the
// processes of one node through a shared file mapping named by the unique id; all-reduce, send and
// receive queued on the stand-in driver's streams (they run when the stream is waited for, like any
// device work), groups progressed together at ncclGroupEnd. Device buffers only: a host pointer is an
// invalid argument, as for NCCL without registered host memory.
//
// Failures: CUDA_STANDIN_NCCL_FAIL_RANK=r with CUDA_STANDIN_NCCL_FAIL_AT=k makes rank r's k-th
// operation (counting from 1) return ncclSystemError. A collective that waits more than
// CUDA_STANDIN_NCCL_TIMEOUT seconds (default 60) for the other ranks aborts the process with a
// message: a real NCCL would wait for ever.
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "standin_api.h"

typedef int ncclResult_t;
enum { N_OK = 0, N_CUDA = 1, N_SYSTEM = 2, N_INTERNAL = 3, N_ARG = 4, N_USAGE = 5 };
enum { T_I8, T_U8, T_I32, T_U32, T_I64, T_U64, T_F16, T_F32, T_F64, T_BF16 };
enum { OP_SUM, OP_PROD, OP_MAX, OP_MIN, OP_AVG };

typedef struct {
  char internal[128];
} ncclUniqueId;

namespace {
const size_t SLOT = 1 << 20; // bytes of one rank's all-reduce slot
const size_t BOX = 1 << 17;  // bytes of one ordered pair's mailbox
const int MAXR = 64;

struct Box {
  std::atomic<uint64_t> head, tail; // bytes written / read in total
  char pad[48];
  char data[BOX];
};
struct Shared {
  std::atomic<int> arrived;
  char pad0[60];
  std::atomic<uint64_t> barrier;
  char pad1[56];
  // then nranks slots of SLOT bytes, then nranks * nranks boxes
};

struct Comm {
  int n, rank, dev;
  Shared *sh;
  size_t bytes;
  uint64_t barriers = 0; // barriers this rank has passed
  char *slot(int r) { return (char *)sh + sizeof(Shared) + (size_t)r * SLOT; }
  Box *box(int from, int to) { return (Box *)((char *)sh + sizeof(Shared) + (size_t)n * SLOT) + (size_t)from * n + to; }
};

int my_rank_env() {
  for (const char *v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    const char *s = getenv(v);
    if (s && *s) return atoi(s);
  }
  return 0;
}
long ops_done = 0;
long fail_in = 0; // standin_nccl_fail_after: the k-th next operation fails (0: none)
bool injected_failure() {
  if (fail_in > 0 && --fail_in == 0) return true;
  const char *r = getenv("CUDA_STANDIN_NCCL_FAIL_RANK");
  if (!r || !*r || atoi(r) != my_rank_env()) return false;
  const char *a = getenv("CUDA_STANDIN_NCCL_FAIL_AT");
  long at = a && *a ? atol(a) : 1;
  return ++ops_done == at;
}
double now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
double timeout_s() {
  const char *t = getenv("CUDA_STANDIN_NCCL_TIMEOUT");
  return t && *t ? atof(t) : 60.0;
}
void stuck(const char *what, Comm *c) {
  fprintf(stderr,
          "[nccl stand-in %d] rank %d of %d waited %.0f s in %s: the other ranks never joined (a real NCCL "
          "would wait for ever); aborting\n",
          (int)getpid(), c->rank, c->n, timeout_s(), what);
  fflush(stderr);
  abort();
}
void barrier(Comm *c) {
  c->barriers++;
  c->sh->barrier.fetch_add(1);
  double t0 = now();
  int spins = 0;
  while (c->sh->barrier.load() < c->barriers * (uint64_t)c->n) {
    if (++spins > 1000) {
      sched_yield();
      if (spins % 1024 == 0 && now() - t0 > timeout_s()) stuck("a collective", c);
    }
  }
}
size_t tsize(int t) {
  switch (t) {
  case T_I8: case T_U8: return 1;
  case T_I32: case T_U32: case T_F32: return 4;
  case T_I64: case T_U64: case T_F64: return 8;
  default: return 0; // half types: not used by parlops
  }
}
template <class V> void reduce_into(V *out, Comm *c, size_t off, size_t cnt, int op) {
  for (size_t i = 0; i < cnt; i++) {
    V a = ((V *)(c->slot(0) + off))[i];
    for (int r = 1; r < c->n; r++) {
      V b = ((V *)(c->slot(r) + off))[i];
      switch (op) {
      case OP_SUM: case OP_AVG: a = a + b; break;
      case OP_PROD: a = a * b; break;
      case OP_MAX: a = a < b ? b : a; break;
      default: a = b < a ? b : a;
      }
    }
    if (op == OP_AVG) a = (V)(a / (V)c->n);
    out[i] = a;
  }
}

struct AllReduce {
  const char *send;
  char *recv;
  size_t count;
  int type, op;
  Comm *c;
};
void run_allreduce(void *p) {
  AllReduce *a = (AllReduce *)p;
  Comm *c = a->c;
  size_t es = tsize(a->type), per = SLOT / es;
  for (size_t done = 0; done < a->count;) {
    size_t cnt = a->count - done < per ? a->count - done : per;
    memcpy(c->slot(c->rank), a->send + done * es, cnt * es);
    barrier(c);
    std::vector<char> out(cnt * es + 8);
    switch (a->type) {
    case T_I8: reduce_into((int8_t *)out.data(), c, 0, cnt, a->op); break;
    case T_U8: reduce_into((uint8_t *)out.data(), c, 0, cnt, a->op); break;
    case T_I32: reduce_into((int32_t *)out.data(), c, 0, cnt, a->op); break;
    case T_U32: reduce_into((uint32_t *)out.data(), c, 0, cnt, a->op); break;
    case T_I64: reduce_into((int64_t *)out.data(), c, 0, cnt, a->op); break;
    case T_U64: reduce_into((uint64_t *)out.data(), c, 0, cnt, a->op); break;
    case T_F32: reduce_into((float *)out.data(), c, 0, cnt, a->op); break;
    default: reduce_into((double *)out.data(), c, 0, cnt, a->op); break;
    }
    barrier(c); // every rank has read every slot
    memcpy(a->recv + done * es, out.data(), cnt * es);
    done += cnt;
  }
  delete a;
}

struct P2P {
  bool send;
  char *buf;
  size_t bytes, moved;
  int peer;
  Comm *c;
};
struct Group {
  std::vector<P2P> ops;
};
thread_local int group_depth = 0;
thread_local Group *group = nullptr;
thread_local void *group_stream = nullptr;

// Move what can move now; true when the operation is complete.
bool progress(P2P &o) {
  Comm *c = o.c;
  Box *b = o.send ? c->box(c->rank, o.peer) : c->box(o.peer, c->rank);
  while (o.moved < o.bytes) {
    uint64_t h = b->head.load(), t = b->tail.load();
    if (o.send) {
      size_t room = BOX - (size_t)(h - t);
      if (!room) return false;
      size_t at = (size_t)(h % BOX), k = o.bytes - o.moved;
      if (k > room) k = room;
      if (k > BOX - at) k = BOX - at;
      memcpy(b->data + at, o.buf + o.moved, k);
      b->head.store(h + k);
      o.moved += k;
    } else {
      size_t avail = (size_t)(h - t);
      if (!avail) return false;
      size_t at = (size_t)(t % BOX), k = o.bytes - o.moved;
      if (k > avail) k = avail;
      if (k > BOX - at) k = BOX - at;
      memcpy(o.buf + o.moved, b->data + at, k);
      b->tail.store(t + k);
      o.moved += k;
    }
  }
  return true;
}
void run_group(void *p) {
  Group *g = (Group *)p;
  double t0 = now();
  size_t left = g->ops.size();
  std::vector<bool> done(left, false);
  int spins = 0;
  while (left) {
    bool moved = false;
    for (size_t i = 0; i < g->ops.size(); i++)
      if (!done[i]) {
        size_t before = g->ops[i].moved;
        if (progress(g->ops[i])) {
          done[i] = true;
          left--;
        }
        moved |= g->ops[i].moved != before;
      }
    if (!moved && left && ++spins > 1000) {
      sched_yield();
      if (spins % 1024 == 0 && now() - t0 > timeout_s()) stuck("send/receive", g->ops[0].c);
    }
  }
  delete g;
}
ncclResult_t queue_p2p(bool send, void *buf, size_t count, int type, int peer, Comm *c, void *stream) {
  if (!c) return N_ARG;
  if (injected_failure()) return N_SYSTEM;
  size_t es = tsize(type);
  if (!es || peer < 0 || peer >= c->n) return N_ARG;
  char *b = (char *)standin_device_span(buf, count * es);
  if (count && !b) {
    fprintf(stderr, "[nccl stand-in] %s: %p is not device memory of %zu bytes\n", send ? "ncclSend" : "ncclRecv",
            buf, count * es);
    return N_ARG;
  }
  P2P o{send, b, count * es, 0, peer, c};
  if (group_depth > 0) {
    if (!group) {
      group = new Group;
      group_stream = stream;
    } else if (group_stream != stream) {
      return N_USAGE; // parlops keeps a group on one stream
    }
    group->ops.push_back(o);
    return N_OK;
  }
  Group *g = new Group;
  g->ops.push_back(o);
  return standin_enqueue(stream, run_group, g) ? N_CUDA : N_OK;
}
} // namespace

extern "C" {

/* Tests: this process's k-th next NCCL operation (communicator creation, all-reduce, send, receive)
   returns ncclSystemError (k = 0: none). */
void standin_nccl_fail_after(long k) { fail_in = k; }

const char *ncclGetErrorString(ncclResult_t r) {
  switch (r) {
  case N_OK: return "no error";
  case N_CUDA: return "unhandled cuda error (stand-in)";
  case N_SYSTEM: return "unhandled system error (stand-in)";
  case N_INTERNAL: return "internal error (stand-in)";
  case N_ARG: return "invalid argument (stand-in)";
  case N_USAGE: return "invalid usage (stand-in)";
  default: return "unknown result code";
  }
}
const char *ncclGetLastError(void *comm) {
  (void)comm;
  return "";
}
ncclResult_t ncclGetVersion(int *v) {
  if (!v) return N_ARG;
  *v = 22703;
  return N_OK;
}
ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  if (!id) return N_ARG;
  static int counter = 0;
  memset(id->internal, 0, sizeof id->internal);
  timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  snprintf(id->internal, sizeof id->internal, "standin-%d-%ld-%ld-%d", (int)getpid(), (long)t.tv_sec,
           (long)t.tv_nsec, counter++);
  return N_OK;
}
ncclResult_t ncclCommInitRank(Comm **out, int n, ncclUniqueId id, int rank) {
  if (!out || n < 1 || n > MAXR || rank < 0 || rank >= n) return N_ARG;
  if (strncmp(id.internal, "standin-", 8) != 0) return N_ARG;
  if (injected_failure()) return N_SYSTEM;
  const char *t = getenv("TMPDIR");
  std::string path = std::string(t && *t ? t : "/tmp") + "/parlops-nccl-" + std::string(id.internal, strnlen(id.internal, 100));
  size_t bytes = sizeof(Shared) + (size_t)n * SLOT + (size_t)n * n * sizeof(Box);
  int fd = open(path.c_str(), O_RDWR | O_CREAT, 0600);
  if (fd < 0) return N_SYSTEM;
  if (ftruncate(fd, (off_t)bytes) != 0) {
    close(fd);
    return N_SYSTEM;
  }
  void *m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return N_SYSTEM;
  Comm *c = new Comm{n, rank, standin_current_device(), (Shared *)m, bytes};
  c->sh->arrived.fetch_add(1);
  double t0 = now();
  while (c->sh->arrived.load() < n) {
    sched_yield();
    if (now() - t0 > timeout_s()) stuck("ncclCommInitRank", c);
  }
  barrier(c); // everyone has mapped it
  if (rank == 0) unlink(path.c_str());
  *out = c;
  return N_OK;
}
ncclResult_t ncclCommDestroy(Comm *c) {
  if (!c) return N_ARG;
  munmap(c->sh, c->bytes);
  delete c;
  return N_OK;
}
ncclResult_t ncclCommAbort(Comm *c) { return ncclCommDestroy(c); }
ncclResult_t ncclCommCount(const Comm *c, int *n) {
  if (!c || !n) return N_ARG;
  *n = c->n;
  return N_OK;
}
ncclResult_t ncclCommUserRank(const Comm *c, int *r) {
  if (!c || !r) return N_ARG;
  *r = c->rank;
  return N_OK;
}
ncclResult_t ncclCommCuDevice(const Comm *c, int *d) {
  if (!c || !d) return N_ARG;
  *d = c->dev;
  return N_OK;
}
ncclResult_t ncclCommGetAsyncError(Comm *c, ncclResult_t *e) {
  if (!c || !e) return N_ARG;
  *e = N_OK;
  return N_OK;
}
ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, int type, int op, Comm *c, void *stream) {
  if (!c || op < OP_SUM || op > OP_AVG || !tsize(type)) return N_ARG;
  if (injected_failure()) return N_SYSTEM;
  if (group_depth > 0) return N_USAGE; // parlops groups only point-to-point traffic
  size_t es = tsize(type);
  const char *s = (const char *)standin_device_span(send, count * es);
  char *r = (char *)standin_device_span(recv, count * es);
  if (count && (!s || !r)) {
    fprintf(stderr, "[nccl stand-in] ncclAllReduce: %p or %p is not device memory of %zu bytes\n", send, recv,
            count * es);
    return N_ARG;
  }
  AllReduce *a = new AllReduce{s, r, count, type, op, c};
  return standin_enqueue(stream, run_allreduce, a) ? N_CUDA : N_OK;
}
ncclResult_t ncclSend(const void *buf, size_t count, int type, int peer, Comm *c, void *stream) {
  return queue_p2p(true, (void *)buf, count, type, peer, c, stream);
}
ncclResult_t ncclRecv(void *buf, size_t count, int type, int peer, Comm *c, void *stream) {
  return queue_p2p(false, buf, count, type, peer, c, stream);
}
ncclResult_t ncclGroupStart(void) {
  group_depth++;
  return N_OK;
}
ncclResult_t ncclGroupEnd(void) {
  if (group_depth <= 0) return N_USAGE;
  if (--group_depth > 0) return N_OK;
  Group *g = group;
  void *s = group_stream;
  group = nullptr;
  group_stream = nullptr;
  if (!g) return N_OK;
  return standin_enqueue(s, run_group, g) ? N_CUDA : N_OK;
}

} // extern "C"
