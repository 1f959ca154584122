#!/usr/bin/env python3
"""Fail when a valgrind log has a leak or invalid access that comes from parlops itself.

Open MPI's own start-up leaks and uninitialised reads are not ours: a record counts only when its
stack shows libparlops and no MPI library frame. Neither are the dynamic loader's word-at-a-time
string scans that valgrind reports as invalid reads while a library is dlopen'ed (hypre, loaded at
run time): a record with a loader frame (ld-linux, dl-*.c) among its three innermost is not counted. Usage: valgrind_check.py LOG...
"""
import re
import sys

bad = 0
for path in sys.argv[1:]:
    text = open(path, errors="replace").read()
    records = re.split(r"\n==\d+== \n", text)
    for rec in records:
        if not re.search(r"definitely lost|Invalid (read|write|free)|Mismatched free", rec):
            continue
        if "libparlops" not in rec and "parlops::" not in rec:
            continue
        if re.search(r"libmpi|libopen-pal|libopen-rte|libmpich|libhwloc|libpmix", rec):
            continue
        frames = re.findall(r"==\d+==\s+(?:at|by) 0x[0-9A-F]+: .*", rec)[:3]
        if any(re.search(r"ld-linux|\((dl-[a-z-]+|rtld)\.c:\d+\)", f) for f in frames):
            continue
        bad += 1
        print(f"{path}: parlops problem:\n{rec}\n")
print(f"valgrind: {len(sys.argv) - 1} program(s) checked, {bad} problem(s) from parlops")
sys.exit(1 if bad else 0)
