"""safetensors' exception classes, each also what this package (or the
original zTensor package) raised, so code catching either keeps working."""

from ._lib import ZTensorError, ZTensorFileNotFoundError



class SafetensorError(ZTensorError):
    """safetensors' SafetensorError: a closed handle, an index out of range
    in get_slice, a non-empty index list, an unknown tensor name
    (TensorNotFoundError), a damaged file (SafetensorFileError). A
    ZTensorError, so code catching either sees it; str(e) is the message
    alone, as safetensors gives it."""

    def __init__(self, message: str, status: int = -2) -> None:
        super().__init__(status, message)  # ZT_E_MISUSE unless told
        self.args = (message,)

    def __str__(self) -> str:
        return self.message


class TensorNotFoundError(SafetensorError, KeyError):
    """An unknown tensor name: safetensors raises SafetensorError, this
    package raised KeyError; this is both, so code catching either works."""

    def __init__(self, name: str) -> None:
        super().__init__(f"File does not contain tensor {name}", -5)  # ZT_E_NOT_FOUND
        self.name = name

    def __str__(self) -> str:  # KeyError's would quote it
        return self.message


class SafetensorFileError(SafetensorError, OSError):
    """A file that is not a readable tensor file (damaged, truncated, not
    a zTensor/safetensors file): a SafetensorError, and an OSError, as
    diffusers catches (IOError, SafetensorError) around load_file."""

    def __init__(self, status: int, message: str) -> None:
        SafetensorError.__init__(self, message, status)

    def __str__(self) -> str:
        return self.message


class InvalidArgumentError(SafetensorError, ValueError):
    """An invalid framework, backend or device name: safetensors raises
    SafetensorError, this package raised ValueError; this is both."""


class FileNotFound(ZTensorFileNotFoundError):
    """A missing file, in safetensors' words: "No such file or directory: PATH"."""

    def __str__(self) -> str:
        return f"No such file or directory: {self.filename}"
