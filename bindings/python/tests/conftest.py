import os
import pathlib

import pytest


@pytest.fixture
def interop_dir():
    d = os.environ.get("ZT_INTEROP_DIR")
    if not d or not pathlib.Path(d, "v1", "expected.json").is_file():
        pytest.skip("ZT_INTEROP_DIR does not point at the interop vectors")
    return pathlib.Path(d)
