//! `File`, an open reader, and the `Object`s borrowed from it.

use std::ffi::CStr;
use std::marker::PhantomData;
use std::os::raw::{c_char, c_void};
use std::path::Path;
use std::ptr::{self, NonNull};
use std::sync::Arc;

use ztensor_sys as sys;

use crate::error::{check, Error, Result, Status};
use crate::options::{c_string, OpenOptions, UrlOptions};
use crate::types::{as_bytes_mut, check_dtype, DigestAlg, Dtype, Element, Encoding};

/// An open `.zt` file (`zt_file`), closed on drop.
///
/// `File` is `Send` and `Sync`: the C ABI makes a reader immutable after
/// open and shareable between threads. `zt_close` must come after every
/// other call on the file and its objects has returned; here `Drop` needs
/// the `File` by value, which the borrow checker forbids while an
/// [`Object`], a view or a [`ReadRequest`] borrows it.
pub struct File {
    raw: NonNull<sys::zt_file>,
    /// The buffer a file opened from memory reads, dropped after the close
    /// and after the last component stream (which outlives the `File`).
    memory: Option<Memory>,
}

// SAFETY: see the type's documentation (docs/c-abi.md, "Handles").
unsafe impl Send for File {}
unsafe impl Sync for File {}

impl Drop for File {
    fn drop(&mut self) {
        // SAFETY: the handle is owned and closed exactly once, here.
        unsafe { sys::zt_close(self.raw.as_ptr()) };
    }
}

fn path_c(path: &Path) -> Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error::new(Status::InvalidArg, format!("path {:?} contains a NUL byte", path)))
}

/// The caller's buffer behind a file opened from memory.
pub(crate) type Memory = Arc<dyn AsRef<[u8]> + Send + Sync>;

pub(crate) fn c_str<'a>(p: *const c_char) -> &'a str {
    if p.is_null() {
        return "";
    }
    // SAFETY: the library's strings are NUL-terminated UTF-8 (names are
    // checked at open); a non-UTF-8 one reads as "".
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("")
}

/// The `len` bytes at `p` as a string (a lossy copy if not UTF-8): names,
/// roles and formats may hold NULs, so they are read by length, never up
/// to the first NUL.
pub(crate) fn str_n(p: *const c_char, len: usize) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the library gives `len` bytes at `p`, alive with the owner.
    String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(p as *const u8, len) }).into_owned()
}

fn opt_str(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        Some(c_str(p).to_string())
    }
}

/// Takes a string the library allocated, copies it and frees it.
pub(crate) fn owned_string(p: *mut c_char) -> String {
    let s = c_str(p).to_string();
    // SAFETY: caller-owned memory from the library.
    unsafe { sys::zt_free(p as *mut c_void) };
    s
}

impl File {
    /// Opens a `.zt` file of any supported version with default options.
    pub fn open<P: AsRef<Path>>(path: P) -> Result<File> {
        File::open_with(path, &OpenOptions::default())
    }

    /// Opens a `.zt` file with `options`.
    pub fn open_with<P: AsRef<Path>>(path: P, options: &OpenOptions) -> Result<File> {
        let c = path_c(path.as_ref())?;
        let mut out = ptr::null_mut();
        // SAFETY: valid C string and options; out receives an owned handle.
        check(unsafe { sys::zt_open(c.as_ptr(), &options.0, &mut out) })?;
        Ok(File::from_raw(out, None))
    }

    /// Opens the file held in `bytes` (a `Vec<u8>`, a `Box<[u8]>`, ...),
    /// which the `File` keeps until it is dropped. Views are zero-copy
    /// when the buffer is aligned enough for their element type.
    pub fn from_memory<B>(bytes: B, options: &OpenOptions) -> Result<File>
    where
        B: AsRef<[u8]> + Send + Sync + 'static,
    {
        let boxed: Memory = Arc::new(bytes);
        let data = (*boxed).as_ref();
        let mut out = ptr::null_mut();
        // SAFETY: the buffer lives in `boxed`, which the File (and each
        // stream of it) owns and drops only after zt_close.
        check(unsafe { sys::zt_open_memory(data.as_ptr() as *const c_void, data.len(), &options.0, &mut out) })?;
        Ok(File::from_raw(out, Some(boxed)))
    }

    /// Opens an `http://` or `https://` URL with ranged GETs
    /// (docs/remote.md). Views are not available (`Status::NotZeroCopy`).
    pub fn open_url(url: &str, url_options: &UrlOptions, options: &OpenOptions) -> Result<File> {
        let c = c_string(url, "URL")?;
        let u = url_options.to_raw()?;
        let mut out = ptr::null_mut();
        // SAFETY: the option strings live in `u` during the call.
        check(unsafe { sys::zt_open_url(c.as_ptr(), &u.raw, &options.0, &mut out) })?;
        Ok(File::from_raw(out, None))
    }

    pub(crate) fn from_raw(raw: *mut sys::zt_file, memory: Option<Memory>) -> File {
        File {
            raw: NonNull::new(raw).expect("zt_open returned ZT_OK without a handle"),
            memory,
        }
    }

    /// The raw handle, for calls this crate does not wrap. It stays owned
    /// by the `File`: do not close it.
    pub fn as_raw(&self) -> *mut sys::zt_file {
        self.raw.as_ptr()
    }

    /// The spec version the file declares ("1.2.0", "0.1.0", ...).
    pub fn version(&self) -> Result<String> {
        let mut p = ptr::null();
        check(unsafe { sys::zt_file_version(self.raw.as_ptr(), &mut p) })?;
        Ok(c_str(p).to_string())
    }

    /// The content digest of a zTensor v2 model (v2 spec §6.4),
    /// `"sha256:<hex>"` or `"xxh3:<hex>"` (`alg` is `Sha256` or `Xxh3`): the
    /// same for the same tensors whatever their placement, encoding or number
    /// of files, computed from the manifest alone. An error with
    /// `Status::Unsupported` when a part carries no digest (the message names
    /// it): the digest is then undefined, never approximated.
    pub fn content_digest(&self, alg: DigestAlg) -> Result<String> {
        let raw_alg = alg.raw() as sys::zt_digest_alg;
        let mut len = 0usize;
        check(unsafe { sys::zt_file_content_digest(self.raw.as_ptr(), raw_alg, ptr::null_mut(), 0, &mut len) })?;
        let mut buf = vec![0u8; len + 1];
        check(unsafe {
            sys::zt_file_content_digest(
                self.raw.as_ptr(),
                raw_alg,
                buf.as_mut_ptr() as *mut c_char,
                buf.len(),
                &mut len,
            )
        })?;
        buf.truncate(len);
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }

    /// Whether a zTensor v2 file is in canonical form (v2 spec §6.3: one
    /// manifest and no unreferenced blobs; blobs at 64 KiB boundaries in
    /// name order; identical parts sharing a blob; raw parts with xxh3
    /// digests; NFC names; no shard table), and which rules it misses. An
    /// error with `Status::WrongFormat` for a file that is not v2.
    pub fn canonical(&self) -> Result<CanonicalForm> {
        let mut rule = 0u32;
        let mut message: *mut c_char = ptr::null_mut();
        check(unsafe { sys::zt_file_canonical(self.raw.as_ptr(), &mut rule, &mut message) })?;
        let text = if message.is_null() {
            String::new()
        } else {
            owned_string(message)
        };
        let misses = if text.is_empty() {
            Vec::new()
        } else {
            text.split("; ").map(str::to_string).collect()
        };
        Ok(CanonicalForm { rule, misses })
    }

    /// Number of objects.
    pub fn len(&self) -> Result<usize> {
        let mut n = 0;
        check(unsafe { sys::zt_file_object_count(self.raw.as_ptr(), &mut n) })?;
        Ok(n)
    }

    /// Whether the file holds no object.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// The object at `index`, in manifest order.
    pub fn object(&self, index: usize) -> Result<Object<'_>> {
        let mut p = ptr::null();
        check(unsafe { sys::zt_file_object_at(self.raw.as_ptr(), index, &mut p) })?;
        Ok(Object::new(p, self.memory.as_ref()))
    }

    /// The object named `name` (`Status::NotFound` if none).
    pub fn object_by_name(&self, name: &str) -> Result<Object<'_>> {
        let mut p = ptr::null();
        check(unsafe {
            sys::zt_file_object_by_name(self.raw.as_ptr(), name.as_ptr() as *const c_char, name.len(), &mut p)
        })?;
        Ok(Object::new(p, self.memory.as_ref()))
    }

    /// Every object, in manifest order.
    pub fn objects(&self) -> Result<Vec<Object<'_>>> {
        (0..self.len()?).map(|i| self.object(i)).collect()
    }

    /// The file attributes as JSON text ("null" when there are none).
    pub fn attributes_json(&self) -> Result<String> {
        let mut p = ptr::null_mut();
        check(unsafe { sys::zt_file_attributes_json(self.raw.as_ptr(), &mut p) })?;
        Ok(owned_string(p))
    }

    /// The whole manifest as one JSON document.
    pub fn to_json(&self) -> Result<String> {
        let mut p = ptr::null_mut();
        check(unsafe { sys::zt_file_to_json(self.raw.as_ptr(), &mut p) })?;
        Ok(owned_string(p))
    }

    /// Checks every object (structure, digests, zstd frames), in parallel;
    /// the first failure in manifest order is the error.
    pub fn verify(&self, strict: bool) -> Result<()> {
        check(unsafe { sys::zt_file_verify(self.raw.as_ptr(), strict as u32, None, ptr::null_mut()) })
    }

    /// Every failure `verify` finds, in manifest order (empty: the file is
    /// sound).
    pub fn verify_failures(&self, strict: bool) -> Vec<VerifyFailure> {
        verify_failures(self.raw.as_ptr(), strict)
    }

    /// Decodes several components at once, in parallel (`zt_file_read_many`).
    /// Each request gets its own outcome ([`ReadRequest::outcome`]); the
    /// error returned is that of the first failed request. The objects must
    /// come from this file.
    pub fn read_many(&self, requests: &mut [ReadRequest<'_, '_>]) -> Result<()> {
        let mut raw: Vec<sys::zt_read_request> = requests
            .iter_mut()
            .map(|r| sys::zt_read_request {
                object: r.object.raw,
                component: r.component,
                dst: r.dst.as_mut_ptr() as *mut c_void,
                dst_capacity: r.dst.len(),
                out_size: 0,
                status: sys::ZT_OK,
            })
            .collect();
        // SAFETY: each dst is a distinct &mut slice, alive for the call.
        let s = unsafe { sys::zt_file_read_many(self.raw.as_ptr(), raw.as_mut_ptr(), raw.len()) };
        let result = check(s);
        for (r, c) in requests.iter_mut().zip(&raw) {
            r.outcome = Some(if c.status == sys::ZT_OK {
                Ok(c.out_size)
            } else {
                Err(Error::new(
                    Status::from_raw(c.status),
                    format!("read_many: component {} (needs {} bytes)", r.component, c.out_size),
                ))
            });
        }
        result
    }
}

/// What [`File::canonical`] finds (v2 spec §6.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanonicalForm {
    /// 0 when the file is canonical; else the number (1..6) of the first
    /// rule it misses.
    pub rule: u32,
    /// Every miss, `"rule N: ..."`, naming the part and offsets (empty when
    /// canonical).
    pub misses: Vec<String>,
}

impl CanonicalForm {
    /// True when the file is in canonical form.
    pub fn is_canonical(&self) -> bool {
        self.rule == 0
    }
}

/// One failure found by [`File::verify_failures`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyFailure {
    /// The object ("" for a file-level failure).
    pub object: String,
    /// The component's role ("" for an object-level failure).
    pub role: String,
    pub status: Status,
    pub message: String,
}

extern "C" fn collect_failure(
    user: *mut c_void,
    object: *const c_char,
    object_len: usize,
    role: *const c_char,
    role_len: usize,
    status: i32,
    message: *const c_char,
) {
    let out = user as *mut Vec<VerifyFailure>;
    let f = VerifyFailure {
        object: str_n(object, object_len), // whole: a name may hold NULs
        role: str_n(role, role_len),
        status: Status::from_raw(status),
        message: c_str(message).to_string(),
    };
    // A panic must not unwind into C; pushing can only fail on OOM (abort).
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { (*out).push(f) }));
}

pub(crate) fn verify_failures(file: *const sys::zt_file, strict: bool) -> Vec<VerifyFailure> {
    let mut out: Vec<VerifyFailure> = Vec::new();
    // SAFETY: the callback runs on this thread during the call.
    let s = unsafe {
        sys::zt_file_verify_n(
            file,
            strict as u32,
            Some(collect_failure),
            &mut out as *mut _ as *mut c_void,
        )
    };
    if s != sys::ZT_OK && out.is_empty() {
        let e = Error::last(s);
        out.push(VerifyFailure {
            object: String::new(),
            role: String::new(),
            status: e.status(),
            message: e.message().to_string(),
        });
    }
    out
}

/// One component to decode in [`File::read_many`].
pub struct ReadRequest<'f, 'b> {
    object: Object<'f>,
    component: usize,
    dst: &'b mut [u8],
    outcome: Option<Result<usize>>,
}

impl<'f, 'b> ReadRequest<'f, 'b> {
    /// Component `component` of `object` into `dst`; `T` must be able to
    /// read the component's dtype (checked here).
    pub fn new<T: Element>(object: Object<'f>, component: usize, dst: &'b mut [T]) -> Result<Self> {
        let info = object.component(component)?;
        check_dtype::<T>(info.dtype, &|| {
            format!("object {:?} component {:?}", object.name_lossy(), info.role)
        })?;
        Ok(ReadRequest {
            object,
            component,
            dst: as_bytes_mut(dst),
            outcome: None,
        })
    }

    /// Bytes written, or this request's error; `None` before `read_many`.
    pub fn outcome(&self) -> Option<&Result<usize>> {
        self.outcome.as_ref()
    }
}

/// What `zt_object_get_info` says about an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectInfo {
    pub name: String,
    /// "dense", "sparse_csr", ...; "" if missing.
    pub format: String,
    pub shape: Vec<u64>,
    pub component_count: usize,
    /// `Ok`, or why this object cannot be read (lenient opens keep it).
    pub status: std::result::Result<(), Status>,
    pub has_attributes: bool,
}

/// One component, as `zt_object_component` describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComponentInfo {
    pub role: String,
    /// `None` for a dtype name the library does not know.
    pub dtype: Option<Dtype>,
    pub dtype_name: String,
    pub logical_type: Option<String>,
    /// Storage elements per logical element (2 for complex64 over f32).
    pub ratio: u32,
    /// `None` for an unknown encoding.
    pub encoding: Option<Encoding>,
    pub encoding_name: String,
    /// Absolute offset of the stored bytes in the file.
    pub offset: u64,
    /// Stored bytes.
    pub length: u64,
    /// Bytes a read yields.
    pub decoded_length: u64,
    /// Legacy 0.1 data stored big-endian (reads swap it).
    pub big_endian: bool,
    pub digest: Option<String>,
    pub digest_alg: DigestAlg,
    /// `Ok`, or the damage found at open.
    pub status: std::result::Result<(), Status>,
}

fn status_result(raw: i32) -> std::result::Result<(), Status> {
    if raw == sys::ZT_OK {
        Ok(())
    } else {
        Err(Status::from_raw(raw))
    }
}

/// What [`Object::verify_component`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verified {
    /// Nothing to check beyond the structure (no digest).
    NoDigest,
    /// The digest matched.
    Ok,
    /// A digest of an algorithm this library cannot compute.
    Unverifiable,
}

/// An object of a [`File`] or a [`Set`](crate::Set), borrowed from it:
/// it cannot outlive its owner, nor can anything read through it.
/// `Send` and `Sync` like its owner (objects are read-only).
#[derive(Clone, Copy)]
pub struct Object<'f> {
    raw: *const sys::zt_object,
    /// The buffer of a memory file, which a stream must keep alive.
    memory: Option<&'f Memory>,
    _owner: PhantomData<&'f ()>,
}

// SAFETY: objects are immutable parts of a reader shared between threads.
unsafe impl Send for Object<'_> {}
unsafe impl Sync for Object<'_> {}

impl<'f> Object<'f> {
    pub(crate) fn new(raw: *const sys::zt_object, memory: Option<&'f Memory>) -> Object<'f> {
        Object {
            raw,
            memory,
            _owner: PhantomData,
        }
    }

    /// The raw handle, valid while the owner is open.
    pub fn as_raw(&self) -> *const sys::zt_object {
        self.raw
    }

    fn raw_info(&self) -> Result<sys::zt_object_info> {
        // SAFETY: zeroed is a valid zt_object_info (pointers NULL).
        let mut info: sys::zt_object_info = unsafe { std::mem::zeroed() };
        info.struct_size = std::mem::size_of::<sys::zt_object_info>() as u32;
        check(unsafe { sys::zt_object_get_info(self.raw, &mut info) })?;
        Ok(info)
    }

    /// Name, format, shape, component count and status.
    pub fn info(&self) -> Result<ObjectInfo> {
        let i = self.raw_info()?;
        // SAFETY: borrowed arrays of the given lengths, alive with the owner.
        let shape = if i.ndim == 0 {
            Vec::new()
        } else {
            unsafe { std::slice::from_raw_parts(i.shape, i.ndim) }.to_vec()
        };
        Ok(ObjectInfo {
            // Whole strings: a name or format may hold NULs ("dense\0x" is not "dense").
            name: str_n(i.name, i.name_len),
            format: str_n(i.format, i.format_len),
            shape,
            component_count: i.component_count,
            status: status_result(i.status),
            has_attributes: i.has_attributes != 0,
        })
    }

    /// The object's name (a lossy copy if not UTF-8; the library checks).
    pub fn name(&self) -> Result<String> {
        Ok(self.info()?.name)
    }

    fn name_lossy(&self) -> String {
        self.name().unwrap_or_default()
    }

    /// Number of elements (1 for a scalar).
    pub fn numel(&self) -> Result<u64> {
        let mut n = 0;
        check(unsafe { sys::zt_object_numel(self.raw, &mut n) })?;
        Ok(n)
    }

    /// The detail of a damaged object's status ("" when valid).
    pub fn error_message(&self) -> Result<String> {
        let mut p = ptr::null();
        check(unsafe { sys::zt_object_error(self.raw, &mut p) })?;
        Ok(c_str(p).to_string())
    }

    fn raw_component(&self, index: usize) -> Result<sys::zt_component_info> {
        // SAFETY: zeroed is a valid zt_component_info.
        let mut c: sys::zt_component_info = unsafe { std::mem::zeroed() };
        c.struct_size = std::mem::size_of::<sys::zt_component_info>() as u32;
        check(unsafe { sys::zt_object_component(self.raw, index, &mut c) })?;
        Ok(c)
    }

    /// Component `index`.
    pub fn component(&self, index: usize) -> Result<ComponentInfo> {
        let c = self.raw_component(index)?;
        Ok(ComponentInfo {
            // Whole strings: a role may hold NULs like a name.
            role: str_n(c.role, c.role_len),
            dtype: Dtype::from_raw(c.dtype),
            dtype_name: str_n(c.dtype_name, c.dtype_name_len),
            logical_type: if c.logical_type.is_null() {
                None
            } else {
                Some(str_n(c.logical_type, c.logical_type_len))
            },
            ratio: c.ratio,
            encoding: Encoding::from_raw(c.encoding),
            encoding_name: str_n(c.encoding_name, c.encoding_name_len),
            offset: c.offset,
            length: c.length,
            decoded_length: c.decoded_length,
            big_endian: c.big_endian != 0,
            digest: opt_str(c.digest),
            digest_alg: DigestAlg::from_raw(c.digest_alg),
            status: status_result(c.status),
        })
    }

    /// Every component, in order.
    pub fn components(&self) -> Result<Vec<ComponentInfo>> {
        (0..self.raw_info()?.component_count)
            .map(|i| self.component(i))
            .collect()
    }

    /// The index of the component with that role ("data", "values", ...),
    /// matched whole: a role, like a name, may hold NULs.
    pub fn component_index(&self, role: &str) -> Result<usize> {
        let mut i = 0;
        check(unsafe {
            sys::zt_object_component_index_n(self.raw, role.as_ptr() as *const c_char, role.len(), &mut i)
        })?;
        Ok(i)
    }

    /// The object attributes as JSON text ("null" when there are none).
    pub fn attributes_json(&self) -> Result<String> {
        let mut p = ptr::null_mut();
        check(unsafe { sys::zt_object_attributes_json(self.raw, &mut p) })?;
        Ok(owned_string(p))
    }

    /// The decoded bytes of component `index` (little-endian elements).
    pub fn read_bytes(&self, index: usize) -> Result<Vec<u8>> {
        let mut need = 0;
        let s = unsafe { sys::zt_component_read(self.raw, index, ptr::null_mut(), 0, &mut need) };
        if s != sys::ZT_OK && s != sys::ZT_E_BUFFER_TOO_SMALL {
            return Err(Error::last(s));
        }
        let mut buf = vec![0u8; need];
        check(unsafe {
            sys::zt_component_read(self.raw, index, buf.as_mut_ptr() as *mut c_void, buf.len(), &mut need)
        })?;
        buf.truncate(need);
        Ok(buf)
    }

    /// The component's C description (no string copies: this runs before
    /// every typed read), once its dtype is known to be readable as `T`.
    fn typed_info<T: Element>(&self, index: usize) -> Result<sys::zt_component_info> {
        let info = self.raw_component(index)?;
        check_dtype::<T>(Dtype::from_raw(info.dtype), &|| {
            format!("object {:?} component {:?}", self.name_lossy(), c_str(info.role))
        })?;
        Ok(info)
    }

    /// Component `index` decoded into a new vector of `T`.
    pub fn read<T: Element>(&self, index: usize) -> Result<Vec<T>> {
        let info = self.typed_info::<T>(index)?;
        let n = usize::try_from(info.decoded_length).map_err(|_| Error::new(Status::Limit, "component too large"))?
            / std::mem::size_of::<T>();
        // SAFETY: all-zero bytes are a valid value of every Element type.
        let mut out = vec![unsafe { std::mem::zeroed::<T>() }; n];
        let written = self.read_raw(index, as_bytes_mut(&mut out))?;
        out.truncate(written / std::mem::size_of::<T>());
        Ok(out)
    }

    /// Decodes component `index` into `dst`, which must hold all of it;
    /// returns the number of elements written.
    pub fn read_into<T: Element>(&self, index: usize, dst: &mut [T]) -> Result<usize> {
        self.typed_info::<T>(index)?;
        Ok(self.read_raw(index, as_bytes_mut(dst))? / std::mem::size_of::<T>())
    }

    fn read_raw(&self, index: usize, dst: &mut [u8]) -> Result<usize> {
        let mut n = 0;
        check(unsafe { sys::zt_component_read(self.raw, index, dst.as_mut_ptr() as *mut c_void, dst.len(), &mut n) })?;
        Ok(n)
    }

    /// Elements `[first, first + dst.len())` of component `index`, counted
    /// in storage elements.
    pub fn read_range<T: Element>(&self, index: usize, first: u64, dst: &mut [T]) -> Result<()> {
        self.typed_info::<T>(index)?;
        let bytes = as_bytes_mut(dst);
        check(unsafe {
            sys::zt_component_read_range(
                self.raw,
                index,
                first,
                (bytes.len() / std::mem::size_of::<T>()) as u64,
                bytes.as_mut_ptr() as *mut c_void,
                bytes.len(),
            )
        })
    }

    /// The N-d box `[start[d], stop[d])` of component `index`, row-major,
    /// into `dst` (as numpy's `a[s0:e0, s1:e1]`). The "data" component of a
    /// dense object is sliced along the object's shape; any other component
    /// is 1-d.
    pub fn read_slice_into<T: Element>(&self, index: usize, start: &[u64], stop: &[u64], dst: &mut [T]) -> Result<()> {
        self.typed_info::<T>(index)?;
        if start.len() != stop.len() {
            return Err(Error::new(
                Status::InvalidArg,
                format!("slice start has {} dimensions, stop {}", start.len(), stop.len()),
            ));
        }
        let bytes = as_bytes_mut(dst);
        check(unsafe {
            sys::zt_component_read_slice(
                self.raw,
                index,
                start.len(),
                start.as_ptr(),
                stop.as_ptr(),
                bytes.as_mut_ptr() as *mut c_void,
                bytes.len(),
            )
        })
    }

    /// The N-d box `[start[d], stop[d])` as a new vector (see
    /// [`read_slice_into`](Self::read_slice_into)); one logical element of
    /// a compound type (complex64) is `ratio` storage elements.
    pub fn read_slice<T: Element>(&self, index: usize, start: &[u64], stop: &[u64]) -> Result<Vec<T>> {
        let info = self.typed_info::<T>(index)?;
        let mut n: u64 = info.ratio.max(1) as u64;
        for (a, b) in start.iter().zip(stop) {
            n = n.saturating_mul(b.saturating_sub(*a));
        }
        let n = usize::try_from(n).map_err(|_| Error::new(Status::Limit, "slice too large"))?;
        let mut out = vec![unsafe { std::mem::zeroed::<T>() }; n];
        self.read_slice_into(index, start, stop, &mut out)?;
        Ok(out)
    }

    /// The stored bytes of a raw component, zero-copy: they live as long
    /// as the file (`Status::NotZeroCopy` for zstd, big-endian or pread).
    ///
    /// # Safety
    ///
    /// The slice points into the library's mapping of the file (or into
    /// the buffer of [`File::from_memory`]). The borrow checker keeps it
    /// from outliving the `File`, but not the file on disk from changing:
    /// if any process truncates the file while the slice lives, touching
    /// it kills the process with `SIGBUS`, and if one rewrites it in place
    /// the "immutable" slice changes under you. The caller promises that
    /// neither happens while the view is alive (the file is read-only, or
    /// replaced only by rename, as every `zt` tool and `Writer` does).
    /// `memmap2::Mmap::map` is `unsafe` for the same reason. The safe,
    /// default alternatives copy: [`Object::read`], [`Object::read_into`].
    pub unsafe fn view_bytes(&self, index: usize) -> Result<&'f [u8]> {
        let mut p = ptr::null();
        let mut n = 0;
        check(sys::zt_component_view(self.raw, index, &mut p, &mut n))?;
        // SAFETY: the view lives until zt_close, which needs the owner by
        // value, so not while 'f borrows it; the bytes stay as they are by
        // the caller's promise (see # Safety).
        Ok(std::slice::from_raw_parts(p as *const u8, n))
    }

    /// A typed zero-copy view of component `index`, tied to the file's
    /// lifetime. `Status::NotZeroCopy` if the bytes are not aligned for `T`
    /// (a file opened from an unaligned buffer).
    ///
    /// # Safety
    ///
    /// As for [`Object::view_bytes`]: no process may truncate or rewrite the
    /// file in place while the view lives (a truncation makes touching the
    /// view a `SIGBUS`). Use [`Object::read`] for a copy, which is safe.
    ///
    /// ```compile_fail,E0133
    /// // A view is unsafe to take: this does not compile.
    /// let file = ztensor::File::open("model.zt").unwrap();
    /// let view: &[f32] = file.object_by_name("weights").unwrap().view::<f32>(0).unwrap();
    /// ```
    ///
    /// ```compile_fail,E0597
    /// // A view cannot outlive its file: this does not compile.
    /// let view: &[f32] = {
    ///     let file = ztensor::File::open("model.zt").unwrap();
    ///     let object = file.object_by_name("weights").unwrap();
    ///     // SAFETY: nothing rewrites model.zt while the view lives.
    ///     unsafe { object.view::<f32>(0) }.unwrap()
    /// };
    /// println!("{:?}", view);
    /// ```
    ///
    /// ```no_run
    /// // While the file lives, the view does.
    /// let file = ztensor::File::open("model.zt").unwrap();
    /// // SAFETY: model.zt is replaced only by rename, never truncated or rewritten in place.
    /// let view: &[f32] = unsafe { file.object_by_name("weights").unwrap().view::<f32>(0) }.unwrap();
    /// println!("{:?}", view);
    /// ```
    pub unsafe fn view<T: Element>(&self, index: usize) -> Result<&'f [T]> {
        self.typed_info::<T>(index)?;
        let bytes = self.view_bytes(index)?;
        let size = std::mem::size_of::<T>();
        if bytes.as_ptr() as usize % std::mem::align_of::<T>() != 0 || bytes.len() % size != 0 {
            return Err(Error::new(
                Status::NotZeroCopy,
                format!(
                    "object {:?} component {}: bytes at {:p} not aligned for {}",
                    self.name_lossy(),
                    index,
                    bytes.as_ptr(),
                    std::any::type_name::<T>()
                ),
            ));
        }
        // SAFETY: aligned, whole elements, any bit pattern valid.
        Ok(std::slice::from_raw_parts(
            bytes.as_ptr() as *const T,
            bytes.len() / size,
        ))
    }

    /// A reader over component `index`, decoded in pieces (memory bounded
    /// by one input chunk whatever the component's size).
    pub fn stream(&self, index: usize) -> Result<ComponentStream> {
        let mut s = ptr::null_mut();
        check(unsafe { sys::zt_component_stream_open(self.raw, index, &mut s) })?;
        Ok(ComponentStream {
            raw: NonNull::new(s).expect("stream"),
            _memory: self.memory.cloned(),
            pending: [0; 8],
            pending_len: 0,
            pending_at: 0,
        })
    }

    /// Checks component `index`: structure, digest, zstd frame.
    pub fn verify_component(&self, index: usize) -> Result<Verified> {
        let mut r = sys::ZT_VERIFY_NO_DIGEST;
        check(unsafe { sys::zt_component_verify(self.raw, index, &mut r) })?;
        Ok(match r {
            sys::ZT_VERIFY_OK => Verified::Ok,
            sys::ZT_VERIFY_UNVERIFIABLE => Verified::Unverifiable,
            _ => Verified::NoDigest,
        })
    }

    /// Checks every component (and, strict, the format's structure).
    pub fn verify(&self) -> Result<()> {
        check(unsafe { sys::zt_object_verify(self.raw) })
    }
}

/// A component read in pieces (`zt_component_stream`), as `std::io::Read`.
/// It holds the open file itself (and the buffer of a file opened from
/// memory), so it may outlive the `File`. `Send`,
/// not `Sync`: one thread at a time uses a stream (docs/c-abi.md).
pub struct ComponentStream {
    raw: NonNull<sys::zt_component_stream>,
    /// A memory file's buffer: the stream reads it after the File is gone.
    _memory: Option<Memory>,
    /// Bytes of one element read ahead when the caller's buffer is smaller.
    pending: [u8; 8],
    pending_len: usize,
    pending_at: usize,
}

// SAFETY: a stream may move between threads; it is never shared (!Sync).
unsafe impl Send for ComponentStream {}

impl Drop for ComponentStream {
    fn drop(&mut self) {
        unsafe { sys::zt_component_stream_close(self.raw.as_ptr()) };
    }
}

impl ComponentStream {
    fn next(&mut self, dst: &mut [u8]) -> Result<usize> {
        let mut n = 0;
        check(unsafe {
            sys::zt_component_stream_read(self.raw.as_ptr(), dst.as_mut_ptr() as *mut c_void, dst.len(), &mut n)
        })?;
        Ok(n)
    }
}

impl std::io::Read for ComponentStream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.pending_at == self.pending_len && buf.len() < self.pending.len() {
            // The library hands out whole elements (up to 8 bytes).
            let mut tmp = [0u8; 8];
            self.pending_len = self.next(&mut tmp)?;
            self.pending = tmp;
            self.pending_at = 0;
        }
        if self.pending_at < self.pending_len {
            let n = buf.len().min(self.pending_len - self.pending_at);
            buf[..n].copy_from_slice(&self.pending[self.pending_at..self.pending_at + n]);
            self.pending_at += n;
            return Ok(n);
        }
        Ok(self.next(buf)?)
    }
}
