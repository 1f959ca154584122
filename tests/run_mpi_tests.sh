#!/usr/bin/env bash
# Run the multi-rank Rust tests (tests/mpi_*.rs, the suites of the one program tests/mpi_suite.rs)
# at 1, 2, 3 and 4 ranks, two of them once more without a launcher (singleton), then all once more
# at 3 ranks over Open MPI's TCP transport (as between nodes; on the loopback interface only).
# Usage: tests/run_mpi_tests.sh MPIEXEC [cargo args...]   (e.g. --release --locked)
# Every run checks that it really got N ranks (a binary launched by another MPI's mpiexec runs as N
# one-rank jobs) and is bounded by a timeout (TEST_TIMEOUT seconds, default 300: MPICH busy-polls, so
# more ranks than cores make it much slower than Open MPI; make test-mpich allows more). Each program
# also has a per-case watchdog (tests/common: PARLOPS_TEST_CASE_TIMEOUT, default 120 s) that names
# the case that hangs.
set -euo pipefail
MPIEXEC=$1
shift
# (both integration test programs built in one cargo call, gpu_check too, so that they share the 2
# cores; the mpi_* suites, modules of the one program tests/mpi_suite.rs, run here)
bin=$(cargo test "$@" --test '*' --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "mpi_suite" and m.get("executable"):
        print(m["executable"])
')
[ -n "$bin" ] || { echo "run_mpi_tests: the mpi_suite test program was not built" >&2; exit 1; }
suites=$("$bin" --list)
# every tests/mpi_*.rs is a suite of the program (cargo's autotests are off: a file left out of
# tests/mpi_suite.rs would not even be compiled)
for f in tests/mpi_*.rs; do
  name=$(basename "$f" .rs)
  [ "$name" = mpi_suite ] || grep -qw "$name" <<<"$suites" ||
    { echo "run_mpi_tests: $f is not a suite of tests/mpi_suite.rs (add it to its SUITES)" >&2; exit 1; }
done
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# One run: SUITE RANKS [singleton|tcp]; its output kept in a log and printed whole when it ends (one
# print at a time, as two one-rank runs go side by side), then a line with its outcome and time.
run() {
  local suite=$1 n=$2 how=${3:-} t0=$SECONDS log="$logs/$1.$2${3:+.$3}.log" st=0 line
  if [ "$how" = singleton ]; then
    PARLOPS_TEST_EXPECT_RANKS=1 timeout "${TEST_TIMEOUT:-300}" "$bin" "$suite" >"$log" 2>&1 || st=$?
  else
    PARLOPS_TEST_EXPECT_RANKS=$n timeout "${TEST_TIMEOUT:-300}" "$MPIEXEC" -n "$n" "$bin" "$suite" >"$log" 2>&1 || st=$?
  fi
  case $how in
    singleton) line="== $suite started without $MPIEXEC (singleton)" ;;
    tcp) line="== $suite at $n ranks over TCP (btl tcp,self on lo)" ;;
    *) line="== $suite at $n rank(s)" ;;
  esac
  if [ $st = 0 ]; then line="$line: passed ($((SECONDS - t0)) s)"; else line="$line: FAILED (exit $st)"; fi
  flock "$logs/print.lock" bash -c 'cat "$1"; echo "$2"' print "$log" "$line"
  return $((st != 0))
}
export -f run
export bin MPIEXEC logs TEST_TIMEOUT
# The one-rank runs two at a time (each takes one of the 2 cores), with the runs started without a
# launcher (MPI's singleton start, as a user's `./prog` is) of two suites; then 2, 3 and 4 ranks one
# run at a time.
# (Open MPI binds a job's rank 0 to core 0: two jobs side by side would share it, so not bound here)
{ for suite in $suites; do echo "$suite 1"; done; echo "mpi_vectors 1 singleton"; echo "mpi_models 1 singleton"; } |
  OMPI_MCA_hwloc_base_binding_policy=none xargs -P 2 -L 1 bash -c 'run "$@"' run
for suite in $suites; do
  for n in 2 3 4; do run "$suite" "$n"; done
done
if "$MPIEXEC" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
  for suite in $suites; do OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=lo run "$suite" 3 tcp; done
fi
