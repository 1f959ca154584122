#!/usr/bin/env bash
# make abi-check: the ABI the header declares (tools/abi_stub.py, compiled with the version script and
# the soname) against the committed baseline of the last release (abi/parlops-<version>.abi, made by
# libabigail's abidw). Additions pass (functions, types, constants, enumerators added to an enum); any
# other change (a function or type removed or changed, a
# struct field added, an enum value changed, a symbol moved to another version node) fails, unless
# the soname changed and CHANGELOG.md marks the change **ABI** under "Unreleased".
#   tools/abi_check.sh check               compare the header with the baseline
#   tools/abi_check.sh baseline            write the baseline of this release (at a release only)
#   tools/abi_check.sh selftest            show that removing a function, adding a struct field and
#                                          renumbering an enumerator fail
#   tools/abi_check.sh stub HEADER SONAME MAP OUT   build the stub library of a header
set -euo pipefail
B=${BUILD_DIR:-build}/abi
mkdir -p "$B"
MPICC=${MPICC:-mpicc.openmpi}
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
major=${version%%.*} rest=${version#*.} minor=${rest%%.*}
soversion=$([ "$major" = 0 ] && echo "0.$minor" || echo "$major")
soname=libparlops.so.$soversion
baseline=$(ls abi/parlops-*.abi 2>/dev/null | sort -V | tail -1 || true)

stub() { # header soname map out
  local h=$1 so=$2 map=$3 out=$4 d
  # compiled in a directory of its own under relative names, so the DWARF holds no machine's paths
  d=$(realpath "$(mktemp -d "$B/stub.XXXXXX")")
  cp "$h" "$d/parlops.h"
  mapabs=$(realpath "$map")
  python3 tools/abi_stub.py "$h" >"$d/stub.c"
  (cd "$d" && "$MPICC" -g -O0 -fPIC -shared -w -fdebug-prefix-map="$d"=. -o stub.so stub.c \
    -Wl,--version-script="$mapabs" -Wl,-soname,"$so")
  mv "$d/stub.so" "$out"
  rm -rf "$d"
}

dump() { # header map out.abi
  stub "$1" "$soname" "$2" "$B/stub.so"
  abidw --no-corpus-path --no-comp-dir-path --out-file "$3" "$B/stub.so"
}

compare() { # baseline current -> 0 compatible, 1 not
  local rc=0
  abidiff --no-added-syms --harmless "$1" "$2" >"$B/abidiff.txt" 2>&1 || rc=$?
  # bit 2 (4): an ABI change, bit 3 (8): an incompatible one; 1/2: abidiff itself failed
  if [ $((rc & 3)) -ne 0 ]; then cat "$B/abidiff.txt"; echo "abi-check: abidiff failed ($rc)"; exit 2; fi
  [ $((rc & 12)) -eq 0 ] && return 0
  # An enumerator added to an enum (a new status, reason or method value) is an addition: a program
  # built against the old header never passes or receives it. Accepted only when every line of the
  # report is one of the shapes such a report has (anything else -- an enumerator removed or
  # renumbered, a size, a field, a removed function -- still fails).
  [ $((rc & 8)) -eq 0 ] && python3 - "$B/abidiff.txt" <<'PY'
import re, sys
ok = [r"Functions changes summary: 0 Removed, \d+ Changed( \(\d+ filtered out\))?, 0 Added.*",
      r"Variables changes summary: 0 Removed, 0 Changed, 0 Added variables?", r"\d+ functions? with some indirect sub-type changes?:",
      r"\[C\] 'function .*' at .* has some indirect sub-type changes:", r"parameter \d+ of type '.*' has sub-type changes:",
      r"return type changed:", r"in pointed to type '.*'( at .*)?:", r"underlying type '.*'( at .*)? changed:",
      r"type size hasn't changed", r"\d+ data member changes?:", r"type of '.*' changed:",
      r"\d+ enumerator insertions?:", r"'\w+::\w+' value '-?\d+'", r""]
lines = [l.strip() for l in open(sys.argv[1])]
sys.exit(0 if any("enumerator insertion" in l for l in lines)
         and all(any(re.fullmatch(p, l) for p in ok) for l in lines) else 1)
PY
}

case ${1:-check} in
stub) stub "$2" "$3" "$4" "$5" ;;
baseline)
  dump include/parlops.h abi/parlops.map "abi/parlops-$version.abi"
  echo "abi-check: wrote abi/parlops-$version.abi" ;;
check)
  [ -n "$baseline" ] || { echo "abi-check: no baseline in abi/"; exit 1; }
  dump include/parlops.h abi/parlops.map "$B/current.abi"
  if compare "$baseline" "$B/current.abi"; then
    echo "abi-check: the header keeps the ABI of $(basename "$baseline" .abi) (additions only)"
    exit 0
  fi
  old_soname=$(sed -n "s/.*soname='\([^']*\)'.*/\1/p" "$baseline" | head -1)
  sed -n '/^## Unreleased/,/^## /p' CHANGELOG.md | grep -q '\*\*ABI\*\*' && marked=1 || marked=0
  if [ "$old_soname" != "$soname" ] && [ $marked = 1 ]; then
    echo "abi-check: incompatible with $(basename "$baseline" .abi), declared: soname $old_soname -> $soname and an **ABI** entry in CHANGELOG.md"
    exit 0
  fi
  cat "$B/abidiff.txt"
  echo "abi-check: the header breaks the ABI of $(basename "$baseline" .abi) (above); a break needs a new soname (the next minor below 1.0) and an **ABI** entry under Unreleased in CHANGELOG.md"
  exit 1 ;;
selftest)
  [ -n "$baseline" ] || { echo "abi-check: no baseline in abi/"; exit 1; }
  dump include/parlops.h abi/parlops.map "$B/current.abi"
  compare "$baseline" "$B/current.abi" || { echo "abi-check selftest: the header itself differs from the baseline"; exit 1; }
  # 1. a function removed (from the header and the map)
  mkdir -p "$B/removed"
  cp include/parlops.h "$B/removed/parlops.h"
  python3 - "$B/removed/parlops.h" <<'PY'
import re, sys
p = sys.argv[1]; s = open(p).read()
s2 = re.sub(r"^parlops_status parlops_vec_axpby\([^;]*\);\n", "", s, flags=re.M | re.S)
open(p, "w").write(s2)
PY
  grep -q "parlops_vec_axpby(" "$B/removed/parlops.h" && { echo "abi-check selftest: could not remove the function"; exit 1; }
  grep -v "parlops_vec_axpby;" abi/parlops.map >"$B/removed/parlops.map"
  dump "$B/removed/parlops.h" "$B/removed/parlops.map" "$B/removed.abi"
  if compare "$baseline" "$B/removed.abi"; then echo "abi-check selftest: removing parlops_vec_axpby passed the check"; exit 1; fi
  grep -q "parlops_vec_axpby" "$B/abidiff.txt" || { echo "abi-check selftest: the report does not name the removed function"; exit 1; }
  echo "abi-check selftest: removing a function fails: $(grep -m1 -E 'Removed|removed' "$B/abidiff.txt" | sed 's/^ *//')"
  # 2. a field added at the end of a struct passed by pointer (frozen: docs/design-notes.md)
  mkdir -p "$B/grown"
  python3 - include/parlops.h "$B/grown/parlops.h" <<'PY'
import sys
s = open(sys.argv[1]).read()
old = "  double r2norm;\n} parlops_solve_info;"
assert old in s
open(sys.argv[2], "w").write(s.replace(old, "  double r2norm;\n  int64_t restarts;\n} parlops_solve_info;"))
PY
  dump "$B/grown/parlops.h" abi/parlops.map "$B/grown.abi"
  if compare "$baseline" "$B/grown.abi"; then echo "abi-check selftest: a field added to parlops_solve_info passed the check"; exit 1; fi
  grep -q "parlops_solve_info" "$B/abidiff.txt" || { echo "abi-check selftest: the report does not name the struct"; exit 1; }
  echo "abi-check selftest: a field added to parlops_solve_info fails: $(grep -m1 'size changed' "$B/abidiff.txt" | sed 's/^ *//')"
  # 3. an addition passes
  python3 - include/parlops.h "$B/added.h" <<'PY'
import sys
s = open(sys.argv[1]).read()
anchor = "parlops_status parlops_vec_destroy(parlops_vec **v);"
assert anchor in s
open(sys.argv[2], "w").write(s.replace(anchor, anchor + "\nparlops_status parlops_vec_new_thing(parlops_vec *v, int k);"))
PY
  mkdir -p "$B/added" && mv "$B/added.h" "$B/added/parlops.h"
  sed 's/^    parlops_vec_waxpy;/    parlops_vec_waxpy;\n    parlops_vec_new_thing;/' abi/parlops.map >"$B/added/parlops.map"
  dump "$B/added/parlops.h" "$B/added/parlops.map" "$B/added.abi"
  compare "$baseline" "$B/added.abi" || { cat "$B/abidiff.txt"; echo "abi-check selftest: adding a function failed the check"; exit 1; }
  echo "abi-check selftest: adding a function passes"
  # 4. an enumerator renumbered fails (an enumerator added passes: the header itself adds some)
  mkdir -p "$B/renumbered"
  python3 - include/parlops.h "$B/renumbered/parlops.h" <<'PY'
import sys
s = open(sys.argv[1]).read()
old = "PARLOPS_CONVERGED_ATOL = 3,"
assert old in s
open(sys.argv[2], "w").write(s.replace(old, "PARLOPS_CONVERGED_ATOL = 12,"))
PY
  dump "$B/renumbered/parlops.h" abi/parlops.map "$B/renumbered.abi"
  if compare "$baseline" "$B/renumbered.abi"; then echo "abi-check selftest: a renumbered enumerator passed the check"; exit 1; fi
  echo "abi-check selftest: an enumerator renumbered fails: $(grep -m1 -E "from value" "$B/abidiff.txt" | sed 's/^ *//')" ;;
*) echo "usage: $0 check|baseline|selftest|stub"; exit 2 ;;
esac
