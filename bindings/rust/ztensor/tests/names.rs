//! Names, roles and formats hold NULs in 1.x files: "a\0b" is its own
//! object, "r\0s" its own role, "dense\0x" is not "dense". The crate reads
//! every such string by its length (C ABI 1.3), never up to the first NUL.

use ztensor::{File, OpenOptions, Status};

/// A hand-built 1.2 file (the writer takes roles and formats as C strings,
/// so it cannot make one): objects "a" (1.0) and "a\0b" (2.0, its digest
/// wrong), "mine" with roles "r" (3.0) and "r\0s" (4.0), and "d" of format
/// "dense\0x". The manifest is CBOR written by hand.
fn nul_file() -> Vec<u8> {
    let mut body = b"ZTEN1000".to_vec();
    let mut offs = Vec::new();
    for v in [1.0f32, 2.0, 3.0, 4.0, 5.0] {
        while body.len() % 64 != 0 {
            body.push(0);
        }
        offs.push(body.len());
        body.extend_from_slice(&v.to_le_bytes());
    }
    let mut m = Vec::new();
    fn text(m: &mut Vec<u8>, s: &str) {
        m.push(0x78);
        m.push(s.len() as u8);
        m.extend_from_slice(s.as_bytes());
    }
    let comp = |m: &mut Vec<u8>, role: &str, off: usize, digest: bool| {
        text(m, role);
        m.push(if digest { 0xa4 } else { 0xa3 });
        text(m, "dtype");
        text(m, "f32");
        text(m, "offset");
        m.extend_from_slice(&[0x19, (off >> 8) as u8, off as u8]);
        text(m, "length");
        m.push(0x04);
        if digest {
            text(m, "digest");
            text(m, &format!("sha256:{}", "0".repeat(64)));
        }
    };
    let head = |m: &mut Vec<u8>, name: &str, format: &str, n: u8| {
        text(m, name);
        m.push(0xa3);
        text(m, "shape");
        m.extend_from_slice(&[0x81, 0x01]);
        text(m, "format");
        text(m, format);
        text(m, "components");
        m.push(0xa0 + n);
    };
    m.push(0xa2);
    text(&mut m, "version");
    text(&mut m, "1.2.0");
    text(&mut m, "objects");
    m.push(0xa4);
    head(&mut m, "a", "dense", 1);
    comp(&mut m, "data", offs[0], false);
    head(&mut m, "a\0b", "dense", 1);
    comp(&mut m, "data", offs[1], true);
    head(&mut m, "mine", "mine", 2);
    comp(&mut m, "r", offs[2], false);
    comp(&mut m, "r\0s", offs[3], false);
    head(&mut m, "d", "dense\0x", 1);
    comp(&mut m, "data", offs[4], false);
    body.extend_from_slice(&m);
    body.extend_from_slice(&(m.len() as u64).to_le_bytes());
    body.extend_from_slice(b"ZTEN1000");
    body
}

#[test]
fn names_roles_and_formats_are_whole() {
    let file = File::from_memory(nul_file(), &OpenOptions::default()).unwrap();
    let a = file.object_by_name("a").unwrap();
    let anb = file.object_by_name("a\0b").unwrap();
    assert_eq!(a.read::<f32>(0).unwrap(), vec![1.0]);
    assert_eq!(anb.read::<f32>(0).unwrap(), vec![2.0]);
    assert_eq!(anb.name().unwrap(), "a\0b");
    assert_eq!(file.object_by_name("d").unwrap().info().unwrap().format, "dense\0x");

    let mine = file.object_by_name("mine").unwrap();
    assert_eq!(mine.component(1).unwrap().role, "r\0s");
    assert_eq!(mine.component_index("r\0s").unwrap(), 1);
    assert_eq!(mine.component_index("r").unwrap(), 0);
    assert_eq!(mine.component_index("r\0").unwrap_err().status(), Status::NotFound);
    assert_eq!(
        mine.read::<f32>(mine.component_index("r\0s").unwrap()).unwrap(),
        vec![4.0]
    );

    let failures = file.verify_failures(false);
    assert_eq!(failures.len(), 1, "{:?}", failures);
    assert_eq!(failures[0].object, "a\0b"); // not "a", the sound object
    assert_eq!(failures[0].role, "data");
    assert_eq!(failures[0].status, Status::DigestMismatch);
}
