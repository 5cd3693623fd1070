"""Runs the binding's pytest suite for `meson test`; exits 77 (skip) only when
numpy or pytest is not installed for this interpreter. Arguments naming test
files (test_*.py) run only those; others go to pytest."""
import os
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print(f"SKIP: {e.name} is not installed for {sys.executable} (Debian: python3-numpy python3-pytest)")
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
tests = os.path.join(here, "tests")
files = [os.path.join(tests, a) for a in sys.argv[1:] if a.startswith("test_") and a.endswith(".py")]
rest = [a for a in sys.argv[1:] if not (a.startswith("test_") and a.endswith(".py"))]
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider"] + (files or [tests]) + rest))
