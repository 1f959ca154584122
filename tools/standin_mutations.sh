#!/usr/bin/env bash
# Proof that the device suite under the CUDA stand-in bites (issue 31, section 4): five deliberate
# device bugs, each applied to the source in turn, the device test program rebuilt and run at 2 ranks
# under the stand-in; each must fail. The tree is restored after each (git checkout of the file), so
# run it on a clean tree. Not part of make test (five rebuilds): run it by hand (ONLY="1 3" for some).
set -uo pipefail
cd "$(dirname "$0")/.."
MPIEXEC=${1:-mpiexec}
if ! git diff --quiet -- src; then echo "standin_mutations: src/ has uncommitted changes; commit them first"; exit 2; fi
tools/standin_build.sh
export CUDA_STANDIN_CACHE=$PWD/build/standin/cache
mutate() { # file, python old, python new
  python3 - "$1" "$2" "$3" <<'PY'
import sys
p, old, new = sys.argv[1], sys.argv[2], sys.argv[3]
s = open(p).read()
assert s.count(old) == 1, f"{p}: the mutation's text is not there once: {old!r}"
open(p, 'w').write(s.replace(old, new))
PY
}
declare -a NAMES FILES OLDS NEWS
add() { NAMES+=("$1"); FILES+=("$2"); OLDS+=("$3"); NEWS+=("$4"); }
add "kernel off-by-one (grid-stride loop runs to i <= n)" src/gpu/kernels.cu \
  'i < (n); i += (i64)blockDim.x * gridDim.x)' 'i <= (n); i += (i64)blockDim.x * gridDim.x)'
add "stream synchronisation removed (norm result read before the copy ran)" src/exec/cuda/vector.rs \
  '        unsafe { gpu::dtoh(sc.host.ptr(), sc.out.ptr, 8, s)? };
        gpu::sync(s)?;' '        unsafe { gpu::dtoh(sc.host.ptr(), sc.out.ptr, 8, s)? };'
add "host read of a device buffer (norm peeks at x's first entry)" src/exec/cuda/vector.rs \
  '        let (xp, pp) = (x.dptr(), sc.part.ptr);' '        let (xp, pp) = (x.dptr(), sc.part.ptr);
        if n > 0 {
            let _peek = unsafe { std::ptr::read_volatile(xp as usize as *const u8) };
        }'
add "NCCL reduction with the wrong count (half the sums)" src/comm/nccl/mod.rs \
  'self.allreduce_sum_f64(sc.out.ptr, vals.len(), s) {' 'self.allreduce_sum_f64(sc.out.ptr, vals.len() / 2, s) {'
add "SpMV row block forms only its first 768 products (a quarter of a full block's entries lost)" src/gpu/kernels.cu \
  'for (int j = 0; j < SPMV_CHUNK / BLOCK; j++)' 'for (int j = 0; j < SPMV_CHUNK / BLOCK - 1; j++)'
fail=0
for i in "${!NAMES[@]}"; do
  # ONLY="2 4" runs those mutations only
  if [ -n "${ONLY:-}" ] && ! grep -qw "$((i + 1))" <<<"$ONLY"; then continue; fi
  f=${FILES[$i]}
  mutate "$f" "${OLDS[$i]}" "${NEWS[$i]}" || { fail=1; continue; }
  if ! cargo test --release --locked --no-run --test gpu_check >build/standin/mutation.build.log 2>&1; then
    echo "mutation $((i + 1)): ${NAMES[$i]}: does not build (see build/standin/mutation.build.log)"; fail=1
  else
    bin=$(tools/test_binary.sh gpu_check)
    log=build/standin/mutation.$((i + 1)).log
    LD_LIBRARY_PATH="$PWD/build/standin" timeout 600 "$MPIEXEC" -n 2 "$bin" >"$log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
      echo "mutation $((i + 1)): ${NAMES[$i]}: NOT caught (the suite passed)"; fail=1
    else
      why=$(grep -m1 -E "FAILED|stand-in\]|panicked|gpu_check on" "$log" | cut -c1-220)
      echo "mutation $((i + 1)): ${NAMES[$i]}: caught (exit $rc): $why"
    fi
  fi
  git checkout -q -- "$f"
done
cargo test --release --locked --no-run --test gpu_check >/dev/null 2>&1
exit $fail
