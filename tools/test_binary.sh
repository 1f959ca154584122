#!/usr/bin/env bash
# Print the path of the release test program NAME (building it if needed), e.g. tools/test_binary.sh gpu_check
set -euo pipefail
cargo test --release --locked --no-run --test "$1" --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == sys.argv[1] and m.get("executable"):
        print(m["executable"])
' "$1"
