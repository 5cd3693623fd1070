"""The peak RSS of one command alone. A child forked (or vforked) from the
test's own Python inherits that process's high-water mark through exec, so
ru_maxrss would report the test's memory, not the command's: the command is
started instead by a bare interpreter (python3 -S, no imports but os),
whose own few MB are the floor of the figure."""
import os
import subprocess
import sys

_MEASURE = """
import os, sys
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ,
                     file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


def peak_rss_mb(*argv):
    """(exit code, peak RSS in MB) of argv, its stdout discarded."""
    p = subprocess.run([sys.executable, "-S", "-c", _MEASURE, *map(str, argv)], capture_output=True, text=True,
                       check=True)
    code, kib = p.stdout.split()
    return int(code), int(kib) / 1024.0
