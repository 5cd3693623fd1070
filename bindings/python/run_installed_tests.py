"""The README's install, checked: a fresh venv (--system-site-packages, for
Debian's numpy and pytest), `pip install --no-build-isolation --no-index` of
the source tree, then the binding's tests against the installed package, with
no PYTHONPATH, no ZTENSOR_LIBRARY and a working directory outside the tree.

usage: run_installed_tests.py SOURCE_ROOT VERSION INTEROP_DIR
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

src, version, interop = sys.argv[1:4]
try:
    import ensurepip  # noqa: F401  # what `python3 -m venv` installs pip with
    import mesonpy  # noqa: F401
    import numpy  # noqa: F401
    import pytest  # noqa: F401
except ImportError as e:
    # tools/dev.sh installs them; under CI a skip would hide a broken install.
    print(f"{e.name} is not installed for {sys.executable} "
          "(Debian: python3-venv python3-mesonpy python3-numpy python3-pytest)")
    sys.exit(1 if os.environ.get("CI") == "true" else 77)


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    t = time.monotonic()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    print(r.stdout)
    print(f"({time.monotonic() - t:.0f} s, exit {r.returncode})", flush=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: {cmd[0]} exited {r.returncode}")
    return r.stdout


tmp = tempfile.mkdtemp(prefix="zt-pyinstall-")
try:
    venv = os.path.join(tmp, "venv")
    py = os.path.join(venv, "bin", "python")
    run([sys.executable, "-m", "venv", "--system-site-packages", venv])
    # --isolated: no pip.conf or PIP_* settings (a find-links there could
    # satisfy what must come from this tree).
    run([py, "-m", "pip", "--isolated", "install", "--no-build-isolation", "--no-index", "--no-cache-dir", src])

    # meson cannot glob: a module left out of bindings/python/meson.build is
    # missing from every install.
    pkg_src = os.path.join(src, "bindings", "python", "ztensor")
    installed = glob.glob(os.path.join(venv, "lib", "python*", "site-packages", "ztensor"))
    missing = sorted(set(f for f in os.listdir(pkg_src) if f.endswith(".py") or f == "py.typed") -
                     set(os.listdir(installed[0]) if installed else []))
    if missing:
        sys.exit(f"FAIL: not installed: {missing}; list them in bindings/python/meson.build")

    # Only what a user has after the install: no PYTHONPATH, no
    # ZTENSOR_LIBRARY, run from a directory that holds no ztensor package.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "ZT_INTEROP_DIR": interop,
           "PYTHONDONTWRITEBYTECODE": "1"}
    work = os.path.join(tmp, "work")
    shutil.copytree(os.path.join(src, "bindings", "python", "tests"), os.path.join(work, "tests"))
    where = run([py, "-c", "import ztensor; print(ztensor.__version__); print(ztensor.__file__); "
                 "print(ztensor.library_path); print(ztensor.library_source)"], env=env, cwd=work).split("\n")
    site = os.path.realpath(venv)
    checks = {
        f"__version__ is {version} (include/ztensor.h)": where[0] == version,
        "ztensor is imported from the venv": os.path.realpath(where[1]).startswith(site + os.sep),
        "library_path is inside the venv's ztensor package":
            os.path.dirname(os.path.realpath(where[2])) == os.path.dirname(os.path.realpath(where[1])),
        "library_source is 'package'": where[3] == "package",
    }
    for what, ok in checks.items():
        print(("ok: " if ok else "FAIL: ") + what)
    if not all(checks.values()):
        sys.exit(1)
    run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], env=env, cwd=work)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
