// CPU stand-in for NCCL (libnccl.so.2), a test instrument of `make test`: communicators between the
// processes of one node through a shared file mapping named by the unique id; all-reduce, send and
// receive queued on the stand-in driver's streams (they run when the stream is waited for or
// queried, like any device work), groups progressed together at ncclGroupEnd. Device buffers only: a
// host pointer is an invalid argument, as for NCCL without registered host memory.
//
// Blocking and non-blocking communicators (ncclCommInitRankConfig with config.blocking = 0): a
// non-blocking one answers ncclInProgress from its initialisation and from every second operation,
// and ncclCommGetAsyncError says when the call is complete, as NCCL's do. ncclCommAbort ends this
// rank's operations of the communicator (queued ones finish without moving data); the other ranks'
// operations go on waiting, as in NCCL.
//
// Failures: CUDA_STANDIN_NCCL_FAIL_RANK=r with CUDA_STANDIN_NCCL_FAIL_AT=k makes rank r's k-th
// operation (communicator creation, all-reduce, send, receive; counting from 1) fail, and
// standin_nccl_fail_after(k) this process's k-th next one. CUDA_STANDIN_NCCL_FAIL_MODE (or
// standin_nccl_fail_mode) says how: `call` (default), the call returns ncclSystemError; `async`, the
// call succeeds, the operation never finishes, and ncclCommGetAsyncError reports ncclSystemError
// (a network failure seen by one rank). An operation, or a non-blocking initialisation, that waits
// more than CUDA_STANDIN_NCCL_TIMEOUT seconds (default 60) for the other ranks aborts the process with
// a message: a real NCCL would wait for ever.
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
enum { N_OK = 0, N_CUDA = 1, N_SYSTEM = 2, N_INTERNAL = 3, N_ARG = 4, N_USAGE = 5, N_REMOTE = 6, N_INPROGRESS = 7 };
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
  std::string path;
  bool blocking = true;
  int init = 1;          // 1: waiting for every rank to map; 2: in the mapping barrier; 0: ready
  bool init_broken = false; // an injected asynchronous failure of the initialisation
  double t0 = 0;         // when the initialisation started
  uint64_t barriers = 0; // barriers this rank has entered
  uint64_t target = 0;   // the initialisation barrier's count
  std::atomic<int> refs{1}; // the caller's, and one per queued operation
  std::atomic<bool> aborted{false};
  std::atomic<int> async_err{N_OK};
  int calls = 0;       // operations called (non-blocking: every second one answers ncclInProgress)
  int in_progress = 0; // ncclCommGetAsyncError answers ncclInProgress this many more times
  char *slot(int r) { return (char *)sh + sizeof(Shared) + (size_t)r * SLOT; }
  Box *box(int from, int to) { return (Box *)((char *)sh + sizeof(Shared) + (size_t)n * SLOT) + (size_t)from * n + to; }
};
void unref(Comm *c) {
  if (c->refs.fetch_sub(1) == 1) {
    munmap(c->sh, c->bytes);
    delete c;
  }
}

int my_rank_env() {
  for (const char *v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    const char *s = getenv(v);
    if (s && *s) return atoi(s);
  }
  return 0;
}
long ops_done = 0;
long fail_in = 0;     // standin_nccl_fail_after: the k-th next operation fails (0: none)
int fail_mode = -1;   // standin_nccl_fail_mode: 0 the call fails, 1 asynchronously (-1: the environment's)
char last_error[200] = "";
enum Injected { NONE, CALL, ASYNC };
Injected injected_failure(const char *what) {
  bool now_ = false;
  if (fail_in > 0 && --fail_in == 0) now_ = true;
  const char *r = getenv("CUDA_STANDIN_NCCL_FAIL_RANK");
  if (!now_ && r && *r && atoi(r) == my_rank_env()) {
    const char *a = getenv("CUDA_STANDIN_NCCL_FAIL_AT");
    long at = a && *a ? atol(a) : 1;
    now_ = ++ops_done == at;
  }
  if (!now_) return NONE;
  int mode = fail_mode;
  if (mode < 0) {
    const char *m = getenv("CUDA_STANDIN_NCCL_FAIL_MODE");
    mode = m && strcmp(m, "async") == 0 ? 1 : 0;
  }
  snprintf(last_error, sizeof last_error, "stand-in: injected %s failure of %s on process rank %d",
           mode ? "asynchronous" : "", what, my_rank_env());
  return mode ? ASYNC : CALL;
}
double now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}
double timeout_s() {
  static double t = -1;
  if (t < 0) {
    const char *e = getenv("CUDA_STANDIN_NCCL_TIMEOUT");
    t = e && *e ? atof(e) : 60.0;
  }
  return t;
}
[[noreturn]] void stuck(const char *what, Comm *c) {
  fprintf(stderr,
          "[nccl stand-in %d] rank %d of %d waited %.0f s in %s: the other ranks never joined (a real NCCL "
          "would wait for ever); aborting\n",
          (int)getpid(), c->rank, c->n, timeout_s(), what);
  fflush(stderr);
  abort();
}
// Still waiting at `t0` + timeout? (0: not done, for a step function)
int waiting(double t0, const char *what, Comm *c) {
  if (now() - t0 > timeout_s()) stuck(what, c);
  return 0;
}
// Enter the next barrier of c; returns the count at which every rank has entered it.
uint64_t arrive(Comm *c) {
  c->barriers++;
  c->sh->barrier.fetch_add(1);
  return c->barriers * (uint64_t)c->n;
}
bool passed(Comm *c, uint64_t target) { return c->sh->barrier.load() >= target; }

// One step of a communicator's initialisation: true when it is complete (or aborted).
bool step_init(Comm *c) {
  if (c->aborted) return true;
  if (c->init_broken) {
    c->async_err = N_SYSTEM;
    if (now() - c->t0 > timeout_s()) stuck("a failed ncclCommInitRankConfig (never aborted)", c);
    return false;
  }
  if (c->init == 1) {
    if (c->sh->arrived.load() < c->n) return waiting(c->t0, "ncclCommInitRank", c);
    c->target = arrive(c);
    c->init = 2;
  }
  if (c->init == 2) {
    if (!passed(c, c->target)) return waiting(c->t0, "ncclCommInitRank", c);
    if (c->rank == 0) unlink(c->path.c_str()); // every rank has mapped it
    c->init = 0;
  }
  return true;
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

// An operation that failed asynchronously: it reports the failure and never finishes (until its
// communicator is aborted, or the timeout).
int broken(Comm *c, double &t0, const char *what) {
  c->async_err = N_SYSTEM;
  if (t0 == 0) t0 = now();
  return waiting(t0, what, c);
}

struct AllReduce {
  const char *send;
  char *recv;
  size_t count;
  int type, op;
  Comm *c;
  bool broken;
  size_t done = 0;
  int phase = 0; // 0: slot free; 1: slot written, in the first barrier; 2: reduced, in the second
  uint64_t target = 0;
  double t0 = 0;
  std::vector<char> out;
};
int step_allreduce(void *p) {
  AllReduce *a = (AllReduce *)p;
  Comm *c = a->c;
  if (!c->aborted) {
    if (a->broken) return broken(c, a->t0, "a failed ncclAllReduce (never aborted)");
    size_t es = tsize(a->type), per = SLOT / es;
    while (a->done < a->count) {
      size_t cnt = a->count - a->done < per ? a->count - a->done : per;
      if (a->phase == 0) {
        memcpy(c->slot(c->rank), a->send + a->done * es, cnt * es);
        a->target = arrive(c);
        a->phase = 1;
        a->t0 = now();
      }
      if (a->phase == 1) {
        if (!passed(c, a->target)) return waiting(a->t0, "ncclAllReduce", c);
        a->out.assign(cnt * es + 8, 0);
        char *o = a->out.data();
        switch (a->type) {
        case T_I8: reduce_into((int8_t *)o, c, 0, cnt, a->op); break;
        case T_U8: reduce_into((uint8_t *)o, c, 0, cnt, a->op); break;
        case T_I32: reduce_into((int32_t *)o, c, 0, cnt, a->op); break;
        case T_U32: reduce_into((uint32_t *)o, c, 0, cnt, a->op); break;
        case T_I64: reduce_into((int64_t *)o, c, 0, cnt, a->op); break;
        case T_U64: reduce_into((uint64_t *)o, c, 0, cnt, a->op); break;
        case T_F32: reduce_into((float *)o, c, 0, cnt, a->op); break;
        default: reduce_into((double *)o, c, 0, cnt, a->op); break;
        }
        a->target = arrive(c); // every rank has read every slot when this barrier is passed
        a->phase = 2;
        a->t0 = now();
      }
      if (!passed(c, a->target)) return waiting(a->t0, "ncclAllReduce", c);
      memcpy(a->recv + a->done * es, a->out.data(), cnt * es);
      a->done += cnt;
      a->phase = 0;
    }
  }
  unref(c);
  delete a;
  return 1;
}

struct P2P {
  bool send;
  char *buf;
  size_t bytes, moved;
  int peer;
  bool done;
};
struct Group {
  Comm *c = nullptr;
  std::vector<P2P> ops;
  bool broken = false;
  double t0 = 0;
};
thread_local int group_depth = 0;
thread_local Group *group = nullptr;
thread_local void *group_stream = nullptr;

// Move what can move now; true when the operation is complete.
bool progress(Comm *c, P2P &o) {
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
int step_group(void *p) {
  Group *g = (Group *)p;
  Comm *c = g->c;
  if (!c->aborted) {
    if (g->broken) return broken(c, g->t0, "a failed send/receive (never aborted)");
    if (g->t0 == 0) g->t0 = now();
    bool left = false;
    for (P2P &o : g->ops)
      if (!o.done) {
        size_t before = o.moved;
        o.done = progress(c, o);
        if (o.moved != before) g->t0 = now(); // the timeout counts from the last movement
        left |= !o.done;
      }
    if (left) return waiting(g->t0, "send/receive", c);
  }
  unref(c);
  delete g;
  return 1;
}
// Queue g on stream (g holds a reference to its communicator, taken when g was made, until it has
// run: a communicator aborted while a group is open stays mapped).
ncclResult_t queue_group(Group *g, void *stream) {
  if (standin_enqueue(stream, step_group, g)) {
    unref(g->c);
    delete g;
    return N_CUDA;
  }
  return N_OK;
}
// What an operation on c returns once queued: a non-blocking communicator answers ncclInProgress to
// every second call (ncclCommGetAsyncError then says when it is complete).
ncclResult_t queued(Comm *c) {
  if (c->blocking || ++c->calls % 2) return N_OK;
  c->in_progress = 1;
  return N_INPROGRESS;
}
// Is c usable for an operation?
ncclResult_t usable(Comm *c) {
  if (!c) return N_ARG;
  if (c->aborted || c->init) return N_USAGE;
  return N_OK;
}
ncclResult_t queue_p2p(bool send, void *buf, size_t count, int type, int peer, Comm *c, void *stream) {
  if (ncclResult_t u = usable(c)) return u;
  Injected inj = injected_failure(send ? "ncclSend" : "ncclRecv");
  if (inj == CALL) return N_SYSTEM;
  size_t es = tsize(type);
  if (!es || peer < 0 || peer >= c->n) return N_ARG;
  char *b = (char *)standin_device_span(buf, count * es);
  if (count && !b) {
    fprintf(stderr, "[nccl stand-in] %s: %p is not device memory of %zu bytes\n", send ? "ncclSend" : "ncclRecv",
            buf, count * es);
    return N_ARG;
  }
  P2P o{send, b, count * es, 0, peer, false};
  if (group_depth > 0) {
    if (!group) {
      group = new Group;
      group->c = c;
      c->refs.fetch_add(1);
      group_stream = stream;
    } else if (group_stream != stream || group->c != c) {
      return N_USAGE; // parlops keeps a group on one stream and one communicator
    }
    group->ops.push_back(o);
    group->broken |= inj == ASYNC;
    return N_OK;
  }
  Group *g = new Group;
  g->c = c;
  c->refs.fetch_add(1);
  g->ops.push_back(o);
  g->broken = inj == ASYNC;
  if (ncclResult_t r = queue_group(g, stream)) return r;
  return queued(c);
}

struct Config { // the leading members of ncclConfig_t, which NCCL reads as far as `size` says
  size_t size;
  unsigned magic, version;
  int blocking;
};

ncclResult_t create(Comm **out, int n, const ncclUniqueId &id, int rank, bool blocking) {
  if (!out || n < 1 || n > MAXR || rank < 0 || rank >= n) return N_ARG;
  *out = nullptr;
  if (strncmp(id.internal, "standin-", 8) != 0) return N_ARG;
  Injected inj = injected_failure("ncclCommInitRank");
  if (inj == CALL) return N_SYSTEM;
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
  Comm *c = new Comm;
  c->n = n;
  c->rank = rank;
  c->dev = standin_current_device();
  c->sh = (Shared *)m;
  c->bytes = bytes;
  c->path = path;
  c->blocking = blocking;
  c->init_broken = inj == ASYNC;
  c->t0 = now();
  if (!c->init_broken) c->sh->arrived.fetch_add(1);
  *out = c;
  return N_OK;
}
} // namespace

extern "C" {

/* Tests: this process's k-th next NCCL operation (communicator creation, all-reduce, send, receive)
   fails (k = 0: none), as standin_nccl_fail_mode says. */
void standin_nccl_fail_after(long k) { fail_in = k; }
/* Tests: how an injected failure shows: 0 the call returns ncclSystemError; 1 asynchronously (the call
   succeeds, the operation never finishes, ncclCommGetAsyncError reports ncclSystemError); -1 as
   CUDA_STANDIN_NCCL_FAIL_MODE says. */
void standin_nccl_fail_mode(int mode) { fail_mode = mode; }

const char *ncclGetErrorString(ncclResult_t r) {
  switch (r) {
  case N_OK: return "no error";
  case N_CUDA: return "unhandled cuda error (stand-in)";
  case N_SYSTEM: return "unhandled system error (stand-in)";
  case N_INTERNAL: return "internal error (stand-in)";
  case N_ARG: return "invalid argument (stand-in)";
  case N_USAGE: return "invalid usage (stand-in)";
  case N_REMOTE: return "remote process exited or there was a network error (stand-in)";
  case N_INPROGRESS: return "NCCL operation in progress (stand-in)";
  default: return "unknown result code";
  }
}
const char *ncclGetLastError(void *comm) {
  (void)comm;
  return last_error;
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
  if (ncclResult_t r = create(out, n, id, rank, true)) return r;
  Comm *c = *out;
  for (unsigned spins = 0; !step_init(c); spins++)
    if (spins > 64) sched_yield();
  if (c->init_broken) return N_SYSTEM;
  return N_OK;
}
ncclResult_t ncclCommInitRankConfig(Comm **out, int n, ncclUniqueId id, int rank, const Config *config) {
  bool blocking = true;
  if (config) {
    if (config->magic != 0xcafebeefu) return N_ARG;
    if (config->size >= 20 && config->version >= 21400 && config->blocking != (int)0x80000000)
      blocking = config->blocking != 0;
  }
  if (blocking) return ncclCommInitRank(out, n, id, rank);
  if (ncclResult_t r = create(out, n, id, rank, false)) return r;
  return step_init(*out) && !(*out)->init_broken ? N_OK : N_INPROGRESS;
}
ncclResult_t ncclCommGetAsyncError(Comm *c, ncclResult_t *e) {
  if (!c || !e) return N_ARG;
  if (c->init && !c->aborted && !step_init(c)) {
    *e = c->async_err ? (ncclResult_t)c->async_err : N_INPROGRESS;
    return N_OK;
  }
  if (c->async_err) {
    *e = c->async_err;
  } else if (c->in_progress > 0) {
    c->in_progress--;
    *e = N_INPROGRESS;
  } else {
    *e = N_OK;
  }
  return N_OK;
}
ncclResult_t ncclCommDestroy(Comm *c) {
  if (!c) return N_ARG;
  unref(c); // queued operations keep it until they have run
  return N_OK;
}
ncclResult_t ncclCommAbort(Comm *c) {
  if (!c) return N_ARG;
  c->aborted = true; // this rank's queued operations finish without moving data
  if (c->init) unlink(c->path.c_str()); // (an initialisation left unfinished)
  unref(c);
  return N_OK;
}
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
ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, int type, int op, Comm *c, void *stream) {
  if (ncclResult_t u = usable(c)) return u;
  if (op < OP_SUM || op > OP_AVG || !tsize(type)) return N_ARG;
  Injected inj = injected_failure("ncclAllReduce");
  if (inj == CALL) return N_SYSTEM;
  if (group_depth > 0) return N_USAGE; // parlops groups only point-to-point traffic
  size_t es = tsize(type);
  const char *s = (const char *)standin_device_span(send, count * es);
  char *r = (char *)standin_device_span(recv, count * es);
  if (count && (!s || !r)) {
    fprintf(stderr, "[nccl stand-in] ncclAllReduce: %p or %p is not device memory of %zu bytes\n", send, recv,
            count * es);
    return N_ARG;
  }
  AllReduce *a = new AllReduce{s, r, count, type, op, c, inj == ASYNC, 0, 0, 0, 0, {}};
  c->refs.fetch_add(1);
  if (standin_enqueue(stream, step_allreduce, a)) {
    unref(c);
    delete a;
    return N_CUDA;
  }
  return queued(c);
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
  Comm *c = g->c;
  if (ncclResult_t r = queue_group(g, s)) return r;
  return queued(c);
}

} // extern "C"
