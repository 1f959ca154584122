#!/usr/bin/env bash
# make gpu-tests (part of make test): the device test program at 1 and 2 ranks (without a GPU it
# prints why it skips and checks that PARLOPS_MEMORY_CUDA fails cleanly), and the device kernels of
# src/gpu/kernels.cu compiled for all four dtypes with NVRTC, which needs no GPU: the NVRTC library is
# fetched once from PyPI (nvidia-cuda-nvrtc-cu12) into build/nvrtc.
set -euo pipefail
MPIEXEC=$1
bin=$(tools/test_binary.sh gpu_check)
[ -n "$bin" ] || { echo "gpu_tests: gpu_check was not built" >&2; exit 1; }
for n in 1 2; do PARLOPS_TEST_EXPECT_RANKS=$n timeout 300 "$MPIEXEC" -n $n "$bin"; done

N=build/nvrtc
lib=$N/nvidia/cuda_nvrtc/lib
if [ ! -e "$lib/libnvrtc.so.12" ]; then
  [ -x build/nvrtc-venv/bin/pip ] || python3 -m venv build/nvrtc-venv
  rm -rf build/nvrtc-whl
  build/nvrtc-venv/bin/pip download -q --no-deps -d build/nvrtc-whl 'nvidia-cuda-nvrtc-cu12==12.9.86'
  rm -rf "$N" && mkdir -p "$N"
  python3 -m zipfile -e build/nvrtc-whl/*.whl "$N"
fi
LD_LIBRARY_PATH="$PWD/$lib" cargo test --release --locked --lib gpu::tests::kernels_compile -- --nocapture 2>&1 \
  | tee build/kernels_compile.log | grep -E "test result|skipped|panicked"
grep -q "skipped" build/kernels_compile.log && { echo "gpu_tests: NVRTC did not load from $lib"; exit 1; }
grep -q "test result: ok. 1 passed" build/kernels_compile.log
echo "gpu_tests: device kernels compile for f32, f64, c64 and c128 (NVRTC $(basename "$(ls "$lib"/libnvrtc-builtins.so.* | head -1)"))"
