#!/usr/bin/env bash
# Install what parlops needs to build and test, through the system package manager (Debian/Ubuntu,
# as root or with passwordless sudo). Prints what to install, and fails, when it cannot.
set -euo pipefail

CBINDGEN_VERSION=0.29.4
pkgs=()
have() { command -v "$1" >/dev/null 2>&1; }

have mpicc.openmpi || pkgs+=(libopenmpi-dev)
have mpiexec.openmpi || pkgs+=(openmpi-bin)
have mpif90.openmpi || pkgs+=(libopenmpi-dev)
have gfortran || pkgs+=(gfortran)
have cmake || pkgs+=(cmake)
have pkg-config || pkgs+=(pkg-config)
have python3 || pkgs+=(python3)
have cc || pkgs+=(gcc)
have make || pkgs+=(make)
# make install strips the library and keeps its debug information beside it (objcopy, strip)
{ have objcopy && have strip; } || pkgs+=(binutils)
have valgrind || pkgs+=(valgrind)
# make abi-check: libabigail's abidw and abidiff
{ have abidw && have abidiff; } || pkgs+=(abigail-tools)
# cargo, pip and the NVRTC fetch speak HTTPS: they need the CA bundle, not only the tools
[ -s /etc/ssl/certs/ca-certificates.crt ] || pkgs+=(ca-certificates)
# the MFEM and hypre tests: Debian's hypre (Open MPI), zlib for MFEM's CMake package, venv + pip for
# the MFEM wheel and the Python references
[ -f /usr/include/hypre/HYPRE.h ] || pkgs+=(libhypre-dev)
[ -f /usr/include/zlib.h ] || pkgs+=(zlib1g-dev)
have g++ || pkgs+=(g++)
# PyLops-MPI's MPIFFTND (the FFT reference and benchmark) runs on mpi4py-fft, which pip builds from
# source against FFTW's headers (tools/pyenv.sh); parlops itself does not use FFTW
[ -f /usr/include/fftw3.h ] || pkgs+=(libfftw3-dev)
# ... and against Python's headers (its Cython extension): python3-dev
python3 -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
  2>/dev/null || pkgs+=(python3-dev)
python3 -c 'import venv, ensurepip' 2>/dev/null || pkgs+=(python3-venv python3-pip)
# rsmpi generates its MPI bindings with bindgen, which loads libclang (libclang.so, libclang-N.so,
# libclang.so.N: not LLVM's libclang-cpp.so, which images ship with LLVM) and needs clang's own
# headers (stddef.h under lib/clang/N/include). Debian's libclang-dev brings both.
has_libclang() {
  local f
  for f in /usr/lib/llvm-*/lib/libclang.so* /usr/lib/llvm-*/lib/libclang-[0-9]*.so* \
           /usr/lib/*/libclang.so* /usr/lib/*/libclang-[0-9]*.so* /usr/lib/libclang.so*; do
    [ -e "$f" ] && return 0
  done
  return 1
}
has_clang_headers() { compgen -G "/usr/lib/llvm-*/lib/clang/*/include/stddef.h" >/dev/null; }
if ! has_libclang || ! has_clang_headers; then pkgs+=(libclang-dev); fi

if ((${#pkgs[@]})); then
  mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | sort -u)
  echo "deps: installing ${pkgs[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    if have sudo && sudo -n true 2>/dev/null; then SUDO="sudo -n"; fi
  fi
  if have apt-get && { [ "$(id -u)" = 0 ] || [ -n "$SUDO" ]; }; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
  else
    echo "deps: cannot install packages here (need apt-get as root or passwordless sudo)." >&2
    echo "deps: please install: ${pkgs[*]} (Debian/Ubuntu names: Open MPI with Fortran, libclang, cmake, gfortran, pkg-config)" >&2
    exit 1
  fi
fi

if ! have cargo; then
  echo "deps: Rust is missing: install it with rustup (https://rustup.rs), then run make again." >&2
  exit 1
fi
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  if have rustup; then rustup component add rustfmt clippy; else
    echo "deps: cargo fmt and cargo clippy are needed by make test: install the rustfmt and clippy components." >&2
    exit 1
  fi
fi
if ! have cbindgen || [ "$(cbindgen --version | awk '{print $2}')" != "$CBINDGEN_VERSION" ]; then
  echo "deps: installing cbindgen $CBINDGEN_VERSION (generates include/parlops.h)"
  cargo install --quiet --locked cbindgen --version "$CBINDGEN_VERSION"
fi
echo "deps: ok ($(mpiexec.openmpi --version 2>&1 | head -1); $(cargo --version); cbindgen $CBINDGEN_VERSION)"
