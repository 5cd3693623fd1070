//! A zTensor v2 root whose shards are found by the caller's convention
//! (`zt_open_sharded`, docs/v2.md "Shards"), or by the library's identity
//! scan of a folder (spec Appendix B).
use std::ffi::CStr;
use std::os::raw::{c_char, c_void};
use std::path::Path;
use std::ptr::{self, NonNull};

use ztensor_sys as sys;

use crate::error::{check, Error, Result, Status};
use crate::file::File;
use crate::options::{c_string, OpenOptions, UrlOptions};

type Resolve<'a> = dyn FnMut(&str, u64, &str) -> Option<String> + 'a;

unsafe extern "C" fn trampoline(
    user: *mut c_void,
    req: *const sys::zt_shard_request,
    location: *mut c_char,
    capacity: usize,
) -> sys::zt_status {
    // A panic must not unwind through the library's C++ frames.
    let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let resolve = &mut *(user as *mut &mut Resolve);
        let req = &*req;
        let name = CStr::from_ptr(req.name).to_string_lossy();
        let digest = CStr::from_ptr(req.digest).to_string_lossy();
        resolve(&name, req.size, &digest)
    }));
    match answer {
        Err(_) => sys::ZT_E_IO,
        Ok(None) => sys::ZT_E_NOT_FOUND,
        Ok(Some(where_)) => {
            let bytes = where_.as_bytes();
            if bytes.len() + 1 > capacity || bytes.contains(&0) {
                return sys::ZT_E_BUFFER_TOO_SMALL;
            }
            ptr::copy_nonoverlapping(bytes.as_ptr(), location as *mut u8, bytes.len());
            *location.add(bytes.len()) = 0;
            sys::ZT_OK
        }
    }
}

fn open_sharded_raw(
    root: &str,
    url_options: Option<&UrlOptions>,
    options: &OpenOptions,
    resolve: sys::zt_shard_resolver,
    user: *mut c_void,
) -> Result<File> {
    let c = c_string(root, "root")?;
    let u = match url_options {
        Some(u) => Some(u.to_raw()?),
        None => None,
    };
    let mut so = std::mem::MaybeUninit::<sys::zt_shard_options>::uninit();
    // SAFETY: init fills every field.
    let mut so = unsafe {
        sys::zt_shard_options_init(so.as_mut_ptr());
        so.assume_init()
    };
    so.resolve = resolve;
    so.user = user;
    let mut out = ptr::null_mut();
    let uptr = u.as_ref().map_or(ptr::null(), |u| &u.raw as *const sys::zt_url_options);
    // SAFETY: strings and options live across the call; the resolver runs
    // during it only.
    check(unsafe { sys::zt_open_sharded(c.as_ptr(), &options.0, uptr, &so, &mut out) })?;
    Ok(File::from_raw(out, None))
}

impl File {
    /// Opens a v2 root (a path, or an http(s)/s3 URL read as
    /// [`File::open_url`] reads it) whose shards `resolve` finds: given a
    /// shard's name, exact size and whole-file digest (`"sha256:<hex>"` or
    /// `"xxh3:<hex>"`), it returns a path or URL (opened as given), or
    /// `None` (the parts in that shard then fail with `Status::NotFound`).
    /// Called on this thread, once per shard, during the open only.
    pub fn open_sharded<F>(
        root: &str,
        url_options: Option<&UrlOptions>,
        options: &OpenOptions,
        mut resolve: F,
    ) -> Result<File>
    where
        F: FnMut(&str, u64, &str) -> Option<String>,
    {
        let mut dynamic: &mut Resolve = &mut resolve;
        let user = &mut dynamic as *mut &mut Resolve as *mut c_void;
        open_sharded_raw(root, url_options, options, Some(trampoline), user)
    }

    /// Opens a v2 root whose shards are the `.zt` files in `scan`'s folder
    /// with the sizes and whole-file digests its table gives.
    pub fn open_sharded_by_identity(
        root: &str,
        url_options: Option<&UrlOptions>,
        options: &OpenOptions,
        scan: &IdentityScan,
    ) -> Result<File> {
        open_sharded_raw(
            root,
            url_options,
            options,
            Some(sys::zt_shard_resolve_by_identity),
            scan.raw.as_ptr() as *mut c_void,
        )
    }
}

/// The identity scan of one folder (`zt_shard_scan_open`): its `.zt` files
/// listed by size, each group of one size hashed once per algorithm when a
/// shard of that size is first asked for. May serve several opens; files
/// opened with it do not need it.
pub struct IdentityScan {
    raw: NonNull<sys::zt_shard_scan>,
}

// SAFETY: the library documents a scan as usable from several threads.
unsafe impl Send for IdentityScan {}
unsafe impl Sync for IdentityScan {}

impl IdentityScan {
    pub fn new<P: AsRef<Path>>(folder: P) -> Result<IdentityScan> {
        let s = folder
            .as_ref()
            .to_str()
            .ok_or_else(|| Error::new(Status::InvalidArg, "folder is not UTF-8"))?;
        let c = c_string(s, "folder")?;
        let mut out = ptr::null_mut();
        check(unsafe { sys::zt_shard_scan_open(c.as_ptr(), &mut out) })?;
        Ok(IdentityScan {
            raw: NonNull::new(out).expect("zt_shard_scan_open returned ZT_OK without a handle"),
        })
    }
}

impl Drop for IdentityScan {
    fn drop(&mut self) {
        // SAFETY: owned handle, closed once; no open borrowing it can be running
        // (open_sharded_by_identity borrows it for the call).
        unsafe { sys::zt_shard_scan_close(self.raw.as_ptr()) };
    }
}
