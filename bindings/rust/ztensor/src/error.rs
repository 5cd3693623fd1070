//! `Error`: a failed call's status, as an enum, and the library's message.

use std::ffi::CStr;
use std::fmt;

use ztensor_sys as sys;

macro_rules! statuses {
    ($($(#[$doc:meta])* $name:ident = $value:ident,)*) => {
        /// A `zt_status` other than `ZT_OK` (values pinned by the C ABI).
        /// `Other` holds a status this crate does not know yet (a newer
        /// library may append some).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Status {
            $($(#[$doc])* $name,)*
            /// A status added to the library after this crate was written.
            Other(i32),
        }

        impl Status {
            /// The status of a raw C value (`ZT_OK` is not a `Status`).
            pub fn from_raw(raw: i32) -> Status {
                $(if raw == sys::$value { return Status::$name; })*
                Status::Other(raw)
            }

            /// The C value (`ZT_E_...`).
            pub fn raw(self) -> i32 {
                match self {
                    $(Status::$name => sys::$value,)*
                    Status::Other(raw) => raw,
                }
            }
        }
    };
}

statuses! {
    InvalidArg = ZT_E_INVALID_ARG,
    Misuse = ZT_E_MISUSE,
    NoMem = ZT_E_NOMEM,
    Io = ZT_E_IO,
    NotFound = ZT_E_NOT_FOUND,
    BufferTooSmall = ZT_E_BUFFER_TOO_SMALL,
    Unsupported = ZT_E_UNSUPPORTED,
    Limit = ZT_E_LIMIT,
    Internal = ZT_E_INTERNAL,
    Exists = ZT_E_EXISTS,
    NotZeroCopy = ZT_E_NOT_ZERO_COPY,
    Format = ZT_E_FORMAT,
    Footer = ZT_E_FOOTER,
    Truncated = ZT_E_TRUNCATED,
    ManifestSize = ZT_E_MANIFEST_SIZE,
    ManifestLimit = ZT_E_MANIFEST_LIMIT,
    Cbor = ZT_E_CBOR,
    CborDepth = ZT_E_CBOR_DEPTH,
    DuplicateKey = ZT_E_DUPLICATE_KEY,
    Manifest = ZT_E_MANIFEST,
    Version = ZT_E_VERSION,
    Field = ZT_E_FIELD,
    Dtype = ZT_E_DTYPE,
    Encoding = ZT_E_ENCODING,
    Alignment = ZT_E_ALIGNMENT,
    Bounds = ZT_E_BOUNDS,
    Overlap = ZT_E_OVERLAP,
    Shape = ZT_E_SHAPE,
    Length = ZT_E_LENGTH,
    NoUncompressedLength = ZT_E_NO_UNCOMPRESSED_LENGTH,
    DecodedSize = ZT_E_DECODED_SIZE,
    Corrupt = ZT_E_CORRUPT,
    DigestMismatch = ZT_E_DIGEST_MISMATCH,
    DigestFormat = ZT_E_DIGEST_FORMAT,
    Name = ZT_E_NAME,
    BoolValue = ZT_E_BOOL_VALUE,
    ComponentMissing = ZT_E_COMPONENT_MISSING,
    SparseIndptr = ZT_E_SPARSE_INDPTR,
    SparseIndex = ZT_E_SPARSE_INDEX,
    SparseNnz = ZT_E_SPARSE_NNZ,
    QuantParams = ZT_E_QUANT_PARAMS,
    QuantSize = ZT_E_QUANT_SIZE,
    WrongFormat = ZT_E_WRONG_FORMAT,
    IndexDtype = ZT_E_INDEX_DTYPE,
    Compress = ZT_E_COMPRESS,
    Changed = ZT_E_CHANGED,
}

impl Status {
    /// The library's fixed description of the status (`zt_status_str`).
    pub fn description(self) -> &'static str {
        // SAFETY: zt_status_str returns a static, never-NULL string.
        unsafe { CStr::from_ptr(sys::zt_status_str(self.raw())) }
            .to_str()
            .unwrap_or("unknown status")
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.description())
    }
}

/// A failed call: its status and the library's detail message (which file,
/// object, component, rule and offset), copied right after the call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    status: Status,
    message: String,
}

impl Error {
    /// An error raised by this crate before reaching the library (a name
    /// with a NUL byte, a dtype that does not match the element type, ...).
    pub fn new(status: Status, message: impl Into<String>) -> Error {
        Error {
            status,
            message: message.into(),
        }
    }

    /// The status of the failed call.
    pub fn status(&self) -> Status {
        self.status
    }

    /// The detail message (the text of `zt_last_error`).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Reads `zt_last_error()` of this thread for `raw`, which just failed.
    pub(crate) fn last(raw: i32) -> Error {
        // SAFETY: never NULL; copied before any other call on this thread.
        let message = unsafe { CStr::from_ptr(sys::zt_last_error()) }
            .to_string_lossy()
            .into_owned();
        Error {
            status: Status::from_raw(raw),
            message,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            write!(f, "{}", self.status)
        } else {
            write!(f, "{}: {}", self.status, self.message)
        }
    }
}

impl std::error::Error for Error {}

impl From<Error> for std::io::Error {
    fn from(e: Error) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::Other, e)
    }
}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, Error>;

/// `Ok` for `ZT_OK`, else the status with this thread's message.
pub(crate) fn check(raw: i32) -> Result<()> {
    if raw == sys::ZT_OK {
        Ok(())
    } else {
        Err(Error::last(raw))
    }
}
