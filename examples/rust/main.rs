//! libztensor from Rust through a hand-written `extern "C"` block (no crates).
//!
//! usage: ztensor_rust_example SCRATCH.zt [FILE.zt ...]
//!  1. writes SCRATCH.zt (a raw f32 tensor and a zstd i32 tensor), opens it,
//!     lists its objects and checks every component's bytes, decoded and
//!     zero-copy, against what was written;
//!  2. checks that a failure returns a status and a detail message;
//!  3. prints "file<TAB>object<TAB>role<TAB>sha256-of-decoded-bytes" for every
//!     component of each FILE (the test compares them with expected.json).
//! Build: rustc --edition 2021 main.rs -L <builddir> -l ztensor

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};
use std::process::exit;
use std::ptr;

type ZtStatus = c_int;
const ZT_OK: ZtStatus = 0;
const ZT_E_IO: ZtStatus = -4;
const ZT_E_BUFFER_TOO_SMALL: ZtStatus = -6;
const ZT_F32: c_int = 2;
const ZT_I32: c_int = 6;
const ZT_ENCODING_ZSTD: u32 = 2;

#[repr(C)]
struct ZtFile {
    _opaque: [u8; 0],
}
#[repr(C)]
struct ZtObject {
    _opaque: [u8; 0],
}
#[repr(C)]
struct ZtWriter {
    _opaque: [u8; 0],
}

#[repr(C)]
struct ZtObjectInfo {
    struct_size: u32,
    name: *const c_char,
    name_len: usize,
    format: *const c_char,
    ndim: usize,
    shape: *const u64,
    component_count: usize,
    status: ZtStatus,
    has_attributes: u32,
}

#[repr(C)]
struct ZtComponentInfo {
    struct_size: u32,
    role: *const c_char,
    dtype: c_int,
    dtype_name: *const c_char,
    logical_type: *const c_char,
    ratio: u32,
    encoding: c_int,
    encoding_name: *const c_char,
    offset: u64,
    length: u64,
    decoded_length: u64,
    has_uncompressed_length: u32,
    big_endian: u32,
    digest: *const c_char,
    digest_alg: c_int,
    status: ZtStatus,
}

#[repr(C)]
struct ZtBlobOptions {
    struct_size: u32,
    encoding: u32,
    zstd_level: i32,
    digest: u32,
    logical_type: *const c_char,
}

#[link(name = "ztensor")]
extern "C" {
    fn zt_status_str(status: ZtStatus) -> *const c_char;
    fn zt_last_error() -> *const c_char;
    fn zt_version_string() -> *const c_char;
    fn zt_open(path: *const c_char, opts: *const c_void, out: *mut *mut ZtFile) -> ZtStatus;
    fn zt_close(file: *mut ZtFile) -> ZtStatus;
    fn zt_file_object_count(file: *const ZtFile, out: *mut usize) -> ZtStatus;
    fn zt_file_object_at(file: *const ZtFile, index: usize, out: *mut *const ZtObject) -> ZtStatus;
    fn zt_object_get_info(obj: *const ZtObject, out: *mut ZtObjectInfo) -> ZtStatus;
    fn zt_object_component(obj: *const ZtObject, index: usize, out: *mut ZtComponentInfo) -> ZtStatus;
    fn zt_component_read(obj: *const ZtObject, index: usize, dst: *mut c_void, cap: usize, out_size: *mut usize)
        -> ZtStatus;
    fn zt_component_view(obj: *const ZtObject, index: usize, out: *mut *const c_void, out_len: *mut usize)
        -> ZtStatus;
    fn zt_writer_create(path: *const c_char, opts: *const c_void, out: *mut *mut ZtWriter) -> ZtStatus;
    fn zt_blob_options_init(opts: *mut ZtBlobOptions);
    fn zt_writer_add_dense(w: *mut ZtWriter, name: *const c_char, name_len: usize, dtype: c_int, shape: *const u64,
                           ndim: usize, data: *const c_void, len: usize, opts: *const ZtBlobOptions) -> ZtStatus;
    fn zt_writer_finish(w: *mut ZtWriter) -> ZtStatus;
}

fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// Turns a status into a Result, fetching the message right after the call.
fn check(status: ZtStatus, what: &str) -> Result<(), String> {
    if status == ZT_OK {
        return Ok(());
    }
    let (name, msg) = unsafe { (cstr(zt_status_str(status)), cstr(zt_last_error())) };
    Err(format!("{}: {} ({})", what, name, msg))
}

/// An open file, closed on drop.
struct File(*mut ZtFile);

impl File {
    fn open(path: &str) -> Result<File, String> {
        let c = CString::new(path).map_err(|e| e.to_string())?;
        let mut f = ptr::null_mut();
        check(unsafe { zt_open(c.as_ptr(), ptr::null(), &mut f) }, &format!("zt_open {}", path))?;
        Ok(File(f))
    }
    fn objects(&self) -> Result<Vec<*const ZtObject>, String> {
        let mut n = 0usize;
        check(unsafe { zt_file_object_count(self.0, &mut n) }, "zt_file_object_count")?;
        (0..n)
            .map(|i| {
                let mut o = ptr::null();
                check(unsafe { zt_file_object_at(self.0, i, &mut o) }, "zt_file_object_at").map(|_| o)
            })
            .collect()
    }
}

impl Drop for File {
    fn drop(&mut self) {
        unsafe { zt_close(self.0) };
    }
}

fn object_info(o: *const ZtObject) -> Result<(String, String, Vec<u64>, usize), String> {
    let mut info: ZtObjectInfo = unsafe { std::mem::zeroed() };
    info.struct_size = std::mem::size_of::<ZtObjectInfo>() as u32;
    check(unsafe { zt_object_get_info(o, &mut info) }, "zt_object_get_info")?;
    let name = unsafe { std::slice::from_raw_parts(info.name as *const u8, info.name_len) };
    let shape = if info.ndim == 0 { Vec::new() } else { unsafe { std::slice::from_raw_parts(info.shape, info.ndim) }.to_vec() };
    Ok((String::from_utf8_lossy(name).into_owned(), cstr(info.format), shape, info.component_count))
}

fn component_info(o: *const ZtObject, i: usize) -> Result<ZtComponentInfo, String> {
    let mut c: ZtComponentInfo = unsafe { std::mem::zeroed() };
    c.struct_size = std::mem::size_of::<ZtComponentInfo>() as u32;
    check(unsafe { zt_object_component(o, i, &mut c) }, "zt_object_component")?;
    Ok(c)
}

/// Decoded bytes of a component (size query, then the read).
fn read_component(o: *const ZtObject, i: usize) -> Result<Vec<u8>, String> {
    let mut need = 0usize;
    let s = unsafe { zt_component_read(o, i, ptr::null_mut(), 0, &mut need) };
    if s != ZT_OK && s != ZT_E_BUFFER_TOO_SMALL {
        check(s, "zt_component_read (size)")?;
    }
    let mut buf = vec![0u8; need];
    check(unsafe { zt_component_read(o, i, buf.as_mut_ptr() as *mut c_void, buf.len(), &mut need) }, "zt_component_read")?;
    buf.truncate(need);
    Ok(buf)
}

fn write_scratch(path: &str, f32s: &[f32], i32s: &[i32]) -> Result<(), String> {
    let c = CString::new(path).map_err(|e| e.to_string())?;
    let mut w = ptr::null_mut();
    check(unsafe { zt_writer_create(c.as_ptr(), ptr::null(), &mut w) }, "zt_writer_create")?;
    let shape = [2u64, 3];
    let name = b"weights";
    check(unsafe {
        zt_writer_add_dense(w, name.as_ptr() as *const c_char, name.len(), ZT_F32, shape.as_ptr(), 2,
                            f32s.as_ptr() as *const c_void, f32s.len() * 4, ptr::null())
    }, "zt_writer_add_dense weights")?;
    let mut zstd: ZtBlobOptions = unsafe { std::mem::zeroed() };
    unsafe { zt_blob_options_init(&mut zstd) };
    zstd.encoding = ZT_ENCODING_ZSTD;
    let ids_shape = [i32s.len() as u64];
    let ids = b"ids";
    check(unsafe {
        zt_writer_add_dense(w, ids.as_ptr() as *const c_char, ids.len(), ZT_I32, ids_shape.as_ptr(), 1,
                            i32s.as_ptr() as *const c_void, i32s.len() * 4, &zstd)
    }, "zt_writer_add_dense ids")?;
    check(unsafe { zt_writer_finish(w) }, "zt_writer_finish")
}

fn le_bytes_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn le_bytes_i32(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn round_trip(path: &str) -> Result<(), String> {
    let f32s: Vec<f32> = (0..6).map(|i| i as f32 * 0.5 - 1.0).collect();
    let i32s: Vec<i32> = (0..1000).map(|i| (i * 7919) % 1009 - 500).collect();
    write_scratch(path, &f32s, &i32s)?;
    let file = File::open(path)?;
    let mut seen = Vec::new();
    for o in file.objects()? {
        let (name, format, shape, ncomp) = object_info(o)?;
        let c = component_info(o, 0)?;
        println!("object {} format={} shape={:?} components={} dtype={} encoding={}", name, format, shape, ncomp,
                 cstr(c.dtype_name), cstr(c.encoding_name));
        let bytes = read_component(o, 0)?;
        let want = match name.as_str() {
            "weights" => le_bytes_f32(&f32s),
            "ids" => le_bytes_i32(&i32s),
            other => return Err(format!("unexpected object {}", other)),
        };
        if bytes != want {
            return Err(format!("{}: decoded bytes differ from what was written", name));
        }
        if name == "weights" {
            let mut p = ptr::null();
            let mut n = 0usize;
            check(unsafe { zt_component_view(o, 0, &mut p, &mut n) }, "zt_component_view")?;
            let view = unsafe { std::slice::from_raw_parts(p as *const u8, n) };
            if view != &want[..] || shape != [2, 3] {
                return Err("weights: zero-copy view or shape wrong".into());
            }
        }
        seen.push(name);
    }
    seen.sort();
    if seen != ["ids", "weights"] {
        return Err(format!("listed objects {:?}", seen));
    }
    // A failure is a status plus a message naming the file.
    match File::open(&format!("{}.missing", path)) {
        Ok(_) => return Err("opening a missing file succeeded".into()),
        Err(msg) => {
            let mut f = ptr::null_mut();
            let c = CString::new(format!("{}.missing", path)).unwrap();
            let s = unsafe { zt_open(c.as_ptr(), ptr::null(), &mut f) };
            if s != ZT_E_IO || !msg.contains(".missing") {
                return Err(format!("missing file: status {} message {}", s, msg));
            }
        }
    }
    println!("round trip OK (libztensor {})", unsafe { cstr(zt_version_string()) });
    Ok(())
}

/// SHA-256 (FIPS 180-4), written out because there are no crates here.
fn sha256_hex(data: &[u8]) -> String {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    ];
    let mut msg = data.to_vec();
    let bit_len = (data.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bit_len.to_be_bytes());
    for block in msg.chunks(64) {
        let mut w = [0u32; 64];
        for i in 0..16 {
            w[i] = u32::from_be_bytes([block[4 * i], block[4 * i + 1], block[4 * i + 2], block[4 * i + 3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16].wrapping_add(s0).wrapping_add(w[i - 7]).wrapping_add(s1);
        }
        let mut v = h;
        for i in 0..64 {
            let s1 = v[4].rotate_right(6) ^ v[4].rotate_right(11) ^ v[4].rotate_right(25);
            let ch = (v[4] & v[5]) ^ (!v[4] & v[6]);
            let t1 = v[7].wrapping_add(s1).wrapping_add(ch).wrapping_add(K[i]).wrapping_add(w[i]);
            let s0 = v[0].rotate_right(2) ^ v[0].rotate_right(13) ^ v[0].rotate_right(22);
            let maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
            let t2 = s0.wrapping_add(maj);
            v = [t1.wrapping_add(t2), v[0], v[1], v[2], v[3].wrapping_add(t1), v[4], v[5], v[6]];
        }
        for i in 0..8 {
            h[i] = h[i].wrapping_add(v[i]);
        }
    }
    h.iter().map(|x| format!("{:08x}", x)).collect()
}

fn print_digests(path: &str) -> Result<(), String> {
    let file = File::open(path)?;
    let base = path.rsplit('/').next().unwrap_or(path);
    for o in file.objects()? {
        let (name, _, _, ncomp) = object_info(o)?;
        for i in 0..ncomp {
            let c = component_info(o, i)?;
            println!("{}\t{}\t{}\t{}", base, name, cstr(c.role), sha256_hex(&read_component(o, i)?));
        }
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 2 {
        eprintln!("usage: {} SCRATCH.zt [FILE.zt ...]", args[0]);
        exit(2);
    }
    if sha256_hex(b"abc") != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
        eprintln!("sha256 self-test failed");
        exit(1);
    }
    let result = round_trip(&args[1]).and_then(|_| args[2..].iter().try_for_each(|p| print_digests(p)));
    if let Err(e) = result {
        eprintln!("error: {}", e);
        exit(1);
    }
}
