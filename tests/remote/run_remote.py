"""Runs the remote-read tests (pytest) for `meson test --suite remote`.

    run_remote.py            zt_open_url over HTTP: nginx and fault_server.py
    run_remote.py s3         s3://: the botocore signature server and s3rver; where
                             each credential is sent (test_credential_scope.py)
    run_remote.py dist       the torch.distributed tensor-parallel recipe
    run_remote.py link       the link simulator's accuracy, and the range
                             cost model's request counts through it

A missing tool (nginx, botocore, npm, torch) skips (exit 77) on a developer's
machine and fails in CI (CI=true), like the ABI check without abidiff: a test
that silently never runs protects nothing. npm present but unable to install
s3rver (registry unreachable) is a failure everywhere."""
import importlib.util
import os
import shutil
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from nginx_server import find_nginx  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] in ("s3", "dist", "link") else "http"
extra = sys.argv[2:] if mode != "http" else sys.argv[1:]
files = {"http": ["test_remote.py", "test_log_redaction.py"],
         "s3": ["test_s3_sig.py", "test_s3rver.py", "test_credential_scope.py"],
         "dist": ["test_distributed.py"],
         "link": ["test_link_sim.py", "test_remote_plan.py", "test_remote_shards.py", "test_remote_bulk.py",
                  "test_remote_h2.py", "test_open_round_trips.py", "test_remote_connections.py"]}[mode]


def give_up(what):
    if os.environ.get("CI") == "true":
        print("FAIL: missing " + what)
        sys.exit(1)
    print("SKIP: missing " + what)
    sys.exit(77)


missing = []
if not find_nginx() and mode != "s3":
    missing.append("nginx (Debian: nginx-light, tools/dev.sh deps)")
needed = ["numpy", "pytest"] + {"http": [], "s3": ["botocore"], "dist": ["torch"], "link": []}[mode]
for mod in needed:
    if importlib.util.find_spec(mod) is None:
        missing.append(f"{mod} for {sys.executable} (Debian: python3-{mod}, tools/dev.sh deps)")
if mode in ("s3", "dist") and not (shutil.which("npm") and shutil.which("node")):
    missing.append("node and npm (Debian: nodejs, npm; tools/dev.sh deps)")
if missing:
    give_up(", ".join(missing))
if os.environ.get("ZT_HAVE_CURL") != "1":
    print("SKIP: libztensor was built without libcurl (-Dcurl=disabled)")
    sys.exit(1 if os.environ.get("CI") == "true" else 77)
if mode in ("s3", "dist"):
    from s3rver_server import install  # noqa: E402
    try:
        install(os.environ["ZT_NPM_PREFIX"])
    except Exception as e:  # npm there but failing: never a skip
        print(f"FAIL: cannot install s3rver with npm into {os.environ['ZT_NPM_PREFIX']}: {e}")
        sys.exit(1)
import pytest  # noqa: E402

sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "--rootdir", here] + [os.path.join(here, f) for f in files]
                     + extra))
