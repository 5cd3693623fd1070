//! libztensor from Rust through the ztensor crate (this was the single-file
//! example examples/rust/main.rs; the meson test `rust_example` runs it).
//!
//! usage: cargo run --example interop_digests -- SCRATCH.zt [FILE.zt ...]
//!  1. writes SCRATCH.zt (a raw f32 tensor and a zstd i32 tensor), opens it,
//!     lists its objects and checks every component's bytes, decoded and
//!     zero-copy, against what was written;
//!  2. checks that a failure returns a status and a detail message;
//!  3. prints "file<TAB>object<TAB>role<TAB>sha256-of-decoded-bytes" for every
//!     component of each FILE (the test compares them with expected.json).

use std::process::exit;

use ztensor::{BlobOptions, File, Status, Writer};

fn round_trip(path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let f32s: Vec<f32> = (0..6).map(|i| i as f32 * 0.5 - 1.0).collect();
    let i32s: Vec<i32> = (0..1000).map(|i| (i * 7919) % 1009 - 500).collect();
    let mut w = Writer::create(path)?;
    w.add_dense("weights", &[2, 3], &f32s, None)?;
    w.add_dense("ids", &[i32s.len() as u64], &i32s, Some(&BlobOptions::zstd(3)))?;
    w.finish()?;

    let file = File::open(path)?;
    let mut seen = Vec::new();
    for o in file.objects()? {
        let info = o.info()?;
        let c = o.component(0)?;
        println!(
            "object {} format={} shape={:?} components={} dtype={} encoding={}",
            info.name, info.format, info.shape, info.component_count, c.dtype_name, c.encoding_name
        );
        match info.name.as_str() {
            "weights" => {
                // SAFETY: nothing truncates or rewrites the file while the view lives.
                if o.read::<f32>(0)? != f32s || unsafe { o.view::<f32>(0) }? != &f32s[..] || info.shape != [2, 3] {
                    return Err("weights: decoded bytes, zero-copy view or shape wrong".into());
                }
            }
            "ids" => {
                if o.read::<i32>(0)? != i32s {
                    return Err("ids: decoded bytes differ from what was written".into());
                }
            }
            other => return Err(format!("unexpected object {}", other).into()),
        }
        seen.push(info.name);
    }
    seen.sort();
    if seen != ["ids", "weights"] {
        return Err(format!("listed objects {:?}", seen).into());
    }
    // A failure is a status plus a message naming the file.
    match File::open(format!("{}.missing", path)) {
        Ok(_) => return Err("opening a missing file succeeded".into()),
        Err(e) if e.status() == Status::Io && e.message().contains(".missing") => {}
        Err(e) => return Err(format!("missing file: {:?}", e).into()),
    }
    println!("round trip OK (libztensor {})", ztensor::version());
    Ok(())
}

#[path = "../tests/common/sha256.rs"]
mod sha256;
use sha256::sha256_hex;

fn print_digests(path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let file = File::open(path)?;
    let base = path.rsplit('/').next().unwrap_or(path);
    for o in file.objects()? {
        let name = o.name()?;
        for (i, c) in o.components()?.iter().enumerate() {
            println!("{}\t{}\t{}\t{}", base, name, c.role, sha256_hex(&o.read_bytes(i)?));
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
