#!/usr/bin/env bash
# The Python environment of the reference comparisons and of `make bench` (numpy, scipy, mpi4py,
# pylops, pylops-mpi, pyproximal, which PyLops-MPI's proximal module needs, and mpi4py-fft, which its
# MPIFFTND needs, built from source against FFTW: tools/deps.sh installs libfftw3-dev) under BUILD_DIR/pyenv, made once. Prints its python.
# Usage: tools/pyenv.sh BUILD_DIR
set -euo pipefail
venv="$1/pyenv"
if ! "$venv/bin/python" -c 'import numpy, scipy, mpi4py, pylops, pylops_mpi, pyproximal, mpi4py_fft' 2>/dev/null; then
  echo "== setting up $venv (numpy, scipy, mpi4py, pylops, pylops-mpi, pyproximal, mpi4py-fft from PyPI)" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q numpy scipy mpi4py pylops pylops-mpi pyproximal mpi4py-fft >&2
fi
echo "$venv/bin/python"
