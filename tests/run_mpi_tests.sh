#!/usr/bin/env bash
# Run the multi-rank Rust tests (tests/mpi_*.rs) at 1, 2, 3 and 4 ranks, two of them once more
# without a launcher (singleton), then all once more at 3 ranks over Open MPI's TCP transport (as
# between nodes; on the loopback interface only).
# Usage: tests/run_mpi_tests.sh MPIEXEC [cargo args...]   (e.g. --release --locked)
# Every run checks that it really got N ranks (a binary launched by another MPI's mpiexec runs as N
# one-rank jobs) and is bounded by a timeout (TEST_TIMEOUT seconds, default 300: MPICH busy-polls, so
# more ranks than cores make it much slower than Open MPI; make test-mpich allows more). Each program
# also has a per-case watchdog (tests/common: PARLOPS_TEST_CASE_TIMEOUT, default 120 s) that names
# the case that hangs.
set -euo pipefail
MPIEXEC=$1
shift
# (every integration test program built in one cargo call, gpu_check too, so that they share the 2 cores;
# only the mpi_* ones run here)
bins=$(cargo test "$@" --test '*' --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"].startswith("mpi_") and m.get("executable"):
        print(m["executable"])
')
[ -n "$bins" ] || { echo "run_mpi_tests: no mpi_* test binary was built" >&2; exit 1; }
for bin in $bins; do
  for n in 1 2 3 4; do
    echo "== $(basename "$bin") at $n rank(s)"
    PARLOPS_TEST_EXPECT_RANKS=$n timeout "${TEST_TIMEOUT:-300}" "$MPIEXEC" -n "$n" "$bin"
  done
done
# A program started without a launcher (MPI's singleton start, as a user's `./prog` is): two of them
for bin in $bins; do
  case $(basename "$bin") in mpi_vectors-* | mpi_models-*)
    echo "== $(basename "$bin") started without $MPIEXEC (singleton)"
    PARLOPS_TEST_EXPECT_RANKS=1 timeout "${TEST_TIMEOUT:-300}" "$bin" ;;
  esac
done
if "$MPIEXEC" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
  for bin in $bins; do
    echo "== $(basename "$bin") at 3 ranks over TCP (btl tcp,self on lo)"
    OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=lo PARLOPS_TEST_EXPECT_RANKS=3 \
      timeout "${TEST_TIMEOUT:-300}" "$MPIEXEC" -n 3 "$bin"
  done
fi
