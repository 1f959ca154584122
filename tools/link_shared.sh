#!/usr/bin/env bash
# The shared library that is installed: linked from cargo's static library (the same compiled code as
# its cdylib) with the version script abi/parlops.map, which rustc's own cdylib link cannot take
# (rustc passes its own anonymous version script, and an anonymous node cannot be combined with
# named ones). Checks that the map's nodes name exactly the header's functions, and that the library
# exports exactly those, each at a PARLOPS_* version, and nothing else.
# Usage: tools/link_shared.sh MPICC OUT SONAME
set -euo pipefail
mpicc=$1 out=$2 soname=$3
map=abi/parlops.map
want=$(python3 tools/header_functions.py include/parlops.h)
mapped=$(grep -oE '^ +parlops_[a-z0-9_]+;' "$map" | tr -d ' ;' | sort)
if [ "$want" != "$mapped" ]; then
  diff <(echo "$want") <(echo "$mapped") | sed 's/^</  in the header only:/; s/^>/  in the map only:/' | grep -E 'only' || true
  echo "link_shared: $map and include/parlops.h name different functions (a new function goes into the newest version node)"
  exit 1
fi
[ -z "$(echo "$mapped" | uniq -d)" ] || { echo "link_shared: a function is in two version nodes of $map"; exit 1; }
undef=()
for f in $mapped; do undef+=("-Wl,-u,$f"); done
mkdir -p "$(dirname "$out")"
"$mpicc" -shared -o "$out.tmp" -Wl,--version-script="$map" -Wl,-soname,"$soname" "${undef[@]}" \
  target/release/libparlops.a -ldl -lpthread -lm -lrt -lutil -lgcc_s \
  -Wl,--gc-sections -Wl,-z,relro,-z,now -Wl,-O1 -Wl,--no-undefined
exported=$(readelf --dyn-syms -W "$out.tmp" | awk '$7 != "UND" && $7 != "ABS" && ($5 == "GLOBAL" || $5 == "WEAK") {print $8}' | sort)
bad=$(echo "$exported" | grep -vE '^parlops_[a-z0-9_]+@@?PARLOPS_[0-9]+\.[0-9]+$' || true)
[ -z "$bad" ] || { echo "link_shared: exported beyond parlops_* at a PARLOPS_* version:"; echo "$bad" | head; exit 1; }
if [ "$(echo "$exported" | sed 's/@.*//' | sort)" != "$want" ]; then
  echo "link_shared: the library does not export exactly the header's functions"; exit 1
fi
readelf -d "$out.tmp" | grep -q "Library soname: \[$soname\]" || { echo "link_shared: soname is not $soname"; exit 1; }
mv "$out.tmp" "$out"
echo "link_shared: $out ($soname): $(echo "$exported" | wc -l) functions, all at PARLOPS_* versions, nothing else exported"
