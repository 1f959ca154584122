#!/usr/bin/env bash
# Line coverage of the device modules by the device suite under the CUDA stand-in (issue 31, section 4):
# gpu_check built with -C instrument-coverage (in build/cov, apart from the normal build), run at 1-4
# ranks under the stand-in, profiles merged with the toolchain's llvm-tools (rustup component
# llvm-tools); prints llvm-cov's report of the device files and writes the lines not reached to
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
# the direct (CUDA-aware MPI) path, as make test runs it
LLVM_PROFILE_FILE="$PWD/build/cov/prof/%p.profraw" LD_LIBRARY_PATH="$PWD/build/standin" \
  GPU_CHECK_PARTS=vectors,operators,catalogue,solvers-f64 CUDA_STANDIN_HOST_ACCESS=1 PARLOPS_CUDA_AWARE_MPI=1 \
  timeout 900 "$MPIEXEC" -n 3 "$bin" | grep -E "^gpu_check on"
"$bin_dir/llvm-profdata" merge -sparse build/cov/prof/*.profraw -o build/cov/gpu.profdata
files=(src/gpu/mod.rs src/gpu/probe.rs src/gpu/scratch.rs src/exec/mod.rs src/exec/cuda/mod.rs
  src/exec/cuda/vector.rs src/exec/cuda/csr.rs src/comm/nccl.rs src/comm/halo/device.rs)
"$bin_dir/llvm-cov" report "$bin" -instr-profile=build/cov/gpu.profdata "${files[@]}"
"$bin_dir/llvm-cov" show "$bin" -instr-profile=build/cov/gpu.profdata -show-line-counts-or-regions \
  "${files[@]}" | grep -E '^\s*[0-9]+\|\s+0\|' >build/cov/missed.txt || true
echo "standin_coverage: $(wc -l <build/cov/missed.txt) lines not reached: build/cov/missed.txt"
