#!/usr/bin/env bash
# MFEM and hypre through parlops, built as users build them:
#  - the PyPI `mfem` wheel's serial libmfem (unpacked under BUILD/mfem, no Python import) and
#    c_examples/mfem_poisson.cpp through find_package(Parlops) and find_package(MFEM): same CG
#    iterations as mfem::CGSolver, same solution, zero copy;
#  - tests/mfem/dropin.cpp (a C++-only CMake project): MFEM-style programs, MFEM's solvers and
#    parlops::mfem's side by side in MFEM's order of calls (ex1p's preconditioner before operator);
#  - Debian's hypre (Open MPI): tests/hypre_parcsr.cpp at 2 and 3 ranks, and tests/amg/amg_hypre.cpp
#    (parlops_op_create_boomeramg and _with, options by hypre's names and MFEM's elasticity options,
#    against hypre's own PCG + BoomerAMG) at 1-4 ranks;
#  - tests/amg/maxwell.cpp: AMS and ADS through parlops against hypre's own PCG with AMS and ADS on
#    MFEM-assembled Maxwell (example 3) and div-div (example 4) systems, at 1-4 ranks;
#  - tests/amg/shell_diagonal.cpp: an MFEM-assembled Poisson operator as CSR and as a shell with its
#    diagonal, Jacobi-CG and Chebyshev-CG alike, at 1-4 ranks.
# Usage: tests/mfem_hypre.sh PREFIX BUILD_DIR
set -euo pipefail
PREFIX=$1
B=$2
: "${MPICC:=mpicc.openmpi}" "${MPIEXEC:=mpiexec.openmpi}"
mfem="$B/mfem/mfem/external/ser"
tools/mfem_fetch.sh "$B"
# The four test programs compile in the background from here (each compile is one thread; the
# builds and runs below leave a core free most of the time); each run waits for its program.
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
declare -A pids
compile() { # compile NAME SOURCE [extra flags...]: $B/NAME, its log $B/NAME.build.log
  local name=$1 src=$2
  shift 2
  # shellcheck disable=SC2046
  mpicxx.openmpi -std=c++17 -O2 -Wall -Wextra -Werror "$src" -isystem /usr/include/hypre "$@" \
    $(pkg-config --cflags --libs parlops) -lHYPRE -Wl,-rpath,"$PREFIX/lib" -o "$B/$name" \
    >"$B/$name.build.log" 2>&1 &
  pids[$name]=$!
}
built() { # built NAME: wait for NAME's compile; its log and a failure if it failed
  wait "${pids[$1]}" || { cat "$B/$1.build.log"; echo "mfem_hypre: $1 did not compile"; exit 1; }
}
mfemflags=(-isystem "$mfem/include" -L"$mfem/lib" -lmfem -Wl,-rpath,"$mfem/lib")
compile hypre_parcsr tests/hypre_parcsr.cpp
compile amg_hypre tests/amg/amg_hypre.cpp "${mfemflags[@]}"
compile maxwell tests/amg/maxwell.cpp "${mfemflags[@]}"
compile shell_diagonal tests/amg/shell_diagonal.cpp "${mfemflags[@]}"
echo "== MFEM example through find_package(Parlops) and find_package(MFEM)"
rm -rf "$B/mfem-example"
cmake -S c_examples -B "$B/mfem-example" -DCMAKE_PREFIX_PATH="$PREFIX" -DPARLOPS_EXAMPLES_MFEM=ON \
  -DMFEM_DIR="$mfem/lib/cmake/mfem" -DMPI_C_COMPILER="$(command -v "$MPICC")" -DCMAKE_BUILD_TYPE=Release \
  >"$B/mfem-example.cmake.log" || { cat "$B/mfem-example.cmake.log"; exit 1; }
cmake --build "$B/mfem-example" --target mfem_poisson -j 2 >"$B/mfem-example.build.log" || { cat "$B/mfem-example.build.log"; exit 1; }
timeout 300 "$B/mfem-example/mfem_poisson" 24 2

echo "== MFEM drop-in: MFEM-style programs, MFEM's solvers and parlops' side by side (C++-only CMake project)"
rm -rf "$B/mfem-dropin"
cmake -S tests/mfem -B "$B/mfem-dropin" -DCMAKE_PREFIX_PATH="$PREFIX" -DMFEM_DIR="$mfem/lib/cmake/mfem" \
  -DMPI_CXX_COMPILER="$(command -v mpicxx.openmpi)" -DCMAKE_BUILD_TYPE=Release \
  >"$B/mfem-dropin.cmake.log" 2>&1 || { cat "$B/mfem-dropin.cmake.log"; exit 1; }
cmake --build "$B/mfem-dropin" -j 2 >"$B/mfem-dropin.build.log" 2>&1 || { cat "$B/mfem-dropin.build.log"; exit 1; }
timeout 300 "$B/mfem-dropin/mfem_dropin" 6 2

echo "== hypre ParCSR wrapped zero-copy, against hypre (2 and 3 ranks)"
built hypre_parcsr
for n in 2 3; do timeout 120 "$MPIEXEC" -n "$n" "$B/hypre_parcsr" 60; done

echo "== BoomerAMG through parlops against hypre's own PCG + BoomerAMG (1, 2, 3 and 4 ranks)"
# 2D/3D Poisson refined twice and an MFEM-assembled 3D elasticity beam (scalar and systems AMG)
built amg_hypre
for n in 1 2 3 4; do timeout 300 "$MPIEXEC" -n "$n" "$B/amg_hypre"; done

echo "== AMS and ADS through parlops against hypre's own PCG + AMS/ADS on MFEM-assembled systems (1-4 ranks)"
built maxwell
for n in 1 2 3 4; do timeout 300 "$MPIEXEC" -n "$n" "$B/maxwell"; done

echo "== the diagonal of a matrix-free operator: an MFEM-assembled Poisson operator as CSR and as a shell with its diagonal (1-4 ranks)"
built shell_diagonal
for n in 1 2 3 4; do timeout 300 "$MPIEXEC" -n "$n" "$B/shell_diagonal"; done
