import os
import pathlib

import pytest


@pytest.fixture
def interop_dir():
    d = os.environ.get("ZT_INTEROP_DIR")
    if not d or not pathlib.Path(d, "v1", "expected.json").is_file():
        pytest.fail("interop vectors missing: ZT_INTEROP_DIR=%r has no v1/expected.json "
                    "(they ship in tests/data/interop; run the tests through 'meson test')" % d)
    return pathlib.Path(d)
