#!/usr/bin/env python3
"""Print the functions include/parlops.h declares, one per line, sorted (tools/link_shared.sh checks
the version script against them). Usage: header_functions.py [HEADER]"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from header_parse import functions  # noqa: E402

print("\n".join(functions(open(sys.argv[1] if len(sys.argv) > 1 else "include/parlops.h").read())))
