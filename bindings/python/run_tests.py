"""Runs the binding's pytest suite for `meson test`; exits 77 (skip) only when
numpy or pytest is not installed for this interpreter."""
import os
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print(f"SKIP: {e.name} is not installed for {sys.executable} (Debian: python3-numpy python3-pytest)")
    sys.exit(77)

here = os.path.dirname(os.path.abspath(__file__))
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", os.path.join(here, "tests")] + sys.argv[1:]))
