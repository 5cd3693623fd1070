"""What ztensor.numpy and ztensor.torch share: the safetensors-style calls
(save_file, load_file, save, load, safe_open) over Reader and Writer, with
the framework's conversions passed in.

Metadata is safetensors' dict[str, str]: it is stored as the file's
attributes and given back by safe_open(...).metadata().
"""

import contextlib
from types import TracebackType
from typing import Any, Callable, Dict, Generic, Iterator, List, Mapping, Optional, Tuple, Type, TypeVar

import numpy as np

from . import _attributes, _safetensors_format as _st
from ._errors import (FileNotFound, InvalidArgumentError, SafetensorError, SafetensorFileError,  # noqa: F401
                      TensorNotFoundError)
from ._lib import ZTensorError, ZTensorFileNotFoundError
from ._types import Array, PathLike, Source
from .reader import Reader, Slice
from .writer import Digest, Writer, Zstd

T = TypeVar("T")  # the framework's tensor type

# One tensor for writing: (little-endian contiguous array, zTensor dtype name
# or None to take the array's own).
ToNumpy = Callable[[str, Any], Tuple[Array, Optional[str]]]
# Back: (array as the Reader gives it, zTensor element type name, name) -> tensor.
FromNumpy = Callable[[Array, str, str], Any]

def open_reader(source: Source, **options: Any) -> Reader:
    """Reader(source, **options) with safetensors' errors: FileNotFoundError
    whose message is "No such file or directory: PATH", SafetensorFileError
    for a file that cannot be read as one."""
    try:
        return Reader(source, **options)
    except ZTensorFileNotFoundError as e:
        raise FileNotFound(e.filename, e.message) from None
    except SafetensorError:
        raise
    except ZTensorError as e:
        if e.status in (-2, -7):  # misuse, unsupported: not the file's fault
            raise
        raise SafetensorFileError(e.status, f"Error while deserializing header: {e.message}") from e


BACKENDS = {"mmap": True, "pread": False}  # safetensors' backend -> Reader(mmap=)


def reader_mmap(backend: str) -> bool:
    """Reader's mmap= for safetensors' backend=; ValueError for other names."""
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise InvalidArgumentError(f'backend {backend!r} is invalid (expected one of: "mmap", "pread")')
    return BACKENDS[backend]


def check_metadata(metadata: Optional[Mapping[str, str]]) -> Optional[Dict[str, str]]:
    """safetensors' rule: metadata is None or a dict of str to str."""
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping):
        raise TypeError(f"metadata must be a dict of str to str, not {type(metadata).__name__}")
    for k, v in metadata.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f"metadata must be a dict of str to str; entry {k!r}: {v!r} is "
                            f"{type(k).__name__} to {type(v).__name__}")
    return dict(metadata)


def metadata_of(reader: Reader) -> Optional[Dict[str, str]]:
    """The file attributes as safetensors metadata: None when there are none;
    values that are not text (files written by other tools) as JSON text."""
    attrs = reader.attributes
    if attrs is None:
        return None
    if not isinstance(attrs, dict):
        return {"__metadata__": _attributes.to_json_text(attrs)}
    return {str(k): v if isinstance(v, str) else _attributes.to_json_text(v) for k, v in attrs.items()}


def write(tensors: Mapping[str, Any], target: Optional[PathLike], metadata: Optional[Mapping[str, str]],
          to_numpy: ToNumpy, zstd: Zstd, digest: Digest, format: Any = None) -> Optional[bytes]:  # noqa: A002
    """Writes tensors (atomically for a path); target None gives the file's
    bytes. A path ending in ".safetensors" (or format="safetensors") gets
    safetensors' own bytes, identical to what safetensors writes; anything
    else zTensor (ztensor._safetensors_format.wants_safetensors)."""
    if not isinstance(tensors, Mapping):
        raise TypeError(f"tensors must be a dict of name to tensor, not {type(tensors).__name__}")
    meta = check_metadata(metadata)
    as_safetensors = _st.wants_safetensors(target, format)
    if as_safetensors and (zstd or digest):
        raise ValueError("zstd= and digest= are zTensor features: the safetensors format has neither "
                         "(save to a .zt path, or format=\"zt\")")
    converted = []
    for name, value in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"tensor names are str, not {type(name).__name__} ({name!r})")
        converted.append((name, *to_numpy(name, value)))
    if as_safetensors:
        entries = _st.entries_of(converted)
        if target is None:
            return _st.to_bytes(entries, meta)
        _st.write_file(entries, target, meta)
        return None
    # One state dict gives one file, whatever the insertion order: tensors
    # are written in name order (as safetensors' header is sorted).
    converted.sort(key=lambda entry: entry[0])
    generation = _st.zt_generation(format)
    with Writer(target, zstd=zstd, digest=digest, format=generation,
                canonical=(not zstd and digest in (None, "xxh3")) if generation == 2 else None) as w:
        for name, array, dtype in converted:
            w.add(name, array, dtype=dtype)
        if meta is not None:
            w.attributes = meta
    return w.getvalue() if target is None else None


def dense_names(reader: Reader) -> List[str]:
    """Every object's name; objects that are not dense tensors are refused by name."""
    check_dense(reader)
    return list(reader._names)


def check_dense(reader: Reader) -> None:
    """Raises ValueError naming the first object that is not a dense
    tensor (none to look for when the object table says all are)."""
    table = reader._table
    if table is not None and table.all_dense:
        return
    for name in reader:
        fmt = reader.format_of(name)
        if fmt != "dense":
            raise ValueError(f"{name!r} is a {fmt} object; ztensor.numpy/ztensor.torch load dense tensors "
                             "(read the others with ztensor.Reader)")


def zt_type(reader: Reader, name: str) -> str:
    """The element type name of a dense object: its logical type, else its storage dtype."""
    return reader.element_type(name)


def read_all(reader: Reader, from_numpy: FromNumpy, split: Optional[Callable[[Any, str, str], Any]] = None,
             arrays_as_they_are: bool = False) -> Dict[str, Any]:
    """Every tensor, as views of one new buffer this process owns (not a
    mapping of the file): writable, and untouched by later changes to the file.
    With the C++ extension: split(block, zt_type, name) gives the tensors
    of a group of one type and shape (None: numpy arrays, when
    arrays_as_they_are says from_numpy changes nothing)."""
    check_dense(reader)  # the first object that is not dense raises, named
    with _as_safetensor_error():
        if split is not None or arrays_as_they_are:
            return reader._read_dense(None, split, from_numpy)
        arrays = reader._read_dense(None, None, None)
    return {name: from_numpy(array, reader.element_type(name), name) for name, array in arrays.items()}


@contextlib.contextmanager
def _as_safetensor_error() -> Iterator[None]:
    """A type no array holds (F6_E2M3, ...; ZT_E_UNSUPPORTED) raises
    SafetensorError, as safetensors' "Dtype not understood" does."""
    try:
        yield
    except SafetensorError:
        raise
    except ZTensorError as e:
        if e.status != -7:
            raise
        raise SafetensorError(e.message, -7) from e


class SafeOpen(Generic[T]):
    """The object safe_open gives: a lazy handle on a .zt file.

        with safe_open("model.zt", framework="pt") as f:
            for k in f.keys():
                t = f.get_tensor(k)
            part = f.get_slice("embed")[:, 0:64]
            meta = f.metadata()
    """

    def __init__(self, source: Source, framework: str, device: Any, copy: bool, verify: bool,
                 from_numpy: FromNumpy, zero_copy: Optional[Callable[[Reader, str, Array, str], Any]],
                 backend: str = "mmap", *, split: Optional[Callable[[Any, str, str], Any]] = None,
                 arrays_as_they_are: bool = False) -> None:
        self._reader = open_reader(source, verify=verify, mmap=reader_mmap(backend))
        self._split = split  # read_all's fast path (the C++ extension)
        self._arrays_as_they_are = arrays_as_they_are
        self.framework = framework
        self.device = device
        self.copy = copy
        self._from_numpy = from_numpy
        self._zero_copy = zero_copy

    def __enter__(self) -> "SafeOpen[T]":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()

    def close(self) -> None:
        """Closes the file (tensors already returned stay valid)."""
        self._reader.close()

    @property
    def reader(self) -> Reader:
        """The underlying ztensor.Reader (info, verify, composite objects, ...)."""
        return self._open()

    def _open(self) -> Reader:
        if self._reader._h is None:
            raise SafetensorError("File is closed")
        return self._reader

    def keys(self) -> List[str]:
        """The tensor names, sorted (as safetensors gives them)."""
        return sorted(self._open())

    def offset_keys(self) -> List[str]:
        """The tensor names in the order of their data in the file."""
        reader = self._open()

        def offset(name: str) -> int:
            return min((c.offset for c in reader.info(name).components), default=0)
        return sorted(reader, key=offset)

    def metadata(self) -> Optional[Dict[str, str]]:
        """The metadata given to save_file (the file's attributes), or None."""
        return metadata_of(self._open())

    def get_tensors(self) -> Dict[str, T]:
        """Every tensor, {name: tensor} in file order (safetensors'
        get_tensors), read in one batched call into memory this process owns
        (with copy=False, zero-copy where the data allows)."""
        reader = self._open()
        if not self.copy and self._zero_copy is not None:
            return {name: self.get_tensor(name) for name in dense_names(reader)}
        return self._place(read_all(reader, self._from_numpy, self._split, self._arrays_as_they_are))

    def _place(self, tensors: Dict[str, Any]) -> Dict[str, T]:
        """Moves tensors to the handle's device (torch overrides it)."""
        return tensors

    def _name(self, name: str) -> str:
        if name not in self._open():
            raise TensorNotFoundError(name)
        return name

    def get_tensor(self, name: str) -> T:
        """The whole tensor: writable (a private copy) by default; with
        safe_open(..., copy=False), zero-copy where the data allows."""
        self._name(name)
        if not self.copy and self._zero_copy is not None:
            with _as_safetensor_error():
                view = self._reader[name]
            result: T = self._zero_copy(self._reader, name, view, zt_type(self._reader, name))
            return result
        if self._reader.format_of(name) != "dense":
            dense_names(self._reader)  # raises, naming it
        with _as_safetensor_error():
            array = self._reader.read_many([name])[name]
        converted: T = self._from_numpy(array, zt_type(self._reader, name), name)
        return converted

    def get_slice(self, name: str) -> "SafeSlice[T]":
        """A lazy slice handle: get_shape(), get_dtype(), and [index] reading only that part."""
        return SafeSlice(self._open().get_slice(self._name(name)), self._from_numpy)


class SafeSlice(Generic[T]):
    """safetensors' PySafeSlice: get_shape(), get_dtype(), and [ints, slices
    with any step, ..., tuples] reading only the indexed box.

        s = f.get_slice("w")
        s.get_shape()    # [4096, 1024]
        s[:, 0:64:2]     # a tensor of shape (4096, 32)
    """

    def __init__(self, inner: Slice, from_numpy: FromNumpy) -> None:
        self._inner = inner
        self._from_numpy = from_numpy

    def get_shape(self) -> List[int]:
        return self._inner.get_shape()

    def get_dtype(self) -> str:
        return self._inner.get_dtype()

    def __len__(self) -> int:
        return len(self._inner)

    def __getitem__(self, index: Any) -> T:
        array = self._inner[check_index(index, self._inner.shape)]
        out: T = self._from_numpy(array, self._inner.zt_type, self._inner.name)
        return out


def _shown(item: Any) -> str:
    """One indexer as safetensors prints it in its messages: 3, 2:, :20, :."""
    if isinstance(item, slice):
        return f"{'' if item.start is None else item.start}:{'' if item.stop is None else item.stop}"
    return str(item)


def check_index(index: Any, shape: Tuple[int, ...]) -> Any:
    """safetensors' rules for a slice index (framework="np"), before
    numpy's: a negative int below -size raises "Invalid index ...", a
    bound past its dimension raises "Error during slicing [..] with shape
    [..]: index N out of bounds for tensor dimension #D of size S" (the
    last such dimension, as safetensors checks them from the end), [] is
    an empty tensor, a non-empty list is refused, other types raise
    TypeError. Steps, `...` and negative slice bounds, which safetensors
    lacks, are kept with numpy's meaning."""
    if isinstance(index, list):
        if index:
            raise SafetensorError("Non empty lists are not implemented")
        return slice(0, 0)
    items = index if isinstance(index, tuple) else (index,)
    if any(item is Ellipsis for item in items):
        at = next(k for k, item in enumerate(items) if item is Ellipsis)
        fill = max(len(shape) - (len(items) - 1), 0)
        items = items[:at] + (slice(None),) * fill + items[at + 1:]
    shown: List[Any] = []
    for dim, (item, size) in enumerate(zip(items, shape)):
        if isinstance(item, slice):
            for bound in (item.start, item.stop):
                if bound is not None and (not isinstance(bound, (int, np.integer)) or isinstance(bound, bool)):
                    raise TypeError(f"slice bounds must be integers, not {type(bound).__name__}")
            shown.append(item)
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            if item < -size:
                raise SafetensorError(f"Invalid index {item} for dimension {dim} of size {size}")
            shown.append(int(item) + size if item < 0 else int(item))
        else:
            raise TypeError(f"a slice index takes ints, slices, ... and tuples of them, not {type(item).__name__}")
    for dim in reversed(range(len(shown))):
        item, size = shown[dim], shape[dim]
        if isinstance(item, slice):
            start = 0 if item.start is None or item.start < 0 else int(item.start)
            stop = size if item.stop is None or item.stop < 0 else int(item.stop)
            if item.start is not None and item.start < 0 or item.stop is not None and item.stop < 0:
                continue  # numpy's meaning (safetensors refuses negative bounds)
        else:
            start, stop = item, item + 1
        if start >= size and not (isinstance(item, slice) and start == stop == size == 0) or stop > size:
            asked = start if start >= size else stop - 1
            raise SafetensorError(f"Error during slicing [{', '.join(_shown(x) for x in shown)}] with shape "
                                  f"{list(shape)}: index {asked} out of bounds for tensor dimension #{dim} of "
                                  f"size {size}")
    return index
