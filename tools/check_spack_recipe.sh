#!/usr/bin/env bash
# The Spack recipe (spack/packages/parlops/package.py) without Spack: compiled by Python's compiler,
# its directives' variants read back, and its install commands run as they are: make_args() taken
# from the recipe (plain Python, executed alone) and the recipe's two phases, `make build ARGS` and
# `make install ARGS`, into a new prefix with SKIP_DEPS=1 (as under Spack, which provides the
# dependencies: here the machine's); then the installed prefix used as a Spack user would (pkg-config,
# the C example at 2 ranks). make fresh-check runs this in its clean Debian root after `make test`.
# Usage: make spack-check, or tools/check_spack_recipe.sh [PREFIX]  (default build/spack-prefix)
set -euo pipefail
recipe=spack/packages/parlops/package.py
prefix=$(realpath -m "${1:-build/spack-prefix}")
python3 -m py_compile "$recipe"
rm -rf spack/packages/parlops/__pycache__
mapfile -t args < <(python3 - "$recipe" "$prefix" <<'PY'
import ast, sys
src = open(sys.argv[1]).read()
tree = ast.parse(src)
fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "make_args")
phases = {n.name for c in tree.body if isinstance(c, ast.ClassDef) for n in c.body if isinstance(n, ast.FunctionDef)}
assert {"build", "install"} <= phases, f"the recipe's phases: {sorted(phases)}"
for v in ("fortran", "hypre", "mfem", "cuda", "nccl"):
    assert f'variant("{v}"' in src, f"variant {v} missing"
ns = {}
exec(compile(ast.Module(body=[fn], type_ignores=[]), sys.argv[1], "exec"), ns)
for a in ns["make_args"](sys.argv[2], "mpicc.openmpi", "mpiexec.openmpi", "openmpi", fortran=True,
                         hypre_dir=None):
    print(a)
PY
)
echo "check_spack_recipe: make build/install ${args[*]}"
rm -rf "$prefix"
make --no-print-directory build "${args[@]}" >build/spack-recipe.log 2>&1 || { tail -30 build/spack-recipe.log; exit 1; }
make --no-print-directory install "${args[@]}" >>build/spack-recipe.log 2>&1 || { tail -30 build/spack-recipe.log; exit 1; }
grep -q "^deps: SKIP_DEPS=1" build/spack-recipe.log || { echo "check_spack_recipe: the dependencies were not skipped"; exit 1; }
soname=$(readelf -d "$prefix/lib/libparlops.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ -e "$prefix/lib/$soname" ] && [ -s "$prefix/share/doc/parlops/LICENSE-MIT" ] && [ -s "$prefix/share/parlops/fortran/parlops.f90" ] ||
  { echo "check_spack_recipe: the prefix lacks the library, the licences or the Fortran module"; exit 1; }
real="$prefix/lib/$(readlink "$prefix/lib/$soname")"
size=$(stat -c %s "$real")
# Installed stripped, as Debian does: no debug sections and no static symbol table in the library (the
# unstripped release build is ~70 MB, ~60 of them DWARF). The size bound is loose on purpose (9.8 MB
# with the FFT's rustfft kernels in 0.1): it catches a debug or unoptimised build, not growth.
if readelf -S -W "$real" | grep -Eq ' \.(debug_[a-z]+|symtab) '; then
  echo "check_spack_recipe: the installed library keeps debug sections or .symtab:"
  readelf -S -W "$real" | grep -E ' \.(debug_[a-z]+|symtab) '
  exit 1
fi
[ "$size" -lt 24000000 ] || { echo "check_spack_recipe: the installed library is $size bytes"; exit 1; }
# shellcheck disable=SC2046
mpicc.openmpi -O2 c_examples/vectors.c $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs parlops) \
  -Wl,-rpath,"$prefix/lib" -lm -o build/spack-vectors
mpiexec.openmpi -n 2 build/spack-vectors | grep -q '^ranks = 2,' || { echo "check_spack_recipe: the example failed"; exit 1; }
echo "check_spack_recipe: the recipe's install commands installed $soname ($size bytes) into $prefix; the C example ran at 2 ranks: 1 passed, 0 failed"
