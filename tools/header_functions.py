#!/usr/bin/env python3
"""Print the functions include/parlops.h declares, one per line, sorted (the version script's and the
ABI stub's source of truth, read as python/gen_capi.py reads the header)."""
import re
import sys

body = open(sys.argv[1] if len(sys.argv) > 1 else "include/parlops.h").read().split('extern "C" {', 1)[1]
names = re.findall(r"^[A-Za-z_][\w \*]*?[\s\*](parlops_\w+)\(", body, re.M)
print("\n".join(sorted(set(names))))
