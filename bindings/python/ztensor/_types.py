"""Type aliases shared by the public signatures."""

import os
from typing import Any, Union

import numpy as np
import numpy.typing as npt

PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
# What a Reader opens: a path (str or os.PathLike), or the bytes of a whole
# file in any buffer (bytes, bytearray, memoryview, mmap.mmap, numpy uint8).
Source = Union[str, "os.PathLike[str]", "os.PathLike[bytes]", bytes, bytearray, memoryview, Any]
Array = npt.NDArray[Any]  # any numpy array the library hands out
ArrayLike = npt.ArrayLike
DTypeLike = npt.DTypeLike
Float32Array = npt.NDArray[np.float32]
Uint16Array = npt.NDArray[np.uint16]
# What Reader[name] gives: an array, SparseCSR/SparseCOO (or a scipy matrix),
# Quantized, or {role: array}. Any, because callers know which they stored.
ObjectValue = Any
