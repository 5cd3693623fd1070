#!/usr/bin/env python3
"""Prints MAJOR.MINOR.PATCH from include/ztensor.h: the single source of the version."""
import re
import sys

text = open(sys.argv[1], encoding="utf-8").read()
parts = [re.search(r"#define ZT_VERSION_%s (\d+)" % k, text).group(1) for k in ("MAJOR", "MINOR", "PATCH")]
print(".".join(parts))
