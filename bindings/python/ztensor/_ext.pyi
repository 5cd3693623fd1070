"""Type stub of ztensor._ext, the C++ extension (bindings/python/ext/ztensor_ext.cpp)."""

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

ROW_SIZE: int

def bind(object_table: int, read_many: int, free: int, component: int, view: int, read: int) -> None: ...
def object_table(file: Optional[int]) -> Union[int, Tuple[bytes, int, List[str], bytes]]: ...
def read_dense(file: Optional[int], rows: Any, row_size: int, dims: Any, names: List[str], select: Any,
               type_of: Callable[[int, Optional[str]], Tuple["np.dtype[Any]", str]],
               split: Optional[Callable[[Any, str, str], Sequence[Any]]]
               ) -> Tuple[Dict[str, Any], List[Tuple[str, int, "np.dtype[Any]", str, Tuple[int, ...]]]]: ...
def mapped_views(file: Optional[int], rows: Any, row_size: int, dims: Any, names: List[str], select: Any,
                 type_of: Callable[[int, Optional[str]], Tuple["np.dtype[Any]", str]],
                 keeper: object, convert: Optional[Callable[[Any, str, str], Any]]
                 ) -> Tuple[Dict[str, Any], int]: ...
