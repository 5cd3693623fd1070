//! Element types, encodings and digest algorithms, and the `Element` trait
//! that ties a Rust type to its storage dtype.

use ztensor_sys as sys;

use crate::error::{Error, Result, Status};

/// A storage dtype of the format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    F64,
    F32,
    F16,
    BF16,
    I64,
    I32,
    I16,
    I8,
    U64,
    U32,
    U16,
    U8,
    Bool,
}

const DTYPES: [(Dtype, i32); 13] = [
    (Dtype::F64, sys::ZT_F64),
    (Dtype::F32, sys::ZT_F32),
    (Dtype::F16, sys::ZT_F16),
    (Dtype::BF16, sys::ZT_BF16),
    (Dtype::I64, sys::ZT_I64),
    (Dtype::I32, sys::ZT_I32),
    (Dtype::I16, sys::ZT_I16),
    (Dtype::I8, sys::ZT_I8),
    (Dtype::U64, sys::ZT_U64),
    (Dtype::U32, sys::ZT_U32),
    (Dtype::U16, sys::ZT_U16),
    (Dtype::U8, sys::ZT_U8),
    (Dtype::Bool, sys::ZT_BOOL),
];

impl Dtype {
    /// All dtypes, in the order of their C values.
    pub const ALL: [Dtype; 13] = [
        Dtype::F64,
        Dtype::F32,
        Dtype::F16,
        Dtype::BF16,
        Dtype::I64,
        Dtype::I32,
        Dtype::I16,
        Dtype::I8,
        Dtype::U64,
        Dtype::U32,
        Dtype::U16,
        Dtype::U8,
        Dtype::Bool,
    ];

    /// `None` for `ZT_DTYPE_UNKNOWN` or a value this crate does not know.
    pub fn from_raw(raw: i32) -> Option<Dtype> {
        DTYPES.iter().find(|(_, r)| *r == raw).map(|(d, _)| *d)
    }

    /// The C value (`ZT_F32`, ...).
    pub fn raw(self) -> i32 {
        DTYPES
            .iter()
            .find(|(d, _)| *d == self)
            .map(|(_, r)| *r)
            .unwrap_or(sys::ZT_DTYPE_UNKNOWN)
    }

    /// "f32", "bf16", ... (`zt_dtype_name`).
    pub fn name(self) -> &'static str {
        // SAFETY: a static string for every known dtype.
        unsafe { std::ffi::CStr::from_ptr(sys::zt_dtype_name(self.raw())) }
            .to_str()
            .unwrap_or("")
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        // SAFETY: a pure function of its argument.
        unsafe { sys::zt_dtype_size(self.raw()) }
    }
}

/// How a component is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    Raw,
    Zstd,
}

impl Encoding {
    pub(crate) fn from_raw(raw: i32) -> Option<Encoding> {
        match raw {
            sys::ZT_ENCODING_RAW => Some(Encoding::Raw),
            sys::ZT_ENCODING_ZSTD => Some(Encoding::Zstd),
            _ => None,
        }
    }

    pub(crate) fn raw(self) -> u32 {
        match self {
            Encoding::Raw => sys::ZT_ENCODING_RAW as u32,
            Encoding::Zstd => sys::ZT_ENCODING_ZSTD as u32,
        }
    }
}

/// A component's digest algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DigestAlg {
    /// No digest.
    None,
    Crc32c,
    Sha256,
    /// An algorithm this library cannot check.
    Unknown,
    /// `xxh3:` (XXH3-64), zTensor v2 only (libztensor 1.3).
    Xxh3,
}

impl DigestAlg {
    pub(crate) fn from_raw(raw: i32) -> DigestAlg {
        match raw {
            sys::ZT_DIGEST_NONE => DigestAlg::None,
            sys::ZT_DIGEST_CRC32C => DigestAlg::Crc32c,
            sys::ZT_DIGEST_SHA256 => DigestAlg::Sha256,
            sys::ZT_DIGEST_XXH3 => DigestAlg::Xxh3,
            _ => DigestAlg::Unknown,
        }
    }

    pub(crate) fn raw(self) -> u32 {
        (match self {
            DigestAlg::None => sys::ZT_DIGEST_NONE,
            DigestAlg::Crc32c => sys::ZT_DIGEST_CRC32C,
            DigestAlg::Sha256 => sys::ZT_DIGEST_SHA256,
            DigestAlg::Unknown => sys::ZT_DIGEST_UNKNOWN,
            DigestAlg::Xxh3 => sys::ZT_DIGEST_XXH3,
        }) as u32
    }
}

/// A Rust type whose values are the elements of a storage dtype, in the
/// host's byte order, for typed reads, zero-copy views and writes.
///
/// # Safety
/// Implementors must be plain data of exactly `DTYPE.size()` bytes and
/// alignment at most their size, for which every bit pattern is a valid
/// value (so bytes decoded from a file can be reinterpreted as `Self`).
/// That is why `bool` is not an `Element`: a bool component is read as
/// `u8`, and written with [`Writer::add_dense_bool`](crate::Writer::add_dense_bool).
pub unsafe trait Element: Copy + Send + Sync + 'static {
    /// The dtype written for this type.
    const DTYPE: Dtype;

    /// Whether components of `dtype` can be read as `Self` (its own dtype;
    /// `u8` also reads `bool` components, whose bytes are 0 or 1).
    fn reads(dtype: Dtype) -> bool {
        dtype == Self::DTYPE
    }
}

macro_rules! element {
    ($($t:ty => $d:ident),*) => {
        $(unsafe impl Element for $t { const DTYPE: Dtype = Dtype::$d; })*
    };
}

element!(f64 => F64, f32 => F32, half::f16 => F16, half::bf16 => BF16, i64 => I64, i32 => I32, i16 => I16,
         i8 => I8, u64 => U64, u32 => U32, u16 => U16);

unsafe impl Element for u8 {
    const DTYPE: Dtype = Dtype::U8;
    fn reads(dtype: Dtype) -> bool {
        dtype == Dtype::U8 || dtype == Dtype::Bool
    }
}

/// Refuses a component whose dtype `T` cannot read.
pub(crate) fn check_dtype<T: Element>(dtype: Option<Dtype>, what: &dyn Fn() -> String) -> Result<()> {
    match dtype {
        Some(d) if T::reads(d) => Ok(()),
        _ => Err(Error::new(
            Status::InvalidArg,
            format!(
                "{}: stored as {}, not readable as {} ({})",
                what(),
                dtype.map(|d| d.name()).unwrap_or("an unknown dtype"),
                T::DTYPE.name(),
                std::any::type_name::<T>()
            ),
        )),
    }
}

/// The bytes of a slice of elements.
pub(crate) fn as_bytes<T: Element>(data: &[T]) -> &[u8] {
    // SAFETY: Element types are plain data without padding.
    unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, std::mem::size_of_val(data)) }
}

/// The bytes of a mutable slice of elements (any bytes are valid elements).
pub(crate) fn as_bytes_mut<T: Element>(data: &mut [T]) -> &mut [u8] {
    // SAFETY: every bit pattern is a valid Element.
    unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr() as *mut u8, std::mem::size_of_val(data)) }
}
