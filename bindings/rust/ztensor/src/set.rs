//! `Set`: a sharded checkpoint (a JSON index and its `.zt` shards) opened
//! as one (docs/sharding.md).

use std::os::raw::c_char;
use std::path::Path;
use std::ptr::{self, NonNull};

use ztensor_sys as sys;

use crate::error::{check, Error, Result, Status};
use crate::file::{c_str, owned_string, verify_failures, Object, VerifyFailure};
use crate::options::{c_string, OpenOptions, UrlOptions};

/// An open sharded set (`zt_set`), closed on drop with all its shards.
/// `Send` and `Sync` like [`File`](crate::File): every shard is a reader.
pub struct Set {
    raw: NonNull<sys::zt_set>,
}

// SAFETY: the shards are immutable readers (docs/c-abi.md).
unsafe impl Send for Set {}
unsafe impl Sync for Set {}

impl Drop for Set {
    fn drop(&mut self) {
        unsafe { sys::zt_set_close(self.raw.as_ptr()) };
    }
}

impl Set {
    /// Opens the index at `index_path` and every shard it names.
    pub fn open<P: AsRef<Path>>(index_path: P, options: &OpenOptions) -> Result<Set> {
        let p = index_path.as_ref();
        let c = c_string(
            p.to_str()
                .ok_or_else(|| Error::new(Status::InvalidArg, "index path is not UTF-8"))?,
            "index path",
        )?;
        let mut out = ptr::null_mut();
        check(unsafe { sys::zt_open_set(c.as_ptr(), &options.0, &mut out) })?;
        Ok(Set {
            raw: NonNull::new(out).expect("zt_open_set returned ZT_OK without a handle"),
        })
    }

    /// Opens a set whose index is at an `http(s)://` URL.
    pub fn open_url(index_url: &str, url_options: &UrlOptions, options: &OpenOptions) -> Result<Set> {
        let c = c_string(index_url, "URL")?;
        let u = url_options.to_raw()?;
        let mut out = ptr::null_mut();
        check(unsafe { sys::zt_open_set_url(c.as_ptr(), &u.raw, &options.0, &mut out) })?;
        Ok(Set {
            raw: NonNull::new(out).expect("zt_open_set_url returned ZT_OK without a handle"),
        })
    }

    /// Objects of all shards.
    pub fn len(&self) -> Result<usize> {
        let mut n = 0;
        check(unsafe { sys::zt_set_object_count(self.raw.as_ptr(), &mut n) })?;
        Ok(n)
    }

    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// The object at `index`: shards in location order, then manifest order.
    pub fn object(&self, index: usize) -> Result<Object<'_>> {
        let mut p = ptr::null();
        check(unsafe { sys::zt_set_object_at(self.raw.as_ptr(), index, &mut p) })?;
        Ok(Object::new(p, None))
    }

    /// The object named `name`, whichever shard holds it.
    pub fn object_by_name(&self, name: &str) -> Result<Object<'_>> {
        let mut p = ptr::null();
        check(unsafe {
            sys::zt_set_object_by_name(self.raw.as_ptr(), name.as_ptr() as *const c_char, name.len(), &mut p)
        })?;
        Ok(Object::new(p, None))
    }

    pub fn objects(&self) -> Result<Vec<Object<'_>>> {
        (0..self.len()?).map(|i| self.object(i)).collect()
    }

    /// The index's "metadata" member as JSON text ("null" if absent).
    pub fn metadata_json(&self) -> Result<String> {
        let mut p = ptr::null_mut();
        check(unsafe { sys::zt_set_metadata_json(self.raw.as_ptr(), &mut p) })?;
        Ok(owned_string(p))
    }

    /// The shards' locations, as the index writes them.
    pub fn shard_locations(&self) -> Result<Vec<String>> {
        let mut n = 0;
        check(unsafe { sys::zt_set_shard_count(self.raw.as_ptr(), &mut n) })?;
        (0..n)
            .map(|i| {
                let (mut f, mut loc) = (ptr::null(), ptr::null());
                check(unsafe { sys::zt_set_shard_at(self.raw.as_ptr(), i, &mut f, &mut loc) })?;
                Ok(c_str(loc).to_string())
            })
            .collect()
    }

    /// Verifies every shard; the failures of all of them, each prefixed
    /// with its shard's location in `object` ("shard: object").
    pub fn verify_failures(&self, strict: bool) -> Result<Vec<VerifyFailure>> {
        let mut n = 0;
        check(unsafe { sys::zt_set_shard_count(self.raw.as_ptr(), &mut n) })?;
        let mut out = Vec::new();
        for i in 0..n {
            let (mut f, mut loc) = (ptr::null(), ptr::null());
            check(unsafe { sys::zt_set_shard_at(self.raw.as_ptr(), i, &mut f, &mut loc) })?;
            for mut v in verify_failures(f, strict) {
                v.object = format!("{}: {}", c_str(loc), v.object);
                out.push(v);
            }
        }
        Ok(out)
    }
}
