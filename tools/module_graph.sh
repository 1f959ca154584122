#!/usr/bin/env bash
# The crate's module graph: for each top-level module under src/, the other top-level modules its code
# (comment lines left out) names as crate::<module>. With --check (make lint), fail on what
# docs/architecture.md forbids:
#  - any import circle between top-level modules;
#  - src/config.rs (the base) naming comm;
#  - src/op/ or src/vector/ moving bytes themselves: naming NCCL, raw MPI (mpi::/mpi_sys) or
#    point-to-point calls (isend/irecv); they go through Comm and its halo plans (src/comm/);
#  - vector, operator, solver or eigensolver code (src/vector, src/op, src/solver, src/eigen) asking
#    for a backend: naming the CUDA driver layer (crate::gpu) or a backend module (exec::cuda,
#    exec::host); they call the executor's steps (src/exec/mod.rs);
#  - more than 5 uses of is_device() and Location::Cuda outside src/exec, in all;
#  - a source file over 700 lines (Rust under src/, tests/, benches/; the stand-in; the kernels).
set -euo pipefail
cd "$(dirname "$0")/.."
edges=$(for f in src/*.rs src/*/; do
  m=$(basename "$f" .rs)
  [ "$m" = lib ] && continue
  grep -rhE 'crate::[a-z_]+' "$f" | grep -vE '^\s*//' | grep -oE 'crate::[a-z_]+' | sed 's/crate:://' | sort -u |
    while read -r d; do
      if { [ -e "src/$d.rs" ] || [ -d "src/$d" ]; } && [ "$d" != "$m" ]; then echo "$m $d"; fi
    done
done)
if [ "${1:-}" != --check ]; then
  awk '{a[$1] = a[$1] " " $2} END {for (m in a) print m " ->" a[m]}' <<<"$edges" | sort
  exit 0
fi
fail=0
if ! tsort <<<"$edges" >/dev/null 2>/tmp/module_graph.$$; then
  echo "module graph: import circle: $(cat /tmp/module_graph.$$)"; fail=1
fi
rm -f /tmp/module_graph.$$
if grep -q '^config comm$' <<<"$edges"; then echo "module graph: src/config.rs imports comm"; fail=1; fi
bad=$(grep -rnE 'nccl|mpi_sys|\bmpi::|\.isend|\.irecv|isend_device|irecv_device' src/op src/vector --include=*.rs |
  grep -vE '^[^:]+:[0-9]+:\s*//' || true)
if [ -n "$bad" ]; then echo "module graph: src/op or src/vector moves bytes itself:"; echo "$bad"; fail=1; fi
bad=$(grep -rnE 'crate::gpu|exec::cuda|exec::host' src/vector src/op src/solver src/eigen --include=*.rs |
  grep -vE '^[^:]+:[0-9]+:\s*//' || true)
if [ -n "$bad" ]; then echo "module graph: vector/op/solver/eigen code names a backend (use the steps of src/exec):"; echo "$bad"; fail=1; fi
asks=$(grep -rnE 'is_device\(\)|Location::Cuda' src --include=*.rs | grep -v '^src/exec/' | grep -vE '^[^:]+:[0-9]+:\s*//' || true)
nasks=$(grep -c . <<<"$asks" || true)
if [ "$nasks" -gt 5 ]; then echo "module graph: $nasks uses of is_device()/Location::Cuda outside src/exec (at most 5):"; echo "$asks"; fail=1; fi
big=$(find src tests benches -name '*.rs' -o -path 'tests/standin/*' -name '*.cpp' -o -path 'tests/standin/*' -name '*.h' -o -name '*.cu' | xargs wc -l | awk '$2 != "total" && $1 > 700 {print "  " $2 ": " $1 " lines"}')
if [ -n "$big" ]; then echo "module graph: files over 700 lines:"; echo "$big"; fail=1; fi
[ "$fail" = 0 ] && echo "module graph: no import circle; config imports no comm; op/ and vector/ move no bytes themselves; vector/op/solver/eigen name no backend; $nasks uses of is_device()/Location::Cuda outside src/exec (at most 5); no file over 700 lines"
exit "$fail"
