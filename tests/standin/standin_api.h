// What the stand-in driver (libcuda.so.1 of tests/standin/) hands to each kernel module it loads, and
// what the NVRTC and NCCL stand-ins call in it. Test instrument only.
#pragma once
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  unsigned int x, y, z;
} standin_dim3;

typedef struct {
  standin_dim3 thread_idx, block_idx, block_dim, grid_dim;
} standin_state;

typedef struct standin_api {
  standin_state *state;
  void (*syncthreads)(void);
  /* kind 0 down, 1 up, 2 xor, 3 indexed */
  uint64_t (*shfl)(unsigned mask, uint64_t v, int kind, int arg, int width);
  /* device address -> backing memory; 0 when it is in a live allocation (or null) */
  int (*translate)(const void *dev, void **host);
} standin_api;

/* Entry points of a module: __standin_init(api) once after loading; per kernel NAME,
   long __standin_pack_NAME(void **params, unsigned char *blob) (blob NULL: the size; < 0: argument
   -result-1 is a pointer into no device allocation) and void __standin_call_NAME(const unsigned char *blob). */
typedef void (*standin_init_fn)(const standin_api *);
typedef long (*standin_pack_fn)(void **, unsigned char *);
typedef void (*standin_call_fn)(const unsigned char *);

/* For the NCCL stand-in (exported by libcuda.so.1). */
/* One step of an operation: non-zero when it is done; 0 when it cannot finish yet (waiting for other
   ranks): it is called again when the stream is waited for or queried, and stays first on its stream. */
typedef int (*standin_op_fn)(void *ctx);
/* Queue fn(ctx) on a stream (CUstream); 0 or a CUresult. */
int standin_enqueue(void *stream, standin_op_fn fn, void *ctx);
/* The backing memory of [dev, dev + bytes) of one live allocation, or NULL. */
void *standin_device_span(const void *dev, size_t bytes);
/* Which device is current on this thread (-1 none). */
int standin_current_device(void);

#ifdef __cplusplus
}
#endif
