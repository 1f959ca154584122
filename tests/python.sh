#!/usr/bin/env bash
# The Python package (python/) as a user gets it: `pip install ./python[pylops-mpi]` into a new
# virtual environment (made afresh every run; scipy beside it for the dense references), then
# python/tests/test_parlops.py at 1, 2, 3 and 4 ranks finding the installed library through
# PARLOPS_DIR, and at 2 ranks under the CUDA stand-in (device vectors through
# __cuda_array_interface__) when tools/gpu_tests.sh has built it.
# Usage: tests/python.sh PREFIX BUILD_DIR
set -euo pipefail
PREFIX=$(cd "$1" && pwd)
B=$2
: "${MPIEXEC:=mpiexec.openmpi}"
venv="$B/python-venv"
t0=$(date +%s)
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip >/dev/null 2>&1 || true
# from a copy, so that setuptools' build files stay out of the tree
rm -rf "$B/python-src" && cp -r python "$B/python-src"
"$venv/bin/pip" install -q "$B/python-src[pylops-mpi]" scipy
py="$venv/bin/python"
echo "python: installed $("$venv/bin/pip" show parlops | grep -E '^(Name|Version)' | tr '\n' ' ')in a new venv ($(( $(date +%s) - t0 )) s)"
# the package itself is found from the venv, not from the source tree
(cd "$B" && PARLOPS_DIR="$PREFIX" "$py" -c 'import parlops, os; assert "site-packages" in parlops.__file__, parlops.__file__')
# without the library: an ImportError saying how to point at it
msg=$(cd "$B" && PARLOPS_LIB=/nonexistent/libparlops.so "$py" -c 'import parlops' 2>&1 || true)
grep -q "set PARLOPS_LIB" <<<"$msg" || { echo "python: a missing library did not say how to find it:"; echo "$msg"; exit 1; }
for n in 1 2 3 4; do
  log="$B/python.$n.log"
  # at 2 ranks also the run's timing table that parlops_finalize prints (the package's atexit)
  if ! (cd "$B" && PARLOPS_DIR="$PREFIX" PARLOPS_TEST_HEADER="$PREFIX/include/parlops.h" \
        PARLOPS_LOG=$([ $n = 2 ] && echo finalize || echo 0) \
        timeout 600 "$MPIEXEC" -n $n "$py" "$OLDPWD/python/tests/test_parlops.py") >"$log" 2>&1; then
    grep -v FutureWarning "$log" | tail -40; echo "python: the package's tests failed at $n rank(s) ($log)"; exit 1
  fi
  grep '^python package at' "$log"
done
# Krylov-Schur on MFEM-assembled matrices (example 2's beam on beam-tri.mesh refined 3 times:
# stiffness and mass without the fixed dofs, written by tests/eigen/beam_matrices.cpp with the MFEM
# wheel's serial libmfem) against SciPy's dense eigenvalues and eigsh, 1-4 ranks
tools/mfem_fetch.sh "$B"
mfem="$B/mfem/mfem/external/ser"
g++ -std=c++17 -O2 tests/eigen/beam_matrices.cpp -isystem "$mfem/include" -L"$mfem/lib" -lmfem \
  -Wl,-rpath,"$(cd "$mfem/lib" && pwd)" -o "$B/beam_matrices"
"$B/beam_matrices" "$mfem/data/beam-tri.mesh" 3 "$B/beam_K.bin" "$B/beam_M.bin"
for n in 1 2 3 4; do
  log="$B/python_eigen.$n.log"
  if ! (cd "$B" && PARLOPS_DIR="$PREFIX" timeout 600 "$MPIEXEC" -n $n "$py" "$OLDPWD/python/tests/test_eigen_mfem.py" \
        "$PWD/beam_K.bin" "$PWD/beam_M.bin") >"$log" 2>&1; then
    grep -v FutureWarning "$log" | tail -40; echo "python: the MFEM eigenvalue tests failed at $n rank(s) ($log)"; exit 1
  fi
  [ $n = 1 ] && grep '^eigen (MFEM beam)' "$log" | grep -v ' rank(s): '
  grep '^eigen (MFEM beam) at' "$log"
done
# shift-and-invert through GMRES + BoomerAMG inside (a 300^2 Laplacian, 2 ranks, about 6 s)
log="$B/python_eigen_shift.log"
if ! (cd "$B" && PARLOPS_DIR="$PREFIX" timeout 600 "$MPIEXEC" -n 2 "$py" "$OLDPWD/python/tests/test_eigen_shift.py") \
      >"$log" 2>&1; then
  grep -v FutureWarning "$log" | tail -40; echo "python: the shift-and-invert eigenvalue test failed ($log)"; exit 1
fi
grep '^eigen (shift-and-invert)' "$log"
# the reproducible sum order on the same stiffness matrix (issue 35, section 4), from C: CG and
# Jacobi-CG at 1 to 8 ranks, two uneven splits each, must give one iteration count and one x (the
# hash of its bits) everywhere; the default order's counts at 1-4 ranks are shown beside
"${MPICC:-mpicc.openmpi}" -O2 -Wall -Werror tests/c/repro_beam.c \
  $(PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" pkg-config --cflags --libs parlops) \
  -Wl,-rpath,"$PREFIX/lib" -lm -o "$B/repro_beam"
for pc in none jacobi; do
  ref=""
  for n in 1 2 3 4 5 6 7 8; do
    for split in 0 1; do
      out=$(timeout 300 "$MPIEXEC" -n $n "$B/repro_beam" "$B/beam_K.bin" $split reproducible $pc) ||
        { echo "$out"; echo "python: repro_beam failed at $n rank(s), split $split"; exit 1; }
      line=${out%% (*}
      [ -n "$ref" ] || ref=$line
      [ "$line" = "$ref" ] ||
        { echo "$out"; echo "python: the reproducible order at $n rank(s), split $split differs from one rank's: $ref"; exit 1; }
    done
  done
  counts=""
  for n in 1 2 3 4; do
    out=$(timeout 300 "$MPIEXEC" -n $n "$B/repro_beam" "$B/beam_K.bin" 0 blocked $pc) ||
      { echo "$out"; echo "python: repro_beam (blocked) failed at $n rank(s)"; exit 1; }
    counts="$counts $(sed -E 's/.*: ([0-9]+) iterations.*/\1/' <<<"$out")"
  done
  echo "$ref: the same at 1-8 ranks, 2 uneven splits each (the default order at 1-4 ranks:$counts iterations)"
done
[ "$(grep -c '^run log, [0-9]* solve(s) added up (2 rank(s))' "$B/python.2.log")" = 1 ] ||
  { cat "$B/python.2.log"; echo "python: PARLOPS_LOG=finalize printed no run table at exit"; exit 1; }
if [ -e "$B/standin/libcuda.so.1" ]; then
  log="$B/standin/python.log"
  if ! (cd "$B" && PARLOPS_DIR="$PREFIX" CUDA_STANDIN_CACHE="$PWD/standin/cache" \
        LD_LIBRARY_PATH="$PWD/standin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        timeout 600 "$MPIEXEC" -n 2 "$py" "$OLDPWD/python/tests/test_parlops.py") >"$log" 2>&1; then
    tail -30 "$log"; echo "python: the package's tests failed under the CUDA stand-in"; exit 1
  fi
  grep -q "device vectors: checked" "$log" || { echo "python: under the stand-in no device vector was made ($log)"; exit 1; }
  echo "python: under the CUDA stand-in, $(grep '^python package at' "$log")"
fi
echo "python: all passed ($(( $(date +%s) - t0 )) s)"
