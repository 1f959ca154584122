#!/usr/bin/env bash
# MFEM's serial library, headers and CMake package from the PyPI `mfem` wheel, unpacked under
# BUILD/mfem (no Python import; the wheel's C++ library does not depend on the Python it was built
# for). Does nothing when they are there. Used by tests/mfem_hypre.sh and by make bench/bench-precond.
# Usage: tools/mfem_fetch.sh BUILD_DIR; prints nothing on success but what it fetches.
set -euo pipefail
B=$1
MFEM_VERSION=4.10.0.1
mfem="$B/mfem/mfem/external/ser"
if [ ! -f "$mfem/lib/cmake/mfem/MFEMConfig.cmake" ]; then
  echo "== fetching the mfem $MFEM_VERSION wheel (serial libmfem, headers, CMake package)"
  venv="$B/pyenv"
  [ -x "$venv/bin/pip" ] || python3 -m venv "$venv"
  rm -rf "$B/mfem-wheel" && mkdir -p "$B/mfem-wheel" "$B/mfem"
  # ask for the cp311 build whatever python3 this machine has
  "$venv/bin/pip" download -q --no-deps --only-binary=:all: --python-version 3.11 --implementation cp \
    --abi cp311 --platform manylinux_2_28_x86_64 "mfem==$MFEM_VERSION" -d "$B/mfem-wheel"
  python3 - "$B/mfem-wheel" "$B/mfem" <<'PY'
import glob, sys, zipfile
z = zipfile.ZipFile(glob.glob(sys.argv[1] + "/*.whl")[0])
for name in z.namelist():
    if name.startswith("mfem/external/ser/"):
        z.extract(name, sys.argv[2])
PY
fi
