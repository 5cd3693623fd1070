"""The README's installs, checked: a fresh venv (--system-site-packages, for
Debian's numpy and pytest), `pip install --no-build-isolation --no-index`,
then the binding's tests against the installed package, with no PYTHONPATH,
no ZTENSOR_LIBRARY and a working directory outside the tree.

usage: run_installed_tests.py bundled SOURCE_ROOT VERSION INTEROP_DIR
         pip install SOURCE_ROOT: the package must load the library inside it
       run_installed_tests.py system SOURCE_ROOT VERSION INTEROP_DIR LIBRARY
         pip install SOURCE_ROOT/bindings/python (no library), with LIBRARY's
         folder on LD_LIBRARY_PATH standing in for a system-wide install
"""
import glob
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time

mode, src, version, interop = sys.argv[1:5]
library = sys.argv[5] if mode == "system" else None
try:
    import ensurepip  # noqa: F401  # what `python3 -m venv` installs pip with
    import numpy  # noqa: F401
    import pytest  # noqa: F401
    if mode == "bundled":
        import mesonpy  # noqa: F401
    else:
        import setuptools  # noqa: F401
except ImportError as e:
    # tools/dev.sh installs them; under CI a skip would hide a broken install.
    print(f"{e.name} is not installed for {sys.executable} "
          "(Debian: python3-venv python3-mesonpy python3-setuptools python3-numpy python3-pytest)")
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


def inside(path, folder):
    return os.path.realpath(path).startswith(os.path.realpath(folder) + os.sep)


tmp = tempfile.mkdtemp(prefix="zt-pyinstall-")
try:
    venv = os.path.join(tmp, "venv")
    py = os.path.join(venv, "bin", "python")
    run([sys.executable, "-m", "venv", "--system-site-packages", venv])
    if mode == "bundled":
        target = src
    else:
        # setuptools builds in place (build/, *.egg-info): a copy keeps the
        # source tree clean; setup.py finds include/ztensor.h the same way.
        copy = os.path.join(tmp, "src")
        shutil.copytree(os.path.join(src, "bindings", "python"), os.path.join(copy, "bindings", "python"),
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", ".mypy_cache"))
        os.makedirs(os.path.join(copy, "include"))
        shutil.copy(os.path.join(src, "include", "ztensor.h"), os.path.join(copy, "include"))
        target = os.path.join(copy, "bindings", "python")
    # --isolated: no pip.conf or PIP_* settings (a find-links there could
    # satisfy what must come from this tree).
    run([py, "-m", "pip", "--isolated", "install", "--no-build-isolation", "--no-index", "--no-cache-dir", target])

    # meson cannot glob: a module left out of bindings/python/meson.build is
    # missing from every install.
    pkg_src = os.path.join(src, "bindings", "python", "ztensor")
    installed = glob.glob(os.path.join(venv, "lib", "python*", "site-packages", "ztensor"))
    missing = sorted(set(f for f in os.listdir(pkg_src) if f.endswith((".py", ".pyi")) or f == "py.typed") -
                     set(os.listdir(installed[0]) if installed else []))
    if missing:
        sys.exit(f"FAIL: not installed: {missing}; list them in bindings/python/meson.build")

    # Only what a user has after the install: no PYTHONPATH, no
    # ZTENSOR_LIBRARY, run from a directory that holds no ztensor package.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "ZT_INTEROP_DIR": interop,
           "PYTHONDONTWRITEBYTECODE": "1"}
    if library:
        env["LD_LIBRARY_PATH"] = os.path.dirname(library)
    work = os.path.join(tmp, "work")
    shutil.copytree(os.path.join(src, "bindings", "python", "tests"), os.path.join(work, "tests"))
    where = run([py, "-c", "import ztensor; print(ztensor.__version__); print(ztensor.__file__); "
                 "print(ztensor.library_path); print(ztensor.library_source); "
                 "from ztensor import _native; print(_native.extension_path or _native.pure_python_reason)"],
                env=env, cwd=work).split("\n")
    checks = {
        f"__version__ is {version} (include/ztensor.h)": where[0] == version,
        "ztensor is imported from the venv": inside(where[1], venv),
    }
    if mode == "bundled":
        checks["library_path is inside the venv's ztensor package"] = inside(where[2], os.path.dirname(where[1]))
        checks["library_source is 'package'"] = where[3] == "package"
    else:
        checks[f"library_path is {library}"] = os.path.realpath(where[2]) == os.path.realpath(library)
        checks["library_source is 'system loader'"] = where[3] == "system loader"
    if not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")):
        print(f"note: no Python headers for {sys.executable} (python3-dev): the install has no extension")
    else:
        # pip built the C++ extension (meson-python; setuptools for the
        # binding alone) and the package loads it; the suite checks it too.
        checks[f"ztensor._ext is inside the venv's ztensor package ({where[4]})"] = \
            inside(where[4], os.path.dirname(where[1]))
        env["ZTENSOR_REQUIRE_EXTENSION"] = "1"
    for what, ok in checks.items():
        print(("ok: " if ok else "FAIL: ") + what)
    if not all(checks.values()):
        sys.exit(1)
    run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], env=env, cwd=work)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
