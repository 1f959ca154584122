#!/usr/bin/env bash
# Line coverage of the device modules by the device suite under the CUDA stand-in (issue 31, section 4):
# gpu_check built with -C instrument-coverage (in build/cov, apart from the normal build), run at 1-4
# ranks under the stand-in, profiles merged with the toolchain's llvm-tools (rustup component
# llvm-tools), and the C device programs of make test (device failures, the Poisson example) through the
# instrumented libparlops.so; prints llvm-cov's report of the device files and writes the lines not reached to
# build/cov/missed.txt. Not part of make test (a second, instrumented build). Usage: tools/standin_coverage.sh [MPIEXEC]
set -euo pipefail
cd "$(dirname "$0")/.."
MPIEXEC=${1:-mpiexec}
bin_dir=$(dirname "$(rustc --print target-libdir)")/bin
[ -x "$bin_dir/llvm-profdata" ] || { echo "standin_coverage: needs 'rustup component add llvm-tools'"; exit 2; }
tools/standin_build.sh
export CARGO_TARGET_DIR=$PWD/build/cov/target
# (instrumented build scripts write profiles too: into build/cov, not the tree)
LLVM_PROFILE_FILE="$PWD/build/cov/build-%p.profraw" RUSTFLAGS="-C instrument-coverage" cargo test --release --locked --no-run --test gpu_check 2>&1 | tail -1
bin=$(ls -t "$CARGO_TARGET_DIR"/release/deps/gpu_check-* | grep -v '\.d$' | head -1)
rm -rf build/cov/prof && mkdir -p build/cov/prof
export CUDA_STANDIN_CACHE=$PWD/build/standin/cache
for n in 1 2 3 4; do
  LLVM_PROFILE_FILE="$PWD/build/cov/prof/%p.profraw" LD_LIBRARY_PATH="$PWD/build/standin" \
    timeout 900 "$MPIEXEC" -n $n "$bin" | grep -E "^gpu_check on"
done
# no device at all (the probe's and the device calls' refusals), as make test's first runs
LLVM_PROFILE_FILE="$PWD/build/cov/prof/%p.profraw" timeout 300 "$MPIEXEC" -n 1 "$bin" | grep -E "^gpu_check on"
# PARLOPS_DEVICE, as make test runs it
for d in 1 9; do
  LLVM_PROFILE_FILE="$PWD/build/cov/prof/%p.profraw" LD_LIBRARY_PATH="$PWD/build/standin" GPU_CHECK_PARTS=vectors \
    PARLOPS_DEVICE=$d timeout 300 "$MPIEXEC" -n 1 "$bin" | grep -E "^gpu_check on"
done
# the direct (CUDA-aware MPI) path, as make test runs it
LLVM_PROFILE_FILE="$PWD/build/cov/prof/%p.profraw" LD_LIBRARY_PATH="$PWD/build/standin" \
  GPU_CHECK_PARTS=vectors,operators,catalogue,solvers-f64 CUDA_STANDIN_HOST_ACCESS=1 PARLOPS_CUDA_AWARE_MPI=1 \
  timeout 900 "$MPIEXEC" -n 3 "$bin" | grep -E "^gpu_check on"
# the C programs of make test's device part (tests/examples.sh builds them) through the C API: the
# same binaries, given the instrumented libparlops.so ahead of their run path
LLVM_PROFILE_FILE="$PWD/build/cov/build-%p.profraw" RUSTFLAGS="-C instrument-coverage" \
  cargo build --release --locked --lib 2>&1 | tail -1
lib=$CARGO_TARGET_DIR/release/libparlops.so
# the programs need the library under its soname (the installed name)
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
mkdir -p build/cov/lib && ln -sf "$lib" "build/cov/lib/$soname"
objects=()
if [ -x build/device_failures ] && [ -x build/nccl_failures ] && [ -x build/examples/poisson_gpu ]; then
  objects=(-object "$lib")
  c_run() {
    LLVM_PROFILE_FILE="$PWD/build/cov/prof/%p.profraw" LD_LIBRARY_PATH="$PWD/build/standin:$PWD/build/cov/lib" \
      CUDA_STANDIN_NCCL_TIMEOUT=30 timeout 600 "$MPIEXEC" -n "$@" | tail -1
  }
  for n in 1 2 3 4; do c_run $n build/device_failures; done
  for n in 1 2 3 4; do c_run $n build/nccl_failures; done
  for a in "1 48" "2 48" "3 40" "2 48 nccl" "4 40 nccl"; do
    # shellcheck disable=SC2086
    set -- $a
    c_run "$1" build/examples/poisson_gpu "${@:2}"
  done
else
  echo "standin_coverage: build/device_failures, build/nccl_failures or build/examples/poisson_gpu missing (make test builds them): Rust suite only"
fi
"$bin_dir/llvm-profdata" merge -sparse build/cov/prof/*.profraw -o build/cov/gpu.profdata
files=(src/gpu/mod.rs src/gpu/probe.rs src/gpu/scratch.rs src/exec/mod.rs src/exec/cuda/mod.rs
  src/exec/cuda/vector.rs src/exec/cuda/csr.rs src/comm/nccl/mod.rs src/comm/nccl/fault.rs src/comm/halo/device.rs)
"$bin_dir/llvm-cov" report "$bin" "${objects[@]}" -instr-profile=build/cov/gpu.profdata "${files[@]}"
"$bin_dir/llvm-cov" show "$bin" "${objects[@]}" -instr-profile=build/cov/gpu.profdata -show-line-counts-or-regions \
  "${files[@]}" | grep -E '^\s*[0-9]+\|\s+0\|' >build/cov/missed.txt || true
echo "standin_coverage: $(wc -l <build/cov/missed.txt) lines not reached: build/cov/missed.txt"
