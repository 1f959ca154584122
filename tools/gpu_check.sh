#!/usr/bin/env bash
# make gpu-check: the device checks of issue 6 in one call, for a machine with an NVIDIA GPU.
#   bash tools/gpu_check.sh [bundle dir, default build/gpu]
# Uses the bundle made by `make gpu-bundle` (rebuild it after any change: it is not checked for
# staleness; built here when cargo is present and no bundle is), finds
# libcuda, NVRTC (the CUDA toolkit's, or Python's nvidia-cuda-nvrtc) and NCCL (Python's
# nvidia-nccl-cu13), and an MPI (the carried Open MPI packages, unpacked under /tmp, else the
# system's). Then it runs:
#   1. gpu_check at 1 rank: every device path against the host path (4 dtypes), NCCL with 1 rank
#   2. gpu_check at 2 ranks on the same GPU: the staging path (pinned host buffers + MPI)
#   3. c_examples/poisson_gpu (the C API only, 250k unknowns): host vs device CG, plain and with an
#      NCCL communicator, and at 2 ranks
#   4. gpu_check --bench 1000 7072: CG host vs device at 1M unknowns, and device SpMV / CG iteration
#      bandwidth against a same-run device copy at 1M and 50M unknowns, f32 and f64
# and prints one summary line per step. Logs go to $OUT when that is set.
set -uo pipefail
B=${1:-build/gpu}
LOG=${OUT:-/tmp/parlops-gpu-check}
mkdir -p "$LOG"
if [ ! -x "$B/gpu_check" ]; then
  if command -v cargo >/dev/null; then make gpu-bundle || exit 1; else
    echo "gpu_check: no bundle in $B and no cargo here: run 'make gpu-bundle' where parlops builds and carry $B"; exit 1
  fi
fi
nvidia-smi -L 2>/dev/null || echo "gpu_check: nvidia-smi not found"

# --- libraries cudarc loads by name
L=/tmp/parlops-gpu-libs
mkdir -p "$L"
sites=$(python3 -c 'import site,sys; print(" ".join(site.getsitepackages()+[site.getusersitepackages()]))' 2>/dev/null)
dirs="/usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/lib/x86_64-linux-gnu"
for s in $sites; do [ -d "$s/nvidia" ] && dirs="$dirs $(find "$s/nvidia" -maxdepth 3 -type d -name lib 2>/dev/null | tr '\n' ' ')"; done
link() { # link NAME PATTERN: $L/NAME -> the first match; its folder joins LD_LIBRARY_PATH
  for d in $dirs; do
    f=$(ls "$d"/$2 2>/dev/null | grep -v -e builtins -e alt | head -1)
    if [ -n "$f" ]; then ln -sf "$f" "$L/$1"; export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"; echo "gpu_check: $1 -> $f"; return 0; fi
  done
  echo "gpu_check: $1 not found (searched $dirs)"; return 1
}
link libnvrtc.so 'libnvrtc.so*'
if ! link libnccl.so 'libnccl.so*'; then
  # a venv or another prefix: look once more, bounded
  f=$(timeout 30 find / -xdev -name 'libnccl.so*' 2>/dev/null | head -1)
  [ -n "$f" ] && { dirs=$(dirname "$f"); link libnccl.so 'libnccl.so*'; }
fi
export LD_LIBRARY_PATH="$L:${LD_LIBRARY_PATH:-}"

# --- MPI: the carried Open MPI (the one parlops was built with), else the system's
if ls "$B"/debs/*.deb >/dev/null 2>&1; then
  R=/tmp/parlops-ompi
  rm -rf "$R" && mkdir -p "$R"
  for f in "$B"/debs/*.deb; do dpkg -x "$f" "$R"; done
  export OPAL_PREFIX="$R/usr"
  export LD_LIBRARY_PATH="$R/usr/lib/x86_64-linux-gnu:$R/usr/lib/x86_64-linux-gnu/openmpi/lib:$R/lib/x86_64-linux-gnu:$LD_LIBRARY_PATH"
  export PATH="$R/usr/bin:$PATH"
  MPIEXEC="$R/usr/bin/mpiexec.openmpi"
else
  MPIEXEC=$(command -v mpiexec.openmpi || command -v mpiexec || true)
fi
[ -n "$MPIEXEC" ] || { echo "gpu_check: no MPI launcher"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl=self,vader,tcp OMPI_MCA_pml=ob1
export OMPI_MCA_hwloc_base_binding_policy=none
# hypre (BoomerAMG, AMS, ADS), loaded by parlops at run time: the copies the bundle carries
[ -d "$B/hypre" ] && export LD_LIBRARY_PATH="$(cd "$B/hypre" && pwd):$LD_LIBRARY_PATH"
ldd "$B/gpu_check" 2>&1 | grep -q -e "not found" -e "version" && { ldd "$B/gpu_check" 2>&1; echo "gpu_check: libraries missing"; exit 1; }

status=0
summary=""
step() { # step NAME TIMEOUT NP ARGS...: run, keep the log, note the verdict
  local name=$1 t=$2 np=$3; shift 3
  echo "== $name"
  PARLOPS_TEST_EXPECT_RANKS=$np timeout "$t" "$MPIEXEC" -n "$np" "$@" 2>&1 | tee "$LOG/$name.log"
  local rc=${PIPESTATUS[0]} verdict=passed
  [ "$rc" = 0 ] || verdict="FAILED (exit $rc)"
  # a GPU check that found no GPU checked nothing
  [ "$rc" = 0 ] && grep -qE "^(gpu_check|poisson_gpu) skipped|NCCL checks skipped" "$LOG/$name.log" && verdict="NOT RUN (no usable device, see the log)"
  [ "$verdict" = passed ] || status=1
  summary="$summary$(printf '%-28s %s' "$name" "$verdict")\n"
}
# the timeouts add up to under 10 minutes (one device call); a normal run takes about 5
step device-1rank 150 1 "$B/gpu_check"
step staging-2ranks 120 2 "$B/gpu_check"
step c-api-poisson 40 1 "$B/poisson_gpu" 500
step c-api-poisson-nccl 40 1 "$B/poisson_gpu" 500 nccl
step c-api-poisson-2ranks 40 2 "$B/poisson_gpu" 500
step bench 200 1 "$B/gpu_check" --bench 1000 7072
echo "== table"
grep -h '^|' "$LOG/bench.log"
echo "== summary"
printf "%b" "$summary"
exit $status
