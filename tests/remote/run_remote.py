"""Runs the remote-read tests (pytest) for `meson test --suite remote`.
Without nginx they are skipped (exit 77) on a developer's machine and fail
in CI (CI=true), like the ABI check without abidiff: a test that silently
never runs protects nothing."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from nginx_server import find_nginx  # noqa: E402

missing = []
if not find_nginx():
    missing.append("nginx (Debian: nginx-light, tools/dev.sh deps)")
try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    missing.append(f"{e.name} for {sys.executable}")
if missing:
    if os.environ.get("CI") == "true":
        print("FAIL: missing " + ", ".join(missing))
        sys.exit(1)
    print("SKIP: missing " + ", ".join(missing))
    sys.exit(77)
if os.environ.get("ZT_HAVE_CURL") != "1":
    print("SKIP: libztensor was built without libcurl (-Dcurl=disabled)")
    sys.exit(1 if os.environ.get("CI") == "true" else 77)
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "--rootdir", here, os.path.join(here, "test_remote.py")]
                     + sys.argv[1:]))
