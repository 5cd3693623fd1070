//! Option builders over the C option structs (`zt_open_options`, ...). Each
//! starts from the library's own defaults (its `_init` function).

use std::ffi::CString;
use std::mem::MaybeUninit;

use ztensor_sys as sys;

use crate::error::{Error, Result, Status};
use crate::types::{DigestAlg, Encoding};

/// How an opened file's bytes are reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Memory-map the file: zero-copy views (the default).
    Mmap,
    /// Read with `pread`: no views; safe for files that change underfoot.
    Pread,
}

/// Options of [`File::open_with`](crate::File::open_with) and the other
/// opens (`zt_open_options`).
#[derive(Clone, Copy)]
pub struct OpenOptions(pub(crate) sys::zt_open_options);

impl Default for OpenOptions {
    fn default() -> Self {
        let mut o = MaybeUninit::<sys::zt_open_options>::zeroed();
        // SAFETY: init fills every field, struct_size included.
        unsafe {
            sys::zt_open_options_init(o.as_mut_ptr());
            OpenOptions(o.assume_init())
        }
    }
}

impl OpenOptions {
    /// The library's defaults: mmap, lenient, all cores, 64 GiB per component.
    pub fn new() -> Self {
        Self::default()
    }
    pub fn access(mut self, access: Access) -> Self {
        self.0.access = match access {
            Access::Mmap => sys::ZT_ACCESS_MMAP,
            Access::Pread => sys::ZT_ACCESS_PREAD,
        };
        self
    }
    /// Refuse the file at its first invalid object (docs/reading-rules.md).
    pub fn strict(mut self, strict: bool) -> Self {
        self.0.strict = strict as u32;
        self
    }
    /// Worker threads of whole-file verify and `read_many` (0 = cores).
    pub fn threads(mut self, threads: u32) -> Self {
        self.0.threads = threads;
        self
    }
    pub fn max_manifest_size(mut self, bytes: u64) -> Self {
        self.0.max_manifest_size = bytes;
        self
    }
    /// The largest decoded component the file may declare.
    pub fn max_decoded_size(mut self, bytes: u64) -> Self {
        self.0.max_decoded_size = bytes;
        self
    }
    /// Check each component's digest the first time a read touches it.
    pub fn verify_on_read(mut self, on: bool) -> Self {
        self.0.verify_on_read = on as u32;
        self
    }
    /// Most of the file will be read soon (a whole-model load): from the
    /// open on, a background thread reads the file's data into the page
    /// cache in file order, and `read_many` copies behind it, so a cold file
    /// loads at the disk's sequential speed (docs/cold-reads.md). Local files
    /// on Linux and other POSIX systems; ignored elsewhere.
    pub fn prefetch(mut self, on: bool) -> Self {
        self.0.prefetch = on as u32;
        self
    }
}

/// Options of [`File::open_url`](crate::File::open_url) (`zt_url_options`).
#[derive(Clone, Default)]
pub struct UrlOptions {
    pub connect_timeout_ms: u32,
    pub timeout_ms: u32,
    pub retries: Option<u32>,
    pub max_parallel: u32,
    pub cache_bytes: u64,
    /// Sent as `Authorization: Bearer ...`; never appears in messages.
    pub bearer_token: Option<String>,
    pub user_agent: Option<String>,
}

/// A `zt_url_options` and the C strings it points to.
pub(crate) struct RawUrlOptions {
    pub(crate) raw: sys::zt_url_options,
    _strings: (Option<CString>, Option<CString>),
}

impl UrlOptions {
    /// Zero means the library's default for every numeric field but
    /// `retries`, where `Some(0)` turns retries off.
    pub(crate) fn to_raw(&self) -> Result<RawUrlOptions> {
        let mut o = MaybeUninit::<sys::zt_url_options>::zeroed();
        // SAFETY: init fills every field.
        let mut raw = unsafe {
            sys::zt_url_options_init(o.as_mut_ptr());
            o.assume_init()
        };
        let token = self
            .bearer_token
            .as_deref()
            .map(|t| c_string(t, "bearer token"))
            .transpose()?;
        let agent = self
            .user_agent
            .as_deref()
            .map(|t| c_string(t, "user agent"))
            .transpose()?;
        if self.connect_timeout_ms != 0 {
            raw.connect_timeout_ms = self.connect_timeout_ms;
        }
        if self.timeout_ms != 0 {
            raw.timeout_ms = self.timeout_ms;
        }
        if let Some(r) = self.retries {
            raw.retries = r;
        }
        if self.max_parallel != 0 {
            raw.max_parallel = self.max_parallel;
        }
        if self.cache_bytes != 0 {
            raw.cache_bytes = self.cache_bytes;
        }
        raw.bearer_token = token.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
        raw.user_agent = agent.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
        Ok(RawUrlOptions {
            raw,
            _strings: (token, agent),
        })
    }
}

/// Options of a [`Writer`](crate::Writer) (`zt_writer_options`): the
/// defaults of its blobs and how the file is finished.
#[derive(Clone, Copy)]
pub struct WriterOptions(pub(crate) sys::zt_writer_options);

impl Default for WriterOptions {
    fn default() -> Self {
        let mut o = MaybeUninit::<sys::zt_writer_options>::zeroed();
        // SAFETY: init fills every field.
        unsafe {
            sys::zt_writer_options_init(o.as_mut_ptr());
            WriterOptions(o.assume_init())
        }
    }
}

impl WriterOptions {
    /// Raw blobs without digests, zstd level 3, fsync on finish.
    pub fn new() -> Self {
        Self::default()
    }
    pub fn digest(mut self, alg: DigestAlg) -> Self {
        self.0.digest = alg.raw();
        self
    }
    pub fn encoding(mut self, encoding: Encoding) -> Self {
        self.0.encoding = encoding.raw();
        self
    }
    pub fn zstd_level(mut self, level: i32) -> Self {
        self.0.zstd_level = level;
        self
    }
    pub fn threads(mut self, threads: u32) -> Self {
        self.0.threads = threads;
        self
    }
    /// fsync the file and its directory on finish (default on).
    pub fn sync(mut self, on: bool) -> Self {
        self.0.sync = on as u32;
        self
    }
    /// Check composite objects on finish (default on).
    pub fn validate(mut self, on: bool) -> Self {
        self.0.validate = on as u32;
        self
    }
    /// Re-read and check the new file before it replaces the destination.
    pub fn verify_before_replace(mut self, on: bool) -> Self {
        self.0.verify_before_replace = on as u32;
        self
    }
    /// Writes zTensor v2 (docs/v2.md, Writing) instead of spec 1.2:
    /// canonical form unless [`canonical`](Self::canonical)`(false)`.
    /// Needs libztensor 1.3.
    pub fn v2(mut self) -> Self {
        self.0.format = 2;
        self
    }
    /// v2 only: canonical form (default on): the same tensors give the same
    /// bytes. Off allows zstd (zt.zstd-seekable/1), sha256 or no digests
    /// ([`v2_digest`](Self::v2_digest)) and [`alignment`](Self::alignment).
    pub fn canonical(mut self, on: bool) -> Self {
        self.0.canonical = on as u32;
        self
    }
    /// v2, non-canonical: the parts' default digest (xxh3 unless changed).
    pub fn v2_digest(mut self, alg: DigestAlg) -> Self {
        self.0.v2_digest = alg.raw();
        self
    }
    /// v2, non-canonical: blob alignment, a multiple of 4096 (0 = 65536).
    pub fn alignment(mut self, bytes: u64) -> Self {
        self.0.alignment = bytes;
        self
    }
}

/// Per-blob settings (`zt_blob_options`); `None` fields keep the writer's
/// defaults.
#[derive(Clone, Debug, Default)]
pub struct BlobOptions {
    pub encoding: Option<Encoding>,
    pub zstd_level: Option<i32>,
    pub digest: Option<DigestAlg>,
    /// A logical type such as "complex64" or "f8_e4m3fn".
    pub logical_type: Option<String>,
}

impl BlobOptions {
    pub fn new() -> Self {
        Self::default()
    }
    /// zstd at `level`.
    pub fn zstd(level: i32) -> Self {
        BlobOptions {
            encoding: Some(Encoding::Zstd),
            zstd_level: Some(level),
            ..Self::default()
        }
    }
    pub fn digest(mut self, alg: DigestAlg) -> Self {
        self.digest = Some(alg);
        self
    }
    pub fn logical_type(mut self, name: &str) -> Self {
        self.logical_type = Some(name.to_string());
        self
    }

    pub(crate) fn to_raw(&self) -> Result<(sys::zt_blob_options, Option<CString>)> {
        let mut o = MaybeUninit::<sys::zt_blob_options>::zeroed();
        // SAFETY: init fills every field.
        let mut raw = unsafe {
            sys::zt_blob_options_init(o.as_mut_ptr());
            o.assume_init()
        };
        if let Some(e) = self.encoding {
            raw.encoding = e.raw();
        }
        if let Some(l) = self.zstd_level {
            raw.zstd_level = l;
        }
        if let Some(d) = self.digest {
            raw.digest = d.raw();
        }
        let lt = self
            .logical_type
            .as_deref()
            .map(|t| c_string(t, "logical type"))
            .transpose()?;
        raw.logical_type = lt.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
        Ok((raw, lt))
    }
}

/// A NUL-terminated copy of `s`, refused if `s` holds a NUL.
pub(crate) fn c_string(s: &str, what: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::new(Status::InvalidArg, format!("{} {:?} contains a NUL byte", what, s)))
}
