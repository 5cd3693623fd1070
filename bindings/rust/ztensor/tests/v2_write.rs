//! Writing zTensor v2 (docs/v2.md, Writing): WriterOptions::v2() gives a
//! canonical file, the same bytes whatever order the tensors come in;
//! canonical(false) takes zstd (zt.zstd-seekable/1) and sha256.
use ztensor::{DigestAlg, Encoding, File, OpenOptions, Writer, WriterOptions};

const MAGIC_V2: &[u8] = b"\x89ZT2\r\n\x1a\n";

fn write(order: &[&str], opts: &WriterOptions) -> Vec<u8> {
    let mut w = Writer::memory(opts).unwrap();
    for name in order {
        let data: Vec<f32> = (0..6).map(|i| i as f32 + name.len() as f32).collect();
        w.add_dense(name, &[2, 3], &data, None).unwrap();
    }
    w.finish_memory().unwrap()
}

#[test]
fn v2_canonical_is_order_independent() {
    let opts = WriterOptions::new().v2();
    let a = write(&["a", "bb", "ccc"], &opts);
    let b = write(&["ccc", "a", "bb"], &opts);
    assert_eq!(&a[..8], MAGIC_V2);
    assert_eq!(&a[a.len() - 8..], MAGIC_V2);
    assert_eq!(a, b);
    // "a" first, at 64 KiB.
    assert_eq!(&a[65536..65540], &1f32.to_le_bytes());
}

#[test]
fn v2_non_canonical_options() {
    let opts = WriterOptions::new()
        .v2()
        .canonical(false)
        .encoding(Encoding::Zstd)
        .v2_digest(DigestAlg::Sha256)
        .alignment(4096);
    let f = write(&["x"], &opts);
    let text = String::from_utf8_lossy(&f);
    assert!(text.contains("zt.zstd-seekable/1"));
    assert!(text.contains("sha256:"));
    let bad = WriterOptions::new().v2().encoding(Encoding::Zstd);
    assert!(Writer::memory(&bad).is_err(), "canonical v2 refuses zstd");
}

#[test]
fn default_stays_1_2() {
    let f = write(&["x"], &WriterOptions::new());
    assert_eq!(&f[..4], b"ZTEN");
}

fn content_digest(bytes: Vec<u8>, alg: DigestAlg) -> ztensor::Result<String> {
    File::from_memory(bytes, &OpenOptions::new())?.content_digest(alg)
}

#[test]
fn v2_content_digest_ignores_placement_order_and_encoding() {
    let canonical = write(&["a", "bb"], &WriterOptions::new().v2());
    let floor = write(
        &["bb", "a"],
        &WriterOptions::new().v2().canonical(false).alignment(4096),
    );
    let zstd = write(
        &["a", "bb"],
        &WriterOptions::new().v2().canonical(false).encoding(Encoding::Zstd),
    );
    assert_ne!(canonical, floor);
    assert_ne!(canonical, zstd);
    for alg in [DigestAlg::Sha256, DigestAlg::Xxh3] {
        let d = content_digest(canonical.clone(), alg).unwrap();
        assert!(
            d.starts_with(if alg == DigestAlg::Sha256 { "sha256:" } else { "xxh3:" }),
            "{d}"
        );
        assert_eq!(d, content_digest(floor.clone(), alg).unwrap());
        assert_eq!(d, content_digest(zstd.clone(), alg).unwrap());
    }
    let other = write(&["a", "cc"], &WriterOptions::new().v2());
    assert_ne!(
        content_digest(canonical, DigestAlg::Sha256).unwrap(),
        content_digest(other, DigestAlg::Sha256).unwrap()
    );
}

#[test]
fn v2_content_digest_undefined_without_part_digests() {
    let f = write(
        &["w"],
        &WriterOptions::new().v2().canonical(false).v2_digest(DigestAlg::None),
    );
    let e = content_digest(f, DigestAlg::Sha256).unwrap_err();
    assert_eq!(e.status(), ztensor::Status::Unsupported);
    assert!(
        e.message().contains("'w' part 'data' carries no digest"),
        "{}",
        e.message()
    );
}

fn canonical(bytes: Vec<u8>) -> ztensor::Result<ztensor::CanonicalForm> {
    File::from_memory(bytes, &OpenOptions::new())?.canonical()
}

#[test]
fn v2_canonical_form_and_the_rules_missed() {
    let form = canonical(write(&["bb", "a"], &WriterOptions::new().v2())).unwrap();
    assert!(form.is_canonical(), "{form:?}");
    assert_eq!(form.rule, 0);
    assert!(form.misses.is_empty());
    let floor = canonical(write(
        &["a", "bb"],
        &WriterOptions::new().v2().canonical(false).alignment(4096),
    ))
    .unwrap();
    assert!(!floor.is_canonical());
    assert_eq!(floor.rule, 2, "{floor:?}");
    assert_eq!(floor.misses.len(), 2, "{floor:?}");
    assert!(floor.misses.iter().all(|m| m.starts_with("rule 2: ")), "{floor:?}");
    assert!(floor.misses[0].contains("'a'"), "{floor:?}");
    let zstd = canonical(write(
        &["a"],
        &WriterOptions::new().v2().canonical(false).encoding(Encoding::Zstd),
    ))
    .unwrap();
    assert_eq!(zstd.rule, 4, "{zstd:?}");
    let e = canonical(write(&["a"], &WriterOptions::new())).unwrap_err();
    assert_eq!(e.status(), ztensor::Status::WrongFormat);
    assert!(e.message().contains("v2 files only"), "{}", e.message());
}
