#!/usr/bin/env bash
# make gpu-tests (part of make test): the device test program at 1 and 2 ranks (without a GPU it
# prints why it skips and checks that PARLOPS_MEMORY_CUDA fails cleanly), the same program at 1-4 ranks
# under the CPU stand-in for CUDA (tests/standin/: every device path runs), and the device kernels of
# src/gpu/kernels.cu compiled for all four dtypes with NVRTC, which needs no GPU: the NVRTC library is
# fetched once from PyPI (nvidia-cuda-nvrtc-cu12) into build/nvrtc.
set -euo pipefail
MPIEXEC=$1
bin=$(tools/test_binary.sh gpu_check)
[ -n "$bin" ] || { echo "gpu_tests: gpu_check was not built" >&2; exit 1; }
for n in 1 2; do PARLOPS_TEST_EXPECT_RANKS=$n timeout 300 "$MPIEXEC" -n $n "$bin"; done

# The device suite under the CPU stand-in for CUDA, NVRTC and NCCL (tests/standin/, docs/gpu.md): the
# same test program, the same library, the stand-in found by cudarc's dynamic loading on
# LD_LIBRARY_PATH. 1-4 ranks (a GPU each: the stand-in has 4 per node), against the host in the same run.
tools/standin_build.sh
export CUDA_STANDIN_CACHE=$PWD/build/standin/cache
for n in 1 2 3 4; do
  t0=$(date +%s)
  if ! PARLOPS_TEST_EXPECT_RANKS=$n LD_LIBRARY_PATH="$PWD/build/standin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    timeout 600 "$MPIEXEC" -n $n "$bin" >build/standin/gpu_check.$n.log 2>&1; then
    grep -vE '^  |^parlops ' build/standin/gpu_check.$n.log | tail -40
    echo "gpu_tests: the device suite under the CUDA stand-in failed at $n rank(s) (build/standin/gpu_check.$n.log)"
    exit 1
  fi
  grep -q "CPU stand-in device" build/standin/gpu_check.$n.log ||
    { echo "gpu_tests: the stand-in was not the driver that ran at $n rank(s)"; exit 1; }
  echo "gpu_tests: under the CUDA stand-in, $(grep -E '^gpu_check on' build/standin/gpu_check.$n.log) ($(( $(date +%s) - t0 )) s)"
done
# PARLOPS_DEVICE: device 1 of the node's 4 is used; 9, which no node has, is refused with its reason
for d in 1 9; do
  if ! GPU_CHECK_PARTS=vectors PARLOPS_DEVICE=$d PARLOPS_TEST_EXPECT_RANKS=1 \
    LD_LIBRARY_PATH="$PWD/build/standin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    timeout 300 "$MPIEXEC" -n 1 "$bin" >build/standin/gpu_check.device$d.log 2>&1; then
    grep -vE '^  |^parlops ' build/standin/gpu_check.device$d.log | tail -20
    echo "gpu_tests: the device suite with PARLOPS_DEVICE=$d failed (build/standin/gpu_check.device$d.log)"
    exit 1
  fi
  echo "gpu_tests: under the CUDA stand-in with PARLOPS_DEVICE=$d, $(grep -E '^gpu_check on' build/standin/gpu_check.device$d.log)"
done
# CUDA-aware MPI: the stand-in maps device memory where MPI can reach it, parlops is told to hand
# device pointers to MPI (the direct path instead of staging)
t0=$(date +%s)
# (the parts that move data between ranks: vectors, operators, the catalogue, double-precision solves
# with their per-iteration byte bound)
if ! GPU_CHECK_PARTS=vectors,operators,catalogue,solvers-f64 CUDA_STANDIN_HOST_ACCESS=1 \
  PARLOPS_CUDA_AWARE_MPI=1 PARLOPS_TEST_EXPECT_RANKS=3 \
  LD_LIBRARY_PATH="$PWD/build/standin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  timeout 600 "$MPIEXEC" -n 3 "$bin" >build/standin/gpu_check.aware.log 2>&1; then
  grep -vE '^  |^parlops ' build/standin/gpu_check.aware.log | tail -40
  echo "gpu_tests: the device suite with CUDA-aware MPI under the stand-in failed (build/standin/gpu_check.aware.log)"
  exit 1
fi
grep -q "device data moves by CUDA-aware MPI" build/standin/gpu_check.aware.log ||
  { echo "gpu_tests: the CUDA-aware MPI run did not use the direct path"; exit 1; }
echo "gpu_tests: under the CUDA stand-in with CUDA-aware MPI, $(grep -E '^gpu_check on' build/standin/gpu_check.aware.log) ($(( $(date +%s) - t0 )) s)"

N=build/nvrtc
lib=$N/nvidia/cuda_nvrtc/lib
if [ ! -e "$lib/libnvrtc.so.12" ]; then
  [ -x build/nvrtc-venv/bin/pip ] || python3 -m venv build/nvrtc-venv
  rm -rf build/nvrtc-whl
  build/nvrtc-venv/bin/pip download -q --no-deps -d build/nvrtc-whl 'nvidia-cuda-nvrtc-cu12==12.9.86'
  rm -rf "$N" && mkdir -p "$N"
  python3 -m zipfile -e build/nvrtc-whl/*.whl "$N"
fi
LD_LIBRARY_PATH="$PWD/$lib" cargo test --locked --lib gpu::tests::kernels_compile -- --nocapture 2>&1 \
  | tee build/kernels_compile.log | grep -E "test result|skipped|panicked"
grep -q "skipped" build/kernels_compile.log && { echo "gpu_tests: NVRTC did not load from $lib"; exit 1; }
grep -q "test result: ok. 1 passed" build/kernels_compile.log
echo "gpu_tests: device kernels compile for f32, f64, c64 and c128 (NVRTC $(basename "$(ls "$lib"/libnvrtc-builtins.so.* | head -1)"))"
