#!/usr/bin/env python3
"""Every command that `zt --help` lists has a subsection in the man page.

usage: check_man.py ZT MAN_PAGE
"""
import re
import subprocess
import sys


def main():
    zt, man = sys.argv[1], sys.argv[2]
    help_text = subprocess.run([zt, "--help"], capture_output=True, text=True, check=True,
                               env={}).stdout
    block = help_text.split("commands:", 1)[1].split("\n\n", 1)[0]
    commands = [line.split()[0] for line in block.splitlines() if line.strip()]
    sections = set(re.findall(r"^\.SS (\S+)$", open(man, encoding="utf-8").read(), re.M))
    missing = [c for c in commands if c not in sections]
    extra = sorted(sections - set(commands))
    if not commands:
        sys.exit("FAIL: no commands found in 'zt --help'")
    if missing or extra:
        sys.exit("FAIL: man page out of step with 'zt --help': missing %s, extra %s" % (missing, extra))
    print("man page documents all %d commands" % len(commands))


if __name__ == "__main__":
    main()
