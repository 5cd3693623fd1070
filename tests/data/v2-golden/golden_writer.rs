//! Writes libztensor's v2 golden files with the original's canonical writer.
//! Usage: golden <out dir>
use std::path::Path;
use ztensor::format::cbor::{self, Value};
use ztensor::{DType, Writer};

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn pattern(n: usize, k: usize) -> Vec<u8> {
    (0..n).map(|i| ((i * 7 + k * 13) & 0xff) as u8).collect()
}
fn text(s: &str) -> Value {
    Value::Text(s.to_string())
}

fn basic(dir: &Path) -> ztensor::Result<()> {
    let mut w = Writer::create(dir.join("basic.zt"))?;
    w.set_attributes(Value::Map(vec![
        (text("name"), text("golden")),
        (text("n"), Value::Uint(42)),
        (text("neg"), Value::Nint(6)),
        (text("pi"), Value::Float(3.140625)),
        (text("third"), Value::Float(0.1)),
        (text("f32v"), Value::Float(50331648.0)),
        (text("flag"), Value::Bool(true)),
        (text("none"), Value::Null),
        (text("nan"), Value::Float(f64::NAN)),
        (text("list"), Value::Array(vec![Value::Uint(1), text("two"), Value::Array(vec![Value::Float(3.0)])])),
        (text("bytes"), Value::Bytes(vec![0, 1, 255])),
        (text("nested"), Value::Map(vec![
            (text("b"), Value::Uint(1)),
            (text("a"), Value::Map(vec![(text("c"), Value::Nint(0))])),
        ])),
    ]));
    let weight: Vec<u8> = (0..16).map(|i| (i * 3 + 1) as u8).collect();
    w.add("a.bias", [4u64], DType::F32, &f32s(&[1.0, 2.0, 3.0, 4.0]))?;
    w.add("a.weight", [2u64, 4], DType::BF16, &weight)?;
    w.object("b.bool", |o| o.shape([5u64]).part("data", |p| p.dtype(DType::U8).logical("bool").bytes(&[0, 1, 1, 0, 1])))?;
    let c = f32s(&[1.0, -1.0, 0.5, 2.0]);
    w.object("c.cplx", |o| o.shape([2u64]).part("data", |p| p.dtype(DType::F32).logical("complex64").bytes(&c)))?;
    w.object("d.fp4", |o| o.shape([5u64]).part("data", |p| p.dtype(DType::U8).logical("f4_e2m1").bytes(&[0x21, 0x43, 0x05])))?;
    w.object("e.fp8", |o| o.shape([3u64]).part("data", |p| p.dtype(DType::U8).logical("f8_e4m3fn").bytes(&[0x38, 0x40, 0xb8])))?;
    let s = 2.5f64.to_le_bytes();
    w.object("scalar", |o| {
        o.shape(Vec::<u64>::new())
            .attr("unit", "m")
            .attr("scale", 0.5f64)
            .part("data", |p| p.dtype(DType::F64).bytes(&s))
    })?;
    w.add("tied", [2u64, 4], DType::BF16, &weight)?;
    w.add("zz.big", [70000u64], DType::U8, &pattern(70000, 1))?;
    let e = [1i32, -2].iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    w.add("\u{e9}", [2u64], DType::I32, &e)?;
    w.finish()?;
    Ok(())
}

fn layouts(dir: &Path) -> ztensor::Result<()> {
    let mut w = Writer::create(dir.join("layouts.zt"))?;
    let u32s = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let u64s = |v: &[u64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let coo_coords = u64s(&[0, 1, 3, 2, 0, 1]);
    let coo_values = f32s(&[1.0, 2.0, 3.0]);
    w.object("coo", |o| {
        o.shape([4u64, 4]).layout("zt.sparse_coo/1")
            .part("values", |p| p.dtype(DType::F32).bytes(&coo_values))
            .part("coords", |p| p.dtype(DType::U64).bytes(&coo_coords))
    })?;
    let indices = u32s(&[0, 2, 1, 3]);
    let indptr = u32s(&[0, 2, 3, 4]);
    let values = f32s(&[1.0, 2.0, 3.0, 4.0]);
    w.object("csr", |o| {
        o.shape([3u64, 4]).layout("zt.sparse_csr/1")
            .part("values", |p| p.dtype(DType::F32).bytes(&values))
            .part("indices", |p| p.dtype(DType::U32).bytes(&indices))
            .part("indptr", |p| p.dtype(DType::U32).bytes(&indptr))
    })?;
    let gg = pattern(68, 5);
    w.object("gg", |o| {
        o.shape([2u64, 32]).layout("gguf.q8_0/1")
            .attr("elems_per_block", 32u64)
            .attr("block_bytes", 34u64)
            .part("data", |p| p.dtype(DType::U8).bytes(&gg))
    })?;
    let mxd = pattern(32, 6);
    let mxs = [127u8, 128];
    w.object("mx", |o| {
        o.shape([2u64, 32]).layout("zt.mx/1")
            .attr("block_size", 32u64)
            .attr("scale_form", "e8m0_exponent")
            .part("data", |p| p.dtype(DType::U8).logical("f4_e2m1").bytes(&mxd))
            .part("scales", |p| p.dtype(DType::U8).logical("f8_e8m0").bytes(&mxs))
    })?;
    let qd = pattern(16, 7);
    let qs = pattern(8, 8);
    w.object("qg", |o| {
        o.shape([2u64, 16]).layout("zt.quant_group/1")
            .attr("bits", 4u64)
            .attr("group_size", 8u64)
            .attr("axis", 1u64)
            .attr("packing", cbor::map([("word", Value::from("u32")), ("order", Value::from("lsb_first")), ("per_word", Value::Uint(8))]))
            .attr("scale_form", "f16_factors")
            .attr("zero_point", cbor::map([("form", Value::from("implied")), ("value", Value::Uint(8))]))
            .part("data", |p| p.dtype(DType::U32).bytes(&qd))
            .part("scales", |p| p.dtype(DType::F16).bytes(&qs))
    })?;
    w.finish()?;
    Ok(())
}

fn empty(dir: &Path) -> ztensor::Result<()> {
    Writer::create(dir.join("empty.zt"))?.finish()?;
    Ok(())
}

fn many(dir: &Path) -> ztensor::Result<()> {
    let mut w = Writer::create(dir.join("many.zt"))?;
    for k in 0..30usize {
        // Every tenth repeats the content of t000: shared blobs.
        let bytes = pattern(6, if k % 10 == 0 { 0 } else { k });
        w.add(format!("t{k:03}"), [3u64], DType::F16, &bytes)?;
    }
    w.finish()?;
    Ok(())
}

fn zeros(dir: &Path) -> ztensor::Result<()> {
    // Zero-length parts, first, in the middle and last.
    let mut w = Writer::create(dir.join("zeros.zt"))?;
    w.add("a", [0u64], DType::F32, &[])?;
    w.add("b", [10u64], DType::U8, &pattern(10, 2))?;
    w.add("c", [0u64, 5], DType::I64, &[])?;
    w.add("d", [3u64], DType::U8, &[1, 2, 3])?;
    w.add("e", [0u64], DType::U8, &[])?;
    w.finish()?;
    Ok(())
}

fn main() -> ztensor::Result<()> {
    let dir = std::env::args().nth(1).expect("out dir");
    let dir = Path::new(&dir);
    basic(dir)?;
    layouts(dir)?;
    empty(dir)?;
    many(dir)?;
    zeros(dir)?;
    Ok(())
}
