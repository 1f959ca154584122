// The CUDA C dialect of src/gpu/kernels.cu for the CPU stand-in (tests/standin/): the stand-in's NVRTC
// compiles the kernel source with the host C++ compiler after this header, into a module that its
// driver runs with CUDA's execution model (blocks of threads as fibers, warps of 32, __shared__ memory
// per block, barriers). Test instrument only: never part of the library.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "standin_api.h"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
// per-block memory: the driver poisons this section before every block
#define __shared__ static __attribute__((section("standin_shared")))

extern const standin_api *standin_rt;
#define threadIdx (standin_rt->state->thread_idx)
#define blockIdx (standin_rt->state->block_idx)
#define blockDim (standin_rt->state->block_dim)
#define gridDim (standin_rt->state->grid_dim)
#define warpSize 32

using std::fabs;
using std::fmax;
using std::fmin;
using std::hypot;
using std::pow;
using std::sqrt;

inline void __syncthreads() { standin_rt->syncthreads(); }
inline double __longlong_as_double(long long v) {
  double d;
  std::memcpy(&d, &v, sizeof d);
  return d;
}
inline long long __double_as_longlong(double v) {
  long long d;
  std::memcpy(&d, &v, sizeof d);
  return d;
}

template <class V> inline V __shfl_down_sync(unsigned mask, V v, unsigned delta, int width = 32) {
  static_assert(sizeof(V) <= 8 && std::is_trivially_copyable<V>::value, "shuffle of 8 bytes at most");
  uint64_t bits = 0, out;
  std::memcpy(&bits, &v, sizeof v);
  out = standin_rt->shfl(mask, bits, 0, (int)delta, width);
  V r;
  std::memcpy(&r, &out, sizeof r);
  return r;
}
template <class V> inline V __shfl_up_sync(unsigned mask, V v, unsigned delta, int width = 32) {
  uint64_t bits = 0, out;
  std::memcpy(&bits, &v, sizeof v);
  out = standin_rt->shfl(mask, bits, 1, (int)delta, width);
  V r;
  std::memcpy(&r, &out, sizeof r);
  return r;
}
template <class V> inline V __shfl_xor_sync(unsigned mask, V v, int lane_mask, int width = 32) {
  uint64_t bits = 0, out;
  std::memcpy(&bits, &v, sizeof v);
  out = standin_rt->shfl(mask, bits, 2, lane_mask, width);
  V r;
  std::memcpy(&r, &out, sizeof r);
  return r;
}
template <class V> inline V __shfl_sync(unsigned mask, V v, int src, int width = 32) {
  uint64_t bits = 0, out;
  std::memcpy(&bits, &v, sizeof v);
  out = standin_rt->shfl(mask, bits, 3, src, width);
  V r;
  std::memcpy(&r, &out, sizeof r);
  return r;
}

// Threads of a block switch only at barriers and shuffles, and the driver runs one block at a time,
// so a read-modify-write here is atomic as on a device (for one process).
template <class V> inline V atomicAdd(V *p, V v) {
  V old = *p;
  *p = old + v;
  return old;
}
template <class V> inline V atomicMax(V *p, V v) {
  V old = *p;
  *p = old < v ? v : old;
  return old;
}
template <class V> inline V atomicMin(V *p, V v) {
  V old = *p;
  *p = v < old ? v : old;
  return old;
}
template <class V> inline V atomicExch(V *p, V v) {
  V old = *p;
  *p = v;
  return old;
}
template <class V> inline V atomicCAS(V *p, V cmp, V v) {
  V old = *p;
  if (old == cmp) *p = v;
  return old;
}

namespace standin {
// Kernel arguments: packed at launch (CUDA copies them then), pointers translated from device
// addresses to the driver's backing memory (a pointer into no live device allocation fails the launch).
template <class A> inline size_t align_up(size_t o) { return (o + alignof(A) - 1) / alignof(A) * alignof(A); }

template <class... A, size_t... I>
inline long pack_impl(void (*)(A...), void **params, unsigned char *blob, std::index_sequence<I...>) {
  size_t off = 0;
  long bad = 0;
  auto one = [&](auto tag, size_t i) {
    using V = typename decltype(tag)::type;
    off = align_up<V>(off);
    if (blob) {
      V v;
      std::memcpy(&v, params[i], sizeof v);
      if constexpr (std::is_pointer<V>::value) {
        void *t = nullptr;
        if (standin_rt->translate((const void *)v, &t) != 0) bad = -(long)(i + 1);
        v = (V)t;
      }
      std::memcpy(blob + off, &v, sizeof v);
    }
    off += sizeof(V);
  };
  (one(std::common_type<A>{}, I), ...);
  return bad ? bad : (long)off;
}
template <class... A> inline long pack(void (*f)(A...), void **params, unsigned char *blob) {
  return pack_impl(f, params, blob, std::index_sequence_for<A...>{});
}
template <class V> inline V load_arg(const unsigned char *blob, size_t off) {
  V v;
  std::memcpy(&v, blob + off, sizeof v);
  return v;
}
template <class... A, size_t... I>
inline void call_impl(void (*f)(A...), const unsigned char *blob, std::index_sequence<I...>) {
  size_t offs[sizeof...(A) + 1] = {0};
  size_t off = 0, k = 0;
  ((off = align_up<A>(off), offs[k++] = off, off += sizeof(A)), ...);
  f(load_arg<A>(blob, offs[I])...);
}
template <class... A> inline void call(void (*f)(A...), const unsigned char *blob) {
  call_impl(f, blob, std::index_sequence_for<A...>{});
}
} // namespace standin
