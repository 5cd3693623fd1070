"""Type-checks the ztensor package (mypy --strict; settings in pyproject.toml).

Skips (exit 77) when mypy is not installed, except under CI=true, where
tools/dev.sh has installed it (Debian: python3-mypy) and a skip would hide
a regression.
usage: run_mypy.py SOURCE_ROOT
"""
import os
import subprocess
import sys

root = sys.argv[1]
try:
    import mypy  # noqa: F401
except ImportError:
    print(f"mypy is not installed for {sys.executable} (Debian: python3-mypy)")
    sys.exit(1 if os.environ.get("CI") == "true" else 77)

# No cache: nothing is written into the source tree.
sys.exit(subprocess.call([sys.executable, "-m", "mypy", "--config-file", os.path.join(root, "pyproject.toml"),
                          "--cache-dir", os.devnull], cwd=root))
