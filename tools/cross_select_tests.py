#!/usr/bin/env python3
"""select the tests a cross run runs, for tools/cross.sh and
tools/cross-windows.sh:

    cross_select_tests.py BUILD SUITES SKIP names|outputs

names: the tests of SUITES (space-separated) less SKIP and the in-process
ones (suite inproc: the host's Python cannot load a foreign library), one
per line; outputs: the files those tests need built, relative to BUILD (for
ninja), each once."""
import json
import os
import subprocess
import sys

b, suites, skip, what = sys.argv[1], set(sys.argv[2].split()), set(sys.argv[3].split()), sys.argv[4]


def intro(kind):
    return json.loads(subprocess.check_output(["meson", "introspect", b, "--" + kind]))


files = {t["id"]: t["filename"] for t in intro("targets")}
seen = set()
for test in intro("tests"):
    mine = {p for s in test["suite"] for p in s.split(":")[-1].split("+")}
    if not mine & suites or "inproc" in mine or test["name"] in skip:
        continue
    if what == "names":
        print(test["name"])
        continue
    for dep in test["depends"]:
        for f in files[dep]:
            rel = os.path.relpath(f, b)
            if rel not in seen:
                seen.add(rel)
                print(rel)
