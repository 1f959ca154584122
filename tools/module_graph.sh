#!/usr/bin/env bash
# The crate's module graph: for each top-level module under src/, the other top-level modules its code
# (comment lines left out) names as crate::<module>. With --check (make lint), fail on what
# docs/architecture.md forbids:
#  - any import circle between top-level modules;
#  - src/config.rs (the base) naming comm;
#  - src/op/ or src/vector/ moving bytes themselves: naming NCCL, raw MPI (mpi::/mpi_sys) or
#    point-to-point calls (isend/irecv); they go through Comm and its halo plans (src/comm/).
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
[ "$fail" = 0 ] && echo "module graph: no import circle; config imports no comm; op/ and vector/ move no bytes themselves"
exit "$fail"
