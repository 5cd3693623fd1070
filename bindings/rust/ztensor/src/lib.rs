//! Safe Rust API of libztensor: read and write zTensor (`.zt`) tensor files.
//!
//! ```no_run
//! use ztensor::{File, Writer, BlobOptions};
//!
//! # fn main() -> ztensor::Result<()> {
//! let mut w = Writer::create("model.zt")?;
//! w.add_dense("weights", &[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], None)?;
//! w.add_dense("ids", &[4], &[7i64, 8, 9, 10], Some(&BlobOptions::zstd(3)))?;
//! w.finish()?;
//!
//! let file = File::open("model.zt")?;
//! let weights: Vec<f32> = file.object_by_name("weights")?.read(0)?; // a copy: safe
//! let ids: Vec<i64> = file.object_by_name("ids")?.read(0)?;           // decoded
//! // Zero-copy, unsafe: the slice is the file's mapping (see "Views" below).
//! // SAFETY: model.zt is not truncated or rewritten in place while `view` lives.
//! let view: &[f32] = unsafe { file.object_by_name("weights")?.view(0) }?;
//! file.verify(false)?;
//! # Ok(()) }
//! ```
//!
//! # Ownership and threads
//!
//! The types follow the C ABI's rules (`docs/c-abi.md`):
//!
//! | Type | Owns | `Send` | `Sync` | Why |
//! |------|------|--------|--------|-----|
//! | [`File`], [`Set`] | `zt_file` / `zt_set`, closed on drop | yes | yes | a reader is immutable after open and may be shared between threads |
//! | [`Object`] | nothing: borrows its file or set | yes | yes | a read-only part of a reader |
//! | views (`&[T]`, `unsafe`) | nothing: borrow the file's mapping | yes | yes | valid until `zt_close`, which `Drop` runs only when no borrow is left |
//! | [`ComponentStream`] | `zt_component_stream`, holding the open file | yes | no | a stream is used by one thread at a time |
//! | [`Writer`] | `zt_writer`, discarded on drop unless finished | yes | no | a writer is used by one thread at a time; every call takes `&mut self` |
//!
//! `zt_close` must come after every other call on a file has returned:
//! `Drop` takes the `File` by value, which the borrow checker refuses while
//! an `Object` or a view borrows it, and `finish`/`discard` consume the
//! `Writer`, so no handle is ever closed twice.
//!
//! # Views
//!
//! Reads copy by default ([`Object::read`], [`Object::read_into`], ...):
//! the result is memory this process owns, whatever later happens to the
//! file. [`Object::view`] and [`Object::view_bytes`] are the zero-copy
//! exception and are `unsafe fn`s: a view is a slice of the library's
//! mapping of the file, and the type system cannot stop another process
//! from truncating the file (touching the view is then a `SIGBUS`) or
//! rewriting it in place (the "immutable" slice changes). The caller
//! promises neither happens while a view lives, as with
//! `memmap2::Mmap::map`. Files written by `zt` and [`Writer`] are replaced
//! by rename, which leaves an open mapping intact.
//!
//! # Errors
//!
//! Every call returns [`Result<T, Error>`](Result); an [`Error`] carries the
//! [`Status`] (`zt_status` as an enum) and the library's message, copied
//! from `zt_last_error()` on the calling thread right after the call.
//!
//! # Element types
//!
//! Typed reads, views and writes take an [`Element`] type: `f64`, `f32`,
//! `half::f16`, `half::bf16`, `i8`..`i64`, `u8`..`u64`. The element's dtype
//! must be the component's (`u8` also reads `bool`); data is in the host's
//! byte order.

mod error;
mod file;
mod options;
mod set;
mod shards;
mod types;
mod writer;

pub use error::{Error, Result, Status};
pub use file::{
    CanonicalForm, ComponentInfo, ComponentStream, File, Object, ObjectInfo, ReadRequest, Verified, VerifyFailure,
};
pub use half::{bf16, f16};
pub use options::{Access, BlobOptions, OpenOptions, UrlOptions, WriterOptions};
pub use set::Set;
pub use shards::IdentityScan;
pub use types::{DigestAlg, Dtype, Element, Encoding};
pub use writer::{BlobStream, Writer};
pub use ztensor_sys as sys;

/// The library's version at run time ("1.1.0").
pub fn version() -> &'static str {
    // SAFETY: a static string.
    unsafe { std::ffi::CStr::from_ptr(sys::zt_version_string()) }
        .to_str()
        .unwrap_or("")
}
