#!/usr/bin/env bash
# Compare parlops with SciPy and PyLops-MPI (tests/reference/compare.py; the proximal operators and
# solvers: tests/reference/proximal.py; the FFT against MPIFFTND: tests/reference/fft.py; the MDC and
# MDD against MPIMDC and cgls: tests/reference/mdc.py; the non-stationary convolution:
# tests/reference/nsconv.py; MPIL2 with an operator and ADMML2: tests/reference/prox_op.py) at 1, 2, 3
# and 4 ranks, all in one MPI job per rank count (tests/reference/run_all.py), in a virtual environment
# under build/ holding numpy, scipy, mpi4py, pylops, pylops-mpi, pyproximal and mpi4py-fft from PyPI
# (tools/pyenv.sh).
# Usage: tests/reference.sh PREFIX BUILD_DIR
set -euo pipefail
PREFIX=$1
B=$2
: "${MPIEXEC:=mpiexec.openmpi}"
venv="$B/pyenv"
tools/pyenv.sh "$B" >/dev/null
"$venv/bin/python" -c 'import mpi4py, pylops_mpi, pyproximal, scipy; print("reference versions: mpi4py", mpi4py.__version__, "pylops-mpi", pylops_mpi.__version__, "pyproximal", pyproximal.__version__, "scipy", scipy.__version__)'
# every script in one job per rank count (run_all.py: the Python stack is imported once a launch, not
# once a script), each script's time and outcome printed
for n in 1 2 3 4; do
  PARLOPS_LIB="$PREFIX/lib/libparlops.so" timeout 900 "$MPIEXEC" -n "$n" "$venv/bin/python" tests/reference/run_all.py \
    tests/reference/compare.py tests/reference/proximal.py tests/reference/fft.py tests/reference/mdc.py \
    tests/reference/nsconv.py tests/reference/prox_op.py
done
