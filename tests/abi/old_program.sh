#!/usr/bin/env bash
# The ABI kept (issue 34): tests/abi/old_program.c compiled against the 0.1.0 header of commit
# f8a4d03 (tests/abi/v0.1.0/parlops.h) and linked as that tree's library linked programs (soname
# libparlops.so.0, no symbol versions: a stub library of that header, tools/abi_check.sh stub), then
# run unchanged at 1-3 ranks against the library installed in PREFIX (libparlops.so.0 is a link to
# it in the 0.1 series), checking that it loaded that library.
# Usage: tests/abi/old_program.sh PREFIX BUILD_DIR
set -euo pipefail
PREFIX=$(cd "$1" && pwd)
B=$2/abi-old
: "${MPICC:=mpicc.openmpi}" "${MPIEXEC:=mpiexec.openmpi}"
rm -rf "$B" && mkdir -p "$B/lib"
# the old library's link interface: its soname, its functions unversioned
printf '{ global: parlops_*; };\n' >"$B/old.map"
BUILD_DIR=$2 tools/abi_check.sh stub tests/abi/v0.1.0/parlops.h libparlops.so.0 "$B/old.map" "$B/lib/libparlops.so.0"
ln -sf libparlops.so.0 "$B/lib/libparlops.so"
"$MPICC" -O1 -Wall -Wextra -Werror -Itests/abi/v0.1.0 tests/abi/old_program.c -L"$B/lib" -lparlops -lm \
  -o "$B/old_program"
readelf -d "$B/old_program" | grep -q 'NEEDED.*\[libparlops.so.0\]' || { echo "old_program does not need libparlops.so.0"; exit 1; }
if readelf --dyn-syms -W "$B/old_program" | grep -q 'parlops_.*@PARLOPS'; then
  echo "old_program's references carry versions: it is not linked as the 0.1.0 library linked programs"; exit 1
fi
# run against the new library only (no rpath to the stub)
got=$(LD_LIBRARY_PATH="$PREFIX/lib" ldd "$B/old_program" | awk '/libparlops/ {print $3}')
[ "$(realpath "$got")" = "$(realpath "$PREFIX/lib/libparlops.so.0")" ] || { echo "old_program loads $got"; exit 1; }
for n in 1 2 3; do
  LD_LIBRARY_PATH="$PREFIX/lib" timeout 300 "$MPIEXEC" -n $n "$B/old_program"
done
