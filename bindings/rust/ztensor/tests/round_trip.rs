//! Every dtype written and read back through every read path, on disk and
//! in memory; zstd, digests, streaming blobs, attributes.
mod common;

use std::io::{Read, Write as _};

use common::scratch;
use ztensor::{
    bf16, f16, BlobOptions, DigestAlg, Dtype, Element, Encoding, File, OpenOptions, ReadRequest, Status, Verified,
    Writer, WriterOptions,
};

/// 24 values of T made from small integers (exact in every dtype).
fn values<T: Element>(from: impl Fn(i32) -> T) -> Vec<T> {
    (0..24).map(|i| from((i * 7) % 23 - 5 * (i % 2))).collect()
}

fn check_dtype<T: Element + PartialEq + std::fmt::Debug>(file: &File, name: &str, want: &[T]) {
    let o = file.object_by_name(name).unwrap();
    let c = o.component(0).unwrap();
    assert_eq!(c.dtype, Some(T::DTYPE), "{}", name);
    assert_eq!(o.info().unwrap().shape, vec![2, 3, 4]);
    // Decoded copy, read_into, range, 3-d slice, stream.
    assert_eq!(o.read::<T>(0).unwrap(), want, "{}", name);
    let mut buf = vec![want[0]; want.len()];
    assert_eq!(o.read_into(0, &mut buf).unwrap(), want.len());
    assert_eq!(buf, want);
    let mut part = vec![want[0]; 5];
    o.read_range(0, 7, &mut part).unwrap();
    assert_eq!(part, &want[7..12]);
    // [1:2, 0:3, 1:3] of a [2, 3, 4] tensor.
    let slice = o.read_slice::<T>(0, &[1, 0, 1], &[2, 3, 3]).unwrap();
    let expect: Vec<T> = (0..3)
        .flat_map(|j| (1..3).map(move |k| 12 + 4 * j + k))
        .map(|i| want[i])
        .collect();
    assert_eq!(slice, expect, "{}", name);
    let mut streamed = Vec::new();
    o.stream(0).unwrap().read_to_end(&mut streamed).unwrap();
    assert_eq!(streamed, o.read_bytes(0).unwrap());
    // Zero-copy only for raw components.
    match c.encoding {
        // SAFETY: nothing truncates or rewrites the file while the view lives.
        Some(Encoding::Raw) => assert_eq!(unsafe { o.view::<T>(0) }.unwrap(), want),
        // SAFETY: nothing truncates or rewrites the file while the view lives.
        _ => assert_eq!(unsafe { o.view::<T>(0) }.unwrap_err().status(), Status::NotZeroCopy),
    }
}

fn write_all(w: &mut Writer, opts: Option<&BlobOptions>) {
    let shape = [2u64, 3, 4];
    w.add_dense("f64", &shape, &values(|i| i as f64 * 0.25), opts).unwrap();
    w.add_dense("f32", &shape, &values(|i| i as f32 * 0.5), opts).unwrap();
    w.add_dense("f16", &shape, &values(|i| f16::from_f32(i as f32)), opts)
        .unwrap();
    w.add_dense("bf16", &shape, &values(|i| bf16::from_f32(i as f32)), opts)
        .unwrap();
    w.add_dense("i64", &shape, &values(|i| i as i64 * 1_000_000_007), opts)
        .unwrap();
    w.add_dense("i32", &shape, &values(|i| i * 65_537), opts).unwrap();
    w.add_dense("i16", &shape, &values(|i| i as i16 * 300), opts).unwrap();
    w.add_dense("i8", &shape, &values(|i| i as i8), opts).unwrap();
    w.add_dense("u64", &shape, &values(|i| (i + 5) as u64 * 1_000_000_007), opts)
        .unwrap();
    w.add_dense("u32", &shape, &values(|i| (i + 5) as u32 * 65_537), opts)
        .unwrap();
    w.add_dense("u16", &shape, &values(|i| (i + 5) as u16 * 300), opts)
        .unwrap();
    w.add_dense("u8", &shape, &values(|i| (i + 5) as u8), opts).unwrap();
    let bools: Vec<bool> = (0..24).map(|i| i % 3 == 0).collect();
    w.add_dense_bool("bool", &shape, &bools, opts).unwrap();
}

fn check_all(file: &File) {
    check_dtype(file, "f64", &values(|i| i as f64 * 0.25));
    check_dtype(file, "f32", &values(|i| i as f32 * 0.5));
    check_dtype(file, "f16", &values(|i| f16::from_f32(i as f32)));
    check_dtype(file, "bf16", &values(|i| bf16::from_f32(i as f32)));
    check_dtype(file, "i64", &values(|i| i as i64 * 1_000_000_007));
    check_dtype(file, "i32", &values(|i| i * 65_537));
    check_dtype(file, "i16", &values(|i| i as i16 * 300));
    check_dtype(file, "i8", &values(|i| i as i8));
    check_dtype(file, "u64", &values(|i| (i + 5) as u64 * 1_000_000_007));
    check_dtype(file, "u32", &values(|i| (i + 5) as u32 * 65_537));
    check_dtype(file, "u16", &values(|i| (i + 5) as u16 * 300));
    check_dtype(file, "u8", &values(|i| (i + 5) as u8));
    let b = file.object_by_name("bool").unwrap();
    assert_eq!(b.component(0).unwrap().dtype, Some(Dtype::Bool));
    let want: Vec<u8> = (0..24).map(|i| (i % 3 == 0) as u8).collect();
    assert_eq!(b.read::<u8>(0).unwrap(), want);
    let mut names: Vec<String> = file.objects().unwrap().iter().map(|o| o.name().unwrap()).collect();
    let mut expected: Vec<&str> = Dtype::ALL.iter().map(|d| d.name()).collect();
    names.sort();
    expected.sort();
    assert_eq!(names, expected, "one object per dtype");
}

#[test]
fn every_dtype_round_trips_on_disk_raw() {
    let path = scratch("raw").join("all.zt");
    let mut w = Writer::create_with(&path, &WriterOptions::new().sync(false)).unwrap();
    write_all(&mut w, None);
    w.finish().unwrap();
    check_all(&File::open(&path).unwrap());
    // The prefetch hint changes when the bytes arrive, not what they are.
    check_all(&File::open_with(&path, &OpenOptions::new().prefetch(true)).unwrap());
}

#[test]
fn every_dtype_round_trips_in_memory_zstd_with_digests() {
    let mut w = Writer::memory(&WriterOptions::new().digest(DigestAlg::Sha256)).unwrap();
    write_all(&mut w, Some(&BlobOptions::zstd(5).digest(DigestAlg::Crc32c)));
    let bytes = w.finish_memory().unwrap();
    let file = File::from_memory(bytes, &OpenOptions::new().verify_on_read(true)).unwrap();
    check_all(&file);
    let o = file.object_by_name("f32").unwrap();
    let c = o.component(0).unwrap();
    assert_eq!((c.encoding, c.digest_alg), (Some(Encoding::Zstd), DigestAlg::Crc32c));
    assert!(c.digest.unwrap().starts_with("crc32c:0x"));
    assert_eq!(o.verify_component(0).unwrap(), Verified::Ok);
    file.verify(true).unwrap();
}

#[test]
fn streaming_blobs_attributes_and_read_many() {
    let path = scratch("stream").join("s.zt");
    let mut w = Writer::create_with(&path, &WriterOptions::new().sync(false)).unwrap();
    w.set_attributes_json(r#"{"model": "tiny", "layers": 2}"#).unwrap();
    w.begin_object("big", "dense", &[1000]).unwrap();
    let mut s = w
        .blob_stream("big", "data", Dtype::I32, Some(&BlobOptions::zstd(3)))
        .unwrap();
    for chunk in (0..1000i32).collect::<Vec<_>>().chunks(333) {
        s.append(chunk).unwrap();
    }
    s.end().unwrap();
    w.set_object_attributes_json("big", r#"{"unit": "count"}"#).unwrap();
    w.begin_object("bytes", "dense", &[5]).unwrap();
    let mut s = w.blob_stream("bytes", "data", Dtype::U8, None).unwrap();
    s.write_all(b"hello").unwrap();
    s.end().unwrap();
    w.add_dense(
        "c64",
        &[2],
        &[1.0f32, 2.0, 3.0, 4.0],
        Some(&BlobOptions::new().logical_type("complex64")),
    )
    .unwrap();
    w.finish().unwrap();

    let file = File::open(&path).unwrap();
    assert!(file.attributes_json().unwrap().contains("\"tiny\""));
    let big = file.object_by_name("big").unwrap();
    assert!(big.attributes_json().unwrap().contains("count"));
    assert_eq!(big.read::<i32>(0).unwrap(), (0..1000).collect::<Vec<i32>>());
    let c64 = file.object_by_name("c64").unwrap();
    let ci = c64.component(0).unwrap();
    assert_eq!((ci.logical_type.as_deref(), ci.ratio), (Some("complex64"), 2));
    assert_eq!(c64.read_slice::<f32>(0, &[1], &[2]).unwrap(), vec![3.0, 4.0]);

    let mut a = vec![0i32; 1000];
    let mut b = vec![0u8; 5];
    let mut short = vec![0u8; 2];
    let bytes = file.object_by_name("bytes").unwrap();
    let mut reqs = vec![
        ReadRequest::new(big, 0, &mut a).unwrap(),
        ReadRequest::new(bytes, 0, &mut b).unwrap(),
        ReadRequest::new(bytes, 0, &mut short).unwrap(),
    ];
    let e = file.read_many(&mut reqs).unwrap_err();
    assert_eq!(e.status(), Status::BufferTooSmall);
    assert_eq!(reqs[0].outcome().unwrap().as_ref().unwrap(), &4000);
    assert_eq!(reqs[1].outcome().unwrap().as_ref().unwrap(), &5);
    assert_eq!(
        reqs[2].outcome().unwrap().as_ref().unwrap_err().status(),
        Status::BufferTooSmall
    );
    drop(reqs);
    assert_eq!(a[999], 999);
    assert_eq!(&b, b"hello");
}

#[test]
fn an_unfinished_writer_leaves_nothing() {
    let dir = scratch("discard");
    let path = dir.join("never.zt");
    {
        let mut w = Writer::create(&path).unwrap();
        w.add_dense("x", &[1], &[1u8], None).unwrap();
    } // dropped: discarded
    assert!(!path.exists());
    // A stream dropped without end() makes finish fail: no partial file.
    let mut w = Writer::create(&path).unwrap();
    w.begin_object("x", "dense", &[4]).unwrap();
    {
        let mut s = w.blob_stream("x", "data", Dtype::U8, None).unwrap();
        s.append(&[1u8, 2]).unwrap();
    }
    assert_eq!(w.finish().unwrap_err().status(), Status::Misuse);
    assert!(!path.exists());
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "no temporary left behind");
}
