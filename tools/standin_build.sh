#!/usr/bin/env bash
# Build the CPU stand-in for the CUDA driver, NVRTC and NCCL (tests/standin/) into build/standin:
# libcuda.so.1, libnvrtc.so.12 and libnccl.so.2 (with their unversioned names), which cudarc's dynamic
# loading finds when build/standin is first on LD_LIBRARY_PATH. A test instrument: never linked into
# the library, never installed (docs/gpu.md says what it proves and what it cannot).
set -euo pipefail
cd "$(dirname "$0")/.."
S=$PWD/tests/standin
O=build/standin
mkdir -p "$O"
CXX=${CXX:-c++}
flags=(-std=c++17 -O2 -fPIC -shared -Wall -Wextra -Werror)
stamp=$O/.built
if [ -e "$stamp" ] && [ -z "$(find "$S" tools/standin_build.sh -newer "$stamp" -print -quit)" ]; then
  exit 0
fi
"$CXX" "${flags[@]}" -o "$O/libcuda.so.1" -Wl,-soname,libcuda.so.1 "$S/cuda.cpp" "$S/cuda_streams.cpp" "$S/threads.cpp" -ldl -lpthread
"$CXX" "${flags[@]}" -DSTANDIN_SRC_DIR="\"$S\"" -o "$O/libnvrtc.so.12" -Wl,-soname,libnvrtc.so.12 "$S/nvrtc.cpp"
"$CXX" "${flags[@]}" -o "$O/libnccl.so.2" -Wl,-soname,libnccl.so.2 "$S/nccl.cpp" -L"$O" -l:libcuda.so.1 \
  -Wl,-rpath,'$ORIGIN'
ln -sf libcuda.so.1 "$O/libcuda.so"
ln -sf libnvrtc.so.12 "$O/libnvrtc.so"
ln -sf libnccl.so.2 "$O/libnccl.so"
touch "$stamp"
echo "standin: built $O (CUDA driver, NVRTC and NCCL stand-ins)"
