//! `Writer`: builds a `.zt` file (on disk, atomically, or in memory).

use std::os::raw::{c_char, c_void};
use std::path::Path;
use std::ptr;

use ztensor_sys as sys;

use crate::error::{check, Error, Result, Status};
use crate::options::{c_string, BlobOptions, WriterOptions};
use crate::types::{as_bytes, Dtype, Element};

/// A file being written (`zt_writer`). Nothing appears at the destination
/// before [`finish`](Writer::finish) succeeds; a writer dropped unfinished
/// is discarded (its temporary file removed).
///
/// `Send` but not `Sync`: the C ABI allows one thread at a time per writer,
/// which `&mut self` on every call guarantees.
pub struct Writer {
    /// NULL once finished or discarded (both free the C writer).
    raw: *mut sys::zt_writer,
    /// A blob stream was dropped before its end: the file is incomplete.
    poisoned: bool,
}

// SAFETY: a writer may move between threads; calls need &mut (one thread).
unsafe impl Send for Writer {}

impl Drop for Writer {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            unsafe { sys::zt_writer_discard(self.raw) };
        }
    }
}

fn name_arg(name: &str) -> (*const c_char, usize) {
    (name.as_ptr() as *const c_char, name.len())
}

fn blob_raw(opts: Option<&BlobOptions>) -> Result<(Option<sys::zt_blob_options>, Option<std::ffi::CString>)> {
    match opts {
        None => Ok((None, None)),
        Some(o) => {
            let (raw, keep) = o.to_raw()?;
            Ok((Some(raw), keep))
        }
    }
}

fn opt_ptr(o: &Option<sys::zt_blob_options>) -> *const sys::zt_blob_options {
    o.as_ref().map_or(ptr::null(), |r| r as *const _)
}

impl Writer {
    /// Starts a file at `path` with default options; bytes go to a
    /// temporary beside it, renamed into place by `finish`.
    pub fn create<P: AsRef<Path>>(path: P) -> Result<Writer> {
        Writer::create_with(path, &WriterOptions::default())
    }

    pub fn create_with<P: AsRef<Path>>(path: P, options: &WriterOptions) -> Result<Writer> {
        use std::os::unix::ffi::OsStrExt;
        let p = path.as_ref();
        let c = std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| Error::new(Status::InvalidArg, format!("path {:?} contains a NUL byte", p)))?;
        let mut w = ptr::null_mut();
        check(unsafe { sys::zt_writer_create(c.as_ptr(), &options.0, &mut w) })?;
        Ok(Writer {
            raw: w,
            poisoned: false,
        })
    }

    /// A writer that builds the file in memory; [`finish_memory`](Writer::finish_memory)
    /// returns its bytes, which [`File::from_memory`](crate::File::from_memory) reads.
    pub fn memory(options: &WriterOptions) -> Result<Writer> {
        let mut w = ptr::null_mut();
        check(unsafe { sys::zt_writer_create_memory(&options.0, &mut w) })?;
        Ok(Writer {
            raw: w,
            poisoned: false,
        })
    }

    /// File attributes, as a JSON object.
    pub fn set_attributes_json(&mut self, json: &str) -> Result<()> {
        let c = c_string(json, "attributes")?;
        check(unsafe { sys::zt_writer_set_attributes_json(self.raw, c.as_ptr()) })
    }

    /// Attributes of the object `name` (declared first), as a JSON object.
    pub fn set_object_attributes_json(&mut self, name: &str, json: &str) -> Result<()> {
        let c = c_string(json, "attributes")?;
        let (n, nl) = name_arg(name);
        check(unsafe { sys::zt_writer_set_object_attributes_json(self.raw, n, nl, c.as_ptr()) })
    }

    /// A dense tensor of `T` with `shape` (row-major `data`).
    pub fn add_dense<T: Element>(
        &mut self,
        name: &str,
        shape: &[u64],
        data: &[T],
        opts: Option<&BlobOptions>,
    ) -> Result<()> {
        self.add_dense_bytes(name, T::DTYPE, shape, as_bytes(data), opts)
    }

    /// A dense bool tensor (stored as bytes 0 and 1).
    pub fn add_dense_bool(
        &mut self,
        name: &str,
        shape: &[u64],
        data: &[bool],
        opts: Option<&BlobOptions>,
    ) -> Result<()> {
        // SAFETY: a bool is one byte, 0 or 1.
        let bytes = unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, data.len()) };
        self.add_dense_bytes(name, Dtype::Bool, shape, bytes, opts)
    }

    /// A dense tensor given as the bytes of `dtype` elements (host order).
    pub fn add_dense_bytes(
        &mut self,
        name: &str,
        dtype: Dtype,
        shape: &[u64],
        data: &[u8],
        opts: Option<&BlobOptions>,
    ) -> Result<()> {
        let (o, _keep) = blob_raw(opts)?;
        let (n, nl) = name_arg(name);
        check(unsafe {
            sys::zt_writer_add_dense(
                self.raw,
                n,
                nl,
                dtype.raw(),
                shape.as_ptr(),
                shape.len(),
                data.as_ptr() as *const c_void,
                data.len(),
                opt_ptr(&o),
            )
        })
    }

    /// Declares an object of `format` ("dense", "sparse_csr", ...); its
    /// components follow with [`write_blob`](Writer::write_blob) or
    /// [`blob_stream`](Writer::blob_stream).
    pub fn begin_object(&mut self, name: &str, format: &str, shape: &[u64]) -> Result<()> {
        let f = c_string(format, "format")?;
        let (n, nl) = name_arg(name);
        check(unsafe { sys::zt_writer_begin_object(self.raw, n, nl, f.as_ptr(), shape.as_ptr(), shape.len()) })
    }

    /// Writes component `role` of the declared object `name`.
    pub fn write_blob<T: Element>(
        &mut self,
        name: &str,
        role: &str,
        data: &[T],
        opts: Option<&BlobOptions>,
    ) -> Result<()> {
        let r = c_string(role, "role")?;
        let (o, _keep) = blob_raw(opts)?;
        let (n, nl) = name_arg(name);
        let bytes = as_bytes(data);
        check(unsafe {
            sys::zt_write_blob(
                self.raw,
                n,
                nl,
                r.as_ptr(),
                T::DTYPE.raw(),
                bytes.as_ptr() as *const c_void,
                bytes.len(),
                opt_ptr(&o),
            )
        })
    }

    /// Starts component `role` of the declared object `name`, written in
    /// pieces with bounded memory. Only one stream is open at a time (the
    /// stream borrows the writer); call [`BlobStream::end`] when done.
    pub fn blob_stream(
        &mut self,
        name: &str,
        role: &str,
        dtype: Dtype,
        opts: Option<&BlobOptions>,
    ) -> Result<BlobStream<'_>> {
        let r = c_string(role, "role")?;
        let (o, _keep) = blob_raw(opts)?;
        let (n, nl) = name_arg(name);
        check(unsafe { sys::zt_write_blob_begin(self.raw, n, nl, r.as_ptr(), dtype.raw(), opt_ptr(&o)) })?;
        Ok(BlobStream {
            writer: self,
            ended: false,
        })
    }

    fn take(&mut self) -> Result<*mut sys::zt_writer> {
        let w = std::mem::replace(&mut self.raw, ptr::null_mut());
        if self.poisoned {
            unsafe { sys::zt_writer_discard(w) };
            return Err(Error::new(
                Status::Misuse,
                "a blob stream was dropped without end(): the file was discarded",
            ));
        }
        Ok(w)
    }

    /// Writes the manifest and footer and renames the file into place.
    pub fn finish(mut self) -> Result<()> {
        let w = self.take()?;
        check(unsafe { sys::zt_writer_finish(w) })
    }

    /// Finishes a memory writer and returns the file's bytes.
    pub fn finish_memory(mut self) -> Result<Vec<u8>> {
        let w = self.take()?;
        let (mut p, mut n) = (ptr::null_mut(), 0usize);
        check(unsafe { sys::zt_writer_finish_memory(w, &mut p, &mut n) })?;
        // SAFETY: n bytes the caller owns; copied, then freed.
        let v = if n == 0 {
            Vec::new()
        } else {
            unsafe { std::slice::from_raw_parts(p, n) }.to_vec()
        };
        unsafe { sys::zt_free(p as *mut c_void) };
        Ok(v)
    }

    /// Abandons the file (the temporary is removed).
    pub fn discard(mut self) -> Result<()> {
        let w = std::mem::replace(&mut self.raw, ptr::null_mut());
        check(unsafe { sys::zt_writer_discard(w) })
    }
}

/// A component being written in pieces ([`Writer::blob_stream`]); also an
/// `std::io::Write` of its bytes. Dropping it without [`end`](BlobStream::end)
/// makes the writer's `finish` fail (the file would be incomplete).
pub struct BlobStream<'w> {
    writer: &'w mut Writer,
    ended: bool,
}

impl BlobStream<'_> {
    /// Appends elements (their dtype is the stream's; `T` is only how the
    /// caller holds them).
    pub fn append<T: Element>(&mut self, data: &[T]) -> Result<()> {
        let b = as_bytes(data);
        check(unsafe { sys::zt_write_blob_append(self.writer.raw, b.as_ptr() as *const c_void, b.len()) })
    }

    /// Ends the component: its total must fit the object's shape.
    pub fn end(mut self) -> Result<()> {
        self.ended = true;
        check(unsafe { sys::zt_write_blob_end(self.writer.raw) })
    }
}

impl Drop for BlobStream<'_> {
    fn drop(&mut self) {
        if !self.ended {
            self.writer.poisoned = true;
        }
    }
}

impl std::io::Write for BlobStream<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.append(buf)?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
