//! The interop vectors (written by the original implementation) read with
//! the sha256, names and shapes of their expected.json.
mod common;

use common::{interop_dir, sha256_hex, Json};
use ztensor::{Access, File, OpenOptions, Status};

fn check_folder(sub: &str) -> usize {
    let dir = interop_dir().join(sub);
    let text = std::fs::read_to_string(dir.join("expected.json"))
        .unwrap_or_else(|e| panic!("{}: {} (the vectors ship in tests/data/interop)", dir.display(), e));
    let expected = Json::parse(&text);
    let mut checked = 0;
    for (fname, exp) in expected.get("files").obj() {
        for access in [Access::Mmap, Access::Pread] {
            let path = dir.join(fname);
            let file = File::open_with(&path, &OpenOptions::new().access(access))
                .unwrap_or_else(|e| panic!("{}: {}", path.display(), e));
            assert_eq!(file.version().unwrap(), exp.get("version").str(), "{}", fname);
            let objects = exp.get("objects").arr();
            assert_eq!(file.len().unwrap(), objects.len(), "{}", fname);
            for o in objects {
                let name = o.get("name").str();
                let obj = file
                    .object_by_name(name)
                    .unwrap_or_else(|e| panic!("{} {:?}: {}", fname, name, e));
                let info = obj.info().unwrap();
                let shape: Vec<u64> = o.get("shape").arr().iter().map(|d| d.u64()).collect();
                assert_eq!(info.shape, shape, "{} {:?}", fname, name);
                assert_eq!(info.format, o.get("format").str());
                for (i, c) in o.get("components").arr().iter().enumerate() {
                    let ci = obj.component(i).unwrap();
                    assert_eq!(ci.role, c.get("role").str(), "{} {:?}", fname, name);
                    let bytes = obj.read_bytes(i).unwrap();
                    assert_eq!(
                        sha256_hex(&bytes),
                        c.get("sha256").str(),
                        "{} {:?} {}",
                        fname,
                        name,
                        ci.role
                    );
                    assert_eq!(bytes.len() as u64, c.get("decoded_length").u64());
                    // Zero-copy where the library offers it: the same bytes.
                    if access == Access::Mmap && c.get("encoding").str() == "raw" && !ci.big_endian {
                        // SAFETY: nothing truncates or rewrites the file while the view lives.
                        assert_eq!(
                            unsafe { obj.view_bytes(i) }.unwrap(),
                            &bytes[..],
                            "{} {:?}",
                            fname,
                            name
                        );
                    } else {
                        // SAFETY: nothing truncates or rewrites the file while the view lives.
                        assert_eq!(unsafe { obj.view_bytes(i) }.unwrap_err().status(), Status::NotZeroCopy);
                    }
                    checked += 1;
                }
            }
            file.verify(false).unwrap_or_else(|e| panic!("{}: {}", fname, e));
            assert!(file.verify_failures(false).is_empty());
        }
    }
    checked
}

#[test]
fn v1_vectors_match_expected_json() {
    assert!(check_folder("v1") > 50);
}

#[test]
fn legacy_v0_vectors_match_expected_json() {
    assert!(check_folder("v0") > 4);
}

/// Damaged vectors: refused at open, or one object fails, with the status
/// the C tests expect (tests/capi/interop_test.cc).
#[test]
fn negative_vectors_carry_their_status() {
    let dir = interop_dir().join("v1/negative");
    let at_open = [
        ("bad_header_magic.zt", Status::Format),
        ("bad_footer_magic.zt", Status::Footer),
        ("truncated.zt", Status::Footer),
        ("manifest_size_too_big.zt", Status::ManifestSize),
        ("manifest_not_a_map.zt", Status::Manifest),
        ("missing_version.zt", Status::Version),
    ];
    for (f, st) in at_open {
        let e = File::open(dir.join(f)).err().unwrap_or_else(|| panic!("{} opened", f));
        assert_eq!(e.status(), st, "{}: {}", f, e);
        assert!(!e.message().is_empty());
    }
    let later = [
        ("bad_crc32c.zt", Status::DigestMismatch),
        ("bad_sha256_zstd.zt", Status::DigestMismatch),
        ("misaligned_offset.zt", Status::Alignment),
        ("unknown_dtype.zt", Status::Dtype),
    ];
    for (f, st) in later {
        let file = File::open(dir.join(f)).unwrap();
        let e = file.verify(false).unwrap_err();
        assert_eq!(e.status(), st, "{}: {}", f, e);
        let failures = file.verify_failures(false);
        assert_eq!(failures.len(), 1, "{}: {:?}", f, failures);
        assert_eq!(failures[0].status, st);
        // The strict open refuses the file outright.
        let strict = File::open_with(dir.join(f), &OpenOptions::new().strict(true));
        assert!(strict.is_err() || st == Status::DigestMismatch, "{}", f);
    }
    // verify_on_read turns the digest check on for reads.
    let file = File::open_with(dir.join("bad_crc32c.zt"), &OpenOptions::new().verify_on_read(true)).unwrap();
    let failed: Vec<_> = file
        .objects()
        .unwrap()
        .into_iter()
        .filter_map(|o| o.read_bytes(0).err())
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].status(), Status::DigestMismatch);
    assert!(failed[0].message().contains("bad_crc32c.zt"), "{}", failed[0]);
}

/// Format v2 (the original's conformance corpus, tests/data/v2-conformance)
/// reads through the same File.
#[test]
fn format_v2_reads_unchanged() {
    let path = interop_dir().join("../v2-conformance/valid/canonical-basic.zt");
    let file = File::open(&path).unwrap_or_else(|e| panic!("{}: {}", path.display(), e));
    assert_eq!(file.version().unwrap(), "2");
    assert_eq!(file.len().unwrap(), 3);
    let obj = file.object_by_name("a.bias").unwrap();
    assert_eq!(obj.info().unwrap().format, "dense");
    assert_eq!(obj.read_bytes(0).unwrap(), vec![1u8; 16]);
    file.verify(false).unwrap();
    let bad = interop_dir().join("../v2-conformance/reject/manifest-hash-mismatch.zt");
    match File::open(&bad) {
        Ok(_) => panic!("a damaged v2 manifest opened"),
        Err(err) => assert!(err.to_string().contains("rejected (ManifestHash)"), "{}", err),
    }
}
