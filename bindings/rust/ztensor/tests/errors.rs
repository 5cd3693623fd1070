//! Errors carry the status (as an enum) and the library's message.
mod common;

use common::scratch;
use ztensor::{BlobOptions, File, OpenOptions, Status, Writer, WriterOptions};

#[test]
fn a_missing_file_is_an_io_error_naming_the_path() {
    let path = scratch("missing").join("nope.zt");
    let e = File::open(&path).err().unwrap();
    assert_eq!(e.status(), Status::Io);
    assert_eq!(e.status().raw(), -4);
    assert!(e.message().contains("nope.zt"), "{}", e);
    assert!(e.to_string().contains("nope.zt"));
    let boxed: Box<dyn std::error::Error> = Box::new(e);
    assert!(boxed.to_string().contains("nope.zt"));
}

#[test]
fn statuses_round_trip_through_their_c_values() {
    for raw in [-1, -2, -6, -11, -20, -33, -51, -66, -80] {
        let s = Status::from_raw(raw);
        assert!(!matches!(s, Status::Other(_)), "{}", raw);
        assert_eq!(s.raw(), raw);
        assert!(!s.description().is_empty());
    }
    assert_eq!(Status::from_raw(-9999), Status::Other(-9999));
    assert_eq!(Status::DigestMismatch.raw(), -51);
}

#[test]
fn misuse_is_refused_with_a_status() {
    let mut w = Writer::memory(&WriterOptions::new()).unwrap();
    w.add_dense("x", &[2, 2], &[1.0f32, 2.0, 3.0, 4.0], None).unwrap();
    // Wrong length for the shape, a duplicate name: refused, writer usable.
    assert_eq!(
        w.add_dense("y", &[3], &[1.0f32], None).unwrap_err().status(),
        Status::Length
    );
    assert_eq!(
        w.add_dense("x", &[1], &[1.0f32], None).unwrap_err().status(),
        Status::Exists
    );
    assert_eq!(
        w.add_dense("a\0b", &[1], &[1u8], Some(&BlobOptions::new().logical_type("x\0")))
            .unwrap_err()
            .status(),
        Status::InvalidArg
    );
    let file = File::from_memory(w.finish_memory().unwrap(), &OpenOptions::new()).unwrap();
    assert_eq!(file.object_by_name("zz").err().unwrap().status(), Status::NotFound);
    assert_eq!(file.object(7).err().unwrap().status(), Status::NotFound);
    let x = file.object_by_name("x").unwrap();
    // A typed read of the wrong element type is refused before any copy.
    let e = x.read::<i32>(0).unwrap_err();
    assert_eq!(e.status(), Status::InvalidArg);
    assert!(e.message().contains("f32") && e.message().contains("i32"), "{}", e);
    let mut small = [0f32; 3];
    assert_eq!(x.read_into(0, &mut small).unwrap_err().status(), Status::BufferTooSmall);
    assert_eq!(
        x.read_slice::<f32>(0, &[0], &[1]).unwrap_err().status(),
        Status::InvalidArg
    );
    assert_eq!(x.component(3).unwrap_err().status(), Status::NotFound);
}

#[test]
fn a_damaged_digest_is_a_digest_mismatch() {
    let path = scratch("damaged").join("d.zt");
    let mut w = Writer::create_with(
        &path,
        &WriterOptions::new().sync(false).digest(ztensor::DigestAlg::Sha256),
    )
    .unwrap();
    w.add_dense("w", &[64], &vec![1.5f32; 64], None).unwrap();
    w.finish().unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let off = {
        let f = File::open(&path).unwrap();
        let off = f.object(0).unwrap().component(0).unwrap().offset;
        off as usize
    };
    bytes[off + 10] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let f = File::open(&path).unwrap();
    let e = f.verify(false).unwrap_err();
    assert_eq!(e.status(), Status::DigestMismatch);
    assert!(e.message().contains("sha256"), "{}", e);
    // Without verify_on_read a read hands the bytes out; with it, it refuses.
    assert!(f.object(0).unwrap().read::<f32>(0).is_ok());
    let f = File::open_with(&path, &OpenOptions::new().verify_on_read(true)).unwrap();
    // SAFETY: nothing truncates or rewrites the file while the view lives.
    assert_eq!(
        unsafe { f.object(0).unwrap().view::<f32>(0) }.unwrap_err().status(),
        Status::DigestMismatch
    );
}
